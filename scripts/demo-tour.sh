#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's tour, run as root inside the guest of "make demo": what an
# operator types, from loading the module to a VM's GPU being given back.
#
#   the inventory, and an IOMMU group that VFIO cannot use, with the reason
#   reserve: take a GPU from the host driver that has it
#   alloc:   give it to a VM, until the VM stops
#   a real QEMU opens it: the holder in dev show, the allocation running
#   monitor: the events while the VM stops; detach-on-stop ends the allocation
#   limit:   a tenant's cap, and a request over it refused with EDQUOT
#
# Every step's output is checked: a step that fails, prints on stderr or
# does not show what it should stops the tour with "demo: FAILED: ..." and
# exit status 1, so "make check" can run it. The rule is for gpuctl's own
# VFIO driver, gpuctl-vfio-pci, which sees who opens the GPU and lets only
# the allocation's uid (65534, as libvirt's QEMU user) open it.
#
# Devices of the "full" topology (selftests/qemu/topologies/full): 01:00.0
# bochs-display on bochs-drm; 09:01.0 VGA and 09:02.0 e1000 behind one
# PCI bridge, in one IOMMU group.

set -uo pipefail

# wait_for, wait_subscribed and monitor_group_id
# shellcheck source=selftests/lib.sh
source "$GPUCTL_ROOT/selftests/lib.sh"

GPU=0000:01:00.0
NIC=0000:09:02.0
VM=5b4e28ba-2fa1-11d2-883f-0016d3cca427
VM2=9d1c0f2e-4b7a-4c1e-8f3d-2a6b5c7e8f90
QEMU_UID=65534
T=$(mktemp -d /tmp/demo.XXXXXX)
QEMU_PID=
MON_PID=

# Bold headings on a terminal only; make check keeps a plain log.
B='' N=''
if [ -t 1 ]; then
	B=$'\033[1m' N=$'\033[0m'
fi

cleanup() {
	[ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "demo: FAILED: $*" >&2
	exit 1
}

say() {
	printf '\n%s\n' "$*"
}

# run CMD...: shows and runs CMD as typed at a root prompt; fails the tour
# when CMD exits non-zero or writes anything on stderr.
run() {
	local rc=0

	printf '%s# %s%s\n' "$B" "$*" "$N"
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] || fail "'$*' exited with $rc"
	[ ! -s "$T/err" ] || fail "'$*' printed on stderr"
}

# run_refused RC CMD...: as run, but CMD must fail with exit status RC
# and say why on stderr.
run_refused() {
	local want=$1 rc=0
	shift

	printf '%s# %s%s\n' "$B" "$*" "$N"
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	cat "$T/out" "$T/err"
	echo "(exit status $rc)"
	[ "$rc" -eq "$want" ] || fail "'$*' exited with $rc, want $want"
	cp "$T/err" "$T/out"
}

# expect REGEX...: each matches a line the last command printed.
expect() {
	local re

	for re in "$@"; do
		grep -qE -- "$re" "$T/out" || fail "no line matching '$re'"
	done
}

# The holder of GPU, per gpuctl; empty when nobody has it open.
holder_pid() {
	gpuctl -j dev show "$GPU" | jq -r '.devices[0].holder.pid // empty'
}

qemu_holds_gpu() {
	[ "$(holder_pid)" = "$QEMU_PID" ]
}

# --- the tour --------------------------------------------------------------

say "gpuctl.ko needs vfio and vfio-pci-core; on a host, 'modprobe gpuctl'
loads them. Here the module comes from the build tree:"
# shellcheck disable=SC2046 # one word per module
run modprobe -a $(modinfo -F depends "$GPUCTL_KO" | tr , ' ')
run insmod "$GPUCTL_KO"
[ -d /sys/module/gpuctl ] || fail "gpuctl is not loaded"

say "Every GPU and every member of their IOMMU groups, with its driver,
its reservation state and rule, allocation and holder:"
run gpuctl dev show
expect '^ADDRESS +ROLE +DRIVER +STATE +RULE +IDS +GROUP +NUMA +ROOT +ALLOC +HOLDER +VFS +PF +VGPU +NAME' \
	"^$GPU +gpu +bochs-drm +free +- +1234:1111 " \
	"^$NIC +foreign +e1000 +free "

group=$(gpuctl -j dev show "$NIC" | jq -r '.devices[0].iommu_group') ||
	fail "no IOMMU group for $NIC"
say "The GPU at 09:01.0 shares its IOMMU group with a NIC behind the same
PCI bridge. VFIO can use a group only when no member is on a host driver;
gpuctl says which one is in the way:"
run gpuctl group show "$group"
expect "^group $group\$" "^  devices: .*$NIC" '^  viable: no$' \
	'^  reason: 0000:09:0[12]\.0 is bound to (bochs-drm|e1000)$'

say "Reserve the GPU at 01:00.0 for gpuctl-vfio-pci, taking it from the
host driver (bochs-drm) that has it now:"
run gpuctl reserve add "$GPU" driver gpuctl-vfio-pci take
expect "^rule [0-9]+ match $GPU driver gpuctl-vfio-pci take source netlink\$" \
	"^  devices: $GPU\$"
run gpuctl dev show "${GPU#0000:}"
expect "^$GPU +gpu +gpuctl-vfio-pci +reserved +[0-9]+ "
[ "$(basename "$(readlink "/sys/bus/pci/devices/$GPU/driver")")" = gpuctl-vfio-pci ] ||
	fail "$GPU is not bound to gpuctl-vfio-pci in sysfs"

say "Give it to the VM vm1 of account acme, whose QEMU runs as uid
$QEMU_UID, until the VM stops:"
run gpuctl alloc add owner "$VM" name vm1 account acme dev "${GPU#0000:}" \
	detach-on-stop uid "$QEMU_UID" gid "$QEMU_UID"
expect "^alloc [0-9]+ owner $VM name vm1 account acme gpus 1 state idle detach-on-stop uid $QEMU_UID gid $QEMU_UID\$" \
	"^  devices: $GPU\$"
alloc=$(sed -n 's/^alloc \([0-9]*\) .*/\1/p' "$T/out")

say "Start the VM: a real QEMU, as uid $QEMU_UID, with the GPU assigned
(-S: it sets the machine up and stops before running it). As libvirt
would, give that user the group's VFIO node and unlimited locked memory:"
run modprobe vfio_iommu_type1
run chown "$QEMU_UID:$QEMU_UID" "/dev/vfio/$(pci_group_of "$GPU")"
ulimit -l unlimited || fail "cannot raise the memlock limit"
# QMP's socket goes where that user may create it
chmod 0755 "$T" || fail "chmod $T"
mkdir -m 1777 "$T/q" || fail "mkdir $T/q"
qemu=(setpriv "--reuid=$QEMU_UID" "--regid=$QEMU_UID" --clear-groups
      qemu-system-x86_64 -S -nodefaults -no-user-config -display none
      -machine q35 -m 64 -accel tcg -device "vfio-pci,host=$GPU"
      -qmp "unix:$T/q/qmp.sock,server=on,wait=off")
printf '%s# %s &%s\n' "$B" "${qemu[*]}" "$N"
"${qemu[@]}" >"$T/qemu.out" 2>&1 &
QEMU_PID=$!
if ! wait_for 60 qemu_holds_gpu 2>/dev/null; then
	cat "$T/qemu.out"
	fail "QEMU ($QEMU_PID) did not become the holder of $GPU"
fi

say "gpuctl names QEMU as the GPU's holder, and the allocation runs:"
run gpuctl dev show "$GPU"
expect "^$GPU +gpu +gpuctl-vfio-pci +reserved +[0-9]+ .* $alloc +qemu-system-x86\\[$QEMU_PID\\] "
run gpuctl alloc show "$alloc"
expect "^alloc $alloc owner $VM name vm1 account acme gpus 1 state running detach-on-stop "

say "Follow the module's events while the VM stops (QMP quit): QEMU's
close, and the end of the detach-on-stop allocation:"
printf '%s# gpuctl monitor &%s\n' "$B" "$N"
gpuctl monitor >"$T/mon" 2>"$T/mon.err" &
MON_PID=$!
wait_subscribed "$MON_PID" "$(monitor_group_id ledger)" || fail "gpuctl monitor did not start"
tail -n +1 -f --pid="$MON_PID" "$T/mon" &
printf '%s# echo quit | qmp%s\n' "$B" "$N"
printf '{"execute": "qmp_capabilities"}\n{"execute": "quit"}\n' |
	socat -t 10 - "UNIX-CONNECT:$T/q/qmp.sock" >/dev/null ||
	fail "QMP quit failed"
if ! timeout 60 tail --pid="$QEMU_PID" -f /dev/null; then
	fail "QEMU did not exit"
fi
rc=0
wait "$QEMU_PID" || rc=$?
QEMU_PID=
[ "$rc" -eq 0 ] || { cat "$T/qemu.out"; fail "QEMU exited with $rc"; }
wait_for 20 grep -qE "^\\[alloc-del\\] alloc $alloc .* end detached( |\$)" "$T/mon" ||
	fail "the monitor did not show allocation $alloc detached"
kill -INT "$MON_PID"
rc=0
wait "$MON_PID" || rc=$?
MON_PID=
# the tail ends with the monitor, once it has printed every line
wait
[ "$rc" -eq 0 ] || fail "gpuctl monitor exited with $rc on SIGINT"
[ ! -s "$T/mon.err" ] || { cat "$T/mon.err"; fail "gpuctl monitor printed on stderr"; }
grep -qE "^\\[vfio-close\\] $GPU .* holder qemu-system-x86\\[[0-9]+\\] " "$T/mon" ||
	fail "the monitor did not show QEMU closing $GPU"

say "The allocation is gone; the GPU stays reserved for the next VM:"
run gpuctl alloc show
[ ! -s "$T/out" ] || fail "allocations left"
run gpuctl dev show "$GPU"
expect "^$GPU +gpu +gpuctl-vfio-pci +reserved +[0-9]+ .* - +- "

say "Cap account acme at one GPU. vm1 gets the GPU again; a second VM of
acme asking for one more is refused, and nothing changes:"
run gpuctl limit set account acme max 1
expect '^account acme max 1 used 0$'
run gpuctl alloc add owner "$VM" name vm1 account acme dev "$GPU"
expect "^alloc [0-9]+ owner $VM name vm1 account acme gpus 1 state idle"
run_refused 2 gpuctl alloc add owner "$VM2" name vm2 account acme count 1
expect '^Error: account acme is limited to 1 GPUs?, 1 in use: Disk quota exceeded$'
run gpuctl limit show
expect '^account acme max 1 used 1$'
run gpuctl alloc show
expect "^alloc [0-9]+ owner $VM name vm1 "
[ "$(grep -c '^alloc ' "$T/out")" = 1 ] || fail "the refused request left an allocation"

say "Tour done. Try: gpuctl help, gpuctl -j -p dev show $GPU, gpuctl reserve show,
gpuctl alloc show, gpuctl monitor (another shell), man tools/gpuctl/gpuctl.8"
