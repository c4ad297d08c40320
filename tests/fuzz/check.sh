#!/usr/bin/env bash
# check.sh - the fuzz run of `make check` (installed as $B/tests/test_fuzz).
#
# Replays every input in tests/fuzz/regress, then fuzzes r4_parse for
# R4_FUZZ_SECONDS (default 5; make check-long: 300) seeded with the inputs of the corpus
# tests/lang.  Any crash, leak or sanitizer report fails; the input that
# caused it is left in tests/fuzz/regress-new/ to be added to regress/.
# Ends with "N passed, M failed" like the unit programs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
bin=build/fuzz/fuzz_parse
if [ ! -x "$bin" ]; then
	echo "skip: fuzz target not built (needs clang with libFuzzer: bash scripts/deps.sh; make fuzz)"
	echo "0 passed, 0 failed"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/r4-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# 1. regressions, each on its own
shopt -s nullglob
for f in tests/fuzz/regress/*; do
	if "$bin" "$f" >"$work/one.log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "regression $f fails again:"
		tail -n 30 "$work/one.log"
	fi
done

# 2. a timed run from the corpus inputs
mkdir -p "$work/seeds" "$work/found"
R4_LANG_SEEDS="$work/seeds" "${R4_BUILD:-build}/tests/test_lang" >/dev/null 2>&1
cp tests/fuzz/regress/* "$work/seeds/" 2>/dev/null
secs=${R4_FUZZ_SECONDS:-5}
echo "fuzzing r4_parse for ${secs}s from $(ls "$work/seeds" | wc -l) seeds"
if "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$work/found/" "$work/found" "$work/seeds" >"$work/run.log" 2>&1; then
	pass=$((pass + 1))
	grep -E '^stat::number_of_executed_units' "$work/run.log"
else
	fail=$((fail + 1))
	mkdir -p tests/fuzz/regress-new
	cp "$work"/found/crash-* "$work"/found/leak-* "$work"/found/timeout-* \
		"$work"/found/oom-* tests/fuzz/regress-new/ 2>/dev/null
	echo "the fuzzer found a problem (inputs in tests/fuzz/regress-new/):"
	tail -n 40 "$work/run.log"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
