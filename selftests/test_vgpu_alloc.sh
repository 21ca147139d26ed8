#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# vGPUs in the allocation ledger. "gpuctl alloc add ... vgpu TYPE count N"
# makes the instances through the mdev core's sysfs and names them to
# alloc-new as made for the allocation; "vgpu UUID" names one that exists.
# The parents are the kernel's sample mdev drivers (mbochs, whose types
# share a 96 MB pool, and mtty). Sysfs and the kernel's YNL CLI are the
# independent witnesses:
#   - by type: N instances made, recorded as made, each one GPU, the
#     instance's allocation shown to root only;
#   - all or nothing: a kernel refusal (a tenant limit) and a type that
#     runs out of room on the second instance both leave no instance;
#   - one instance, named by many requests at once, goes to one;
#   - vgpu del refuses an allocated instance;
#   - alloc del removes what was made for the allocation, keeps named
#     instances, and with "keep" keeps the made ones too;
#   - an allocated instance removed behind gpuctl's back loses its
#     allocation, which names it;
#   - alloc save writes the vGPUs, made ones marked.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_vgpu_alloc.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
MDEVS=/sys/bus/mdev/devices
VM1=7d9f3a10-0000-4000-8000-000000000001
VM2=7d9f3a10-0000-4000-8000-000000000002
VM3=7d9f3a10-0000-4000-8000-000000000003
U_TTY=8e2f0c10-0000-4000-8000-0000000000b1
U_RACE=8e2f0c10-0000-4000-8000-0000000000b2

cleanup() {
	nl_allocs_cleanup
	gpuctl limit set account acme max none 2>/dev/null
	mdevs_remove_all
	rmmod mbochs mtty 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

mdevs_now() {
	find "$MDEVS" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort
}

type_of() {	# UUID
	basename "$(readlink "$MDEVS/$1/mdev_type")"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	mdev_samples_load || return 1
	[ -z "$(mdevs_now)" ] && [ "$(gpuctl -j alloc show | jq '.allocations | length')" = 0 ] ||
		return 1
	# bash completion offers the types after "vgpu", and "keep" after an id
	complete_words gpuctl alloc add owner "$VM1" vgpu '' >"$TMP/words" || return 1
	grep -qx mbochs-small "$TMP/words" && grep -qx mtty-1 "$TMP/words" || return 1
	[ "$(complete_words gpuctl alloc del 3 '' | sed '/^$/d')" = keep ]
}

# gpuctl alloc add ... vgpu mbochs-small count 3
check_by_type() {
	local id u

	run_captured "$TMP/a1" "$TMP/err" gpuctl -j alloc add owner "$VM1" \
		account acme vgpu mbochs-small count 3 || return 1
	json_check '.allocations[0] | .gpus == 3 and .devices == [] and
		(.vgpus | length == 3 and all(.made))' "$TMP/a1" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a1") && echo "$id" >"$TMP/a1.id" || return 1
	jq -r '.allocations[0].vgpus[].uuid' "$TMP/a1" >"$TMP/a1.uuids" || return 1
	# sysfs has them, of that type; the module holds them in the ledger
	[ "$(mdevs_now | wc -l)" = 3 ] || return 1
	while read -r u; do
		[ "$(type_of "$u")" = mbochs-small ] || return 1
	done <"$TMP/a1.uuids"
	ynl --do alloc-get --json "{\"id\": $id}" >"$TMP/y1" || return 1
	json_check --slurpfile u <(jq -R . "$TMP/a1.uuids") \
		'(.["mdev-made"] | sort) == ($u | sort) and .gpus == 3 and
		 (has("mdev") | not)' "$TMP/y1" || return 1
	# the instance's allocation, for root only
	u=$(head -n1 "$TMP/a1.uuids")
	ynl --do mdev-get --json "{\"uuid\": \"$u\"}" >"$TMP/m" &&
	json_check --argjson id "$id" '.allocation == $id' "$TMP/m" || return 1
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env PYTHONPATH="$YNL_DIR" /usr/bin/python3 "$YNL_DIR/cli.py" \
		--spec "$GPUCTL_SPEC" --no-schema --output-json \
		--do mdev-get --json "{\"uuid\": \"$u\"}" >"$TMP/m.nobody" || return 1
	json_check 'has("allocation") | not' "$TMP/m.nobody" || return 1
	gpuctl vgpu show "$u" | grep -q " alloc $id\$"
}

# refused_clean REGEX ARGS...: gpuctl ARGS fails (exit 2) with REGEX, and
# leaves the mdev bus and the ledger as they were.
refused_clean() {
	local want=$1 rc=0

	shift
	mdevs_now >"$TMP/before" || return 1
	ynl --dump alloc-get | jq -S . >"$TMP/ledger.before" || return 1
	gpuctl "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	echo "\$ gpuctl $*: exit $rc"
	cat "$TMP/out" "$TMP/err"
	[ "$rc" = 2 ] || { echo "exit $rc, expected 2"; return 1; }
	grep -q -E -e "$want" "$TMP/err" || { echo "no '$want'"; return 1; }
	mdevs_now | diff -u "$TMP/before" - &&
	ynl --dump alloc-get | jq -S . | diff -u "$TMP/ledger.before" -
}

check_all_or_nothing() {
	# the kernel refuses: acme may hold 4 GPUs and holds 3
	gpuctl limit set account acme max 4 || return 1
	refused_clean "exceed|limit" alloc add owner "$VM2" account acme \
		vgpu mtty-1 count 2 || return 1
	grep -qx "gpuctl: cannot allocate for $VM2; removing the vGPUs made for it" \
		"$TMP/err" || return 1
	# the pool holds one large next to three small, not two
	refused_clean "^gpuctl: alloc add: no mdev parent has room for another vGPU of type mbochs-large \(made 1 of 2\)$" \
		alloc add owner "$VM2" vgpu mbochs-large count 2 || return 1
	refused_clean "^gpuctl: alloc add: no mdev parent has type nvidia-222$" \
		alloc add owner "$VM2" vgpu nvidia-222 || return 1
	# a device the host does not have: the module refuses after the making
	refused_clean "0000:3f:1f.7: no such device" \
		alloc add owner "$VM2" vgpu mtty-1 dev 3f:1f.7 || return 1
	grep -qx "gpuctl: cannot allocate for $VM2; removing the vGPUs made for it" \
		"$TMP/err"
}

# An existing instance, named; then one named by four requests at once.
check_named() {
	local i rc ok=0 id

	gpuctl vgpu add mtty type mtty-2 uuid "$U_TTY" >/dev/null || return 1
	run_captured "$TMP/a3" "$TMP/err" gpuctl -j alloc add owner "$VM3" \
		vgpu "$U_TTY" || return 1
	json_check --arg u "$U_TTY" '.allocations[0].vgpus ==
		[{"uuid": $u, "made": false}]' "$TMP/a3" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a3") && echo "$id" >"$TMP/a3.id" || return 1
	cmd_fails "is in allocation $id" \
		ynl --do alloc-new --json "{\"owner\": \"$VM2\", \"mdev\": [\"$U_TTY\"]}" ||
		return 1
	out_has "error: -16" || return 1

	gpuctl vgpu add mtty type mtty-1 uuid "$U_RACE" >/dev/null || return 1
	for i in 1 2 3 4; do
		gpuctl alloc add owner "$VM2" name "race$i" vgpu "$U_RACE" \
			>"$TMP/race$i" 2>&1 &
	done
	for i in 1 2 3 4; do
		rc=0
		wait -n || rc=$?
		[ "$rc" = 0 ] && ok=$((ok + 1))
	done
	cat "$TMP"/race?
	[ "$ok" = 1 ] || { echo "$ok requests got $U_RACE"; return 1; }
	[ "$(grep -l "is in allocation" "$TMP"/race? | wc -l)" = 3 ] || return 1
	ynl --dump alloc-get >"$TMP/all" || return 1
	json_check --arg u "$U_RACE" '[.[] | select(.mdev // [] | index($u))] |
		length == 1' "$TMP/all"
}

check_vgpu_del_refused() {
	local id

	id=$(cat "$TMP/a3.id") || return 1
	cmd_fails "^gpuctl: vgpu del: mdev $U_TTY is in allocation $id; delete the allocation first$" \
		gpuctl vgpu del "$U_TTY" || return 1
	[ -e "$MDEVS/$U_TTY" ]
}

check_save() {
	local id

	id=$(cat "$TMP/a1.id") || return 1
	gpuctl alloc save "$TMP/ledger" || return 1
	cat "$TMP/ledger"
	grep "owner $VM1 " "$TMP/ledger" >"$TMP/line" || return 1
	[ "$(grep -o ' vgpu [0-9a-f-]* made' "$TMP/line" | wc -l)" = 3 ] &&
	grep -q " id $id\$" "$TMP/line" &&
	grep -q "owner $VM3 vgpu $U_TTY id " "$TMP/ledger"
}

check_del() {
	local id u

	# made for it: removed with it
	id=$(cat "$TMP/a1.id") || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc del "$id" || return 1
	while read -r u; do
		[ ! -e "$MDEVS/$u" ] || { echo "$u is still there"; return 1; }
	done <"$TMP/a1.uuids"
	# named: stays
	id=$(cat "$TMP/a3.id") || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc del "$id" || return 1
	[ -e "$MDEVS/$U_TTY" ] || return 1
	# made, but kept
	gpuctl -j alloc add owner "$VM1" vgpu mtty-2 count 2 >"$TMP/a4" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a4") || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc del "$id" keep || return 1
	for u in $(jq -r '.allocations[0].vgpus[].uuid' "$TMP/a4"); do
		[ -e "$MDEVS/$u" ] || { echo "$u was removed"; return 1; }
		[ "$(type_of "$u")" = mtty-2 ] || return 1
	done
	ynl --dump alloc-get | jq -e --arg id "$id" 'map(select(.id == ($id | tonumber))) | length == 0'
}

# An allocated instance removed through sysfs: the allocation is lost.
# Deleting it leaves nothing behind, also when the instance was made for
# the allocation: one already removed is not removed again.
check_lost() {
	local id u

	gpuctl -j alloc add owner "$VM3" vgpu "$U_TTY" >"$TMP/a5" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a5") || return 1
	echo 1 >"$MDEVS/$U_TTY/remove" || return 1
	ynl --do alloc-get --json "{\"id\": $id}" >"$TMP/y5" || return 1
	json_check --arg u "$U_TTY" '.state == "lost" and
		.["state-reason"] == ($u + " was removed") and .mdev == [$u]' "$TMP/y5" || return 1
	gpuctl alloc del "$id" || return 1

	gpuctl -j alloc add owner "$VM3" vgpu mtty-1 >"$TMP/a6" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a6") || return 1
	u=$(jq -r '.allocations[0].vgpus[0].uuid' "$TMP/a6") || return 1
	[ -e "$MDEVS/$u" ] || { echo "no instance $u was made"; return 1; }
	echo 1 >"$MDEVS/$u/remove" || return 1
	ynl --do alloc-get --json "{\"id\": $id}" | jq -e '.state == "lost"' || return 1
	run_captured "$TMP/d6" "$TMP/e6" gpuctl alloc del "$id" || return 1
	[ ! -s "$TMP/e6" ] || { cat "$TMP/e6"; return 1; }
	ynl --dump alloc-get | jq -e --arg id "$id" 'map(select(.id == ($id | tonumber))) | length == 0'
}

ynl_start
ktap_header
ktap_plan 8
ktap_run_stage "mbochs and mtty loaded, no instance, no allocation" check_setup
ktap_run_stage "vgpu TYPE count 3: made, recorded as made, one GPU each" check_by_type
ktap_run_stage "all or nothing: a tenant limit, a type out of room, no such type" \
	check_all_or_nothing
ktap_run_stage "a named instance; four requests for one: one gets it" check_named
ktap_run_stage "vgpu del refuses an allocated instance" check_vgpu_del_refused
ktap_run_stage "alloc save writes the vGPUs, made ones marked" check_save
ktap_run_stage "alloc del removes made instances, keeps named ones, and keep keeps" \
	check_del
ktap_run_stage "an allocated instance removed: its allocation is lost" check_lost
ktap_finished
