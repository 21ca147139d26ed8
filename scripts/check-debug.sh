#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the whole guest suite on a debug kernel (KASAN, lockdep,
# kmemleak, might_sleep and debug objects), the gate before a kernel-side
# change is called done. Installs what it needs, builds the kernel once
# (scripts/debug-kernel.sh; cached under /var/cache/gpuctl), builds gpuctl.ko
# against it, then boots it in QEMU on each topology and runs
# selftests/run_tests.sh with a kmemleak scan after every program
# (GPUCTL_KMEMLEAK=1). Any kernel report in the log fails the run
# (selftests/qemu/run.sh), and the report is printed. Prints KTAP and ends
# with one line "N passed, N failed, N skipped".
#
# Settings (environment):
#   GPUCTL_TOPOLOGIES      default "full noiommu"
#   GPUCTL_TESTS           only the programs named (selftests/run_tests.sh)
#   GPUCTL_DEBUG_TIMEOUT   seconds for one topology's whole run, default
#                          28800 (the fuzzer alone takes about 2.5 h)
#   GPUCTL_PROG_TIMEOUT    seconds for one program, default 3600
#   GPUCTL_FUZZ_MESSAGES   messages the fuzzer sends, default 1000000
#   GPUCTL_STRESS_SECONDS  how long each stress program loops, default 60
#   GPUCTL_JOBS            guests running at once, default 1
#   GPUCTL_DEBUG_FRESH=1   run every guest again, keep no earlier pass
#
# The three guests (the fuzzer, the rest of the full topology, noiommu)
# take hours together on a small machine. A guest that passed is kept:
# build/check-debug/NAME.key holds a hash of everything it ran (the debug
# kernel, the module, tool and selftest sources, the scripts and the
# settings), and a later run with the same hash reports that guest's kept
# log instead of booting it again, saying so and when it ran. A failed
# guest, or any change to what it ran, boots it again.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/check-debug
mkdir -p "$out"

scripts/install-deps.sh debug || exit 1

topologies=${GPUCTL_TOPOLOGIES:-full noiommu}
# Under TCG this kernel runs the suite several times slower than a stock
# one (KASAN checks every access, lockdep every lock, kmemleak scans after
# every program), hence the long timeouts.
timeout=${GPUCTL_DEBUG_TIMEOUT:-28800}
export GPUCTL_PROG_TIMEOUT=${GPUCTL_PROG_TIMEOUT:-3600}
export GPUCTL_KMEMLEAK=1
export GPUCTL_FUZZ_MESSAGES=${GPUCTL_FUZZ_MESSAGES:-1000000}
# The fuzzer sent 117 messages/s on this kernel (2026-12-03): 10^6 take
# about 2.4 h; its timeout allows 50 a second.
export GPUCTL_FUZZ_TIMEOUT=${GPUCTL_FUZZ_TIMEOUT:-$((GPUCTL_FUZZ_MESSAGES / 50 + 600))}
export GPUCTL_STRESS_SECONDS=${GPUCTL_STRESS_SECONDS:-60}

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh

finish() {
	failures_print
	echo "1..$n"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
	exit
}

# Each report in a console log, from its first line, so that the report
# itself is read, not only run.sh's one-line summary of it.
print_reports() {	# CONSOLE_LOG
	awk '
	/cut here|====================|BUG:|WARNING:|kmemleak: .*suspected|Oops/ && !left {
		left = 60; reports++
		if (reports > 10) exit
	}
	left > 0 { print "# " $0; left-- }' "$1"
}

echo "TAP version 13"
echo "# gpuctl make check-debug: topologies: $topologies"

start=$SECONDS
if kdir=$(scripts/debug-kernel.sh 2>"$out/kernel.log"); then
	rel=$(cat "$kdir/release")
	took=$((SECONDS - start))
	if grep -q 'built in' "$out/kernel.log"; then
		echo "# debug kernel $rel built in $took s: $kdir"
	else
		echo "# debug kernel $rel cached ($took s): $kdir"
	fi
	result ok "debug kernel built"
else
	sed 's/^/# /' "$out/kernel.log"
	result fail "debug kernel built"
	finish
fi

make -s ksrc >"$out/ksrc.log" 2>&1 || { cat "$out/ksrc.log"; exit 1; }
build() {	# build DESCRIPTION LOG CMD...: a step that stops the run when it fails
	step "$@" || finish
}
build "module builds for $rel" "$out/module.log" \
	env KDIR="$kdir/linux" scripts/build-module.sh "$rel"
build "sample mdev drivers build for $rel" "$out/mdev.log" \
	env KDIR="$kdir/linux" scripts/build-mdev-samples.sh "$rel"
build "tool builds" "$out/tools.log" make -s tools
build "selftests build" "$out/selftests.log" make -s selftests

# What a guest's result depends on, besides its own settings: the debug
# kernel (its cache key), every tracked file the module, the tool and the
# suite are built or run from, and the settings exported above. Empty
# outside a git checkout: then nothing is kept.
inputs_key() {
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 0
	{
		basename "$kdir"
		git ls-files -z -- Makefile Kbuild kmod include tools selftests \
			scripts Documentation/netlink | xargs -0 sha256sum
		env | sort | grep -E \
			'^GPUCTL_(PROG_TIMEOUT|KMEMLEAK|FUZZ_\w*|STRESS_\w*|(SKIP_)?TESTS)='
	} | sha256sum | cut -c1-16
}
inputs=$(inputs_key)

# kept NAME [VAR=VALUE...]: true when guest NAME passed before with the
# same inputs and settings.
kept() {
	local name=$1

	shift
	[ -z "${GPUCTL_DEBUG_FRESH:-}" ] && [ -n "$inputs" ] &&
		[ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ] &&
		[ "$(cat "$out/$name.key" 2>/dev/null)" = "$inputs $*" ]
}

# run_guest NAME TOPOLOGY [VAR=VALUE...]: one boot of the debug kernel
# running the guest suite with those settings; leaves $out/NAME.log, .err,
# .console, .rc (exit status) and .secs.
run_guest() {
	local name=$1 t=$2 s=$SECONDS

	shift 2
	rm -f "$out/$name.rc" "$out/$name.key"
	selftests/qemu/run.sh --kernel "$rel" --kernel-root "$kdir/root" \
		--topology "$t" --timeout "$timeout" --boot-timeout 900 \
		--keep-log "$out/$name.console" \
		-- env "$@" selftests/run_tests.sh "$t" \
		>"$out/$name.log" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
	echo $((SECONDS - s)) >"$out/$name.secs"
	echo "$inputs $*" >"$out/$name.key"
}

# The fuzzer's 10^6 messages take longer than the rest of the full
# topology's suite, so it gets a guest of its own, started first. With
# GPUCTL_JOBS=2 the fuzzer's guest runs next to the others, which pays only
# with more than this machine's two cores (see scripts/check.sh).
guests=()
for t in $topologies; do
	if [ "$t" = full ] && [ -z "${GPUCTL_TESTS:-}" ]; then
		guests+=("fuzz full GPUCTL_TESTS=fuzz" "full full GPUCTL_SKIP_TESTS=fuzz")
	else
		guests+=("$t $t")
	fi
done
jobs=${GPUCTL_JOBS:-1}
declare -A kept_at=()
for g in "${guests[@]}"; do
	# shellcheck disable=SC2086 # NAME TOPOLOGY [VAR=VALUE]
	set -- $g
	if kept "$1" "${@:3}"; then
		kept_at[$1]=$(date -r "$out/$1.rc" '+%F %T')
		echo "# $rel $1: passed at ${kept_at[$1]} with these inputs ($inputs), kept"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	echo "# $rel $2: booting for $1${3:+ ($3)}"
	run_guest "$@" &
done
wait

for g in "${guests[@]}"; do
	# shellcheck disable=SC2086
	set -- $g
	log=$out/$1.log
	rc=$(cat "$out/$1.rc" 2>/dev/null || echo 1)
	sed 's/^/    /' "$log"
	read -r p f s _ < <(scripts/ktap-count.sh "$log")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "# $rel $1: $p passed, $f failed, $s skipped in $(cat "$out/$1.secs") s"
	if [ "$rc" -eq 0 ]; then
		result ok "$rel $1: guest ran the suite, kernel log clean${kept_at[$1]:+ (kept from ${kept_at[$1]})}"
	else
		sed 's/^/# /' "$out/$1.err" | tail -n 30
		print_reports "$out/$1.console"
		result fail "$rel $1: guest run (exit $rc; console log $out/$1.console)"
	fi
done

finish
