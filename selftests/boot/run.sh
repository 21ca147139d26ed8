#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot selftest, host side: a reserved GPU ends on vfio-pci on every boot,
# never on its host driver, and every other device on its own driver.
#
# Builds real Debian initramfs images for kernel REL with mkinitramfs and the
# configuration directory selftests/boot/initramfs (the packaged gpuctl hook
# and modprobe.d file, plus a test hook that brings in the module from
# build/REL), boots each in QEMU with the "full" topology's stand-in GPUs
# (selftests/qemu/run.sh --initrd), and reads the driver of every PCI device
# from the console once udev settled (initramfs/scripts/gpuctl-selftest).
# Prints KTAP; exits 0 when every case passed.
#
# Cases (each booted --boots times, "plain" and "modules-list" once):
#   plain         no reservation: every stand-in on its own driver
#   modprobe      selftests/boot/gpuctl.conf baked in by the gpuctl hook as
#                 "options gpuctl reserve=..." (gpuctl apply FILE modprobe)
#   cmdline       the plain image, gpuctl.reserve= on the kernel command line
#   modules-list  the control: gpuctl.reserve= on the command line, but an
#                 image without the softdeps that loads gpuctl from its
#                 modules list; the host drivers win, as they do on a host
#                 set up that way, so the reserved GPUs stay on them
#   packaged      the image of --image FILE, which update-initramfs made
#                 on a guest with gpuctl's packages installed and
#                 selftests/boot/gpuctl.conf as /etc/gpuctl/gpuctl.conf
#                 (selftests/test_packages.sh, make check-packages); the
#                 only case when --image is given

set -uo pipefail

# Read whole before it runs, so that editing it cannot break a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
me=selftests/boot/run.sh

usage() {
	cat <<EOF
usage: $me --kernel REL [--boots N] [--cases "$cases"]
       $me --kernel REL [--boots N] --image FILE

Outputs (images, console logs) go to build/boot/REL/.
EOF
}

rel=
image=
boots=2
cases="plain modprobe cmdline modules-list"
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) rel=$2; shift 2 ;;
	--boots) boots=$2; shift 2 ;;
	--cases) cases=$2; shift 2 ;;
	--image) image=$2; cases=packaged; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ -n "$rel" ] || { usage >&2; exit 2; }
case " $cases " in
*" packaged "*) [ -n "$image" ] || { usage >&2; exit 2; } ;;
esac

out=$root/build/boot/$rel
mkdir -p "$out"
confdir=$here/initramfs
tool=$root/tools/gpuctl/gpuctl
conf=$here/gpuctl.conf
# The reservations of gpuctl.conf in the module-parameter grammar: what the
# hook must write, and what the cmdline case passes.
rules=0000:01:00.0,0000:07:00.0
options_line="options gpuctl reserve=$rules"

# Guest PCI address, QEMU device, its own driver ("-": none binds; see
# selftests/qemu/topologies/full), and whether the rules reserve it
# (07:00.1 as the companion of 07:00.0). cirrus is cirrus-qemu in kernels
# newer than the test kernels.
devices=(
	"0000:01:00.0 bochs-display bochs-drm reserved"
	"0000:02:00.0 vmware-svga - free"
	"0000:03:00.0 qxl qxl free"
	"0000:04:00.0 cirrus-vga cirrus free"
	"0000:05:00.0 ati-vga - free"
	"0000:06:00.0 virtio-gpu-pci virtio-pci free"
	"0000:07:00.0 secondary-vga bochs-drm reserved"
	"0000:07:00.1 ich9-intel-hda snd_hda_intel reserved"
	"0000:09:01.0 VGA bochs-drm free"
	"0000:09:02.0 e1000 e1000 free"
	"0000:0f:00.0 secondary-vga bochs-drm free"
	"0000:0f:00.1 secondary-vga bochs-drm free"
	"0000:0f:00.2 ich9-intel-hda snd_hda_intel free"
	"0000:81:00.0 bochs-display bochs-drm free"
)
# The kernel log check of selftests/qemu/run.sh.
bad='WARNING:|BUG:|Oops|KASAN|kmemleak|general protection|Call Trace|RIP:'

n=0
failed=0
result() {	# result 0|1 DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
	fi
}

# build_image NAME [VAR=VALUE...]: mkinitramfs with the test configuration
# directory; the assignments are the hooks' environment.
build_image() {
	local name=$1 img=$out/$1.img
	shift
	rm -f "$img"
	env "$@" mkinitramfs -d "$confdir" -o "$img" "$rel" \
		>"$out/$name.mkinitramfs.log" 2>&1
}

# image_cat IMG PATH: the content of one file of the image.
image_cat() {
	local tmp rc
	tmp=$(mktemp -d "$out/unpack.XXXXXX")
	unmkinitramfs "$1" "$tmp" >/dev/null 2>&1
	cat "$tmp/$2" 2>/dev/null
	rc=$?
	rm -rf "$tmp"
	return $rc
}

# boot_once CASE K IMG APPEND: one boot; KTAP lines for it.
boot_once() {
	local case=$1 k=$2 img=$3 append=$4
	local log=$out/$case-$k.console report t0 secs rc dirty line
	local addr qdev own role want got
	t0=$SECONDS
	"$root/selftests/qemu/run.sh" --kernel "$rel" --topology full \
		--initrd "$img" --keep-log "$log" --timeout 240 \
		--append "boot=gpuctl-selftest$append" \
		>"$out/$case-$k.run.log" 2>&1
	rc=$?
	secs=$((SECONDS - t0))
	echo "# $case boot $k: $secs s, run.sh exit $rc"
	report=$(tr -d '\r' <"$log" 2>/dev/null |
		 sed -n '/GPUCTL-PCI-BEGIN$/,/^GPUCTL-PCI-END$/p')
	dirty=$(tr -d '\r' <"$log" 2>/dev/null |
		grep -E '^(<[0-9]+>)?\[ *[0-9]+\.[0-9]+\]' | grep -E "$bad" | head -n 5)
	# run.sh fails a clean log only when the guest did not power off.
	if [ -n "$report" ] && grep -q '^GPUCTL-PCI-END$' <<<"$report" &&
	   { [ $rc = 0 ] || [ -n "$dirty" ]; }; then
		result 0 "$case boot $k: guest reported its devices and powered off"
	else
		tail -n 15 "$log" 2>/dev/null | sed 's/^/# console: /'
		tail -n 5 "$out/$case-$k.run.log" | sed 's/^/# run.sh: /'
		result 1 "$case boot $k: guest reported its devices and powered off"
	fi
	if [ -z "$dirty" ]; then
		result 0 "$case boot $k: kernel log has no warning, BUG or oops"
	else
		printf '# %s\n' "${dirty//$'\n'/$'\n'# }"
		result 1 "$case boot $k: kernel log has no warning, BUG or oops"
	fi
	tr -d '\r' <"$log" 2>/dev/null |
		sed -n '/^GPUCTL-KLOG-BEGIN$/,/^GPUCTL-KLOG-END$/p' |
		grep -v '^GPUCTL-' | sed 's/^/# klog: /'
	for line in "${devices[@]}"; do
		read -r addr qdev own role <<<"$line"
		want=$own
		case $case in
		modprobe|cmdline|packaged) [ "$role" = reserved ] && want=vfio-pci ;;
		esac
		got=$(awk -v a="$addr" '$1 == "GPUCTL-PCI" && $2 == a { print $3 }' \
			<<<"$report")
		desc="$case boot $k: $addr $qdev on $want"
		[ "$want" = - ] && desc="$case boot $k: $addr $qdev unbound"
		if [ "$got" = "$want" ]; then
			result 0 "$desc"
		else
			result 1 "$desc (driver: ${got:-not reported})"
		fi
	done
}

echo "KTAP version 1"
echo "# boot selftest on $rel: cases $cases, $boots boots each (plain once)"

ko=$root/build/$rel/gpuctl.ko
if [ -n "$image" ] && [ ! -r "$image" ]; then
	echo "# cannot read $image"
	echo "1..1"
	result 1 "packaged image $image"
	exit 1
elif [ -z "$image" ] && [ ! -f "$ko" ]; then
	echo "# no $ko (scripts/build-module.sh $rel)"
	echo "1..1"
	result 1 "module built for $rel"
	exit 1
fi

per_boot=$((2 + ${#devices[@]}))
plan=0
for c in $cases; do
	case $c in
	plain) plan=$((plan + 3 + per_boot)) ;;
	modprobe) plan=$((plan + 3 + boots * per_boot)) ;;
	cmdline) plan=$((plan + boots * per_boot)) ;;
	modules-list) plan=$((plan + 1 + per_boot)) ;;
	packaged) plan=$((plan + boots * per_boot)) ;;
	*) usage >&2; exit 2 ;;
	esac
done
echo "1..$plan"

# The plain image serves the plain and cmdline cases. GPUCTL_CONF keeps the
# hook away from a gpuctl.conf of the host.
case " $cases " in
*" plain "*|*" cmdline "*)
	t0=$SECONDS
	build_image plain GPUCTL_CONF=/nonexistent
	rc=$?
	echo "# plain image: mkinitramfs exit $rc in $((SECONDS - t0)) s"
	[ $rc = 0 ] || sed 's/^/# /' "$out/plain.mkinitramfs.log"
	;;
esac
case " $cases " in
*" plain "*)
	img=$out/plain.img
	# Read whole: grep -q would end lsinitramfs early, and pipefail fail it.
	list=$(lsinitramfs "$img" 2>/dev/null)
	missing=
	for f in "usr/lib/modules/$rel/updates/gpuctl.ko" etc/modprobe.d/gpuctl.conf \
		 scripts/gpuctl-selftest; do
		grep -qx "$f" <<<"$list" || missing+=" $f"
	done
	for f in vfio-pci vfio_iommu_type1; do
		grep -q "/$f\.ko" <<<"$list" || missing+=" $f.ko"
	done
	r=0
	[ -n "$missing" ] && r=1
	result $r "plain image has gpuctl, vfio-pci, vfio_iommu_type1 and the softdeps${missing:+ (missing:$missing)}"
	r=0
	grep -qx etc/modprobe.d/gpuctl-reserve.conf <<<"$list" && r=1
	result $r "plain image has no gpuctl-reserve.conf without a gpuctl.conf"
	# modprobe's view inside the image: gpuctl before each stand-in.
	tmp=$(mktemp -d "$out/unpack.XXXXXX")
	unmkinitramfs "$img" "$tmp" >/dev/null 2>&1
	# unmkinitramfs puts the main archive in main/ when there is an early
	# (microcode) one.
	unpacked=$tmp
	[ -d "$tmp/main" ] && unpacked=$tmp/main
	order=" "$(modprobe -d "$unpacked" -C "$unpacked/etc/modprobe.d" -S "$rel" \
		--show-depends bochs 2>&1 | awk '$1 == "insmod" { n = $2; sub(".*/", "", n); print n }' |
		tr '\n' ' ')
	rm -rf "$tmp"
	case "$order" in
	*" gpuctl.ko "*" bochs.ko "*) r=0 ;;
	*) r=1; echo "# modprobe --show-depends bochs in the image: $order" ;;
	esac
	result $r "plain image: modprobe bochs loads gpuctl first"
	boot_once plain 1 "$img" ""
	;;
esac

case " $cases " in
*" modprobe "*)
	# The hook writes the options line with the tool, as on a host.
	[ -x "$tool" ] || echo "# no $tool (make tools)"
	t0=$SECONDS
	build_image modprobe GPUCTL_CONF="$conf" GPUCTL_BIN="$tool"
	rc=$?
	echo "# modprobe image: mkinitramfs exit $rc in $((SECONDS - t0)) s"
	[ $rc = 0 ] || sed 's/^/# /' "$out/modprobe.mkinitramfs.log"
	result $rc "modprobe image built with gpuctl.conf"
	got=$(image_cat "$out/modprobe.img" etc/modprobe.d/gpuctl-reserve.conf)
	if [ "$got" = "$options_line" ]; then
		result 0 "modprobe image: gpuctl-reserve.conf is '$options_line'"
	else
		echo "# gpuctl-reserve.conf: '$got'"
		result 1 "modprobe image: gpuctl-reserve.conf is '$options_line'"
	fi
	# A configuration the tool rejects stops the build, naming the line.
	build_image modprobe-bad GPUCTL_CONF="$here/gpuctl-bad.conf" GPUCTL_BIN="$tool"
	rc=$?
	r=1
	[ $rc != 0 ] && grep -q '^E: gpuctl: ' "$out/modprobe-bad.mkinitramfs.log" &&
		grep -q 'gpuctl-bad.conf:3:' "$out/modprobe-bad.mkinitramfs.log" && r=0
	[ $r = 0 ] || sed 's/^/# /' "$out/modprobe-bad.mkinitramfs.log"
	result $r "mkinitramfs fails on a gpuctl.conf the tool rejects (exit $rc)"
	for k in $(seq "$boots"); do
		boot_once modprobe "$k" "$out/modprobe.img" ""
	done
	;;
esac

case " $cases " in
*" cmdline "*)
	for k in $(seq "$boots"); do
		boot_once cmdline "$k" "$out/plain.img" " gpuctl.reserve=$rules"
	done
	;;
esac

case " $cases " in
*" modules-list "*)
	t0=$SECONDS
	build_image modules-list GPUCTL_CONF=/nonexistent GPUCTL_TEST_MODULES_LIST=1
	rc=$?
	echo "# modules-list image: mkinitramfs exit $rc in $((SECONDS - t0)) s"
	[ $rc = 0 ] || sed 's/^/# /' "$out/modules-list.mkinitramfs.log"
	result $rc "modules-list image built without the softdeps"
	boot_once modules-list 1 "$out/modules-list.img" " gpuctl.reserve=$rules"
	;;
esac

case " $cases " in
*" packaged "*)
	for k in $(seq "$boots"); do
		boot_once packaged "$k" "$image" ""
	done
	;;
esac

echo "# boot selftest on $rel: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
exit
}
