#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side driver: runs every selftest meant for TOPOLOGY and prints KTAP.
# Usage: selftests/run_tests.sh [--no-load | --minimum | --programs] TOPOLOGY
#        selftests/run_tests.sh --audit
# GPUCTL_TESTS="inventory test_tool.sh ..." runs only the programs named;
# GPUCTL_SKIP_TESTS="fuzz" runs all but those (make check-debug runs the
# fuzzer in a guest of its own).
# GPUCTL_FUZZ_TIMEOUT=SECONDS is the fuzzer's timeout instead of the
# per-program one (make check-debug: 10^6 messages take hours there).
# GPUCTL_PROG_TIMEOUT=SECONDS overrides the per-program timeout of
# selftests/settings (make check-debug: its kernel is many times slower).
# GPUCTL_KMEMLEAK=1 (make check-debug; needs a kernel with kmemleak) takes
# a baseline of the boot's leak suspects, then scans after every program
# and fails the program that leaked, printing kmemleak's report.
# --no-load (or GPUCTL_SKIP_LOAD=1) never loads the module, with GPUCTL_KO
# pointing nowhere: every program must then fail, which shows the tests
# cannot pass without gpuctl. --minimum runs nothing and prints the least
# number of results a run on TOPOLOGY must report (make check counts what
# a guest that died did not report as failed); --programs prints how many
# programs run on TOPOLOGY. --audit (on the host, no topology) checks that
# every program of the tree runs on a topology of make check or is listed
# in "elsewhere" below with the reason, and prints KTAP.
#
# Output: one top-level line per step or program ("ok N name",
# "not ok N name # why"); each program's own TAP is nested under it,
# indented by four spaces. Counting the indented result lines gives the
# individual test cases. A program fails when it exits non-zero, times
# out, reports fewer results than its plan or than its minimum below, or
# skips every case; each result it did not report is added as a nested
# "not ok", so that the cases it lost count as failed. Exits 1 when
# anything failed.

set -u

dir=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$dir/.." && pwd)
minimum_only=0 programs_only=0 audit=0
case ${1:-} in
--no-load) export GPUCTL_SKIP_LOAD=1; shift ;;
--minimum) minimum_only=1; shift ;;
--programs) programs_only=1; shift ;;
--audit) audit=1; shift ;;
esac
topo=${1:-${GPUCTL_TOPOLOGY:-}}
bin=$dir/bin
if [ "${GPUCTL_SKIP_LOAD:-0}" = 1 ]; then
	# lifecycle and test_lifecycle.sh insmod the module themselves
	GPUCTL_KO=/nonexistent/gpuctl.ko
fi
ko=${GPUCTL_KO:-$top/build/$(uname -r)/gpuctl.ko}
export GPUCTL_KO=$ko
export PATH=$bin:$top/tools/gpuctl:$PATH

if [ -z "$topo" ] && [ "$audit" = 0 ]; then
	echo "usage: $0 [--no-load | --minimum | --programs] TOPOLOGY | --audit" >&2
	exit 1
fi

# Which programs run on "noiommu": only those whose results depend on
# the IOMMU, since a program that checks the same thing on both topologies
# doubles its cost and tests nothing new. Each program's topologies are
# below (C programs) or in its "# topology:" line (shell tests); the
# reasons:
#   both      inventory (the inventory without groups, against sysfs),
#             hotplug (a hot-added GPU that gets no group), lifecycle (the
#             objects created and destroyed without groups)
#   noiommu   test_noiommu.sh (the tool and YNL without groups),
#             test_reserve_noiommu.sh (take without an IOMMU: blocked)
#   full      the rest. Their noiommu runs checked nothing that the five
#             above do not: errors, events, dump_race, test_ynl.sh and
#             test_tool.sh ask the same of a device with or without a
#             group; test_hotplug.sh's HDA gets a group of its own on
#             full too; test_lifecycle.sh repeats lifecycle through the
#             tool; reservations, allocations and VFIO need an IOMMU.

# C programs in the order they run: name, the topologies it runs on, and
# the least number of results (test cases) it must report. lifecycle
# unloads the module, so it goes last, after the shell tests; the fuzzer
# goes just before it, so that nothing it leaves can disturb another test.
# The stress_* programs race for GPUCTL_STRESS_SECONDS each and leave the
# topology as they found it; they run on make check-debug's kernel only
# ("debug-full"), where lockdep and KASAN see their races: on the stock
# kernels a race they lose leaves a device off its driver for the next test.
# One line per program, to keep additions apart.
c_programs="
inventory	full,noiommu	8
errors		full		13
events		full		3
dump_race	full		3
hotplug		full,noiommu	1
reserve		full		8
alloc		full		12
alloc_stress	full		1
stress_rmmod	debug-full	1
stress_open	debug-full	1
stress_rule	debug-full	1
stress_dump	debug-full	1
stress_sriov	debug-full	1
stress_mdev	debug-full	1
fuzz		full		11
lifecycle	full,noiommu	3
"
c_late="fuzz lifecycle"

# Shell tests: the least number of results each must report. A test
# without a line here or without its "# topology:" line fails.
shell_minimum="
test_alloc_hotplug.sh	11
test_dev_set.sh		9
test_doctor.sh		3
test_export_cloudstack.sh	6
test_export_kubevirt.sh	6
test_export_libvirt.sh	6
test_export_nova.sh	6
test_golden.sh		7
test_hotplug.sh		7
test_lifecycle.sh	7
test_mdev.sh		7
test_metrics.sh		8
test_module_reload.sh	9
test_noiommu.sh		9
test_packages.sh	14
test_privilege.sh	11
test_qemu_guest.sh	10
test_reserve.sh		12
test_reserve_groups.sh	7
test_reserve_noiommu.sh	3
test_reserve_orphan.sh	7
test_rule_match.sh	11
test_sriov.sh		8
test_tool.sh		22
test_tool_alloc.sh	25
test_tool_cli.sh	10
test_tool_monitor.sh	6
test_tool_reserve.sh	17
test_vfio_adopt.sh	6
test_vfio_enforce.sh	7
test_vfio_track.sh	9
test_vfio_watch.sh	10
test_vgpu_alloc.sh	8
test_vgpu_boot.sh	2
test_vgpu_lifecycle.sh	10
test_vgpu_pci_parent.sh	5
test_vgpu_vendor_vf.sh	10
test_vgpu_vendor_vf_alloc.sh	8
test_vgpu_vm.sh		4
test_ynl.sh		18
test_ynl_alloc.sh	8
"
# The topologies make check boots (scripts/check.sh), and every topology
# a program may name.
check_topologies="full noiommu"
known_topologies="full noiommu packages debug-full"

# Programs that no topology of make check runs, and where they run
# instead. --audit fails on a program that runs nowhere and is not here,
# and on one listed here that make check runs after all.
elsewhere="
stress_rmmod	make check-debug: its races need lockdep and KASAN to be seen
stress_open	make check-debug: its races need lockdep and KASAN to be seen
stress_rule	make check-debug: its races need lockdep and KASAN to be seen
stress_dump	make check-debug: its races need lockdep and KASAN to be seen
stress_sriov	make check-debug: its races need lockdep and KASAN to be seen
stress_mdev	make check-debug: its races need lockdep and KASAN to be seen
test_packages.sh	make check-packages: DKMS builds take longer than make check has
"

# Shell tests that change the topology for the rest of the boot go last:
# test_golden.sh removes and rescans the HDA 07:00.1, which comes back in
# an IOMMU group of its own, no longer its GPU's companion;
# test_reserve_orphan.sh removes and rescans the GPUs of 0f:00.
shell_late="test_golden.sh test_reserve_orphan.sh"

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

wanted() {	# wanted NAME: not filtered out by GPUCTL_TESTS or GPUCTL_SKIP_TESTS
	! listed "${GPUCTL_SKIP_TESTS:-}" "$1" &&
		{ [ -z "${GPUCTL_TESTS:-}" ] || listed "$GPUCTL_TESTS" "$1"; }
}

selected() {	# selected TOPOLOGIES NAME: NAME runs on this topology
	# "debug-full": only on make check-debug's kernel (GPUCTL_KMEMLEAK=1),
	# on full, or when named in GPUCTL_TESTS
	if listed "$1" "debug-$topo"; then
		[ "${GPUCTL_KMEMLEAK:-0}" = 1 ] || [ -n "${GPUCTL_TESTS:-}" ] || return 1
		wanted "$2"
		return
	fi
	listed "$1" "$topo" && wanted "$2"
}

listed() {	# listed "a,b c" WORD
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
	if [ "${GPUCTL_SKIP_LOAD:-0}" = 1 ]; then
		echo "# GPUCTL_SKIP_LOAD: gpuctl not loaded"
		return 1
	fi
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

# The results a program reported, from its own KTAP at its top level:
# "PLAN RESULTS PASSED SKIPPED", PLAN empty when it printed none.
ktap_counts() {	# LOG
	awk '
	/^1\.\.[0-9]+/ && plan == "" { plan = substr($1, 4) }
	/^(not )?ok [0-9]+/ {
		res++
		if ($0 ~ /^not ok/) next
		if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) skip++; else pass++
	}
	END { printf "%s %d %d %d\n", plan == "" ? "-" : plan, res, pass, skip }' "$1"
}

# run_prog NAME MINIMUM CMD...: one program, its TAP nested under one
# result line, judged by its exit status and by the results it reported.
run_prog() {
	local name=$1 min=$2 log=$tmp/out rc start plan res pass skip want why='' i leaks='' limit
	shift 2
	start=$(date +%s)
	limit=$prog_timeout
	# the fuzzer's time grows with GPUCTL_FUZZ_MESSAGES
	[ "$name" = fuzz ] && [ -n "${GPUCTL_FUZZ_TIMEOUT:-}" ] && limit=$GPUCTL_FUZZ_TIMEOUT
	# Nova's ~2000 modules take minutes to import under TCG, over 9p
	[ "$name" = test_export_nova.sh ] && [ "$limit" -lt 900 ] && limit=900
	timeout -k 10 "$limit" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	sed 's/^/    /' "$log"
	read -r plan res pass skip < <(ktap_counts "$log")
	echo "# $name: exit $rc in $(($(date +%s) - start)) s, $res results" \
	     "($pass passed, $skip skipped), plan ${plan/-/none}, at least $min"
	if [ "${GPUCTL_KMEMLEAK:-0}" = 1 ]; then
		if ! kmemleak_scan "$tmp/leaks"; then
			leaks="kmemleak scan failed"
		elif [ -s "$tmp/leaks" ]; then
			leaks="kmemleak: $(grep -c '^unreferenced object' "$tmp/leaks") leaks"
			sed 's/^/# /' "$tmp/leaks"
		fi
	fi
	want=$min
	[ "$plan" != - ] && [ "$plan" -gt "$want" ] && want=$plan
	if [ "$res" -lt "$want" ]; then
		# the cases it never reported failed too
		for i in $(seq $((res + 1)) "$want"); do
			echo "    not ok $i missing: $name reported $res of $want results"
		done
	fi
	if [ "$rc" = 124 ]; then
		why=TIMEOUT
	elif [ -n "$leaks" ]; then
		why=$leaks
	elif [ "$rc" != 0 ]; then
		why="exit $rc"
	elif [ "$plan" = - ]; then
		why="no plan"
	elif [ "$res" -lt "$want" ]; then
		why="$res of $want results"
	elif [ "$res" != "$plan" ]; then
		why="$res results for a plan of $plan"
	elif [ "$skip" -eq "$res" ]; then
		why="every case skipped"
	fi
	if [ -n "$why" ]; then
		[ "$rc" = 124 ] && [ -n "$leaks" ] && why="$why, $leaks"
		[ "$rc" = 4 ] && why="$why (every case skipped)"
		result fail "$name" "$why"
	else
		result ok "$name"
	fi
}

# The "# topology: a b" line among a shell test's first lines.
shell_topologies() {
	sed -n '1,10{s/^# topology: *//p}' "$1" | head -n1
}

minimum_of() {	# NAME: its line in shell_minimum, empty when none
	awk -v n="$1" '$1 == n { print $2 }' <<<"$shell_minimum"
}

# What runs here, in order: C programs, shell tests (the late ones last),
# then the late C programs. Each line "c NAME MIN" or "sh FILE MIN" or
# "bad NAME REASON".
plan_runs() {
	local name topos min f late=()

	while read -r name topos min; do
		[ -n "$name" ] || continue
		selected "$topos" "$name" || continue
		listed "$c_late" "$name" && continue
		echo "c $name $min"
	done <<<"$c_programs"
	for f in "$dir"/test_*.sh; do
		name=${f##*/}
		wanted "$name" || continue
		topos=$(shell_topologies "$f")
		min=$(minimum_of "$name")
		if [ -z "$topos" ]; then
			echo "bad $name no '# topology:' line"
			continue
		fi
		listed "$topos" "$topo" || continue
		if [ -z "$min" ]; then
			echo "bad $name no minimum in run_tests.sh"
		elif listed "$shell_late" "$name"; then
			late+=("sh $f $min")
		else
			echo "sh $f $min"
		fi
	done
	[ ${#late[@]} -eq 0 ] || printf '%s\n' "${late[@]}"
	while read -r name topos min; do
		[ -n "$name" ] || continue
		selected "$topos" "$name" || continue
		listed "$c_late" "$name" && echo "c $name $min"
	done <<<"$c_programs"
	# a name in GPUCTL_TESTS that is no program at all is a typo
	for name in ${GPUCTL_TESTS:-}; do
		[ -f "$dir/$name" ] || awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' \
			<<<"$c_programs" || echo "bad $name no such program"
	done
}

# --audit: one case per program of the tree (the C programs selftests/
# Makefile builds, every test_*.sh), and one for the lists themselves,
# reported through result(): ok when WHY is empty.
audit_result() {	# NAME WHY
	if [ -z "$2" ]; then
		result ok "$1"
	else
		result fail "$1" "$2"
	fi
}

audit_topologies() {	# NAME "a,b": why the list is wrong, or nothing
	local t in_check=0 out=0
	[ -n "$2" ] || { echo "no topology"; return; }
	for t in ${2//,/ }; do
		listed "$known_topologies" "$t" || { echo "unknown topology '$t'"; return; }
		listed "$check_topologies" "$t" && in_check=1
	done
	awk -v n="$1" '$1 == n { f = 1 } END { exit !f }' <<<"$elsewhere" && out=1
	if [ "$in_check" = 0 ] && [ "$out" = 0 ]; then
		echo "runs on no topology of make check ($2), and is not in 'elsewhere'"
	elif [ "$in_check" = 1 ] && [ "$out" = 1 ]; then
		echo "make check runs it ($2), yet 'elsewhere' lists it"
	fi
}

run_audit() {
	local name topos f why progs

	progs=$(make -s -C "$dir" list-programs) || { echo "Bail out! make list-programs"; exit 1; }
	echo "TAP version 13"
	local shells=("$dir"/test_*.sh)
	echo "1..$(($(wc -w <<<"$progs") + ${#shells[@]} + 1))"
	for name in $progs; do
		topos=$(awk -v n="$name" '$1 == n { print $2 }' <<<"$c_programs")
		why=$(audit_topologies "$name" "$topos")
		[ -n "$topos" ] || why="built by selftests/Makefile, not in c_programs"
		audit_result "$name runs${topos:+ on $topos}" "$why"
	done
	for f in "$dir"/test_*.sh; do
		name=${f##*/}
		topos=$(shell_topologies "$f")
		why=$(audit_topologies "$name" "$topos")
		[ -n "$topos" ] || why="no '# topology:' line"
		[ -n "$why" ] || [ -n "$(minimum_of "$name")" ] || why="no minimum in run_tests.sh"
		audit_result "$name runs${topos:+ on $topos}" "$why"
	done
	# a listed name that is no program: a rename left it behind
	why=
	while read -r name _; do
		[ -n "$name" ] || continue
		case $name in
		test_*.sh) [ -f "$dir/$name" ] || why+="$name " ;;
		*) listed "$progs" "$name" || why+="$name " ;;
		esac
	done < <(printf '%s\n' "$c_programs" "$shell_minimum" "$elsewhere")
	audit_result "every program the lists name exists" "${why:+no such program: $why}"
	[ "$failed" -eq 0 ]
}

if [ "$audit" = 1 ]; then
	run_audit
	exit
fi

plan_runs >"$tmp/runs"
if [ "$programs_only" = 1 ]; then
	grep -c . "$tmp/runs"
	exit 0
fi
if [ "$minimum_only" = 1 ]; then
	# the two steps, and each program's minimum (1 for one that fails)
	awk '{ n += $1 == "bad" ? 1 : $3 } END { print n + 2 }' "$tmp/runs"
	exit 0
fi

echo "TAP version 13"
echo "# gpuctl selftests: kernel $(uname -r), topology $topo"
steps=2
[ "${GPUCTL_KMEMLEAK:-0}" = 1 ] && steps=3
echo "1..$((steps + $(wc -l <"$tmp/runs")))"

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
	cat "$tmp/load"
	result fail "module loaded"
fi

while read -r kind what min; do
	case $kind in
	c)
		if [ -x "$bin/$what" ]; then
			load_module >/dev/null 2>&1
			run_prog "$what" "$min" "$bin/$what"
		else
			result fail "$what" "not built (make -C selftests)"
		fi
		;;
	sh)
		load_module >/dev/null 2>&1
		run_prog "${what##*/}" "$min" bash "$what"
		;;
	*)
		result fail "$what" "$min"
		;;
	esac
done <"$tmp/runs"

echo "# Totals: pass:$passed fail:$failed skip:$skipped"
[ "$failed" -eq 0 ]
