# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What make check, make check-debug and make check-packages share: the
# test kernels and the TAP results they count. Sourced by those scripts.

# newest_of SERIES: the newest installed Debian kernel of SERIES (6.1, 6.12)
newest_of() {
	local f

	for f in /boot/vmlinuz-"$1".*-amd64; do
		[ -e "$f" ] && echo "${f#/boot/vmlinuz-}"
	done | sort -V | tail -n1
}

# The kernels to test, on one line: GPUCTL_KERNELS, else the newest 6.1
# and the newest 6.12
check_kernels() {
	local k=${GPUCTL_KERNELS:-$(newest_of 6.1; newest_of 6.12)}

	echo "${k//$'\n'/ }"
}

pass=0 fail=0 skip=0 n=0

result() {	# result ok|fail|skip DESCRIPTION
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $n $2" ;;
	esac
}
