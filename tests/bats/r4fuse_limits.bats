#!/usr/bin/env bats
# r4fuse at the edges of what the format and the kernel allow (issue 22,
# defects 4 to 7): object counts in statfs, long symlink targets, times
# outside the stat data's range, and failures a writer of the control
# file or of an aggregate's text must see at write(2).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

@test "df -i: Used is the object count, Free what new data could hold" {
	mount_r4
	mkdir "$MNT/d"
	touch "$MNT/d/a" "$MNT/d/b"
	ln -s a "$MNT/d/l"
	run stat -f -c '%c %d %a %f' "$MNT"
	assert_success
	read -r files ffree bavail bfree <<<"$output"
	[ "$ffree" -le "$bfree" ]
	[ "$ffree" -eq "$bavail" ]
	# at least "/", d, a, b and l; r4 info counts the same objects
	run df --output=itotal,iused,iavail "$MNT"
	assert_success
	read -r itotal iused ifree <<<"$(tail -n 1 <<<"$output")"
	[ "$iused" -ge 5 ]
	[ "$iused" -eq $((files - ffree)) ]
	[ "$itotal" -eq "$files" ]
	[ "$ifree" -eq "$ffree" ]
	umount_r4
	run "$R4" info "$IMG"
	assert_line "files:         $iused"
}

@test "times outside the stat data's 32-bit unsigned seconds are clamped, not wrapped" {
	mount_r4
	touch "$MNT/late" "$MNT/early" "$MNT/edge"
	touch -d @4294967296 "$MNT/late"
	touch -m -d @-1 "$MNT/early"
	touch -d @4294967295.5 "$MNT/edge"
	run stat -c '%X %Y' "$MNT/late" "$MNT/edge"
	assert_output $'4294967295 4294967295\n4294967295 4294967295'
	run stat -c '%Y' "$MNT/early"
	assert_output 0
	run stat -c '%y' "$MNT/edge"
	assert_output --partial '.500000000'
	umount_r4
	run "$R4SH" -c '/late/..atime' -c '/late/..mtime' -c '/early/..mtime' "$IMG"
	assert_output $'4294967295\n4294967295\n0'
}

@test "symlink targets as long as the kernel's Reiser4 takes: the mount, r4sh, R4L, ..body" {
	# 4096 - 28 (node40 header) - 38 (item header) - 56 (stat data) - 1 (NUL)
	long=$(printf '%3973s' '' | tr ' ' a)
	mount_r4
	ln -s "$long" "$MNT/max"
	run readlink "$MNT/max"
	assert_output "$long"
	run ln -s "${long}b" "$MNT/over"
	assert_failure
	assert_output --partial 'File name too long'
	# R4L through the control file (r4sh on the mount)
	run "$R4SH" -c "/viactl -> \"$long\"" "$MNT"
	assert_success
	run "$R4SH" -c "/viactl2 -> \"${long}b\"" "$MNT"
	assert_failure
	assert_output --partial 'File name too long'
	run readlink "$MNT/viactl"
	assert_output "$long"
	umount_r4
	# r4sh on the image: make, retarget through ..body, refuse one byte more
	run "$R4SH" -c "/img -> \"short\"" -c "/img/..body <- \"$long\"" "$IMG"
	assert_success
	run "$R4SH" -c "/img/..body <- \"${long}b\"" "$IMG"
	assert_failure
	assert_output --partial 'File name too long'
	run "$R4SH" -c "/img2 -> \"${long}b\"" "$IMG"
	assert_failure
	run "$R4SH" -c '/img/..size' -c '/max/..size' -c '/viactl/..size' "$IMG"
	assert_output $'3973\n3973\n3973'
	fsck_reiser4 "$IMG"
}
