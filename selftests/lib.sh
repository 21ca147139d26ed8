# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the gpuctl shell selftests, sourced by each test script:
# KTAP output, checks of JSON and of expected failures, printed sysfs
# writes, module load and unload, waiting with a timeout, QMP
# (device_add/device_del) from inside the QEMU guest, a QEMU nested in it
# as a VFIO user, and their part of a test's cleanup. The guest environment (GPUCTL_KO, GPUCTL_QMP, ...) is
# described in selftests/qemu/run.sh.
#
# Each test script sets "set -o pipefail" itself, so that a pipeline whose
# first command fails (gpuctl with no module, say) fails the check. A
# pipeline must then not end in a reader that stops early (grep -q, head):
# the writer may die of SIGPIPE and fail a check that matched. Feed such a
# reader from a file, a variable or a process substitution instead.

# ---------------------------------------------------------------- KTAP --

KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
KTAP_TESTNUM=0
KTAP_PLAN=

ktap_header() {
	echo "TAP version 13"
}

# ktap_plan N: the number of results the script will report; ktap_finished
# fails the script when it reported another number.
ktap_plan() {
	KTAP_PLAN=$1
	echo "1..$1"
}

ktap_ok() {
	KTAP_TESTNUM=$((KTAP_TESTNUM + 1))
	KTAP_PASS=$((KTAP_PASS + 1))
	echo "ok $KTAP_TESTNUM $*"
}

ktap_fail() {
	KTAP_TESTNUM=$((KTAP_TESTNUM + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_TESTNUM $*"
}

# ktap_skip "desc" ["reason"]
ktap_skip() {
	KTAP_TESTNUM=$((KTAP_TESTNUM + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_TESTNUM $1 # SKIP${2:+ $2}"
}

# ktap_info TEXT...: a diagnostic line.
ktap_info() {
	echo "# $*"
}

# print_file PREFIX FILE...: the files' lines, each after PREFIX (use ""
# for none), with bash's read builtin: cat or sed would cost a fork, which
# takes tens of milliseconds under TCG, and the suite prints thousands.
print_file() {
	local prefix=$1 f line
	shift

	for f in "$@"; do
		while IFS= read -r line || [ -n "$line" ]; do
			printf '%s%s\n' "$prefix" "$line"
		done <"$f"
	done
}

# ktap_stage_skip "reason": the stage that calls it, and then returns 0, is
# reported as skipped. The only way to skip: an exit status is never read
# as a skip, since a tool's own code (gpuctl doctor exits 4 on a failed
# check, KSFT_SKIP's number) could turn a failure into one.
KTAP_STAGE_SKIP=
ktap_stage_skip() {
	KTAP_STAGE_SKIP=${1:-skipped}
}

# ktap_run_stage "desc" CMD [ARGS...]: runs CMD with its output turned into
# diagnostics and reports it as one test, after a line with the seconds it
# took: ok when CMD returns 0, skipped when it also called ktap_stage_skip,
# else failed. Returns CMD's status.
ktap_run_stage() {
	local desc=$1 rc=0 t0=$SECONDS
	# Through a file, not a pipe: a background job the stage leaves running
	# would hold a pipe open and hang the reader. A file of its own in the
	# test's $TMP, named without a fork and left for the test's cleanup, so
	# that such a job's later output does not land in another stage's.
	local log=$TMP/.stage.$KTAP_TESTNUM.$BASHPID.${#FUNCNAME[@]}
	shift
	KTAP_STAGE_SKIP=
	"$@" >"$log" 2>&1 || rc=$?
	print_file "# " "$log"
	echo "# $((SECONDS - t0)) s"
	if [ "$rc" != 0 ]; then
		ktap_fail "$desc"
	elif [ -n "$KTAP_STAGE_SKIP" ]; then
		ktap_skip "$desc" "$KTAP_STAGE_SKIP"
	else
		ktap_ok "$desc"
	fi
	KTAP_STAGE_SKIP=
	return $rc
}

# Prints the totals and exits: 1 if a test failed or the results do not
# match the plan, 4 if every test was skipped, else 0 (kselftest.h KSFT_*
# codes).
ktap_finished() {
	echo "# Totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
	if [ "$KTAP_TESTNUM" != "${KTAP_PLAN:-none}" ]; then
		echo "# $KTAP_TESTNUM results for a plan of ${KTAP_PLAN:-none}"
		exit 1
	fi
	if [ "$KTAP_FAIL" -gt 0 ]; then
		exit 1
	elif [ "$KTAP_PASS" -eq 0 ] && [ "$KTAP_SKIP" -gt 0 ]; then
		exit 4
	fi
	exit 0
}

# ------------------------------------------------------------- checks --

# json_check [--slurp] [--arg NAME VALUE | --argjson NAME JSON |
#             --slurpfile NAME FILE]... FILTER [FILE]
# The input (stdin, or FILE) holds exactly one JSON value and the jq FILTER
# on it ends in neither false nor null, as with jq -e. With --slurp the
# input is a stream of one or more values that FILTER gets as one array.
# jq -e alone passes on empty input (jq 1.6), so a tool that printed
# nothing would pass; here it fails, saying what it got.
json_check() {
	local opts=() slurp=0 filter verdict

	while [ $# -gt 0 ]; do
		case $1 in
		--slurp) slurp=1; shift ;;
		--arg|--argjson|--slurpfile) opts+=("$1" "$2" "$3"); shift 3 ;;
		*) break ;;
		esac
	done
	filter=$1
	shift
	# One jq run: the count, the filter and what to say when it fails.
	# shellcheck disable=SC2016 # jq code, not shell
	verdict=$(jq -n -r "${opts[@]}" --argjson __slurp "$slurp" '
		[inputs] as $__in |
		if $__slurp == 0 and ($__in | length) != 1 then
			"expected one JSON value, got \($__in | length)"
		elif ($__in | length) == 0 then "expected JSON values, got none"
		else (if $__slurp == 1 then $__in else $__in[0] end) as $__v |
			[$__v | ('"$filter"')] as $__r |
			if ($__r | length) > 0 and ($__r | last) != false and
			   ($__r | last) != null then "ok"
			else "false on: \($__v | tojson | .[0:4000])" end
		end' "$@") || { echo "json_check: jq failed on: $filter"; return 1; }
	[ "$verdict" = ok ] && return 0
	echo "json_check: $filter"
	echo "json_check: $verdict"
	return 1
}

# cmd_fails REGEX CMD [ARGS...]: CMD fails, and what it printed (stdout and
# stderr, left in CMD_OUT for further checks) matches the extended REGEX,
# the errno or message expected. A negative test that took any failure
# would pass on the wrong error, or with the module not loaded at all.
CMD_OUT=
cmd_fails() {
	local want=$1 rc=0

	shift
	CMD_OUT=$("$@" 2>&1) || rc=$?
	printf '%s\n' "$CMD_OUT"
	if [ "$rc" = 0 ]; then
		echo "succeeded, expected a failure: $*"
		return 1
	fi
	if ! grep -q -E -e "$want" <<<"$CMD_OUT"; then
		echo "failed (exit $rc) without '$want': $*"
		return 1
	fi
}

# out_has REGEX: the output cmd_fails kept matches the extended REGEX too.
out_has() {
	grep -q -E -e "$1" <<<"$CMD_OUT" && return 0
	echo "no '$1' in that output"
	return 1
}

# run_captured OUT ERR CMD...: CMD's stdout to OUT and stderr to ERR, for
# the checks that follow, and both printed with CMD and its exit status,
# for the log of a stage that fails; returns CMD's status.
run_captured() {
	local out=$1 err=$2 rc=0

	shift 2
	echo "\$ $*"
	"$@" >"$out" 2>"$err" || rc=$?
	print_file "" "$out" "$err"
	echo "exit $rc"
	return "$rc"
}

# ------------------------------------------------------------- writes --

# write_to VALUE FILE: prints the write, then does it.
write_to() {
	echo "# echo \"$1\" > $2"
	echo "$1" > "$2"
}

# ------------------------------------------------------------- module --

# GPUCTL_SKIP_LOAD=1 (run_tests.sh --no-load) makes loading a no-op that
# succeeds: every test then runs against no module, and must fail.
gpuctl_load() {
	if [ "${GPUCTL_SKIP_LOAD:-0}" = 1 ]; then
		echo "# GPUCTL_SKIP_LOAD: gpuctl not loaded" >&2
		return 0
	fi
	[ -f "${GPUCTL_KO:?}" ] || { echo "# no module $GPUCTL_KO" >&2; return 1; }
	if grep -q '^gpuctl ' /proc/modules; then
		return 0
	fi
	# insmod does not load dependencies: gpuctl-vfio-pci needs
	# vfio-pci-core (and vfio); modinfo names them.
	# shellcheck disable=SC2046 # one word per module
	modprobe -a $(modinfo -F depends "$GPUCTL_KO" | tr , ' ') || return 1
	echo "# insmod $GPUCTL_KO $*"
	insmod "$GPUCTL_KO" "$@"
}

# Fails when the module is not loaded: a test that expects to unload it
# must not pass without it.
gpuctl_unload() {
	if [ ! -d /sys/module/gpuctl ]; then
		echo "# gpuctl is not loaded"
		return 1
	fi
	echo "# rmmod gpuctl"
	rmmod gpuctl
}

# ------------------------------------------------------------ waiting --

# wait_for SECONDS CMD [ARGS...]: runs CMD every 0.1 s until it succeeds;
# fails after SECONDS. The clock is bash's own: no fork per round.
wait_for() {
	local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
	shift
	until "$@"; do
		if [ "${EPOCHREALTIME/./}" -ge "$deadline" ]; then
			echo "# timeout waiting for: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# wait_for_path SECONDS PATH / wait_for_no_path SECONDS PATH
wait_for_path() {
	wait_for "$1" test -e "$2"
}

wait_for_no_path() {
	wait_for "$1" test ! -e "$2"
}

# Without a fork (it runs in polling loops): the driver link of the device
# is the driver's own directory, or absent for "".
_driver_is() {
	if [ -z "$2" ]; then
		[ ! -e "/sys/bus/pci/devices/$1/driver" ]
	else
		[ "/sys/bus/pci/devices/$1/driver" -ef "/sys/bus/pci/drivers/$2" ]
	fi
}

# wait_for_driver SECONDS DDDD:BB:DD.F DRIVER: the device is bound to DRIVER.
wait_for_driver() {
	wait_for "$1" _driver_is "$2" "$3"
}

# ---------------------------------------------------------------- QMP --

QMP_TIMEOUT=${QMP_TIMEOUT:-30}
_QMP_SEQ=0

# _qmp_session FD REQUEST_JSON ID: sends capabilities negotiation (an
# error once it is done, which is ignored) and the request, then prints the
# reply carrying ID. Greeting, events and other replies are skipped.
_qmp_request() {
	local fd=$1 req=$2 id=$3 line
	printf '{"execute": "qmp_capabilities"}\n%s\n' "$req" >&"$fd" || return 1
	while IFS= read -r -t "$QMP_TIMEOUT" line <&"$fd"; do
		case $line in
		*"\"id\": \"$id\""*|*"\"id\":\"$id\""*)
			printf '%s\n' "$line"
			case $line in *'"return"'*) return 0 ;; esac
			return 1
			;;
		esac
	done
	echo "# qmp: no reply to $req within $QMP_TIMEOUT s" >&2
	return 1
}

_qmp_json() {
	local cmd=$1 args=$2 id=$3
	if [ -n "$args" ]; then
		printf '{"execute": "%s", "arguments": %s, "id": "%s"}' "$cmd" "$args" "$id"
	else
		printf '{"execute": "%s", "id": "%s"}' "$cmd" "$id"
	fi
}

# qmp CMD [ARGUMENTS_JSON]: runs one QMP command on the QEMU hosting this
# guest and prints its {"return": ...} or {"error": ...} line. Fails on an
# error reply or no reply.
#   qmp device_add '{"driver": "bochs-display", "id": "gpu9", "bus": "hp0"}'
qmp() {
	local fd rc=0 id
	_QMP_SEQ=$((_QMP_SEQ + 1))
	id="gpuctl-$BASHPID-$_QMP_SEQ-$RANDOM"
	exec {fd}<>"${GPUCTL_QMP:?}" || return 1
	_qmp_request "$fd" "$(_qmp_json "$1" "${2:-}" "$id")" "$id" || rc=$?
	exec {fd}>&-
	return $rc
}

# qmp_device_del ID [SECONDS]: unplugs device ID and waits for QEMU's
# DEVICE_DELETED event, i.e. for the guest to have released it (with ACPI
# hotplug a few seconds). Both happen in one session, as the guest drops
# unread monitor output when it closes the port.
qmp_device_del() {
	local id=$1 timeout=${2:-$QMP_TIMEOUT} fd rc=0 line qid deadline
	_QMP_SEQ=$((_QMP_SEQ + 1))
	qid="gpuctl-$BASHPID-$_QMP_SEQ-$RANDOM"
	exec {fd}<>"${GPUCTL_QMP:?}" || return 1
	if _qmp_request "$fd" "$(_qmp_json device_del "{\"id\": \"$id\"}" "$qid")" "$qid"; then
		deadline=$((SECONDS + timeout))
		rc=1
		while [ $SECONDS -lt $deadline ] &&
		      IFS= read -r -t $((deadline - SECONDS + 1)) line <&"$fd"; do
			case $line in
			*'"DEVICE_DELETED"'*"\"device\": \"$id\""*)
				printf '%s\n' "$line"
				rc=0
				break
				;;
			esac
		done
		[ $rc = 0 ] || echo "# qmp: no DEVICE_DELETED for $id within $timeout s" >&2
	else
		rc=1
	fi
	exec {fd}>&-
	return $rc
}

# ---------------------------------------------------------------- YNL --

# The kernel's YNL CLI (tools/net/ynl/cli.py of linux-source-6.12), a
# client driven by the spec alone that shares no code with gpuctl.
YNL_DIR=$GPUCTL_ROOT/build/linux-source-6.12/tools/net/ynl
GPUCTL_SPEC=$GPUCTL_ROOT/Documentation/netlink/specs/gpuctl.yaml

# Starting Python takes seconds under TCG, so the CLI runs in one Python
# process per test: it reads each request (NUL-separated: an id, the
# arguments, an empty one at the end), runs the CLI's own main() as if
# started with those arguments, and prints \x1d and the id, the CLI's
# output, then \x1e, the id and its exit status. The id lets a request
# skip what an earlier reader left unread. The process ends with the
# test's shell (PR_SET_PDEATHSIG).
YNL_SERVER='
import ctypes, os, signal, sys, traceback
ctypes.CDLL(None).prctl(1, signal.SIGTERM)
import cli
# The CLI ends an error with exit(), which closes sys.stdin: requests come
# in on a descriptor of their own.
requests = os.fdopen(os.dup(0), "rb", buffering=0)
sys.stdin = open(os.devnull)
sys.stderr = sys.stdout
buf, args = b"", []
while True:
    chunk = requests.read(65536)
    if not chunk:
        break
    buf += chunk
    while b"\0" in buf:
        item, buf = buf.split(b"\0", 1)
        if item:
            args.append(item.decode())
            continue
        rid, sys.argv, args = args[0], ["cli.py"] + args[1:], []
        print("\x1d" + rid, flush=True)
        try:
            cli.main()
            rc = 0
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else int(e.code is not None)
        except Exception:
            traceback.print_exc()
            rc = 1
        print("\x1e%s %d" % (rid, rc), flush=True)
'
YNLP_PID=

# ynl_start: starts that process, unless it runs already. Only the test's
# own shell can: one started in a subshell ($(...), a pipeline) would end
# with it. Disowned, so that a "wait" for the test's background jobs does
# not wait for it.
ynl_start() {
	[ "$BASHPID" = "$$" ] || return 0
	[ -n "$YNLP_PID" ] && kill -0 "$YNLP_PID" 2>/dev/null && return 0
	coproc YNLP { PYTHONPATH=$YNL_DIR exec /usr/bin/python3 -u -c "$YNL_SERVER" 2>&1; }
	disown "$YNLP_PID"
}

# ynl_cli ARGS...: the CLI with ARGS; its output and exit status. Through
# /proc/$$/fd, as bash closes the coprocess's descriptors in subshells,
# and a check is often a pipeline. Without the process of ynl_start, a
# Python of its own.
ynl_cli() {
	local line id=$BASHPID.$RANDOM.$RANDOM mine=0
	local to=/proc/$$/fd/${YNLP[1]:-} from=/proc/$$/fd/${YNLP[0]:-}

	if [ -z "$YNLP_PID" ] || ! kill -0 "$YNLP_PID" 2>/dev/null; then
		PYTHONPATH=$YNL_DIR /usr/bin/python3 "$YNL_DIR/cli.py" "$@"
		return
	fi
	{ printf '%s\0' "$id" "$@" && printf '\0'; } >"$to" || return 1
	while IFS= read -r -t 300 line; do
		case $line in
		$'\x1d'"$id") mine=1 ;;
		$'\x1e'"$id "*) return "${line##* }" ;;
		*) [ "$mine" = 1 ] && printf '%s\n' "$line" ;;
		esac
	done <"$from"
	echo "ynl_cli: no answer to: $*"
	return 1
}

# ynl_listen GROUP SECONDS [PREFIX...]: what "cli.py --subscribe GROUP
# --sleep SECONDS --output-json" prints, with YNL's own YnlFamily and JSON
# encoder, run through PREFIX (setpriv ...) if given; but where the CLI
# always sleeps the longest a scenario may take, this one stops once sent
# SIGUSR1 (ynl_listen_end) and no event came for a second, or after
# SECONDS. The events queue in the socket meanwhile. Run it in the
# background: it execs Python, so $! is the process whose socket joins the
# group (wait_subscribed), and the handler is set before it joins.
ynl_listen() {
	local group=$1 secs=$2
	shift 2

	exec "$@" env PYTHONPATH="$YNL_DIR" /usr/bin/python3 -c '
import json, signal, sys, time
from cli import YnlEncoder
from lib import YnlFamily
done = []
signal.signal(signal.SIGUSR1, lambda *_: done.append(1))
ynl = YnlFamily(sys.argv[1], "")
ynl.ntf_subscribe(sys.argv[2])
deadline = time.monotonic() + float(sys.argv[3])
while not done and time.monotonic() < deadline:
    time.sleep(0.1)
quiet, seen = time.monotonic(), 0
while done and time.monotonic() < deadline and time.monotonic() - quiet < 1:
    ynl.check_ntf()
    if len(ynl.async_msg_queue) != seen:
        quiet, seen = time.monotonic(), len(ynl.async_msg_queue)
    time.sleep(0.1)
ynl.check_ntf()
print(json.dumps(ynl.async_msg_queue, cls=YnlEncoder))
' "$GPUCTL_SPEC" "$group" "$secs"
}

# ynl_listen_end PID: tells ynl_listen PID that the scenario is over, and
# waits for it to print what it got.
ynl_listen_end() {
	kill -USR1 "$1" && wait "$1"
}

# ynl ARGS...: the CLI on the gpuctl family, JSON out (--do OP --json ...,
# --dump OP, --multi OP JSON ...).
ynl() {
	ynl_cli --spec "$GPUCTL_SPEC" --no-schema --output-json "$@"
}

# ynl_fails OP JSON: the kernel refuses the do request OP; its error, which
# the caller checks for the errno and extack it expects, is printed and
# left in $TMP/err.
ynl_fails() {
	if ynl --do "$1" --json "$2" >"$TMP/err" 2>&1; then
		cat "$TMP/err"
		return 1
	fi
	cat "$TMP/err"
	grep -q '^Netlink error: ' "$TMP/err"
}

# ------------------------------------------------------------ monitor --

# The id of one of gpuctl's multicast groups: "ledger" (the default) is the
# one root's listeners join (gpuctl monitor, gpuctl-nl monitor), "monitor"
# the one everybody else gets.
monitor_group_id() {	# [NAME]
	gpuctl-nl mcast-group "${1:-ledger}"
}

# wait_monitor_subscribed PID: PID joined gpuctl's "ledger" group, as root's
# gpuctl monitor and gpuctl-nl monitor do.
wait_monitor_subscribed() {
	local gid

	gid=$(monitor_group_id ledger) || return 1
	wait_subscribed "$1" "$gid"
}

# Wait until process PID has a netlink socket that joined group GID.
# /proc/net/netlink shows the first 32 groups of each socket as a bitmap;
# for a higher group id only the socket itself can be seen, and the wait
# falls back to a pause long enough for the process to subscribe.
wait_subscribed() {	# PID GID
	local pid=$1 gid=$2 ino groups

	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || return 1
		for ino in $(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null |
			     tr -dc '0-9\n'); do
			groups=$(awk -v ino="$ino" '$2 == 16 && $10 == ino { print $4 }' \
				/proc/net/netlink)
			[ -n "$groups" ] || continue
			if [ "$gid" -gt 32 ]; then
				sleep 2
				return 0
			fi
			(( (0x$groups >> (gid - 1)) & 1 )) && return 0
		done
		sleep 0.1
	done
	return 1
}

# --------------------------------------------------------- completion --

# complete_words WORD...: the completions gpuctl's bash completion offers
# for the last WORD, one per line, as bash would compute them (with
# bash-completion's helpers, which the script uses when they are there).
complete_words() {
	(
		# _init_completion and friends, when the completion uses them
		if [ -f /usr/share/bash-completion/bash_completion ]; then
			# shellcheck source=/dev/null
			source /usr/share/bash-completion/bash_completion
		fi
		# shellcheck source=/dev/null
		source "$GPUCTL_ROOT/tools/gpuctl/gpuctl.bash-completion" || exit 1
		fn=$(complete -p gpuctl | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
		[ -n "$fn" ] || exit 1
		# set as bash sets them before it calls a completion function
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		"$fn" gpuctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf '%s\n' "${COMPREPLY[@]}"
	)
}

# -------------------------------------------------------- reservation --

# Reservation rules, device states and the monitor through the selftests'
# own client, gpuctl-nl, with sysfs as the reference. The caller provides
# TMP, a scratch directory; RULES holds the ids of the rules it made (for
# nl_rules_cleanup), MON_PID the gpuctl-nl monitor recording into $TMP/mon.

pci_driver_of() {	# ADDR: its driver per sysfs, empty when none
	local l

	l=$(readlink "/sys/bus/pci/devices/$1/driver") || return 0
	echo "${l##*/}"
}

pci_override_of() {	# ADDR: its driver_override, empty when cleared
	local o

	o=$(<"/sys/bus/pci/devices/$1/driver_override")
	[ "$o" = "(null)" ] || echo "$o"
}

expect_pci_driver() {	# ADDR DRIVER [SECONDS]: "" = no driver
	if ! wait_for "${3:-15}" _driver_is "$1" "$2"; then
		echo "$1 is on '$(pci_driver_of "$1")', want '$2'"
		return 1
	fi
	echo "$1 on '$2'"
}

expect_pci_override() {	# ADDR OVERRIDE
	local o

	o=$(pci_override_of "$1")
	[ "$o" = "$2" ] && return 0
	echo "$1 driver_override '$o', want '$2'"
	return 1
}

# Every PCI function's driver and override, to show nothing changed.
pci_snapshot() {
	local d

	for d in /sys/bus/pci/devices/*; do
		echo "${d##*/} $(pci_driver_of "${d##*/}") $(pci_override_of "${d##*/}")"
	done
}

# id_of KIND FILE: ID set to the N of FILE's first line "KIND id=N ...", a
# gpuctl-nl reply; fails when there is none. Without a fork (print_file).
id_of() {
	local line

	ID=
	while read -r line; do
		[[ $line =~ ^$1\ id=([0-9]+)\  ]] && ID=${BASH_REMATCH[1]} && return 0
	done <"$2"
	return 1
}

# nl_rule_new ARGS...: gpuctl-nl rule-new; the reply goes to $TMP/rule and
# the new id to RULE (and RULES, for nl_rules_cleanup).
RULE=
RULES=()
MON_PID=
nl_rule_new() {
	RULE=
	gpuctl-nl rule-new "$@" >"$TMP/rule" 2>"$TMP/err" || {
		print_file "" "$TMP/rule" "$TMP/err"
		return 1
	}
	print_file "" "$TMP/rule"
	id_of rule "$TMP/rule" || return 1
	RULE=$ID
	RULES+=("$RULE")
}

# Deletes every rule, for a test's cleanup: those in RULES and any other a
# failed stage left (a rule from the module parameter, say), so that the
# next test starts from devices on their host drivers.
nl_rules_cleanup() {
	local id

	for id in "${RULES[@]}" $(gpuctl-nl rule-dump 2>/dev/null |
				  sed -n 's/^rule id=\([0-9]*\) .*/\1/p'); do
		gpuctl-nl rule-del id "$id" >/dev/null 2>&1
	done
	RULES=()
}

nl_rule_del() {	# ID
	local id=$1 r keep=()

	gpuctl-nl rule-del id "$id" 2>"$TMP/err" || { print_file "" "$TMP/err"; return 1; }
	for r in "${RULES[@]}"; do
		[ "$r" = "$id" ] || keep+=("$r")
	done
	RULES=("${keep[@]}")
}

# line_has WHAT LINE 'key=value'...: LINE, a gpuctl-nl reply about WHAT,
# shows every pair; says which one it lacks.
line_has() {
	local what=$1 line=$2 kv
	shift 2

	for kv in "$@"; do
		case " $line " in
		*" $kv "*) ;;
		*) echo "$what: no $kv in: $line"; return 1 ;;
		esac
	done
}

# nl_dev_has ADDR 'key=value'...: gpuctl-nl dev-get shows every pair.
nl_dev_has() {
	local line

	line=$(gpuctl-nl dev-get "$1") || return 1
	line_has "$1" "$line" "${@:2}"
}

# nl_dev_lacks ADDR 'key=value': gpuctl-nl dev-get does not show the pair.
nl_dev_lacks() {
	local line

	line=$(gpuctl-nl dev-get "$1") || return 1
	case " $line " in
	*" $2 "*) echo "$1: $2 in: $line"; return 1 ;;
	esac
}

# nl_group_has GROUP 'key=value'...: gpuctl-nl group-get shows every pair.
nl_group_has() {
	local line

	line=$(gpuctl-nl group-get "$1") || return 1
	line_has "group $1" "$line" "${@:2}"
}

nl_dev_reason() {	# ADDR: its state_reason, the rest of the line
	gpuctl-nl dev-get "$1" | sed -n 's/.* state_reason=//p'
}

nl_rule_lists() {	# ADDR: the last rule reply lists ADDR
	grep -q -E "devices=([^ ]*,)?$1(,| |$)" "$TMP/rule"
}

nl_rule_has_dev() {	# ADDR: the same, saying so when not
	nl_rule_lists "$1" || { echo "rule does not list $1"; return 1; }
}

pci_group_of() {	# ADDR: its IOMMU group number
	local g

	g=$(readlink "/sys/bus/pci/devices/$1/iommu_group") || return 1
	echo "${g##*/}"
}

nlmon_start() {
	gpuctl-nl monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" && return 0
	kill "$MON_PID"
	MON_PID=
	return 1
}

nlmon_stop() {
	[ -n "$MON_PID" ] || return 0
	kill "$MON_PID"
	wait "$MON_PID" 2>/dev/null
	MON_PID=
}

# Events are looked for after the mark each stage sets when it starts, so
# an earlier stage's event cannot stand in for this one's.
MARK=0
nlmon_mark() {
	MARK=$(wc -l <"$TMP/mon")
}

nlmon_since_mark() {
	tail -n +$((MARK + 1)) "$TMP/mon"
}

# nlmon_seen REGEX: a monitor line after the mark matches the extended
# REGEX now. One awk, as it runs in polling loops.
nlmon_seen() {
	NLMON_RE=$1 awk -v m="$MARK" 'NR > m && $0 ~ ENVIRON["NLMON_RE"] { f = 1; exit }
		END { exit !f }' "$TMP/mon"
}

# nlmon_wait REGEX: a monitor line after the mark matches (grep -E), 20 s.
nlmon_wait() {
	local _

	for _ in $(seq 100); do
		nlmon_seen "$1" && return 0
		sleep 0.2
	done
	echo "no event matching '$1' since line $MARK; got:"
	nlmon_since_mark
	return 1
}

nlmon_action() {	# ADDR ACTION
	nlmon_wait "^dev-change-ntf address=$1 .*action=$2( |\$)"
}

# ------------------------------------------------- allocations, VFIO --

# Allocations and the VFIO users that hold their devices, through gpuctl-nl
# and vfio_open. As above, the caller provides TMP; ALLOCS holds the ids of
# the allocations it made (for nl_allocs_cleanup).

# nl_alloc_new ARGS...: gpuctl-nl alloc-new; the reply goes to $TMP/alloc
# and the new id to ALLOC (and ALLOCS).
ALLOC=
ALLOCS=()
nl_alloc_new() {
	ALLOC=
	gpuctl-nl alloc-new "$@" >"$TMP/alloc" 2>"$TMP/err" || {
		print_file "" "$TMP/alloc" "$TMP/err"
		return 1
	}
	print_file "" "$TMP/alloc"
	id_of alloc "$TMP/alloc" || return 1
	ALLOC=$ID
	ALLOCS+=("$ALLOC")
}

nl_alloc_del() {	# ID
	local id=$1 a keep=()

	gpuctl-nl alloc-del id "$id" 2>"$TMP/err" || { print_file "" "$TMP/err"; return 1; }
	for a in "${ALLOCS[@]}"; do
		[ "$a" = "$id" ] || keep+=("$a")
	done
	ALLOCS=("${keep[@]}")
}

# mdev_samples_load: the kernel's sample mdev parents, mbochs (its three
# types sharing a 96 MB pool: 24 small, 6 medium, 1 large) and mtty, from
# $SAMPLES (scripts/build-mdev-samples.sh).
mdev_samples_load() {
	local ko

	for ko in mbochs mtty; do
		[ -f "$SAMPLES/$ko.ko" ] || { echo "no $SAMPLES/$ko.ko"; return 1; }
	done
	modprobe -a vfio_iommu_type1 mdev || return 1
	insmod "$SAMPLES/mbochs.ko" count=96 && insmod "$SAMPLES/mtty.ko"
}

# gpuctl_udevd_start CONF: a real systemd-udevd with the packaged udev
# rule (packaging/udev/90-gpuctl.rules), pointed at CONF and at the gpuctl
# on PATH. The guest has no udev of its own; gpuctl_udevd_stop ends it.
GPUCTL_UDEVD=
gpuctl_udevd_start() {
	local conf=$1 rules=/run/udev/rules.d tool

	tool=$(command -v gpuctl) || return 1
	mkdir -p "$rules" || return 1
	sed -e "s|/etc/gpuctl/gpuctl.conf|$conf|g" -e "s|/usr/sbin/gpuctl|$tool|" \
		"$GPUCTL_ROOT/packaging/udev/90-gpuctl.rules" >"$rules/90-gpuctl.rules" ||
		return 1
	grep -q "RUN+=\"$tool apply $conf\"" "$rules/90-gpuctl.rules" || return 1
	/lib/systemd/systemd-udevd --daemon || return 1
	GPUCTL_UDEVD=1
}

gpuctl_udevd_stop() {
	[ -n "$GPUCTL_UDEVD" ] || return 0
	udevadm control --exit
	rm -f /run/udev/rules.d/90-gpuctl.rules
	GPUCTL_UDEVD=
}

# ---------------------------------------------------------- vendor VFs --

# NVIDIA-style vendor VFs on QEMU's SR-IOV nvme (11:00.0, VFs 11:00.1-4)
# of the "full" topology, played by selftests/modules/vgpu_test_vf.c from
# $SAMPLES: the PF on "nvidia" through driver_override, as NVIDIA's driver
# holds it, and VFs enabled without autoprobe.
VVF_PF=0000:11:00.0

# vendor_vf_rig_start: the stand-in loaded and the PF on it
vendor_vf_rig_start() {
	local pf=/sys/bus/pci/devices/$VVF_PF

	[ -f "$SAMPLES/vgpu_test_vf.ko" ] || { echo "no $SAMPLES/vgpu_test_vf.ko"; return 1; }
	modprobe -a vfio_pci_core vfio_iommu_type1 || return 1
	# the other test parent is "nvidia" too
	rmmod vgpu_test_parent 2>/dev/null
	insmod "$SAMPLES/vgpu_test_vf.ko" || return 1
	expect_pci_driver "$VVF_PF" nvme 0 &&
	echo "$VVF_PF" >"$pf/driver/unbind" &&
	echo nvidia >"$pf/driver_override" &&
	echo "$VVF_PF" >/sys/bus/pci/drivers_probe &&
	expect_pci_driver "$VVF_PF" nvidia 0 &&
	echo 0 >"$pf/sriov_drivers_autoprobe"
}

# vendor_vf_rig_stop: every VF's type cleared and the VFs gone, the PF
# back on nvme, as the other tests expect it
vendor_vf_rig_stop() {
	local pf=/sys/bus/pci/devices/$VVF_PF d

	for d in /sys/bus/pci/devices/*/nvidia/current_vgpu_type; do
		[ -e "$d" ] && echo 0 >"$d" 2>/dev/null
	done
	echo 0 >"$pf/sriov_numvfs"
	echo 1 >"$pf/sriov_drivers_autoprobe"
	[ -e "$pf/driver" ] && echo "$VVF_PF" >"$pf/driver/unbind"
	echo >"$pf/driver_override"
	rmmod vgpu_test_vf 2>/dev/null
	echo "$VVF_PF" >/sys/bus/pci/drivers_probe
}

vf_type() {	# VF: its current_vgpu_type per sysfs
	cat "/sys/bus/pci/devices/$1/nvidia/current_vgpu_type"
}

# Removes every mdev instance (vGPU) on the host, for a test's cleanup.
mdevs_remove_all() {
	local d

	for d in /sys/bus/mdev/devices/*; do
		[ -e "$d/remove" ] && echo 1 >"$d/remove"
	done
}

# Deletes every allocation, for a test's cleanup, the way nl_rules_cleanup
# deletes rules: an allocation keeps its rule's devices and the module.
nl_allocs_cleanup() {
	local id

	for id in "${ALLOCS[@]}" $(gpuctl-nl alloc-dump 2>/dev/null |
				   sed -n 's/^alloc id=\([0-9]*\) .*/\1/p'); do
		gpuctl-nl alloc-del id "$id" >/dev/null 2>&1
	done
	ALLOCS=()
}

# nl_alloc_has ID 'key=value'...: gpuctl-nl alloc-get shows every pair.
nl_alloc_has() {
	local line

	line=$(gpuctl-nl alloc-get "$1") || return 1
	line_has "allocation $1" "$line" "${@:2}"
}

# nl_dev_has_not ADDR KEY: gpuctl-nl dev-get shows no KEY= at all.
nl_dev_has_not() {
	local line

	line=$(gpuctl-nl dev-get "$1") || return 1
	case " $line" in
	*" $2="*) echo "$1: $2 in: $line"; return 1 ;;
	esac
}

# nl_dev_wait SECONDS CHECK ADDR ARGS...: CHECK (nl_dev_has, nl_dev_has_not)
# passes within SECONDS, for what gpuctl learns a moment later (an open it
# observes); when it does not, CHECK says why.
nl_dev_wait() {
	local secs=$1
	shift

	wait_for "$secs" "$@" >/dev/null 2>&1 || "$@"
}

# The module's reference count: one per allocation and per open tracked
# device, besides whatever else holds it.
gpuctl_refcnt() {
	cat /sys/module/gpuctl/refcnt
}

# vfio_open_start ADDR [PREFIX...]: starts vfio_open on ADDR, run through
# PREFIX (setpriv ...) if given, and waits until it holds the device. Its
# output goes to $TMP/vfio, its pid to VFIO_PID. Fails, printing vfio_open's
# error, when it exits instead.
VFIO_PID=
vfio_open_start() {
	local addr=$1 _
	shift

	"$@" vfio_open "$addr" >"$TMP/vfio" 2>&1 &
	VFIO_PID=$!
	for _ in $(seq 150); do
		grep -q '^open ' "$TMP/vfio" && { cat "$TMP/vfio"; return 0; }
		kill -0 "$VFIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/vfio"
	kill "$VFIO_PID" 2>/dev/null
	wait "$VFIO_PID"
	VFIO_PID=
	return 1
}

# vfio_open_fails ADDR ERROR [PREFIX...]: vfio_open on ADDR exits with its
# VFIO error status 2 and prints ERROR (e.g. "Operation not permitted").
vfio_open_fails() {
	local addr=$1 err=$2 rc=0
	shift 2

	timeout 30 "$@" vfio_open "$addr" 1 >"$TMP/vfio" 2>&1 || rc=$?
	cat "$TMP/vfio"
	[ "$rc" = 2 ] || { echo "vfio_open exited with $rc, want 2"; return 1; }
	grep -q "$err" "$TMP/vfio" || { echo "no '$err' from vfio_open"; return 1; }
}

# vfio_open_close: makes vfio_open close the device fd and waits for it
# to say so; the process stays (vfio_open_stop ends it).
vfio_open_close() {
	local _

	kill -USR1 "$VFIO_PID" || return 1
	for _ in $(seq 100); do
		grep -q '^closed ' "$TMP/vfio" && return 0
		sleep 0.1
	done
	echo "vfio_open did not close the device"
	return 1
}

vfio_open_stop() {
	[ -n "$VFIO_PID" ] || return 0
	kill "$VFIO_PID" 2>/dev/null
	wait "$VFIO_PID"
	VFIO_PID=
}

# vfio_node_open_to_all ADDR: lets any user open ADDR's /dev/vfio/N, as
# libvirt's chown to the QEMU user would; vfio_nodes_restore undoes it.
VFIO_NODES=()
vfio_node_open_to_all() {
	local node

	node=/dev/vfio/$(pci_group_of "$1") || return 1
	VFIO_NODES+=("$node:$(stat -c %a "$node")")
	echo "# chmod 0666 $node"
	chmod 0666 "$node"
}

vfio_nodes_restore() {
	local n

	for n in "${VFIO_NODES[@]}"; do
		[ -e "${n%:*}" ] && chmod "${n##*:}" "${n%:*}"
	done
	VFIO_NODES=()
}

# -------------------------------------------------------- nested QEMU --

# A real QEMU inside the test guest as the VFIO user (the guest's root is
# the host's, so its QEMU is the host's): a stopped (-S) q35 machine under
# TCG that opens its assigned device while it sets the machine up, without
# running a guest. VFIO pins its RAM: the caller raises the memlock limit
# (ulimit -l unlimited) and loads vfio_iommu_type1. As above, the caller
# provides TMP. QEMU_PID is the running QEMU's (qemu_kill, for the cleanup
# trap), QEMU_OUT its output, QEMU_SOCK its QMP socket; QEMU_TIMEOUT
# bounds every wait for it.
QEMU_PID=
QEMU_OUT=
QEMU_SOCK=
QEMU_RC=
QEMU_TIMEOUT=60
# where the QMP sockets go: $TMP unless the caller names a directory a
# QEMU run as another uid may create its socket in
QEMU_SOCK_DIR=

# qemu_start NAME DEVICE [PREFIX...]: starts that QEMU in the background
# with "-device DEVICE" (vfio-pci,host=ADDR or vfio-pci,sysfsdev=PATH), run
# through PREFIX (setpriv ...) if given. Its output goes to $TMP/NAME.out,
# its QMP socket is NAME.sock in QEMU_SOCK_DIR.
qemu_start() {
	local name=$1 dev=$2 guest=()
	shift 2

	QEMU_OUT=$TMP/$name.out
	QEMU_SOCK=${QEMU_SOCK_DIR:-$TMP}/$name.sock
	# QEMU_GUEST: the guest name, as libvirt passes the domain's
	[ -n "${QEMU_GUEST:-}" ] && guest=(-name "guest=$QEMU_GUEST,debug-threads=on")
	echo "# qemu-system-x86_64 -S ${guest[*]} ... -device $dev${*:+ ($*)}"
	"$@" qemu-system-x86_64 -S -nodefaults -no-user-config -display none \
		"${guest[@]}" -machine q35 -m 64 -accel tcg \
		-device "$dev" \
		-qmp "unix:$QEMU_SOCK,server=on,wait=off" \
		>"$QEMU_OUT" 2>&1 &
	QEMU_PID=$!
}

# qemu_ready: until QEMU answers on QMP, i.e. it built the machine and
# opened its device; fails, printing its output, when it exits first or
# after QEMU_TIMEOUT.
qemu_ready() {
	local deadline=$((SECONDS + QEMU_TIMEOUT))

	until printf '{"execute": "qmp_capabilities"}\n{"execute": "query-status"}\n' |
		socat -t 5 - "UNIX-CONNECT:$QEMU_SOCK" 2>/dev/null | grep -q '"status"'; do
		if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$QEMU_PID" 2>/dev/null; then
			cat "$QEMU_OUT"
			return 1
		fi
		sleep 0.5
	done
}

# qemu_reap: waits for QEMU to exit and prints its output; its exit status
# goes to QEMU_RC. Fails when it had to kill QEMU, still running after
# QEMU_TIMEOUT.
qemu_reap() {
	local rc=0

	if ! timeout "$QEMU_TIMEOUT" tail --pid="$QEMU_PID" -f /dev/null; then
		echo "QEMU $QEMU_PID still running after $QEMU_TIMEOUT s, killed"
		kill -9 "$QEMU_PID"
		rc=1
	fi
	QEMU_RC=0
	wait "$QEMU_PID" || QEMU_RC=$?
	QEMU_PID=
	cat "$QEMU_OUT"
	echo "# QEMU exited with $QEMU_RC"
	return $rc
}

# qemu_quit: QMP "quit", then QEMU must exit 0.
qemu_quit() {
	printf '{"execute": "qmp_capabilities"}\n{"execute": "quit"}\n' |
		socat -t 10 - "UNIX-CONNECT:$QEMU_SOCK" || return 1
	qemu_reap && [ "$QEMU_RC" = 0 ]
}

# qemu_kill: for a test's cleanup, kills the QEMU qemu_start left running.
qemu_kill() {
	[ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null
	QEMU_PID=
}

# ------------------------------------------------------------ cleanup --

# lib_cleanup: lib.sh's part of a test's cleanup trap. Stops what its
# helpers started (vfio_open, the gpuctl-nl monitor) and deletes every
# allocation, then every rule (an allocation keeps its rule's devices),
# so that the next test starts from devices on their host drivers.
lib_cleanup() {
	vfio_open_stop
	nlmon_stop
	nl_allocs_cleanup
	nl_rules_cleanup
}
