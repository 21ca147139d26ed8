#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl export libvirt, read as libvirt reads it: every <hostdev> it
# prints is validated with xmllint against libvirt0's own RelaxNG schemas,
# alone (a small grammar whose start is domaincommon.rng's "hostdev") and
# all together inside a minimal domain (domain.rng, what virt-xml-validate
# runs). What the elements say is read back with xmllint's XPath and
# checked against sysfs and the ledger:
#   - an allocation of 07:00.0: a pci hostdev, managed='no' with the vfio
#     driver, for each function of its IOMMU group (the GPU and its HD
#     audio companion), which are the allocation's devices; the same by
#     "id ID", "owner UUID" and the GPU's address; the companion alone;
#   - two GPUs of one slot that share their companion (0f:00.0-2): one
#     hostdev per member of the group;
#   - an allocation of a GPU and two vGPUs: the mdev hostdevs carry the
#     UUIDs /sys/bus/mdev/devices has and their type's device_api as the
#     model; one mdev by its UUID; once an instance is removed behind
#     gpuctl's back the allocation is lost and nothing is printed;
#   - a vendor VF allocated by type: its pci hostdev;
#   - the schemas refuse a broken element (function='0x8', CloudStack's
#     display='off', an unknown mdev model), naming what is wrong, and the
#     tool refuses what it has not or libvirt cannot take, with exit 2, and
#     -j with exit 1.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_export_libvirt.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
SCHEMAS=/usr/share/libvirt/schemas
RNG=$TMP/hostdev.rng
SYS_PCI=/sys/bus/pci/devices
MDEVS=/sys/bus/mdev/devices
GPU=0000:07:00.0
HDA=0000:07:00.1
SLOT_GPUS=(0000:0f:00.0 0000:0f:00.1)
SLOT_HDA=0000:0f:00.2
FREE_GPU=0000:01:00.0
BRIDGE=0000:08:00.0
PF=0000:11:00.0
VFS=(0000:11:00.1 0000:11:00.2 0000:11:00.3 0000:11:00.4)
VM1=5e1a7c20-0000-4000-8000-000000000001
VM2=5e1a7c20-0000-4000-8000-000000000002
VM3=5e1a7c20-0000-4000-8000-000000000003
VM4=5e1a7c20-0000-4000-8000-000000000004
NO_MDEV=5e1a7c20-0000-4000-8000-0000000000ff

cleanup() {
	nl_allocs_cleanup
	mdevs_remove_all
	rmmod mbochs mtty 2>/dev/null
	nl_rules_cleanup
	grep -q '^vgpu_test_vf ' /proc/modules && vendor_vf_rig_stop
	# the next test finds the functions on their host drivers again
	wait_for_driver 30 "$GPU" bochs-drm && wait_for_driver 30 "$HDA" snd_hda_intel &&
		wait_for_driver 30 "${SLOT_GPUS[0]}" bochs-drm &&
		wait_for_driver 30 "${SLOT_GPUS[1]}" bochs-drm &&
		wait_for_driver 30 "$SLOT_HDA" snd_hda_intel
	rm -rf "$TMP"
}
trap cleanup EXIT

# domain_of FILE: FILE's elements inside the least domain domain.rng takes
domain_of() {
	echo "<domain type='kvm'>"
	echo "  <name>gpuctl-export-libvirt</name>"
	echo "  <memory unit='MiB'>512</memory>"
	echo "  <os>"
	echo "    <type arch='x86_64' machine='q35'>hvm</type>"
	echo "  </os>"
	echo "  <devices>"
	print_file "    " "$1"
	echo "  </devices>"
	echo "</domain>"
}

# hostdev_line FILE: one hostdev element as xmllint reads it:
# "pci MANAGED DRIVER DDDD:BB:DD.F" or "mdev MANAGED MODEL UUID"
hostdev_line() {
	local f type managed model driver uuid dom bus slot fn

	f='/hostdev/@type, "|", /hostdev/@managed, "|", /hostdev/@model, "|",
	   /hostdev/driver/@name, "|", /hostdev/source/address/@uuid, "|",
	   /hostdev/source/address/@domain, "|", /hostdev/source/address/@bus, "|",
	   /hostdev/source/address/@slot, "|", /hostdev/source/address/@function'
	IFS='|' read -r type managed model driver uuid dom bus slot fn < \
		<(xmllint --xpath "concat($f)" "$1"; echo) || return 1
	case $type in
	pci) printf 'pci %s %s %04x:%02x:%02x.%x\n' "$managed" "$driver" \
		"$((dom))" "$((bus))" "$((slot))" "$((fn))" ;;
	mdev) echo "mdev $managed $model $uuid" ;;
	*) echo "unknown hostdev type \"$type\" in $1"; return 1 ;;
	esac
}

# export_lv OUT ARGS...: gpuctl export libvirt ARGS to OUT, nothing on
# stderr; each element (OUT.1, OUT.2, ...) valid alone, all of them valid
# in a domain (OUT.domain); OUT.lines has hostdev_line of each, in order
export_lv() {
	local out=$1 n i

	shift
	run_captured "$out" "$TMP/err" gpuctl export libvirt "$@" || return 1
	[ ! -s "$TMP/err" ] || return 1
	n=$(grep -c '^<hostdev ' "$out")
	[ "$n" -ge 1 ] || return 1
	# nothing before the first element
	case $(head -n1 "$out") in "<hostdev "*) ;; *) return 1 ;; esac
	rm -f "$out".[0-9]*
	awk -v o="$out" '/^<hostdev /{ n++ } { print > (o "." n) }' "$out" || return 1
	: >"$out.lines"
	for ((i = 1; i <= n; i++)); do
		xmllint --noout --relaxng "$RNG" "$out.$i" || return 1
		hostdev_line "$out.$i" >>"$out.lines" || return 1
	done
	domain_of "$out" >"$out.domain" &&
		xmllint --noout --relaxng "$SCHEMAS/domain.rng" "$out.domain" || return 1
	print_file "" "$out.lines"
}

# pci_lines ADDR...: the lines export_lv expects for these functions
pci_lines() {
	local a

	for a in "$@"; do
		echo "pci no vfio $a"
	done
}

# group_members ADDR: the functions of ADDR's IOMMU group, per sysfs
group_members() {
	local g

	g=$(pci_group_of "$1") || return 1
	find "/sys/kernel/iommu_groups/$g/devices" -mindepth 1 -printf '%f\n' | LC_ALL=C sort
}

mdevs_now() {
	find "$MDEVS" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort
}

# alloc_devices ID: its devices per the independent client, one a line
alloc_devices() {
	gpuctl-nl alloc-get "$1" | sed -n 's/.* devices=\([^ ]*\).*/\1/p' | tr ',' '\n'
}

# lv_refuses RC LINE ARGS...: gpuctl ARGS exits RC with LINE on stderr,
# and prints nothing on stdout
lv_refuses() {
	local want_rc=$1 line=$2 rc=0

	shift 2
	gpuctl "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	echo "\$ gpuctl $*: exit $rc"
	print_file "" "$TMP/out" "$TMP/err"
	[ "$rc" = "$want_rc" ] || { echo "exit $rc, expected $want_rc"; return 1; }
	grep -qxF -e "$line" "$TMP/err" || { echo "no line: $line"; return 1; }
	[ ! -s "$TMP/out" ]
}

# xmllint_refuses REGEX SCHEMA FILE: the schema refuses FILE, saying REGEX
xmllint_refuses() {
	cmd_fails "$1" xmllint --noout --relaxng "$2" "$3" && out_has "fails to validate"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	[ -f "$SCHEMAS/domain.rng" ] && [ -f "$SCHEMAS/domaincommon.rng" ] || return 1
	cat >"$RNG" <<-EOF
	<?xml version="1.0"?>
	<!-- one <hostdev> element, as libvirt's domain schema defines it -->
	<grammar xmlns="http://relaxng.org/ns/structure/1.0"
	         datatypeLibrary="http://www.w3.org/2001/XMLSchema-datatypes">
	  <start>
	    <ref name="hostdev"/>
	  </start>
	  <include href="$SCHEMAS/domaincommon.rng"/>
	</grammar>
	EOF
	nl_rule_new "$GPU" driver vfio-pci take || return 1
	expect_pci_driver "$GPU" vfio-pci && expect_pci_driver "$HDA" vfio-pci
}

# An allocation of a GPU: each function of its group, by every name
check_alloc() {
	local id

	[ "$(group_members "$GPU")" = "$(printf '%s\n' "$GPU" "$HDA")" ] || return 1
	gpuctl -j alloc add owner "$VM1" name vm1 dev "$GPU" >"$TMP/a1" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a1") && echo "$id" >"$TMP/a1.id" || return 1
	[ "$(alloc_devices "$id")" = "$(group_members "$GPU")" ] || return 1
	export_lv "$TMP/x1" "$id" || return 1
	# shellcheck disable=SC2046 # one address per word
	pci_lines $(group_members "$GPU") | diff -u - "$TMP/x1.lines" || return 1
	export_lv "$TMP/x2" id "$id" && cmp "$TMP/x1" "$TMP/x2" || return 1
	export_lv "$TMP/x2" owner "${VM1^^}" && cmp "$TMP/x1" "$TMP/x2" || return 1
	export_lv "$TMP/x2" "${GPU#0000:}" && cmp "$TMP/x1" "$TMP/x2" || return 1
	export_lv "$TMP/x2" "$HDA" && pci_lines "$HDA" | diff -u - "$TMP/x2.lines" || return 1
	# completion offers the allocation, its owner after "owner", and DEVs
	complete_words gpuctl export libvirt '' >"$TMP/words" || return 1
	grep -qx "$id" "$TMP/words" && grep -qx owner "$TMP/words" &&
		grep -qx "$GPU" "$TMP/words" || return 1
	[ "$(complete_words gpuctl export libvirt owner '' | sed '/^$/d')" = "$VM1" ]
}

# Two GPU functions of one slot sharing their HD audio: the whole group;
# the owner's two allocations one after the other
check_shared_slot() {
	local id a

	[ "$(group_members "${SLOT_GPUS[0]}")" = \
	  "$(printf '%s\n' "${SLOT_GPUS[@]}" "$SLOT_HDA")" ] || return 1
	for a in "${SLOT_GPUS[@]}"; do
		nl_rule_new "$a" driver vfio-pci take || return 1
	done
	for a in "${SLOT_GPUS[@]}" "$SLOT_HDA"; do
		expect_pci_driver "$a" vfio-pci || return 1
	done
	gpuctl -j alloc add owner "$VM1" dev "${SLOT_GPUS[0]}" dev "${SLOT_GPUS[1]}" \
		>"$TMP/a2" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a2") || return 1
	[ "$(alloc_devices "$id")" = "$(group_members "$SLOT_HDA")" ] || return 1
	export_lv "$TMP/x3" "$id" || return 1
	# shellcheck disable=SC2046 # one address per word
	pci_lines $(group_members "$SLOT_HDA") | diff -u - "$TMP/x3.lines" || return 1
	# both allocations of VM1, the older first
	[ "$(cat "$TMP/a1.id")" -lt "$id" ] || return 1
	export_lv "$TMP/x2" owner "$VM1" && cat "$TMP/x1" "$TMP/x3" | cmp - "$TMP/x2" ||
		return 1
	gpuctl alloc del "$id"
}

# A GPU and two vGPUs in one allocation
check_vgpus() {
	local id u uuids

	mdev_samples_load || return 1
	[ -z "$(mdevs_now)" ] || return 1
	gpuctl alloc del "$(cat "$TMP/a1.id")" || return 1
	gpuctl -j alloc add owner "$VM3" dev "$GPU" vgpu mbochs-small count 2 >"$TMP/a3" ||
		return 1
	id=$(jq '.allocations[0].id' "$TMP/a3") || return 1
	uuids=$(jq -r '.allocations[0].vgpus[].uuid' "$TMP/a3") || return 1
	[ "$(mdevs_now)" = "$(LC_ALL=C sort <<<"$uuids")" ] || return 1
	export_lv "$TMP/x4" "$id" || return 1
	{
		pci_lines "$GPU" "$HDA"
		for u in $uuids; do
			echo "mdev no $(cat "$MDEVS/$u/mdev_type/device_api") $u"
		done
	} >"$TMP/want" || return 1
	diff -u "$TMP/want" "$TMP/x4.lines" || return 1
	grep -qx "mdev no vfio-pci $u" "$TMP/x4.lines" || return 1
	# one mdev by its UUID
	export_lv "$TMP/x5" "$u" || return 1
	[ "$(cat "$TMP/x5.lines")" = "mdev no vfio-pci $u" ] || return 1
	# an instance removed behind gpuctl's back: the allocation is lost
	write_to 1 "$MDEVS/$u/remove" || return 1
	lv_refuses 2 "gpuctl: export libvirt: allocation $id is lost: $u was removed" \
		export libvirt "$id" || return 1
	lv_refuses 2 "gpuctl: export libvirt: no mdev $u" export libvirt "$u" || return 1
	# keep: alloc del cannot remove the instance that is gone
	gpuctl alloc del "$id" keep && gpuctl vgpu del "$(head -n1 <<<"$uuids")" >/dev/null &&
		[ -z "$(mdevs_now)" ]
}

# A vendor VF, typed and allocated by its type: a pci hostdev
check_vendor_vf() {
	local id vf rules=()

	vendor_vf_rig_start || return 1
	for vf in "${VFS[@]}"; do
		nl_rule_new "$vf" driver nvidia || return 1
		rules+=("$RULE")
	done
	write_to 4 "$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "${VFS[@]}"; do
		expect_pci_driver "$vf" nvidia 5 || return 1
	done
	gpuctl -j alloc add owner "$VM4" vgpu 1155 count 1 >"$TMP/a4" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a4") || return 1
	[ "$(alloc_devices "$id")" = "${VFS[0]}" ] && [ "$(vf_type "${VFS[0]}")" = 1155 ] ||
		return 1
	export_lv "$TMP/x6" owner "$VM4" || return 1
	pci_lines "${VFS[0]}" | diff -u - "$TMP/x6.lines" || return 1
	gpuctl alloc del "$id" || return 1
	for id in "${rules[@]}"; do
		nl_rule_del "$id" || return 1
	done
	vendor_vf_rig_stop
}

# libvirt's schemas refuse broken elements; the tool refuses what it has
# not, or what libvirt cannot take
check_refusals() {
	xmllint_refuses "Invalid attribute function for element address" "$RNG" \
		<(sed "s/function='0x0'/function='0x8'/" "$TMP/x1.1") || return 1
	domain_of <(sed "s/function='0x0'/function='0x8'/" "$TMP/x1") >"$TMP/bad" &&
		xmllint_refuses "Element domain failed to validate content" \
			"$SCHEMAS/domain.rng" "$TMP/bad" || return 1
	xmllint_refuses "Invalid attribute display for element hostdev" "$RNG" \
		<(sed "s/managed='no'/managed='no' display='off'/" "$TMP/x1.1") || return 1
	xmllint_refuses "Element hostdev failed to validate content" "$RNG" \
		<(sed "s/model='vfio-pci'/model='vfio-gpu'/" "$TMP/x5") || return 1
	lv_refuses 2 "gpuctl: export libvirt: no allocation 4242" \
		export libvirt 4242 || return 1
	lv_refuses 2 "gpuctl: export libvirt: owner $VM2 has no allocation" \
		export libvirt owner "$VM2" || return 1
	lv_refuses 2 "gpuctl: export libvirt: 0000:00:1f.0 is not a device gpuctl tracks" \
		export libvirt 00:1f.0 || return 1
	lv_refuses 2 "gpuctl: export libvirt: $BRIDGE is a PCI bridge, which VFIO cannot pass to a VM" \
		export libvirt "$BRIDGE" || return 1
	lv_refuses 2 "gpuctl: export libvirt: $FREE_GPU is not reserved, so not kept on a VFIO driver as managed='no' needs; reserve it first" \
		export libvirt "$FREE_GPU" || return 1
	lv_refuses 2 "gpuctl: export libvirt: no mdev $NO_MDEV" \
		export libvirt "$NO_MDEV" || return 1
	lv_refuses 1 "gpuctl: export libvirt: prints XML, -j does not apply" \
		-j export libvirt "$(cat "$TMP/a1.id")"
}

ktap_header
ktap_plan 6
ktap_run_stage "module, libvirt0's schemas, a reserved GPU and its companion" check_setup
ktap_run_stage "an allocation: one valid hostdev per function of its group, by id, owner, DEV" \
	check_alloc
ktap_run_stage "two GPUs of one slot and their shared companion: the whole group" \
	check_shared_slot
ktap_run_stage "a GPU and two vGPUs: pci and mdev hostdevs, UUIDs as sysfs has them" \
	check_vgpus
ktap_run_stage "a vendor VF allocated by type: its pci hostdev" check_vendor_vf
ktap_run_stage "the schemas refuse broken elements; the tool refuses unknown targets" \
	check_refusals
ktap_finished
