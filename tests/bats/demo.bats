#!/usr/bin/env bats
# The README's first command, scripts/demo.sh, as a new user runs it (not
# on a terminal: no shell at the end), several times in a row: every run
# must succeed and print what the README promises.  R4_DEMO_RUNS runs
# (3 in make check, 20 in make check-long): it once failed one run in four
# (SIGPIPE under pipefail).

setup() {
	load helper
	r4_setup
}

teardown() {
	r4_teardown
}

@test "scripts/demo.sh: ${R4_DEMO_RUNS:-3} runs in a row, each complete" {
	local repo runs=${R4_DEMO_RUNS:-3}
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	for i in $(seq "$runs"); do
		run bash "$repo/scripts/demo.sh" "$T/demo.img" </dev/null
		if [ "$status" -ne 0 ]; then
			echo "run $i of $runs failed (exit $status)" >&3
		fi
		assert_success
		# what the README promises: the files in, one read back, the
		# info, the bank example, fsck.reiser4's verdict, the hint
		assert_line --regexp '^-0644 +1 +0 +0 +[0-9]+ aggr\.c$'
		assert_line ' * db.h - the open image: geometry, super block state, allocator, node'
		assert_line 'label:         r4demo'
		assert_line 'alice 60, bob 90'
		assert_line 'fsck.reiser4: FS is consistent.'
		assert_line --index $((${#lines[@]} - 1)) \
			"demo: open the shell on the image with: build/r4sh $T/demo.img"
	done
}
