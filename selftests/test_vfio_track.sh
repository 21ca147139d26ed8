#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# VFIO open/close tracking on gpuctl's own driver, gpuctl-vfio-pci, the one
# where gpuctl sees each open, through the independent client gpuctl-nl and
# vfio_open, a VFIO user that opens the device the way QEMU does: the
# holder's pid, comm, uid and since in dev-get, vfio-open-ntf and
# vfio-close-ntf, the allocation going running and back to idle with
# alloc-change-ntf, alloc-del and rmmod refused while the device is open,
# and detach-on-stop ending the allocation when the VM lets go. Refused
# opens are test_vfio_enforce.sh's; opens on plain vfio-pci, observed from
# the group's DMA ownership, test_vfio_watch.sh's and test_vfio_adopt.sh's.
#
# Device of the "full" topology (topologies/full): 01:00.0 bochs, taken
# from bochs-drm to gpuctl-vfio-pci by the test's rule.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_vfio_track.XXXXXX)
GPU=0000:01:00.0
OWNER=5b0e4a86-1f0c-4d2b-9c57-3f7e2a6d8c11

cleanup() {
	lib_cleanup
	vfio_nodes_restore
	rm -rf "$TMP"
}
trap cleanup EXIT

# The pid vfio_open printed: the one the kernel must name as holder.
vfio_pid() {
	sed -n 's/^open .* pid \([0-9]*\)$/\1/p' "$TMP/vfio"
}

REF0=
check_setup() {
	# vfio_open's container needs the type1 backend, which nothing loads
	# by itself in the guest
	modprobe vfio_iommu_type1 || return 1
	nl_rule_new "$GPU" driver gpuctl-vfio-pci take || return 1
	expect_pci_driver "$GPU" gpuctl-vfio-pci 0 || return 1
	nl_dev_has_not "$GPU" allocation && nl_dev_has_not "$GPU" holder_pid || return 1
	REF0=$(gpuctl_refcnt)
	echo "module refcnt $REF0"
}

# The refcount is REF0 + N: what the allocations and open devices hold.
expect_refcnt() {	# N
	local r

	r=$(gpuctl_refcnt)
	[ "$r" = $((REF0 + $1)) ] && return 0
	echo "module refcnt $r, want $((REF0 + $1))"
	return 1
}

expect_rmmod_refused() {
	cmd_fails 'Module gpuctl is in use' rmmod gpuctl
}

check_alloc() {
	nlmon_mark
	nl_alloc_new owner "$OWNER" device "$GPU" uid 0 gid 0 || return 1
	grep -q -E " devices=$GPU( |\$)" "$TMP/alloc" || { echo "reply does not list $GPU"; return 1; }
	nl_alloc_has "$ALLOC" state=idle uid=0 gid=0 || return 1
	nl_dev_has "$GPU" "allocation=$ALLOC" || return 1
	nl_dev_has_not "$GPU" holder_pid || return 1
	nlmon_wait "^alloc-new-ntf id=$ALLOC " && expect_refcnt 1
}

check_open() {
	local pid since now

	nlmon_mark
	vfio_open_start "$GPU" || return 1
	pid=$(vfio_pid)
	now=$(date +%s)
	nl_dev_has "$GPU" "allocation=$ALLOC" "holder_pid=$pid" holder_comm=vfio_open \
		holder_uid=0 open_match=owner || return 1
	since=$(gpuctl-nl dev-get "$GPU" | sed -n 's/.* holder_since=\([0-9]*\).*/\1/p')
	if [ -z "$since" ] || [ "$since" -gt "$now" ] || [ "$since" -lt $((now - 30)) ]; then
		echo "holder_since '$since', now $now"
		return 1
	fi
	nlmon_wait "^vfio-open-ntf address=$GPU .*holder_pid=$pid .*open_match=owner( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	nl_alloc_has "$ALLOC" state=running
}

check_busy() {
	local pid

	pid=$(vfio_pid)
	cmd_fails "Device or resource busy \(errno 16\): $GPU is open by vfio_open \(pid $pid\)" \
		gpuctl-nl alloc-del id "$ALLOC" || return 1
	nl_alloc_has "$ALLOC" state=running || return 1
	# one reference for the allocation, one vfio takes for the open device
	expect_refcnt 2 && expect_rmmod_refused
}

check_close() {
	local pid

	pid=$(vfio_pid)
	nlmon_mark
	vfio_open_close || return 1
	# the process lives on: the close is what counts
	kill -0 "$VFIO_PID" || return 1
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=$pid( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=idle( |\$)" || return 1
	nl_dev_has_not "$GPU" holder_pid && nl_dev_has_not "$GPU" holder_comm || return 1
	nl_alloc_has "$ALLOC" state=idle || return 1
	vfio_open_stop
	expect_refcnt 1
}

check_del() {
	nlmon_mark
	nl_alloc_del "$ALLOC" || return 1
	nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=deleted( |\$)" || return 1
	nl_dev_has_not "$GPU" allocation || return 1
	cmd_fails 'No such file or directory \(errno 2\)' gpuctl-nl alloc-get "$ALLOC" || return 1
	# nothing holds the module now: the final rmmod will show it
	expect_refcnt 0
}

check_detach_on_stop() {
	local pid

	nlmon_mark
	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop || return 1
	grep -q ' detach_on_stop=1' "$TMP/alloc" || { echo "reply without detach-on-stop"; return 1; }
	vfio_open_start "$GPU" || return 1
	pid=$(vfio_pid)
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	# the VM stops: its QEMU exits
	vfio_open_stop
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=$pid( |\$)" &&
	nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=detached( |\$)" || return 1
	cmd_fails 'No such file or directory \(errno 2\)' gpuctl-nl alloc-get "$ALLOC" || return 1
	ALLOCS=()
	nl_dev_has_not "$GPU" allocation || return 1
	# the device stays reserved, ready for the next VM
	nl_dev_has "$GPU" state=reserved driver=gpuctl-vfio-pci && expect_refcnt 0
}

# An allocation that never ran is not "stopped": detach-on-stop leaves it.
check_detach_idle() {
	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop || return 1
	sleep 1
	nl_alloc_has "$ALLOC" state=idle || return 1
	nl_alloc_del "$ALLOC"
}

check_unload() {
	nlmon_stop
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	gpuctl-nl alloc-dump >"$TMP/allocs" || return 1
	[ ! -s "$TMP/allocs" ] || { cat "$TMP/allocs"; return 1; }
	echo "# rmmod gpuctl"
	rmmod gpuctl
}

ktap_header
ktap_plan 9
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "setup: rule takes $GPU to gpuctl-vfio-pci" check_setup
ktap_run_stage "alloc-new with uid/gid: idle, dev-get names the allocation" check_alloc
ktap_run_stage "open: holder pid/comm/uid/since, vfio-open-ntf, running" check_open
ktap_run_stage "alloc-del and rmmod refused while open, naming the holder" check_busy
ktap_run_stage "close (process lives on): vfio-close-ntf, holder gone, idle" check_close
ktap_run_stage "alloc-del: alloc-del-ntf end=deleted, dev-get without allocation" check_del
ktap_run_stage "detach-on-stop: the VM's exit ends the allocation, end=detached" \
	check_detach_on_stop
ktap_run_stage "detach-on-stop: an allocation never opened stays" check_detach_idle
ktap_run_stage "rule-del, nothing left, rmmod succeeds" check_unload

ktap_finished
