#!/usr/bin/env bats
# r4fuse: changes the kernel did not make (a control-file command, a
# pseudo file written, an extended attribute set) and the kernel's caches;
# the user.r4.* attributes, and the generic tools that copy attributes
# (cp -a, rsync -aX, tar --xattrs), which do not copy them; attributes
# users store: r4fuse_xattrs_stored.bats.  Real mounts (root, /dev/fuse).
# A step that could hang the mount runs under fuse_within, which aborts
# the FUSE connection (fusectl) instead of hanging the suite, and fails.

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

# tree DIR: what a copy keeps of each entry under DIR (DIR itself is .):
# type, mode, owner, mtime in seconds, and a file's size.
tree() {
	(cd "$1" && find . \( -type d -printf '%p %y %m %U:%G %Ts\n' \) \
		-o -printf '%p %y %m %U:%G %Ts %s\n' | sort)
}

# same_tree A B: B is a copy of A, contents, modes, owners and times.
same_tree() {
	diff -r "$1" "$2" && diff <(tree "$1") <(tree "$2")
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
	mount_r4 -o list_pseudo_xattrs
	known
	# (an r4 attribute a tool may put back: the mode; tar sets a
	# directory's after its entries)
	tar --xattrs --xattrs-include='user.r4.mode' -C "$MNT" -cf "$T/d.tar" d
	run grep -a -c 'SCHILY\.xattr\.user\.r4\.mode=' "$T/d.tar"
	assert_output 5
	mkdir "$MNT/x"
	fuse_within 30 tar --xattrs --xattrs-include='user.r4.mode' -C "$MNT/x" -xf "$T/d.tar"
	same_tree "$MNT/d" "$MNT/x/d"
}

@test "by default listxattr lists no user.r4.*; getfattr -n reads any; setfattr sets mode, owner, times" {
	need_cmd getfattr "attr not installed"
	mount_r4
	run getfattr --absolute-names -d -m - "$MNT/d" "$MNT/d/a" "$MNT"
	assert_success
	assert_output ''
	run getfattr --absolute-names --only-values -n user.r4.mode "$MNT/d/a"
	assert_output 0644
	run getfattr --absolute-names --only-values -n user.r4.name "$MNT/d/sub"
	assert_output sub
	run getfattr --absolute-names --only-values -n user.r4.body "$MNT/d/b"
	assert_output 22

	# what chmod, chown and touch set, with their rules
	setfattr -n user.r4.mode -v 0700 "$MNT/d"
	setfattr -n user.r4.uid -v 1000 "$MNT/d/a"
	setfattr -n user.r4.owner -v 1001 "$MNT/d/b"
	setfattr -n user.r4.gid -v 100 "$MNT/d/a"
	setfattr -n user.r4.mtime -v 1000000000 "$MNT/d/a"
	setfattr -n user.r4.atime -v 1000000001 "$MNT/d/a"
	run stat -c '%a %u:%g' "$MNT/d" "$MNT/d/b"
	assert_output $'700 0:0\n644 1001:0'
	run stat -c '%a %u:%g %Y %X' "$MNT/d/a"
	assert_output '644 1000:100 1000000000 1000000001'
	run setfattr -n user.r4.mode -v 0999 "$MNT/d/a"
	assert_failure
	assert_output --partial 'Invalid argument'

	# nothing else: no rename, no rewrite, no removal, no read-only value
	for n in name body size unlink type nlink ctime oid key plugin list acl audit invert; do
		run setfattr -n "user.r4.$n" -v x "$MNT/d/a"
		assert_failure
		assert_output "setfattr: $MNT/d/a: Operation not permitted"
	done
	run setfattr -n user.r4.name -v z "$MNT/d/sub"
	assert_output "setfattr: $MNT/d/sub: Operation not permitted"
	run ls "$MNT/d"
	assert_output $'a\nb\nsub'
	run cat "$MNT/d/a"
	assert_output 1

	# no user.r4.* name is stored; a pseudo one cannot be removed
	run setfattr -n user.r4.nosuch -v x "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: Operation not permitted"
	run getfattr -n user.r4.nosuch "$MNT/d/a"
	assert_failure
	assert_output --partial 'No such attribute'
	run setfattr -x user.r4.mode "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: Operation not permitted"
	run setfattr -x user.r4.nosuch "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: No such attribute"
	# other names are stored (r4fuse_xattrs_stored.bats), and listed
	setfattr -n user.other -v x "$MNT/d/a"
	run getfattr --absolute-names -d "$MNT/d/a"
	assert_output "# file: $MNT/d/a
user.other=\"x\""
}

@test "-o list_pseudo_xattrs: listxattr names the metadata of objects, none of pseudo files" {
	need_cmd getfattr "attr not installed"
	mount_r4 -o list_pseudo_xattrs
	run getfattr --absolute-names -m - "$MNT/d/a"
	assert_output "# file: $MNT/d/a
user.r4.atime
user.r4.ctime
user.r4.gid
user.r4.key
user.r4.mode
user.r4.mtime
user.r4.name
user.r4.nlink
user.r4.oid
user.r4.plugin
user.r4.size
user.r4.type
user.r4.uid"
	run getfattr --absolute-names -d "$MNT/d"
	assert_line 'user.r4.mode="0755"'
	assert_line 'user.r4.type="directory"'
	assert_line 'user.r4.name="d"'
	run getfattr --absolute-names -d -m - "$MNT/d/..mode" "$MNT/..reiser4"
	assert_output ''
}

@test "cp -a, rsync -aX, tar --xattrs out of and within the mount: no r4 attribute, nothing changed" {
	need_fusectl
	need_cmd getfattr "attr not installed"
	need_cmd rsync
	need_cmd tar
	"$R4SH" -c '/d/a/..mode <- "0600"' -c '/d/sub/..gid <- "100"' "$IMG" >/dev/null
	mount_r4
	known

	# out of the mount, to the host
	cp -a "$MNT/d/a" "$T/a"
	cp -a "$MNT/d" "$T/cp"
	rsync -aX "$MNT/d/" "$T/rsync/"
	tar --xattrs --xattrs-include='*' -C "$MNT" -cf "$T/d.tar" d
	mkdir "$T/tar" && tar --xattrs --xattrs-include='*' -C "$T/tar" -xf "$T/d.tar"
	run getfattr --absolute-names -R -d -m - "$T/a" "$T/cp" "$T/rsync" "$T/tar"
	assert_success
	assert_output ''
	run grep -a -c 'SCHILY\.xattr' "$T/d.tar"
	assert_output 0
	diff "$MNT/d/a" "$T/a"
	same_tree "$MNT/d" "$T/cp"
	same_tree "$MNT/d" "$T/rsync"
	same_tree "$MNT/d" "$T/tar/d"

	# within the mount, and from the host into it
	known
	fuse_within 30 cp -a "$MNT/d" "$MNT/cp"
	fuse_within 30 rsync -aX "$MNT/d/" "$MNT/rsync/"
	echo 4444 >"$MNT/d/b"
	fuse_within 30 rsync -aX "$MNT/d/" "$MNT/rsync/"	# (over an older copy)
	mkdir "$MNT/tar"
	fuse_within 30 tar --xattrs --xattrs-include='*' -C "$MNT/tar" -xf "$T/d.tar"
	fuse_within 30 rsync -aX "$T/cp/" "$MNT/host/"
	run ls "$MNT"
	assert_output $'cp\nd\nhost\nrsync\ntar'
	same_tree "$MNT/d" "$MNT/rsync"
	same_tree "$T/cp" "$MNT/cp"
	same_tree "$T/cp" "$MNT/tar/d"
	same_tree "$T/cp" "$MNT/host"
	run getfattr --absolute-names -R -d -m - "$MNT"
	assert_output ''
}

@test "an archive with r4 attributes (list_pseudo_xattrs) extracted into a mount renames nothing" {
	need_fusectl
	need_cmd tar
	need_cmd rsync
	"$R4SH" -c '/d/a/..mode <- "0600"' "$IMG" >/dev/null
	mount_r4 -o list_pseudo_xattrs
	known
	tar --xattrs --xattrs-include='*' -C "$MNT" -cf "$T/d.tar" d
	run grep -a -c 'SCHILY\.xattr\.user\.r4\.name=' "$T/d.tar"
	assert_output 5
	# the tools put back mode, owner and times, and are refused the rest
	run fuse_within 30 rsync -aX "$MNT/d/" "$MNT/rsync/"
	assert_failure 23
	assert_output --partial 'rsync_xal_set: fsetxattr("'"$MNT"'/rsync/.a.'
	assert_output --partial '"user.r4.name") failed: Operation not permitted (1)'
	refute_output --partial '"user.r4.mode")'
	same_tree "$MNT/d" "$MNT/rsync"
	umount_r4

	mount_r4
	mkdir "$MNT/x"
	fuse_within 30 tar --xattrs --xattrs-include='*' -C "$MNT/x" -xf "$T/d.tar" 2>"$T/tar.err"
	run cat "$T/tar.err"
	assert_line "tar: setxattrat: Cannot set 'user.r4.name' extended attribute for file 'd/a': Operation not permitted"
	assert_line "tar: setxattrat: Cannot set 'user.r4.oid' extended attribute for file 'd': Operation not permitted"
	refute_output --partial "'user.r4.mode'"
	refute_output --partial "'user.r4.uid'"
	same_tree "$MNT/d" "$MNT/x/d"
}
