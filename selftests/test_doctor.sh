#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full,noiommu
#
# gpuctl doctor, the preflight of a passthrough host, against what sysfs,
# /proc and lsinitramfs say; its -j output read with jq:
#   - noiommu: the iommu and interrupt-remapping checks fail with their
#     fixes (no DMAR or IVRS table: the firmware setup), the groups check
#     skips, and the exit status is 4;
#   - full: the IOMMU units and groups of /sys/class/iommu and
#     /sys/kernel/iommu_groups, an IR- chip of /proc/interrupts, exit 0;
#     the e1000 behind the PCIe-to-PCI bridge is named as a foreign member
#     of its GPU's group (a warning, a fail once that GPU is reserved); a
#     reserved GPU that a host driver holds fails, named with its driver;
#     the rules and the ledger are counted, and need root; a GPU that a
#     module unloaded under its rule left on gpuctl-vfio-pci, bound again
#     by the next load with no rule, is a warning whose fix works;
#   - without the module the module check fails with "modprobe gpuctl";
#   - GPUCTL_DOCTOR_ROOT shows the doctor files of another host: an
#     unsigned module on a Secure Boot host fails, a command line with
#     intel_iommu=off fails, an initramfs without the softdeps fails, a
#     GPU driver without a softdep is named.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_doctor.XXXXXX)
SYS_PCI=/sys/bus/pci/devices
REL=$(uname -r)
SB_VAR=SecureBoot-8be4df61-93ca-11d2-aa0d-e98c2b4b4d33
GPU=0000:01:00.0
PB_BRIDGE=0000:08:00.0
PB_GPU=0000:09:01.0
PB_NIC=0000:09:02.0
VM=6a2d0e30-0000-4000-8000-0000000000d1
CHECKS='["module","iommu","interrupt-remapping","cmdline","groups","vfio-modules",'
CHECKS+='"initramfs","softdeps","reserved-drivers","module-signature","rules-ledger",'
CHECKS+='"vfio-holders","live-migration"]'

cleanup() {
	gpuctl alloc del owner "$VM" >/dev/null 2>&1
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# doctor OUT [gpuctl doctor's environment...]: gpuctl -j doctor's output
# in OUT and its exit status in RC, both printed
RC=
doctor() {
	local out=$1

	shift
	RC=0
	env "$@" gpuctl -j doctor >"$out" 2>"$out.err" || RC=$?
	print_file "" "$out" "$out.err"
	echo "exit $RC"
}

# check_of OUT ID: the check ID of OUT, one JSON object
check_of() {
	jq -c --arg id "$2" '.checks[] | select(.id == $id)' "$1"
}

expect_rc() {
	[ "$RC" = "$1" ] && return 0
	echo "exit $RC, want $1"
	return 1
}

# The first "IR-" chip of /proc/interrupts, as the doctor's evidence
ir_chip() {
	grep -o -m1 ' IR-[^ ]*' /proc/interrupts | sed 's/^ //'
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	[ -d /sys/module/gpuctl ] && command -v lsinitramfs cpio gzip
}

# No module: the module check fails with its fix, gpuctl's checks skip
check_no_module() {
	gpuctl_unload || return 1
	doctor "$TMP/out"
	gpuctl_load || return 1
	expect_rc 4 || return 1
	check_of "$TMP/out" module | json_check '.status == "fail" and
		.summary == "the gpuctl module is not loaded" and
		.evidence == ["/sys/module/gpuctl: absent"] and .fix == ["modprobe gpuctl"]' &&
	json_check '[.checks[] | select(.id == ("groups", "reserved-drivers", "rules-ledger"))] |
		length == 3 and all(.status == "skip" and .summary == "needs the gpuctl module")' \
		"$TMP/out" &&
	json_check '.result == "fail"' "$TMP/out"
}

# noiommu: no IOMMU, no remapping, and the fix for a firmware without tables
check_no_iommu() {
	if [ -n "$(ls /sys/class/iommu)" ] || [ -e /sys/firmware/acpi/tables/DMAR ] ||
	   [ -e /sys/firmware/acpi/tables/IVRS ]; then
		echo "not the noiommu premise"
		return 1
	fi
	doctor "$TMP/out"
	expect_rc 4 || return 1
	check_of "$TMP/out" module | json_check '.status == "pass"' &&
	check_of "$TMP/out" iommu | json_check '.status == "fail" and
		.summary == "no IOMMU is on: devices have no IOMMU groups, VFIO cannot use them" and
		.evidence == ["/sys/class/iommu: empty", "/sys/kernel/iommu_groups: 0 groups",
			"/sys/firmware/acpi/tables: no DMAR, no IVRS"] and
		.fix == ["the firmware describes no IOMMU (no DMAR or IVRS ACPI table): enable VT-d (Intel) or AMD-Vi/IOMMU (AMD) in the firmware setup, then add intel_iommu=on iommu=pt or amd_iommu=on iommu=pt to the kernel command line"]' &&
	check_of "$TMP/out" interrupt-remapping | json_check '.status == "fail" and
		.summary == "interrupts are not remapped: vfio_iommu_type1 refuses to attach devices" and
		.evidence[0] == "/proc/interrupts: no IR- interrupt chip" and (.fix | length == 2)' &&
	check_of "$TMP/out" groups | json_check --arg n "$(gpuctl -j dev show |
		jq '[.devices[] | select(.role == "gpu")] | length')" '.status == "skip" and
		.summary == "no GPU is in an IOMMU group (see iommu)" and
		.evidence == ["gpuctl dev show: \($n) GPUs, 0 in IOMMU groups"]' || return 1
	# the text form says the same
	gpuctl doctor >"$TMP/text" && return 1
	grep -qx 'iommu                fail no IOMMU is on: devices have no IOMMU groups, VFIO cannot use them' \
		"$TMP/text" && grep -qx 'result fail' "$TMP/text"
}

# The vfio modules as /sys/module and modules.dep have them, a JSON array
vfio_evidence() {
	local m

	for m in vfio vfio_iommu_type1 vfio_pci_core vfio_pci; do
		if [ -d "/sys/module/$m" ]; then
			echo "/sys/module/$m: loaded"
		elif grep -q -E "/${m//_/[-_]}\.ko[^:]*:" "/lib/modules/$REL/modules.dep"; then
			echo "$m: not loaded, in /lib/modules/$REL"
		fi
	done | jq -R . | jq -s -c .
}

# full: the IOMMU units and groups as sysfs lists them, remapped interrupts
check_iommu_on() {
	local units=(/sys/class/iommu/*) groups=(/sys/kernel/iommu_groups/*)

	units=("${units[@]##*/}")
	[ -e "/sys/class/iommu/${units[0]}" ] && [ -e /sys/kernel/iommu_groups/0 ] &&
		[ -n "$(ir_chip)" ] || return 1
	doctor "$TMP/out"
	expect_rc 0 || return 1
	check_of "$TMP/out" iommu | json_check --arg u "${units[*]}" --argjson g "${#groups[@]}" '
		.status == "pass" and
		.evidence == ["/sys/class/iommu: \($u)", "/sys/kernel/iommu_groups: \($g) groups",
			"/sys/firmware/acpi/tables: DMAR"] and .fix == []' &&
	check_of "$TMP/out" interrupt-remapping | json_check --arg chip "$(ir_chip)" '
		.status == "pass" and .evidence == ["/proc/interrupts: \($chip)"]' &&
	check_of "$TMP/out" vfio-modules | json_check --argjson w "$(vfio_evidence)" '
		.status == "pass" and .evidence == $w' &&
	json_check '.result == "pass" and all(.checks[]; .status != "fail")' "$TMP/out"
}

# The command line: what /proc/cmdline has, and a fake one that turns the
# IOMMU off
check_cmdline() {
	local w seen=()

	for w in $(</proc/cmdline); do
		case $w in
		intel_iommu=*|amd_iommu=*|iommu=*|intremap=*|nointremap|vfio*|gpuctl.reserve=*|\
		modprobe.blacklist=*|pcie_acs_override=*) seen+=("$w") ;;
		esac
	done
	[ ${#seen[@]} -gt 0 ] ||
		seen=("no intel_iommu=, amd_iommu=, iommu=, intremap=, vfio or gpuctl parameter")
	doctor "$TMP/out"
	check_of "$TMP/out" cmdline | json_check --arg s "${seen[*]}" '.status == "pass" and
		.evidence == ["/proc/cmdline: \($s)"] and .fix == []' || return 1
	mkdir -p "$TMP/cmd/proc" && echo "quiet intel_iommu=off iommu=pt" >"$TMP/cmd/proc/cmdline"
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/cmd"
	check_of "$TMP/out" cmdline | json_check '.status == "fail" and
		.summary == "the kernel command line has intel_iommu=off" and
		.evidence == ["/proc/cmdline: intel_iommu=off iommu=pt"] and
		.fix == ["remove intel_iommu=off (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)"]'
}

# The e1000 behind the PCIe-to-PCI bridge shares the group of the VGA
check_foreign() {
	local g

	g=$(pci_group_of "$PB_GPU") && [ "$(pci_group_of "$PB_NIC")" = "$g" ] || return 1
	doctor "$TMP/out"
	check_of "$TMP/out" groups | json_check --argjson g "$g" --arg gpu "$PB_GPU" \
		--arg nic "$PB_NIC" --arg br "$PB_BRIDGE" '.status == "warn" and
		.summary == "group \($g) of GPU \($gpu) has a foreign member, \($nic)" and
		(.evidence | index("group \($g): \($nic) (foreign, e1000) shares it with GPU \($gpu)")) and
		(.fix | index("group \($g): the PCI bridge \($br) gives no ACS isolation between the devices behind it: put GPU \($gpu) in a slot of its own root port, or give \($nic) to the same VM (gpuctl reserve add \($nic) take)"))' ||
		return 1
	# reserved, the GPU's group is one VFIO cannot use: a fail, and the
	# rule's warning is the ledger check's
	nl_rule_new "$PB_GPU" take && expect_pci_driver "$PB_GPU" vfio-pci || return 1
	doctor "$TMP/out"
	expect_rc 4 || return 1
	check_of "$TMP/out" groups | json_check '.status == "fail"' &&
	check_of "$TMP/out" rules-ledger | json_check --argjson w "$(gpuctl -j reserve show |
		jq -c --argjson id "$RULE" '.rules[] | select(.id == $id) | .warnings')" \
		--argjson id "$RULE" '.status == "warn" and ($w | length > 0) and
		.summary == "rule \($id): \($w[0])"' || return 1
	nl_rule_del "$RULE" && expect_pci_driver "$PB_GPU" bochs-drm 30
}

# A reserved GPU that bochs holds (a rule without take) fails, named; on
# vfio-pci it passes, as sysfs says; the ledger counted, for root only
check_reserved() {
	local rule

	nl_rule_new "$GPU" || return 1
	expect_pci_driver "$GPU" bochs-drm 0 || return 1
	doctor "$TMP/out"
	expect_rc 4 || return 1
	check_of "$TMP/out" reserved-drivers | json_check --arg a "$GPU" --argjson r "$RULE" '
		.status == "fail" and .summary == "\($a) is reserved but on bochs-drm, not vfio-pci" and
		(.evidence | index("/sys/bus/pci/devices/\($a)/driver: bochs-drm (rule \($r), driver vfio-pci, state held)")) and
		.fix == ["\($a): gpuctl reserve del \($r), then gpuctl reserve add \($a) take (or put gpuctl in the initramfs: update-initramfs -u, and reboot)"]' ||
		return 1
	nl_rule_del "$RULE" && nl_rule_new "$GPU" take && expect_pci_driver "$GPU" vfio-pci ||
		return 1
	rule=$RULE
	gpuctl alloc add owner "$VM" dev "$GPU" >/dev/null || return 1
	# a GPU reserved on a host (this guest) without softdeps: that fails
	doctor "$TMP/out"
	expect_rc 4 || return 1
	json_check '[.checks[] | select(.status == "fail")] | length == 1 and
		.[0].id == "softdeps" and .[0].summary ==
		"no modprobe.d file has a softdep pre: gpuctl: GPU drivers may load before gpuctl"' \
		"$TMP/out" || return 1
	check_of "$TMP/out" reserved-drivers | json_check --arg a "$GPU" --argjson r "$rule" \
		--arg drv "$(pci_driver_of "$GPU")" '.status == "pass" and
		.summary == "1 reserved devices, each on its VFIO driver" and
		.evidence == ["/sys/bus/pci/devices/\($a)/driver: \($drv) (rule \($r), driver vfio-pci, state reserved)"]' &&
	check_of "$TMP/out" rules-ledger | json_check --argjson r "$rule" '.status == "pass" and
		.summary == "1 rules, 1 allocations" and
		.evidence == ["rule \($r): 0000:01:00.0 driver vfio-pci, 1 devices",
			"ledger: 1 allocations (1 idle, 0 running, 0 lost)"]' || return 1
	# not root: no rules, no ledger, and it says so (softdeps still fail)
	RC=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		gpuctl -j doctor >"$TMP/nobody" || RC=$?
	print_file "" "$TMP/nobody"
	expect_rc 4 || return 1
	check_of "$TMP/nobody" rules-ledger | json_check '.status == "skip" and
		.summary == "the rules and the ledger need root (CAP_SYS_ADMIN) to read" and
		.evidence == ["rule-get dump: Operation not permitted"]' &&
	check_of "$TMP/nobody" reserved-drivers | json_check '.status == "pass" and
		.evidence[-1] == "rules not read (Operation not permitted): the driver is checked against the module'"'"'s state only"' ||
		return 1
	gpuctl alloc del owner "$VM" && nl_rules_cleanup && expect_pci_driver "$GPU" bochs-drm 30
}

# A module unloaded while its rule held a GPU on gpuctl-vfio-pci: the
# kernel keeps the device's driver_override, so the next load binds it
# there again, with no rule. A warning names it, and its fix, run as
# printed, gives it back to bochs-drm.
check_leftover() {
	local fix

	nl_rule_new "$GPU" driver gpuctl-vfio-pci take &&
		expect_pci_driver "$GPU" gpuctl-vfio-pci 10 || return 1
	gpuctl_unload && gpuctl_load || return 1
	RULES=()
	expect_pci_driver "$GPU" gpuctl-vfio-pci 10 || return 1
	[ -z "$(gpuctl-nl rule-dump)" ] || return 1
	doctor "$TMP/out"
	check_of "$TMP/out" reserved-drivers | json_check --arg a "$GPU" '
		.status == "warn" and
		.summary == "\($a) is on gpuctl-vfio-pci but no rule reserves it" and
		.evidence == ["/sys/bus/pci/devices/\($a)/driver: gpuctl-vfio-pci (no rule)"] and
		.fix == ["\($a): gpuctl reserve add \($a) driver gpuctl-vfio-pci, then gpuctl reserve del \($a): the rule'"'"'s end gives it back to its host driver"]' ||
		return 1
	fix=$(check_of "$TMP/out" reserved-drivers | jq -r '.fix[0]') || return 1
	fix=${fix#"$GPU: "}
	fix=${fix%%: the rule*}
	echo "fix: $fix"
	# shellcheck disable=SC2086 # the two commands as printed, split on spaces
	${fix%%, then *} && ${fix#*, then } || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	doctor "$TMP/out"
	check_of "$TMP/out" reserved-drivers | json_check '.status == "pass" and
		.summary == "0 reserved devices, each on its VFIO driver"'
}

# sb_root DIR ON TAINT: a host with Secure Boot ON (1 or 0) and a gpuctl
# module of taint flags TAINT
sb_root() {
	mkdir -p "$1/sys/firmware/efi/efivars" "$1/sys/module/gpuctl"
	{ printf '\006\000\000\000'; if [ "$2" = 1 ]; then printf '\001'; else printf '\000'; fi; } \
		>"$1/sys/firmware/efi/efivars/$SB_VAR"
	echo "$3" >"$1/sys/module/gpuctl/taint"
}

# The module's signature against Secure Boot: this guest (no EFI, an
# unsigned module), and fake hosts with Secure Boot
check_signature() {
	local taint var=/sys/firmware/efi/efivars/$SB_VAR

	taint=$(</sys/module/gpuctl/taint)
	if [ -e /sys/firmware/efi ] || [[ $taint != *E* ]]; then
		echo "an EFI boot, or a module of taint '$taint'"
		return 1
	fi
	doctor "$TMP/out"
	check_of "$TMP/out" module-signature | json_check --arg t "$taint" '.status == "pass" and
		.summary == "gpuctl is unsigned, which the kernel allows without Secure Boot" and
		.evidence == ["/sys/firmware/efi: absent, not an EFI boot: no Secure Boot",
			"/sys/module/gpuctl/taint: \($t)"]' || return 1
	sb_root "$TMP/sb" 1 OE
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/sb"
	expect_rc 4 || return 1
	check_of "$TMP/out" module-signature | json_check --arg v "$var" '.status == "fail" and
		.summary == "gpuctl is not signed by a key the kernel trusts, and Secure Boot is on" and
		.evidence == ["\($v): 1 (Secure Boot on)", "/sys/module/gpuctl/taint: OE"] and
		(.fix[0] | startswith("sign gpuctl.ko with a key enrolled as a MOK: mokutil --import"))' ||
		return 1
	sb_root "$TMP/sb" 1 O
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/sb"
	check_of "$TMP/out" module-signature | json_check '.status == "pass" and
		.summary == "gpuctl is signed by a key the kernel trusts"' || return 1
	sb_root "$TMP/sb" 0 OE
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/sb"
	check_of "$TMP/out" module-signature | json_check --arg v "$var" '.status == "pass" and
		.evidence[0] == "\($v): 0 (Secure Boot off)"'
}

# initrd ROOT [FILE...]: ROOT/boot/initrd.img-REL, a gzip'd cpio holding
# gpuctl.ko and the FILEs given (paths under ROOT)
initrd() {
	local root=$1 img=$TMP/img

	shift
	rm -rf "$img" && mkdir -p "$img/lib/modules/$REL/updates" "$root/boot" &&
		cp "$GPUCTL_KO" "$img/lib/modules/$REL/updates/" || return 1
	for f in "$@"; do
		mkdir -p "$img/${f%/*}" && cp "$root/$f" "$img/$f" || return 1
	done
	(cd "$img" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$root/boot/initrd.img-$REL"
}

# The initramfs: this guest has none (a warning); an image with gpuctl
# and its softdeps passes, one without the softdeps fails
check_initramfs() {
	local img=/boot/initrd.img-$REL

	[ ! -e "$img" ] || return 1
	doctor "$TMP/out"
	check_of "$TMP/out" initramfs | json_check --arg i "$img" --arg r "$REL" '
		.status == "warn" and .summary == "no initramfs \($i)" and
		.fix == ["if this kernel boots with an initramfs: update-initramfs -c -k \($r)"]' ||
		return 1
	mkdir -p "$TMP/ir/etc/modprobe.d" &&
		cp "$GPUCTL_ROOT/packaging/modprobe.d/gpuctl.conf" "$TMP/ir/etc/modprobe.d/" &&
		initrd "$TMP/ir" etc/modprobe.d/gpuctl.conf || return 1
	lsinitramfs "$TMP/ir$img" | grep -E 'gpuctl' || return 1
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/ir"
	check_of "$TMP/out" initramfs | json_check --arg i "$img" '.status == "pass" and
		.evidence == ["lsinitramfs \($i): gpuctl.ko, etc/modprobe.d/gpuctl.conf"]' ||
		return 1
	initrd "$TMP/ir" || return 1
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/ir"
	check_of "$TMP/out" initramfs | json_check --arg i "$img" '.status == "fail" and
		.summary == "\($i) has no gpuctl softdeps: GPU drivers may load before gpuctl" and
		.evidence == ["lsinitramfs \($i): gpuctl.ko, no etc/modprobe.d/gpuctl.conf"]'
}

# Softdeps: the packaged file without its bochs line leaves every GPU on
# bochs-drm named, as sysfs has them
check_softdeps() {
	local d

	for d in "$SYS_PCI"/*; do
		[ "$(readlink "$d/driver/module" 2>/dev/null)" ] &&
			[ "$(basename "$(readlink "$d/driver/module")")" = bochs ] &&
			echo "${d##*/}: driver bochs-drm, module bochs, no softdep bochs pre: gpuctl"
	done | sort >"$TMP/want"
	[ -s "$TMP/want" ] || return 1
	mkdir -p "$TMP/sd/etc/modprobe.d" && ln -s /sys "$TMP/sd/sys" &&
		grep -v '^softdep bochs ' "$GPUCTL_ROOT/packaging/modprobe.d/gpuctl.conf" \
		>"$TMP/sd/etc/modprobe.d/gpuctl.conf" || return 1
	doctor "$TMP/out" GPUCTL_DOCTOR_ROOT="$TMP/sd"
	check_of "$TMP/out" softdeps | jq -r '.evidence[] | select(contains("module bochs"))' |
		sort >"$TMP/got" || return 1
	diff -u "$TMP/want" "$TMP/got" || return 1
	check_of "$TMP/out" softdeps | json_check --argjson n "$(grep -c '^softdep .* pre: gpuctl' \
		"$TMP/sd/etc/modprobe.d/gpuctl.conf")" '.status == "warn" and
		.evidence[0] == "modprobe.d: \($n) softdeps pre: gpuctl in /etc/modprobe.d/gpuctl.conf" and
		(.fix | index("add \"softdep bochs pre: gpuctl\" to /etc/modprobe.d/gpuctl.conf, then update-initramfs -u"))'
}

# The JSON: every check once, in order, each with its four keys; the
# result and the exit status agree; jq refuses a cut file; usage errors
check_json() {
	doctor "$TMP/out"
	json_check --argjson ids "$CHECKS" --argjson rc "$RC" '
		[.checks[].id] == $ids and
		all(.checks[]; (.status | IN("pass", "warn", "fail", "skip")) and
			(.summary | type == "string" and length > 0) and
			(.evidence | type == "array") and (.fix | type == "array")) and
		.result == (if any(.checks[]; .status == "fail") then "fail" else "pass" end) and
		(if .result == "fail" then $rc == 4 else $rc == 0 end)' "$TMP/out" || return 1
	# text and JSON say the same of each check
	gpuctl doctor >"$TMP/text"
	jq -r '.checks[] | "\(.id) \(.status) \(.summary)"' "$TMP/out" >"$TMP/want" &&
		awk '/^[a-z]/ && !/^result/ { id = $1; st = $2; $1 = ""; $2 = "";
			sub(/^  /, ""); print id, st, $0 }' "$TMP/text" >"$TMP/got" &&
		diff -u "$TMP/want" "$TMP/got" || return 1
	head -c -3 "$TMP/out" >"$TMP/cut"
	cmd_fails 'parse error|Unfinished JSON' jq . "$TMP/cut" &&
	cmd_fails 'unexpected argument "now"' gpuctl doctor now || return 1
	# the completion offers it, and only help after it
	[ "$(complete_words gpuctl doc)" = doctor ] &&
		[ "$(complete_words gpuctl doctor '')" = help ]
}

ktap_header
if [ -e "$SYS_PCI/$PB_NIC" ]; then
	ktap_plan 11
	ktap_run_stage "module, lsinitramfs and cpio" check_setup
	ktap_run_stage "without the module: module fails with modprobe gpuctl, exit 4" \
		check_no_module
	ktap_run_stage "IOMMU units and groups as sysfs lists them, interrupts remapped, exit 0" \
		check_iommu_on
	ktap_run_stage "the command line as /proc/cmdline has it; intel_iommu=off fails" \
		check_cmdline
	ktap_run_stage "the e1000 in the bridge's group named; a fail once its GPU is reserved" \
		check_foreign
	ktap_run_stage "a reserved GPU on bochs-drm fails, named; the ledger for root only" \
		check_reserved
	ktap_run_stage "a GPU left on gpuctl-vfio-pci with no rule warns; the fix as printed gives it back" \
		check_leftover
	ktap_run_stage "an unsigned module fails on a Secure Boot host only" check_signature
	ktap_run_stage "initramfs: none warns, without the softdeps fails" check_initramfs
	ktap_run_stage "softdeps: every GPU driver without one named" check_softdeps
	ktap_run_stage "JSON: every check, result and exit status agree, as text; completion" check_json
else
	ktap_plan 3
	ktap_run_stage "module, lsinitramfs and cpio" check_setup
	ktap_run_stage "no IOMMU: iommu and interrupt-remapping fail with their fixes, exit 4" \
		check_no_iommu
	ktap_run_stage "JSON: every check, result and exit status agree, as text; completion" check_json
fi
ktap_finished
