#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing gpuctl needs on Debian 12 (bookworm):
# the 6.1 kernel and headers, the 6.12 kernel and headers (bookworm's
# security/backports archive), linux-source-6.12 for the YNL generator and
# CLI, the kselftest harness and checkpatch, QEMU, the libraries of the tool
# and the tests, Prometheus (promtool, the node exporter) for test_metrics.sh,
# and the libraries the C extensions of Nova's unpacked packages load
# (scripts/fetch-nova.sh; Nova itself is never installed).
# test_export_libvirt.sh validates with xmllint (libxml2-utils) against the
# RelaxNG schemas libvirt0 ships. make bench counts instructions with
# valgrind.
# The boot selftest (selftests/boot) builds Debian initramfs images with
# mkinitramfs: initramfs-tools-core, not initramfs-tools, whose kernel hooks
# would rebuild the host's own images on every kernel install.
# make deb builds the Debian packages (debhelper, dh_dkms from dh-dkms,
# lintian), and their guest test installs gpuctl-dkms, whose dkms comes
# from the host root.
# make check-debug also builds a kernel from linux-source-6.12: the "debug"
# set adds what that build needs, which make check does not.
#
# Usage: scripts/install-deps.sh [build|test|bench|debug|all]   (default: all)
# Prints the apt-get command instead of running it when not root.

set -eu

what=${1:-all}

build_pkgs="build-essential pkg-config libmnl-dev libpci-dev libudev-dev pci.ids
	libnl-3-dev libnl-genl-3-dev python3-yaml python3-jsonschema jq
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.12 xz-utils
	debhelper dh-dkms dkms lintian"
# The style step of make check needs shellcheck, so the tests do.
test_pkgs="linux-image-amd64 linux-image-6.12-amd64 qemu-system-x86
	busybox-static kmod pciutils socat procps util-linux cpio man-db
	bash-completion initramfs-tools-core klibc-utils udev zstd shellcheck
	prometheus prometheus-node-exporter
	libvirt0 libxml2-utils libxslt1.1 libsodium23 valgrind"
# make bench's baseline for reading vGPUs: mdevctl list.
bench_pkgs="mdevctl"
lint_pkgs="sparse"
kernel_pkgs="bc bison flex libelf-dev libssl-dev cpio kmod"

case "$what" in
build) pkgs="$build_pkgs" ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
bench) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
debug) pkgs="$build_pkgs $test_pkgs $kernel_pkgs" ;;
all) pkgs="$build_pkgs $test_pkgs $bench_pkgs $lint_pkgs $kernel_pkgs" ;;
*) echo "usage: $0 [build|test|bench|debug|all]" >&2; exit 1 ;;
esac

# Skip apt entirely when everything is present: a developer's re-run of
# make check should not touch the network.
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "gpuctl: missing packages:$missing" >&2
	echo "run as root: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q

# The 6.12 kernel for bookworm comes from bookworm-security or, on older
# mirrors, bookworm-backports; add backports only when apt cannot see it.
if ! apt-cache show linux-image-6.12-amd64 >/dev/null 2>&1; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" \
		>/etc/apt/sources.list.d/gpuctl-backports.list
	apt-get update -q
fi

# No initramfs is needed for the test kernels (the runner builds its own);
# INITRD=No makes the kernel postinst hook skip update-initramfs, which
# costs minutes per kernel.
# shellcheck disable=SC2086 # a list of package names
INITRD=No apt-get install -y -q --no-install-recommends $missing
