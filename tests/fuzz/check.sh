#!/usr/bin/env bash
# check.sh - the fuzz run of `make check` (installed as $B/tests/test_fuzz).
#
# For each libFuzzer target: replays every input of its regression
# directory, then fuzzes it for R4_FUZZ_SECONDS (default 5; make check-long:
# 300) from its seeds.
#   fuzz_parse  r4_parse; regressions tests/fuzz/regress, seeded also with
#               the inputs of the corpus tests/lang
#   fuzz_image  a damaged volume opened, walked, checked and changed
#               (tests/fuzz/fuzz_image.c); regressions tests/fuzz/regress-image
# Any crash, leak, sanitizer report or hang fails; the input that caused it
# is left in tests/fuzz/regress-new/ (with the target's name in front) to
# be added to the target's regression directory.  Ends with "N passed, M
# failed" like the unit programs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/r4-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
pass=0 fail=0 secs=${R4_FUZZ_SECONDS:-5}
shopt -s nullglob

# fuzz NAME REGRESS_DIR MAX_LEN
fuzz() {
	local name=$1 regress=$2 max_len=$3 bin=build/fuzz/$1 f
	if [ ! -x "$bin" ]; then
		echo "skip: $name not built (needs clang with libFuzzer: bash scripts/deps.sh; make fuzz)"
		return
	fi
	# 1. regressions, each on its own
	for f in "$regress"/*; do
		if "$bin" "$f" >"$work/one.log" 2>&1; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "$name: regression $f fails again:"
			tail -n 30 "$work/one.log"
		fi
	done
	# 2. a timed run from the seeds
	rm -rf "$work/found"
	mkdir -p "$work/found" "$work/seeds-$name"
	cp "$regress"/* "$work/seeds-$name/" 2>/dev/null
	echo "fuzzing $name for ${secs}s from $(ls "$work/seeds-$name" | wc -l) seeds"
	if "$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=20 -print_final_stats=1 \
		-artifact_prefix="$work/found/" "$work/found" "$work/seeds-$name" >"$work/run.log" 2>&1; then
		pass=$((pass + 1))
		grep -E '^stat::number_of_executed_units' "$work/run.log"
	else
		fail=$((fail + 1))
		mkdir -p tests/fuzz/regress-new
		for f in "$work"/found/crash-* "$work"/found/leak-* "$work"/found/timeout-* \
			"$work"/found/oom-*; do
			cp "$f" "tests/fuzz/regress-new/$name-${f##*/}"
		done
		echo "$name: the fuzzer found a problem (inputs in tests/fuzz/regress-new/):"
		tail -n 40 "$work/run.log"
	fi
}

mkdir -p "$work/seeds-fuzz_parse"
R4_LANG_SEEDS="$work/seeds-fuzz_parse" "${R4_BUILD:-build}/tests/test_lang" >/dev/null 2>&1
fuzz fuzz_parse tests/fuzz/regress 4096
fuzz fuzz_image tests/fuzz/regress-image 2048
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
