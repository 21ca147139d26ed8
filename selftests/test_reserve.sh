#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Reservation rules against sysfs, through the independent client
# gpuctl-nl: unprivileged callers refused; a GPU held by its host driver,
# taken, kept on vfio-pci against unbinds and foreign overrides, and given
# back; a rule-del refused while a VFIO user holds the device; rules from
# the module parameter. Every change must be announced on the monitor
# group, which gpuctl-nl records for the whole run. Whole groups and
# hot-plug are in test_reserve_groups.sh.
#
# rule-new never waits on a driver: while a sysfs unbind of 05:00.0 waits
# for the VFIO user that holds it (holding the device's lock), "gpuctl
# reserve add" of it gets its reply at once, and the tool waits for the
# kernel's worker itself, then says the device is still pending. Meanwhile
# a module with a genetlink family of its own (wireguard) loads and
# unloads, which takes genetlink's cb_lock for writing, and "genl ctrl
# list" answers: a handler that slept under cb_lock would stall both, and
# every genetlink family of the host with them.
#
# Devices of the "full" topology (topologies/full): 01:00.0 bochs and
# 05:00.0, which no driver binds.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_reserve.XXXXXX)
VFIO_PID=
BG_PID=
GPU=0000:01:00.0
FREE=0000:05:00.0

cleanup() {
	[ -n "$VFIO_PID" ] && kill "$VFIO_PID" 2>/dev/null
	[ -n "$BG_PID" ] && kill "$BG_PID" 2>/dev/null
	nlmon_stop
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

check_eperm() {
	local who=(setpriv --reuid=65534 --regid=65534 --clear-groups) rc=0 cmd

	# a rule for no device, for the unprivileged to try to delete and read
	nl_rule_new abcd:ef01 || return 1
	pci_snapshot >"$TMP/pci.before"
	gpuctl-nl rule-dump >"$TMP/rules.before" || return 1
	for cmd in "rule-new $GPU take" "rule-new $FREE" "rule-del id $RULE" \
		   "rule-del match abcd:ef01" "rule-get $RULE" "rule-dump"; do
		# shellcheck disable=SC2086 # the command's words
		if "${who[@]}" gpuctl-nl $cmd >"$TMP/out" 2>"$TMP/err"; then
			echo "nobody: gpuctl-nl $cmd succeeded:"
			cat "$TMP/out"
			rc=1
		elif ! grep -q 'Operation not permitted (errno 1)' "$TMP/err"; then
			echo "nobody: gpuctl-nl $cmd: not EPERM:"
			cat "$TMP/err"
			rc=1
		fi
	done
	# reading the inventory stays open
	"${who[@]}" gpuctl-nl dev-dump >"$TMP/out" || rc=1
	grep -q "^dev address=$GPU " "$TMP/out" || { echo "nobody: no dev-dump"; rc=1; }
	"${who[@]}" gpuctl-nl dev-get "$GPU" >/dev/null || rc=1
	gpuctl-nl rule-dump >"$TMP/rules.after" || return 1
	diff -u "$TMP/rules.before" "$TMP/rules.after" || rc=1
	pci_snapshot | diff -u "$TMP/pci.before" - || rc=1
	nl_rule_del "$RULE" || rc=1
	return "$rc"
}

check_held() {
	local reason

	nlmon_mark
	nl_rule_new "$GPU" || return 1
	nl_rule_has_dev "$GPU" || return 1
	expect_pci_driver "$GPU" bochs-drm 0 || return 1
	nl_dev_has "$GPU" reserved=1 state=held "rule=$RULE" || return 1
	reason=$(nl_dev_reason "$GPU") || return 1
	case $reason in
	*bochs-drm*) ;;
	*) echo "held without naming bochs-drm: '$reason'"; return 1 ;;
	esac
	nlmon_wait "^rule-new-ntf id=$RULE match=$GPU "
}

check_held_del() {
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$GPU" bochs-drm 0 || return 1
	expect_pci_override "$GPU" "" || return 1
	nl_dev_has "$GPU" state=free || return 1
	nlmon_wait "^rule-del-ntf id=$RULE match=$GPU "
}

check_take() {
	nlmon_mark
	nl_rule_new "$GPU" take || return 1
	grep -q ' take=1' "$TMP/rule" || { echo "reply without take"; return 1; }
	# gpuctl-nl waits until the worker acted (dev-get "pending")
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	expect_pci_override "$GPU" vfio-pci || return 1
	nl_dev_has "$GPU" reserved=1 state=reserved "rule=$RULE" driver=vfio-pci || return 1
	nlmon_wait "^rule-new-ntf id=$RULE match=$GPU " &&
	nlmon_action "$GPU" taken
}

check_sticky_unbind() {
	nlmon_mark
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	expect_pci_driver "$GPU" vfio-pci || return 1
	expect_pci_override "$GPU" vfio-pci || return 1
	nlmon_action "$GPU" restored
}

check_sticky_override_cleared() {
	nlmon_mark
	write_to "" "$SYS_PCI/$GPU/driver_override"
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	expect_pci_driver "$GPU" vfio-pci || return 1
	expect_pci_override "$GPU" vfio-pci || return 1
	nlmon_action "$GPU" restored
}

check_sticky_other_driver() {
	nlmon_mark
	write_to bochs-drm "$SYS_PCI/$GPU/driver_override"
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	write_to "$GPU" /sys/bus/pci/drivers_probe
	nlmon_action "$GPU" restored || return 1
	expect_pci_driver "$GPU" vfio-pci || return 1
	expect_pci_override "$GPU" vfio-pci || return 1
	# and it stays there
	sleep 2
	expect_pci_driver "$GPU" vfio-pci 0 && nl_dev_has "$GPU" state=reserved
}

check_release() {
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$GPU" "" || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	nl_dev_has "$GPU" state=free || return 1
	nlmon_wait "^rule-del-ntf id=$RULE match=$GPU " &&
	nlmon_action "$GPU" released
}

check_busy() {
	local _ rc=0

	modprobe vfio_iommu_type1 2>/dev/null
	nl_rule_new "$FREE" || return 1
	expect_pci_driver "$FREE" vfio-pci 0 || return 1
	vfio_open "$FREE" >"$TMP/vfio" 2>&1 &
	VFIO_PID=$!
	for _ in $(seq 100); do
		grep -q '^open' "$TMP/vfio" && break
		kill -0 "$VFIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/vfio"
	grep -q '^open' "$TMP/vfio" || return 1
	gpuctl-nl rule-dump >"$TMP/rules.before" || return 1
	nlmon_mark
	if gpuctl-nl rule-del id "$RULE" 2>"$TMP/err"; then
		echo "rule-del succeeded while $FREE is open"
		rc=1
	else
		cat "$TMP/err"
		grep -q 'Device or resource busy (errno 16)' "$TMP/err" &&
		grep -q "$FREE" "$TMP/err" || rc=1
	fi
	gpuctl-nl rule-dump | diff -u "$TMP/rules.before" - || rc=1
	expect_pci_driver "$FREE" vfio-pci 0 && expect_pci_override "$FREE" vfio-pci || rc=1
	grep -E "^rule-del-ntf|^dev-change-ntf address=$FREE " < <(nlmon_since_mark) && rc=1
	kill "$VFIO_PID"
	wait "$VFIO_PID"
	VFIO_PID=
	[ "$rc" = 0 ] || return 1
	# the VM is gone: the rule goes
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$FREE" "" && expect_pci_driver "$FREE" "" || return 1
	nlmon_action "$FREE" released
}

# took CMD...: runs CMD, prints how long it took in ms to TOOK_MS.
TOOK_MS=
took() {
	local start=${EPOCHREALTIME/./} rc=0

	"$@" || rc=$?
	TOOK_MS=$(( (${EPOCHREALTIME/./} - start) / 1000 ))
	echo "# $* took $TOOK_MS ms, exit $rc" >&2
	return "$rc"
}

# family_churn NAME: loads and unloads wireguard, whose genetlink family
# (un)registers under genetlink's cb_lock taken for write, with a
# 'genl ctrl list' during each; NAME_ms gets the four times in ms. The
# family must appear and go, and gpuctl's stay listed.
family_churn() {
	local name=$1 rc=0 times

	( took modprobe wireguard; echo "$TOOK_MS" >"$TMP/modprobe.ms" ) &
	sleep 0.3
	took genl ctrl list >"$TMP/genl" || rc=1
	times=$TOOK_MS
	wait $! || rc=1
	genl ctrl list | grep -q 'Name: wireguard' || { echo "no wireguard family"; rc=1; }
	times="$(cat "$TMP/modprobe.ms") $times"
	took rmmod wireguard || rc=1
	times+=" $TOOK_MS"
	took genl ctrl list >"$TMP/genl" || rc=1
	times+=" $TOOK_MS"
	grep -q 'Name: gpuctl' "$TMP/genl" || { echo "no gpuctl family"; rc=1; }
	genl ctrl list | grep -q 'Name: wireguard' && { echo "wireguard family left"; rc=1; }
	echo "# $name: modprobe, genl, rmmod, genl: $times ms"
	printf -v "${name}_ms" '%s' "$times"
	return "$rc"
}

# FREE on vfio-pci with no rule, held by vfio_open; a sysfs unbind of it
# waits for vfio_open to let go, holding FREE's device lock.
#
# A handler that waited for that lock would hold genetlink's cb_lock for
# read the whole time: wireguard's family could not come or go, and every
# genetlink request behind it would wait. The old rule-new waited 10 s.
# The times are compared with the same churn without gpuctl work, from
# the same boot: the debug kernel is slow, and the first modprobe cold.
check_no_wait() {
	local _ i rc=0 idle_ms busy_ms idle busy

	modprobe vfio_iommu_type1 2>/dev/null
	lsmod | grep -q '^wireguard ' && { echo "wireguard is loaded already"; return 1; }
	modprobe -n wireguard || { echo "no wireguard module"; return 1; }
	family_churn idle || return 1
	write_to vfio-pci "$SYS_PCI/$FREE/driver_override" &&
	write_to "$FREE" /sys/bus/pci/drivers_probe &&
	expect_pci_driver "$FREE" vfio-pci || return 1
	vfio_open_start "$FREE" || return 1
	echo "$FREE" >/sys/bus/pci/drivers/vfio-pci/unbind &
	BG_PID=$!
	sleep 1
	kill -0 "$BG_PID" || { echo "the unbind did not wait for vfio_open"; return 1; }

	# the reply comes at once; the tool waits for the worker, which waits
	# for the device's lock, and says so after 10 s
	gpuctl reserve add "${FREE#0000:}" >"$TMP/add.out" 2>"$TMP/add.err" &
	local add_pid=$!
	for _ in $(seq 100); do
		gpuctl-nl rule-dump | grep -q "match=$FREE " && break
		sleep 0.1
	done
	gpuctl-nl dev-get "$FREE" | tee "$TMP/dev"
	grep -q ' pending=1' "$TMP/dev" || { echo "$FREE is not pending"; rc=1; }

	# another family comes and goes; genetlink keeps answering meanwhile
	family_churn busy || rc=1
	read -ra idle <<<"$idle_ms"
	read -ra busy <<<"$busy_ms"
	for i in 0 1 2 3; do
		[ "${busy[i]}" -lt $((idle[i] + 4000)) ] ||
			{ echo "step $i took ${busy[i]} ms, ${idle[i]} ms idle"; rc=1; }
	done
	kill -0 "$BG_PID" || { echo "the unbind ended early"; rc=1; }

	wait "$add_pid" || { echo "gpuctl reserve add failed"; rc=1; }
	print_file "" "$TMP/add.out" "$TMP/add.err"
	grep -q "^Warning: the kernel has not finished with $FREE after 10 s" "$TMP/add.err" ||
		{ echo "no word of the pending device"; rc=1; }
	# the VFIO user goes: the unbind ends, the worker restores FREE
	vfio_open_stop
	wait "$BG_PID"
	BG_PID=
	expect_pci_driver "$FREE" vfio-pci 30 || rc=1
	RULE=$(gpuctl-nl rule-dump | sed -n "s/^rule id=\([0-9]*\) match=$FREE .*/\1/p")
	RULES+=("$RULE")
	for _ in $(seq 100); do
		gpuctl-nl dev-get "$FREE" | grep -q ' pending=1' || break
		sleep 0.1
	done
	nl_dev_has "$FREE" state=reserved "rule=$RULE" || rc=1
	nl_dev_lacks "$FREE" pending=1 || rc=1
	nl_rule_del "$RULE" || rc=1
	expect_pci_override "$FREE" "" && expect_pci_driver "$FREE" "" || rc=1
	return "$rc"
}

check_param() {
	local mark="test_reserve.sh: loading gpuctl with reserve= ($$ $RANDOM)"

	# what a failed stage left must not count here
	nl_rules_cleanup
	nlmon_stop
	gpuctl_unload || return 1
	# A line of our own marks where the load starts: the ring buffer may
	# be full and drop old lines, so counting lines would not do.
	echo "$mark" >/dev/kmsg
	gpuctl_load "reserve=$GPU,bogus" take=1 dyndbg=+p || return 1
	dmesg | sed -n "\|$mark|,\$p" | grep 'gpuctl' >"$TMP/dmesg"
	cat "$TMP/dmesg"
	grep -q "gpuctl: reserve: bad rule 'bogus': .*, skipped" "$TMP/dmesg" ||
		{ echo "no log line for the bad rule"; return 1; }
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ "$(wc -l <"$TMP/rules")" = 1 ] || return 1
	grep -q "^rule id=[0-9]* match=$GPU .*source=param" "$TMP/rules" || return 1
	RULE=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rules")
	RULES+=("$RULE")
	expect_pci_driver "$GPU" vfio-pci 30 && expect_pci_override "$GPU" vfio-pci || return 1
	nl_dev_has "$GPU" reserved=1 state=reserved "rule=$RULE" || return 1
	# a parameter rule is deleted like any other
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$GPU" "" && expect_pci_driver "$GPU" bochs-drm 30
}

check_no_rules() {
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ ! -s "$TMP/rules" ]
}

ktap_header
ktap_plan 12
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "unprivileged: EPERM on rule-new/del/get, nothing changes, dev-get works" \
	check_eperm
ktap_run_stage "held: rule for a GPU on bochs-drm leaves it there, state held" check_held
ktap_run_stage "held: rule-del leaves it on bochs-drm, rule-del-ntf" check_held_del
ktap_run_stage "take: the GPU ends on vfio-pci, action taken" check_take
ktap_run_stage "sticky: unbound from vfio-pci, restored" check_sticky_unbind
ktap_run_stage "sticky: override cleared and unbound, restored" check_sticky_override_cleared
ktap_run_stage "sticky: override bochs-drm, unbind, drivers_probe, restored" \
	check_sticky_other_driver
ktap_run_stage "release: rule-del gives the GPU back to bochs-drm, action released" \
	check_release
ktap_run_stage "busy: rule-del refused while vfio_open holds the device" check_busy
ktap_run_stage "no wait: rule-new returns while a driver holds the device; genetlink answers" \
	check_no_wait
ktap_run_stage "module parameter: bad rule logged and skipped, good rule applied" \
	check_param
nlmon_stop
# The parameter stage reloaded the module: nothing must be left reserved.
ktap_run_stage "no rule left behind" check_no_rules

gpuctl_unload
ktap_finished
