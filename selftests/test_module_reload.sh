#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl module show and gpuctl module reload, as a package upgrade runs
# them: the reload is deferred, and changes nothing, while a VFIO user
# holds a device on gpuctl-vfio-pci (which the unload unbinds); otherwise
# the module is unloaded and loaded again (udev sees module gpuctl go and
# come), its rules (ids included), allocations (ids included) and limits
# carried over, and no reserved device is bound to any driver but
# gpuctl-vfio-pci at any point. VMs on vfio-pci do not defer it: two
# nested QEMUs hold a reserved GPU and an SR-IOV VF on vfio-pci, each
# allocated, through the reload; their file descriptors, the devices'
# drivers and the ledger (states included: running stays running) are the
# same afterwards, udev sees no bind or unbind of them, and the next
# allocation id is the one the old module would have given. A handover of
# an allocation whose device is open on gpuctl-vfio-pci is refused (YNL
# CLI). A dump a process started and does not read holds the module: the
# reload fails, names what can hold it, and puts the ledger back. Refusals (no module file, no privilege, no module loaded) change
# nothing. The ledger is read with the independent client gpuctl-nl,
# never with the tool alone.
#
# Devices of the "full" topology (topologies/full): 02:00.0 without a
# driver, reserved for gpuctl-vfio-pci (which knows who opens it), 07:00.0
# bochs + 07:00.1 HDA in one group, taken for vfio-pci; 11:00.0 QEMU's
# nvme with SR-IOV, whose first VF 11:00.1 a rule reserves on vfio-pci.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_module_reload.XXXXXX)
FREE=0000:02:00.0
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
VM1=1b4e28ba-2fa1-11d2-883f-0016d3cca427
VM2=6f1c3a52-8d4e-4b9a-9c1e-2a7b5d9e0f11
VM3=0c9d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f
PF=0000:11:00.0
VF=0000:11:00.1
SYS_PCI=/sys/bus/pci/devices
QEMU_PIDS=()
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
UDEV_PID=

cleanup() {
	local p

	for p in "${QEMU_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	vfio_open_stop
	[ -n "$UDEV_PID" ] && kill "$UDEV_PID" 2>/dev/null
	wait 2>/dev/null
	gpuctl_load >/dev/null 2>&1
	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name acme >/dev/null 2>&1
	nl_rules_cleanup
	echo 0 >"$SYS_PCI/$PF/sriov_numvfs"
	echo 1 >"$SYS_PCI/$PF/sriov_drivers_autoprobe"
	rm -rf "$TMP"
}
trap cleanup EXIT

# What the module holds, as gpuctl-nl prints it, ids included
nl_state() {
	gpuctl-nl alloc-dump && gpuctl-nl limit-dump && gpuctl-nl rule-dump
}

# Fails unless the module holds what it held at "setup"
state_unchanged() {
	nl_state >"$TMP/now" || return 1
	diff -u "$TMP/before" "$TMP/now"
}

reload_ko() {	# [PREFIX...]: gpuctl module reload ko GPUCTL_KO, captured
	run_captured "$TMP/out" "$TMP/err" "$@" gpuctl module reload ko "$GPUCTL_KO"
}

# --- stages ---------------------------------------------------------------

check_setup() {
	nl_rule_new "$FREE" driver gpuctl-vfio-pci || return 1
	nl_rule_new "$MF_GPU" take || return 1
	expect_pci_driver "$FREE" gpuctl-vfio-pci 10 || return 1
	expect_pci_driver "$MF_GPU" vfio-pci 10 || return 1
	expect_pci_driver "$MF_HDA" vfio-pci 10 || return 1
	nl_alloc_new owner "$VM1" id 41 name vm-one account acme \
		device "$FREE" || return 1
	nl_alloc_new owner "$VM2" id 42 name vm-two account acme \
		device "$MF_GPU" detach-on-stop || return 1
	gpuctl-nl limit-set scope account name acme max-gpus 3 || return 1
	nl_state >"$TMP/before" || return 1
	cat "$TMP/before"
	[ "$(grep -c '^alloc ' "$TMP/before")" = 2 ] &&
		[ "$(grep -c '^limit ' "$TMP/before")" = 1 ] &&
		[ "$(grep -c '^rule ' "$TMP/before")" = 2 ]
}

# The running module's version; no module is installed for modprobe in
# the guest, so none would be loaded instead and no reload is due
check_show() {
	local words

	words=$(complete_words gpuctl module "" | sort | xargs)
	[ "$words" = "help reload show" ] || { echo "completion: $words"; return 1; }
	words=$(complete_words gpuctl module reload "" | xargs)
	[ "$words" = ko ] || { echo "completion: $words"; return 1; }
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check --arg v "$(cat /sys/module/gpuctl/version)" \
		'.running == $v and .installed == null and
		 .reload_due == false and .reload_blocked_by == []' "$TMP/out"
}

check_deferred() {
	local rc=0

	vfio_open_start "$FREE" || return 1
	reload_ko || rc=$?
	[ "$rc" = 5 ] || { echo "exit $rc, want 5 (deferred)"; return 1; }
	grep -q "^gpuctl: module reload deferred: the running module .* stays loaded" \
		"$TMP/err" || return 1
	grep -qx "$FREE is open on gpuctl-vfio-pci by vfio_open\[$VFIO_PID\]" \
		"$TMP/err" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check --arg l "$FREE is open on gpuctl-vfio-pci by vfio_open[$VFIO_PID]" \
		'.reload_blocked_by == [$l]' "$TMP/out" || return 1
	# the kernel refuses the handover itself, naming the device
	ynl_fails alloc-del '{"id": 41, "handover": true}' &&
	grep -q 'error: -16\b' "$TMP/err" &&
	grep -q "$FREE is open on gpuctl-vfio-pci, which an unload cannot keep" \
		"$TMP/err" || return 1
	vfio_open_stop
	state_unchanged
}

# udev's view of the reload: module gpuctl removed, then added, 02:00.0
# bound to gpuctl-vfio-pci again, and no other bind
check_reload() {
	udevadm monitor --kernel --property --subsystem-match=module \
		--subsystem-match=pci >"$TMP/uevents" 2>&1 &
	UDEV_PID=$!
	sleep 1
	reload_ko || return 1
	grep -qx "gpuctl: module .* loaded: 2 rules and 2 allocations carried over" \
		"$TMP/err" || return 1
	expect_pci_driver "$FREE" gpuctl-vfio-pci 10 || return 1
	expect_pci_driver "$MF_GPU" vfio-pci 0 || return 1
	expect_pci_driver "$MF_HDA" vfio-pci 0 || return 1
	sleep 1
	kill "$UDEV_PID"
	wait "$UDEV_PID" 2>/dev/null
	UDEV_PID=
	# ACTION, DEVPATH and DRIVER of each event, one line per event
	awk -F= '/^ACTION=/ { a = $2 } /^DEVPATH=/ { p = $2 }
		 /^DRIVER=/ { d = $2 }
		 /^$/ && a { print a, p, d; a = p = d = "" }' "$TMP/uevents" \
		>"$TMP/events"
	cat "$TMP/events"
	grep -q '^remove /module/gpuctl *$' "$TMP/events" || return 1
	grep -q '^add /module/gpuctl *$' "$TMP/events" || return 1
	grep -q "^bind .*/$FREE gpuctl-vfio-pci\$" "$TMP/events" || return 1
	if grep '^bind ' "$TMP/events" | grep -v "/$FREE gpuctl-vfio-pci\$"; then
		echo "a reserved device was bound to another driver"
		return 1
	fi
	state_unchanged
}

# A process that starts a dump of gpuctl's devices and never reads it
# holds the module (netlink keeps the family's module until the dump ends
# or its socket closes): the reload fails, says what can hold the module,
# and puts the ledger back; once the process is gone, the hold is too.
check_half_read_dump() {
	local fam pid refs rc=0 _

	fam=$(genl ctrl get name gpuctl | sed -n 's/.*ID: \(0x[0-9a-f]*\).*/\1/p')
	[ -n "$fam" ] || { echo "no family id"; return 1; }
	refs=$(gpuctl_refcnt) || return 1
	python3 -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)	# NETLINK_GENERIC
s.bind((0, 0))
genl = struct.pack("=BBH", 1, 1, 0)	# dev-get, version 1
s.send(struct.pack("=IHHII", 16 + len(genl), int(sys.argv[1], 16),
		   0x1 | 0x300, 1, 0) + genl)	# NLM_F_REQUEST | NLM_F_DUMP
time.sleep(600)' "$fam" &
	pid=$!
	for _ in $(seq 50); do
		[ "$(gpuctl_refcnt)" -gt "$refs" ] && break
		sleep 0.1
	done
	echo "# refcnt $refs, then $(gpuctl_refcnt) with the dump half-read"
	[ "$(gpuctl_refcnt)" -gt "$refs" ] || { echo "the dump holds nothing"; rc=1; }
	reload_ko || rc=$?
	[ "$rc" = 2 ] || { echo "exit $rc, want 2"; kill "$pid"; return 1; }
	grep -q "^gpuctl: it is still in use (refcnt [0-9]*): .*a process that started a netlink dump of gpuctl and has not read it to its end" \
		"$TMP/err" || { kill "$pid"; return 1; }
	kill "$pid"
	wait "$pid" 2>/dev/null
	state_unchanged || return 1
	[ "$(gpuctl_refcnt)" = "$refs" ] || { echo "refcnt $(gpuctl_refcnt), want $refs"; return 1; }
}

check_no_file() {
	local rc=0

	run_captured "$TMP/out" "$TMP/err" gpuctl module reload ko "$TMP/none.ko" ||
		rc=$?
	[ "$rc" = 1 ] || { echo "exit $rc, want 1"; return 1; }
	grep -qx "gpuctl: module reload: $TMP/none.ko: no gpuctl module to load" \
		"$TMP/err" || return 1
	state_unchanged
}

check_unprivileged() {
	local rc=0

	chmod 755 "$TMP"
	reload_ko "${NOBODY[@]}" || rc=$?
	[ "$rc" = 2 ] || { echo "exit $rc, want 2"; return 1; }
	grep -qx "Error: Operation not permitted" "$TMP/err" || return 1
	state_unchanged
}

# Each fd of QEMU PID and what it points to, one per line.
qemu_fds() {	# PID
	local fd

	for fd in /proc/"$1"/fd/*; do
		printf '%s %s\n' "${fd##*/}" "$(readlink "$fd")"
	done | sort -n
}

# The devices' drivers and every QEMU's fds, for before and after.
vm_view() {
	local a p

	for a in "$MF_GPU" "$MF_HDA" "$VF"; do
		printf '%s %s\n' "$a" "$(readlink "$SYS_PCI/$a/driver")"
	done
	for p in "${QEMU_PIDS[@]}"; do
		kill -0 "$p" || { echo "QEMU $p is gone"; return 1; }
		qemu_fds "$p" | sed "s/^/qemu $p fd /"
	done
}

alloc_state_is() {	# ID STATE: gpuctl-nl says so within 10 s
	local _

	for _ in $(seq 50); do
		gpuctl-nl alloc-get "$1" | grep -q " state=$2\b" && return 0
		sleep 0.2
	done
	gpuctl-nl alloc-get "$1"
	echo "allocation $1 is not $2"
	return 1
}

# Allocation 42 holds 07:00.0 and its HDA (vfio-pci), 43 the VF: a nested
# QEMU runs on each through the reload.
check_reload_vms() {
	local mark="test_module_reload.sh: reload with VMs ($$ $RANDOM)" next first _

	echo 0 >"$SYS_PCI/$PF/sriov_drivers_autoprobe" &&
	echo 1 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	nl_rule_new "$VF" && expect_pci_driver "$VF" vfio-pci 10 || return 1
	# an id the module picks, gone again: the next module must not reuse it
	nl_alloc_new owner "$VM3" device "$VF" && first=$ALLOC &&
	nl_alloc_del "$first" || return 1
	nl_alloc_new owner "$VM3" id 43 name vm-three device "$VF" || return 1
	ulimit -l unlimited && modprobe vfio_iommu_type1 || return 1
	QEMU_GUEST=vm-two qemu_start vm-two "vfio-pci,host=$MF_GPU" && qemu_ready ||
		return 1
	QEMU_PIDS+=("$QEMU_PID")
	QEMU_GUEST=vm-three qemu_start vm-three "vfio-pci,host=$VF" && qemu_ready ||
		return 1
	QEMU_PIDS+=("$QEMU_PID")
	alloc_state_is 42 running && alloc_state_is 43 running || return 1
	nl_state >"$TMP/vms.before" && vm_view >"$TMP/view.before" || return 1
	cat "$TMP/vms.before" "$TMP/view.before"

	udevadm monitor --kernel --property --subsystem-match=pci \
		>"$TMP/uevents" 2>&1 &
	UDEV_PID=$!
	sleep 1
	echo "$mark" >/dev/kmsg
	next=$(cat /sys/module/gpuctl/parameters/next_alloc_id) || return 1
	reload_ko || return 1
	grep -qx "gpuctl: module .* loaded: 3 rules and 3 allocations carried over" \
		"$TMP/err" || return 1
	sleep 1
	kill "$UDEV_PID"
	wait "$UDEV_PID" 2>/dev/null
	UDEV_PID=

	# what a VM could notice: nothing
	vm_view >"$TMP/view.after" || return 1
	diff -u "$TMP/view.before" "$TMP/view.after" || return 1
	alloc_state_is 42 running && alloc_state_is 43 running || return 1
	nl_state >"$TMP/vms.after" || return 1
	diff -u "$TMP/vms.before" "$TMP/vms.after" || return 1
	if grep -E "^ACTION=(bind|unbind)" -A3 "$TMP/uevents" |
	   grep -E "$MF_GPU|$MF_HDA|$VF"; then
		echo "a VM's device was bound or unbound"
		return 1
	fi
	dmesg | sed -n "\|$mark|,\$p" >"$TMP/dmesg"
	if grep -E "Relaying device request|released" "$TMP/dmesg"; then
		echo "the kernel log tells of a device taken away"
		return 1
	fi
	# the new module does not know who holds them (vfio-pci); root's
	# tool finds each QEMU in /proc, its guest name its allocation's
	gpuctl -j dev show >"$TMP/devs.json" || return 1
	json_check --arg g "$MF_GPU" --arg v "$VF" --argjson p2 "${QEMU_PIDS[0]}" \
		--argjson p3 "${QEMU_PIDS[1]}" '[.devices[] |
		select(.address == ($g, $v)) | .holder | [.pid, .vm, .match, .found_by]] ==
		[[$p2, "vm-two", "owner", "proc"], [$p3, "vm-three", "owner", "proc"]]' \
		"$TMP/devs.json" || return 1

	# the new module goes on counting where the old one stopped
	[ "$(cat /sys/module/gpuctl/parameters/next_alloc_id)" = "$next" ] ||
		{ echo "next_alloc_id is not $next"; return 1; }

	# the VMs stop: the new module sees it, detach-on-stop included
	qemu_kill_all || return 1
	alloc_state_is 43 idle || return 1
	for _ in $(seq 50); do
		gpuctl-nl alloc-get 42 >/dev/null 2>&1 || break
		sleep 0.2
	done
	cmd_fails 'No such file or directory \(errno 2\)' gpuctl-nl alloc-get 42 ||
		return 1
	nl_alloc_del 43 || return 1
	nl_alloc_new owner "$VM3" device "$VF" || return 1
	[ "$ALLOC" = $((first + 1)) ] ||
		{ echo "allocation id $ALLOC after $first"; return 1; }
	nl_alloc_del "$ALLOC" && gpuctl-nl rule-del match "$VF" || return 1
	echo 0 >"$SYS_PCI/$PF/sriov_numvfs"
}

qemu_kill_all() {
	local p

	for p in "${QEMU_PIDS[@]}"; do
		kill "$p" && tail --pid="$p" -f /dev/null
	done
	QEMU_PIDS=()
}

# The rules go first: a device unbound by the unload keeps gpuctl's
# driver_override, and the next load would bind it again with no rule to
# release it, leaving it off its host driver for the tests after this one.
check_not_loaded() {
	local rc=0

	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name acme >/dev/null
	nl_rules_cleanup
	expect_pci_driver "$FREE" "" 10 || return 1
	expect_pci_driver "$MF_GPU" bochs-drm 10 || return 1
	expect_pci_driver "$MF_HDA" snd_hda_intel 10 || return 1
	gpuctl_unload || return 1
	reload_ko || rc=$?
	[ "$rc" = 3 ] || { echo "exit $rc, want 3"; return 1; }
	grep -qx "gpuctl: module reload: gpuctl is not loaded (modprobe gpuctl)" \
		"$TMP/err" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check '.running == null and .reload_due == false' "$TMP/out" ||
		return 1
	gpuctl_load
}

ktap_header
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ktap_plan 9
ktap_run_stage "setup: two rules, two allocations with ids, a limit" check_setup
ktap_run_stage "module show: the running version; none installed, no reload due; completion" \
	check_show
ktap_run_stage "module reload while a VFIO user holds a GPU: deferred (exit 5), reason named, nothing changes" \
	check_deferred
ktap_run_stage "module reload: unloaded and loaded, rules, allocations and limits carried over, no foreign bind" \
	check_reload
ktap_run_stage "module reload while a dump is half-read: fails, says why, ledger back" \
	check_half_read_dump
ktap_run_stage "module reload ko of a missing file: refused, nothing changes" \
	check_no_file
ktap_run_stage "module reload without privilege: refused, nothing changes" \
	check_unprivileged
ktap_run_stage "module reload with VMs on vfio-pci: goes through, the VMs notice nothing" \
	check_reload_vms
ktap_run_stage "module reload with no module loaded: exit 3; devices back on their drivers" \
	check_not_loaded
ktap_finished
