#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The harness checked on the host, before any guest boots: make check
# cannot lose a program, be narrowed by the environment without saying so,
# turn a failure into a skip, or leave its own libraries unlinted. Each
# case also shows the check failing on a broken copy, so that a check that
# always passes would be caught here. Prints KTAP.

set -u -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tmp=$(mktemp -d /tmp/gpuctl-harness.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# not n, pass, fail: the subshells below source check-lib.sh, which has them
cases=0 broken=0
case_result() {	# case_result RC DESCRIPTION (RC 0: ok)
	cases=$((cases + 1))
	if [ "$1" = 0 ]; then
		echo "ok $cases $2"
	else
		broken=$((broken + 1))
		echo "not ok $cases $2"
	fi
}

# copy_selftests DIR: the tracked selftests/ files, as a fresh clone has them
copy_selftests() {
	mkdir -p "$1" &&
	git ls-files -z selftests | xargs -0 cp --parents -t "$1"
}

# audit DIR LOG: run_tests.sh --audit of the selftests/ copy under DIR
audit() {
	"$1/selftests/run_tests.sh" --audit >"$2" 2>&1
}

echo "TAP version 13"
echo "1..8"

audit "$top" "$tmp/audit.log"
rc=$?
sed 's/^/# /' "$tmp/audit.log" | grep -E '^# (not ok|1\.\.)'
case_result "$rc" "every program of the tree runs on a topology of make check, or elsewhere with its reason"

# A typo in a topology line would drop the test from every run.
copy_selftests "$tmp/typo" &&
	sed -i 's/^# topology: full$/# topology: ful/' "$tmp/typo/selftests/test_mdev.sh" &&
	! audit "$tmp/typo" "$tmp/typo.log" &&
	grep -q "^not ok [0-9]* test_mdev.sh runs on ful # unknown topology 'ful'" "$tmp/typo.log"
case_result $? "audit: a typo in test_mdev.sh's topology line fails it, naming the test"

# A program that runs nowhere must be listed with where it runs instead.
copy_selftests "$tmp/nowhere" &&
	sed -i '/^test_packages.sh\tmake check-packages/d' "$tmp/nowhere/selftests/run_tests.sh" &&
	! audit "$tmp/nowhere" "$tmp/nowhere.log" &&
	grep -q "^not ok [0-9]* test_packages.sh runs on packages # runs on no topology of make check" \
		"$tmp/nowhere.log"
case_result $? "audit: a program on no topology of make check and not in 'elsewhere' fails it"

# .ci/run runs the whole suite whatever the environment holds: a make of
# our own in PATH shows what make check would have been given.
mkdir -p "$tmp/ci-bin" "$tmp/ci/.ci" &&
	cp .ci/run "$tmp/ci/.ci/run" &&
	printf '#!/bin/sh\nenv | grep "^GPUCTL_" >%s\necho "make $*" >>%s\n' \
		"$tmp/ci.env" "$tmp/ci.env" >"$tmp/ci-bin/make" &&
	chmod +x "$tmp/ci-bin/make" &&
	PATH=$tmp/ci-bin:$PATH GPUCTL_TESTS=test_tool.sh GPUCTL_KERNELS=6.1.0-57-amd64 \
		GPUCTL_KO=/nonexistent GPUCTL_FUZZ_MESSAGES=1 GPUCTL_SKIP_TESTS=fuzz \
		GPUCTL_TOPOLOGIES=noiommu "$tmp/ci/.ci/run" &&
	sed 's/^/# /' "$tmp/ci.env" &&
	[ "$(cat "$tmp/ci.env")" = "make check" ]
case_result $? ".ci/run drops every GPUCTL_ setting before make check"

# A narrowed run says so before its totals; the whole suite says nothing.
(
	# shellcheck source=scripts/check-lib.sh
	source scripts/check-lib.sh
	for v in $narrowing_vars; do unset "$v"; done
	[ -z "$(check_narrowed)" ] || exit 1
	# shellcheck disable=SC2030 # this subshell's own environment
	export GPUCTL_TESTS="test_tool.sh" GPUCTL_KO=/x.ko
	[ "$(check_narrowed)" = "GPUCTL_TESTS=test_tool.sh GPUCTL_KO=/x.ko" ]
)
case_result $? "a narrowed make check names its narrowing settings, the whole suite none"

# A stage's exit status is never a skip, 4 included (gpuctl doctor's
# failed check); only ktap_stage_skip skips.
(
	TMP=$tmp GPUCTL_ROOT=$top
	# shellcheck source=selftests/lib.sh
	source selftests/lib.sh
	# shellcheck disable=SC2317 # called by ktap_run_stage
	four() { return 4; }
	# shellcheck disable=SC2317
	asked() { ktap_stage_skip "no such device"; }
	# shellcheck disable=SC2317
	fine() { return 0; }
	{
		ktap_run_stage "four" four
		ktap_run_stage "asked" asked
		ktap_run_stage "fine" fine
	} >"$tmp/stages.log"
	sed 's/^/# /' "$tmp/stages.log" | grep -E '^# (not )?ok'
	grep -qx 'not ok 1 four' "$tmp/stages.log" &&
		grep -qx 'ok 2 asked # SKIP no such device' "$tmp/stages.log" &&
		grep -qx 'ok 3 fine' "$tmp/stages.log"
)
case_result $? "selftests/lib.sh: a stage that returns 4 fails; ktap_stage_skip skips"

# The libraries every test and make check source are linted like the rest.
scripts/style.sh --bash-files >"$tmp/bash-files" &&
	grep -qx selftests/lib.sh "$tmp/bash-files" &&
	grep -qx scripts/check-lib.sh "$tmp/bash-files" &&
	! grep -q '^/nonexistent/' "$tmp/bash-files"
case_result $? "make style shellchecks every shell file, selftests/lib.sh and scripts/check-lib.sh too"

# The count of programs make check expects per topology comes from the
# tree: one more shell test on full is one more expected.
copy_selftests "$tmp/more" &&
	printf '#!/bin/bash\n# topology: full\n' >"$tmp/more/selftests/test_zz_extra.sh" &&
	full=$(env -u GPUCTL_TESTS -u GPUCTL_SKIP_TESTS selftests/run_tests.sh --programs full) &&
	more=$(env -u GPUCTL_TESTS -u GPUCTL_SKIP_TESTS "$tmp/more/selftests/run_tests.sh" --programs full) &&
	echo "# programs on full: $full, with one more test: $more" &&
	[ "$more" = $((full + 1)) ]
case_result $? "run_tests.sh --programs counts the programs the tree has for a topology"

echo "# $((cases - broken)) of $cases passed"
[ "$broken" -eq 0 ]
