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

step "make deb: packages built, no lintian errors" "$out/deb.log" make -s deb

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
step "the packages as a newer version, for the upgrade" "$out/deb-upgrade.log" upgrade_debs

# Each guest's cases count as make check counts them (stage()); one that
# stopped early fails each case it did not report (run_tests.sh
# --minimum).
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
	stage "$k packages: guest suite, kernel log clean" "$log" "$rc" \
		"$(selftests/run_tests.sh --minimum packages)" "$log.err"

	# The initramfs that update-initramfs made in that guest, with the
	# package's hook (test_packages.sh), booted: the reserved GPUs must
	# be on vfio-pci before any host driver takes them.
	log=$out/$k-boot.log
	start=$(date +%s)
	selftests/boot/run.sh --kernel "$k" --boots 1 \
		--image "$out/$k.run/share/initrd.img-$k" >"$log" 2>&1
	rc=$?
	sed 's/^/    /' "$log"
	stage "$k packaged initramfs booted: reserved GPUs on vfio-pci" "$log" "$rc"
done

failures_print
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
