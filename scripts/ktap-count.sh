#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Count the leaf test cases of a stage's KTAP (selftests/run_tests.sh, the
# tool's parser table) and print "PASSED FAILED SKIPPED PLAN RESULTS": nested (indented) result lines, or the
# top-level line of a program that reported no cases of its own. A
# top-level failure whose cases all passed (a crash after its last case, a
# non-zero exit, a leak found after it) counts as one more failure. PLAN is
# the top level's plan ("-" when it printed none), RESULTS how many
# top-level results it printed: fewer than PLAN means it stopped early.
#
# Usage: scripts/ktap-count.sh LOG
awk '
/^[ \t]+(not )?ok [0-9]+/ {
	nested++
	if ($0 ~ /^[ \t]+not ok/) { nf++; next }
	if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) ns++; else np++
	next
}
/^1\.\.[0-9]+/ && plan == "" { plan = substr($1, 4) }
/^(not )?ok [0-9]+/ {
	top++
	if (nested == 0) {
		if ($0 ~ /^not ok/) nf++
		else if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) ns++
		else np++
	} else if ($0 ~ /^not ok/ && nf == last_nf) {
		nf++
	}
	nested = 0; last_nf = nf
	next
}
END { printf "%d %d %d %s %d\n", np, nf, ns, plan == "" ? "-" : plan, top }' "$1"
