#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl module show and gpuctl module reload, as a package upgrade runs
# them: the reload is deferred, and changes nothing, while a VFIO user
# holds a reserved device; otherwise the module is unloaded and loaded
# again (udev sees module gpuctl go and come), its rules, allocations
# (ids included) and limits carried over, and no reserved device is bound
# to any driver but gpuctl-vfio-pci at any point. Refusals (no module
# file, no privilege, no module loaded) change nothing. The ledger is
# read with the independent client gpuctl-nl, never with the tool alone.
#
# Devices of the "full" topology (topologies/full): 02:00.0 without a
# driver, reserved for gpuctl-vfio-pci (which knows who opens it), 07:00.0
# bochs + 07:00.1 HDA in one group, taken for vfio-pci.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_module_reload.XXXXXX)
FREE=0000:02:00.0
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
VM1=1b4e28ba-2fa1-11d2-883f-0016d3cca427
VM2=6f1c3a52-8d4e-4b9a-9c1e-2a7b5d9e0f11
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
UDEV_PID=

cleanup() {
	vfio_open_stop
	[ -n "$UDEV_PID" ] && kill "$UDEV_PID" 2>/dev/null
	wait 2>/dev/null
	gpuctl_load >/dev/null 2>&1
	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name acme >/dev/null 2>&1
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# What the module holds, as gpuctl-nl prints it; rule ids left out, as a
# reload numbers the rules anew
nl_state() {
	gpuctl-nl alloc-dump && gpuctl-nl limit-dump &&
		gpuctl-nl rule-dump | sed 's/^rule id=[0-9]* /rule /'
}

# Fails unless the module holds what it held at "setup"
state_unchanged() {
	nl_state >"$TMP/now" || return 1
	diff -u "$TMP/before" "$TMP/now"
}

reload_ko() {	# [PREFIX...]: gpuctl module reload ko GPUCTL_KO, captured
	run_captured "$TMP/out" "$TMP/err" "$@" gpuctl module reload ko "$GPUCTL_KO"
}

# --- stages ---------------------------------------------------------------

check_setup() {
	nl_rule_new "$FREE" driver gpuctl-vfio-pci || return 1
	nl_rule_new "$MF_GPU" take || return 1
	expect_pci_driver "$FREE" gpuctl-vfio-pci 10 || return 1
	expect_pci_driver "$MF_GPU" vfio-pci 10 || return 1
	expect_pci_driver "$MF_HDA" vfio-pci 10 || return 1
	nl_alloc_new owner "$VM1" id 41 name vm-one account acme \
		device "$FREE" || return 1
	nl_alloc_new owner "$VM2" id 42 name vm-two account acme \
		device "$MF_GPU" detach-on-stop || return 1
	gpuctl-nl limit-set scope account name acme max-gpus 3 || return 1
	nl_state >"$TMP/before" || return 1
	cat "$TMP/before"
	[ "$(grep -c '^alloc ' "$TMP/before")" = 2 ] &&
		[ "$(grep -c '^limit ' "$TMP/before")" = 1 ] &&
		[ "$(grep -c '^rule ' "$TMP/before")" = 2 ]
}

# The running module's version; no module is installed for modprobe in
# the guest, so none would be loaded instead and no reload is due
check_show() {
	local words

	words=$(complete_words gpuctl module "" | sort | xargs)
	[ "$words" = "help reload show" ] || { echo "completion: $words"; return 1; }
	words=$(complete_words gpuctl module reload "" | xargs)
	[ "$words" = ko ] || { echo "completion: $words"; return 1; }
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check --arg v "$(cat /sys/module/gpuctl/version)" \
		'.running == $v and .installed == null and
		 .reload_due == false and .reload_blocked_by == []' "$TMP/out"
}

check_deferred() {
	local rc=0

	vfio_open_start "$FREE" || return 1
	reload_ko || rc=$?
	[ "$rc" = 5 ] || { echo "exit $rc, want 5 (deferred)"; return 1; }
	grep -q "^gpuctl: module reload deferred: the running module .* stays loaded" \
		"$TMP/err" || return 1
	grep -qx "$FREE is open by vfio_open\[$VFIO_PID\]" "$TMP/err" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check --arg l "$FREE is open by vfio_open[$VFIO_PID]" \
		'.reload_blocked_by == [$l]' "$TMP/out" || return 1
	vfio_open_stop
	state_unchanged
}

# udev's view of the reload: module gpuctl removed, then added, 02:00.0
# bound to gpuctl-vfio-pci again, and no other bind
check_reload() {
	udevadm monitor --kernel --property --subsystem-match=module \
		--subsystem-match=pci >"$TMP/uevents" 2>&1 &
	UDEV_PID=$!
	sleep 1
	reload_ko || return 1
	grep -qx "gpuctl: module .* loaded: 2 rules and 2 allocations carried over" \
		"$TMP/err" || return 1
	expect_pci_driver "$FREE" gpuctl-vfio-pci 10 || return 1
	expect_pci_driver "$MF_GPU" vfio-pci 0 || return 1
	expect_pci_driver "$MF_HDA" vfio-pci 0 || return 1
	sleep 1
	kill "$UDEV_PID"
	wait "$UDEV_PID" 2>/dev/null
	UDEV_PID=
	# ACTION, DEVPATH and DRIVER of each event, one line per event
	awk -F= '/^ACTION=/ { a = $2 } /^DEVPATH=/ { p = $2 }
		 /^DRIVER=/ { d = $2 }
		 /^$/ && a { print a, p, d; a = p = d = "" }' "$TMP/uevents" \
		>"$TMP/events"
	cat "$TMP/events"
	grep -q '^remove /module/gpuctl *$' "$TMP/events" || return 1
	grep -q '^add /module/gpuctl *$' "$TMP/events" || return 1
	grep -q "^bind .*/$FREE gpuctl-vfio-pci\$" "$TMP/events" || return 1
	if grep '^bind ' "$TMP/events" | grep -v "/$FREE gpuctl-vfio-pci\$"; then
		echo "a reserved device was bound to another driver"
		return 1
	fi
	state_unchanged
}

check_no_file() {
	local rc=0

	run_captured "$TMP/out" "$TMP/err" gpuctl module reload ko "$TMP/none.ko" ||
		rc=$?
	[ "$rc" = 1 ] || { echo "exit $rc, want 1"; return 1; }
	grep -qx "gpuctl: module reload: $TMP/none.ko: no gpuctl module to load" \
		"$TMP/err" || return 1
	state_unchanged
}

check_unprivileged() {
	local rc=0

	chmod 755 "$TMP"
	reload_ko "${NOBODY[@]}" || rc=$?
	[ "$rc" = 2 ] || { echo "exit $rc, want 2"; return 1; }
	grep -qx "Error: Operation not permitted" "$TMP/err" || return 1
	state_unchanged
}

# The rules go first: a device unbound by the unload keeps gpuctl's
# driver_override, and the next load would bind it again with no rule to
# release it, leaving it off its host driver for the tests after this one.
check_not_loaded() {
	local rc=0

	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name acme >/dev/null
	nl_rules_cleanup
	expect_pci_driver "$FREE" "" 10 || return 1
	expect_pci_driver "$MF_GPU" bochs-drm 10 || return 1
	expect_pci_driver "$MF_HDA" snd_hda_intel 10 || return 1
	gpuctl_unload || return 1
	reload_ko || rc=$?
	[ "$rc" = 3 ] || { echo "exit $rc, want 3"; return 1; }
	grep -qx "gpuctl: module reload: gpuctl is not loaded (modprobe gpuctl)" \
		"$TMP/err" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j module show || return 1
	json_check '.running == null and .reload_due == false' "$TMP/out" ||
		return 1
	gpuctl_load
}

ktap_header
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ktap_plan 7
ktap_run_stage "setup: two rules, two allocations with ids, a limit" check_setup
ktap_run_stage "module show: the running version; none installed, no reload due; completion" \
	check_show
ktap_run_stage "module reload while a VFIO user holds a GPU: deferred (exit 5), reason named, nothing changes" \
	check_deferred
ktap_run_stage "module reload: unloaded and loaded, rules, allocations and limits carried over, no foreign bind" \
	check_reload
ktap_run_stage "module reload ko of a missing file: refused, nothing changes" \
	check_no_file
ktap_run_stage "module reload without privilege: refused, nothing changes" \
	check_unprivileged
ktap_run_stage "module reload with no module loaded: exit 3; devices back on their drivers" \
	check_not_loaded
ktap_finished
