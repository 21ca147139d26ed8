#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: packages
#
# gpuctl's Debian packages (make deb, build/deb/), installed on a guest
# whose root is the host's under a tmpfs overlay (topology "packages"), as
# a user installs them, offline:
#   - apt-get install ./gpuctl_*.deb ./gpuctl-dkms_*.deb has DKMS build
#     and install gpuctl.ko, with the package's version, for the running
#     kernel; the other test kernel's headers are hidden first, and the
#     install names that kernel and still succeeds;
#   - its headers back but the source broken, DKMS's hook (what a
#     linux-headers package runs) names that kernel and DKMS's make.log
#     and keeps the running kernel's module; with the source mended, it
#     builds the module for that kernel too;
#   - with a DKMS signing key in place (/var/lib/dkms/mok.key, made here
#     with a name of its own), each built module carries its signature;
#   - modprobe loads DKMS's module, and the packaged tool lists the GPU;
#     the tool, the boot files and the conffile are where gpuctl.8 says;
#   - update-initramfs with rules in gpuctl.conf: the package's hook puts
#     DKMS's module, the softdeps and the rules into the image, which make
#     check-packages then boots (the reserved GPUs on vfio-pci);
#   - an upgrade to a newer version (build/deb-upgrade, make
#     check-packages) with an allocation in the ledger: a malformed
#     gpuctl.conf stops it with FILE:LINE and the old module running; with
#     the file mended, a VFIO user that holds the GPU defers the reload
#     (the package says so, gpuctl module show says why); once it is gone,
#     gpuctl module reload brings in the new module with the same ledger,
#     ids included, and the GPU never leaves vfio-pci;
#   - gpuctl-cloudstack diverts the agent's gpudiscovery.sh and gives it
#     back on removal;
#   - apt-get remove takes out the module of every kernel, the hook and the
#     unit, keeps /etc/gpuctl, and leaves a reserved GPU on vfio-pci and
#     the running module loaded; purge also takes /etc/gpuctl.
# The module the suite loaded first (run_tests.sh, GPUCTL_KO) is unloaded,
# so that what runs is the one DKMS built.

# Stage functions run through ktap_run_stage or a trap.
# shellcheck disable=SC2317,SC2016
# Read whole before it runs: it runs for half an hour in a guest that
# sees the live tree, where an edit would otherwise break the run.
{

# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_packages.XXXXXX)
SIGNER="gpuctl test signing key"
DEBS=${GPUCTL_DEBS:-$GPUCTL_ROOT/build/deb}
UPGRADE_DEBS=${GPUCTL_UPGRADE_DEBS:-$GPUCTL_ROOT/build/deb-upgrade}
CONF=/etc/gpuctl/gpuctl.conf
VM=1b4e28ba-2fa1-11d2-883f-0016d3cca427
GPU=0000:01:00.0
AGENT_SCRIPT=/usr/share/cloudstack-common/scripts/vm/hypervisor/kvm/gpudiscovery.sh
HOOK=/usr/share/initramfs-tools/hooks/gpuctl
UNIT=/lib/systemd/system/gpuctl.service
UNIT_LINK=/etc/systemd/system/multi-user.target.wants/gpuctl.service
export DEBIAN_FRONTEND=noninteractive
# The packages' maintainer scripts run "gpuctl" from PATH, which must be
# the packaged tool, not the live tree's that the guest puts first.
PATH=$(tr : '\n' <<<"$PATH" | grep -vx "$GPUCTL_ROOT/tools/gpuctl" | paste -sd:)
export PATH

cleanup() {
	vfio_open_stop
	# the tree's tool: the packaged one may be purged by now
	[ -d /sys/module/gpuctl ] &&
		"$GPUCTL_ROOT/tools/gpuctl/gpuctl" alloc del owner "$VM" >/dev/null 2>&1
	[ -d /sys/module/gpuctl ] &&
		"$GPUCTL_ROOT/tools/gpuctl/gpuctl" reserve del "$GPU" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# apt-get in a guest without a network: what is not on the root or in
# the files named fails (--no-download would refuse ./FILE, apt 2.6)
# (also on the guest console, where a run that times out shows how far it
# got). apt runs dpkg on a terminal of its own, so the maintainer scripts'
# lines end in CR LF: the CRs go.
apt_offline() {
	echo "\$ apt-get $*"
	apt-get -y -q -o Acquire::Retries=0 "$@" 2>&1 | tr -d '\r' | tee /dev/console
}

# The kernels that have headers, one per line
kernels_with_headers() {
	local d

	for d in /lib/modules/*/build; do
		[ -e "$d" ] || continue
		d=${d%/build}
		echo "${d##*/}"
	done
}

check_setup() {
	local fstype k

	fstype=$(findmnt -n -o FSTYPE /) || return 1
	if [ "$fstype" != overlay ]; then
		echo "/ is $fstype, not the overlay of topology \"packages\""
		return 1
	fi
	VERSION=$(dpkg-deb -f "$DEBS"/gpuctl-dkms_*_all.deb Version) || return 1
	echo "packages $VERSION in $DEBS"
	VERSION2=$(dpkg-deb -f "$UPGRADE_DEBS"/gpuctl-dkms_*_all.deb Version) ||
		return 1
	echo "upgrade to $VERSION2 from $UPGRADE_DEBS"
	dpkg --compare-versions "$VERSION2" gt "$VERSION" || return 1
	mapfile -t KERNELS < <(kernels_with_headers)
	echo "kernels with headers: ${KERNELS[*]}"
	[ "${#KERNELS[@]}" -ge 2 ] || return 1
	for k in "${KERNELS[@]}"; do
		[ "$k" != "$(uname -r)" ] && OTHER=$k
	done
	# the other kernel's headers hidden, as if not installed
	HEADERS=$(readlink "/lib/modules/$OTHER/build") || return 1
	rm "/lib/modules/$OTHER/build" || return 1
	echo "headers of $OTHER hidden ($HEADERS)"
	# a signing key of DKMS's, with a name DKMS would not give it
	mkdir -p /var/lib/dkms
	openssl req -new -x509 -nodes -days 2 -subj "/CN=$SIGNER" \
		-newkey rsa:2048 -keyout /var/lib/dkms/mok.key \
		-outform DER -out /var/lib/dkms/mok.pub 2>&1 || return 1
	SERIAL=$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -serial) ||
		return 1
	SERIAL=${SERIAL#serial=}
	echo "signing key $SIGNER, serial $SERIAL"
	if dpkg-query -W -f='${Status}\n' gpuctl gpuctl-dkms 2>/dev/null |
	   grep -qE ' (installed|config-files)$'; then
		echo "gpuctl's packages are already installed"
		return 1
	fi
	# the suite's own module goes, so that the packaged one is tested
	if [ -d /sys/module/gpuctl ]; then
		gpuctl_unload || return 1
	fi
	# Triggers that cost minutes under TCG and test nothing of gpuctl's:
	# man-db's index, and the initramfs that gpuctl's hook asks for
	# (the boot test builds its own images)
	rm -f /var/lib/man-db/auto-update
	mkdir -p /etc/initramfs-tools
	echo update_initramfs=no >/etc/initramfs-tools/update-initramfs.conf
}

check_install() {
	local t0=$SECONDS

	(cd "$DEBS" && apt_offline install ./gpuctl_*.deb ./gpuctl-dkms_*.deb) \
		>"$TMP/install" 2>&1
	local rc=$?
	print_file "" "$TMP/install"
	echo "apt-get install: exit $rc in $((SECONDS - t0)) s"
	[ "$rc" = 0 ] || return 1
	dpkg-query -W -f='${Package} ${Version} ${Status}\n' gpuctl gpuctl-dkms \
		>"$TMP/status" || return 1
	print_file "" "$TMP/status"
	[ "$(grep -c " $VERSION install ok installed$" "$TMP/status")" = 2 ] ||
		return 1
	grep -qx "gpuctl-dkms: no headers for kernel $OTHER (/lib/modules/$OTHER/build); gpuctl.ko is built when they are installed" \
		"$TMP/install" || { echo "no word of $OTHER's headers"; return 1; }
	dkms status gpuctl | tee "$TMP/dkms"
	[ "$(grep -c . "$TMP/dkms")" = 1 ] &&
		grep -qx "gpuctl/$VERSION, $(uname -r), x86_64: installed" "$TMP/dkms"
}

# A new kernel that gpuctl.ko does not build for (here DKMS's copy of the
# source starts with an #error): the hook its headers' package runs names
# the kernel and DKMS's make.log, which has the compiler's error, and the
# running kernel's module stays installed. The next stage, with the
# source mended, builds it.
check_build_failure() {
	local src=/usr/src/gpuctl-$VERSION/kmod/main.c rc=0
	local log=/var/lib/dkms/gpuctl/$VERSION/build/make.log

	cp "$src" "$TMP/main.c" || return 1
	sed -i '1i #error gpuctl-selftest: no build for this kernel' "$src" || return 1
	ln -s "$HEADERS" "/lib/modules/$OTHER/build" || return 1
	run-parts --report --arg="$OTHER" /etc/kernel/header_postinst.d \
		>"$TMP/hook" 2>&1 || rc=$?
	cp "$TMP/main.c" "$src" || return 1
	rm "/lib/modules/$OTHER/build" || return 1
	print_file "" "$TMP/hook"
	echo "header_postinst.d: exit $rc"
	grep -q "Bad return status for module build on kernel: $OTHER (x86_64)" "$TMP/hook" ||
		return 1
	grep -q "Consult $log for more information" "$TMP/hook" || return 1
	grep -q "error: #error gpuctl-selftest: no build for this kernel" "$log" || return 1
	dkms status gpuctl | tee "$TMP/dkms"
	grep -qx "gpuctl/$VERSION, $(uname -r), x86_64: installed" "$TMP/dkms" || return 1
	! grep -q ", $OTHER, " "$TMP/dkms" || return 1
	case $(modinfo -F filename gpuctl) in
	/lib/modules/"$(uname -r)"/updates/dkms/gpuctl.ko*) ;;
	*) echo "the running kernel's module is gone"; return 1 ;;
	esac
}

# Installing a kernel's headers runs /etc/kernel/header_postinst.d/ (the
# linux-headers package's postinst); DKMS's hook there builds gpuctl.ko
check_headers_later() {
	ln -s "$HEADERS" "/lib/modules/$OTHER/build" || return 1
	run-parts --report --exit-on-error --arg="$OTHER" /etc/kernel/header_postinst.d
}

# dkms status has gpuctl installed for each kernel with headers, and
# modinfo finds DKMS's module there, built for that kernel, with the
# package's version and signed with DKMS's key
check_dkms() {
	local k f key

	dkms status gpuctl >"$TMP/dkms" 2>&1 || { print_file "" "$TMP/dkms"; return 1; }
	print_file "" "$TMP/dkms"
	[ "$(grep -c ': installed$' "$TMP/dkms")" = "${#KERNELS[@]}" ] || return 1
	for k in "${KERNELS[@]}"; do
		grep -qx "gpuctl/$VERSION, $k, x86_64: installed" "$TMP/dkms" || {
			echo "no gpuctl/$VERSION installed for $k"
			return 1
		}
		f=$(modinfo -k "$k" -F filename gpuctl) || return 1
		echo "$k: $f"
		case $f in
		/lib/modules/"$k"/updates/dkms/gpuctl.ko*) ;;
		*) echo "not DKMS's module"; return 1 ;;
		esac
		[ "$(modinfo -F version "$f")" = "$VERSION" ] || return 1
		case $(modinfo -F vermagic "$f") in
		"$k "*) ;;
		*) echo "vermagic $(modinfo -F vermagic "$f"), not $k"; return 1 ;;
		esac
		# modinfo prints the key's serial in hex pairs with colons
		key=$(modinfo -F sig_key "$f")
		echo "signer '$(modinfo -F signer "$f")', key $key"
		[ "$(modinfo -F signer "$f")" = "$SIGNER" ] &&
			[ "${key//:/}" = "$SERIAL" ] || return 1
	done
}

# modprobe loads DKMS's module; the packaged tool reports its version and
# lists the GPU with its driver
check_load() {
	if [ "${GPUCTL_SKIP_LOAD:-0}" = 1 ]; then
		echo "GPUCTL_SKIP_LOAD: gpuctl not loaded"
	else
		modprobe gpuctl || return 1
	fi
	[ "$(cat /sys/module/gpuctl/version)" = "$VERSION" ] || return 1
	/usr/sbin/gpuctl -V || return 1
	run_captured "$TMP/show" "$TMP/err" /usr/sbin/gpuctl -j dev show || return 1
	json_check --arg a "$GPU" \
		'.devices | map(select(.address == $a)) | length == 1 and
		 .[0].driver == "bochs-drm" and .[0].role == "gpu"' "$TMP/show"
}

# The files gpuctl.8 and the README name, and the unit enabled
check_files() {
	local f

	for f in /usr/sbin/gpuctl /usr/share/man/man8/gpuctl.8.gz \
		 /usr/share/bash-completion/completions/gpuctl \
		 /etc/modprobe.d/gpuctl.conf "$HOOK" "$UNIT" \
		 /lib/udev/rules.d/90-gpuctl.rules /etc/gpuctl/gpuctl.conf \
		 "/usr/src/gpuctl-$VERSION/dkms.conf"; do
		[ -f "$f" ] || { echo "$f missing"; return 1; }
	done
	[ -x "$HOOK" ] || return 1
	[ "$(readlink "$UNIT_LINK")" = "$UNIT" ] || { echo "$UNIT_LINK"; return 1; }
	dpkg-query -W -f='${Conffiles}\n' gpuctl >"$TMP/conffiles" || return 1
	print_file "" "$TMP/conffiles"
	grep -q '^ /etc/gpuctl/gpuctl.conf ' "$TMP/conffiles" &&
		grep -q '^ /etc/modprobe.d/gpuctl.conf ' "$TMP/conffiles"
}

# The boot files at work, as a host uses them: gpuctl.conf with the boot
# selftest's rules, then update-initramfs, which runs the package's hook
# with its modprobe.d file and DKMS's module. initramfs-tools is set up as
# the boot selftest's images are (a short modules list, which TCG boots
# quickly) plus that selftest's reporting boot script. The image goes to
# GPUCTL_OUT, where make check-packages boots it (selftests/boot/run.sh
# --image); gpuctl.conf and initramfs-tools are put back.
check_initramfs() {
	local rel img boot=$GPUCTL_ROOT/selftests/boot rc=0 list f

	rel=$(uname -r)
	img=/boot/initrd.img-$rel
	[ -n "${GPUCTL_OUT:-}" ] || { echo "no GPUCTL_OUT"; return 1; }
	cp "$CONF" "$TMP/conf.orig" && cp "$boot/gpuctl.conf" "$CONF" || return 1
	cp -a /etc/initramfs-tools "$TMP/initramfs-tools" || return 1
	cp "$boot/initramfs/initramfs.conf" "$boot/initramfs/modules" /etc/initramfs-tools/ &&
		mkdir -p /etc/initramfs-tools/scripts &&
		cp "$boot/initramfs/scripts/gpuctl-selftest" /etc/initramfs-tools/scripts/ &&
		echo update_initramfs=yes >/etc/initramfs-tools/update-initramfs.conf || return 1
	update-initramfs -c -k "$rel" >"$TMP/update" 2>&1 || rc=$?
	rm -rf /etc/initramfs-tools && cp -a "$TMP/initramfs-tools" /etc/initramfs-tools &&
		cp "$TMP/conf.orig" "$CONF" || return 1
	print_file "" "$TMP/update"
	echo "update-initramfs: exit $rc"
	[ "$rc" = 0 ] || return 1
	list=$(lsinitramfs "$img") || return 1
	for f in "usr/lib/modules/${rel//[.+]/\\&}/updates/dkms/gpuctl\.ko(\.xz)?" \
		 etc/modprobe.d/gpuctl.conf etc/modprobe.d/gpuctl-reserve.conf \
		 scripts/gpuctl-selftest; do
		grep -qxE "$f" <<<"$list" || { echo "not in the image: $f"; return 1; }
	done
	mkdir "$TMP/image" && unmkinitramfs "$img" "$TMP/image" || return 1
	f=$TMP/image/etc/modprobe.d/gpuctl-reserve.conf
	[ -d "$TMP/image/main" ] && f=$TMP/image/main/etc/modprobe.d/gpuctl-reserve.conf
	grep -qx "options gpuctl reserve=0000:01:00.0,0000:07:00.0" "$f" || {
		print_file "" "$f"
		return 1
	}
	cp "$img" "$GPUCTL_OUT/" && ls -l "$GPUCTL_OUT/${img##*/}"
}

# The ledger as the independent client reads it
nl_ledger() {
	gpuctl-nl alloc-dump && gpuctl-nl limit-dump
}

# An allocation and a limit in the ledger; a malformed line in gpuctl.conf
# stops the upgrade before the old module is unloaded. The other kernel's
# headers are hidden again: one DKMS build under TCG is enough here.
check_upgrade_bad_conf() {
	local line rc=0

	rm "/lib/modules/$OTHER/build" || return 1
	/usr/sbin/gpuctl reserve add "$GPU" take || return 1
	expect_pci_driver "$GPU" vfio-pci 10 || return 1
	/usr/sbin/gpuctl alloc add owner "$VM" id 77 account acme dev "$GPU" ||
		return 1
	/usr/sbin/gpuctl limit set account acme max 2 || return 1
	nl_ledger >"$TMP/ledger" || return 1
	cat "$TMP/ledger"
	cp "$CONF" "$TMP/conf" || return 1
	echo "reserve 0000:zz:00.0" >>"$CONF"
	line=$(wc -l <"$CONF")
	(cd "$UPGRADE_DEBS" && apt_offline install ./gpuctl_*.deb ./gpuctl-dkms_*.deb) \
		>"$TMP/upgrade" 2>&1 || rc=$?
	print_file "" "$TMP/upgrade"
	[ "$rc" != 0 ] || { echo "the upgrade went through"; return 1; }
	grep -q "^$CONF:$line: " "$TMP/upgrade" || return 1
	grep -q "^gpuctl-dkms: $CONF has errors (above); the running gpuctl module" \
		"$TMP/upgrade" || return 1
	[ "$(cat /sys/module/gpuctl/version)" = "$VERSION" ] || return 1
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	nl_ledger | diff -u "$TMP/ledger" -
}

# The file mended, dpkg finishes the upgrade while a VFIO user holds the
# GPU on vfio-pci: the new module takes over at once, and the VM keeps the
# GPU (the same process, the same driver, the allocation running).
check_upgrade_with_vm() {
	cp "$TMP/conf" "$CONF" || return 1
	vfio_open_start "$GPU" || return 1
	dpkg --configure -a >"$TMP/configure" 2>&1 || {
		print_file "" "$TMP/configure"
		return 1
	}
	print_file "" "$TMP/configure"
	grep -q "^gpuctl: module .* loaded: .* carried over" "$TMP/configure" ||
		return 1
	[ "$(cat /sys/module/gpuctl/version)" = "${VERSION2%%-*}" ] || return 1
	kill -0 "$VFIO_PID" || { echo "the VFIO user is gone"; return 1; }
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	run_captured "$TMP/out" "$TMP/err" /usr/sbin/gpuctl -j module show || return 1
	json_check --arg r "${VERSION2%%-*}" \
		'.running == $r and (.reload_due | not) and .reload_blocked_by == []' \
		"$TMP/out" || return 1
	# the same ledger, the allocation running while its GPU is open
	nl_ledger | sed 's/ state=running$/ state=idle/' | diff -u "$TMP/ledger" -
}

# Once the VFIO user is gone, the allocation is idle again in the new
# module; a reload now has nothing to do. Then the stage's own allocation,
# limit and rule go, for the removal's stages.
check_upgrade_reload() {
	vfio_open_stop
	run_captured "$TMP/out" "$TMP/err" /usr/sbin/gpuctl module reload || return 1
	grep -q "is loaded already; nothing to do" "$TMP/err" || return 1
	[ "$(cat /sys/module/gpuctl/version)" = "${VERSION2%%-*}" ] || return 1
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	for _ in $(seq 50); do
		nl_ledger | diff -q "$TMP/ledger" - >/dev/null && break
		sleep 0.2
	done
	nl_ledger | diff -u "$TMP/ledger" - || return 1
	/usr/sbin/gpuctl alloc del owner "$VM" || return 1
	/usr/sbin/gpuctl limit set account acme max none || return 1
	/usr/sbin/gpuctl reserve del "$GPU"
}

# gpuctl-cloudstack moves the agent's script aside and gives it back
check_cloudstack() {
	mkdir -p "${AGENT_SCRIPT%/*}" || return 1
	printf '#!/bin/sh\necho agent\n' >"$AGENT_SCRIPT"
	(cd "$DEBS" && apt_offline install ./gpuctl-cloudstack_*.deb) || return 1
	dpkg-divert --list "$AGENT_SCRIPT" | tee "$TMP/divert"
	grep -qx "diversion of $AGENT_SCRIPT to $AGENT_SCRIPT.distrib by gpuctl-cloudstack" \
		"$TMP/divert" || return 1
	grep -qx 'echo agent' "$AGENT_SCRIPT.distrib" || return 1
	grep -qx 'exec /usr/sbin/gpuctl export cloudstack' "$AGENT_SCRIPT" || return 1
	apt_offline remove gpuctl-cloudstack || return 1
	[ -z "$(dpkg-divert --list "$AGENT_SCRIPT")" ] || return 1
	[ ! -e "$AGENT_SCRIPT.distrib" ] || return 1
	grep -qx 'echo agent' "$AGENT_SCRIPT"
}

# Removal takes the module of every kernel, the hook and the unit; a GPU
# reserved before stays on vfio-pci, the running module stays loaded, and
# /etc/gpuctl stays for a later install
check_remove() {
	local k

	/usr/sbin/gpuctl reserve add "$GPU" take || return 1
	expect_pci_driver "$GPU" vfio-pci 10 || return 1
	apt_offline remove gpuctl gpuctl-dkms || return 1
	dkms status gpuctl | tee "$TMP/dkms"
	[ ! -s "$TMP/dkms" ] || return 1
	for k in "${KERNELS[@]}"; do
		if modinfo -k "$k" -F filename gpuctl; then
			echo "gpuctl.ko still installed for $k"
			return 1
		fi
	done
	for f in "$HOOK" "$UNIT" "$UNIT_LINK" /usr/sbin/gpuctl "/usr/src/gpuctl-$VERSION"; do
		[ ! -e "$f" ] || { echo "$f left"; return 1; }
	done
	[ -f /etc/gpuctl/gpuctl.conf ] || return 1
	[ -d /sys/module/gpuctl ] || return 1
	expect_pci_driver "$GPU" vfio-pci 0
}

check_purge() {
	apt_offline purge gpuctl gpuctl-dkms || return 1
	for f in /etc/gpuctl /etc/modprobe.d/gpuctl.conf; do
		[ ! -e "$f" ] || { echo "$f left"; return 1; }
	done
	dpkg-query -W -f='${Status}\n' gpuctl gpuctl-dkms 2>&1 | tee "$TMP/status"
	! grep -qE ' (installed|config-files)$' "$TMP/status" || return 1
	[ -d /sys/module/gpuctl ] || return 1
	expect_pci_driver "$GPU" vfio-pci 0
}

ktap_header
ktap_plan 14
ktap_run_stage "overlay root, packages and kernel headers; the suite's module unloaded" \
	check_setup
ktap_run_stage "apt-get install ./gpuctl_*.deb ./gpuctl-dkms_*.deb, offline; a kernel without headers named" \
	check_install
ktap_run_stage "a kernel gpuctl.ko does not build for: the kernel and DKMS's make.log named, the running kernel's module kept" \
	check_build_failure
ktap_run_stage "the other kernel's headers installed: DKMS's hook builds it" \
	check_headers_later
ktap_run_stage "DKMS built gpuctl.ko for every kernel with headers, signed with its key" check_dkms
ktap_run_stage "modprobe loads DKMS's module; gpuctl dev show lists the GPU" check_load
ktap_run_stage "tool, man page, completion, boot files, conffiles, unit enabled" check_files
ktap_run_stage "update-initramfs: the package's hook puts in DKMS's module, the softdeps and gpuctl.conf's rules" \
	check_initramfs
ktap_run_stage "upgrade with a malformed gpuctl.conf: stops with FILE:LINE, old module and ledger kept" \
	check_upgrade_bad_conf
ktap_run_stage "upgrade while a VFIO user holds the GPU on vfio-pci: the new module at once, the VM keeps it" \
	check_upgrade_with_vm
ktap_run_stage "the VFIO user gone: the allocation idle, no reload due, the GPU on vfio-pci" \
	check_upgrade_reload
ktap_run_stage "gpuctl-cloudstack diverts gpudiscovery.sh and gives it back" check_cloudstack
ktap_run_stage "remove: module, hook and unit gone; reserved GPU stays on vfio-pci" check_remove
ktap_run_stage "purge: /etc/gpuctl gone; reserved GPU stays on vfio-pci" check_purge
ktap_finished
}
