#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Count the leaf test cases of a guest's KTAP (selftests/run_tests.sh) and
# print "PASSED FAILED SKIPPED": nested (indented) result lines, or the
# top-level line of a program that reported no cases of its own. A
# top-level failure whose cases all passed (a crash after its last case, a
# non-zero exit, a leak found after it) counts as one more failure.
#
# Usage: scripts/ktap-count.sh LOG
awk '
/^[ \t]+(not )?ok [0-9]+/ {
	nested++
	if ($0 ~ /^[ \t]+not ok/) { nf++; next }
	if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) ns++; else np++
	next
}
/^(not )?ok [0-9]+/ {
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
END { printf "%d %d %d\n", np, nf, ns }' "$1"
