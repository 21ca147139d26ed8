#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# A real QEMU inside the test VM as the VFIO user: qemu-system-x86_64 -S
# with "-device vfio-pci,host=ADDR" on a reserved, allocated stand-in GPU
# opens it while it sets the machine up, without running a guest. On
# gpuctl-vfio-pci gpuctl must name it as holder, and its exit, by QMP
# "quit" or by SIGTERM, must end a detach-on-stop allocation; a QEMU of the
# wrong uid fails with "Operation not permitted" and the owner's starts. On
# plain vfio-pci gpuctl observes the same VM from its group: running with
# an unknown holder, and detached when it quits; the tool then finds the
# holder in /proc, for root only, with QEMU's guest name, and says whether
# it is the allocation's VM. Checked through the independent client
# gpuctl-nl.
#
# The guest's root is the host's, so its QEMU is the host's. VFIO maps the
# nested guest's RAM for DMA, hence vfio_iommu_type1 (on the topology's
# intel-iommu with interrupt remapping) and an unlimited memlock limit.
#
# Device of the "full" topology (topologies/full): 01:00.0 bochs, taken
# from bochs-drm by the test's rules.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_qemu_guest.XXXXXX)
GPU=0000:01:00.0
OWNER=2f6d9b3e-7c41-4a0e-b5d8-6e9f0a1b2c3d
# QEMU's main thread, which opens the device, truncated to 15 characters
COMM=qemu-system-x86
# the QMP sockets, where the QEMUs run through setpriv may create theirs
QEMU_SOCK_DIR=$TMP/q
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

cleanup() {
	qemu_kill
	nlmon_stop
	nl_allocs_cleanup
	nl_rules_cleanup
	vfio_nodes_restore
	rm -rf "$TMP"
}
trap cleanup EXIT

# gpu_vm_start NAME [PREFIX...]: the nested QEMU (lib.sh) with the GPU
# assigned, run through PREFIX (setpriv ...) if given. Output in
# $TMP/NAME.out.
gpu_vm_start() {
	qemu_start "$1" "vfio-pci,host=$GPU" "${@:2}"
}

_holds() {	# PID: gpuctl names PID as the GPU's holder
	gpuctl-nl dev-get "$GPU" 2>/dev/null | grep " holder_pid=$1 " >/dev/null
}

# qemu_wait_holder [PID]: until gpuctl names QEMU (or PID: 0 for an
# unknown holder) as holder; fails early when QEMU exits.
qemu_wait_holder() {
	local want=${1:-$QEMU_PID} deadline=$((SECONDS + QEMU_TIMEOUT)) t0=$SECONDS

	until _holds "$want"; do
		if ! kill -0 "$QEMU_PID" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
			echo "QEMU $QEMU_PID not the holder of $GPU after $((SECONDS - t0)) s:"
			cat "$QEMU_OUT"
			return 1
		fi
		sleep 0.2
	done
	echo "# QEMU $QEMU_PID holds $GPU after $((SECONDS - t0)) s"
}

check_setup() {
	command -v qemu-system-x86_64 || { echo "no qemu-system-x86_64"; return 1; }
	command -v socat || { echo "no socat"; return 1; }
	# VFIO pins the nested guest's RAM: root may raise its own limit, and
	# the QEMUs started through setpriv inherit it
	ulimit -l unlimited || return 1
	echo "memlock $(ulimit -l)"
	modprobe vfio_iommu_type1 || return 1
	grep -q '^vfio_iommu_type1 ' /proc/modules || return 1
	chmod 0755 "$TMP" && mkdir -m 1777 "$TMP/q" || return 1
	nl_rule_new "$GPU" driver gpuctl-vfio-pci take || return 1
	expect_pci_driver "$GPU" gpuctl-vfio-pci 0
}

check_holder() {
	nlmon_mark
	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop uid 0 gid 0 || return 1
	gpu_vm_start quit || return 1
	qemu_wait_holder || return 1
	nl_dev_has "$GPU" "allocation=$ALLOC" "holder_pid=$QEMU_PID" "holder_comm=$COMM" \
		holder_uid=0 open_match=owner || return 1
	nlmon_wait "^vfio-open-ntf address=$GPU .*holder_pid=$QEMU_PID .*holder_comm=$COMM " &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)"
}

# detach_checks PID DRIVER: QEMU PID gone, its close announced, the
# allocation ended as detached and the GPU still reserved on DRIVER.
detach_checks() {
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=$1( |\$)" &&
	nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=detached( |\$)" || return 1
	ALLOCS=()
	nl_dev_has_not "$GPU" allocation && nl_dev_has_not "$GPU" holder_pid || return 1
	nl_dev_has "$GPU" state=reserved "driver=$2"
}

check_quit() {
	local pid=$QEMU_PID

	[ -n "$pid" ] || return 1
	nlmon_mark
	qemu_quit && detach_checks "$pid" gpuctl-vfio-pci
}

check_sigterm() {
	local pid

	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop || return 1
	gpu_vm_start term || return 1
	qemu_wait_holder || return 1
	pid=$QEMU_PID
	nlmon_mark
	kill -TERM "$pid"
	qemu_reap
	detach_checks "$pid" gpuctl-vfio-pci
}

# Enforcement: the same GPU, allocated to uid 65534.
check_enforce_setup() {
	nl_alloc_new owner "$OWNER" device "$GPU" uid 65534 gid 65534 || return 1
	# QEMU's user may open the group node, as libvirt's chown allows
	vfio_node_open_to_all "$GPU"
}

check_wrong_uid() {
	nlmon_mark
	gpu_vm_start wrong setpriv --reuid=1000 --regid=1000 --clear-groups || return 1
	# it must give up by itself, not be killed
	qemu_reap
	[ "$QEMU_RC" = 1 ] || return 1
	grep -q 'Operation not permitted' "$TMP/wrong.out" || return 1
	nlmon_wait "^vfio-open-ntf address=$GPU .*holder_comm=$COMM .*holder_uid=1000 .*refused=." ||
		return 1
	nl_dev_has_not "$GPU" holder_pid && nl_alloc_has "$ALLOC" state=idle
}

check_owner_uid() {
	local pid

	nlmon_mark
	gpu_vm_start owner setpriv --reuid=65534 --regid=65534 --clear-groups || return 1
	qemu_wait_holder || return 1
	pid=$QEMU_PID
	nl_dev_has "$GPU" "holder_pid=$pid" "holder_comm=$COMM" holder_uid=65534 \
		open_match=owner || return 1
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	nlmon_mark
	qemu_quit || return 1
	# without detach-on-stop the allocation stays, idle
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=$pid( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=idle( |\$)" || return 1
	nl_alloc_has "$ALLOC" state=idle
}

# holder_check PID VM MATCH: gpuctl -j dev show, as root, names PID
# (found in /proc), its comm and uid, its guest name VM, and MATCH; a
# user other than root is told of no holder.
holder_check() {
	gpuctl -j dev show "$GPU" >"$TMP/dev.json" || return 1
	json_check --argjson pid "$1" --arg vm "$2" --arg m "$3" --arg comm "$COMM" '
		.devices | length == 1 and (.[0].holder |
		.pid == $pid and .comm == $comm and .uid == 0 and .vm == $vm and
		.match == $m and .found_by == "proc")' "$TMP/dev.json" || return 1
	gpuctl dev show "$GPU" >"$TMP/dev.txt" || return 1
	grep -q " qemu-system-x86\[$1\]" "$TMP/dev.txt" || return 1
	# the module tells other users nothing of holders; nor does the tool
	"${NOBODY[@]}" gpuctl -j dev show "$GPU" >"$TMP/dev.json" || return 1
	json_check '.devices[0].holder == null' "$TMP/dev.json"
}

# Plain vfio-pci: gpuctl observes the VM from its group; the module does
# not know the holder, the tool finds it in /proc, with its guest name.
check_observed() {
	vfio_nodes_restore
	nl_alloc_del "$ALLOC" && nl_rule_del "$RULE" || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	nl_rule_new "$GPU" take || return 1
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	nl_alloc_new owner "$OWNER" name vm-one device "$GPU" detach-on-stop ||
		return 1
	nlmon_mark
	QEMU_GUEST=vm-one gpu_vm_start observed || return 1
	qemu_wait_holder 0 || return 1
	nl_dev_has "$GPU" "allocation=$ALLOC" open_match=unknown || return 1
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)" || return 1
	holder_check "$QEMU_PID" vm-one owner || return 1
	# vfio-pci registers no migration for it; the key names its ids
	gpuctl -j dev show "$GPU" >"$TMP/dev.json" || return 1
	json_check --arg k "$(pci_ids_of "$GPU")/vfio-pci@" '.devices[0] |
		.migration == [] and (.migration_compat | startswith($k))' \
		"$TMP/dev.json" || return 1
	gpuctl export nova | grep -q "\"address\": \"$GPU\", .*\"live_migratable\": \"no\"" ||
		return 1
	nlmon_mark
	qemu_quit && detach_checks 0 vfio-pci
}

# "VVVV:DDDD:SSSS:SSSS" of a PCI function, from sysfs
pci_ids_of() {
	local d=/sys/bus/pci/devices/$1 f out=

	for f in vendor device subsystem_vendor subsystem_device; do
		out+=${out:+:}$(sed 's/^0x//' "$d/$f")
	done
	echo "$out"
}

# gpuctl -j doctor into $TMP/doctor.json: a check of the guest's own boot
# may fail (exit 4), which is not this test's
doctor_json() {
	local rc=0

	gpuctl -j doctor >"$TMP/doctor.json" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || { echo "doctor: exit $rc"; return 1; }
}

# A QEMU that holds the GPU without an allocation: CloudStack's used_by_vm
# is its guest name (CloudStack's agent rules read it), not free, and
# doctor warns. Allocated to another guest name, it is named a mismatch
# in dev show, alloc show, metrics (promtool reads them) and doctor.
check_mismatch() {
	local pid who

	QEMU_GUEST=vm-two gpu_vm_start mismatch || return 1
	qemu_wait_holder 0 || return 1
	pid=$QEMU_PID
	holder_check "$pid" vm-two unallocated || return 1
	who="qemu-system-x86[$pid] (guest vm-two)"
	gpuctl export cloudstack >"$TMP/cs.json" || return 1
	"$GPUCTL_ROOT/selftests/cloudstack/agent_parse.py" "$TMP/cs.json" >/dev/null ||
		return 1
	json_check --arg a "${GPU#0000:}" '.gpus[] | select(.pci_address == $a) |
		.full_passthrough.used_by_vm == "vm-two"' "$TMP/cs.json" || return 1
	doctor_json || return 1
	json_check --arg s "$GPU is open by $who, but no allocation has it" '
		.checks[] | select(.id == "vfio-holders") |
		.status == "warn" and .summary == $s' "$TMP/doctor.json" || return 1

	nl_alloc_new owner "$OWNER" name vm-one device "$GPU" || return 1
	holder_check "$pid" vm-two mismatch || return 1
	gpuctl dev show "$GPU" >"$TMP/dev.txt" || return 1
	grep -q " qemu-system-x86\[$pid\] (mismatch)" "$TMP/dev.txt" || return 1
	gpuctl -j alloc show "$ALLOC" >"$TMP/alloc.json" || return 1
	json_check --arg g "$GPU" --argjson pid "$pid" --arg comm "$COMM" '
		.allocations[0].holders == [{"dev": $g, "pid": $pid, "comm": $comm,
		"vm": "vm-two", "match": "mismatch"}]' "$TMP/alloc.json" || return 1
	gpuctl alloc show "$ALLOC" | tee "$TMP/alloc.txt" |
		grep -qx "  holders: $GPU $COMM\[$pid\] guest vm-two (mismatch)" || return 1
	gpuctl metrics "$TMP/m.prom" && promtool check metrics <"$TMP/m.prom" || return 1
	grep -qx "gpuctl_device_holder_info{address=\"$GPU\",pid=\"$pid\",comm=\"$COMM\",vm=\"vm-two\",match=\"mismatch\"} 1" \
		"$TMP/m.prom" || { grep holder "$TMP/m.prom"; return 1; }
	doctor_json || return 1
	json_check --arg s "$GPU of allocation $ALLOC is open by $who, not by its VM" '
		.checks[] | select(.id == "vfio-holders") |
		.status == "warn" and .summary == $s' "$TMP/doctor.json" || return 1
	qemu_quit && nl_alloc_del "$ALLOC"
}

check_cleanup() {
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$GPU" "" && expect_pci_driver "$GPU" bochs-drm 30 || return 1
	gpuctl-nl alloc-dump >"$TMP/left" && gpuctl-nl rule-dump >>"$TMP/left" || return 1
	[ ! -s "$TMP/left" ] || { cat "$TMP/left"; return 1; }
}

ktap_header
ktap_plan 10
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "setup: memlock, vfio_iommu_type1, $GPU on gpuctl-vfio-pci" check_setup
ktap_run_stage "QEMU -S opens $GPU: holder pid and comm, running" check_holder
ktap_run_stage "QMP quit: vfio-close-ntf, detach-on-stop ends the allocation" check_quit
ktap_run_stage "SIGTERM: QEMU's exit ends a detach-on-stop allocation too" check_sigterm
ktap_run_stage "enforcement: $GPU allocated to uid 65534" check_enforce_setup
ktap_run_stage "QEMU as uid 1000: Operation not permitted, open refused" check_wrong_uid
ktap_run_stage "QEMU as uid 65534: holder, running, idle after quit" check_owner_uid
ktap_run_stage "plain vfio-pci: QEMU observed, found in /proc by name, quit detaches" \
	check_observed
ktap_run_stage "plain vfio-pci: another guest name is a mismatch in every output" \
	check_mismatch
ktap_run_stage "rule-del gives $GPU back to bochs-drm" check_cleanup

nlmon_stop
gpuctl_unload
ktap_finished
