#!/usr/bin/env bats
# r4fuse: inode flags (chattr, lsattr, xfs_io chattr; docs/semantics.md,
# "Inode flags"): kept in the stat data's flags extension as the kernel's
# Reiser4 keeps them, across a remount, clean for both checkers; what an
# immutable or append-only file or directory refuses, to root too, with
# the messages the tools print; who may set them (uid 65534 through
# setpriv); R4L on the image obeys them.  Real mounts (root, /dev/fuse).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd chattr "e2fsprogs not installed"
	need_cmd lsattr "e2fsprogs not installed"
	"$R4SH" -c '/f <- "data"' -c 'mkdir /d' -c '/d/in <- "x"' "$IMG" >/dev/null
}

teardown() {
	fuse_teardown
	r4_teardown
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

@test "chattr: +i, +A, +D and -i; lsattr; kept across a remount in the flags extension" {
	mount_r4
	cd "$MNT"
	run lsattr f
	assert_output '---------------------- f'
	before=$(stat -c %z f)
	chattr +i +A f
	run stat -c %z f	# ctime changed, and the kernel knows it
	refute_output "$before"
	chattr +D d
	run lsattr f
	assert_output '----i--A-------------- f'
	run lsattr -d d
	assert_output '---D------------------ d'
	cd /
	umount_r4
	# the kernel's word: S_IMMUTABLE 8 | S_NOATIME 2; S_DIRSYNC 64
	if command -v debugfs.reiser4 >/dev/null; then
		run debugfs.reiser4 -i /f "$IMG"
		assert_output --partial $'plugin:\t\tsdext_flags'
		assert_output --partial $'flags:\t\t10'
		run debugfs.reiser4 -i /d "$IMG"
		assert_output --partial $'flags:\t\t64'
	fi
	run "$R4" fsck -n "$IMG"
	assert_success
	assert_output --partial 'clean'
	fsck_reiser4 "$IMG"
	mount_r4
	run lsattr "$MNT/f"
	assert_output "----i--A-------------- $MNT/f"
	chattr -i -D "$MNT/f" "$MNT/d"
	run lsattr "$MNT/f"
	assert_output "-------A-------------- $MNT/f"
	run lsattr -d "$MNT/d"
	assert_output "---------------------- $MNT/d"
	echo more >>"$MNT/f"
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "chattr +i: a file refuses every change, to root too" {
	mount_r4
	cd "$MNT"
	exec 5>>f	# (opened before: its writes are refused too)
	chattr +i f
	run bash -c 'echo x >&5'
	assert_failure
	assert_output --partial 'write error: Operation not permitted'
	exec 5>&-
	run truncate -s 0 f
	assert_output "truncate: cannot open 'f' for writing: Operation not permitted"
	run cp /etc/hostname f
	assert_output "cp: cannot create regular file 'f': Operation not permitted"
	run rm -f f
	assert_output "rm: cannot remove 'f': Operation not permitted"
	run chmod 600 f
	assert_output "chmod: changing permissions of 'f': Operation not permitted"
	run chown 1 f
	assert_output "chown: changing ownership of 'f': Operation not permitted"
	run touch f
	assert_output "touch: cannot touch 'f': Operation not permitted"
	run touch -d @0 f
	assert_output "touch: cannot touch 'f': Operation not permitted"
	run mv f g
	assert_output "mv: cannot move 'f' to 'g': Operation not permitted"
	run ln f h
	assert_output "ln: failed to create hard link 'h' => 'f': Operation not permitted"
	if command -v setfattr >/dev/null; then
		run setfattr -n user.a -v 1 f
		assert_output 'setfattr: f: Operation not permitted'
	fi
	run fallocate -l 8192 f
	assert_output 'fallocate: cannot open f: Operation not permitted'
	run cat f	# read as ever
	assert_output data
	chattr -i f
	echo more >>f
	run cat f
	assert_output datamore
	cd /
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "chattr +i with default_permissions: the kernel checks who, the engine the flags" {
	mount_r4 -o default_permissions
	cd "$MNT"
	chattr +i f
	run truncate -s 0 f
	assert_output "truncate: cannot open 'f' for writing: Operation not permitted"
	run rm -f f
	assert_output "rm: cannot remove 'f': Operation not permitted"
	run chmod 600 f
	assert_output "chmod: changing permissions of 'f': Operation not permitted"
	run lsattr f
	assert_output '----i----------------- f'
	chattr -i f
	cd /
	umount_r4
}

@test "chattr +i: a directory has no entry added or removed; its files change" {
	mount_r4
	cd "$MNT"
	chattr +i d
	run touch d/x
	assert_output "touch: cannot touch 'd/x': Operation not permitted"
	run mkdir d/s
	assert_failure
	assert_output --partial 'Operation not permitted'
	run rm d/in
	assert_output "rm: cannot remove 'd/in': Operation not permitted"
	run mv d/in in
	assert_output "mv: cannot move 'd/in' to 'in': Operation not permitted"
	run mv f d/f
	assert_output "mv: cannot move 'f' to 'd/f': Operation not permitted"
	run ln f d/h
	assert_output "ln: failed to create hard link 'd/h' => 'f': Operation not permitted"
	echo y >d/in
	run cat d/in
	assert_output y
	run ls d
	assert_output in
	chattr -i d
	rm d/in
	cd /
	umount_r4
}

@test "chattr +a: written at the end only; a directory's entries added, never removed" {
	mount_r4
	cd "$MNT"
	chattr +a f d
	run lsattr f
	assert_output '-----a---------------- f'
	echo more >>f	# O_APPEND
	run cp /etc/hostname f
	assert_output "cp: cannot create regular file 'f': Operation not permitted"
	run truncate -s 0 f
	assert_output "truncate: cannot open 'f' for writing: Operation not permitted"
	run chmod 600 f
	assert_output "chmod: changing permissions of 'f': Operation not permitted"
	run rm -f f
	assert_output "rm: cannot remove 'f': Operation not permitted"
	run mv f g
	assert_output "mv: cannot move 'f' to 'g': Operation not permitted"
	run cat f
	assert_output datamore
	touch d/new
	mkdir d/sub
	run rm d/new
	assert_output "rm: cannot remove 'd/new': Operation not permitted"
	run rmdir d/sub
	assert_output "rmdir: failed to remove 'd/sub': Operation not permitted"
	run mv d/in in
	assert_output "mv: cannot move 'd/in' to 'in': Operation not permitted"
	chattr -a f d
	rm d/new
	cd /
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "chattr: who may set: the owner, +i and +a root alone; flags r4 cannot keep refused" {
	need_cmd setpriv
	public_mnt
	"$R4SH" -c '/mine <- "m"' -c '/mine/..uid <- "65534"' "$IMG" >/dev/null
	mount_r4 -o allow_other
	run nobody chattr +i "$MNT/mine"
	assert_output "chattr: Operation not permitted while setting flags on $MNT/mine"
	run nobody chattr +a "$MNT/mine"
	assert_output "chattr: Operation not permitted while setting flags on $MNT/mine"
	nobody chattr +A "$MNT/mine"	# its owner's
	run nobody chattr +A "$MNT/f"	# root's
	assert_output "chattr: Operation not permitted while setting flags on $MNT/f"
	run lsattr "$MNT/mine" "$MNT/f"
	assert_output "-------A-------------- $MNT/mine
---------------------- $MNT/f"
	run chattr +d "$MNT/f"
	assert_output "chattr: Operation not supported while setting flags on $MNT/f"
	umount_r4
}

@test "xfs_io chattr and lsattr (FS_IOC_FSGETXATTR, FSSETXATTR): the same flags" {
	need_cmd xfs_io "xfsprogs not installed"
	mount_r4
	cd "$MNT"
	xfs_io -r -c 'chattr +i' f
	run lsattr f
	assert_output '----i----------------- f'
	run xfs_io -r -c lsattr f
	assert_output --regexp '^-*i-* f $'
	xfs_io -r -c 'chattr -i +a +s' f
	run lsattr f
	assert_output '--S--a---------------- f'
	chattr +D d
	xfs_io -r -c 'chattr +A' d	# (DIRSYNC, which xflags cannot say, stays)
	run lsattr -d d
	assert_output '---D---A-------------- d'
	run xfs_io -r -c 'chattr +S' f	# filestream: none in r4
	assert_output 'xfs_io: cannot set flags on f: Operation not supported'
	chattr -a -S f
	cd /
	umount_r4
}

@test "chattr: R4L on the image obeys the flags the mount set" {
	mount_r4
	chattr +i "$MNT/f"
	chattr +a "$MNT/d"
	umount_r4
	run "$R4SH" -c '/f <- "x"' "$IMG"
	assert_failure
	assert_output --partial "error: cannot write '/f': Operation not permitted"
	run "$R4SH" -c 'rm /d/in' "$IMG"
	assert_failure
	assert_output --partial "error: rm: cannot remove '/d/in': Operation not permitted"
	run "$R4SH" -c '/d/new <- "n"' -c '/f' "$IMG"
	assert_success
	assert_output $'n\ndata'
}
