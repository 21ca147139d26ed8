#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side driver: runs every selftest meant for TOPOLOGY and prints KTAP.
# Usage: selftests/run_tests.sh TOPOLOGY
# GPUCTL_TESTS="inventory test_tool.sh ..." runs only the programs named.
# GPUCTL_PROG_TIMEOUT=SECONDS overrides the per-program timeout of
# selftests/settings (make check-debug: its kernel is many times slower).
# GPUCTL_KMEMLEAK=1 (make check-debug; needs a kernel with kmemleak) takes
# a baseline of the boot's leak suspects, then scans after every program
# and fails the program that leaked, printing kmemleak's report.
#
# Output: one top-level line per step or program ("ok N name",
# "not ok N name", "ok N name # SKIP reason"); each program's own TAP is
# nested under it, indented by four spaces. Counting the indented result
# lines gives the individual test cases; a program with none of its own
# counts as one. Exits 1 when anything failed.

set -u

dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/.." && pwd)
topo=${1:-${GPUCTL_TOPOLOGY:-}}
bin=$dir/bin
ko=${GPUCTL_KO:-$top/build/$(uname -r)/gpuctl.ko}
export GPUCTL_KO=$ko
export PATH=$bin:$top/tools/gpuctl:$PATH

if [ -z "$topo" ]; then
	echo "usage: $0 TOPOLOGY" >&2
	exit 1
fi

# C programs and the topologies they run on; lifecycle unloads the module,
# so it goes last.
c_tests_early="inventory:full,noiommu errors:full,noiommu events:full,noiommu
	dump_race:full,noiommu hotplug:full,noiommu reserve:full,noiommu alloc:full
	alloc_stress:full"
c_tests_late="lifecycle:full,noiommu"

prog_timeout=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
prog_timeout=${GPUCTL_PROG_TIMEOUT:-${prog_timeout:-300}}
kmemleak=/sys/kernel/debug/kmemleak

n=0 failed=0 passed=0 skipped=0
tmp=$(mktemp -d /tmp/gpuctl-selftests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

result() {	# result ok|fail|skip NAME [REASON]
	n=$((n + 1))
	case $1 in
	ok) passed=$((passed + 1)); echo "ok $n $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok $n $2 # SKIP ${3:-}" ;;
	*) failed=$((failed + 1)); echo "not ok $n $2${3:+ # $3}" ;;
	esac
}

wanted() {	# wanted NAME: not filtered out by GPUCTL_TESTS
	[ -z "${GPUCTL_TESTS:-}" ] || listed "$GPUCTL_TESTS" "$1"
}

selected() {	# selected NAME:TOPOLOGIES, for this topology and not filtered
	listed "${1#*:}" "$topo" && wanted "${1%%:*}"
}

listed() {	# listed "a,b c" TOPOLOGY
	case " ${1//,/ } " in
	*" $2 "*) return 0 ;;
	*) return 1 ;;
	esac
}

# Every option of the config fragment must be built in or modular in the
# running kernel (the host's /boot is the guest's, shared read-only).
check_config() {
	local kconfig line opt missing=
	kconfig=/boot/config-$(uname -r)
	if [ ! -r "$kconfig" ]; then
		echo "# $kconfig not readable"
		return 1
	fi
	while read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		opt=${line%%=*}
		grep -qE "^$opt=(y|m)$" "$kconfig" || missing="$missing $opt"
	done < "$dir/config"
	if [ -n "$missing" ]; then
		echo "# $kconfig lacks:$missing"
		return 1
	fi
}

load_module() {
	[ -d /sys/module/gpuctl ] && return 0
	if [ ! -f "$ko" ]; then
		echo "# $ko missing (make modules-all)"
		return 1
	fi
	# insmod does not load dependencies (vfio-pci-core, vfio).
	# shellcheck disable=SC2046 # one word per module
	modprobe -a $(modinfo -F depends "$ko" | tr , ' ') || return 1
	echo "# insmod $ko dyndbg=+p"
	insmod "$ko" dyndbg=+p
}

# kmemleak_scan FILE: the suspects kmemleak reports now, in FILE (empty
# when none), then forgotten, so that the next scan shows only new ones. An
# object becomes a suspect only in a scan that starts at least 5 s after its
# allocation (MSECS_MIN_AGE) and finds it unreferenced with the same
# checksum as the scan before, hence the pause and the two scans.
kmemleak_scan() {
	sleep 5
	echo scan >"$kmemleak" && echo scan >"$kmemleak" &&
		cat "$kmemleak" >"$1" && echo clear >"$kmemleak"
}

# The leaks the kernel had before the first program are not the tests':
# they are shown and cleared. The mark tells selftests/qemu/run.sh, which
# fails on kmemleak's reports in the kernel log, where the tests' part of
# the log begins.
kmemleak_baseline() {
	local n
	if [ ! -w "$kmemleak" ]; then
		echo "# GPUCTL_KMEMLEAK=1, but $kmemleak is missing: no kmemleak in $(uname -r)?"
		return 1
	fi
	kmemleak_scan "$tmp/leaks" || return 1
	n=$(grep -c '^unreferenced object' "$tmp/leaks")
	echo "# kmemleak: $n suspects from the boot, before any test, cleared"
	sed 's/^/# /' "$tmp/leaks" | head -n 200
	echo "gpuctl-selftests: kmemleak baseline taken" >/dev/kmsg
}

# run_prog NAME CMD...: one program, its TAP nested under one result line.
run_prog() {
	local name=$1 log=$tmp/out rc start leaks=
	shift
	start=$(date +%s)
	timeout -k 10 "$prog_timeout" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	sed 's/^/    /' "$log"
	echo "# $name: exit $rc in $(($(date +%s) - start)) s"
	if [ "${GPUCTL_KMEMLEAK:-0}" = 1 ]; then
		if ! kmemleak_scan "$tmp/leaks"; then
			leaks="kmemleak scan failed"
		elif [ -s "$tmp/leaks" ]; then
			leaks="kmemleak: $(grep -c '^unreferenced object' "$tmp/leaks") leaks"
			sed 's/^/# /' "$tmp/leaks"
		fi
	fi
	if [ -n "$leaks" ]; then
		[ "$rc" = 124 ] && leaks="TIMEOUT, $leaks"
		result fail "$name" "$leaks"
		return
	fi
	case $rc in
	0) result ok "$name" ;;
	4) result skip "$name" "$(grep -m1 -o 'SKIP.*' "$log" | sed 's/^SKIP *//')" ;;
	124) result fail "$name" TIMEOUT ;;
	*) result fail "$name" ;;
	esac
}

# The "# topology: a b" line among a shell test's first lines.
shell_topologies() {
	sed -n '1,10{s/^# topology: *//p}' "$1" | head -n1
}

plan=2
[ "${GPUCTL_KMEMLEAK:-0}" = 1 ] && plan=$((plan + 1))
for t in $c_tests_early $c_tests_late; do
	if selected "$t"; then
		plan=$((plan + 1))
	fi
done
# Shell tests that change the topology for the rest of the boot go last:
# test_golden.sh removes and rescans the HDA 07:00.1, which comes back in
# an IOMMU group of its own, no longer its GPU's companion.
shell_late="test_golden.sh"
shell_tests=
late_tests=
for f in "$dir"/test_*.sh; do
	if [ ! -f "$f" ] || ! wanted "$(basename "$f")"; then
		continue
	fi
	if listed "$shell_late" "$(basename "$f")"; then
		late_tests="$late_tests $f"
	else
		shell_tests="$shell_tests $f"
	fi
	plan=$((plan + 1))
done
shell_tests="$shell_tests$late_tests"

echo "TAP version 13"
echo "# gpuctl selftests: kernel $(uname -r), topology $topo"
echo "1..$plan"

if check_config >"$tmp/config" 2>&1; then
	result ok "kernel config has every option of selftests/config"
else
	cat "$tmp/config"
	result fail "kernel config has every option of selftests/config"
fi

if [ "${GPUCTL_KMEMLEAK:-0}" = 1 ]; then
	if kmemleak_baseline >"$tmp/baseline" 2>&1; then
		cat "$tmp/baseline"
		result ok "kmemleak baseline taken"
	else
		cat "$tmp/baseline"
		result fail "kmemleak baseline taken"
	fi
fi

if load_module >"$tmp/load" 2>&1; then
	cat "$tmp/load"
	result ok "module loaded"
else
	sed 's/^/# /' "$tmp/load"
	result fail "module loaded"
fi

for t in $c_tests_early; do
	selected "$t" || continue
	name=${t%%:*}
	if [ -x "$bin/$name" ]; then
		run_prog "$name" "$bin/$name"
	else
		result fail "$name" "not built (make -C selftests)"
	fi
done

for f in $shell_tests; do
	name=$(basename "$f")
	topos=$(shell_topologies "$f")
	if [ -z "$topos" ]; then
		result skip "$name" "no '# topology:' line"
	elif ! listed "$topos" "$topo"; then
		result skip "$name" "not for topology $topo"
	else
		load_module >/dev/null 2>&1
		run_prog "$name" bash "$f"
	fi
done

for t in $c_tests_late; do
	selected "$t" || continue
	name=${t%%:*}
	load_module >/dev/null 2>&1
	run_prog "$name" "$bin/$name"
done

echo "# Totals: pass:$passed fail:$failed skip:$skipped"
[ "$failed" -eq 0 ]
