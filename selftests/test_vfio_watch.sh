#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# VFIO opens on plain vfio-pci, which gpuctl observes without touching
# vfio-pci's objects: a device is open while its IOMMU group's DMA is
# claimed by VFIO. Checked through the independent client gpuctl-nl and
# vfio_open (a VFIO user that opens a device the way QEMU does): the
# holder is unknown (holder_pid=0, no comm or uid) and open_match says
# unallocated or unknown; vfio-open-ntf and vfio-close-ntf come within the
# observer's second; the whole group shows open (07:00.0 and its HDA
# companion 07:00.1); the allocation goes running and back to idle;
# alloc-del and rule-del are refused while the VM has the group; the
# module is not pinned by the VM, so rmmod succeeds with the VM running and
# the next load sees the open again; detach-on-stop ends the allocation
# when the VM exits. A close of the device fd alone, with the group still
# attached, is not a close here: the VM still has the group.
#
# Devices of the "full" topology (topologies/full): 01:00.0 bochs (its own
# group) and 07:00.0 secondary-vga + 07:00.1 ich9-intel-hda (one group),
# taken to vfio-pci by the test's rules.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_vfio_watch.XXXXXX)
GPU=0000:01:00.0
GPU2=0000:07:00.0
HDA=0000:07:00.1
OWNER=8d2c5e71-0b3a-4c6f-9e1d-2a7b4c6d8e90

cleanup() {
	vfio_open_stop
	nlmon_stop
	gpuctl_load >/dev/null
	nl_allocs_cleanup
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

REF0=
check_setup() {
	modprobe vfio_iommu_type1 || return 1
	nl_rule_new "$GPU" take || return 1
	nl_rule_new "$GPU2" take || return 1
	expect_pci_driver "$GPU" vfio-pci 0 && expect_pci_driver "$GPU2" vfio-pci 0 &&
		expect_pci_driver "$HDA" vfio-pci 30 || return 1
	nl_dev_has_not "$GPU" holder_pid || return 1
	REF0=$(gpuctl_refcnt)
	echo "module refcnt $REF0"
}

check_unallocated_open() {
	local since now

	nlmon_mark
	vfio_open_start "$GPU" || return 1
	nl_dev_wait 10 nl_dev_has "$GPU" holder_pid=0 open_match=unallocated || return 1
	# an observed holder is unknown: no comm, no uid
	nl_dev_has_not "$GPU" holder_comm && nl_dev_has_not "$GPU" holder_uid || return 1
	# since: when gpuctl saw the open
	since=$(gpuctl-nl dev-get "$GPU" | sed -n 's/.* holder_since=\([0-9]*\).*/\1/p')
	now=$(date +%s)
	if [ -z "$since" ] || [ "$since" -gt "$now" ] || [ "$since" -lt $((now - 30)) ]; then
		echo "holder_since '$since', now $now"
		return 1
	fi
	nlmon_wait "^vfio-open-ntf address=$GPU .*holder_pid=0 .*open_match=unallocated( |\$)" ||
		return 1
	# the VM does not pin gpuctl: gpuctl has nothing inside vfio-pci
	[ "$(gpuctl_refcnt)" = "$REF0" ] || { echo "refcnt $(gpuctl_refcnt), want $REF0"; return 1; }
}

check_fd_close_is_not_close() {
	vfio_open_close || return 1
	sleep 2
	nl_dev_has "$GPU" holder_pid=0
}

check_close() {
	nlmon_mark
	vfio_open_stop
	nl_dev_wait 10 nl_dev_has_not "$GPU" holder_pid || return 1
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=0( |\$)"
}

check_group() {
	nlmon_mark
	vfio_open_start "$GPU2" || return 1
	nl_dev_wait 10 nl_dev_has "$GPU2" holder_pid=0 && nl_dev_wait 10 nl_dev_has "$HDA" holder_pid=0 || return 1
	nlmon_wait "^vfio-open-ntf address=$HDA .*holder_pid=0( |\$)" || return 1
	nl_dev_has_not "$GPU" holder_pid || return 1
	nlmon_mark
	vfio_open_stop
	nl_dev_wait 10 nl_dev_has_not "$GPU2" holder_pid && nl_dev_wait 10 nl_dev_has_not "$HDA" holder_pid
}

check_alloc_running() {
	nl_alloc_new owner "$OWNER" device "$GPU" || return 1
	nl_alloc_has "$ALLOC" state=idle || return 1
	nlmon_mark
	vfio_open_start "$GPU" || return 1
	nl_dev_wait 10 nl_dev_has "$GPU" holder_pid=0 open_match=unknown "allocation=$ALLOC" || return 1
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	nl_alloc_has "$ALLOC" state=running
}

check_busy() {
	cmd_fails "Device or resource busy \(errno 16\): $GPU is open by a VFIO user" \
		gpuctl-nl alloc-del id "$ALLOC" || return 1
	nl_alloc_has "$ALLOC" state=running
}

check_rmmod_running() {
	# the allocation pins the module; the VM, observed only, does not
	vfio_open_stop
	nl_dev_wait 10 nl_dev_has_not "$GPU" holder_pid || return 1
	nl_alloc_del "$ALLOC" || return 1
	[ "$(gpuctl_refcnt)" = "$REF0" ] || { echo "refcnt $(gpuctl_refcnt), want $REF0"; return 1; }
	vfio_open_start "$GPU" || return 1
	nl_dev_wait 10 nl_dev_has "$GPU" holder_pid=0 || return 1
	nlmon_stop
	echo "# rmmod gpuctl with a VM on $GPU"
	rmmod gpuctl || return 1
	# unloading leaves every device where it is
	expect_pci_driver "$GPU" vfio-pci 0 && expect_pci_override "$GPU" vfio-pci || return 1
	gpuctl_load || return 1
	nl_dev_wait 10 nl_dev_has "$GPU" holder_pid=0 open_match=unallocated driver=vfio-pci || return 1
	# the rules went with the module; the test's come back
	RULES=()
	nl_rule_new "$GPU" take && nl_rule_new "$GPU2" take || return 1
	nl_dev_has "$GPU" state=reserved holder_pid=0
}

check_detach_on_stop() {
	nlmon_start || return 1
	nlmon_mark
	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop || return 1
	# allocated while open: it starts out running
	grep -q " state=running" "$TMP/alloc" || { echo "not running"; return 1; }
	vfio_open_stop
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=0( |\$)" &&
		nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=detached( |\$)" || return 1
	ALLOCS=()
	nl_dev_has_not "$GPU" allocation && nl_dev_has "$GPU" state=reserved driver=vfio-pci
}

check_rule_del_busy() {
	local rule

	vfio_open_start "$GPU" || return 1
	nl_dev_wait 10 nl_dev_has "$GPU" holder_pid=0 || return 1
	rule=$(gpuctl-nl dev-get "$GPU" | sed -n 's/.* rule=\([0-9]*\).*/\1/p')
	[ -n "$rule" ] || { echo "$GPU has no rule"; return 1; }
	cmd_fails "Device or resource busy \(errno 16\): $GPU is open by a VFIO user" \
		gpuctl-nl rule-del id "$rule" || return 1
	vfio_open_stop
	expect_pci_driver "$GPU" vfio-pci 0
}

ktap_header
ktap_plan 10
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || { ktap_info "gpuctl-nl monitor did not start"; exit 1; }

ktap_run_stage "setup: rules take $GPU and $GPU2 (with $HDA) to vfio-pci" check_setup
ktap_run_stage "open on vfio-pci: unknown holder, open_match unallocated, not pinned" \
	check_unallocated_open
ktap_run_stage "closing the device fd with the group attached is no close" \
	check_fd_close_is_not_close
ktap_run_stage "the VM exits: vfio-close-ntf, holder gone" check_close
ktap_run_stage "the whole group shows open: $GPU2 and $HDA" check_group
ktap_run_stage "allocated device opened: open_match unknown, running" check_alloc_running
ktap_run_stage "alloc-del refused while the VM has the group" check_busy
ktap_run_stage "rmmod with a VM on vfio-pci, and the next load sees it" check_rmmod_running
ktap_run_stage "detach-on-stop: the VM's exit ends the allocation" check_detach_on_stop
ktap_run_stage "rule-del refused while the VM has the group" check_rule_del_busy

ktap_finished
