#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl export kubevirt: KubeVirt's permittedHostDevices, read as
# KubeVirt reads it: selftests/kubevirt/check_permitted.py parses the YAML
# (python3-yaml) and the JSON of -j, which must be the same document,
# checks it against a JSON Schema written from KubeVirt's documented API
# (python3-jsonschema) and applies the rules KubeVirt and Kubernetes add
# (lower-case selectors, extended resource names, one resource per entry,
# selectors that match this host), then prints what KubeVirt's device
# plugins would advertise from sysfs. The values are checked against sysfs
# and lspci:
#   - nothing reserved: both lists empty;
#   - one pciHostDevices entry per model on vfio-pci, two functions of one
#     model once, its resourceName from the vendor's domain and lspci's
#     device name; a function a host driver holds is left out, and one on
#     gpuctl-vfio-pci is left out with a message;
#   - one mediatedDevices entry per mdev type name of an mdev parent
#     (selftests/modules/vgpu_test_parent.c), spaces made '_';
#   - vendor VFs (selftests/modules/vgpu_test_vf.c): their model only
#     once one has a vGPU type;
#   - broken files are refused: a wildcard or upper-case selector, a
#     resourceName twice or not a qualified name, a string for a boolean,
#     a space in an mdev selector, a selector that matches nothing.

# Stage functions run through ktap_run_stage or a trap; jq filters name
# jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_export_kubevirt.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
CHECK=$GPUCTL_ROOT/selftests/kubevirt/check_permitted.py
SYS_PCI=/sys/bus/pci/devices
# 1234:1111 twice (bochs-display), ati-vga (1002:5046, no host driver),
# qxl (held by qxl), cirrus-vga for gpuctl-vfio-pci
GPU1=0000:01:00.0
GPU2=0000:81:00.0
ATI=0000:05:00.0
QXL=0000:03:00.0
CIRRUS=0000:04:00.0
CARD=0000:02:00.0
TYPES=/sys/class/mdev_bus/$CARD/mdev_supported_types
PF=0000:11:00.0
VFS=(0000:11:00.1 0000:11:00.2 0000:11:00.3 0000:11:00.4)
UUID=6a2d0e30-0000-4000-8000-0000000000d1

cleanup() {
	mdevs_remove_all
	if [ -e "$SYS_PCI/$CARD/driver" ] &&
	   [ "$(basename "$(readlink "$SYS_PCI/$CARD/driver")")" = nvidia ]; then
		echo "$CARD" >"$SYS_PCI/$CARD/driver/unbind"
		echo >"$SYS_PCI/$CARD/driver_override"
	fi
	rmmod vgpu_test_parent 2>/dev/null
	nl_rules_cleanup
	grep -q '^vgpu_test_vf ' /proc/modules && vendor_vf_rig_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

# export_kv OUT: the YAML in OUT, the JSON of -j in OUT.json, both through
# the checker; what KubeVirt would advertise in OUT.devices
export_kv() {
	if ! gpuctl export kubevirt >"$1" 2>"$1.err" ||
	   ! gpuctl -j export kubevirt >"$1.json"; then
		print_file "" "$1.err"
		return 1
	fi
	print_file "" "$1" "$1.err"
	"$CHECK" "$1" "$1.json" >"$1.devices" || return 1
	print_file "" "$1.devices"
}

# rejects OUT FILTER MESSAGE [FILTER MESSAGE...]: each jq FILTER makes of
# OUT.json (which the checker took) a file that the checker refuses with
# its MESSAGE, in one run of the checker
rejects() {
	local out=$1 i=0 rc=0 files=() msgs=()

	shift
	while [ $# -ge 2 ]; do
		jq "$1" "$out.json" >"$TMP/bad$i.json" || return 1
		files+=("$TMP/bad$i.json")
		msgs+=("$2")
		i=$((i + 1))
		shift 2
	done
	cmd_fails . "$CHECK" --each "${files[@]}" || return 1
	for i in "${!files[@]}"; do
		if ! grep -q -E -e "^${files[i]}: ${msgs[i]}" <<<"$CMD_OUT" ||
		   grep -q -x -F "${files[i]}: accepted" <<<"$CMD_OUT"; then
			echo "${files[i]} not refused with '${msgs[i]}'"
			rc=1
		fi
	done
	return "$rc"
}

# The model's resourceName by the documented rule, from sysfs and lspci:
# the vendor's domain, the device name with runs of other characters than
# [A-Za-z0-9.-] made '_', beginning and ending with a letter or digit
want_resource() {
	local v d name

	v=$(sed 's/^0x//' "$SYS_PCI/$1/vendor")
	d=$(lspci -vmm -s "$1" | sed -n 's/^Device:\t//p')
	case $v in
	10de) v=nvidia.com ;;
	1002) v=amd.com ;;
	8086) v=intel.com ;;
	*) v=pci-$v ;;
	esac
	name=$(sed -E 's/[^A-Za-z0-9.-]+/_/g; s/^[^A-Za-z0-9]+//; s/[^A-Za-z0-9]+$//' <<<"$d")
	echo "$v/${name:0:63}"
}

ids_of() {	# ADDR: "vendor:device" as sysfs has it
	echo "$(sed 's/^0x//' "$SYS_PCI/$1/vendor"):$(sed 's/^0x//' "$SYS_PCI/$1/device")"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	# the checker's modules, without a Python start (seconds under TCG)
	[ -x "$CHECK" ] && [ -f /usr/lib/python3/dist-packages/jsonschema/__init__.py ] &&
		[ -f /usr/lib/python3/dist-packages/yaml/__init__.py ]
}

# No rule: both lists there and empty, in YAML and in JSON
check_empty() {
	nl_rules_cleanup
	export_kv "$TMP/out" || return 1
	printf '%s\n' "spec:" "  configuration:" "    permittedHostDevices:" \
		"      pciHostDevices: []" "      mediatedDevices: []" >"$TMP/want" &&
		diff -u "$TMP/want" "$TMP/out" || return 1
	json_check '.spec.configuration.permittedHostDevices ==
		{pciHostDevices: [], mediatedDevices: []}' "$TMP/out.json" &&
		[ ! -s "$TMP/out.devices" ] && [ ! -s "$TMP/out.err" ]
}

# Models on vfio-pci, once each; a held one and one on gpuctl-vfio-pci not
check_models() {
	local a

	for a in "$GPU1" "$GPU2" "$ATI"; do
		nl_rule_new "$a" driver vfio-pci take || return 1
	done
	nl_rule_new "$QXL" driver vfio-pci && nl_rule_new "$CIRRUS" driver gpuctl-vfio-pci take ||
		return 1
	for a in "$GPU1" "$GPU2" "$ATI"; do
		expect_pci_driver "$a" vfio-pci 30 || return 1
	done
	expect_pci_driver "$QXL" qxl && expect_pci_driver "$CIRRUS" gpuctl-vfio-pci 30 || return 1
	export_kv "$TMP/out" || return 1
	# the selectors, as sysfs has the ids, once per model, sorted
	printf '%s\n' "$(ids_of "$ATI")" "$(ids_of "$GPU1")" >"$TMP/want" &&
		jq -r '.spec.configuration.permittedHostDevices.pciHostDevices[].pciVendorSelector' \
			"$TMP/out.json" >"$TMP/got" && diff -u "$TMP/want" "$TMP/got" || return 1
	json_check --arg ati "$(want_resource "$ATI")" --arg gpu "$(want_resource "$GPU1")" '
		.spec.configuration.permittedHostDevices | .mediatedDevices == [] and
		.pciHostDevices[0].resourceName == $ati and
		.pciHostDevices[1].resourceName == $gpu and
		(.pciHostDevices | all(.externalResourceProvider == false))' "$TMP/out.json" ||
		return 1
	# what KubeVirt advertises: the three functions on vfio-pci
	printf '%s\n' "PCI $(want_resource "$ATI") $ATI" "PCI $(want_resource "$GPU1") $GPU1" \
		"PCI $(want_resource "$GPU2") $GPU2" | sort >"$TMP/want" &&
		sort "$TMP/out.devices" | diff -u "$TMP/want" - || return 1
	grep -qxF "gpuctl: export kubevirt: $CIRRUS left out: it is on gpuctl-vfio-pci, and KubeVirt's device plugin takes only functions on vfio-pci" \
		"$TMP/out.err" || return 1
	[ "$(wc -l <"$TMP/out.err")" = 1 ] || return 1
	# broken files: the structure, then KubeVirt's and Kubernetes' rules
	local p=.spec.configuration.permittedHostDevices.pciHostDevices
	rejects "$TMP/out" \
		"${p}[0].pciVendorSelector = \"1234:*\"" \
		"ValidationError at spec/configuration/permittedHostDevices/pciHostDevices/0/pciVendorSelector: '1234:\\*' does not match" \
		"${p}[1].resourceName = ${p}[0].resourceName" \
		"resourceName \"$(want_resource "$ATI")\" is used twice" \
		"${p}[0].resourceName = \"amd.com/Rage 4\"" \
		'resourceName "amd.com/Rage 4" is no extended resource name: name has characters other than' \
		"${p}[0].resourceName = \"kubernetes.io/gpu\"" \
		'resourceName "kubernetes.io/gpu" is no extended resource name: in the kubernetes.io domain' \
		"${p}[0].externalResourceProvider = \"false\"" \
		"ValidationError at .*externalResourceProvider: 'false' is not of type 'boolean'" \
		"${p}[0].pciVendorSelector = \"10de:2236\"" \
		'pciVendorSelector "10de:2236" matches nothing on this host' \
		"$p += [${p}[0]]" 'pciVendorSelector "1002:5046" is listed twice' || return 1
	nl_rules_cleanup
}

# One entry per mdev type name of a parent, an instance advertised
check_mdev_types() {
	local t=nvidia-222 names

	modprobe -a vfio_iommu_type1 mdev && insmod "$SAMPLES/vgpu_test_parent.ko" || return 1
	echo nvidia >"$SYS_PCI/$CARD/driver_override" &&
		echo "$CARD" >/sys/bus/pci/drivers_probe &&
		expect_pci_driver "$CARD" nvidia || return 1
	gpuctl vgpu add "$CARD" type "$t" uuid "$UUID" >/dev/null || return 1
	export_kv "$TMP/out" || return 1
	names=$(cat "$TYPES"/*/name | tr ' ' _ | sort -u)
	[ "$(wc -l <<<"$names")" = 2 ] || return 1
	jq -r '.spec.configuration.permittedHostDevices.mediatedDevices[] |
		"\(.mdevNameSelector) \(.resourceName) \(.externalResourceProvider)"' \
		"$TMP/out.json" >"$TMP/got" || return 1
	while read -r n; do
		echo "$n pci-15ad/$n false"
	done <<<"$names" >"$TMP/want"
	diff -u "$TMP/want" "$TMP/got" || return 1
	json_check '.spec.configuration.permittedHostDevices.pciHostDevices == []' \
		"$TMP/out.json" || return 1
	[ "$(cat "$SYS_PCI/$CARD/vendor")" = 0x15ad ] &&
		grep -qx "MDEV pci-15ad/$(tr ' ' _ <"$TYPES/$t/name") $UUID" "$TMP/out.devices" &&
		[ "$(wc -l <"$TMP/out.devices")" = 1 ] || return 1
	local m=.spec.configuration.permittedHostDevices.mediatedDevices
	rejects "$TMP/out" \
		"${m}[0].mdevNameSelector |= sub(\"_\"; \" \")" \
		"mdevNameSelector \"$(head -1 <<<"$names" | sed 's/_/ /')\" has a space, which KubeVirt reads as '_'" \
		"${m}[0].mdevNameSelector = \"GRID_T4-1Q\"" \
		'mdevNameSelector "GRID_T4-1Q" matches nothing on this host' || return 1
	gpuctl vgpu del "$UUID" >/dev/null && echo "$CARD" >"$SYS_PCI/$CARD/driver/unbind" &&
		echo >"$SYS_PCI/$CARD/driver_override" && rmmod vgpu_test_parent
}

# Vendor VFs on nvidia: their model once a VF has a vGPU type, the PF never
check_vfs() {
	local vf want

	vendor_vf_rig_start || return 1
	for vf in "$PF" "${VFS[@]}"; do
		nl_rule_new "$vf" driver nvidia || return 1
	done
	expect_pci_driver "$PF" nvidia 0 || return 1
	echo 4 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "${VFS[@]}"; do
		expect_pci_driver "$vf" nvidia 5 || return 1
	done
	# no type yet: nothing to permit (the checker has seen empty lists)
	gpuctl -j export kubevirt >"$TMP/out.json" &&
		json_check '.spec.configuration.permittedHostDevices ==
			{pciHostDevices: [], mediatedDevices: []}' "$TMP/out.json" || return 1
	gpuctl vgpu set "${VFS[1]}" type 1156 >/dev/null || return 1
	export_kv "$TMP/out" || return 1
	want=$(want_resource "${VFS[1]}")
	[ "$(ids_of "${VFS[1]}")" = 1b36:0010 ] || return 1
	json_check --arg r "$want" '.spec.configuration.permittedHostDevices.pciHostDevices ==
		[{pciVendorSelector: "1b36:0010", resourceName: $r,
		  externalResourceProvider: false}]' "$TMP/out.json" || return 1
	[ "$(cat "$TMP/out.devices")" = "PCI $want ${VFS[1]}" ] || return 1
	rejects "$TMP/out" '.spec.configuration.permittedHostDevices.pciHostDevices[0].pciVendorSelector |= ascii_upcase' \
		"pciVendorSelector \"1B36:0010\" is not sysfs's vendor:device in lower case" || return 1
	gpuctl vgpu set "${VFS[1]}" type none >/dev/null && nl_rules_cleanup && vendor_vf_rig_stop
}

check_usage() {
	local words

	cmd_fails 'export kubevirt: unexpected argument "x"' gpuctl export kubevirt x &&
	cmd_fails 'unknown format "kubevirtx"' gpuctl export kubevirtx || return 1
	words=$(complete_words gpuctl export kub)
	echo "gpuctl export kub<TAB>: $words"
	[ "$words" = kubevirt ]
}

ktap_header
ktap_plan 6
ktap_run_stage "module and the checker" check_setup
ktap_run_stage "nothing reserved: both lists empty" check_empty
ktap_run_stage "one entry per reserved model on vfio-pci, as sysfs and lspci have it" \
	check_models
ktap_run_stage "one entry per mdev type name, spaces made '_'" check_mdev_types
ktap_run_stage "vendor VFs: their model once one has a vGPU type" check_vfs
ktap_run_stage "usage errors; completion" check_usage
ktap_finished
