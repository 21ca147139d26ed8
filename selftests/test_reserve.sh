#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Reservation rules against sysfs, through the independent client
# gpuctl-nl: a GPU held by its host driver, taken, kept on vfio-pci against
# unbinds and foreign overrides, and given back; whole IOMMU groups with
# companions, foreign members and bridges; a rule-del refused while a VFIO
# user holds the device; a hot-plugged GPU that never meets its host
# driver; rules from the module parameter; and unprivileged callers. Every
# change must be announced on the monitor group, which gpuctl-nl records
# for the whole run.
#
# The "full" topology's devices are used by address (topologies/full):
# 01:00.0 bochs, 05:00.0 without a driver, 07:00.0 bochs + 07:00.1 HDA in
# one group, 08:00.0 bridge + 09:01.0 bochs + 09:02.0 e1000 in one group,
# and the empty hot-plug port hp3 (00:1c.0).

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_reserve.XXXXXX)
MON_PID=
VFIO_PID=
PLUGGED=
RULES=()

GPU=0000:01:00.0
FREE=0000:05:00.0
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
PB_BRIDGE=0000:08:00.0
PB_GPU=0000:09:01.0
PB_NIC=0000:09:02.0
HP_PORT=hp3
HP_PORT_ADDR=0000:00:1c.0

cleanup() {
	local id

	[ -n "$VFIO_PID" ] && kill "$VFIO_PID" 2>/dev/null
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	wait 2>/dev/null
	for id in "${RULES[@]}"; do
		gpuctl-nl rule-del id "$id" >/dev/null 2>&1
	done
	[ -n "$PLUGGED" ] && qmp device_del "{\"id\": \"$PLUGGED\"}" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# ------------------------------------------------------------ sysfs --

drv_of() {	# ADDR: its driver per sysfs, empty when none
	local l

	l=$(readlink "$SYS_PCI/$1/driver") || return 0
	echo "${l##*/}"
}

ovr_of() {	# ADDR: its driver_override, empty when cleared
	local o

	o=$(<"$SYS_PCI/$1/driver_override")
	[ "$o" = "(null)" ] || echo "$o"
}

expect_driver() {	# ADDR DRIVER [SECONDS]: "" = no driver
	if ! wait_for "${3:-15}" _driver_is "$1" "$2"; then
		echo "$1 is on '$(drv_of "$1")', want '$2'"
		return 1
	fi
	echo "$1 on '$2'"
}

expect_override() {	# ADDR OVERRIDE
	local o

	o=$(ovr_of "$1")
	[ "$o" = "$2" ] && return 0
	echo "$1 driver_override '$o', want '$2'"
	return 1
}

# Every PCI function's driver and override, to show nothing changed.
pci_snapshot() {
	local d

	for d in "$SYS_PCI"/*; do
		echo "${d##*/} $(drv_of "${d##*/}") $(ovr_of "${d##*/}")"
	done
}

# ------------------------------------------------------------ netlink --

# rule_new ARGS...: gpuctl-nl rule-new; the reply goes to $TMP/rule and the
# new id to RULE (and RULES, for the cleanup).
RULE=
rule_new() {
	RULE=
	gpuctl-nl rule-new "$@" >"$TMP/rule" 2>"$TMP/err" || {
		cat "$TMP/rule" "$TMP/err"
		return 1
	}
	cat "$TMP/rule"
	RULE=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rule")
	[ -n "$RULE" ] || return 1
	RULES+=("$RULE")
}

rule_del() {	# ID
	local id=$1 r keep=()

	gpuctl-nl rule-del id "$id" 2>"$TMP/err" || { cat "$TMP/err"; return 1; }
	for r in "${RULES[@]}"; do
		[ "$r" = "$id" ] || keep+=("$r")
	done
	RULES=("${keep[@]}")
}

# dev_has ADDR 'key=value'...: gpuctl-nl dev-get shows every pair.
dev_has() {
	local a=$1 kv line
	shift

	line=$(gpuctl-nl dev-get "$a") || return 1
	for kv in "$@"; do
		case " $line " in
		*" $kv "*) ;;
		*) echo "$a: no $kv in: $line"; return 1 ;;
		esac
	done
}

# dev_lacks ADDR 'key=value': gpuctl-nl dev-get does not show the pair.
dev_lacks() {
	local line

	line=$(gpuctl-nl dev-get "$1") || return 1
	case " $line " in
	*" $2 "*) echo "$1: $2 in: $line"; return 1 ;;
	esac
}

dev_reason() {	# ADDR: its state_reason, the rest of the line
	gpuctl-nl dev-get "$1" | sed -n 's/.* state_reason=//p'
}

rule_lists() {	# ADDR: the last rule reply lists ADDR
	grep -q -E "devices=([^ ]*,)?$1(,| |$)" "$TMP/rule"
}

rule_has_dev() {	# ADDR: the same, saying so when not
	rule_lists "$1" || { echo "rule does not list $1"; return 1; }
}

group_of() {	# ADDR
	local g

	g=$(readlink "$SYS_PCI/$1/iommu_group") || return 1
	echo "${g##*/}"
}

# ------------------------------------------------------------ monitor --

start_monitor() {
	gpuctl-nl monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_subscribed "$MON_PID" "$(monitor_group_id)" && return 0
	kill "$MON_PID"
	MON_PID=
	return 1
}

stop_monitor() {
	[ -n "$MON_PID" ] || return 0
	kill "$MON_PID"
	wait "$MON_PID" 2>/dev/null
	MON_PID=
}

# Events are looked for after the mark each stage sets when it starts, so
# an earlier stage's event cannot stand in for this one's.
MARK=0
mark() {
	MARK=$(wc -l <"$TMP/mon")
}

since_mark() {
	tail -n +$((MARK + 1)) "$TMP/mon"
}

# wait_event REGEX: a monitor line after the mark matches (grep -E), 20 s.
wait_event() {
	local _

	for _ in $(seq 100); do
		since_mark | grep -q -E "$1" && return 0
		sleep 0.2
	done
	echo "no event matching '$1' since line $MARK; got:"
	since_mark
	return 1
}

action_event() {	# ADDR ACTION
	wait_event "^dev-change-ntf address=$1 .*action=$2( |\$)"
}

# ------------------------------------------------------------- stages --

check_eperm() {
	local who=(setpriv --reuid=65534 --regid=65534 --clear-groups) rc=0 cmd

	# a rule for no device, for the unprivileged to try to delete and read
	rule_new abcd:ef01 || return 1
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
	rule_del "$RULE" || rc=1
	return $rc
}

check_held() {
	mark
	rule_new "$GPU" || return 1
	rule_has_dev "$GPU" || return 1
	expect_driver "$GPU" bochs-drm 0 || return 1
	dev_has "$GPU" reserved=1 state=held "rule=$RULE" || return 1
	dev_reason "$GPU" | grep -q bochs-drm ||
		{ echo "held without naming bochs-drm: '$(dev_reason "$GPU")'"; return 1; }
	wait_event "^rule-new-ntf id=$RULE match=$GPU "
}

check_held_del() {
	mark
	rule_del "$RULE" || return 1
	expect_driver "$GPU" bochs-drm 0 || return 1
	expect_override "$GPU" "" || return 1
	dev_has "$GPU" state=free || return 1
	wait_event "^rule-del-ntf id=$RULE match=$GPU "
}

check_take() {
	mark
	rule_new "$GPU" take || return 1
	grep -q ' take=1' "$TMP/rule" || { echo "reply without take"; return 1; }
	# rule-new returns after enforcement
	expect_driver "$GPU" vfio-pci 0 || return 1
	expect_override "$GPU" vfio-pci || return 1
	dev_has "$GPU" reserved=1 state=reserved "rule=$RULE" driver=vfio-pci || return 1
	wait_event "^rule-new-ntf id=$RULE match=$GPU " &&
	action_event "$GPU" taken
}

check_sticky_unbind() {
	mark
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	expect_driver "$GPU" vfio-pci || return 1
	expect_override "$GPU" vfio-pci || return 1
	action_event "$GPU" restored
}

check_sticky_override_cleared() {
	mark
	write_to "" "$SYS_PCI/$GPU/driver_override"
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	expect_driver "$GPU" vfio-pci || return 1
	expect_override "$GPU" vfio-pci || return 1
	action_event "$GPU" restored
}

check_sticky_other_driver() {
	mark
	write_to bochs-drm "$SYS_PCI/$GPU/driver_override"
	write_to "$GPU" /sys/bus/pci/drivers/vfio-pci/unbind
	write_to "$GPU" /sys/bus/pci/drivers_probe
	action_event "$GPU" restored || return 1
	expect_driver "$GPU" vfio-pci || return 1
	expect_override "$GPU" vfio-pci || return 1
	# and it stays there
	sleep 2
	expect_driver "$GPU" vfio-pci 0 && dev_has "$GPU" state=reserved
}

check_release() {
	mark
	rule_del "$RULE" || return 1
	expect_override "$GPU" "" || return 1
	expect_driver "$GPU" bochs-drm 30 || return 1
	dev_has "$GPU" state=free || return 1
	wait_event "^rule-del-ntf id=$RULE match=$GPU " &&
	action_event "$GPU" released
}

check_companion() {
	local g

	mark
	rule_new "$MF_GPU" take || return 1
	rule_has_dev "$MF_GPU" && rule_has_dev "$MF_HDA" || return 1
	expect_driver "$MF_GPU" vfio-pci 0 && expect_driver "$MF_HDA" vfio-pci 0 || return 1
	dev_has "$MF_HDA" reserved=1 state=reserved "rule=$RULE" || return 1
	g=$(group_of "$MF_GPU") || return 1
	gpuctl-nl group-get "$g" | grep -q ' viable=1 ' ||
		{ gpuctl-nl group-get "$g"; return 1; }
	action_event "$MF_GPU" taken && action_event "$MF_HDA" taken
}

check_companion_release() {
	mark
	rule_del "$RULE" || return 1
	expect_driver "$MF_GPU" bochs-drm 30 && expect_driver "$MF_HDA" snd_hda_intel 30 ||
		return 1
	expect_override "$MF_GPU" "" && expect_override "$MF_HDA" "" || return 1
	action_event "$MF_GPU" released && action_event "$MF_HDA" released
}

BRIDGE_DRV=
check_foreign_left() {
	local g line

	BRIDGE_DRV=$(drv_of "$PB_BRIDGE")
	mark
	rule_new "$PB_GPU" take || return 1
	expect_driver "$PB_GPU" vfio-pci 0 || return 1
	# the NIC of another slot is not touched without force
	expect_driver "$PB_NIC" e1000 0 && expect_override "$PB_NIC" "" || return 1
	rule_lists "$PB_NIC" && { echo "rule lists the foreign $PB_NIC"; return 1; }
	grep -q -E " warning=.*$PB_NIC" "$TMP/rule" ||
		{ echo "no warning naming $PB_NIC"; return 1; }
	dev_lacks "$PB_NIC" reserved=1 || return 1
	g=$(group_of "$PB_GPU") || return 1
	line=$(gpuctl-nl group-get "$g") || return 1
	echo "$line"
	case $line in
	*" viable=0 "*"reason="*"$PB_NIC"*e1000*) ;;
	*) echo "group $g not reported blocked by $PB_NIC on e1000"; return 1 ;;
	esac
	expect_driver "$PB_BRIDGE" "$BRIDGE_DRV" 0 && expect_override "$PB_BRIDGE" "" ||
		return 1
	action_event "$PB_GPU" taken || return 1
	! since_mark | grep -E "^dev-change-ntf address=$PB_NIC .*action=" ||
		{ echo "gpuctl acted on $PB_NIC"; return 1; }
	rule_del "$RULE" && expect_driver "$PB_GPU" bochs-drm 30
}

check_force() {
	local g

	mark
	rule_new "$PB_GPU" take force || return 1
	grep -q ' force=1' "$TMP/rule" || { echo "reply without force"; return 1; }
	rule_has_dev "$PB_GPU" && rule_has_dev "$PB_NIC" || return 1
	rule_lists "$PB_BRIDGE" && { echo "rule lists the bridge"; return 1; }
	expect_driver "$PB_GPU" vfio-pci 0 && expect_driver "$PB_NIC" vfio-pci 0 || return 1
	expect_driver "$PB_BRIDGE" "$BRIDGE_DRV" 0 && expect_override "$PB_BRIDGE" "" ||
		return 1
	g=$(group_of "$PB_GPU") || return 1
	gpuctl-nl group-get "$g" | grep -q ' viable=1 ' ||
		{ gpuctl-nl group-get "$g"; return 1; }
	action_event "$PB_NIC" taken || return 1
	mark
	rule_del "$RULE" || return 1
	expect_driver "$PB_GPU" bochs-drm 30 && expect_driver "$PB_NIC" e1000 30 || return 1
	expect_override "$PB_NIC" "" || return 1
	action_event "$PB_NIC" released && action_event "$PB_GPU" released
}

check_busy() {
	local _ rc=0

	modprobe vfio_iommu_type1 2>/dev/null
	rule_new "$FREE" || return 1
	expect_driver "$FREE" vfio-pci 0 || return 1
	vfio_open "$FREE" >"$TMP/vfio" 2>&1 &
	VFIO_PID=$!
	for _ in $(seq 100); do
		grep -q '^open' "$TMP/vfio" && break
		kill -0 "$VFIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/vfio"
	grep -q '^open' "$TMP/vfio" || return 1
	gpuctl-nl rule-dump >"$TMP/rules.before"
	mark
	if gpuctl-nl rule-del id "$RULE" 2>"$TMP/err"; then
		echo "rule-del succeeded while $FREE is open"
		rc=1
	else
		cat "$TMP/err"
		grep -q 'Device or resource busy (errno 16)' "$TMP/err" &&
		grep -q "$FREE" "$TMP/err" || rc=1
	fi
	gpuctl-nl rule-dump | diff -u "$TMP/rules.before" - || rc=1
	expect_driver "$FREE" vfio-pci 0 && expect_override "$FREE" vfio-pci || rc=1
	since_mark | grep -E "^rule-del-ntf|^dev-change-ntf address=$FREE " && rc=1
	kill "$VFIO_PID"
	wait "$VFIO_PID"
	VFIO_PID=
	[ $rc = 0 ] || return 1
	# the VM is gone: the rule goes
	mark
	rule_del "$RULE" || return 1
	expect_override "$FREE" "" && expect_driver "$FREE" "" || return 1
	action_event "$FREE" released
}

HP_ADDR=
check_hotplug() {
	local bus

	bus=$(<"$SYS_PCI/$HP_PORT_ADDR/secondary_bus_number") || return 1
	HP_ADDR=$(printf '0000:%02x:00.0' "$bus")
	[ ! -e "$SYS_PCI/$HP_ADDR" ] || { echo "$HP_ADDR exists already"; return 1; }
	rule_new "$HP_ADDR" || return 1
	mark
	qmp device_add "{\"driver\": \"bochs-display\", \"id\": \"rsvgpu\",
		\"bus\": \"$HP_PORT\", \"addr\": \"0.0\"}" || return 1
	PLUGGED=rsvgpu
	wait_for_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	expect_driver "$HP_ADDR" vfio-pci 60 || return 1
	expect_override "$HP_ADDR" vfio-pci || return 1
	wait_event "^dev-add-ntf address=$HP_ADDR " || return 1
	# vfio-pci, loaded by now, may bind it in the kernel's own probe
	action_event "$HP_ADDR" '(claimed|bound)' || return 1
	dev_has "$HP_ADDR" reserved=1 state=reserved "rule=$RULE" || return 1
	# its host driver never had it
	! since_mark | grep -E "^dev-change-ntf address=$HP_ADDR .*driver=bochs-drm" ||
		{ echo "bochs-drm bound $HP_ADDR"; return 1; }
}

check_hotplug_release() {
	[ -n "$HP_ADDR" ] || return 1
	mark
	rule_del "$RULE" || return 1
	expect_driver "$HP_ADDR" bochs-drm 60 || return 1
	action_event "$HP_ADDR" released || return 1
	# QEMU 7.2 may miss the guest's eject of a display (test_hotplug.sh)
	qmp device_del "{\"id\": \"$PLUGGED\"}" || return 1
	wait_for_no_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	PLUGGED=
}

check_param() {
	local lines

	[ ${#RULES[@]} -eq 0 ] || { echo "rules left: ${RULES[*]}"; return 1; }
	stop_monitor
	gpuctl_unload || return 1
	lines=$(dmesg | wc -l)
	gpuctl_load "reserve=$GPU,bogus" take=1 dyndbg=+p || return 1
	dmesg | tail -n +$((lines + 1)) | grep 'gpuctl' >"$TMP/dmesg"
	cat "$TMP/dmesg"
	grep -q "gpuctl: reserve: bad rule 'bogus': .*, skipped" "$TMP/dmesg" ||
		{ echo "no log line for the bad rule"; return 1; }
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ "$(wc -l <"$TMP/rules")" = 1 ] || return 1
	grep -q "^rule id=[0-9]* match=$GPU .*source=param" "$TMP/rules" || return 1
	RULE=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rules")
	RULES+=("$RULE")
	expect_driver "$GPU" vfio-pci 30 && expect_override "$GPU" vfio-pci || return 1
	dev_has "$GPU" reserved=1 state=reserved "rule=$RULE" || return 1
	# a parameter rule is deleted like any other
	rule_del "$RULE" || return 1
	expect_override "$GPU" "" && expect_driver "$GPU" bochs-drm 30
}

check_no_rules() {
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ ! -s "$TMP/rules" ]
}

ktap_header
ktap_plan 17
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
[ -c "$GPUCTL_QMP" ] || { ktap_info "no QMP device"; exit 1; }
start_monitor || ktap_info "gpuctl-nl monitor did not start"

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
ktap_run_stage "group: the HDA companion is taken with its GPU" check_companion
ktap_run_stage "group: rule-del gives GPU and HDA back to their drivers" \
	check_companion_release
ktap_run_stage "group: foreign e1000 left alone, group not viable, rule warns" \
	check_foreign_left
ktap_run_stage "group: force takes the e1000 too, never the bridge" check_force
ktap_run_stage "busy: rule-del refused while vfio_open holds the device" check_busy
ktap_run_stage "hot-plug: a reserved address comes up on vfio-pci, never bochs-drm" \
	check_hotplug
ktap_run_stage "hot-plug: rule-del gives it to bochs-drm, device_del" check_hotplug_release
ktap_run_stage "module parameter: bad rule logged and skipped, good rule applied" \
	check_param
stop_monitor
# The parameter stage reloaded the module: nothing must be left reserved.
ktap_run_stage "no rule left behind" check_no_rules

gpuctl_unload
ktap_finished
