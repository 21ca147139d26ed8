#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make teeth: how many of the suite's cases notice a broken gpuctl, case by
# case. Boots the newest kernel on topology "full" once per run below and
# runs the whole guest suite (selftests/run_tests.sh), then compares each
# case (a program's stage or sub-test) with the same case of the run of the
# real module:
#   module       the module make check tests (the baseline)
#   no-module    the module never loaded (GPUCTL_SKIP_LOAD=1)
#   numa         alloc-new's first pass takes GPUs off the node asked for
#                (-DGPUCTL_TEST_MUTANT_NUMA, kmod/alloc.c)
#   companion    a rule's companion is left on its host driver
#                (-DGPUCTL_TEST_MUTANT_COMPANION, kmod/reserve.c)
#   dev-attr     device replies drop the iommu-group attribute
#                (-DGPUCTL_TEST_MUTANT_DEV_ATTR, kmod/netlink.c)
# A case that passed with the module and fails in a run is caught by it.
# One that still passes is listed with the reason it may, from
# selftests/teeth-reasons, or as "UNEXPLAINED": a case that passes under a
# mutant that breaks what it claims to check is a bug in the test.
#
# Writes build/teeth/RUN.log (KTAP), build/teeth/RUN.cases (one case per
# line: program, number, result, name) and build/teeth/report.md, which
# selftests/README's table is copied from. Takes about 15 minutes per run
# on two cores: not part of make check.
#
# Settings (environment):
#   GPUCTL_TEETH_RUNS      the runs, default "module no-module numa
#                          companion dev-attr"; a run whose log exists
#                          is not booted again unless GPUCTL_TEETH_FRESH=1
#   GPUCTL_KERNEL          the kernel, default the newest installed

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=build/teeth
mkdir -p "$out"
runs=${GPUCTL_TEETH_RUNS:-module no-module numa companion dev-attr}
k=${GPUCTL_KERNEL:-$(scripts/newest-kernel.sh)}
reasons=selftests/teeth-reasons

scripts/install-deps.sh test || exit 1
scripts/build-for-tests.sh "$k" || exit 1

# mutant_flag RUN: the -D switch that builds RUN's module, "" for none
mutant_flag() {
	case $1 in
	numa) echo GPUCTL_TEST_MUTANT_NUMA ;;
	companion) echo GPUCTL_TEST_MUTANT_COMPANION ;;
	dev-attr) echo GPUCTL_TEST_MUTANT_DEV_ATTR ;;
	*) echo "" ;;
	esac
}

# cases LOG: "PROGRAM<TAB>N<TAB>ok|not ok|skip<TAB>NAME" for each nested
# result, assigned to the program whose top-level result follows them
cases() {
	awk '
	/^    (not )?ok [0-9]+/ {
		line = substr($0, 5)
		res = line ~ /^not ok/ ? "not ok" : "ok"
		sub(/^(not )?ok /, "", line)
		n = line; sub(/ .*/, "", n)
		name = line; sub(/^[0-9]+ /, "", name)
		if (name ~ /# SKIP/) res = "skip"
		sub(/ *# (SKIP|TODO).*/, "", name)
		pend[++np] = n "\t" res "\t" name
		next
	}
	/^(not )?ok [0-9]+ / {
		prog = $0; sub(/^(not )?ok [0-9]+ /, "", prog)
		# a result of the run itself, with no cases of its own
		if (!np) {
			res = $0 ~ /^not ok/ ? "not ok" : "ok"
			if (prog ~ /# SKIP/) res = "skip"
			sub(/ *# .*/, "", prog)
			print "run\t" prog "\t" res "\t" prog
			next
		}
		sub(/ .*/, "", prog)
		for (i = 1; i <= np; i++) print prog "\t" pend[i]
		np = 0
	}' "$1"
}

# reason RUN PROGRAM NAME: why the case may pass in run RUN, from $reasons
# ("RUN<TAB>PROGRAM<TAB>NAME-REGEX<TAB>REASON"; "*" for any run or
# program; the first line that matches wins, and a reason that starts
# with UNEXPLAINED, or none, is counted as unexplained)
reason() {	# RUN PROGRAM NAME
	awk -F '\t' -v run="$1" -v prog="$2" -v name="$3" '
	/^#/ || NF < 4 { next }
	($1 == run || $1 == "*") && ($2 == prog || $2 == "*") && name ~ $3 {
		print $4; found = 1; exit
	}
	END { if (!found) print "UNEXPLAINED" }' "$reasons"
}

for run in $runs; do
	log=$out/$run.log
	if [ -s "$log" ] && [ "${GPUCTL_TEETH_FRESH:-0}" != 1 ]; then
		echo "# $run: kept $log"
	else
		ko=$top/build/$k/gpuctl.ko
		env=()
		flag=$(mutant_flag "$run")
		if [ -n "$flag" ]; then
			GPUCTL_VARIANT=$run scripts/build-module.sh "$k" \
				KCFLAGS="-D$flag" >"$out/$run.build" 2>&1 ||
				{ cat "$out/$run.build"; exit 1; }
			ko=$top/build/variants/$run/$k/gpuctl.ko
		fi
		[ "$run" = no-module ] && env+=(GPUCTL_SKIP_LOAD=1)
		echo "# $run: booting $k, topology full, module $ko"
		start=$SECONDS
		selftests/qemu/run.sh --kernel "$k" --topology full --timeout 3600 \
			-- env GPUCTL_KO="$ko" "${env[@]}" selftests/run_tests.sh full \
			>"$log" 2>"$out/$run.err"
		echo "# $run: exit $? in $((SECONDS - start)) s"
	fi
	cases "$log" >"$out/$run.cases"
done

[ -s "$out/module.cases" ] || { echo "teeth: no baseline run (module)" >&2; exit 1; }
: >"$out/still-pass.tsv.new"
{
	echo "Measured $(date -u +%Y-%m-%d) on $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- kmod selftests || echo ' (with changes)'), kernel $k, topology full."
	echo
	echo "| run | cases that passed with the module | caught | still pass | unexplained |"
	echo "| --- | --- | --- | --- | --- |"
	base=$(awk -F '\t' '$3 == "ok"' "$out/module.cases" | wc -l)
	for run in $runs; do
		[ "$run" = module ] && continue
		caught=0 kept=0 unexplained=0
		while IFS=$'\t' read -r prog n res name; do
			[ "$res" = ok ] || continue
			got=$(awk -F '\t' -v p="$prog" -v n="$n" '$1 == p && $2 == n { print $3; exit }' \
				"$out/$run.cases")
			if [ "$got" = ok ]; then
				kept=$((kept + 1))
				why=$(reason "$run" "$prog" "$name")
				[[ $why == UNEXPLAINED* ]] && unexplained=$((unexplained + 1))
				printf '%s\t%s\t%s %s\t%s\n' "$run" "$prog" "$n" "$name" "$why" \
					>>"$out/still-pass.tsv.new"
			else
				caught=$((caught + 1))
			fi
		done <"$out/module.cases"
		echo "| $run | $base | $caught | $kept | $unexplained |"
	done
	echo
	echo "Cases that still pass, by run and program, with the reason they may:"
	echo
	awk -F '\t' '{ printf "- %s, %s: %s: %s\n", $1, $2, $3, $4 }' "$out/still-pass.tsv.new"
} >"$out/report.md"
mv "$out/still-pass.tsv.new" "$out/still-pass.tsv"
cat "$out/report.md"
