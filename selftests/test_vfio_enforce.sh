#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Enforcement by gpuctl's own vfio-pci variant driver, gpuctl-vfio-pci,
# through the independent client gpuctl-nl and vfio_open: a rule naming it
# binds the GPU to it; an open of a device without an allocation, or by a
# uid or gid other than the allocation's, fails with EPERM and is announced
# in vfio-open-ntf with "refused"; the owner's open succeeds. A refused open
# leaves no holder, no state change and no module reference behind.
#
# Device of the "full" topology (topologies/full): 01:00.0 bochs, taken
# from bochs-drm by the test's rule.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_vfio_enforce.XXXXXX)
GPU=0000:01:00.0
DRV=gpuctl-vfio-pci
OWNER=9c4f7e21-6a3b-4d58-8e0f-1b2c3d4e5f60
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
EPERM='VFIO_GROUP_GET_DEVICE_FD .*Operation not permitted (errno 1)'

cleanup() {
	lib_cleanup
	vfio_nodes_restore
	rm -rf "$TMP"
}
trap cleanup EXIT

REF0=
check_setup() {
	modprobe vfio_iommu_type1 || return 1
	nlmon_mark
	nl_rule_new "$GPU" driver "$DRV" take || return 1
	grep -q " driver=$DRV" "$TMP/rule" || { echo "reply without driver $DRV"; return 1; }
	expect_pci_driver "$GPU" "$DRV" 0 && expect_pci_override "$GPU" "$DRV" || return 1
	nl_dev_has "$GPU" state=reserved "driver=$DRV" || return 1
	nlmon_action "$GPU" taken || return 1
	# the group stays viable: the variant manages its own DMA
	gpuctl-nl group-get "$(pci_group_of "$GPU")" | grep ' viable=1' || return 1
	REF0=$(gpuctl_refcnt)
}

# A refused open: EPERM from vfio_open, vfio-open-ntf with "refused" and
# the open_match given, and nothing held afterwards.
refused() {	# MATCH [PREFIX...]
	local match=$1 line
	shift

	nlmon_mark
	vfio_open_fails "$GPU" "$EPERM" "$@" || return 1
	nlmon_wait "^vfio-open-ntf address=$GPU .*open_match=$match .*refused=." || return 1
	line=$(nlmon_since_mark | grep -m1 "^vfio-open-ntf address=$GPU ")
	echo "refused: ${line#*refused=}"
	nl_dev_has_not "$GPU" holder_pid || return 1
	[ "$(gpuctl_refcnt)" = "$REF0" ] || { echo "module refcnt $(gpuctl_refcnt), want $REF0"; return 1; }
	# a refused open is no open: no close follows, no state changes
	sleep 1
	! nlmon_since_mark | grep -E '^(vfio-close-ntf|alloc-change-ntf) '
}

check_unallocated() {
	nl_dev_has_not "$GPU" allocation || return 1
	refused unallocated
}

check_alloc() {
	nl_alloc_new owner "$OWNER" device "$GPU" uid 65534 gid 65534 || return 1
	nl_alloc_has "$ALLOC" state=idle uid=65534 gid=65534 && REF0=$(gpuctl_refcnt)
}

check_root_refused() {
	refused other || return 1
	nlmon_since_mark | grep -E "^vfio-open-ntf address=$GPU .*holder_uid=0( |$)" ||
		{ echo "refusal does not name uid 0"; return 1; }
	nl_alloc_has "$ALLOC" state=idle
}

check_gid_refused() {
	vfio_node_open_to_all "$GPU" || return 1
	refused other setpriv --reuid=65534 --regid=100 --clear-groups || return 1
	nl_alloc_has "$ALLOC" state=idle
}

check_owner() {
	local pid

	nlmon_mark
	vfio_open_start "$GPU" "${NOBODY[@]}" || return 1
	pid=$(sed -n 's/^open .* pid \([0-9]*\)$/\1/p' "$TMP/vfio")
	nl_dev_has "$GPU" "holder_pid=$pid" holder_uid=65534 open_match=owner || return 1
	nlmon_wait "^vfio-open-ntf address=$GPU .*holder_pid=$pid .*open_match=owner( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	nlmon_since_mark | grep "^vfio-open-ntf .*refused=" && return 1
	nlmon_mark
	vfio_open_stop
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=$pid( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=idle( |\$)"
}

check_cleanup() {
	vfio_nodes_restore
	nl_alloc_del "$ALLOC" || return 1
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$GPU" "" && expect_pci_driver "$GPU" bochs-drm 30 || return 1
	gpuctl-nl alloc-dump >"$TMP/allocs" && gpuctl-nl rule-dump >>"$TMP/allocs" || return 1
	[ ! -s "$TMP/allocs" ] || { cat "$TMP/allocs"; return 1; }
}

ktap_header
ktap_plan 7
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "rule with driver $DRV binds $GPU to it" check_setup
ktap_run_stage "no allocation: open fails EPERM, vfio-open-ntf refused" check_unallocated
ktap_run_stage "alloc-new for uid/gid 65534" check_alloc
ktap_run_stage "root (uid 0) refused EPERM, open_match other" check_root_refused
ktap_run_stage "uid 65534 with gid 100 refused EPERM" check_gid_refused
ktap_run_stage "uid/gid 65534 opens it: holder, owner, running, then idle" check_owner
ktap_run_stage "alloc-del and rule-del give $GPU back to bochs-drm" check_cleanup

nlmon_stop
gpuctl_unload
ktap_finished
