#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# A real QEMU inside the test VM opens a vGPU: qemu-system-x86_64 -S with
# "-device vfio-pci,sysfsdev=/sys/bus/mdev/devices/UUID" on an instance of
# the kernel's sample mbochs driver opens it while it sets the machine up.
# gpuctl reads the open from the vfio core's count (kmod/mdev-watch.c), so:
#   - the instance shows open (mdev-get, to root only; vgpu show) and its
#     allocation running, and alloc-del is refused while it is open;
#   - root's vgpu show and alloc show name the QEMU that holds it, found
#     in /proc, with its guest name;
#   - vgpu del refuses an open instance instead of waiting for the VM;
#   - when QEMU quits, a detach-on-stop allocation ends ("detached", seen
#     by a YNL ledger subscriber), and another goes back to idle.
# The kernel's YNL CLI is the independent witness.
#
# The guest's root is the host's, so its QEMU is the host's. VFIO pins the
# nested guest's RAM, hence vfio_iommu_type1 and an unlimited memlock.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_vgpu_vm.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
MDEVS=/sys/bus/mdev/devices
VM=4c1e5a20-0000-4000-8000-000000000001
U=8e2f0c10-0000-4000-8000-0000000000c1
NTF_PID=

cleanup() {
	qemu_kill
	[ -n "$NTF_PID" ] && kill "$NTF_PID" 2>/dev/null
	wait 2>/dev/null
	# the allocations go, then the instance
	nl_allocs_cleanup
	[ -e "$MDEVS/$U" ] && echo 1 >"$MDEVS/$U/remove"
	rmmod mbochs 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# vm_start: the nested QEMU (lib.sh) with the instance assigned
vm_start() {
	QEMU_GUEST=vm-mdev qemu_start vm "vfio-pci,sysfsdev=$MDEVS/$U"
}

mdev_field() {	# FIELD: the instance's FIELD per mdev-get, as root
	ynl --do mdev-get --json "{\"uuid\": \"$U\"}" | jq -r ".[\"$1\"]"
}

# wait_open 1|0: until gpuctl says the instance is (not) open; fails early
# when QEMU is gone while waited for as open.
wait_open() {
	local deadline=$((SECONDS + QEMU_TIMEOUT)) t0=$SECONDS

	until [ "$(mdev_field open)" = "$1" ]; do
		if [ "$SECONDS" -ge "$deadline" ] ||
		   { [ "$1" = 1 ] && ! kill -0 "$QEMU_PID" 2>/dev/null; }; then
			echo "open is not $1 after $((SECONDS - t0)) s"
			cat "$QEMU_OUT"
			return 1
		fi
		sleep 0.5
	done
	echo "# open $1 after $((SECONDS - t0)) s"
}

alloc_state() {	# ID: its state, or "gone" when the kernel has none
	if ynl --do alloc-get --json "{\"id\": $1}" >"$TMP/state" 2>&1; then
		jq -r '.state' "$TMP/state"
	elif grep -q 'error: -2$' "$TMP/state"; then
		echo gone
	else
		cat "$TMP/state" >&2
		echo unknown
	fi
}

check_setup() {
	command -v qemu-system-x86_64 || { echo "no qemu-system-x86_64"; return 1; }
	command -v socat || { echo "no socat"; return 1; }
	[ -f "$SAMPLES/mbochs.ko" ] || { echo "no $SAMPLES/mbochs.ko"; return 1; }
	ulimit -l unlimited || return 1
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	modprobe -a vfio_iommu_type1 mdev || return 1
	insmod "$SAMPLES/mbochs.ko" count=96 || return 1
	gpuctl vgpu add mbochs type mbochs-small uuid "$U" >/dev/null || return 1
	[ "$(mdev_field open)" = 0 ]
}

check_vm_opens() {
	local id

	gpuctl -j alloc add owner "$VM" vgpu "$U" detach-on-stop >"$TMP/a" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a") && echo "$id" >"$TMP/a.id" || return 1
	[ "$(alloc_state "$id")" = idle ] || return 1
	vm_start
	wait_open 1 || return 1
	[ "$(alloc_state "$id")" = running ] || return 1
	# the module knows it is open; root's tool finds QEMU in /proc
	gpuctl vgpu show "$U" |
		grep -q " alloc $id open holder qemu-system-x86\[$QEMU_PID\]\$" || return 1
	gpuctl -j vgpu show "$U" | json_check --argjson pid "$QEMU_PID" '
		.vgpus[0].holder == {"pid": $pid, "comm": "qemu-system-x86", "uid": 0,
		"vm": "vm-mdev", "match": "owner"}' || return 1
	gpuctl -j alloc show "$id" | json_check --arg u "$U" --argjson pid "$QEMU_PID" '
		.allocations[0].holders == [{"dev": $u, "pid": $pid,
		"comm": "qemu-system-x86", "vm": "vm-mdev", "match": "owner"}]' ||
		return 1
	# whether it is open is root's, as a device's holder
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env PYTHONPATH="$YNL_DIR" /usr/bin/python3 "$YNL_DIR/cli.py" \
		--spec "$GPUCTL_SPEC" --no-schema --output-json \
		--do mdev-get --json "{\"uuid\": \"$U\"}" >"$TMP/nobody" || return 1
	json_check 'has("open") | not' "$TMP/nobody" || return 1
	cmd_fails "$U is open by a VFIO user" \
		ynl --do alloc-del --json "{\"id\": $id}" && out_has "error: -16" ||
		return 1
	[ "$(alloc_state "$id")" = running ]
}

# QEMU quits: the detach-on-stop allocation ends, announced as detached
check_detach() {
	local id

	id=$(cat "$TMP/a.id") || return 1
	ynl_listen ledger 15 >"$TMP/ntf" 2>"$TMP/ntf.err" &
	NTF_PID=$!
	wait_subscribed "$NTF_PID" "$(monitor_group_id ledger)" || return 1
	qemu_quit || return 1
	wait_open 0 || return 1
	[ "$(alloc_state "$id")" = gone ] || return 1
	ynl_listen_end "$NTF_PID"
	NTF_PID=
	cat "$TMP/ntf.err"
	jq -c --argjson id "$id" '.[] | select(.name == "alloc-del-ntf" and
		.msg.id == $id) | .msg.end' "$TMP/ntf" >"$TMP/ends" || return 1
	cat "$TMP/ends"
	[ "$(cat "$TMP/ends")" = '"detached"' ] || return 1
	# the instance stays: it was named, not made, for the allocation
	[ -e "$MDEVS/$U" ]
}

# Without detach-on-stop: running, then idle again; vgpu del refuses the
# open instance rather than wait for the VM.
check_idle_again() {
	local id

	gpuctl -j alloc add owner "$VM" vgpu "$U" >"$TMP/b" || return 1
	id=$(jq '.allocations[0].id' "$TMP/b") || return 1
	vm_start
	wait_open 1 || return 1
	[ "$(alloc_state "$id")" = running ] || return 1
	gpuctl alloc del "$id" keep 2>"$TMP/err" && return 1
	cat "$TMP/err"
	grep -q "$U is open by a VFIO user" "$TMP/err" || return 1
	qemu_quit || return 1
	wait_open 0 || return 1
	[ "$(alloc_state "$id")" = idle ] || return 1
	gpuctl alloc del "$id" keep || return 1

	vm_start
	wait_open 1 || return 1
	cmd_fails "^gpuctl: vgpu del: mdev $U is open by a VFIO user; stop the VM first$" \
		gpuctl vgpu del "$U" || return 1
	[ -e "$MDEVS/$U" ] && kill -0 "$QEMU_PID" || return 1
	qemu_quit && wait_open 0 && gpuctl vgpu del "$U" && [ ! -e "$MDEVS/$U" ]
}

ynl_start
ktap_header
ktap_plan 4
ktap_run_stage "mbochs loaded, an instance, not open" check_setup
ktap_run_stage "a nested QEMU opens it: open, running, alloc-del refused" check_vm_opens
ktap_run_stage "QEMU quits: the detach-on-stop allocation is detached" check_detach
ktap_run_stage "without detach-on-stop: idle again; vgpu del refuses an open one" \
	check_idle_again
ktap_finished
