#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: the whole suite. Installs what it needs, builds the module for
# every test kernel with -Werror, checks the generated files against the
# spec, then boots each kernel in QEMU on each topology and runs the
# selftests there, and boots each with Debian initramfs images
# (selftests/boot). Prints KTAP as it goes and ends with one line
# "N passed, N failed, N skipped" over every test case. It passes only
# when every stage ran, exited 0 and reported all of its plan: the host
# cases alone cannot make it pass.
#
# Environment:
#   GPUCTL_KERNELS     releases to boot (default: newest 6.1 and 6.12)
#   GPUCTL_TOPOLOGIES  default "full noiommu"
#   GPUCTL_TESTS       only these guest programs (selftests/run_tests.sh)
#   GPUCTL_KO          the module the guests load instead of
#                      build/REL/gpuctl.ko; @REL@ stands for the release.
#                      It must be under a path the guest sees (the project,
#                      not /tmp). The guest runs even when it is missing.
#   GPUCTL_SKIP_LOAD=1 the guests never load the module (run_tests.sh
#                      --no-load): every guest program must fail
#   GPUCTL_BOOTS       boots per case of the boot stage (default 1); 0, or
#                      GPUCTL_TESTS set, skips the stage (reported as such)
#   GPUCTL_JOBS        kernels whose guest suites run at once (default 1)

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/check
mkdir -p "$out"

scripts/install-deps.sh test || exit 1

topologies=${GPUCTL_TOPOLOGIES:-full noiommu}
# Debian 12's 6.1 and the 6.12 from bookworm (security/backports): the
# newest installed release of each series.
# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
kernels=$(check_kernels)

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
	step "sample mdev drivers build for $k" "$out/mdev-$k.log" \
		scripts/build-mdev-samples.sh "$k"
done
# Debian 12's Nova, unpacked (not installed) for test_export_nova.sh: the
# guests have no network.
step "Nova's parsers unpacked into build/nova-root" "$out/nova.log" \
	scripts/fetch-nova.sh
step "tool builds with -Werror" "$out/tools.log" \
	make -s -B -C tools/gpuctl GPUCTL_WERROR=y
step "selftests build with -Werror" "$out/selftests.log" make -s selftests

# The harness itself: no program lost, no narrowing unsaid, no failure
# turned into a skip, its libraries linted (scripts/check-harness.sh).
start=$(date +%s)
scripts/check-harness.sh >"$out/harness.log" 2>&1
rc=$?
sed 's/^/    /' "$out/harness.log" | grep -E '^ +(not )?ok |^ +1\.\.'
stage "the harness loses no program and hides no narrowing" "$out/harness.log" "$rc" 8

# The tool's parser table runs on the host, without a kernel. It prints its
# plan last; it had 698 cases when this floor was set.
start=$(date +%s)
make -s -C tools/gpuctl tests/test-cmdline tests/test-hwdb >"$out/cmdline.log" 2>&1 &&
	tools/gpuctl/tests/test-cmdline >"$out/cmdline.log" 2>&1
rc=$?
sed 's/^/    /' "$out/cmdline.log" | grep -E '^ +(not )?ok |^ +1\.\.'
stage "tool command-line parser table" "$out/cmdline.log" "$rc" 698

# The help, the man page and the bash completion against the objects and
# commands the parser's tables hold, both ways. It had 53 cases when this
# floor was set: per source (4), one for each object (12) and one for
# what it names that the parser refuses, and the tables' own check.
start=$(date +%s)
make -s -C tools/gpuctl gpuctl tests/test-grammar >"$out/grammar.log" 2>&1 &&
	tools/gpuctl/tests/check-grammar.sh >"$out/grammar.log" 2>&1
rc=$?
sed 's/^/    /' "$out/grammar.log" | grep -E '^ +(not )?ok |^ +1\.\.|^ +# (missing|not accepted):'
stage "tool help, man page and completion name what the parser accepts" \
	"$out/grammar.log" "$rc" 53

# The tool's hwdb reader against libudev's, on the host's hwdb: every PCI
# name and class both ways, and damaged copies of the file.
start=$(date +%s)
tools/gpuctl/tests/test-hwdb >"$out/hwdb.log" 2>&1
rc=$?
sed 's/^/    /' "$out/hwdb.log" | grep -E '^ +(not )?ok |^ +1\.\.'
stage "tool hwdb reader reads as libudev does" "$out/hwdb.log" "$rc" 3

# What the guests run: the programs asked for, the module, or none.
guest_env=()
[ -n "${GPUCTL_TESTS:-}" ] && guest_env+=("GPUCTL_TESTS=$GPUCTL_TESTS")
[ -n "${GPUCTL_SKIP_TESTS:-}" ] && guest_env+=("GPUCTL_SKIP_TESTS=$GPUCTL_SKIP_TESTS")
[ "${GPUCTL_SKIP_LOAD:-0}" = 1 ] && guest_env+=(GPUCTL_SKIP_LOAD=1)

step "make install DESTDIR: module, tool, man page, completion, unit, initramfs hook" \
	"$out/install.log" scripts/test-install.sh

# guest_suites K: boots kernel K on each topology in turn and runs the
# guest suite, leaving for each topology its KTAP log, stderr, exit status
# and seconds in $out/K-T.{log,err,rc,secs}.
guest_suites() {
	local k=$1 ko=$2 t s

	for t in $topologies; do
		s=$(date +%s)
		selftests/qemu/run.sh --kernel "$k" --topology "$t" --timeout 2400 \
			--keep-log "$out/$k-$t.console" \
			-- env "${guest_env[@]}" GPUCTL_KO="$ko" \
			selftests/run_tests.sh "$t" >"$out/$k-$t.log" 2>"$out/$k-$t.err"
		echo $? >"$out/$k-$t.rc"
		echo $(($(date +%s) - s)) >"$out/$k-$t.secs"
	done
}

# report_suites K: each topology's stage of kernel K, from guest_suites'
# files.
report_suites() {
	local k=$1 t log rc

	for t in $topologies; do
		log="$out/$k-$t.log"
		rc=$(cat "$out/$k-$t.rc" 2>/dev/null || echo 1)
		sed 's/^/    /' "$log"
		[ "$rc" -eq 0 ] || sed 's/^/# /' "$out/$k-$t.err" | tail -n 30
		start=$(($(date +%s) - $(cat "$out/$k-$t.secs" 2>/dev/null || echo 0)))
		stage "$k $t: guest suite, kernel log clean (console log $out/$k-$t.console)" \
			"$log" "$rc" "$(selftests/run_tests.sh --minimum "$t")" "$out/$k-$t.err"
		programs_ran+=("$k $t: $(programs_reported "$log") of $(selftests/run_tests.sh --programs "$t")")
	done
}

# programs_reported LOG: how many programs a guest suite reported, ok or
# not: its top-level results whose name is one word (the steps have more).
programs_reported() {
	grep -cE '^(not )?ok [0-9]+ [^ ]+( #.*)?$' "$1"
}
programs_ran=()

# GPUCTL_JOBS kernels' guest suites at a time (default 1: each kernel's
# results as soon as its guests are done; more are reported in order when
# all are). On this project's 2-core machine two side by side gained
# nothing: each guest's programs ran 1.7 to 3.5 times slower (TCG guests
# compete for more than the CPUs, 2026-12-03). More cores, more jobs.
jobs=${GPUCTL_JOBS:-1}
pending=()
for k in $kernels; do
	ko=$top/build/$k/gpuctl.ko
	[ -n "${GPUCTL_KO:-}" ] && ko=${GPUCTL_KO//@REL@/$k}
	if [ ! -f "$ko" ] && [ -z "${GPUCTL_KO:-}" ]; then
		for t in $topologies; do
			result fail "$k $t: module missing, guest tests not run"
		done
		continue
	fi
	rm -f "$out/$k"-*.rc
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	echo "# $k: booting ${topologies// /, } (module $ko)"
	guest_suites "$k" "$ko" &
	pending+=("$k")
	if [ "$jobs" -le 1 ]; then
		wait
		report_suites "$k"
		pending=()
	fi
done
wait
for k in "${pending[@]}"; do
	report_suites "$k"
done

# make demo as a newcomer runs it, without a terminal: the tour checks
# every step and fails on the first that goes wrong.
for k in $kernels; do
	step "make demo: the tour on $k, every step checked" "$out/demo-$k.log" \
		env GPUCTL_KERNEL="$k" scripts/demo.sh </dev/null
done

# Boot selftest: real Debian initramfs images with the packaged hook and
# modprobe.d file, booted in QEMU; reserved GPUs must end on vfio-pci.
# One boot per case: every case runs on both kernels, and a second boot of
# the same image (selftests/boot/run.sh's default, GPUCTL_BOOTS=2) found
# nothing the first did not in any run so far, for 30 s a kernel.
boots=${GPUCTL_BOOTS:-1}
[ -n "${GPUCTL_TESTS:-}" ] && boots=0
for k in $kernels; do
	if [ "$boots" = 0 ]; then
		result skip "$k boot: initramfs images (not run: GPUCTL_BOOTS=0 or GPUCTL_TESTS)"
		continue
	fi
	log="$out/$k-boot.log"
	echo "# $k boot: building initramfs images and booting"
	start=$(date +%s)
	selftests/boot/run.sh --kernel "$k" --boots "$boots" \
		>"$log" 2>"$log.err"
	rc=$?
	sed 's/^/    /' "$log"
	[ $rc -eq 0 ] || sed 's/^/# /' "$log.err" | tail -n 30
	stage "$k boot: initramfs images booted (logs in build/boot/$k)" "$log" "$rc" 0 "$log.err"
done

failures_print
echo "1..$n"
# per kernel and topology, the programs reported of those the tree has
for line in "${programs_ran[@]}"; do
	echo "# programs run, $line"
done
narrowed=$(check_narrowed)
[ -z "$narrowed" ] || echo "# narrowed, not the whole suite: $narrowed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
