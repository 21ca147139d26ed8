# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What make check, make check-debug and make check-packages share: the
# test kernels, the TAP results they count and the lines that say what
# failed. Sourced by those scripts, from the top of the tree; stage()
# takes the stage's start time (date +%s) from $start.

# newest_of SERIES: the newest installed Debian kernel of SERIES (6.1, 6.12)
newest_of() {
	local f

	for f in /boot/vmlinuz-"$1".*-amd64; do
		[ -e "$f" ] && echo "${f#/boot/vmlinuz-}"
	done | sort -V | tail -n1
}

# The kernels to test, on one line: GPUCTL_KERNELS, else the newest 6.1
# and the newest 6.12
check_kernels() {
	local k=${GPUCTL_KERNELS:-$(newest_of 6.1; newest_of 6.12)}

	echo "${k//$'\n'/ }"
}

# The settings that make a run check less than the whole suite.
narrowing_vars="GPUCTL_KERNELS GPUCTL_TOPOLOGIES GPUCTL_TESTS GPUCTL_SKIP_TESTS
GPUCTL_KO GPUCTL_SKIP_LOAD GPUCTL_BOOTS GPUCTL_FUZZ_MESSAGES"

# check_narrowed: "VAR=value ..." of each narrowing setting the environment
# holds, nothing when it holds none. A run that was narrowed says so at its
# end, before the totals, so that its "passed" is not read as the suite's.
check_narrowed() {
	local v given=()

	for v in $narrowing_vars; do
		[ -n "${!v+x}" ] && given+=("$v=${!v}")
	done
	[ ${#given[@]} -eq 0 ] || echo "${given[*]}"
}

pass=0 fail=0 skip=0 n=0
# when the current stage began (date +%s): stage() gives its duration
start=$(date +%s)

result() {	# result ok|fail|skip DESCRIPTION
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $n $2" ;;
	esac
}

# CI shows only the last lines of make check, so the end repeats, in a
# few lines (failures_print), each failed stage, the programs in it that
# failed, its first failed case and the first complaint of its runner (a
# kernel report, a timeout). why_failed STAGE LOG [STDERR] adds a stage's
# lines.
failures=()
why_failed() {
	local log=$2 err=${3:-} progs first last runner=

	progs=$(grep -E '^not ok [0-9]+ ' "$log" 2>/dev/null | sed -E 's/^not ok [0-9]+ //; s/ #.*//' |
		awk '{ n++ } n <= 6 { s = s (n > 1 ? ", " : "") $0 }
		     END { if (n > 6) s = s " and " n - 6 " more"; print s }')
	first=$(grep -m1 -E '^ +not ok ' "$log" 2>/dev/null | sed -E 's/^ +//')
	last=$(grep -E '^(not )?ok [0-9]+ ' "$log" 2>/dev/null | tail -n1)
	[ -n "$err" ] && runner=$(grep -m1 -E '^run\.sh: ' "$err" 2>/dev/null)
	failures+=("# failed: $1")
	[ -n "$progs" ] && failures+=("#   programs: $progs")
	[ -n "$first" ] && failures+=("#   first: ${first:0:150}")
	[ -n "$last" ] && failures+=("#   last result: ${last:0:150}")
	[ -n "$runner" ] && failures+=("#   ${runner:0:150}")
	return 0
}

# step DESCRIPTION LOG CMD...: one host-side test case; fails as CMD does
step() {
	local desc=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then
		result ok "$desc"
	else
		sed 's/^/# /' "$log" | tail -n 40
		result fail "$desc"
		failures+=("# failed: $desc: $(grep -v '^$' "$log" | tail -n1 | cut -c1-150)")
		return 1
	fi
}

# Count the leaf test cases of a stage's KTAP: nested (indented) result
# lines, or the top-level line of a program that reported no cases of its
# own. A top-level failure whose cases all passed (a crash after its last
# case, a non-zero exit) counts as one more failure. Then the top level's
# plan and how many results it printed: "PASS FAIL SKIP PLAN RESULTS",
# PLAN "-" when there was none.
count_ktap() {
	scripts/ktap-count.sh "$1"
}

# stage NAME LOG RC [MINIMUM [STDERR]]: adds a stage's cases (its KTAP in
# LOG, its exit status RC) to the totals and reports the stage as one more
# case. A stage stopped early when it printed no plan, fewer top-level
# results than its plan, or fewer cases than MINIMUM: each result or case
# it did not print counts as a failed case. A failed one gets its lines
# from why_failed (STDERR: its runner's).
stage() {
	local name=$1 log=$2 rc=$3 min=${4:-0} err=${5:-} p f s plan printed
	local missing=0 why=

	read -r p f s plan printed < <(count_ktap "$log")
	if [ "$plan" = - ]; then
		missing=1 why="no plan"
	elif [ "$printed" -lt "$plan" ]; then
		missing=$((plan - printed)) why="$printed of $plan results"
	fi
	if [ $((p + f + s)) -lt "$min" ] && [ $((min - p - f - s)) -gt "$missing" ]; then
		missing=$((min - p - f - s)) why="$((p + f + s)) of at least $min cases"
	fi
	pass=$((pass + p)) fail=$((fail + f + missing)) skip=$((skip + s))
	echo "# $name: $p passed, $((f + missing)) failed, $s skipped," \
	     "in $(($(date +%s) - start)) s"
	if [ -n "$why" ]; then
		why="stopped after $why (exit $rc)"
	elif [ "$printed" != "$plan" ]; then
		why="$printed results for a plan of $plan"
	elif [ "$rc" != 0 ]; then
		why="exit $rc"
	fi
	if [ -n "$why" ]; then
		result fail "$name: $why"
		why_failed "$name: $((f + missing)) failed, $why" "$log" "$err"
	else
		result ok "$name: ran and reported every result"
		[ "$f" = 0 ] || why_failed "$name: $f failed" "$log" "$err"
	fi
}

# failures_print: what why_failed() gathered, at most 16 lines
failures_print() {
	[ ${#failures[@]} -eq 0 ] || printf '%s\n' "${failures[@]:0:16}"
}
