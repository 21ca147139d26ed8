#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The gpuctl tool against sysfs: every device and group the tool shows is
# recomputed here from /sys/bus/pci/devices and /sys/kernel/iommu_groups,
# never from a list of expected values, so the test holds for any topology
# that has GPUs. Also the tool's error paths, help, version, monitor, man
# page and bash completion.

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_tool.XXXXXX)
MON_PID=

cleanup() {
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# The facts the tool must report about one PCI function, read from sysfs
# and printed as the JSON object `gpuctl -j dev show` gives for it.
sysfs_is_gpu() {	# ADDR
	local base=$(( $(<"$SYS_PCI/$1/class") >> 16 ))

	[ "$base" -eq $((0x03)) ] || [ "$base" -eq $((0x12)) ]
}

sysfs_is_bridge() {	# ADDR: header type 1 (PCI bridge) or 2 (CardBus)
	local ht

	ht=$(od -An -tu1 -j14 -N1 "$SYS_PCI/$1/config" | tr -d ' ')
	ht=$((ht & 0x7f))
	[ "$ht" -eq 1 ] || [ "$ht" -eq 2 ]
}

sysfs_group() {	# ADDR: IOMMU group number, empty without one
	[ -e "$SYS_PCI/$1/iommu_group" ] || return 0
	basename "$(readlink "$SYS_PCI/$1/iommu_group")"
}

sysfs_group_members() {	# GROUP
	ls "/sys/kernel/iommu_groups/$1/devices"
}

sysfs_role() {	# ADDR
	local a=$1 g m

	if sysfs_is_gpu "$a"; then
		echo gpu
		return
	fi
	if sysfs_is_bridge "$a"; then
		echo bridge
		return
	fi
	g=$(sysfs_group "$a")
	for m in $(sysfs_group_members "$g"); do
		if [ "${m%.*}" = "${a%.*}" ] && sysfs_is_gpu "$m"; then
			echo companion
			return
		fi
	done
	echo foreign
}

sysfs_pci_root() {	# ADDR: first device below the host bridge, or the host bridge
	local path top

	path=$(readlink -f "$SYS_PCI/$1")
	path=${path#/sys/devices/}
	top=${path%%/*}
	path=${path#"$top"/}
	if [ "${path%%/*}" = "$1" ]; then
		echo "$top"
	else
		echo "${path%%/*}"
	fi
}

sysfs_dev_json() {	# ADDR
	local a=$1 d=$SYS_PCI/$1 drv='' grp pf='' total=0 num=0

	[ -e "$d/driver" ] && drv=$(basename "$(readlink "$d/driver")")
	[ -e "$d/physfn" ] && pf=$(basename "$(readlink "$d/physfn")")
	[ -r "$d/sriov_totalvfs" ] && total=$(<"$d/sriov_totalvfs")
	[ -r "$d/sriov_numvfs" ] && num=$(<"$d/sriov_numvfs")
	grp=$(sysfs_group "$a")
	jq -n -S --arg address "$a" \
		--arg vendor_id "$(<"$d/vendor")" --arg device_id "$(<"$d/device")" \
		--arg subsystem_vendor_id "$(<"$d/subsystem_vendor")" \
		--arg subsystem_device_id "$(<"$d/subsystem_device")" \
		--arg class "$(<"$d/class")" --arg revision "$(<"$d/revision")" \
		--arg driver "$drv" --arg iommu_group "$grp" \
		--argjson numa_node "$(<"$d/numa_node")" \
		--arg pci_root "$(sysfs_pci_root "$a")" \
		--argjson sriov_totalvfs "$total" --argjson sriov_numvfs "$num" \
		--arg physfn "$pf" --arg role "$(sysfs_role "$a")" '
		def hex($n): $n | ltrimstr("0x");
		{address: $address,
		 vendor_id: hex($vendor_id), device_id: hex($device_id),
		 subsystem_vendor_id: hex($subsystem_vendor_id),
		 subsystem_device_id: hex($subsystem_device_id),
		 class: hex($class), revision: hex($revision),
		 driver: (if $driver == "" then null else $driver end),
		 iommu_group: (if $iommu_group == "" then null
			       else ($iommu_group | tonumber) end),
		 numa_node: $numa_node, pci_root: $pci_root,
		 sriov_totalvfs: $sriov_totalvfs, sriov_numvfs: $sriov_numvfs,
		 physfn: (if $physfn == "" then null else $physfn end),
		 role: $role}'
}

# Every device gpuctl must track: the GPUs and every member of their groups.
sysfs_tracked() {
	local d a g

	for d in "$SYS_PCI"/*; do
		a=${d##*/}
		sysfs_is_gpu "$a" || continue
		echo "$a"
		g=$(sysfs_group "$a")
		[ -n "$g" ] && sysfs_group_members "$g"
	done | sort -u
}

sysfs_gpu_groups() {
	local a

	for a in $(sysfs_tracked); do
		sysfs_group "$a"
	done | sort -un
}

# The tool's device objects, with ids written the way sysfs writes them
# (lower-case hex without "0x") so both sides compare as strings.
tool_devs() {
	gpuctl -j dev show | jq -S '.dev[] |
		def hex: if type == "number" then . else ltrimstr("0x") end;
		.vendor_id |= hex | .device_id |= hex |
		.subsystem_vendor_id |= hex | .subsystem_device_id |= hex |
		.class |= hex | .revision |= hex'
}

# A bound GPU whose driver can be unbound and bound again in the test.
pick_rebind_dev() {
	local a drv

	for a in $(sysfs_tracked); do
		sysfs_is_gpu "$a" || continue
		[ -e "$SYS_PCI/$a/driver" ] || continue
		drv=$(basename "$(readlink "$SYS_PCI/$a/driver")")
		case $drv in
		bochs*) echo "$a"; return ;;
		esac
	done
	for a in $(sysfs_tracked); do
		[ -e "$SYS_PCI/$a/driver" ] && sysfs_is_gpu "$a" && { echo "$a"; return; }
	done
}

# --- stages ---------------------------------------------------------------

check_dev_set() {
	sysfs_tracked >"$TMP/want" &&
	gpuctl -j dev show | jq -r '.dev[].address' | sort >"$TMP/got" &&
	diff -u "$TMP/want" "$TMP/got" &&
	[ -s "$TMP/want" ]
}

check_dev_fields() {
	local a rc=0

	tool_devs >"$TMP/devs" || return 1
	for a in $(sysfs_tracked); do
		sysfs_dev_json "$a" >"$TMP/want" || return 1
		jq -S --arg a "$a" 'select(.address == $a)' "$TMP/devs" >"$TMP/got"
		diff -u "$TMP/want" "$TMP/got" || rc=1
	done
	return $rc
}

check_id_formats() {
	# ids are 4 hex digits, the class 6, whatever the tool's quoting
	gpuctl -j dev show | jq -e '[.dev[] |
		(.vendor_id | tostring | test("^(0x)?[0-9a-f]{4}$")) and
		(.device_id | tostring | test("^(0x)?[0-9a-f]{4}$")) and
		(.class | tostring | test("^(0x)?[0-9a-f]{6}$"))] | all' >/dev/null
}

check_dev_one() {
	local a

	a=$(sysfs_tracked | tail -n1)
	tool_devs >"$TMP/devs" || return 1
	jq -S --arg a "$a" 'select(.address == $a)' "$TMP/devs" >"$TMP/want"
	gpuctl -j dev show "$a" | jq -S '.dev | length' >"$TMP/n" &&
	[ "$(cat "$TMP/n")" = 1 ] &&
	gpuctl -j dev show "$a" | jq -S '.dev[0] |
		def hex: if type == "number" then . else ltrimstr("0x") end;
		.vendor_id |= hex | .device_id |= hex |
		.subsystem_vendor_id |= hex | .subsystem_device_id |= hex |
		.class |= hex | .revision |= hex' >"$TMP/got" &&
	diff -u "$TMP/want" "$TMP/got"
}

check_dev_table() {
	local a vendor rc=0

	gpuctl dev show >"$TMP/table" || return 1
	for a in $(sysfs_tracked); do
		vendor=$(lspci -D -vmm -s "$a" | sed -n 's/^Vendor:\t//p')
		if ! grep -F "$a" "$TMP/table" | grep -qF "$vendor"; then
			echo "no line with $a and vendor \"$vendor\""
			rc=1
		fi
	done
	[ $rc -eq 0 ] || cat "$TMP/table"
	return $rc
}

# Viable when every non-bridge member is bound to a VFIO driver, pci-stub
# or nothing (spec, group attribute "viable").
sysfs_group_json() {	# GROUP
	local g=$1 m drv viable=true offenders=

	for m in $(sysfs_group_members "$g"); do
		sysfs_is_bridge "$m" && continue
		[ -e "$SYS_PCI/$m/driver" ] || continue
		drv=$(basename "$(readlink "$SYS_PCI/$m/driver")")
		case $drv in
		vfio*|pci-stub) ;;
		*) viable=false; offenders="$offenders $m" ;;
		esac
	done
	sysfs_group_members "$g" | jq -R . | jq -s -S --argjson id "$g" \
		--argjson viable "$viable" --arg off "$offenders" \
		'{id: $id, devices: sort, viable: $viable,
		  offenders: ($off | split(" ") | map(select(. != "")))}'
}

check_groups() {
	local g rc=0 reason

	gpuctl -j group show >"$TMP/groups" || return 1
	sysfs_gpu_groups >"$TMP/want"
	jq -r '.group[].id' "$TMP/groups" | sort -n >"$TMP/got"
	diff -u "$TMP/want" "$TMP/got" || rc=1
	for g in $(sysfs_gpu_groups); do
		sysfs_group_json "$g" >"$TMP/want"
		jq -S --argjson g "$g" '.group[] | select(.id == $g) |
			{id, devices: (.devices | sort), viable}' "$TMP/groups" >"$TMP/got"
		diff -u <(jq -S 'del(.offenders)' "$TMP/want") "$TMP/got" || rc=1
		reason=$(jq -r --argjson g "$g" \
			'.group[] | select(.id == $g) | .reason // ""' "$TMP/groups")
		if jq -e .viable "$TMP/want" >/dev/null; then
			[ -z "$reason" ] || { echo "group $g viable with reason \"$reason\""; rc=1; }
		elif ! jq -r '.offenders[]' "$TMP/want" | grep -qxF -f - \
			<(grep -o '[0-9a-f]\{4\}:[0-9a-f]\{2\}:[0-9a-f]\{2\}\.[0-7]' <<<"$reason"); then
			echo "group $g: reason \"$reason\" names no offender of: $(jq -c .offenders "$TMP/want")"
			rc=1
		fi
	done
	return $rc
}

check_viable_tracks_driver() {
	# Unbinding every non-bridge member of a group makes it viable;
	# binding them again restores the previous answer.
	local g m drv rc=0 bound=()

	g=$(sysfs_group "$(pick_rebind_dev)")
	[ -n "$g" ] || return 1
	for m in $(sysfs_group_members "$g"); do
		sysfs_is_bridge "$m" && continue
		[ -e "$SYS_PCI/$m/driver" ] || continue
		drv=$(basename "$(readlink "$SYS_PCI/$m/driver")")
		bound+=("$m=$drv")
		write_to "$SYS_PCI/$m/driver/unbind" "$m"
	done
	gpuctl -j group show | jq -e --argjson g "$g" \
		'.group[] | select(.id == $g) | .viable == true and (has("reason") | not or .reason == null)' ||
		rc=1
	for m in "${bound[@]}"; do
		write_to "/sys/bus/pci/drivers/${m#*=}/bind" "${m%%=*}"
	done
	gpuctl -j group show | jq -e --argjson g "$g" \
		'.group[] | select(.id == $g) | .viable == false' || rc=1
	return $rc
}

check_no_such_dev() {
	local rc

	gpuctl dev show 0000:ff:1f.7 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/err"
	# 2 is the tool's "kernel or netlink error" exit code
	[ $rc -eq 2 ] && [ ! -s "$TMP/out" ] &&
	grep -qi -e '0000:ff:1f\.7' -e 'no such device' "$TMP/err"
}

check_garbage_addr() {
	local rc

	gpuctl dev show garbage >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/err"
	[ $rc -eq 1 ] && [ -s "$TMP/err" ]
}

check_bad_object() {
	local rc

	gpuctl nosuchobject >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ]
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
	drv=$(basename "$(readlink "$SYS_PCI/$a/driver")")
	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	# The tool joins the group before it polls; give it the time to start
	# under TCG.
	sleep 2
	write_to "$SYS_PCI/$a/driver/unbind" "$a"
	write_to "/sys/bus/pci/drivers/$drv/bind" "$a"
	for i in $(seq 20); do
		jq -e -s --arg a "$a" --arg drv "$drv" \
			'[.[] | select(.name == "dev-change-ntf" and .msg.address == $a)] |
			 any(.msg.driver == $drv)' "$TMP/mon" >/dev/null 2>&1 && break
		sleep 0.5
	done
	kill -TERM "$MON_PID"
	wait "$MON_PID"
	i=$?
	MON_PID=
	cat "$TMP/mon" "$TMP/mon.err"
	[ $i -eq 0 ] || { echo "monitor exit status $i on SIGTERM"; return 1; }
	# one JSON object per line, each {"name": ..., "msg": {...}}
	while read -r line; do
		jq -e 'has("name") and (.msg | type == "object")' <<<"$line" \
			>/dev/null || { echo "bad line: $line"; return 1; }
	done <"$TMP/mon"
	# the unbind shows the device without a driver, then the bind with it
	jq -e -s --arg a "$a" --arg drv "$drv" '
		[.[] | select(.name == "dev-change-ntf" and .msg.address == $a) |
		 .msg.driver // null] as $d |
		($d | index(null)) as $u |
		$u != null and ($d[$u:] | index($drv)) != null' "$TMP/mon" >/dev/null
}

check_man() {
	local f=$GPUCTL_ROOT/tools/gpuctl/gpuctl.8

	[ -f "$f" ] || return 1
	# man --warnings sends groff's complaints to stderr
	MANWIDTH=80 man --warnings -l "$f" 2>"$TMP/man.err" >"$TMP/man.out"
	cat "$TMP/man.err"
	[ ! -s "$TMP/man.err" ] && grep -q 'EXIT STATUS' "$TMP/man.out"
}

complete_words() {	# WORD...: the completions bash offers for the last word
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

check_not_loaded() {
	local out rc

	gpuctl_unload || return 1
	out=$(gpuctl dev show 2>&1)
	rc=$?
	gpuctl_load || return 1
	echo "$out"
	[ $rc -eq 1 ] && [ "$out" = "gpuctl: kernel module not loaded (modprobe gpuctl)" ]
}

ktap_print_header
ktap_set_plan 20
gpuctl_load || ktap_exit_fail_msg "cannot load $GPUCTL_KO"

run_stage "dev show lists the GPUs and their group members" check_dev_set
run_stage "dev show fields match sysfs for every device" check_dev_fields
run_stage "dev show ids are 4 hex digits, class 6" check_id_formats
run_stage "dev show ADDR gives one device" check_dev_one
run_stage "dev show table lists every address with its vendor" check_dev_table
run_stage "group show matches /sys/kernel/iommu_groups" check_groups
run_stage "group viable follows member drivers" check_viable_tracks_driver
run_stage "reject unknown address 0000:ff:1f.7 (exit 2)" check_no_such_dev
run_stage "reject malformed address (exit 1)" check_garbage_addr
run_stage "reject unknown object (exit 1)" check_bad_object
run_stage "-V prints the version" check_version
run_stage "help and dev help" check_help
run_stage "no arguments means dev show" check_no_args_is_dev_show
run_stage "monitor -j streams unbind and bind, exits 0 on SIGTERM" check_monitor
if command -v man >/dev/null; then
	run_stage "man page renders without warnings" check_man
else
	ktap_test_skip "man page renders without warnings (no man)"
fi
run_stage "completion: gpuctl d -> dev" check_complete_object
run_stage "completion: dev show offers live addresses" check_complete_address
run_stage "without the module: exact message, exit 1" check_not_loaded
run_stage "dev show works again after reload" check_dev_set
run_stage "module unloads" gpuctl_unload

ktap_finished
