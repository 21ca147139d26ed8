#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-packages: gpuctl's Debian packages, built by make deb (lintian
# errors fail it), then installed, loaded, removed and purged in a guest of
# each test kernel whose root is an overlay of the host's (topology
# "packages", selftests/test_packages.sh); the initramfs that
# update-initramfs made there with the package's hook is then booted
# (selftests/boot/run.sh --image). Apart from make check: DKMS
# builds the module for both kernels in every guest, which under TCG takes
# minutes that make check's half hour has not got. Ends with one line
# "N passed, N failed, N skipped" over every test case, as make check.
#
# Environment: GPUCTL_KERNELS, as for make check (default: the newest 6.1
# and 6.12).

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/check-packages
mkdir -p "$out"

scripts/install-deps.sh test || exit 1

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
kernels=$(check_kernels)
# The guest's one program runs for minutes (selftests/settings has 300 s).
export GPUCTL_PROG_TIMEOUT=${GPUCTL_PROG_TIMEOUT:-3300}

echo "TAP version 13"
echo "# gpuctl make check-packages: kernels: $kernels"

if make -s deb >"$out/deb.log" 2>&1; then
	result ok "make deb: packages built, no lintian errors"
else
	sed 's/^/# /' "$out/deb.log" | tail -n 40
	result fail "make deb: packages built, no lintian errors"
fi

# The same tree once more as a newer version, for the guest's upgrade
# (build/deb-upgrade/): a changelog entry on top of a copy, nothing else.
upgrade_debs() {
	local v

	rm -rf build/deb-upgrade || return 1
	mkdir -p build/deb-upgrade/gpuctl || return 1
	git ls-files -z --cached --others --exclude-standard |
		tar -c --null -T - | tar -x -C build/deb-upgrade/gpuctl || return 1
	v=$(dpkg-parsechangelog -l debian/changelog -S Version) || return 1
	{
		printf 'gpuctl (%s+upgrade1) unstable; urgency=medium\n\n' "$v"
		printf '  * A newer version for the upgrade test.\n\n'
		printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l debian/changelog -S Maintainer)" \
			"$(date -R)"
		cat debian/changelog
	} >build/deb-upgrade/gpuctl/debian/changelog || return 1
	(cd build/deb-upgrade/gpuctl && dpkg-buildpackage -us -uc -b)
}
if upgrade_debs >"$out/deb-upgrade.log" 2>&1; then
	result ok "the packages as a newer version, for the upgrade"
else
	sed 's/^/# /' "$out/deb-upgrade.log" | tail -n 40
	result fail "the packages as a newer version, for the upgrade"
fi

# Each guest's cases count as make check counts them; one that stopped
# early fails each case it did not report (run_tests.sh --minimum).
for k in $kernels; do
	log=$out/$k.log
	start=$(date +%s)
	rm -rf "$out/$k.run"
	selftests/qemu/run.sh --kernel "$k" --topology packages --timeout 3600 \
		--keep-log "$out/$k.console" --out "$out/$k.run" \
		-- env GPUCTL_KO="$top/build/$k/gpuctl.ko" \
		selftests/run_tests.sh packages >"$log" 2>"$log.err"
	rc=$?
	sed 's/^/    /' "$log"
	[ $rc -eq 0 ] || sed 's/^/# /' "$log.err" | tail -n 30
	read -r p f s plan printed < <(scripts/ktap-count.sh "$log")
	min=$(selftests/run_tests.sh --minimum packages)
	missing=0
	[ $((p + f + s)) -lt "$min" ] && missing=$((min - p - f - s))
	pass=$((pass + p)) fail=$((fail + f + missing)) skip=$((skip + s))
	echo "# $k packages: $p passed, $((f + missing)) failed, $s skipped," \
	     "in $(($(date +%s) - start)) s"
	if [ "$rc" = 0 ] && [ "$missing" = 0 ] && [ "$plan" != - ] &&
	   [ "$printed" = "$plan" ]; then
		result ok "$k packages: guest suite, kernel log clean"
	else
		result fail "$k packages: guest suite (exit $rc, $printed of $plan results)"
	fi

	# The initramfs that update-initramfs made in that guest, with the
	# package's hook (test_packages.sh), booted: the reserved GPUs must
	# be on vfio-pci before any host driver takes them.
	log=$out/$k-boot.log
	start=$(date +%s)
	selftests/boot/run.sh --kernel "$k" --boots 1 \
		--image "$out/$k.run/share/initrd.img-$k" >"$log" 2>&1
	rc=$?
	sed 's/^/    /' "$log"
	read -r p f s plan printed < <(scripts/ktap-count.sh "$log")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "# $k packaged initramfs: $p passed, $f failed, $s skipped," \
	     "in $(($(date +%s) - start)) s"
	if [ "$rc" = 0 ] && [ "$plan" != - ] && [ "$printed" = "$plan" ]; then
		result ok "$k packaged initramfs booted: reserved GPUs on vfio-pci"
	else
		result fail "$k packaged initramfs booted (exit $rc, $printed of $plan results)"
	fi
done

echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
