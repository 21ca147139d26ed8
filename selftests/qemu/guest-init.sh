#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest, started by initramfs-init from the host root
# (read-only over 9p). Sets up the guest, runs the command the runner put
# in guest.env, saves the kernel log and writes the exit status to
# GPUCTL_OUT last: a guest that hangs or crashes never leaves a status, so
# it cannot look green.

# One compound command, read before any of it runs: the file lives on the
# host and may be edited while a guest runs.
{
out=/run/gpuctl/out
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=${TERM:-linux} LANG=C.UTF-8

log() { echo "guest-init: $*" > /dev/console; }

poweroff_now() {
	sync
	/bin/busybox poweroff -f
	echo o > /proc/sysrq-trigger
	sleep 60
}

# PID 1 must never exit (that is a kernel panic); any error ends the boot.
trap 'log "error at line $LINENO"; poweroff_now' ERR
set -E

# GPUCTL_ROOT, GPUCTL_KREL, GPUCTL_KO, GPUCTL_TOPOLOGY, GPUCTL_INTERACTIVE
# and the command, GPUCTL_CMD (an array), written by run.sh.
# shellcheck source=/dev/null
. "$out/guest.env"

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=000 devpts /dev/pts
mount -t tmpfs -o nosuid,nodev tmpfs /dev/shm
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
# The project may live under a directory the tmpfs mounts above just hid
# (CI clones anywhere, /tmp included), so it comes as a share of its own,
# mounted at the same path as on the host.
mkdir -p "$GPUCTL_ROOT"
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
	gpuctl_project "$GPUCTL_ROOT"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
mount -t configfs configfs /sys/kernel/config 2>/dev/null || true
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
hostname gpuctl-guest
ip link set lo up 2>/dev/null || true

# Module autoloading without udev: a uevent listener loads the driver for
# every device added from now on (hot-plug, hdaudio codecs, virtio devices
# behind virtio-pci), and a coldplug pass covers the devices that exist
# already. Listening first means no device falls between the two.
/bin/busybox uevent "$GPUCTL_ROOT/selftests/qemu/uevent-helper.sh" \
	</dev/null >/dev/null 2>&1 &
cat /sys/bus/pci/devices/*/modalias /sys/bus/virtio/devices/*/modalias \
	2>/dev/null | sort -u | xargs -r modprobe -q -b -a || true

# The /dev/virtio-ports/NAME links udev would make.
mkdir -p /dev/virtio-ports
for p in /sys/class/virtio-ports/*; do
	[ -r "$p/name" ] || continue
	ln -sf "../${p##*/}" "/dev/virtio-ports/$(cat "$p/name")"
done

export GPUCTL_ROOT GPUCTL_KREL GPUCTL_KO GPUCTL_TOPOLOGY
# Only when run.sh found them set on the host.
export GPUCTL_TESTS GPUCTL_STRESS_SECONDS
export GPUCTL_QMP=/dev/virtio-ports/org.gpuctl.qmp
export GPUCTL_OUT=$out
export PATH=$GPUCTL_ROOT/tools/gpuctl:$GPUCTL_ROOT/selftests/bin:$PATH
cd "$GPUCTL_ROOT" || poweroff_now

trap - ERR
set +E
log "started $(cut -d' ' -f1 /proc/uptime)"
cut -d' ' -f1 /proc/uptime > "$out/started"

if [ "$GPUCTL_INTERACTIVE" = 1 ]; then
	cmd_out=/dev/console
	cmd_err=/dev/console
else
	cmd_out=/dev/virtio-ports/org.gpuctl.stdout
	cmd_err=/dev/virtio-ports/org.gpuctl.stderr
fi

# One argument is a shell command line, several are an argv.
# shellcheck disable=SC2153 # from guest.env
if [ "${#GPUCTL_CMD[@]}" -eq 1 ]; then
	bash -c "${GPUCTL_CMD[0]}" </dev/null >"$cmd_out" 2>"$cmd_err"
else
	"${GPUCTL_CMD[@]}" </dev/null >"$cmd_out" 2>"$cmd_err"
fi
status=$?
log "command exited with $status at $(cut -d' ' -f1 /proc/uptime)"

if [ "$GPUCTL_INTERACTIVE" = 1 ]; then
	log "interactive shell; exit it to power off"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi

dmesg > "$out/dmesg" 2>&1
echo "$status" > "$out/status.tmp"
mv "$out/status.tmp" "$out/status"
poweroff_now
}
