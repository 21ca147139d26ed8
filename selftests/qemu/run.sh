#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot an installed kernel in QEMU (TCG) over the host root filesystem and
# run one command in it; see usage().
#
# Host side of the runner: builds the initramfs (mkinitramfs.sh), starts
# QEMU with the topology's devices, bridges the guest's QMP port to QEMU's
# monitor, streams the command's output, retries a boot that never reached
# the command, and checks the kernel log once the guest is gone.
#
# QEMU options are comma lists by nature.
# shellcheck disable=SC2054

set -euo pipefail

# The whole script is one compound command, read before any of it runs, so
# editing this file (git checkout, a commit) cannot break runs in progress.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
me=run.sh

usage() {
	cat <<EOF
usage: $me --kernel REL --topology NAME [options] -- CMD...
       $me --kernel REL --topology NAME --initrd FILE [options]

Boots /boot/vmlinuz-REL with the topology selftests/qemu/topologies/NAME and
runs CMD as root in the guest, in $root. One CMD argument is a shell command
line (run with bash -c); several are an argv. Prints CMD's stdout and stderr
on stdout and stderr and exits with its status; fails if the kernel log has
a warning, BUG, oops, KASAN, lockdep, sleep-in-atomic or kmemleak report.

With --kernel-root DIR, the kernel is DIR/boot/vmlinuz-REL, its modules
DIR/lib/modules/REL and its config DIR/boot/config-REL (a kernel that is not
installed, such as make check-debug's); the guest sees them at /lib/modules
and /boot.

With --initrd, boots FILE (an initramfs of the caller's) instead of the
runner's, without CMD: one boot, which ends when the guest powers off (or at
--timeout); its output is the console log (--keep-log).

options:
  --kernel-root DIR  the kernel's /boot and /lib/modules are under DIR
  --interactive      after CMD, a shell on the guest console (needs a TTY)
  --keep-log FILE    copy the guest console log (the full kernel log) to FILE
  --out DIR          keep the run directory (GPUCTL_OUT is DIR/share)
  --timeout SECONDS  whole run, default $timeout
  --boot-timeout S   boot until CMD starts, default $boot_timeout
  --smp N            guest CPUs, default $smp
  --memory SIZE      guest memory, default $memory
  --append ARGS      extra kernel command line
  --panic-on-warn    boot with panic_on_warn=1
  --qemu-opt ARG     one more QEMU argument (repeatable), after the topology
  --initrd FILE      boot FILE, see above
EOF
}

die() { echo "$me: $*" >&2; exit 2; }

rel=
kroot=
topology=
interactive=0
keep_log=
keep_out=
timeout=900
boot_timeout=300
smp=2
memory=2G
append_extra=
qemu_extra=()
initrd=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) rel=$2; shift 2 ;;
	--kernel-root) kroot=$(cd "$2" && pwd); shift 2 ;;
	--topology) topology=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--keep-log) keep_log=$2; shift 2 ;;
	--out) keep_out=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--boot-timeout) boot_timeout=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--append) append_extra+=" $2"; shift 2 ;;
	--panic-on-warn) append_extra+=" panic_on_warn=1"; shift ;;
	--qemu-opt) qemu_extra+=("$2"); shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	*) usage >&2; exit 2 ;;
	esac
done
cmd=("$@")

if [ -z "$rel" ] || [ -z "$topology" ] ||
   { [ -z "$initrd" ] && [ ${#cmd[@]} -eq 0 ]; }; then
	usage >&2
	exit 2
fi
# The guest mounts tmpfs over these, which would hide the kernel's tree.
case $kroot/ in
/tmp/*|/var/tmp/*|/run/*) die "--kernel-root must not be under /tmp, /var/tmp or /run" ;;
esac
kernel=$kroot/boot/vmlinuz-$rel
[ -r "$kernel" ] || die "cannot read $kernel"
topo_file=$here/topologies/$topology
[ -f "$topo_file" ] || die "no topology $topology in $here/topologies"
# guest.env is parsed by busybox sed before bash can unquote it.
[ "$(printf %q "$root")" = "$root" ] ||
	die "the project path must not need shell quoting: $root"
if [ "$interactive" = 1 ] && ! [ -t 0 ]; then
	echo "$me: stdin is not a terminal, running without --interactive" >&2
	interactive=0
fi

# The topology fragment fills these in; see topologies/full.
topo_iommu=0
topo_append=
topo_machine=()
topo_devices=()
# shellcheck source=topologies/full
. "$topo_file"

mkdir -p "$root/build/qemu"
if [ -n "$initrd" ]; then
	[ -r "$initrd" ] || die "cannot read $initrd"
	initramfs=$initrd
else
	initramfs=$("$here/mkinitramfs.sh" "$rel" "$root/build/qemu/$rel" "$kroot")
fi

if [ -n "$keep_out" ]; then
	mkdir -p "$keep_out"
	run=$(cd "$keep_out" && pwd)
else
	run=$(mktemp -d "$root/build/qemu/out-$rel-$topology.XXXXXX")
fi
share=$run/share
# Unix socket paths are limited to 108 bytes, so not under the project.
sockdir=$(mktemp -d /tmp/gpuctl-qemu.XXXXXX)

qemu_pid=
socat_pid=
watch_pid=
tail_pids=()
# shellcheck disable=SC2317 # called from the trap
cleanup() {
	local p
	for p in "$watch_pid" "$socat_pid" "$qemu_pid" "${tail_pids[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	rm -rf "$sockdir"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$share"
{
	printf 'GPUCTL_ROOT=%q\n' "$root"
	printf 'GPUCTL_KREL=%q\n' "$rel"
	printf 'GPUCTL_KROOT=%q\n' "$kroot"
	printf 'GPUCTL_KO=%q\n' "$root/build/$rel/gpuctl.ko"
	printf 'GPUCTL_TOPOLOGY=%q\n' "$topology"
	printf 'GPUCTL_INTERACTIVE=%q\n' "$interactive"
	# The selftests' settings pass from the host's environment (make
	# check, make check-debug) to the guest's.
	for v in GPUCTL_TESTS GPUCTL_SKIP_TESTS GPUCTL_PROG_TIMEOUT GPUCTL_KMEMLEAK \
		 GPUCTL_FUZZ_MESSAGES GPUCTL_FUZZ_TIMEOUT GPUCTL_STRESS_SECONDS; do
		if [ -n "${!v+set}" ]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
	done
	printf 'GPUCTL_CMD=('
	printf '%q ' "${cmd[@]}"
	printf ')\n'
} > "$share/guest.env"

# panic=-1 with -no-reboot turns a panic into a QEMU exit; oops=panic stops
# a guest that oopsed instead of letting it limp on to a hang. On a loaded
# host TCG can be too slow for the boot-time IO-APIC timer check, which then
# panics ("timer doesn't work through Interrupt-remapped IO-APIC"), hence
# no_timer_check. The CPU vulnerability mitigations (retpolines, IBRS,
# buffer clearing on every kernel exit) cost TCG, which emulates each
# instruction, far more than hardware: mitigations=off halves the time of
# the hot-plug and VFIO tests on 6.1, and the guest runs nothing untrusted.
cmdline="console=ttyS0 printk.time=1 panic=-1 oops=panic no_timer_check"
cmdline+=" mitigations=off"
# No fbdev emulation on the DRM drivers, so fbcon never holds a stand-in
# GPU's framebuffer: on 6.1 and 6.12, unbinding a bochs function whose
# framebuffer fbcon held (by gpuctl or by a plain sysfs unbind) warned of
# a module refcount underflow in fbcon_release(), the kernel's bug, not
# the tests'. The devices and their drivers are the same without it.
cmdline+=" drm_kms_helper.fbdev_emulation=0"
cmdline+=" rdinit=/init${topo_append:+ $topo_append}$append_extra"
# An interactive console shows the shell, not the boot; dmesg keeps it all.
[ "$interactive" = 1 ] && cmdline+=" quiet"

# One socket per CPU: a topology may put CPUs on different NUMA nodes, and
# the kernel WARNs (topology_sane) about cores of one package on two nodes.
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -no-reboot
      -machine q35,accel=tcg -cpu max -m "$memory"
      -smp "$smp,sockets=$smp,cores=1,threads=1"
      -display none
      -kernel "$kernel" -initrd "$initramfs" -append "$cmdline"
      "${topo_machine[@]}")
# The vIOMMU must come before every PCI device it translates for.
[ "$topo_iommu" = 1 ] && qemu+=(-device intel-iommu,intremap=on)
qemu+=(-fsdev "local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap"
       -device virtio-9p-pci,fsdev=fsroot,mount_tag=gpuctl_root,bus=pcie.0,addr=0x2
       -fsdev "local,id=fsout,path=$share,security_model=none,multidevs=remap"
       -device virtio-9p-pci,fsdev=fsout,mount_tag=gpuctl_out,bus=pcie.0,addr=0x3
       -fsdev "local,id=fsproj,path=$root,security_model=none,readonly=on,multidevs=remap"
       -device virtio-9p-pci,fsdev=fsproj,mount_tag=gpuctl_project,bus=pcie.0,addr=0x5
       -device virtio-serial-pci,id=vser,bus=pcie.0,addr=0x4
       -chardev "file,id=cout,path=$run/stdout,append=on"
       -device virtserialport,bus=vser.0,chardev=cout,name=org.gpuctl.stdout
       -chardev "file,id=cerr,path=$run/stderr,append=on"
       -device virtserialport,bus=vser.0,chardev=cerr,name=org.gpuctl.stderr
       -chardev "socket,id=gqmp,path=$sockdir/gq.sock,server=on,wait=off"
       -device virtserialport,bus=vser.0,chardev=gqmp,name=org.gpuctl.qmp
       -chardev "socket,id=qmp,path=$sockdir/qmp.sock,server=on,wait=off"
       -mon chardev=qmp,mode=control)
if [ "$interactive" = 1 ]; then
	qemu+=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$run/console.log"
	       -serial chardev:con -mon chardev=con,mode=readline)
else
	qemu+=(-chardev "file,id=con,path=$run/console.log" -serial chardev:con)
fi
qemu+=("${topo_devices[@]}" "${qemu_extra[@]}")
printf '%q ' "${qemu[@]}" > "$run/qemu.cmdline"
echo >> "$run/qemu.cmdline"

# Connects QEMU's QMP monitor to the guest's org.gpuctl.qmp port. QEMU holds
# monitor output back until the guest opens the port.
start_bridge() {
	local _
	for _ in $(seq 100); do
		[ -S "$sockdir/qmp.sock" ] && [ -S "$sockdir/gq.sock" ] && break
		sleep 0.1
	done
	# socat -v logs the traffic in socat.log, for debugging.
	socat ${GPUCTL_QMP_TRACE:+-v} \
		"UNIX-CONNECT:$sockdir/qmp.sock" "UNIX-CONNECT:$sockdir/gq.sock" \
		2>>"$run/socat.log" &
	socat_pid=$!
}

# Kills QEMU when the guest has not started CMD after boot_timeout seconds,
# or has not finished after timeout; says which in $run/killed.
watchdog() {
	local t=0
	while sleep 1; do
		t=$((t + 1))
		if [ -z "$initrd" ] && [ ! -e "$share/started" ] &&
		   [ $t -ge "$boot_timeout" ]; then
			echo boot > "$run/killed"
			break
		fi
		if [ $t -ge "$timeout" ]; then
			echo timeout > "$run/killed"
			break
		fi
	done
	kill "$qemu_pid" 2>/dev/null
}

# One boot; returns 0 when the guest reached CMD.
boot() {
	local t0=$SECONDS
	rm -f "$share/started" "$share/status" "$share/status.tmp" \
	      "$share/dmesg" "$run/killed"
	: > "$run/stdout"
	: > "$run/stderr"
	: > "$run/console.log"
	if [ "$interactive" = 1 ]; then
		# Without job control bash gives a background job /dev/null
		# as stdin unless told otherwise: the console needs the
		# terminal.
		"${qemu[@]}" <&0 2>>"$run/qemu.log" &
	else
		"${qemu[@]}" </dev/null >>"$run/qemu.log" 2>&1 &
	fi
	qemu_pid=$!
	start_bridge
	tail_pids=()
	if [ "$interactive" = 0 ]; then
		tail -n +1 -f --pid="$qemu_pid" "$run/stdout" &
		tail_pids+=($!)
		tail -n +1 -f --pid="$qemu_pid" "$run/stderr" >&2 &
		tail_pids+=($!)
	fi
	if [ "$interactive" = 0 ]; then
		watchdog &
		watch_pid=$!
	fi
	qemu_rc=0
	wait "$qemu_pid" || qemu_rc=$?
	qemu_pid=
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null || true
	watch_pid=
	kill "$socat_pid" 2>/dev/null
	wait "$socat_pid" 2>/dev/null || true
	socat_pid=
	# The tails end by themselves once they have printed everything.
	wait "${tail_pids[@]}" 2>/dev/null || true
	tail_pids=()
	echo "boot ${1}: qemu exited with $qemu_rc after $((SECONDS - t0)) s" \
		>> "$run/qemu.log"
	# An initrd of the caller's reports on the console; the guest must
	# have powered off by itself.
	if [ -n "$initrd" ]; then
		[ "$qemu_rc" = 0 ] && [ ! -e "$run/killed" ]
	else
		[ -e "$share/started" ]
	fi
}

booted=0
tries=2
[ -n "$initrd" ] && tries=1
for n in $(seq "$tries"); do
	if boot "$n"; then
		booted=1
		break
	fi
	if [ "$n" -lt "$tries" ]; then
		echo "$me: guest did not reach the tests on $rel (boot $n), retrying" >&2
		cp "$run/console.log" "$run/console-boot$n.log"
	fi
done

if [ -n "$keep_log" ]; then
	cp "$run/console.log" "$keep_log"
fi

fail=0
if [ "$booted" = 0 ]; then
	echo "$me: guest did not reach the tests on $rel (boot $n), giving up;" \
	     "last console and QEMU lines:" >&2
	tail -n 20 "$run/console.log" | sed 's/^/  /' >&2
	tail -n 5 "$run/qemu.log" | sed 's/^/  qemu: /' >&2
	fail=1
	status=1
elif [ -n "$initrd" ]; then
	status=0
elif [ -f "$share/status" ]; then
	status=$(cat "$share/status")
	[ "$status" = 0 ] || echo "$me: command exited with status $status" >&2
elif [ "$(cat "$run/killed" 2>/dev/null)" = timeout ]; then
	echo "$me: timeout after $timeout s on $rel; last console lines:" >&2
	tail -n 20 "$run/console.log" | sed 's/^/  /' >&2
	status=124
else
	echo "$me: guest on $rel died while running the command;" \
	     "last console lines:" >&2
	tail -n 20 "$run/console.log" | sed 's/^/  /' >&2
	status=1
fi

# Kernel log check. Only kernel lines of the console (they carry the
# printk timestamp) are scanned, so firmware and command output never match.
# Lockdep's and might_sleep()'s reports start with WARNING: or BUG:, and
# their names are listed too, for a reader of this list. kmemleak's own
# notices (initialized, thread started) are not reports. Its suspects from
# before the tests began, shown by selftests/run_tests.sh with
# GPUCTL_KMEMLEAK=1, are not the tests': that script marks where its scans
# begin.
bad='WARNING:|BUG:|Oops|KASAN|general protection|Call Trace|RIP:'
bad+='|kernel BUG at|Kernel panic|possible circular locking'
bad+='|inconsistent lock state|possible recursive locking'
bad+='|sleeping function called from invalid context|DEBUG_LOCKS_WARN_ON'
bad+='|ODEBUG:|UBSAN:'
# the hung task and soft lockup detectors (Debian's kernels have the first)
bad+='|blocked for more than [0-9]+ seconds|soft lockup'
# gpuctl cuts its messages to fit extack; 6.2+ logs one it did not.
bad+='|truncated extack'
bad+='|kmemleak: .*(suspected memory leaks|disabled|empty|[Cc]annot|[Ff]ailed)'
kmemleak_mark='gpuctl-selftests: kmemleak baseline taken'
scan() {
	grep -E '^(<[0-9]+>)?\[ *[0-9]+\.[0-9]+\]' "$2" 2>/dev/null |
		awk -v mark="$kmemleak_mark" \
			'index($0, mark) { tests = 1 } tests || !/suspected memory leaks/' |
		grep -E "$bad" | head -n 5 | sed "s|^|$me: $1 on $rel: |" >&2
	return 0
}
if [ "$booted" = 1 ]; then
	hits=$( { scan "kernel log" "$run/console.log"; scan "dmesg" "$share/dmesg"; } 2>&1)
	if [ -n "$hits" ]; then
		echo "$hits" >&2
		fail=1
	fi
fi

if [ "$fail" = 1 ] || [ "$status" != 0 ]; then
	[ -z "$keep_out" ] && echo "$me: run directory kept: $run" >&2
	[ "$status" != 0 ] && exit "$status"
	exit 1
fi
[ -z "$keep_out" ] && rm -rf "$run"
exit 0
}
