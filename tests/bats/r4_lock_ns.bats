#!/usr/bin/env bats
# r4-check: alone
# A mount where no loop device can be had: a plain fuse mount, with a
# warning, that r4sh still finds.  The test makes its own mount namespace
# (unshare -m), which copies every mount the machine has at that moment;
# while it lives, another program's fuseblk mount is not destroyed by its
# unmount, whose wait then ends early (docs/r4fuse.md, "Unmount").  So
# tests/run.sh runs this suite alone, after the others ("r4-check: alone").

bats_require_minimum_version 1.5.0

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
}

teardown() {
	fuse_teardown
	r4_teardown
}

@test "without a loop device: a plain fuse mount, with a warning; r4sh still finds it" {
	need_cmd unshare
	# (its own mount namespace, where /dev/loop-control is no loop control)
	run unshare -m bash -c '
		mount --bind /dev/null /dev/loop-control || exit 9
		"$0" "$1" "$2" || exit 10
		awk -v m="$2" '\''$5 == m { for (i = 7; $i != "-"; i++); print $(i + 1), $(i + 2) }'\'' /proc/self/mountinfo
		"$3" -c "/bank/alice <- \"1\"" "$1" 2>&1
		fusermount3 -u "$2"
		for _ in $(seq 100); do pgrep -f -- "r4fuse $1 " >/dev/null || break; sleep 0.05; done
		"$4" fsck "$1"' "$R4FUSE" "$IMG" "$MNT" "$R4SH" "$R4"
	assert_success
	assert_line "r4fuse: $IMG: a plain fuse mount (no loop device: Inappropriate ioctl for device): unmount returns before the image is final; wait for r4fuse to exit before using the image"
	assert_line "fuse.r4 $IMG"
	assert_line --partial "r4sh: $IMG: in use by r4fuse (pid "
	assert_line --partial "$IMG: clean, "
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 1
}
