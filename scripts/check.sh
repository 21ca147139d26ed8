#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: the whole suite. Installs what it needs, builds the module for
# every test kernel with -Werror, checks the generated files against the
# spec, then boots each kernel in QEMU on each topology and runs the
# selftests there, and boots each with Debian initramfs images
# (selftests/boot). Prints KTAP as it goes and ends with one line
# "N passed, N failed, N skipped" over every test case.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/check
mkdir -p "$out"

scripts/install-deps.sh test || exit 1

topologies=${GPUCTL_TOPOLOGIES:-full noiommu}
# Debian 12's 6.1 and the 6.12 from bookworm (security/backports): the
# newest installed release of each series.
newest_of() {
	for f in /boot/vmlinuz-"$1".*-amd64; do
		[ -e "$f" ] && echo "${f#/boot/vmlinuz-}"
	done | sort -V | tail -n1
}
kernels=${GPUCTL_KERNELS:-$(newest_of 6.1; newest_of 6.12)}
kernels=${kernels//$'\n'/ }

pass=0 fail=0 skip=0 n=0

result() {	# result ok|fail|skip DESCRIPTION
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $n $2" ;;
	esac
}

step() {	# step DESCRIPTION LOG CMD...: one host-side test case
	local desc=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then
		result ok "$desc"
	else
		sed 's/^/# /' "$log" | tail -n 40
		result fail "$desc"
	fi
}

# The leaf test cases of a guest's KTAP: "PASSED FAILED SKIPPED".
count_ktap() {
	scripts/ktap-count.sh "$1"
}

echo "TAP version 13"
echo "# gpuctl make check: kernels: $kernels topologies: $topologies"
[ -n "$kernels" ] || { echo "# no test kernels installed"; result fail "test kernels installed"; }

make -s ksrc >"$out/ksrc.log" 2>&1 || { cat "$out/ksrc.log"; exit 1; }
step "regen-check: generated uapi and kernel tables match the spec" \
	"$out/regen.log" make -s regen-check

step "checkpatch --strict and shellcheck are clean" "$out/style.log" \
	scripts/style.sh build/linux-source-6.12

for k in $kernels; do
	step "module builds with W=1 and -Werror for $k" "$out/build-$k.log" \
		scripts/build-module.sh "$k" W=1 GPUCTL_WERROR=y
done
step "tool builds with -Werror" "$out/tools.log" make -s tools
step "selftests build with -Werror" "$out/selftests.log" make -s selftests

# The tool's parser table runs on the host, without a kernel.
if make -s -C tools/gpuctl check >"$out/cmdline.log" 2>&1; then :; fi
read -r p f s < <(count_ktap "$out/cmdline.log")
if [ $((p + f + s)) -eq 0 ]; then
	cat "$out/cmdline.log"
	result fail "tool command-line parser table"
else
	sed 's/^/    /' "$out/cmdline.log" | grep -E '^ +(not )?ok '
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
fi

step "make install DESTDIR: module, tool, man page, completion, unit, initramfs hook" \
	"$out/install.log" scripts/test-install.sh

for k in $kernels; do
	if [ ! -f "build/$k/gpuctl.ko" ]; then
		result fail "$k: module missing, guest tests not run"
		continue
	fi
	for t in $topologies; do
		log="$out/$k-$t.log"
		echo "# $k $t: booting"
		start=$(date +%s)
		selftests/qemu/run.sh --kernel "$k" --topology "$t" --timeout 2400 \
			--keep-log "$out/$k-$t.console" \
			-- selftests/run_tests.sh "$t" >"$log" 2>"$log.err"
		rc=$?
		sed 's/^/    /' "$log"
		read -r p f s < <(count_ktap "$log")
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		echo "# $k $t: $p passed, $f failed, $s skipped in $(($(date +%s) - start)) s"
		if [ $rc -eq 0 ]; then
			result ok "$k $t: guest ran the suite, kernel log clean"
		else
			sed 's/^/# /' "$log.err" | tail -n 30
			result fail "$k $t: guest run (exit $rc; console log $out/$k-$t.console)"
		fi
	done
done

# make demo as a newcomer runs it, without a terminal: the tour checks
# every step and fails on the first that goes wrong.
for k in $kernels; do
	step "make demo: the tour on $k, every step checked" "$out/demo-$k.log" \
		env GPUCTL_KERNEL="$k" scripts/demo.sh </dev/null
done

# Boot selftest: real Debian initramfs images with the packaged hook and
# modprobe.d file, booted in QEMU; reserved GPUs must end on vfio-pci.
for k in $kernels; do
	log="$out/$k-boot.log"
	echo "# $k boot: building initramfs images and booting"
	start=$(date +%s)
	selftests/boot/run.sh --kernel "$k" --boots "${GPUCTL_BOOTS:-2}" \
		>"$log" 2>"$log.err"
	rc=$?
	sed 's/^/    /' "$log"
	read -r p f s < <(count_ktap "$log")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "# $k boot: $p passed, $f failed, $s skipped in $(($(date +%s) - start)) s"
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		sed 's/^/# /' "$log.err" | tail -n 30
		result fail "$k boot: runner (exit $rc; logs in build/boot/$k)"
	fi
done

echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
