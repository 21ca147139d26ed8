#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Warns about commit subjects that break the project's rule (README,
# "Contributing"): "prefix: imperative summary", at most 72 characters, the
# prefix one of kmod, tool, selftests, scripts, doc, packaging, debian, ci.
# Checks the commits on the current branch that are not on its upstream,
# or, without an upstream, every commit since this script was added (the
# rule's start: older history is not rewritten). Prints one line per
# offending commit and a count; exits 0 always, as this is a warning.
#
# Usage: scripts/commit-subject.sh [REVISION-RANGE]

set -u -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 0

prefixes='kmod|tool|selftests|scripts|doc|packaging|debian|ci'

git rev-parse --git-dir >/dev/null 2>&1 || exit 0
range=${1:-}
if [ -z "$range" ]; then
	if git rev-parse --verify -q '@{upstream}' >/dev/null 2>&1; then
		range='@{upstream}..HEAD'
	else
		start=$(git log --format=%H --diff-filter=A -- scripts/commit-subject.sh | tail -n1)
		# not committed yet: nothing of the rule's time to check
		[ -n "$start" ] || exit 0
		range="$start^..HEAD"
	fi
fi

bad=0
total=0
while IFS= read -r line; do
	hash=${line%% *}
	subject=${line#* }
	total=$((total + 1))
	why=
	if [ "${#subject}" -gt 72 ]; then
		why="${#subject} characters, more than 72"
	elif ! [[ "$subject" =~ ^($prefixes):\ [^\ ] ]]; then
		why="no 'prefix: ' from $prefixes"
	fi
	[ -n "$why" ] || continue
	echo "warning: commit $hash: $why: $subject"
	bad=$((bad + 1))
done < <(git log --format='%h %s' "$range" 2>/dev/null)
echo "commit subjects: $bad of $total break the rule ($range)"
exit 0
