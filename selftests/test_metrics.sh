#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl metrics and gpuctl monitor --metrics DIR, read by Prometheus's own
# code: promtool check metrics (Debian's prometheus package), and a real
# prometheus-node-exporter with only the textfile collector, on 127.0.0.1,
# scraped over HTTP. The values are checked against the module's view
# through gpuctl-nl and against sysfs:
#   - devices by role and state, every combination present;
#   - allocations by state and the GPUs they hold, a tenant limit's used
#     and max, a VFIO open;
#   - vGPU capacity and instances per mdev type (the kernel's mtty sample);
#   - each VFIO device's migration capabilities and key, as YNL and
#     dev show give them, and whether an allocation could live-migrate,
#     which alloc show and doctor say too;
#   - the file is replaced in one rename, with no timestamps, and no
#     temporary file stays; a directory that does not exist is an error
#     that names it;
#   - monitor --metrics rewrites the file on events, without a timer.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_metrics.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
PROM_DIR=$TMP/textfile
PROM=$PROM_DIR/gpuctl.prom
EXPORTER_PORT=9931
EXPORTER_PID=
MONITOR_PID=
GPU=0000:01:00.0
VM1=3c1f0d20-0000-4000-8000-000000000001
VM2=3c1f0d20-0000-4000-8000-000000000002
UUID=3c1f0d20-0000-4000-8000-0000000000a1

cleanup() {
	[ -n "$MONITOR_PID" ] && kill "$MONITOR_PID" 2>/dev/null
	[ -n "$EXPORTER_PID" ] && kill "$EXPORTER_PID" 2>/dev/null
	vfio_open_stop 2>/dev/null
	nl_allocs_cleanup
	gpuctl limit set account acme max none 2>/dev/null
	nl_rules_cleanup
	mdevs_remove_all
	rmmod mbochs mtty 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# metric NAME{LABELS}: the value of the one sample in $PROM that is
# exactly that series; what is wrong goes to stderr, into the log
metric() {
	local lines

	lines=$(awk -v s="$1 " 'index($0, s) == 1' "$PROM")
	[ -n "$lines" ] || { echo "no sample $1" >&2; return 1; }
	[ "$(wc -l <<<"$lines")" = 1 ] || { echo "more than one sample $1" >&2; return 1; }
	echo "${lines##* }"
}

# nl_dev_count ROLE STATE: how many devices the module reports so
nl_dev_count() {
	gpuctl-nl dev-dump | grep -c " role=$1 .*state=$2\b"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	mdev_samples_load || return 1
	command -v promtool && command -v prometheus-node-exporter || return 1
	mkdir -p "$PROM_DIR"
}

# sysfs_counts: "GPUS TRACKED" read from sysfs alone, not from the module:
# the display and accelerator functions (class 0x03, 0x12), and those with
# every other member of their IOMMU groups (a GPU without a group alone).
sysfs_counts() {
	local d class grp gpus=0 groups=() alone=0 tracked=0 g

	for d in /sys/bus/pci/devices/*; do
		class=$(<"$d/class")
		case $class in 0x03*|0x12*) ;; *) continue ;; esac
		gpus=$((gpus + 1))
		if grp=$(readlink "$d/iommu_group"); then
			groups+=("${grp##*/}")
		else
			alone=$((alone + 1))
		fi
	done
	for g in $(printf '%s\n' "${groups[@]}" | sort -u); do
		tracked=$((tracked + $(find "/sys/kernel/iommu_groups/$g/devices/" -mindepth 1 -maxdepth 1 | wc -l)))
	done
	echo "$gpus $((tracked + alone))"
}

# metric_sum PREFIX: the sum of the samples whose series starts so
metric_sum() {
	awk -v p="$1" 'index($0, p) == 1 { n += $NF } END { print n + 0 }' "$PROM"
}

# Every role and state is there, and each count is the module's; the
# totals are sysfs's
check_devices() {
	local role state want got gpus tracked

	gpuctl metrics "$PROM" || return 1
	print_file "" "$PROM"
	promtool check metrics <"$PROM" || return 1
	for role in gpu companion foreign bridge; do
		for state in free reserved held blocked; do
			want=$(nl_dev_count "$role" "$state")
			got=$(metric "gpuctl_devices{role=\"$role\",state=\"$state\"}") ||
				return 1
			[ "$got" = "$want" ] || { echo "$role/$state: $got, want $want"; return 1; }
		done
	done
	read -r gpus tracked < <(sysfs_counts)
	echo "# sysfs: $gpus GPUs, $tracked functions in their groups"
	[ "$gpus" -ge 2 ] || { echo "the topology has $gpus GPUs"; return 1; }
	got=$(metric_sum 'gpuctl_devices{role="gpu",')
	[ "$got" = "$gpus" ] || { echo "metrics: $got GPUs, sysfs $gpus"; return 1; }
	got=$(metric_sum 'gpuctl_devices{')
	[ "$got" = "$tracked" ] || { echo "metrics: $got devices, sysfs $tracked"; return 1; }
	# a rule moves a GPU from free to reserved
	nl_rule_new "$GPU" driver vfio-pci take || return 1
	expect_pci_driver "$GPU" vfio-pci || return 1
	gpuctl metrics "$PROM" || return 1
	[ "$(metric 'gpuctl_devices{role="gpu",state="reserved"}')" = \
	  "$(nl_dev_count gpu reserved)" ] &&
	[ "$(nl_dev_count gpu reserved)" -ge 1 ]
}

# An allocation, a tenant limit and a VFIO open
check_ledger() {
	gpuctl limit set account acme max 3 || return 1
	nl_alloc_new owner "$VM1" account acme device "$GPU" || return 1
	vfio_open_start "$GPU" || return 1
	wait_for 10 sh -c "gpuctl-nl alloc-get $ALLOC | grep -q state=running" || return 1
	gpuctl metrics "$PROM" || return 1
	promtool check metrics <"$PROM" || return 1
	[ "$(metric 'gpuctl_allocations{state="running"}')" = 1 ] &&
	[ "$(metric 'gpuctl_allocations{state="idle"}')" = 0 ] &&
	[ "$(metric 'gpuctl_allocated_gpus{state="running"}')" = 1 ] &&
	[ "$(metric 'gpuctl_limit_used_gpus{scope="account",name="acme"}')" = 1 ] &&
	[ "$(metric 'gpuctl_limit_max_gpus{scope="account",name="acme"}')" = 3 ] &&
	[ "$(metric "gpuctl_device_vfio_open{address=\"$GPU\",role=\"gpu\"}")" = 1 ] ||
		return 1
	vfio_open_stop || return 1
	nl_alloc_del "$ALLOC" && gpuctl limit set account acme max none || return 1
	gpuctl metrics "$PROM" &&
	[ "$(metric 'gpuctl_allocations{state="running"}')" = 0 ] &&
	[ "$(metric "gpuctl_device_vfio_open{address=\"$GPU\",role=\"gpu\"}")" = 0 ] &&
	! grep -q '^gpuctl_limit_used_gpus{' "$PROM"
}

# mtty's types: available_instances from sysfs, instances from the module
check_vgpu() {
	local t=/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-1 labels

	labels="kind=\"mdev\",parent=\"mtty\",type=\"mtty-1\",name=\"$(cat "$t/name")\"" ||
		return 1
	gpuctl metrics "$PROM" || return 1
	[ "$(metric "gpuctl_vgpu_available{$labels}")" = "$(cat "$t/available_instances")" ] &&
	[ "$(metric "gpuctl_vgpu_instances{$labels}")" = 0 ] || return 1
	gpuctl vgpu add mtty type mtty-1 uuid "$UUID" >/dev/null || return 1
	gpuctl metrics "$PROM" || return 1
	[ "$(metric "gpuctl_vgpu_available{$labels}")" = "$(cat "$t/available_instances")" ] &&
	[ "$(metric "gpuctl_vgpu_instances{$labels}")" = 1 ] || return 1
	promtool check metrics <"$PROM" && gpuctl vgpu del "$UUID" >/dev/null
}

# mtty_caps: the capabilities 6.12's mtty registers, as gpuctl_migration_info
# lists them, or "" for a kernel whose mtty has no migration (6.1)
mtty_caps() {
	local src

	src=$GPUCTL_ROOT/build/mdev-src/$(uname -r | cut -d. -f1-2)/mtty.c
	[ -f "$src" ] || { echo "no $src" >&2; return 1; }
	if grep -q 'vdev->mig_ops = &mtty_migration_ops' "$src"; then
		echo "stop-copy,p2p,pre-copy,dirty-tracking"
	else
		echo ""
	fi
}

# An allocation of a GPU on vfio-pci (no VFIO migration) and one of an
# mtty instance (stop-copy on 6.12): the info series of each device, the
# allocations' 0 or 1, and alloc show and doctor saying the same
check_migration() {
	local caps live a_gpu a_tty key labels n

	caps=$(mtty_caps) || return 1
	live=false
	[ -n "$caps" ] && live=true
	echo "# mtty registers: \"$caps\""
	gpuctl vgpu add mtty type mtty-1 uuid "$UUID" >/dev/null || return 1
	nl_alloc_new owner "$VM1" name gpu-vm device "$GPU" || return 1
	a_gpu=$ALLOC
	# gpuctl-nl has no mdev attribute: YNL makes the vGPU's allocation
	ynl --do alloc-new --json "{\"owner\": \"$VM2\", \"name\": \"tty-vm\",
		\"mdev\": [\"$UUID\"]}" >"$TMP/a_tty.json" &&
		a_tty=$(jq -e '.id' "$TMP/a_tty.json") || return 1
	ALLOCS+=("$a_tty")
	gpuctl metrics "$PROM" || return 1
	grep -E '^gpuctl_(migration_info|allocation_live_migratable)' "$PROM"
	promtool check metrics <"$PROM" || return 1

	# the capabilities as YNL reads them, the key as dev show gives it
	ynl --do mdev-get --json "{\"uuid\": \"$UUID\"}" >"$TMP/ynl.json" &&
		n=$(jq -r '.migration // [] | sort | join(",")' "$TMP/ynl.json") ||
		return 1
	[ "$(tr , '\n' <<<"$caps" | sort | paste -sd,)" = "$n" ] ||
		{ echo "YNL: $n, want $caps"; return 1; }
	key=$(gpuctl -j dev show "$GPU" | jq -er '.devices[0].migration_compat') ||
		return 1
	labels="kind=\"pci\",device=\"$GPU\",capabilities=\"\",live_migratable=\"false\",compat=\"$key\""
	[ "$(metric "gpuctl_migration_info{$labels}")" = 1 ] || return 1
	key=$(gpuctl -j vgpu show "$UUID" | jq -er '.vgpus[0].migration_compat') ||
		return 1
	labels="kind=\"mdev\",device=\"$UUID\",capabilities=\"$caps\",live_migratable=\"$live\",compat=\"$key\""
	[ "$(metric "gpuctl_migration_info{$labels}")" = 1 ] || return 1
	# one series for each device and instance YNL gives a "migration"
	ynl --dump dev-get >"$TMP/ynl.json" &&
	n=$(jq 'map(select(has("migration"))) | length' "$TMP/ynl.json") &&
	[ "$(grep -c '^gpuctl_migration_info{kind="pci"' "$PROM")" = "$n" ] &&
	ynl --dump mdev-get >"$TMP/ynl.json" &&
	n=$(jq 'map(select(has("migration"))) | length' "$TMP/ynl.json") &&
	[ "$n" -ge 1 ] &&
	[ "$(grep -c '^gpuctl_migration_info{kind="mdev"' "$PROM")" = "$n" ] || return 1
	[ "$(metric "gpuctl_allocation_live_migratable{id=\"$a_gpu\",name=\"gpu-vm\"}")" = 0 ] &&
	[ "$(metric "gpuctl_allocation_live_migratable{id=\"$a_tty\",name=\"tty-vm\"}")" = \
	  "$([ "$live" = true ] && echo 1 || echo 0)" ] || return 1

	# alloc show: JSON and text
	gpuctl -j alloc show "$a_gpu" >"$TMP/a.json" || return 1
	json_check --arg g "$GPU" '.allocations[0] | .live_migratable == false and
		.migration_blockers == [$g]' "$TMP/a.json" || return 1
	gpuctl alloc show "$a_gpu" | grep -qx "  live-migration: no, cannot migrate: $GPU" ||
		return 1
	gpuctl -j alloc show "$a_tty" >"$TMP/a.json" || return 1
	json_check --argjson l "$live" '.allocations[0].live_migratable == $l' \
		"$TMP/a.json" || return 1
	if [ "$live" = true ]; then
		gpuctl alloc show "$a_tty" | grep -qx "  live-migration: yes" || return 1
	else
		gpuctl alloc show "$a_tty" |
			grep -qx "  live-migration: no, cannot migrate: $UUID" || return 1
	fi

	# doctor names the allocation that cannot, and passes
	gpuctl -j doctor >"$TMP/doctor.json"
	json_check --arg e "alloc $a_gpu: cannot live-migrate: $GPU" \
		'.checks[] | select(.id == "live-migration") | .status == "pass" and
		 (.summary | test("cannot live-migrate")) and (.evidence | index($e))' \
		"$TMP/doctor.json" || return 1

	nl_alloc_del "$a_tty" && nl_alloc_del "$a_gpu" &&
		gpuctl vgpu del "$UUID" >/dev/null
}

# The file is replaced, not rewritten in place; nothing else stays; and
# an error names the path and leaves nothing
check_file() {
	local ino

	ino=$(stat -c %i "$PROM") || return 1
	gpuctl metrics "$PROM" || return 1
	[ "$(stat -c %i "$PROM")" != "$ino" ] && [ "$(stat -c %a "$PROM")" = 644 ] &&
	[ "$(find "$PROM_DIR" -mindepth 1 | wc -l)" = 1 ] || return 1
	# no sample has a timestamp: name{labels} value, nothing after
	! grep -v -E '^#|^[a-z_]+(\{.*\})? [0-9]+$' "$PROM" || return 1
	cmd_fails "gpuctl: metrics: $TMP/none/gpuctl.prom" gpuctl metrics "$TMP/none/gpuctl.prom" &&
		out_has "No such file or directory" && [ ! -e "$TMP/none" ] || return 1
	# stdout: the same families as the file
	gpuctl metrics | promtool check metrics && [ "$(gpuctl metrics | grep -c '^# TYPE')" = \
		"$(grep -c '^# TYPE' "$PROM")" ]
}

# node_exporter's textfile collector reads it without error
scrape() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://127.0.0.1:$EXPORTER_PORT/metrics"
}

check_node_exporter() {
	gpuctl metrics "$PROM" || return 1
	prometheus-node-exporter --web.listen-address="127.0.0.1:$EXPORTER_PORT" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$PROM_DIR" >"$TMP/exporter.log" 2>&1 &
	EXPORTER_PID=$!
	wait_for 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$EXPORTER_PORT" 2>/dev/null || {
		print_file "" "$TMP/exporter.log"
		return 1
	}
	scrape >"$TMP/scrape" || return 1
	grep -E '^node_textfile_scrape_error|^gpuctl_devices\{role="gpu"' "$TMP/scrape"
	grep -qx 'node_textfile_scrape_error 0' "$TMP/scrape" &&
	grep -qx "gpuctl_devices{role=\"gpu\",state=\"reserved\"} $(nl_dev_count gpu reserved)" \
		"$TMP/scrape" &&
	[ "$(grep -c '^gpuctl_' "$TMP/scrape")" = "$(grep -c '^gpuctl_' "$PROM")" ]
}

# monitor --metrics writes the file at start and again on each event
check_monitor() {
	local before

	rm -f "$PROM"
	gpuctl monitor --metrics "$PROM_DIR" >"$TMP/mon" 2>&1 &
	MONITOR_PID=$!
	wait_for 20 test -s "$PROM" || { print_file "" "$TMP/mon"; return 1; }
	[ "$(metric 'gpuctl_monitor_events_lost_total')" = 0 ] || return 1
	before=$(metric 'gpuctl_devices{role="gpu",state="reserved"}') || return 1
	nl_rules_cleanup
	expect_pci_driver "$GPU" bochs-drm || return 1
	wait_for 20 sh -c "grep -qx 'gpuctl_devices{role=\"gpu\",state=\"reserved\"} $((before - 1))' '$PROM'" ||
		{ print_file "" "$PROM" "$TMP/mon"; return 1; }
	promtool check metrics <"$PROM" || return 1
	scrape | grep -qx 'node_textfile_scrape_error 0' || return 1
	kill "$MONITOR_PID" && wait "$MONITOR_PID"
	MONITOR_PID=
	cmd_fails "gpuctl: monitor: --metrics needs a directory" gpuctl monitor --metrics
}

ktap_header
ktap_plan 8
ktap_run_stage "module, mtty, promtool and node exporter" check_setup
ktap_run_stage "devices by role and state, as the module counts them" check_devices
ktap_run_stage "allocations, a tenant limit and a VFIO open" check_ledger
ktap_run_stage "mdev type capacity and instances" check_vgpu
ktap_run_stage "live migration: each device's capabilities and key, each allocation's" \
	check_migration
ktap_run_stage "replaced in one rename, no timestamps, errors name the path" check_file
ktap_run_stage "node exporter's textfile collector scrapes it without error" \
	check_node_exporter
ktap_run_stage "monitor --metrics rewrites the file on events" check_monitor
ktap_finished
