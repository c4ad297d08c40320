#!/usr/bin/env bats
# examples/*.r4: each runs on a fresh image, prints exactly its golden
# examples/NAME.out (values and diagnostics), and leaves an image that
# fsck.reiser4 calls consistent.

setup() { load helper; r4_setup; }
teardown() { r4_teardown; }

run_example() {
	local ex=$1 repo
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	"$R4" mkfs "$T/ex.img" 32M >/dev/null
	# the golden output names the script as examples/NAME.r4
	cd "$repo"
	run "$R4_BUILD/r4sh" -f "examples/$ex.r4" "$T/ex.img"
	assert_success
	assert_output "$(cat "examples/$ex.out")"
	fsck_reiser4 "$T/ex.img"
}

@test "examples/bank.r4: accounts, a guarded transfer, a refused one, a caught failure" {
	run_example bank
}

@test "examples/tour.r4: pseudo files, windows, result children, named results, explain" {
	run_example tour
}

@test "examples/passwd.r4: an aggregate from text, per-field rules, a denied write, a permitted one" {
	run_example passwd
}

@test "examples/TUTORIAL.md: every command prints what the page shows, the tree picture is current" {
	need_cmd dot
	cd "$BATS_TEST_DIRNAME/../.."
	run bash tests/doc/check.sh examples/TUTORIAL.md
	assert_success
	assert_output --regexp '^[0-9]+ passed, 0 failed$'
}

@test "docs/language.md: every example of the language reference prints what the page shows" {
	cd "$BATS_TEST_DIRNAME/../.."
	run bash tests/doc/check.sh docs/language.md
	assert_success
	assert_output --regexp '^[0-9]+ passed, 0 failed$'
}
