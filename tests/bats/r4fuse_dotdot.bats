#!/usr/bin/env bats
# Names that start with ".." (issue 22, defect 1): real entries come first
# (docs/semantics.md, "Names").  A real "..x" is listed, looked up, made,
# renamed and removed like any name; a pseudo name ("..mode") names the
# pseudo file only where no entry has it, and always in the meta view.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

@test "on the mount: ..foo is made, listed, stat'ed, renamed and removed like any name" {
	mount_r4
	mkdir "$MNT/d"
	touch "$MNT/d/..foo"
	run ls -A "$MNT/d"
	assert_output '..foo'
	run stat -c '%F %a' "$MNT/d/..foo"
	assert_success
	assert_output 'regular empty file 644'
	echo hi >"$MNT/d/..foo"
	mv "$MNT/d/..foo" "$MNT/d/..bar"
	run ls -A "$MNT/d"
	assert_output '..bar'
	mv "$MNT/d/..bar" "$MNT/d/plain"
	mv "$MNT/d/plain" "$MNT/..top"
	run cat "$MNT/..top"
	assert_output hi
	mkdir "$MNT/d/..sub"
	run ls -A "$MNT/d"
	assert_output '..sub'
	run rmdir "$MNT/d"
	assert_failure
	rmdir "$MNT/d/..sub"
	rm "$MNT/..top"
	rmdir "$MNT/d"
	umount_r4
	run "$R4" ls "$IMG" /
	refute_output --partial '..top'
}

@test "a pseudo name resolves only where no entry has it; the meta view still reaches it" {
	mount_r4
	mkdir "$MNT/d"
	chmod 0750 "$MNT/d"
	run cat "$MNT/d/..mode"
	assert_output 0750
	run stat "$MNT/d/..nosuch"
	assert_failure
	assert_output --partial 'No such file'
	# a real ..mode (made by rename: the name looks taken) hides the pseudo file
	echo real >"$MNT/f"
	mv "$MNT/f" "$MNT/d/..mode"
	run cat "$MNT/d/..mode"
	assert_output real
	run ls -A "$MNT/d"
	assert_output '..mode'
	run cat "$MNT/..meta/d/..mode"
	assert_output 0750
	rm "$MNT/d/..mode"
	run cat "$MNT/d/..mode"
	assert_output 0750
	# the control file and the meta view keep their names in the root
	run mkdir "$MNT/..meta"
	assert_failure
	run ls -A "$MNT"
	refute_output --partial '..meta'
	refute_output --partial '..reiser4'
	refute_output --partial '..r4'
	umount_r4
}

@test "r4 import of a host tree with ..x: r4 ls shows it, the mount reaches it" {
	mkdir -p "$T/src/sub"
	echo one >"$T/src/..x"
	echo two >"$T/src/sub/..y"
	"$R4" import "$IMG" "$T/src" >/dev/null
	run "$R4" ls "$IMG" /
	assert_success
	assert_line --regexp ' \.\.x$'
	run "$R4" ls "$IMG" /sub
	assert_line --regexp ' \.\.y$'
	run "$R4" cat "$IMG" /sub/..y
	assert_output two
	mount_r4
	run cat "$MNT/..x" "$MNT/sub/..y"
	assert_output $'one\ntwo'
	run ls -A "$MNT/sub"
	assert_output '..y'
	umount_r4
}
