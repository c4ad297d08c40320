#!/usr/bin/env bash
# tests/run.sh - run every test suite and print one closing line.
#
#   B=build/san bash tests/run.sh      (what `make check` runs)
#
# B is the build directory holding the (sanitizer) binaries.  Runs, several
# at a time (R4_CHECK_JOBS), the longest first:
#   - every $B/tests/test_* unit program: each prints a final line
#     "N passed, M failed" and exits non-zero on failure; each line
#     "skip: REASON" it prints counts as one skip;
#   - every tests/bats/*.bats with `bats --tap`, with R4=$B/r4 and
#     R4_BUILD=$B in the environment; one marked "# r4-check: alone" on
#     its second line runs after the others, by itself.
# Each suite gets one line when it ends, with the seconds it took; a
# failing one also shows its output.  A program that crashes, hangs (R4_TEST_TIMEOUT
# seconds, default 900), exits non-zero without reporting a failure, or
# prints no summary line counts as one more failure.  The last line is
# exactly "N passed, N failed" (with ", N skipped" when something skipped);
# exit status 1 if anything failed.  R4_TEST_DISK=1 keeps scratch files
# on $TMPDIR or /tmp instead of tmpfs.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
export R4="$B/r4" R4_BUILD="$B"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# ASan keeps 256 MiB of freed memory from reuse by default; the time it
# spends giving that back (madvise, munmap, and a TLB flush on every core
# for each) was a third of make check's CPU.  32 MiB still catches a use
# after free of anything freed within the last 32 MiB of frees; make
# check-long sets ASAN_OPTIONS= for ASan's own default.
export ASAN_OPTIONS=${ASAN_OPTIONS-quarantine_size_mb=32}
# The bats suites start r4 and r4sh thousands of times, and LeakSanitizer's
# scan at each exit was a third of their CPU: make check looks for leaks in
# the unit programs and in r4fuse run in the foreground (its exit status),
# make check-long (R4_LEAKS=1) in every program.
bats_asan=$ASAN_OPTIONS
[ "${R4_LEAKS:-0}" = 1 ] || bats_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
TIMEOUT=${R4_TEST_TIMEOUT:-900}
# suites run side by side: R4_CHECK_JOBS at a time (default: cores + 1,
# as most wait on the disk or on FUSE part of the time)
JOBS=${R4_CHECK_JOBS:-$(($(nproc) + 1))}

# Logs and every suite's scratch files (TMPDIR) go to tmpfs when there is
# one: the suites copy and fsync images by the thousand, and the disk would
# time that, not r4.  (The path stays short: tests put names under it.)
if [ -w /dev/shm ] && [ -z "${R4_TEST_DISK:-}" ]; then
	tmp=$(mktemp -d /dev/shm/r4-run.XXXXXX) || exit 2
else
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/r4-run.XXXXXX") || exit 2
fi
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scratch" && export TMPDIR=$tmp/scratch

total_pass=0 total_fail=0 total_skip=0
failed_suites=()

# show_output FILE: the output of a failing suite, indented, at most 200 lines.
show_output() {
	local n
	n=$(wc -l <"$1")
	if [ "$n" -gt 200 ]; then
		echo "    ... ($((n - 200)) earlier lines in the output cut)"
		tail -n 200 "$1" | sed 's/^/    | /'
	else
		sed 's/^/    | /' "$1"
	fi
}

# report NAME PASS FAIL SKIP PROBLEM LOG SECONDS
report() {
	local name=$1 p=$2 f=$3 s=$4 problem=$5 log=$6 secs=$7 status=PASS
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
	[ "$f" -gt 0 ] && status=FAIL
	[ "$f" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -gt 0 ] && status=SKIP
	printf '%-4s %-40s %d passed, %d failed' "$status" "$name" "$p" "$f"
	[ "$s" -gt 0 ] && printf ', %d skipped' "$s"
	printf ' (%d s)\n' "$secs"
	if [ "$s" -gt 0 ]; then
		grep -E '^skip: |^ok [0-9]+ .*# skip' "$log" | sed 's/^/    /'
	fi
	if [ "$f" -gt 0 ]; then
		failed_suites+=("$name")
		[ -n "$problem" ] && echo "    $name: $problem"
		if [ "${name#bats/}" != "$name" ]; then
			# TAP: keep what failing tests printed, not the passing ones.
			grep -v -E '^(ok [0-9]+ |1\.\.[0-9]+$)' "$log" >"$log.failed"
			show_output "$log.failed"
		else
			show_output "$log"
		fi
	fi
}

# describe_rc RC: words for an abnormal exit status.
describe_rc() {
	if [ "$1" -eq 124 ]; then echo "timed out after ${TIMEOUT}s"
	elif [ "$1" -gt 128 ]; then echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null || echo '?'))"
	else echo "exit status $1"
	fi
}

# --- the suites ------------------------------------------------------------
# unit programs first, then bats suites; names like unit/test_fs, bats/x.bats
suites=()
for prog in "$B"/tests/test_*; do
	[ -f "$prog" ] && [ -x "$prog" ] && suites+=("unit/${prog##*/}")
done
[ ${#suites[@]} -eq 0 ] && echo "note: no unit programs in $B/tests (run make SAN=1 unit first?)"
nbats=0
for f in tests/bats/*.bats; do
	[ -f "$f" ] && nbats=$((nbats + 1))
done
if [ "$nbats" -gt 0 ] && ! command -v bats >/dev/null 2>&1; then
	echo "FAIL bats not installed: $nbats suites not run (bash scripts/deps.sh)"
	total_fail=$((total_fail + nbats))
	failed_suites+=(bats)
else
	for f in tests/bats/*.bats; do
		[ -f "$f" ] && suites+=("bats/${f##*/}")
	done
fi

# run_suite NAME: run it (output in $tmp/NAME.log), then write
# "PASS FAIL SKIP SECONDS PROBLEM" to $tmp/NAME.res.
run_suite() {
	local name=$1 log=$tmp/${1//\//_}.log start=$SECONDS rc p f s problem= summary plan
	if [ "${name#unit/}" != "$name" ]; then
		# (the subshell keeps bash's "Segmentation fault" notice off our output)
		( timeout --kill-after=10 "$TIMEOUT" "$B/tests/${name#unit/}" >"$log" 2>&1 </dev/null ) 2>/dev/null
		rc=$?
		summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
		s=$(grep -c '^skip: ' "$log")
		if [ -z "$summary" ]; then
			p=0 f=1 problem="no summary line ($(describe_rc $rc))"
		else
			p=${summary%% passed*}
			f=${summary#*passed, } f=${f%% failed*}
			if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
				f=1 problem="reported no failure but $(describe_rc $rc)"
			elif [ $rc -eq 0 ] && [ "$f" -ne 0 ]; then
				problem="reported $f failures but exit status 0"
			fi
		fi
	else
		( ASAN_OPTIONS=$bats_asan timeout --kill-after=10 "$TIMEOUT" \
			bats --tap "tests/bats/${name#bats/}" >"$log" 2>&1 </dev/null ) 2>/dev/null
		rc=$?
		s=$(grep -c -E '^ok [0-9]+ .*# skip' "$log")
		p=$(grep -E '^ok [0-9]+' "$log" | grep -c -v -E '# skip')
		f=$(grep -c -E '^not ok [0-9]+' "$log")
		plan=$(grep -E '^1\.\.[0-9]+$' "$log" | head -n 1)
		if [ -z "$plan" ]; then
			f=$((f + 1)) problem="no TAP plan ($(describe_rc $rc))"
		elif [ $((p + f + s)) -lt "${plan#1..}" ]; then
			problem="ran $((p + f + s)) of ${plan#1..} tests ($(describe_rc $rc))" f=$((f + 1))
		elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1 problem="bats reported no failure but $(describe_rc $rc)"
		fi
	fi
	echo "$p $f $s $((SECONDS - start)) $problem" >"$log.res"
}

# The longest suites start first, by the seconds each took last time
# ($B/tests/.seconds), or on a first run (a fresh clone, as CI's) by
# tests/seconds, the times of a make check on a 2-core machine; a suite
# neither names starts last.  (Alphabetical order left test_fs, 30 s,
# among the last, and the run 20 s longer.)
times=$B/tests/.seconds
[ -f "$times" ] || times=tests/seconds
order=()
mapfile -t order < <(for n in ${suites[@]+"${suites[@]}"}; do
	echo "$(awk -v n="$n" '$2 == n { print $1 }' "$times" | tail -n 1) $n"
done | sort -s -k1,1nr | awk '{ print $NF }')

# Run JOBS suites at a time; report each as it ends.
declare -A running=()
new_times=$tmp/seconds
: >"$new_times"
reap() {
	local pid name p f s secs problem
	wait -n -p pid
	name=${running[$pid]}
	unset "running[$pid]"
	read -r p f s secs problem <"$tmp/${name//\//_}.log.res"
	echo "$secs $name" >>"$new_times"
	report "$name" "$p" "$f" "$s" "$problem" "$tmp/${name//\//_}.log" "$secs"
}
# A bats suite whose second line is "# r4-check: alone" runs after all the
# others, by itself (what it does would disturb suites beside it).
alone=()
for name in ${order[@]+"${order[@]}"}; do
	if [ "${name#bats/}" != "$name" ] &&
	   sed -n 2p "tests/bats/${name#bats/}" | grep -qx '# r4-check: alone'; then
		alone+=("$name")
		continue
	fi
	while [ ${#running[@]} -ge "$JOBS" ]; do reap; done
	run_suite "$name" &
	running[$!]=$name
done
while [ ${#running[@]} -gt 0 ]; do reap; done
for name in ${alone[@]+"${alone[@]}"}; do
	run_suite "$name" &
	running[$!]=$name
	reap
done
mkdir -p "$B/tests" && cp "$new_times" "$times" 2>/dev/null

# --- summary ---------------------------------------------------------------
nsuites=${#suites[@]}
if [ ${#failed_suites[@]} -gt 0 ]; then
	echo "suites: $nsuites run in $SECONDS s, ${#failed_suites[@]} failed: ${failed_suites[*]}"
else
	echo "suites: $nsuites run, all passed, in $SECONDS s"
fi
line="$total_pass passed, $total_fail failed"
[ "$total_skip" -gt 0 ] && line="$line, $total_skip skipped"
echo "$line"
[ "$total_fail" -eq 0 ]
