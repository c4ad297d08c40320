#!/usr/bin/env bats
# The image's lock and the end of a mount (issue 21), on real mounts made
# the way users make them: `r4fuse IMG MNT` in the background, no -f.
#  - one writer per image, in every program: a second r4fuse, r4 import,
#    r4 run, r4 fsck -y, r4 mkfs are refused while a mount holds the
#    image, and say who holds it (program, pid, mount point);
#  - r4 mkfs asks for -f before it overwrites a Reiser4 volume;
#  - r4 fsck on an image in use: exit 8, or with -n a warning and a check;
#  - r4sh on a mounted image works through the mount.
# Teardown unmounts everything under $T, aborting a hung connection.

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

# fusermount3 -u, then wait for the daemon: a fuse mount is gone before
# r4fuse has committed and closed the image.
unmount_wait() {
	fusermount3 -u "$MNT"
	for _ in $(seq 100); do
		r4fuse_pids >/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# The words every program uses for the image held by the mount at $MNT.
held_by_mount() {
	local pid
	pid=$(r4fuse_pids)
	[ "$(wc -w <<<"$pid")" = 1 ] || { echo "r4fuse processes of $IMG: '$pid'" >&2; return 1; }
	echo "in use by r4fuse (pid $pid), mounted at $MNT"
}

@test "two background mounts of one image: the second is refused and names the first" {
	mount_r4_bg
	held=$(held_by_mount)
	mkdir "$T/m2"
	run "$R4FUSE" "$IMG" "$T/m2"
	assert_failure 1
	assert_output "r4fuse: $IMG: $held"
	run mountpoint -q "$T/m2"
	assert_failure
	# the daemon, not the process that forked it, holds the image: it still serves
	echo new >"$MNT/bank/carol"
	run cat "$MNT/bank/carol"
	assert_output new
	unmount_wait
	run "$R4SH" -c 'cat /bank/carol' "$IMG"
	assert_success
	assert_output new
}

@test "r4 import, r4 run, r4 fsck -y, r4 mkfs on a mounted image: refused, naming the holder" {
	mount_r4_bg
	held=$(held_by_mount)
	mkdir -p "$T/src" && echo s >"$T/src/f"
	run "$R4" import "$IMG" "$T/src" /imp
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" run -c '/bank/alice <- "0"' "$IMG"
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" fsck -y "$IMG"
	assert_failure 8
	assert_output "r4: $IMG: $held"
	run "$R4" fsck --fix "$IMG"
	assert_failure 8
	run "$R4" mkfs -f "$IMG" 64M
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" mkfs "$IMG" 64M
	assert_failure 1
	assert_output "r4: $IMG: $held"
	# nothing of it reached the image
	run cat "$MNT/bank/alice"
	assert_output 100
	run ls "$MNT"
	assert_output bank
	unmount_wait
	run "$R4" ls "$IMG" /bank
	assert_success
	assert_line --partial alice
}

@test "r4 mkfs refuses to overwrite a Reiser4 volume without -f" {
	run "$R4" mkfs "$IMG" 32M
	assert_failure 1
	assert_output "r4: $IMG: holds a Reiser4 volume already; -f (--force) overwrites it"
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 100
	# one of mkfs.reiser4's too
	need_cmd mkfs.reiser4
	mkfs_reiser4 "$T/p.img" 32M
	run "$R4" mkfs "$T/p.img" 32M
	assert_failure 1
	assert_output --partial 'holds a Reiser4 volume already'
	run "$R4" mkfs --force "$T/p.img" 32M
	assert_success
	run "$R4" mkfs -f "$IMG" 32M
	assert_success
	run "$R4" ls "$IMG" /
	assert_success
	refute_output --partial bank
	# anything else is no volume: made without asking
	truncate -s 16M "$T/zero.img"
	run "$R4" mkfs "$T/zero.img" 16M
	assert_success
}

@test "r4 fsck on a mounted image: exit 8 with the reason; -n warns and checks" {
	mount_r4_bg
	held=$(held_by_mount)
	run --separate-stderr "$R4" fsck "$IMG"
	assert_failure 8
	assert_output ''
	[ "$stderr" = "r4: $IMG: $held; not checked: -n checks it anyway, read-only" ]
	run --separate-stderr "$R4" fsck -n "$IMG"
	assert_success
	assert_output --partial "$IMG: clean"
	[ "$stderr" = "r4: $IMG: $held; checking it anyway, read-only: it can change while it is read, so problems may show that are not there" ]
	unmount_wait
	run --separate-stderr "$R4" fsck "$IMG"
	assert_success
	[ -z "$stderr" ]
}

@test "r4sh -c on a background mount works through it; --read-only opens the image beside it" {
	mount_r4_bg
	held=$(held_by_mount)
	run --separate-stderr "$R4SH" -c '/bank/alice <- "70"' -c 'ls /bank' "$IMG"
	assert_success
	assert_output - <<OUT
70
alice
bob
OUT
	[ "$stderr" = "r4sh: $IMG: $held: working through the mount" ]
	# through the mount, so the mount sees it at once
	run cat "$MNT/bank/alice"
	assert_output 70
	# the image itself, read beside the mount, holds what was committed
	echo fsynced >"$MNT/bank/dave" && sync "$MNT/bank/dave"
	run "$R4SH" --read-only -c 'cat /bank/dave' "$IMG"
	assert_success
	assert_output fsynced
	run "$R4SH" --read-only -c '/bank/x <- "1"' "$IMG"
	assert_failure
	unmount_wait
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 70
}
