#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The command grammar is written down in more places than the parser's
# tables: the help, the man page and the bash completion. This holds each
# to what the parser accepts, which tests/test-grammar prints from the
# tables the parser dispatches on (after checking that it does):
#
#   gpuctl help, gpuctl OBJECT help    the built binary's output
#   gpuctl.8 SYNOPSIS                  its OBJECT list and usage lines
#   gpuctl.8 command sections          its ".SS gpuctl OBJECT COMMAND"
#   bash completion                    the words it offers after "gpuctl "
#                                      and after "gpuctl OBJECT "
#
# Each must name every object (in its object list, where it has one) and
# every command, or for an object without commands give its usage; and
# none may name an object or a command the parser refuses. The man page is
# read as groff renders it, the completion as bash runs it.
#
# Prints TAP: per source, one case for each object and one for what it
# names that the parser refuses. Exits 1 when a case failed.
#
# Usage: tests/check-grammar.sh (gpuctl and tests/test-grammar built:
#        make check-grammar)
# Environment: GPUCTL_MAN, GPUCTL_COMPLETION check other copies of the
#              two files.

set -u -o pipefail

dir=$(cd "$(dirname "$0")/.." && pwd)
gpuctl=$dir/gpuctl
man=${GPUCTL_MAN:-$dir/gpuctl.8}
completion=${GPUCTL_COMPLETION:-$dir/gpuctl.bash-completion}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# the completion offers file names for some words: none, here
mkdir "$tmp/empty" || exit 1

n=0 failed=0

result() {	# result STATUS DESCRIPTION: one TAP case, 0 passes
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

bail() {	# bail MESSAGE: nothing to check against; no plan, exit 1
	echo "Bail out! $1"
	exit 1
}

# What a source names is written as records, one a line:
#   list OBJECT        OBJECT is in the source's list of objects
#   usage OBJECT WORD  a usage of OBJECT, WORD its next word ("-": none)

# list_records: the words of the "OBJECT := { a | b ... }" block on stdin
list_records() {
	awk '/OBJECT := \{/ { on = 1; sub(/.*OBJECT := \{/, "") }
	on {
		end = /\}/
		gsub(/[{}|]/, " ")
		for (i = 1; i <= NF; i++)
			print "list", $i
		if (end)
			on = 0
	}'
}

# usage_records [OBJECT]: the "gpuctl [ -j ] OBJECT WORD ..." lines on
# stdin, of OBJECT only when it is given
usage_records() {
	awk -v only="${1:-}" '{
		sub(/^Usage:/, "")
		if ($1 != "gpuctl")
			next
		i = 2
		if ($2 == "[" && $3 == "-j" && $4 == "]")
			i = 5
		if (i > NF || (only != "" && $i != only))
			next
		print "usage", $i, i < NF ? $(i + 1) : "-"
	}'
}

help_records() {
	local o

	"$gpuctl" help | list_records || return 1
	for o in "${objects[@]}"; do
		"$gpuctl" "$o" help | usage_records "$o" || return 1
	done
}

# The man page as groff renders it: wide lines, so that no usage wraps
man_render() {
	groff -man -Tascii -P-cbou -rLL=250n -rHY=0 "$man" >"$tmp/man.txt" \
		2>"$tmp/groff.err" || { cat "$tmp/groff.err" >&2; return 1; }
}

synopsis_records() {
	man_render || return 1
	awk '/^SYNOPSIS$/ { on = 1; next } /^[A-Z]/ { on = 0 } on' \
		"$tmp/man.txt" >"$tmp/synopsis.txt"
	list_records <"$tmp/synopsis.txt" &&
		usage_records <"$tmp/synopsis.txt"
}

# The subsection headings, which groff indents by three spaces
sections_records() {
	man_render || return 1
	grep -E '^   [^ ]' "$tmp/man.txt" | usage_records
}

# comp_offers WORDS...: what completing "gpuctl WORDS... " offers
comp_offers() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	(cd "$tmp/empty" && bash --norc --noprofile -c '
		source "$0" || exit 1
		COMP_WORDS=(gpuctl "$@" "")
		COMP_CWORD=$(($# + 1))
		_gpuctl || exit 1
		printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$@")
}

completion_records() {
	local o

	comp_offers | sed 's/^/list /' || return 1
	for o in "${objects[@]}"; do
		comp_offers "$o" | sed "s/^/usage $o /" || return 1
	done
}

# missing RECORDS HAS_LIST OBJECT: what the records leave out of OBJECT,
# as TAP comments
missing() {
	local rec=$1 has_list=$2 o=$3 c

	[ "$has_list" = 1 ] && ! grep -qx "list $o" "$rec" &&
		echo "# missing: object $o"
	[ -z "${cmds[$o]}" ] && ! grep -q "^usage $o " "$rec" &&
		echo "# missing: usage of $o"
	for c in ${cmds[$o]}; do
		grep -qx "usage $o $c" "$rec" || echo "# missing: command $o $c"
	done
	return 0
}

# unknown RECORDS: the objects and commands they name that the parser
# refuses, as TAP comments. Only keywords count ("[", "UUID" and "--metrics" are not), and
# an object without commands takes arguments, not commands.
unknown() {
	awk -v grammar="$tmp/grammar" '
	BEGIN {
		while ((getline line < grammar) > 0) {
			k = split(line, w, " ")
			obj[w[1]] = k - 1
			for (i = 2; i <= k; i++)
				cmd[w[1] " " w[i]] = 1
		}
	}
	function keyword(s) { return s ~ /^[a-z][a-z0-9-]*$/ && s != "help" }
	keyword($2) && !($2 in obj) { print "# not accepted: object " $2; next }
	$1 == "usage" && obj[$2] && keyword($3) && !(($2 " " $3) in cmd) {
		print "# not accepted: command " $2 " " $3
	}' "$1" | sort -u
}

# check_source NAME HAS_LIST RECORDS-FUNCTION: its cases
check_source() {
	local name=$1 has_list=$2 rec=$tmp/records o what gaps extra

	if ! "$3" >"$rec"; then
		result 1 "$name: could be read"
		return
	fi
	for o in "${objects[@]}"; do
		what="$o and its usage"
		[ -n "${cmds[$o]}" ] && what="$o and its commands ${cmds[$o]}"
		gaps=$(missing "$rec" "$has_list" "$o")
		result "$([ -z "$gaps" ]; echo $?)" "$name names $what"
		[ -z "$gaps" ] || echo "$gaps"
	done
	extra=$(unknown "$rec")
	result "$([ -z "$extra" ]; echo $?)" \
		"$name names no object or command the parser refuses"
	[ -z "$extra" ] || echo "$extra"
}

echo "TAP version 13"
for f in "$gpuctl" "$dir/tests/test-grammar"; do
	[ -x "$f" ] || bail "$f is not built (make -C tools/gpuctl check-grammar)"
done
command -v groff >/dev/null || bail "no groff to render $man"

"$dir/tests/test-grammar" >"$tmp/grammar"
rc=$?
sed 's/^/# grammar: /' "$tmp/grammar"
result "$rc" "the parser accepts the objects and commands of its tables"
if [ "$rc" != 0 ] || [ ! -s "$tmp/grammar" ]; then
	bail "no grammar to check against"
fi

objects=()
declare -A cmds
while read -r o rest; do
	objects+=("$o")
	cmds[$o]=$rest
done <"$tmp/grammar"

check_source "gpuctl help" 1 help_records
check_source "gpuctl.8 SYNOPSIS" 1 synopsis_records
check_source "gpuctl.8 command sections" 0 sections_records
check_source "bash completion" 1 completion_records

echo "1..$n"
echo "# $failed of $n failed"
[ "$failed" = 0 ]
