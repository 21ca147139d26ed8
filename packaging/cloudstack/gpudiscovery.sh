#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gpudiscovery.sh for CloudStack's KVM agent, from gpuctl: the agent runs
# this file (kvm.scripts.dir/gpudiscovery.sh, 30 s timeout) and parses its
# standard output. gpuctl answers from the kernel module's inventory and
# allocation ledger in one netlink dump, instead of lspci, virsh and
# xmlstarlet per device; "used_by_vm" is the allocation's name, so give
# allocations the instance name ("gpuctl alloc add ... name i-2-35-VM").
# make install-cloudstack puts it in place of the agent's own script.
exec /usr/sbin/gpuctl export cloudstack
