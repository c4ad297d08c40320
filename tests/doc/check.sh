#!/usr/bin/env bash
# tests/doc/check.sh DOC [--bless] - run a document's shell sessions and
# compare what they print with what the document shows.
#
# Every ```console block of DOC is a session: a line "$ CMD" is a command,
# lines "> MORE" right after it continue it (joined by LF), and the lines up
# to the next command or the end of the block are what it must print
# (stdout and stderr together).  All blocks run in order, in one scratch
# directory, with $R4_BUILD first on PATH and the engine's clock fixed
# (R4_TEST_CLOCK), so audit records and times read the same every run.
# A line "<!-- doc-check: same FILE DOCFILE -->" asks that FILE, made in
# the scratch directory, be byte for byte DOCFILE (next to DOC).
#
# Prints one line per command that printed something else, with a diff, and
# ends "N passed, N failed".  --bless rewrites DOC (and the DOCFILEs) with
# what the commands printed: read the diff before you commit it.
set -uo pipefail

doc=$1
bless=${2:-}
docdir=$(cd "$(dirname "$doc")" && pwd)
: "${R4_BUILD:?R4_BUILD must name the build directory}"
case $R4_BUILD in /*) ;; *) R4_BUILD=$PWD/$R4_BUILD ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/r4-doc.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
export PATH="$R4_BUILD:$PATH" R4_TEST_CLOCK=${R4_TEST_CLOCK:-1700000000}
unset R4_AS

pass=0 fail=0
sames=()
out=()			# the document as it should read (for --bless)
cmd="" expect=() in_block=false have_cmd=false collecting=false

# run_cmd: run $cmd in the scratch directory, compare with expect[].
run_cmd() {
	local got want
	got=$(cd "$work" && bash -c "$cmd" 2>&1)
	want=$(printf '%s\n' ${expect[@]+"${expect[@]}"})
	if [ "$got" == "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: \$ ${cmd//$'\n'/$'\n> '}"
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/    /'
	fi
	if [ -n "$got" ]; then
		while IFS= read -r l; do out+=("$l"); done <<<"$got"
	fi
}

flush() {
	if $have_cmd; then run_cmd; fi
	have_cmd=false cmd="" expect=()
}

while IFS= read -r line || [ -n "$line" ]; do
	if ! $in_block; then
		out+=("$line")
		if [ "$line" == '```console' ]; then
			in_block=true
		elif [[ $line =~ ^\<!--\ doc-check:\ same\ ([^ ]+)\ ([^ ]+)\ --\>$ ]]; then
			sames+=("${BASH_REMATCH[1]} ${BASH_REMATCH[2]}")
		fi
		continue
	fi
	if [ "$line" == '```' ]; then
		flush
		in_block=false
		out+=("$line")
	elif [[ $line == '$ '* ]]; then
		flush
		have_cmd=true collecting=true cmd=${line#'$ '}
		out+=("$line")
	elif $collecting && [[ $line == '> '* ]]; then
		cmd+=$'\n'"${line#'> '}"
		out+=("$line")
	else
		collecting=false
		expect+=("$line")
	fi
done <"$doc"
$in_block && { echo "FAIL: $doc: a console block is not closed"; fail=$((fail + 1)); }

for ((i = 0; i < ${#sames[@]}; i++)); do
	read -r made kept <<<"${sames[$i]}"
	if cmp -s "$work/$made" "$docdir/$kept"; then
		pass=$((pass + 1))
	elif [ "$bless" == --bless ] && [ -f "$work/$made" ]; then
		cp "$work/$made" "$docdir/$kept"
		echo "blessed $kept"
	else
		fail=$((fail + 1))
		echo "FAIL: $made (made by the document's commands) differs from $kept"
	fi
done

if [ "$bless" == --bless ] && [ "$fail" -gt 0 ]; then
	printf '%s\n' "${out[@]}" >"$doc"
	echo "blessed $doc: read git diff before committing"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
