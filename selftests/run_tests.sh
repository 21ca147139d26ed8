#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side driver: runs every selftest meant for TOPOLOGY and prints KTAP.
# Usage: selftests/run_tests.sh TOPOLOGY
# GPUCTL_TESTS="inventory test_tool.sh ..." runs only the programs named.
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
# so it goes last. The stress_* programs race for GPUCTL_STRESS_SECONDS
# each and leave the topology as they found it.
c_tests_early="inventory:full,noiommu errors:full,noiommu events:full,noiommu
	dump_race:full,noiommu hotplug:full,noiommu reserve:full,noiommu alloc:full
	alloc_stress:full stress_rmmod:full stress_open:full stress_rule:full
	stress_dump:full"
c_tests_late="lifecycle:full,noiommu"

prog_timeout=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
prog_timeout=${prog_timeout:-300}

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

# run_prog NAME CMD...: one program, its TAP nested under one result line.
run_prog() {
	local name=$1 log=$tmp/out rc start
	shift
	start=$(date +%s)
	timeout -k 10 "$prog_timeout" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	sed 's/^/    /' "$log"
	echo "# $name: exit $rc in $(($(date +%s) - start)) s"
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
