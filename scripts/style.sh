#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch --strict on every hand-written C file, shellcheck on every
# shell script; and a warning, which does not fail it, for each commit
# subject that breaks the rule (scripts/commit-subject.sh).
# Usage: scripts/style.sh KSRC
#        scripts/style.sh --bash-files   (what shellcheck reads as bash)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

# Every bash file, the sourced libraries (selftests/lib.sh,
# scripts/check-lib.sh) too: a .sh file without a shebang must say what it
# is in a "# shellcheck shell=bash" line, or it is named and printed as a
# path that does not exist, which fails shellcheck.
bash_files() {
	git ls-files '*.sh' .ci/run selftests/qemu/ tools/gpuctl/gpuctl.bash-completion |
		sort -u | while read -r f; do
			[ -f "$f" ] || continue
			if head -n1 "$f" | grep -q -e bash -e '^#!/bin/sh' ||
			   head -n5 "$f" | grep -q '^# shellcheck shell=bash'; then
				echo "$f"
			elif [ "${f%.sh}" != "$f" ]; then
				echo "style.sh: $f: no shebang and no '# shellcheck shell=bash'" >&2
				echo "/nonexistent/$f"
			fi
		done
}

if [ "${1:-}" = --bash-files ]; then
	bash_files
	exit
fi
ksrc=$1
rc=0
# The generated files are left out: they are the generator's output, and any
# rule they trip is noted in Documentation/gpuctl.rst rather than edited.
for f in $(git ls-files '*.c' '*.h' | grep -v -e netlink-gen -e include/uapi/); do
	out=$(perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree --quiet \
		--show-types -f "$f" 2>&1) || { echo "$out"; rc=1; }
done
if ! command -v shellcheck >/dev/null; then
	echo "style.sh: no shellcheck (scripts/install-deps.sh test)" >&2
	rc=1
else
	files=$(bash_files)
	# shellcheck disable=SC2086
	[ -z "$files" ] || shellcheck -x -e SC1091 -s bash $files || rc=1
	# POSIX sh run by initramfs-tools (klibc or busybox sh), not bash.
	sh_files=$(git ls-files packaging/initramfs-tools/ selftests/boot/initramfs/hooks/ \
		selftests/boot/initramfs/scripts/ | while read -r f; do
			[ -f "$f" ] && [ ! -L "$f" ] && echo "$f"
		done)
	# shellcheck disable=SC2086
	[ -z "$sh_files" ] || shellcheck -e SC1091 -s sh $sh_files || rc=1
fi
scripts/commit-subject.sh
exit $rc
