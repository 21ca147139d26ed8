#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpuctl benchmark, run in the guest by `make bench`
# (selftests/qemu/run.sh --kernel REL --topology full -- selftests/bench/run.sh).
#
# Times N calls of
#   (a) gpuctl -j dev show
#   (b) one dev-get dump by a minimal netlink client
#   (c) the sysfs walk that gathers the same facts: lspci -D -nn -vmm -k
#       plus iommu_group and numa_node of every device
# and prints the mean per call and the ratios a/c and b/c, and what
# gpuctl -j dev show and lspci each cost beyond their start-up (with address
# space randomisation, and without it for both), all from one run, so that
# the host's speed cancels out. Also the module's memory, and
# what an allocation costs: alloc-new count 1 + alloc-del round trips
# against dev-get do round trips, with 1 client and with 8 concurrent
# clients (selftests/bench/alloc_bench.c). And what gpuctl adds to making
# a vGPU: "gpuctl vgpu add" + "vgpu del", and "gpuctl alloc add ... vgpu
# TYPE" + "alloc del", each against the bare sysfs create + remove of the
# same instance (the kernel's sample mtty driver). And the same for a
# vendor VF's type: "gpuctl vgpu set" and an allocation by type, against
# writing current_vgpu_type by hand (selftests/modules/vgpu_test_vf.c).
# A benchmark, not a test: it never fails on numbers, only when a step
# cannot run at all.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/../lib.sh"

N=${GPUCTL_BENCH_N:-20}

now_ns() {
	date +%s%N
}

# bench NAME CMD...: mean ms per call of CMD over N calls, on stdout
bench() {
	local name=$1 t0 t1 i

	shift
	"$@" >/dev/null || { echo "bench: $name failed: $*" >&2; return 1; }
	t0=$(now_ns)
	for ((i = 0; i < N; i++)); do
		"$@" >/dev/null
	done
	t1=$(now_ns)
	awk -v ns=$((t1 - t0)) -v n="$N" 'BEGIN { printf "%.3f\n", ns / n / 1e6 }'
}

# shellcheck disable=SC2317 # called through bench()
sysfs_walk() {
	lspci -D -nn -vmm -k
	readlink /sys/bus/pci/devices/*/iommu_group
	cat /sys/bus/pci/devices/*/numa_node
}

slab_kb() {	# total slab memory in kB
	awk '/^Slab:/ { print $2 }' /proc/meminfo
}

ratio() {	# A B
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}

# What each tool spends beyond its own start-up, so that neither's exec
# and dynamic linking (which differ by what they link, not by the work)
# hides the other's: gpuctl -j dev show less gpuctl -V, against lspci -D
# -nn -vmm -k less lspci --version, and the same for gpuctl export
# cloudstack. Names are the bulk of lspci's: it parses pci.ids, gpuctl
# walks udev's hwdb. A difference of two short times is easily swamped by
# the host's load, which comes in bursts, so the five commands take turns
# call by call (a burst hits all of them alike), each call is timed alone
# by the shell's clock (no fork), and each command's median and fastest
# call are kept: the ratios of the medians, and of the fastest calls.
# The five in this order (j a m k l), here and for the instruction counts.
CALLS=${GPUCTL_BENCH_CALLS:-60}
STARTUP_CMDS=("gpuctl -V" "gpuctl -j dev show" "gpuctl export cloudstack"
	      "lspci --version" "lspci -D -nn -vmm -k")

# per_call: "CMD<TAB>us" for CALLS calls of each STARTUP_CMDS, in turns
per_call() {
	local cmd t0 t1 i

	for ((i = 0; i < CALLS; i++)); do
		for cmd in "${STARTUP_CMDS[@]}"; do
			t0=$EPOCHREALTIME
			# shellcheck disable=SC2086 # the words of the command
			$cmd >/dev/null || { echo "bench: $cmd failed" >&2; return 1; }
			t1=$EPOCHREALTIME
			# $EPOCHREALTIME less its decimal point: microseconds
			printf '%s\t%d\n' "$cmd" $((10#${t1/[.,]/} - 10#${t0/[.,]/}))
		done
	done
}

startup_compare() {	# LABEL
	local out

	out=$(mktemp)
	per_call >"$out" || { rm -f "$out"; return 1; }
	echo "# beyond start-up, $1 ($CALLS calls of each, in turns; ms)"
	awk -F '\t' -v label="$1" '
	!($1 in n) { c[++m] = $1 }	# the commands, in STARTUP_CMDS order
	{ n[$1]++; t[$1, n[$1]] = $2 / 1000 }
	function sorted(c,    i, j, x) {	# t[c, 1..n] in order
		for (i = 2; i <= n[c]; i++)
			for (j = i; j > 1 && t[c, j - 1] > t[c, j]; j--) {
				x = t[c, j]; t[c, j] = t[c, j - 1]; t[c, j - 1] = x
			}
	}
	function med(c,    h) {
		h = int(n[c] / 2)
		return n[c] % 2 ? t[c, h + 1] : (t[c, h] + t[c, h + 1]) / 2
	}
	function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "n/a" }
	END {
		split("j a m k l", tag, " ")
		printf "%-44s %10s %10s\n", "", "median", "fastest"
		for (i = 1; i <= 5; i++) {
			sorted(c[i]); md[i] = med(c[i]); mn[i] = t[c[i], 1]
			printf "%-44s %10.3f %10.3f\n", "(" tag[i] ") " c[i], md[i], mn[i]
		}
		printf "%-44s %10.3f %10.3f\n", "gpuctl -j dev show beyond start-up (a-j)",
			md[2] - md[1], mn[2] - mn[1]
		printf "%-44s %10.3f %10.3f\n", "export cloudstack beyond start-up (m-j)",
			md[3] - md[1], mn[3] - mn[1]
		printf "%-44s %10.3f %10.3f\n", "lspci beyond start-up (l-k)",
			md[5] - md[4], mn[5] - mn[4]
		print "ratio (l-k)/(a-j), " label ": " ratio(md[5] - md[4], md[2] - md[1]) \
			" (medians), " ratio(mn[5] - mn[4], mn[2] - mn[1]) " (fastest)"
		print "ratio (l-k)/(m-j), " label ": " ratio(md[5] - md[4], md[3] - md[1]) \
			" (medians), " ratio(mn[5] - mn[4], mn[3] - mn[1]) " (fastest)"
	}' "$out"
	rm -f "$out"
}
if [ "${1:-}" = --startup-compare ]; then
	startup_compare "$2"
	exit
fi
echo "# gpuctl bench: kernel $(uname -r), $N calls each"
slab0=$(slab_kb)
gpuctl_load || { echo "bench: cannot load $GPUCTL_KO" >&2; exit 1; }
slab1=$(slab_kb)
ndev=$(gpuctl -j dev show | jq '.devices | length')
npci=$(find /sys/bus/pci/devices/ -mindepth 1 -maxdepth 1 | wc -l)
echo "# $ndev tracked devices of $npci PCI functions"

# The netlink client: the C helper when the selftests are built; else the
# tool's text output stands in, and the report says so (the YNL CLI spends
# its time starting Python, which would hide the kernel's share).
if [ -x "$GPUCTL_ROOT/selftests/bin/gpuctl-nl" ]; then
	client="gpuctl-nl dev-dump"
	dump_cmd=("$GPUCTL_ROOT/selftests/bin/gpuctl-nl" dev-dump)
else
	client="gpuctl dev show (gpuctl-nl not built)"
	dump_cmd=(gpuctl dev show)
fi
a=$(bench "gpuctl -j dev show" gpuctl -j dev show) || exit 1
b=$(bench "$client" "${dump_cmd[@]}") || exit 1
c=$(bench "sysfs walk" sysfs_walk) || exit 1

printf '%-44s %10s\n' "operation" "ms/call"
printf '%-44s %10s\n' "(a) gpuctl -j dev show" "$a"
printf '%-44s %10s\n' "(b) $client" "$b"
printf '%-44s %10s\n' "(c) lspci -D -nn -vmm -k + iommu_group/numa" "$c"
echo "ratio a/c: $(ratio "$a" "$c")"
echo "ratio b/c: $(ratio "$b" "$c")"

startup_compare "address space randomised" || exit 1
# QEMU 7.2's TCG finds an x86 translation by its virtual address, so under
# address space randomisation each new process has every block of code it
# runs translated again: the time of a short command in this guest grows
# with how much distinct code it runs, not with how much work it does,
# unlike on a real CPU. With randomisation off (setarch -R, inherited by
# both tools alike) translations carry over from call to call.
setarch "$(uname -m)" -R "$0" --startup-compare \
	"randomisation off (setarch -R)" || exit 1

# The same five as instructions (valgrind's callgrind, one call each):
# a count that does not move with the host's load, where TCG's timing
# does. Instructions are not time (a system call or a page fault costs
# more than its count says, and under TCG a block of code run for the
# first time in a randomised process costs far more than its count), so
# the times above stay the measure; this says how much of a difference is
# the work itself.
instr() {	# CMD...: instructions the command ran, user space only
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
if command -v valgrind >/dev/null; then
	declare -A ir=()
	for cmd in "${STARTUP_CMDS[@]}"; do
		# shellcheck disable=SC2086 # the words of the command
		ir[$cmd]=$(instr $cmd)
		printf '%-44s %10s instructions\n' "$cmd" "${ir[$cmd]}"
	done
	awk -v j="${ir[gpuctl -V]}" -v a="${ir[gpuctl -j dev show]}" \
	    -v m="${ir[gpuctl export cloudstack]}" -v k="${ir[lspci --version]}" \
	    -v l="${ir[lspci -D -nn -vmm -k]}" 'BEGIN {
		printf "instructions beyond start-up: dev show %d, export cloudstack %d, lspci %d\n", a - j, m - j, l - k
		printf "instruction ratio (l-k)/(a-j): %.1f\n", (l - k) / (a - j)
		printf "instruction ratio (l-k)/(m-j): %.1f\n", (l - k) / (m - j)
	}'
else
	echo "# valgrind not installed: no instruction counts"
fi

# The GPUs of topology "full" the selftests reserve and release: the
# bochs and driverless stand-ins. Not qxl: its driver oopses in
# qxl_irq_handler when it probes the device again after a take (6.12).
# With 5 GPUs for 8 clients some alloc-new calls find none free; the
# helper counts them.
ALLOC_GPUS=${GPUCTL_BENCH_GPUS:-0000:01:00.0 0000:02:00.0 0000:05:00.0 \
0000:07:00.0 0000:81:00.0}
echo "allocation:"
if [ -x "$GPUCTL_ROOT/selftests/bin/alloc_bench" ]; then
	out=$(mktemp)
	# shellcheck disable=SC2086 # one word per address
	"$GPUCTL_ROOT/selftests/bin/alloc_bench" -n "${GPUCTL_BENCH_ROUNDS:-200}" \
		-c 8 $ALLOC_GPUS >"$out" 2>&1 || echo "alloc_bench failed" >>"$out"
	sed 's/^/  /' "$out"
	rm -f "$out"
else
	echo "  skipped: selftests/bin/alloc_bench not built (make -C selftests)"
fi

# vGPUs: the tool's create + delete, and an allocation that makes its
# instance + its deletion, against writing the mdev core's files by hand.
MTTY_KO=$GPUCTL_ROOT/build/$(uname -r)/mdev/mtty.ko
BU=8e2f0c10-0000-4000-8000-0000000000e1
BVM=4c1e5a20-0000-4000-8000-0000000000e1
MTTY1=/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-1

# shellcheck disable=SC2317 # called through bench()
vgpu_sysfs() {
	echo "$BU" >"$MTTY1/create" && echo 1 >"/sys/bus/mdev/devices/$BU/remove"
}

# shellcheck disable=SC2317 # called through bench()
vgpu_tool() {
	gpuctl vgpu add mtty type mtty-1 uuid "$BU" && gpuctl vgpu del "$BU"
}

# An allocation that makes (or types) one vGPU of TYPE, then its deletion
# shellcheck disable=SC2317 # called through bench()
vgpu_alloc() {	# TYPE
	local out id

	out=$(gpuctl alloc add owner "$BVM" vgpu "$1") || return 1
	id=${out#alloc }
	gpuctl alloc del "${id%% *}"
}

echo "vgpu:"
if [ -f "$MTTY_KO" ] && modprobe -a vfio_iommu_type1 mdev && insmod "$MTTY_KO"; then
	d=$(bench "sysfs create + remove" vgpu_sysfs) || exit 1
	e=$(bench "gpuctl vgpu add + del" vgpu_tool) || exit 1
	f=$(bench "gpuctl alloc add vgpu + alloc del" vgpu_alloc mtty-1) || exit 1
	printf '  %-42s %10s\n' "(d) sysfs create + remove (mtty-1)" "$d"
	printf '  %-42s %10s\n' "(e) gpuctl vgpu add + vgpu del" "$e"
	printf '  %-42s %10s\n' "(f) gpuctl alloc add ... vgpu + alloc del" "$f"
	echo "  ratio e/d: $(ratio "$e" "$d")"
	echo "  ratio f/d: $(ratio "$f" "$d")"
	rmmod mtty
else
	echo "  skipped: no $MTTY_KO (scripts/build-mdev-samples.sh)"
fi

# Vendor VFs: the tool's type set + clear, and an allocation that types
# its VF + its deletion, against writing current_vgpu_type by hand.
SAMPLES=$GPUCTL_ROOT/build/$(uname -r)/mdev
BVF=0000:11:00.1

# shellcheck disable=SC2317 # called through bench()
vf_sysfs() {
	local f=/sys/bus/pci/devices/$BVF/nvidia/current_vgpu_type

	echo 1156 >"$f" && echo 0 >"$f"
}

# shellcheck disable=SC2317 # called through bench()
vf_tool() {
	gpuctl vgpu set "$BVF" type 1156 && gpuctl vgpu set "$BVF" type none
}


echo "vendor VF:"
if vendor_vf_rig_start >/dev/null && gpuctl reserve add "$BVF" driver nvidia >/dev/null &&
   echo 1 >"/sys/bus/pci/devices/$VVF_PF/sriov_numvfs" &&
   expect_pci_driver "$BVF" nvidia 10 >/dev/null; then
	g=$(bench "sysfs type set + clear" vf_sysfs) || exit 1
	h=$(bench "gpuctl vgpu set type + none" vf_tool) || exit 1
	i=$(bench "gpuctl alloc add vgpu ID + alloc del" vgpu_alloc 1156) || exit 1
	printf '  %-42s %10s\n' "(g) sysfs current_vgpu_type 1156, then 0" "$g"
	printf '  %-42s %10s\n' "(h) gpuctl vgpu set VF type 1156 + none" "$h"
	printf '  %-42s %10s\n' "(i) gpuctl alloc add ... vgpu 1156 + del" "$i"
	echo "  ratio h/g: $(ratio "$h" "$g")"
	echo "  ratio i/g: $(ratio "$i" "$g")"
	gpuctl reserve del "$BVF" >/dev/null
	vendor_vf_rig_stop
else
	echo "  skipped: no vendor VF rig ($SAMPLES/vgpu_test_vf.ko)"
fi

echo "memory:"
echo "  module size (/proc/modules): $(awk '$1 == "gpuctl" { print $2 }' /proc/modules) bytes"
if [ -r /sys/module/gpuctl/coresize ]; then
	echo "  coresize: $(cat /sys/module/gpuctl/coresize) bytes"
fi
# Slab moves for many reasons; with nothing else running in the guest the
# delta across insmod is a rough upper bound of the inventory's memory.
echo "  slab delta across insmod: $((slab1 - slab0)) kB"
gpuctl_unload
exit 0
