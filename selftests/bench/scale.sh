#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpuctl scale benchmark, run in the guest by `make bench`
# (selftests/qemu/run.sh --kernel REL --topology scale --
# selftests/bench/scale.sh): a host with 1 to 1000 vGPUs reads as fast, per
# vGPU, as one with 64.
#
# One PCI parent (selftests/modules/vgpu_test_parent.c on the topology's
# 01:00.0, with room for 1024 "GRID T4-2B" instances) carries 1, 16, 64,
# 256 and 1000 mdev instances in turn. At each size:
#   - the reads: gpuctl -j dev show, -j vgpu show, export cloudstack,
#     export nova, metrics, and the baseline, the same facts read from
#     sysfs by mdevctl list (Debian's mdevctl, the walk operators use);
#     each command's fastest and median of CALLS calls, and its cost per
#     instance beyond the read of the bare parent: (t(N) - t(0)) / N;
#   - gpuctl alloc add ... vgpu nvidia-222 count 8, then alloc del;
#   - the time from an mdev create (the write to the type's "create") to
#     its line in gpuctl monitor.
# At 1000 also the module's slab memory per tracked instance: the slab
# that loading gpuctl takes with 1000 instances to scan, less what it
# takes with none, over 1000.
# Then 64 SR-IOV VFs of the topology's nvme PF (the stand-in of a vendor
# VF card), named by a rule so that gpuctl tracks and binds each: the
# reads with 8 and 64 VFs, per VF, and the slab per VF.
#
# The goals it prints, each "met" or "missed":
#   - each read's per-instance cost at 1000 is at most 2 times that at 64;
#   - the event latency at 1000 instances is at most 2 times that at 1;
#   - the module keeps at most 1 KiB of slab per tracked instance.
# A benchmark, not a test: it never fails on numbers, only when a step
# cannot run at all.

# shellcheck disable=SC2317 # functions called by name through time_calls

# Address space randomisation off for every command, as for run.sh's
# start-up comparison: QEMU's TCG otherwise translates each new process's
# code anew, and that cost, tens of milliseconds that vary call by call,
# would drown the per-instance costs.
if [ -z "${GPUCTL_SCALE_NORANDOM:-}" ]; then
	GPUCTL_SCALE_NORANDOM=1 exec setarch "$(uname -m)" -R "$0" "$@"
fi

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"
set -o pipefail

SIZES=${GPUCTL_SCALE_SIZES:-1 16 64 256 1000}
# the goals compare the largest size with 64 (or the smallest) and with 1
BIG=${SIZES##* }
SMALL=${SIZES%% *}
MID=$SMALL
[[ " $SIZES " == *" 64 "* ]] && MID=64
CALLS=${GPUCTL_SCALE_CALLS:-9}
SAMPLES=$GPUCTL_ROOT/build/$(uname -r)/mdev
CARD=0000:01:00.0
PF=0000:02:00.0
NVFS=64
TYPE=nvidia-222
TYPES=/sys/bus/pci/devices/$CARD/mdev_supported_types
MDEVS=/sys/bus/mdev/devices
OWNER=5ca1e000-0000-4000-8000-00000000a110
TMP=$(mktemp -d /tmp/scale.XXXXXX)
MONITOR_PID=

READS=(
	"gpuctl -j dev show"
	"gpuctl -j vgpu show"
	"gpuctl export cloudstack"
	"gpuctl export nova"
	"gpuctl metrics"
	"mdevctl list"
)

cleanup() {
	[ -n "$MONITOR_PID" ] && kill "$MONITOR_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

die() {
	echo "scale: $*" >&2
	exit 1
}

uuid_of() {	# I: the I-th instance's UUID
	printf '5ca1e000-0000-4000-8000-%012x\n' "$1"
}

instances() {
	find "$MDEVS" -mindepth 1 -maxdepth 1 | wc -l
}

# grow_to N: make instances until the parent has N
grow_to() {
	local i

	for ((i = $(instances); i < $1; i++)); do
		uuid_of "$i" >"$TYPES/$TYPE/create" ||
			die "cannot make instance $i"
	done
}

# time_calls CMD: "FASTEST MEDIAN" in ms of CALLS calls of CMD, each timed
# alone by the shell's clock
time_calls() {
	local t0 t1 i

	for ((i = 0; i < CALLS; i++)); do
		t0=$EPOCHREALTIME
		# shellcheck disable=SC2086 # the words of the command
		$1 >/dev/null || die "$1 failed"
		t1=$EPOCHREALTIME
		echo $((10#${t1/[.,]/} - 10#${t0/[.,]/}))
	done | sort -n | awk '{ t[NR] = $1 / 1000 }
		END { h = int((NR + 1) / 2); printf "%.3f %.3f\n", t[1], t[h] }'
}

# alloc_vgpus: an allocation that makes 8 instances, then its deletion
alloc_vgpus() {
	local out id

	out=$(gpuctl alloc add owner "$OWNER" vgpu "$TYPE" count 8) || return 1
	id=${out#alloc }
	gpuctl alloc del "${id%% *}"
}

# event_latency N: the median ms, of 5, from writing an instance's UUID to
# "create" to the stamp the monitor's reader gave its mdev-add line, with
# N instances there; the UUIDs are new at each N
event_latency() {
	local i u t0 t1

	for ((i = 0; i < 5; i++)); do
		u=$(uuid_of $((0xe0000 + $1 * 8 + i)))
		t0=$EPOCHREALTIME
		echo "$u" >"$TYPES/$TYPE/create" || die "cannot make $u"
		wait_for 30 grep -q "mdev-add.*$u" "$TMP/monitor" ||
			die "no monitor line for $u"
		t1=$(awk -v u="$u" '$0 ~ "mdev-add" && index($0, u) { print $1; exit }' \
			"$TMP/monitor")
		echo 1 >"$MDEVS/$u/remove" || die "cannot remove $u"
		wait_for 30 grep -q "mdev-del.*$u" "$TMP/monitor" ||
			die "no monitor line for the removal of $u"
		awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
	done | sort -n | awk '{ t[NR] = $1 } END { print t[3] }'
}

monitor_start() {
	gpuctl monitor 2>"$TMP/monitor.err" | while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done >"$TMP/monitor" &
	MONITOR_PID=$!
	sleep 2
}

# The module's memory is unreclaimable slab (kmalloc); the reclaimable
# part (dentries, inodes) moves with every file the commands touch. Each
# cache first gives back its per-CPU and partial slabs (SLUB's "shrink"),
# which otherwise hide or inflate a few hundred kB.
slab_kb() {
	local f

	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null
	done
	awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo
}

# load_slab [ARGS]: the unreclaimable slab kB that loading gpuctl with
# insmod ARGS takes now: "MEDIAN LEAST MOST" of five loads, the spread
# being this measurement's noise
load_slab() {
	local i s0 s1

	for ((i = 0; i < 5; i++)); do
		gpuctl_unload >/dev/null 2>&1
		s0=$(slab_kb)
		gpuctl_load "$@" >/dev/null 2>&1 || die "cannot load $GPUCTL_KO"
		sleep 1
		s1=$(slab_kb)
		echo $((s1 - s0))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[3], v[1], v[5] }'
}

# instr CMD: the instructions CMD runs in user space (valgrind's
# callgrind): a count that does not move with the host's load, but leaves
# out the kernel's share of the work
instr() {
	# shellcheck disable=SC2086 # the words of the command
	valgrind --tool=callgrind --callgrind-out-file=/dev/null $1 2>&1 >/dev/null |
		awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}

goal() {	# TEXT A LIMIT: "met" when A <= LIMIT
	awk -v t="$1" -v a="$2" -v l="$3" 'BEGIN {
		printf "goal: %s: %s (%.3f, limit %.3f)\n", t, a <= l ? "met" : "missed", a, l }'
}

echo "# gpuctl scale bench: kernel $(uname -r), $CALLS calls per read, sizes $SIZES"
command -v mdevctl >/dev/null || die "no mdevctl (scripts/install-deps.sh bench)"
[ -f "$SAMPLES/vgpu_test_parent.ko" ] || die "no $SAMPLES/vgpu_test_parent.ko"
modprobe -a vfio_iommu_type1 mdev || die "no mdev"
gpuctl_load >/dev/null || die "cannot load $GPUCTL_KO"
# with nothing of ours yet: what a load of gpuctl takes with no instance
read -r slab_none slab_none_lo slab_none_hi < <(load_slab)
insmod "$SAMPLES/vgpu_test_parent.ko" fb_mb=$((2048 * 1024)) ||
	die "cannot load vgpu_test_parent"
echo nvidia >"/sys/bus/pci/devices/$CARD/driver_override" ||
	die "cannot set $CARD's driver_override"
echo "$CARD" >/sys/bus/pci/drivers_probe
expect_pci_driver "$CARD" nvidia >/dev/null || die "$CARD is not on nvidia"
monitor_start

declare -A fast=() med=() lat=() per=() ir=() ir_per=()
read_all() {	# N
	local cmd f m

	for cmd in "${READS[@]}"; do
		read -r f m < <(time_calls "$cmd") || die "$cmd"
		fast[$1,$cmd]=$f
		med[$1,$cmd]=$m
	done
	if [ "$1" = 0 ] || [ "$1" = "$MID" ] || [ "$1" = "$BIG" ]; then
		for cmd in "${READS[@]}"; do
			ir[$1,$cmd]=$(instr "$cmd")
		done
	fi
	read -r f m < <(time_calls alloc_vgpus) || die "alloc add vgpu count 8"
	fast[$1,alloc]=$f
	med[$1,alloc]=$m
	lat[$1]=$(event_latency "$1") || die "event latency"
}

read_all 0
for n in $SIZES; do
	grow_to "$n"
	[ "$(instances)" = "$n" ] || die "$(instances) instances, want $n"
	read_all "$n"
done
[ "$(gpuctl -j vgpu show | jq '.vgpus | length')" = "$n" ] ||
	die "gpuctl lists $(gpuctl -j vgpu show | jq '.vgpus | length') instances, not $n"
kill "$MONITOR_PID" 2>/dev/null
MONITOR_PID=
read -r slab_big slab_big_lo slab_big_hi < <(load_slab)

echo "reads (ms, fastest / median of $CALLS calls):"
printf '  %-26s' "instances"
for n in 0 $SIZES; do printf ' %15s' "$n"; done
echo
for cmd in "${READS[@]}" alloc; do
	label=$cmd
	[ "$cmd" = alloc ] && label="alloc add vgpu count 8+del"
	printf '  %-26s' "$label"
	for n in 0 $SIZES; do
		printf ' %15s' "${fast[$n,$cmd]}/${med[$n,$cmd]}"
	done
	echo
done

echo "per instance beyond the bare parent (us, fastest calls):"
for cmd in "${READS[@]}"; do
	printf '  %-26s' "$cmd"
	for n in $SIZES; do
		per[$n,$cmd]=$(awk -v a="${fast[$n,$cmd]}" -v b="${fast[0,$cmd]}" -v n="$n" \
			'BEGIN { printf "%.1f", (a - b) * 1000 / n }')
		printf ' %10s' "${per[$n,$cmd]}"
	done
	echo
done
echo "per instance beyond the bare parent (user-space instructions):"
for cmd in "${READS[@]}"; do
	for n in "$MID" "$BIG"; do
		ir_per[$n,$cmd]=$(awk -v a="${ir[$n,$cmd]}" -v b="${ir[0,$cmd]}" -v n="$n" \
			'BEGIN { printf "%.0f", (a - b) / n }')
	done
	printf '  %-26s %10s at %s, %10s at %s\n' "$cmd" "${ir_per[$MID,$cmd]}" "$MID" \
		"${ir_per[$BIG,$cmd]}" "$BIG"
done
echo "per-instance cost against mdevctl list's, at $BIG:"
for cmd in "${READS[@]}"; do
	[ "$cmd" = "mdevctl list" ] && continue
	printf '  %-26s %s\n' "$cmd" "$(awk -v a="${per[$BIG,$cmd]}" \
		-v b="${per[$BIG,mdevctl list]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
done
echo "event latency, create to monitor line (ms, median of 5):"
for n in 0 $SIZES; do
	printf '  %5s instances %10s\n' "$n" "${lat[$n]}"
done

for cmd in "${READS[@]}"; do
	[ "$cmd" = "gpuctl -j dev show" ] && continue	# lists no instance
	goal "$cmd: per instance at $BIG <= 2 x at $MID (us)" "${per[$BIG,$cmd]}" \
		"$(awk -v a="${per[$MID,$cmd]}" 'BEGIN { print 2 * a }')"
done
for cmd in "${READS[@]}"; do
	[ "$cmd" = "gpuctl -j dev show" ] && continue
	goal "$cmd: instructions per instance at $BIG <= 2 x at $MID" \
		"${ir_per[$BIG,$cmd]}" "$(awk -v a="${ir_per[$MID,$cmd]}" 'BEGIN { print 2 * a }')"
done
goal "event latency at $BIG <= 2 x at $SMALL (ms)" "${lat[$BIG]}" \
	"$(awk -v a="${lat[$SMALL]}" 'BEGIN { print 2 * a }')"
per_slab=$(awk -v a="$slab_big" -v b="$slab_none" -v n="$BIG" \
	'BEGIN { printf "%.0f", (a - b) * 1024 / n }')
echo "slab of a gpuctl load (median of 5, least-most): $slab_none kB" \
	"($slab_none_lo-$slab_none_hi) with no instance, $slab_big kB" \
	"($slab_big_lo-$slab_big_hi) with $BIG"
goal "slab per tracked instance <= 1024 (bytes)" "$per_slab" 1024

# SR-IOV: 64 VFs, each tracked and on vfio-pci through an ids rule, the
# module's parameter so that it holds across load_slab's reloads; the
# slab per VF is that of a load with the rule less one without
echo "sr-iov ($PF, up to $NVFS VFs):"
gpuctl_unload >/dev/null || die "cannot unload gpuctl"
gpuctl_load reserve=1b36:0010 >/dev/null ||
	die "cannot load gpuctl with reserve=1b36:0010"
echo 0 >"/sys/bus/pci/devices/$PF/sriov_drivers_autoprobe"
declare -A vfast=() vir=()
for nvf in 0 8 "$NVFS"; do
	echo 0 >"/sys/bus/pci/devices/$PF/sriov_numvfs"
	if [ "$nvf" -gt 0 ]; then
		echo "$nvf" >"/sys/bus/pci/devices/$PF/sriov_numvfs" ||
			die "cannot enable $nvf VFs"
		wait_for 120 sh -c "[ \$(gpuctl -j dev show | jq '[.devices[] | select(.physfn != null and .driver == \"vfio-pci\")] | length') = $nvf ]" ||
			die "$nvf VFs are not all on vfio-pci"
	fi
	for cmd in "gpuctl -j dev show" "gpuctl export nova" "gpuctl metrics" \
		   "lspci -D -nn -vmm -k"; do
		read -r f _ < <(time_calls "$cmd") || die "$cmd"
		vfast[$nvf,$cmd]=$f
		[ "$nvf" = 8 ] || vir[$nvf,$cmd]=$(instr "$cmd")
	done
done
# the same VFs, tracked through the rule or, without it, not at all
read -r slab_vfs slab_vfs_lo slab_vfs_hi < <(load_slab reserve=1b36:0010)
read -r slab_novf slab_novf_lo slab_novf_hi < <(load_slab)
echo 0 >"/sys/bus/pci/devices/$PF/sriov_numvfs"
for cmd in "gpuctl -j dev show" "gpuctl export nova" "gpuctl metrics" \
	   "lspci -D -nn -vmm -k"; do
	printf '  %-26s %8s ms at 0, %8s at 8, %8s at %d; per VF %s us at 8, %s at %d\n' \
		"$cmd" "${vfast[0,$cmd]}" "${vfast[8,$cmd]}" "${vfast[$NVFS,$cmd]}" "$NVFS" \
		"$(awk -v a="${vfast[8,$cmd]}" -v b="${vfast[0,$cmd]}" 'BEGIN { printf "%.1f", (a - b) * 1000 / 8 }')" \
		"$(awk -v a="${vfast[$NVFS,$cmd]}" -v b="${vfast[0,$cmd]}" -v n="$NVFS" 'BEGIN { printf "%.1f", (a - b) * 1000 / n }')" \
		"$NVFS"
done
for cmd in "gpuctl -j dev show" "gpuctl export nova" "gpuctl metrics" \
	   "lspci -D -nn -vmm -k"; do
	printf '  %-26s %s user-space instructions per VF\n' "$cmd" \
		"$(awk -v a="${vir[$NVFS,$cmd]}" -v b="${vir[0,$cmd]}" -v n="$NVFS" \
			'BEGIN { printf "%.0f", (a - b) / n }')"
done
echo "slab of a gpuctl load with $BIG instances and $NVFS VFs (median of 5," \
	"least-most): $slab_novf kB ($slab_novf_lo-$slab_novf_hi) with no rule," \
	"$slab_vfs kB ($slab_vfs_lo-$slab_vfs_hi) with the VFs tracked"
echo "slab per tracked VF: $(awk -v a="$slab_vfs" -v b="$slab_novf" -v n="$NVFS" \
	'BEGIN { printf "%.0f", (a - b) * 1024 / n }') bytes"
gpuctl_unload
exit 0
