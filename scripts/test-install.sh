#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install into a DESTDIR, as a package build does it, on the host: the
# module under updates/ for its kernel, the tool, its man page and bash
# completion, and the boot files (modprobe.d softdeps, the initramfs-tools
# hook, the systemd unit, the udev rule and the example gpuctl.conf), and
# CloudStack's gpudiscovery.sh drop-in (make install-cloudstack), each
# where the others and gpuctl.8 expect it and usable there; a second
# install keeps the administrator's gpuctl.conf. Prints what it checks;
# exits 1 when anything is missing or wrong.
#
# Usage: scripts/test-install.sh [KVER]   (default: the Makefile's choice)

set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

dest=$(mktemp -d /tmp/gpuctl-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fail=0

bad() {
	echo "not ok: $*"
	fail=1
}

ok() {
	echo "ok: $*"
}

# installed SRC DST MODE: DST is a copy of SRC with MODE
installed() {
	local src=$1 dst=$dest$2 mode=$3

	if [ ! -f "$dst" ]; then
		bad "$2 missing"
	elif ! cmp -s "$src" "$dst"; then
		bad "$2 differs from $src"
	elif [ "$(stat -c %a "$dst")" != "$mode" ]; then
		bad "$2 has mode $(stat -c %a "$dst"), want $mode"
	else
		ok "$2 ($mode)"
	fi
}

# Without KVER, the Makefile picks the kernel, as for a user.
kver=${1:-}
echo "# make install DESTDIR=$dest${kver:+ KVER=$kver}"
if ! nice make -s install DESTDIR="$dest" ${kver:+KVER="$kver"} >"$dest.log" 2>&1; then
	cat "$dest.log"
	rm -f "$dest.log"
	echo "not ok: make install failed"
	exit 1
fi
rm -f "$dest.log"

# the module, for its kernel, where depmod looks first
mapfile -t kos < <(cd "$dest" && find lib/modules -name 'gpuctl.ko*')
[ -n "$kver" ] || kver=$(echo "${kos[0]:-}" | cut -d/ -f3)
if [ "${#kos[@]}" -ne 1 ]; then
	bad "want one gpuctl.ko under $dest/lib/modules, found: ${kos[*]}"
elif [[ ${kos[0]} != lib/modules/$kver/updates/* ]]; then
	bad "${kos[0]} is not under lib/modules/$kver/updates"
elif [ "$(modinfo -F vermagic "$dest/${kos[0]}" | cut -d' ' -f1)" != "$kver" ]; then
	bad "${kos[0]} is built for $(modinfo -F vermagic "$dest/${kos[0]}")"
elif ! modinfo -F depends "$dest/${kos[0]}" | grep -q vfio; then
	bad "${kos[0]} does not name its vfio dependencies"
else
	ok "/${kos[0]} for $kver"
fi

# the tool and what comes with it
installed tools/gpuctl/gpuctl /usr/sbin/gpuctl 755
installed tools/gpuctl/gpuctl.8 /usr/share/man/man8/gpuctl.8 644
installed tools/gpuctl/gpuctl.bash-completion \
	/usr/share/bash-completion/completions/gpuctl 644
"$dest/usr/sbin/gpuctl" -V | grep -q '^gpuctl version ' ||
	bad "the installed gpuctl does not run"
warnings=$(MANWIDTH=80 man --warnings -l "$dest/usr/share/man/man8/gpuctl.8" 2>&1 >/dev/null)
[ -z "$warnings" ] || bad "man --warnings: $warnings"
# shellcheck disable=SC1091 # the installed file
bash -c "source '$dest/usr/share/bash-completion/completions/gpuctl' &&
	complete -p gpuctl | grep -q -- '-F _gpuctl gpuctl'" ||
	bad "the installed completion does not register for gpuctl"

# the boot files
installed packaging/modprobe.d/gpuctl.conf /etc/modprobe.d/gpuctl.conf 644
installed packaging/initramfs-tools/hooks/gpuctl \
	/usr/share/initramfs-tools/hooks/gpuctl 755
installed packaging/systemd/gpuctl.service /lib/systemd/system/gpuctl.service 644
installed packaging/udev/90-gpuctl.rules /lib/udev/rules.d/90-gpuctl.rules 644
installed packaging/gpuctl.conf /etc/gpuctl/gpuctl.conf 644

# initramfs-tools runs each hook with "prereqs" first, under sh
hook=$dest/usr/share/initramfs-tools/hooks/gpuctl
sh -n "$hook" || bad "the hook is not valid sh"
[ "$(sh "$hook" prereqs)" = "" ] || bad "the hook's prereqs are not empty"
# the hook finds the tool where make install put it
grep -q 'for dir in /usr/sbin ' "$hook" || bad "the hook does not look in /usr/sbin"

# the unit starts what was installed, when the file it reads is there
unit=$dest/lib/systemd/system/gpuctl.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
if [ "${exec_start%% *}" != /usr/sbin/gpuctl ] || [ ! -x "$dest${exec_start%% *}" ]; then
	bad "ExecStart=$exec_start does not run the installed tool"
fi
cond=$(sed -n 's/^ConditionPathExists=//p' "$unit")
[ -f "$dest$cond" ] || bad "ConditionPathExists=$cond: not installed"
# the udev rule runs the installed tool on the installed file
rule=$dest/lib/udev/rules.d/90-gpuctl.rules
runs=$(sed -n 's/.*RUN+="\([^"]*\)".*/\1/p' "$rule")
[ "$(echo "$runs" | grep -c .)" = 2 ] || bad "the udev rules do not run apply twice"
while read -r run; do
	if [ "${run%% *}" != /usr/sbin/gpuctl ] || [ ! -x "$dest${run%% *}" ]; then
		bad "the udev rule's RUN=$run does not run the installed tool"
	fi
done <<<"$runs"
grep -q 'ENV{MDEV_STATE}=="registered"' "$rule" ||
	bad "the udev rule does not wait for an mdev parent's registration"
grep -q 'ACTION=="bind", SUBSYSTEM=="pci", DRIVER=="nvidia"' "$rule" ||
	bad "the udev rule does not wait for a vendor VF's binding"
# and the installed tool accepts the installed example
"$dest/usr/sbin/gpuctl" apply "$dest/etc/gpuctl/gpuctl.conf" check ||
	bad "gpuctl apply check rejects the installed gpuctl.conf"
[ "$("$dest/usr/sbin/gpuctl" apply "$dest/etc/gpuctl/gpuctl.conf" modprobe)" = "" ] ||
	bad "the example gpuctl.conf reserves something"
grep -q '^softdep gpuctl post: vfio-pci' "$dest/etc/modprobe.d/gpuctl.conf" ||
	bad "modprobe.d/gpuctl.conf lacks the vfio-pci softdep"
ok "hook, unit and gpuctl.conf work together"

# CloudStack's drop-in, where the agent runs it, running the installed tool
cs=/usr/share/cloudstack-common/scripts/vm/hypervisor/kvm/gpudiscovery.sh
if ! make -s install-cloudstack DESTDIR="$dest" >/dev/null; then
	bad "make install-cloudstack failed"
else
	installed packaging/cloudstack/gpudiscovery.sh "$cs" 755
	run=$(sed -n 's/^exec //p' "$dest$cs")
	if [ "$run" != "/usr/sbin/gpuctl export cloudstack" ] || [ ! -x "$dest${run%% *}" ]; then
		bad "gpudiscovery.sh runs \"$run\", not the installed gpuctl export cloudstack"
	fi
fi

# the administrator's gpuctl.conf survives a reinstall; the rest is replaced
echo "reserve 10de:2331" >"$dest/etc/gpuctl/gpuctl.conf"
echo "# edited" >>"$dest/etc/modprobe.d/gpuctl.conf"
if ! make -s install-packaging DESTDIR="$dest" >/dev/null; then
	bad "make install-packaging again failed"
elif [ "$(cat "$dest/etc/gpuctl/gpuctl.conf")" != "reserve 10de:2331" ]; then
	bad "a second install replaced the administrator's gpuctl.conf"
else
	installed packaging/modprobe.d/gpuctl.conf /etc/modprobe.d/gpuctl.conf 644
	ok "a second install keeps /etc/gpuctl/gpuctl.conf"
fi

exit "$fail"
