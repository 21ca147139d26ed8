#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run by "busybox uevent" in the test guest for every kernel uevent, with the
# event in the environment: loads the driver for a new device, as udev's
# kmod builtin would. The Debian kernels have no CONFIG_UEVENT_HELPER, so
# the kernel cannot call this itself.

[ "$ACTION" = add ] && [ -n "$MODALIAS" ] || exit 0
exec /sbin/modprobe -q -b "$MODALIAS"
