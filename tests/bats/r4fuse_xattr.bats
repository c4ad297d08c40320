#!/usr/bin/env bats
# r4fuse: changes the kernel did not make (a control-file command, a
# pseudo file written, an extended attribute set) and the kernel's caches.
# Real mounts (root, /dev/fuse).  A step that could hang the mount runs
# under fuse_within, which aborts the FUSE connection (fusectl) instead of
# hanging the suite, and fails.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	"$R4SH" -c 'mkdir /d' -c 'mkdir /d/sub' -c '/d/(a <- "1", b <- "22")' \
		-c '/d/sub/c <- "333"' "$IMG" >/dev/null
}

teardown() {
	fuse_teardown
	r4_teardown
}

# known: the kernel looks up every entry of the tree, with attributes.
known() {
	ls -lR "$MNT/d" >/dev/null
}

@test "a control-file command, a pseudo file or an xattr written never hangs the mount" {
	need_fusectl
	need_cmd setfattr "attr not installed"
	for opts in "" "-s"; do
		# (kept for long: what changes below is dropped, not timed out)
		mount_r4 $opts -o attr_timeout=600,entry_timeout=600

		known	# the control file: a file's data, a directory's mode
		cat "$MNT/d/a" >/dev/null
		fuse_within 30 sh -c "echo '/d/a <- \"9\"' >'$MNT/..reiser4'"
		run cat "$MNT/d/a"
		assert_output 9
		known
		fuse_within 30 sh -c "echo '/d/..mode <- \"0750\"' >'$MNT/..reiser4'"
		run stat -c %a "$MNT/d"
		assert_output 750

		known	# a pseudo file: a directory's by name, a file's in the meta view
		fuse_within 30 sh -c "echo 0700 >'$MNT/d/..mode'"
		run stat -c %a "$MNT/d"
		assert_output 700
		known
		fuse_within 30 sh -c "echo 0600 >'$MNT/..meta/d/a/..mode'"
		run stat -c %a "$MNT/d/a"
		assert_output 600

		known	# an xattr: directories with known entries, a file
		fuse_within 30 setfattr -n user.r4.mode -v 0711 "$MNT/d"
		run stat -c %a "$MNT/d"
		assert_output 711
		known
		fuse_within 30 setfattr -n user.r4.mode -v 0705 "$MNT/d/sub"
		run stat -c %a "$MNT/d/sub"
		assert_output 705
		known
		fuse_within 30 setfattr -n user.r4.mode -v 0640 "$MNT/d/a"
		run stat -c %a "$MNT/d/a"
		assert_output 640
		run ls "$MNT/d"
		assert_output $'a\nb\nsub'

		umount_r4
	done
}

@test "names a control-file command changes are dropped shortly after, whatever entry_timeout" {
	need_fusectl
	mount_r4 -o attr_timeout=600,entry_timeout=600
	known
	fuse_within 30 sh -c "echo '/d/a/..name <- \"z\"' >'$MNT/..reiser4'"
	# the invalidation thread drops the old name right after the reply:
	# wait for it, 5 s at most
	for _ in $(seq 100); do
		[ -e "$MNT/d/a" ] || break
		sleep 0.05
	done
	assert_not_exists "$MNT/d/a"
	run ls "$MNT/d"
	assert_output $'b\nsub\nz'
	run cat "$MNT/d/z"
	assert_output 1
}

@test "tar --xattrs -x into the mount sets attributes of directories it filled, without a hang" {
	need_fusectl
	need_cmd tar
	mount_r4
	known
	# (r4 attributes a tool may replay: the mode; directories get theirs
	# after their entries)
	fuse_within 30 tar --xattrs --xattrs-include='user.r4.mode' -C "$MNT" -cf "$T/d.tar" d
	mkdir "$MNT/x"
	fuse_within 30 tar --xattrs --xattrs-include='user.r4.mode' -C "$MNT/x" -xf "$T/d.tar"
	run diff -r "$MNT/d" "$MNT/x/d"
	assert_success
	run bash -c "cd '$MNT/x' && find d | sort | xargs stat -c '%n %a %s'"
	assert_output "$(cd "$MNT" && find d | sort | xargs stat -c '%n %a %s')"
}
