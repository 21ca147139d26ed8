#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The gpuctl tool against sysfs: every device and group the tool shows is
# recomputed here from /sys/bus/pci/devices and /sys/kernel/iommu_groups,
# never from a list of expected values, so the test holds for any topology
# that has GPUs. Also the tool's error paths, help, version, monitor, man
# page and bash completion.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_tool.XXXXXX)
MON_PID=

cleanup() {
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# The model: what the tool must report, from sysfs alone. One pass over
# /sys/bus/pci/devices with few forks, because every fork is slow under TCG:
# files are read with the read builtin, never $(<FILE), which forks.
declare -A CLASS DRIVER GROUP PHYSFN PARENT

sysfs_scan() {
	local d a dir name target

	CLASS=() DRIVER=() GROUP=() PHYSFN=() PARENT=()
	for d in "$SYS_PCI"/*; do
		read -r "CLASS[${d##*/}]" <"$d/class"
	done
	# every link the model needs, from one find
	while read -r dir name target; do
		a=${dir##*/}
		case $name in
		driver) DRIVER[$a]=${target##*/} ;;
		iommu_group) GROUP[$a]=${target##*/} ;;
		physfn) PHYSFN[$a]=${target##*/} ;;
		esac
	done < <(find "$SYS_PCI"/*/ -maxdepth 1 \
		\( -name driver -o -name iommu_group -o -name physfn \) -printf '%h %f %l\n')
	# ../../../devices/pci0000:00/0000:00:10.0/0000:01:00.0: the part
	# after the host bridge names the top-most port
	while read -r a target; do
		target=${target#*/devices/}
		name=${target%%/*}
		target=${target#"$name"/}
		if [ "${target%%/*}" = "$a" ]; then
			PARENT[$a]=$name
		else
			PARENT[$a]=${target%%/*}
		fi
	done < <(find "$SYS_PCI"/ -mindepth 1 -maxdepth 1 -printf '%f %l\n')
}

sysfs_is_gpu() {	# ADDR
	local base=$(( ${CLASS[$1]} >> 16 ))

	[ "$base" -eq $((0x03)) ] || [ "$base" -eq $((0x12)) ]
}

sysfs_is_bridge() {	# ADDR: header type 1 (PCI bridge) or 2 (CardBus)
	local ht

	ht=$(od -An -tu1 -j14 -N1 "$SYS_PCI/$1/config" | tr -d ' ')
	ht=$((ht & 0x7f))
	[ "$ht" -eq 1 ] || [ "$ht" -eq 2 ]
}

sysfs_group_members() {	# GROUP
	local m

	for m in "/sys/kernel/iommu_groups/$1/devices"/*; do
		echo "${m##*/}"
	done
}

sysfs_role() {	# ADDR
	local a=$1 m

	if sysfs_is_gpu "$a"; then
		echo gpu
		return
	fi
	if sysfs_is_bridge "$a"; then
		echo bridge
		return
	fi
	for m in $(sysfs_group_members "${GROUP[$a]}"); do
		if [ "${m%.*}" = "${a%.*}" ] && sysfs_is_gpu "$m"; then
			echo companion
			return
		fi
	done
	echo foreign
}

# Every device gpuctl must track: the GPUs and every member of their groups.
sysfs_tracked() {
	local a

	sysfs_scan
	for a in "${!CLASS[@]}"; do
		sysfs_is_gpu "$a" || continue
		echo "$a"
		[ -n "${GROUP[$a]}" ] && sysfs_group_members "${GROUP[$a]}"
	done | sort -u
}

sysfs_gpu_groups() {
	local a

	sysfs_scan
	for a in "${!CLASS[@]}"; do
		sysfs_is_gpu "$a" && [ -n "${GROUP[$a]}" ] && echo "${GROUP[$a]}"
	done | sort -un
}

# The tracked devices as `gpuctl -j dev show` must print them (without
# the pci.ids names), one sorted JSON object each.
sysfs_model() {
	local a d total num ven dev sven sdev rev node vgpu

	sysfs_scan
	for a in $(sysfs_tracked); do
		d=$SYS_PCI/$a
		total=0 num=0
		[ -r "$d/sriov_totalvfs" ] && read -r total <"$d/sriov_totalvfs"
		[ -r "$d/sriov_numvfs" ] && read -r num <"$d/sriov_numvfs"
		read -r ven <"$d/vendor"
		read -r dev <"$d/device"
		read -r sven <"$d/subsystem_vendor"
		read -r sdev <"$d/subsystem_device"
		read -r rev <"$d/revision"
		read -r node <"$d/numa_node"
		# a vendor VF's vGPU type (NVIDIA's nvidia/ files)
		vgpu=
		[ -n "${PHYSFN[$a]}" ] && [ -r "$d/nvidia/current_vgpu_type" ] &&
			read -r vgpu <"$d/nvidia/current_vgpu_type"
		printf '%s\n' "$a" "$ven" "$dev" "$sven" "$sdev" "${CLASS[$a]}" \
			"$((rev))" "${DRIVER[$a]}" "${GROUP[$a]}" "$node" \
			"${PARENT[$a]}" "$total" "$num" "${PHYSFN[$a]}" "$(sysfs_role "$a")" \
			"$vgpu"
	done | jq -R . | jq -s -S -c '
		def hex: ltrimstr("0x");
		def opt: if . == "" then null else . end;
		[range(0; length; 16) as $i | .[$i:$i + 16]] | .[] |
		{address: .[0], vendor_id: (.[1] | hex), device_id: (.[2] | hex),
		 subsystem_vendor_id: (.[3] | hex),
		 subsystem_device_id: (.[4] | hex),
		 class: (.[5] | hex), revision: (.[6] | tonumber),
		 driver: (.[7] | opt),
		 iommu_group: (.[8] | opt | if . then tonumber else null end),
		 numa_node: (.[9] | tonumber), pci_root: .[10],
		 sriov_totalvfs: (.[11] | tonumber),
		 sriov_numvfs: (.[12] | tonumber),
		 physfn: (.[13] | opt), role: .[14],
		 reserved: false, state: "free", state_reason: null,
		 rule: null, action: null, allocation: null, holder: null,
		 refused: null,
		 vgpu_type: (.[15] | opt | if . then tonumber else null end),
		 # QEMU devices migrate on no VFIO driver here; the key is
		 # checked in test_qemu_guest.sh and test_mdev.sh
		 migration: (if (.[7] | test("vfio")) then [] else null end),
		 migration_compat: (if (.[7] | test("vfio")) then "present"
				    else null end)}'
}

# The tool's device objects without the names it looks up in the hwdb,
# which check_dev_names compares with lspci.
tool_devs() {	# [ADDR]
	gpuctl -j dev show "$@" | jq -S '.devices[] | del(.vendor, .device) |
		.migration_compat |= (if . then "present" else null end)'
}

# A bound GPU whose driver can be unbound and bound again in the test:
# bochs-drm when there is one, which rebinds cleanly.
pick_rebind_dev() {
	local a pick=''

	sysfs_scan
	for a in $(sysfs_tracked); do
		if ! sysfs_is_gpu "$a" || [ -z "${DRIVER[$a]}" ]; then
			continue
		fi
		[ "${DRIVER[$a]}" = bochs-drm ] && { echo "$a"; return; }
		[ -n "$pick" ] || pick=$a
	done
	echo "$pick"
}

# --- stages ---------------------------------------------------------------

check_dev_set() {
	sysfs_tracked >"$TMP/want" &&
	gpuctl -j dev show | jq -r '.devices[].address' | sort >"$TMP/got" &&
	diff -u "$TMP/want" "$TMP/got" &&
	[ -s "$TMP/want" ]
}

check_dev_fields() {
	sysfs_model | jq -s -S 'sort_by(.address)' >"$TMP/want" &&
	tool_devs | jq -s -S 'sort_by(.address)' >"$TMP/got" &&
	diff -u "$TMP/want" "$TMP/got" &&
	json_check 'length > 0' "$TMP/want"
}

check_id_formats() {
	# ids are strings of 4 lower-case hex digits, the class of 6
	gpuctl -j dev show | json_check '.devices | length > 0 and all(
		(.vendor_id | test("^[0-9a-f]{4}$")) and
		(.device_id | test("^[0-9a-f]{4}$")) and
		(.subsystem_vendor_id | test("^[0-9a-f]{4}$")) and
		(.subsystem_device_id | test("^[0-9a-f]{4}$")) and
		(.class | test("^[0-9a-f]{6}$")))'
}

check_dev_one() {
	local a

	sysfs_tracked >"$TMP/tracked" || return 1
	a=$(tail -n1 "$TMP/tracked")
	[ -n "$a" ] || { echo "no tracked device in sysfs"; return 1; }
	tool_devs >"$TMP/devs" || return 1
	jq -S --arg a "$a" 'select(.address == $a)' "$TMP/devs" >"$TMP/want"
	[ -s "$TMP/want" ] || { echo "dev show lists no $a"; return 1; }
	gpuctl -j dev show "$a" | json_check '.devices | length == 1' &&
	tool_devs "$a" >"$TMP/got" &&
	diff -u "$TMP/want" "$TMP/got"
}

lspci_names() {	# "ADDR Vendor=NAME;Device=NAME;" for every device
	lspci -D -vmm | awk -F'\t' '
		/^Slot:/ { a = $2 } /^Vendor:/ { v = $2 } /^Device:/ { d = $2 }
		/^$/ && a { print a " Vendor=" v ";Device=" d ";"; a = "" }
		END { if (a) print a " Vendor=" v ";Device=" d ";" }'
}

# lspci's names of the tracked devices, as lspci_names prints them.
tracked_lspci_names() {
	sysfs_tracked >"$TMP/tracked" || return 1
	[ -s "$TMP/tracked" ] || { echo "no tracked device in sysfs"; return 1; }
	lspci_names | awk 'NR == FNR { t[$1] = 1; next } $1 in t' "$TMP/tracked" - |
		sort
}

check_dev_names() {
	tracked_lspci_names >"$TMP/want" || return 1
	gpuctl -j dev show | jq -r '.devices[] |
		"\(.address) Vendor=\(.vendor);Device=\(.device);"' | sort >"$TMP/got" ||
		return 1
	diff -u "$TMP/want" "$TMP/got"
}

# What dev show names the tracked devices with a hwdb that knows only
# vendor $HW_V and its device $HW_D: the hwdb's names, and every other id
# as a number, as lspci prints an id it does not know; from the ids in
# $TMP/ids.
hwdb_names_want() {
	local addr vid did ven dev

	while read -r addr vid did; do
		ven="Vendor $vid"
		dev="Device $did"
		[ "$vid" = "$HW_V" ] && ven="gpuctl test vendor"
		[ "$vid $did" = "$HW_V $HW_D" ] && dev="gpuctl test model"
		echo "$addr Vendor=$ven;Device=$dev;"
	done <"$TMP/ids" | sort
}

# dev show's names in a mount namespace where the hwdb is FILE: $TMP/hw's,
# or /dev/null for a host without one.
hwdb_names_got() {	# FILE
	local bins=() b

	for b in /etc/udev/hwdb.bin /usr/lib/udev/hwdb.bin; do
		[ -e "$b" ] && bins+=("$b")
	done
	[ "${#bins[@]}" -gt 0 ] || { echo "no hwdb.bin on this host"; return 1; }
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m sh -ec '
		hw=$1; shift
		for b in "$@"; do mount --bind "$hw" "$b"; done
		gpuctl -j dev show' sh "$1" "${bins[@]}" |
		jq -r '.devices[] | "\(.address) Vendor=\(.vendor);Device=\(.device);"' |
		sort
}

# Names come from udev's hwdb when the host has one, and from pci.ids
# when it has none: a hwdb compiled with systemd-hwdb that renames one
# device pci.ids knows stands in for the host's, and the other devices
# read as numbers; then with no hwdb at all, the names are lspci's.
check_names_hwdb() {
	local a

	gpuctl -j dev show | jq -r '.devices[] | "\(.address) \(.vendor_id) \(.device_id)"' \
		>"$TMP/ids" || return 1
	tracked_lspci_names >"$TMP/want" || return 1
	# a device pci.ids names, so that the source of the names shows
	a=$(grep -v -e "Vendor=Vendor " -e ";Device=Device " "$TMP/want" | head -n1)
	[ -n "$a" ] || { echo "pci.ids names no tracked device"; return 1; }
	read -r _ HW_V HW_D < <(grep "^${a%% *} " "$TMP/ids") || return 1
	mkdir -p "$TMP/hw/etc/udev/hwdb.d"
	printf '%s\n' "pci:v0000${HW_V^^}d0000${HW_D^^}*" \
		" ID_MODEL_FROM_DATABASE=gpuctl test model" "" \
		"pci:v0000${HW_V^^}*" " ID_VENDOR_FROM_DATABASE=gpuctl test vendor" \
		>"$TMP/hw/etc/udev/hwdb.d/50-gpuctl-test.hwdb"
	systemd-hwdb --root="$TMP/hw" update || return 1
	hwdb_names_want >"$TMP/want.hwdb" &&
	hwdb_names_got "$TMP/hw/etc/udev/hwdb.bin" >"$TMP/got.hwdb" || return 1
	diff -u "$TMP/want.hwdb" "$TMP/got.hwdb" || return 1
	hwdb_names_got /dev/null >"$TMP/got.none" || return 1
	diff -u "$TMP/want" "$TMP/got.none" || return 1
	grep -c "gpuctl test model" "$TMP/got.hwdb"
}

check_dev_table() {
	tracked_lspci_names >"$TMP/names" || return 1
	gpuctl dev show >"$TMP/table" || return 1
	# every tracked address on a line that also names its vendor
	awk 'NR == FNR {
		v = $0; sub(/^[^ ]* Vendor=/, "", v); sub(/;Device=.*/, "", v)
		want[$1] = v; next
	}
	{ for (a in want) if (index($0, a) && index($0, want[a])) found[a] = 1 }
	END {
		for (a in want) if (!(a in found)) {
			printf "no line with %s and vendor \"%s\"\n", a, want[a]; bad = 1
		}
		exit bad
	}' "$TMP/names" "$TMP/table" || { cat "$TMP/table"; return 1; }
}

# Viable when every non-bridge member is bound to a VFIO driver, pci-stub
# or nothing (spec, group attribute "viable"). One line per group of a GPU:
# "ID VIABLE MEMBER,... OFFENDER,...", from sysfs with builtins only.
sysfs_groups_model() {
	local g m viable members offenders

	for g in $(sysfs_gpu_groups); do
		viable=true members='' offenders=''
		for m in $(sysfs_group_members "$g"); do
			members+=",$m"
			sysfs_is_bridge "$m" && continue
			[ -n "${DRIVER[$m]}" ] || continue
			case ${DRIVER[$m]} in
			vfio*|pci-stub) ;;
			*) viable=false; offenders+=",$m" ;;
			esac
		done
		echo "$g $viable ${members#,} ${offenders#,}"
	done
}

# The tool's groups against the model: the same ids, members and
# viability; no reason when viable, else a reason naming an offender.
check_groups() {
	gpuctl -j group show >"$TMP/groups" || return 1
	sysfs_scan
	sysfs_groups_model >"$TMP/want" || return 1
	[ -s "$TMP/want" ] || { echo "no GPU in an IOMMU group in sysfs"; return 1; }
	jq -r '.groups[] | "\(.id) \(.viable) \(.devices | sort | join(",")) \(.reason // "")"' \
		"$TMP/groups" >"$TMP/got" || return 1
	awk 'NR == FNR { want[$1] = $0; next }
	{
		id = $1; seen[id] = 1
		if (!(id in want)) { print "group " id " is not a GPU group of sysfs"; bad = 1; next }
		split(want[id], w, " ")
		reason = $0; sub(/^[^ ]* [^ ]* [^ ]* ?/, "", reason)
		if ($2 != w[2] || $3 != w[3]) {
			print "group " id ": gpuctl \"" $2 " " $3 "\", sysfs \"" w[2] " " w[3] "\""
			bad = 1
		} else if (w[2] == "true" && reason != "") {
			print "group " id " viable with reason \"" reason "\""; bad = 1
		} else if (w[2] == "false") {
			n = split(w[4], off, ","); named = 0
			for (i = 1; i <= n; i++) if (index(reason, off[i])) named = 1
			if (!named) {
				print "group " id ": reason \"" reason "\" names no offender of " w[4]
				bad = 1
			}
		}
	}
	END {
		for (id in want) if (!(id in seen)) { print "gpuctl lacks group " id; bad = 1 }
		exit bad
	}' "$TMP/want" "$TMP/got" || { cat "$TMP/want" "$TMP/got"; return 1; }
}

check_viable_tracks_driver() {
	# Unbinding every non-bridge member of a group makes it viable;
	# binding them again restores the previous answer.
	local g m rc=0 bound=()

	sysfs_scan
	g=${GROUP[$(pick_rebind_dev)]}
	[ -n "$g" ] || { echo "no bound GPU in an IOMMU group"; return 1; }
	for m in $(sysfs_group_members "$g"); do
		sysfs_is_bridge "$m" && continue
		[ -n "${DRIVER[$m]}" ] || continue
		bound+=("$m=${DRIVER[$m]}")
		write_to "$m" "$SYS_PCI/$m/driver/unbind"
	done
	gpuctl -j group show | json_check --argjson g "$g" \
		'[.groups[] | select(.id == $g)] | length == 1 and
		 (.[0] | .viable == true and .reason == null)' || rc=1
	for m in "${bound[@]}"; do
		write_to "${m%%=*}" "/sys/bus/pci/drivers/${m#*=}/bind"
	done
	gpuctl -j group show | json_check --argjson g "$g" \
		'[.groups[] | select(.id == $g)] | length == 1 and .[0].viable == false' ||
		rc=1
	return "$rc"
}

check_no_such_dev() {
	local rc

	gpuctl dev show 0000:ff:1f.7 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/err"
	# 2 is the tool's "kernel or netlink error" exit code
	[ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] &&
	grep -qi -e '0000:ff:1f\.7' -e 'no such device' "$TMP/err"
}

check_garbage_addr() {
	local rc

	gpuctl dev show garbage >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/out" "$TMP/err"
	[ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] &&
	grep -qx 'gpuctl: invalid PCI address "garbage", expected DDDD:BB:DD.F or BB:DD.F' \
		"$TMP/err"
}

check_bad_object() {
	local rc

	gpuctl nosuchobject >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/out" "$TMP/err"
	[ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] &&
	grep -qx 'gpuctl: unknown object "nosuchobject", try "gpuctl help"' "$TMP/err"
}

check_version() {
	local out

	out=$(gpuctl -V) || return 1
	echo "$out"
	[[ $out == gpuctl* ]] && [ "$(wc -l <<<"$out")" -eq 1 ]
}

check_help() {
	gpuctl help >"$TMP/help" 2>&1 || return 1
	grep -q 'dev' "$TMP/help" && grep -q 'group' "$TMP/help" &&
	grep -q 'monitor' "$TMP/help" &&
	gpuctl dev help >"$TMP/help" 2>&1 &&
	grep -q 'gpuctl.*dev show' "$TMP/help"
}

check_no_args_is_dev_show() {
	gpuctl >"$TMP/a" && gpuctl dev show >"$TMP/b" && diff -u "$TMP/b" "$TMP/a"
}

check_monitor() {
	local a drv i

	a=$(pick_rebind_dev)
	[ -n "$a" ] || return 1
	sysfs_scan
	drv=${DRIVER[$a]}
	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" || return 1
	write_to "$a" "$SYS_PCI/$a/driver/unbind"
	write_to "$a" "/sys/bus/pci/drivers/$drv/bind"
	for i in $(seq 20); do
		json_check --slurp --arg a "$a" --arg drv "$drv" \
			'[.[] | select(.name == "dev-change-ntf" and .msg.address == $a)] |
			 any(.msg.driver == $drv)' "$TMP/mon" >/dev/null 2>&1 && break
		sleep 0.5
	done
	kill -TERM "$MON_PID"
	wait "$MON_PID"
	i=$?
	MON_PID=
	cat "$TMP/mon" "$TMP/mon.err"
	[ "$i" -eq 0 ] || { echo "monitor exit status $i on SIGTERM"; return 1; }
	# one JSON object per line, each {"name": ..., "msg": {...}}
	jq -e -R -n '[inputs | (try fromjson catch "bad line: \(.)")] |
		length > 0 and all(type == "object" and has("name") and
				   (.msg | type == "object"))' "$TMP/mon" >/dev/null ||
		{ echo "not one event object per line"; return 1; }
	# the unbind shows the device without a driver, then the bind with it
	json_check --slurp --arg a "$a" --arg drv "$drv" '
		[.[] | select(.name == "dev-change-ntf" and .msg.address == $a) |
		 .msg.driver // null] as $d |
		($d | index(null)) as $u |
		$u != null and ($d[$u:] | index($drv)) != null' "$TMP/mon"
}

check_man() {
	local f=$GPUCTL_ROOT/tools/gpuctl/gpuctl.8

	[ -f "$f" ] || return 1
	# man --warnings sends groff's complaints to stderr
	MANWIDTH=80 man --warnings -l "$f" 2>"$TMP/man.err" >"$TMP/man.out"
	cat "$TMP/man.err"
	[ ! -s "$TMP/man.err" ] && grep -q 'EXIT STATUS' "$TMP/man.out"
}

check_complete_object() {
	complete_words gpuctl d >"$TMP/c" || return 1
	cat "$TMP/c"
	grep -qx 'dev' "$TMP/c"
}

check_complete_address() {
	complete_words gpuctl dev show "" | sort >"$TMP/c" || return 1
	sysfs_tracked >"$TMP/want"
	# every live address is offered
	comm -23 "$TMP/want" "$TMP/c" >"$TMP/missing"
	cat "$TMP/missing"
	[ ! -s "$TMP/missing" ]
}

# Every command that needs the module exits 3 with one exact line; a usage
# error is found first (1), and "apply FILE check" needs no module (0).
not_loaded_run() {	# WANT_RC CMD...
	local want=$1 rc=0
	shift

	gpuctl "$@" >"$TMP/nl.out" 2>"$TMP/nl.err" || rc=$?
	echo "gpuctl $*: exit $rc"
	cat "$TMP/nl.out" "$TMP/nl.err"
	[ "$rc" -eq "$want" ] || return 1
	[ "$want" -ne 3 ] && return 0
	[ ! -s "$TMP/nl.out" ] &&
	[ "$(cat "$TMP/nl.err")" = "gpuctl: kernel module not loaded (modprobe gpuctl)" ]
}

check_not_loaded() {
	local rc=0 cmd

	echo "reserve 0000:7f:00.0" >"$TMP/conf"
	gpuctl_unload || return 1
	[ ! -d /sys/module/gpuctl ] || { echo "gpuctl still loaded"; return 1; }
	for cmd in "dev show" "dev show 0000:7f:00.0" "group show 1" "reserve show" \
		   "alloc show" "limit show" "-j monitor" "apply $TMP/conf"; do
		# shellcheck disable=SC2086 # the command's words
		not_loaded_run 3 $cmd || rc=1
	done
	not_loaded_run 3 dev set 0000:7f:00.0 numvfs 0 || rc=1
	not_loaded_run 1 dev show garbage || rc=1
	not_loaded_run 1 dev set 0000:7f:00.0 numvfs x || rc=1
	not_loaded_run 0 apply "$TMP/conf" check || rc=1
	gpuctl_load || return 1
	return "$rc"
}

ktap_header
ktap_plan 22
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

ktap_run_stage "dev show lists the GPUs and their group members" check_dev_set
ktap_run_stage "dev show fields match sysfs for every device" check_dev_fields
ktap_run_stage "dev show ids are 4 hex digits, class 6" check_id_formats
ktap_run_stage "dev show ADDR gives one device" check_dev_one
ktap_run_stage "dev show vendor and device names match lspci" check_dev_names
ktap_run_stage "names from udev's hwdb; from pci.ids on a host without one" check_names_hwdb
ktap_run_stage "dev show table lists every address with its vendor" check_dev_table
ktap_run_stage "group show matches /sys/kernel/iommu_groups" check_groups
ktap_run_stage "group viable follows member drivers" check_viable_tracks_driver
ktap_run_stage "reject unknown address 0000:ff:1f.7 (exit 2)" check_no_such_dev
ktap_run_stage "reject malformed address (exit 1)" check_garbage_addr
ktap_run_stage "reject unknown object (exit 1)" check_bad_object
ktap_run_stage "-V prints the version" check_version
ktap_run_stage "help and dev help" check_help
ktap_run_stage "no arguments means dev show" check_no_args_is_dev_show
ktap_run_stage "monitor -j streams unbind and bind, exits 0 on SIGTERM" check_monitor
if command -v man >/dev/null; then
	ktap_run_stage "man page renders without warnings" check_man
else
	ktap_skip "man page renders without warnings (no man)"
fi
ktap_run_stage "completion: gpuctl d -> dev" check_complete_object
ktap_run_stage "completion: dev show offers live addresses" check_complete_address
ktap_run_stage "without the module: exact message, exit 3; usage errors still 1" \
	check_not_loaded
ktap_run_stage "dev show works again after reload" check_dev_set
ktap_run_stage "module unloads" gpuctl_unload

ktap_finished
