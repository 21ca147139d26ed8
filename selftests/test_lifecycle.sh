#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Module lifecycle: load and unload many times with dynamic debug on, and
# every object the module logs as "created" must be logged "destroyed" as
# often (WireGuard's netns.sh check). Then unload while a monitor listens
# and while dumps run: nothing may crash or hang, and the runner fails the
# run on any WARN or oops in the kernel log.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

LOOPS=${GPUCTL_LIFECYCLE_LOOPS:-20}
TMP=$(mktemp -d /tmp/test_lifecycle.XXXXXX)
PIDS=()

cleanup() {
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

kmsg_mark() {	# NAME: a line in the kernel log to read from
	echo "gpuctl-test: mark $1" >/dev/kmsg
}

kmsg_since() {	# NAME: kernel log lines after the mark, without timestamps
	dmesg | sed -e '1,/gpuctl-test: mark '"$1"'$/d' -e 's/^\[[ 0-9.]*\] //'
}

is_loaded() {
	[ -d /sys/module/gpuctl ]
}

check_load_loop() {
	local i

	kmsg_mark loop
	for i in $(seq "$LOOPS"); do
		insmod "$GPUCTL_KO" dyndbg=+p || { echo "insmod $i failed"; return 1; }
		gpuctl -j dev show >/dev/null || { echo "dev show $i failed"; return 1; }
		rmmod gpuctl || { echo "rmmod $i failed"; return 1; }
	done
	! is_loaded
}

# Every "<object> created" line has a "<object> destroyed" line: the same
# text with the verb swapped, as often.
check_balance() {
	kmsg_since loop | grep -E '^gpuctl.*\b(created|destroyed)\b' >"$TMP/life"
	echo "# $(grep -c created "$TMP/life") created, $(grep -c destroyed "$TMP/life") destroyed"
	[ -s "$TMP/life" ] || { echo "no lifecycle lines (dyndbg=+p)"; return 1; }
	sed -n 's/\bcreated\b/@/p' "$TMP/life" | sort | uniq -c >"$TMP/c"
	sed -n 's/\bdestroyed\b/@/p' "$TMP/life" | sort | uniq -c >"$TMP/d"
	diff -u "$TMP/c" "$TMP/d"
}

check_created_per_load() {
	# each load creates at least the devices it lists
	local n

	n=$(kmsg_since loop | grep -cE '^gpuctl.*\bcreated\b')
	[ "$n" -ge "$LOOPS" ]
}

check_rmmod_under_monitor() {
	local pid rc=0

	insmod "$GPUCTL_KO" || return 1
	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	pid=$!
	PIDS+=("$pid")
	wait_monitor_subscribed "$pid" ||
		{ echo "gpuctl monitor did not subscribe"; return 1; }
	rmmod gpuctl || { echo "rmmod refused while a monitor listens"; return 1; }
	# The family is gone, the monitor's socket just hears nothing more:
	# it keeps waiting, and obeys SIGTERM with exit 0.
	sleep 1
	kill -0 "$pid" 2>/dev/null || { echo "the monitor exited before SIGTERM"; return 1; }
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	cat "$TMP/mon.err"
	[ "$rc" -eq 0 ] || { echo "monitor exit status $rc on SIGTERM"; return 1; }
	! is_loaded
}

check_reload_after_monitor() {
	insmod "$GPUCTL_KO" && gpuctl -j dev show >/dev/null && rmmod gpuctl
}

# Dumps in a loop while the module goes away: each must end with success,
# a netlink error (2) or "not loaded" (3), never a signal. The loop runs
# until the reloaded module answered, so it spans before, during and after.
check_rmmod_under_dump() {
	local pid bad n

	insmod "$GPUCTL_KO" || return 1
	(
		for _ in $(seq 400); do
			[ -e "$TMP/stop" ] && break
			gpuctl -j dev show >/dev/null 2>&1
			echo $?
		done
	) >"$TMP/codes" &
	pid=$!
	PIDS+=("$pid")
	wait_for 30 grep -qx 0 "$TMP/codes" || return 1
	# a dump in flight holds a module reference: retry briefly
	for _ in $(seq 50); do
		rmmod gpuctl 2>/dev/null && break
		sleep 0.1
	done
	is_loaded && { echo "rmmod failed during dumps"; return 1; }
	sleep 1
	insmod "$GPUCTL_KO" || return 1
	n=$(wc -l <"$TMP/codes")
	# until a dump after the reload succeeded
	# shellcheck disable=SC2016 # awk code, not shell
	wait_for 30 awk -v n="$n" 'NR > n && $0 == 0 { f = 1 } END { exit !f }' \
		"$TMP/codes"
	touch "$TMP/stop"
	wait "$pid"
	sort "$TMP/codes" | uniq -c
	bad=$(grep -cvxE '0|2|3' "$TMP/codes")
	[ "$bad" -eq 0 ] || return 1
	# the loop saw the module gone, and back
	grep -qxE '2|3' "$TMP/codes" || { echo "no dump ran while unloaded"; return 1; }
	awk -v n="$n" 'NR > n && $0 == 0 { f = 1 } END { exit !f }' "$TMP/codes" ||
		{ echo "no dump succeeded after the reload"; return 1; }
}

check_unload_last() {
	rmmod gpuctl && ! is_loaded
}

ktap_header
ktap_plan 7
is_loaded && rmmod gpuctl

ktap_run_stage "insmod/rmmod $LOOPS times with dyndbg=+p" check_load_loop
ktap_run_stage "every created object destroyed" check_balance
ktap_run_stage "objects created on every load" check_created_per_load
ktap_run_stage "rmmod while gpuctl monitor listens" check_rmmod_under_monitor
ktap_run_stage "module loads again after that" check_reload_after_monitor
ktap_run_stage "rmmod during a dump loop" check_rmmod_under_dump
ktap_run_stage "module unloads at the end" check_unload_last

ktap_finished
