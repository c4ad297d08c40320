#!/usr/bin/env bats
# r4fuse: extended attributes users store (engine/xattr.c, the rules of
# engine/perm.c; docs/semantics.md, "Extended attributes"): setfattr and
# getfattr, the tools that copy attributes (cp --preserve=xattr, rsync
# -aX, tar --xattrs) in, out of and within the mount, the refusals as uid
# 65534, values across a remount, r4 fsck and fsck.reiser4 clean after.
# Real mounts (root, /dev/fuse).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd setfattr "attr not installed"
	"$R4SH" -c 'mkdir /d' -c 'mkdir /d/sub' -c '/d/(a <- "1", b <- "22")' \
		-c '/d/sub/c <- "333"' "$IMG" >/dev/null
}

teardown() {
	fuse_teardown
	r4_teardown
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# attrs DIR: every stored attribute under DIR, by relative path, in the
# order of the paths.
attrs() {
	(cd "$1" && find . | LC_ALL=C sort | while read -r f; do
		getfattr -h -d -m - -e hex --absolute-names "$f" 2>&1
	done)
}

@test "setfattr and getfattr store, read, list and remove attributes; a remount keeps them" {
	mount_r4
	setfattr -n user.colour -v blue "$MNT/d/a"
	setfattr -n user.empty "$MNT/d/a"
	setfattr -n user.bin -v 0x00ff0a "$MNT/d/a"
	setfattr -n 'user.odd name: é/..x' -v 'a b' "$MNT/d/a"
	setfattr -n user.dir -v yes "$MNT/d/sub"
	setfattr -n trusted.t -v root-only "$MNT/d/b"
	setfattr -n security.s -v sec "$MNT/d/b"
	run getfattr --absolute-names -d "$MNT/d/a" "$MNT/d/sub"
	assert_output "# file: $MNT/d/a
user.bin=0sAP8K
user.colour=\"blue\"
user.empty=\"\"
user.odd name: é/..x=\"a b\"

# file: $MNT/d/sub
user.dir=\"yes\""
	run getfattr --absolute-names --only-values -n user.colour "$MNT/d/a"
	assert_output blue
	run getfattr --absolute-names -d -m - "$MNT/d/b"
	assert_output "# file: $MNT/d/b
security.s=\"sec\"
trusted.t=\"root-only\""
	setfattr -n user.colour -v green "$MNT/d/a"
	setfattr -x user.bin "$MNT/d/a"
	run getfattr --absolute-names -n user.bin "$MNT/d/a"
	assert_failure
	assert_output "$MNT/d/a: user.bin: No such attribute"
	run setfattr -x user.bin "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: No such attribute"
	# what cannot be stored: another namespace, a value over 64 KiB
	run setfattr -n other.x -v 1 "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: Operation not supported"
	run setfattr -n user.big -v "$(head -c 65537 /dev/zero | tr '\0' x)" "$MNT/d/a"
	assert_output "setfattr: $MNT/d/a: Argument list too long"
	# (the contents and the pseudo attributes are untouched)
	run cat "$MNT/d/a"
	assert_output 1
	run getfattr --absolute-names --only-values -n user.r4.mode "$MNT/d/a"
	assert_output 0644
	umount_r4
	fsck_both "$IMG"

	mount_r4
	run getfattr --absolute-names -d "$MNT/d/a"
	assert_output "# file: $MNT/d/a
user.colour=\"green\"
user.empty=\"\"
user.odd name: é/..x=\"a b\""
	# an object removed takes its attributes along: b's are left
	b=$(getfattr --absolute-names --only-values -n user.r4.oid "$MNT/d/b")
	rm "$MNT/d/a"
	rm -r "$MNT/d/sub"
	umount_r4
	fsck_both "$IMG"
	run bash -c "'$R4' ls '$IMG' /..r4 | awk '/\\.x\$/ {print \$NF}'"
	assert_output "$b.x"
}

@test "cp --preserve=xattr, rsync -aX, tar --xattrs keep user.* attributes, in, out and within" {
	need_fusectl
	need_cmd rsync
	need_cmd tar
	mount_r4
	setfattr -n user.colour -v blue "$MNT/d/a"
	setfattr -n user.mark -v 0x0001 "$MNT/d/sub/c"
	setfattr -n user.dir -v top "$MNT/d"
	want=$(attrs "$MNT/d")
	assert [ -n "$want" ]

	# out of the mount
	cp -a --preserve=xattr "$MNT/d" "$T/cp"
	rsync -aX "$MNT/d/" "$T/rsync/"
	tar --xattrs --xattrs-include='*' -C "$MNT" -cf "$T/d.tar" d
	mkdir "$T/tar" && tar --xattrs --xattrs-include='*' -C "$T/tar" -xf "$T/d.tar"
	for d in "$T/cp" "$T/rsync" "$T/tar/d"; do
		run attrs "$d"
		assert_output "$want"
	done

	# into it, and within it
	fuse_within 30 cp -a --preserve=xattr "$T/cp" "$MNT/cp"
	fuse_within 30 rsync -aX "$T/rsync/" "$MNT/rsync/"
	mkdir "$MNT/tar"
	fuse_within 30 tar --xattrs --xattrs-include='*' -C "$MNT/tar" -xf "$T/d.tar"
	fuse_within 30 cp -a --preserve=xattr "$MNT/d" "$MNT/cp2"
	fuse_within 30 rsync -aX "$MNT/d/" "$MNT/rsync2/"
	echo 4444 >"$MNT/d/b"
	setfattr -n user.colour -v red "$MNT/d/a"
	fuse_within 30 rsync -aX "$MNT/d/" "$MNT/rsync2/"	# (over an older copy)
	want2=$(attrs "$MNT/d")
	for d in cp rsync tar/d cp2; do
		run attrs "$MNT/$d"
		assert_output "$want"
	done
	run attrs "$MNT/rsync2"
	assert_output "$want2"
	umount_r4
	fsck_both "$IMG"

	mount_r4
	run attrs "$MNT/tar/d"
	assert_output "$want"
}

@test "as uid 65534: read and write permission, the sticky bit, trusted.* and security.*" {
	need_cmd setpriv
	"$R4SH" -c '/d/..mode <- "0777"' -c '/d/priv <- "p"' -c '/d/priv/..mode <- "0600"' \
		-c 'mkdir /d/sticky' -c '/d/sticky/..mode <- "1777"' \
		-c 'mkdir /d/closed' -c '/d/closed/..mode <- "0700"' -c '/d/closed/in <- "x"' \
		"$IMG" >/dev/null
	public_mnt
	for opts in allow_other allow_other,default_permissions; do
		mount_r4 -o "$opts"
		setfattr -n user.x -v 1 "$MNT/d/a" "$MNT/d/priv" "$MNT/d/sticky" "$MNT/d/closed/in"
		setfattr -n trusted.x -v t "$MNT/d/a"
		setfattr -n security.x -v s "$MNT/d/a"

		run nobody getfattr --absolute-names --only-values -n user.x "$MNT/d/a"
		assert_output 1
		run nobody setfattr -n user.x -v 2 "$MNT/d/a"
		assert_output "setfattr: $MNT/d/a: Permission denied"
		run nobody setfattr -x user.x "$MNT/d/a"
		assert_output "setfattr: $MNT/d/a: Permission denied"
		run nobody getfattr --absolute-names -n user.x "$MNT/d/priv"
		assert_output "$MNT/d/priv: user.x: Permission denied"
		run nobody getfattr --absolute-names -n user.x "$MNT/d/closed/in"
		assert_output --partial 'Permission denied'
		run nobody setfattr -n user.y -v 1 "$MNT/d/sticky"
		assert_output "setfattr: $MNT/d/sticky: Operation not permitted"
		# trusted.*: root's, not even seen; security.*: read by all, set by root
		run nobody getfattr --absolute-names -n trusted.x "$MNT/d/a"
		assert_output "$MNT/d/a: trusted.x: No such attribute"
		run nobody setfattr -n trusted.y -v 1 "$MNT/d/a"
		assert_output "setfattr: $MNT/d/a: Operation not permitted"
		run nobody getfattr --absolute-names --only-values -n security.x "$MNT/d/a"
		assert_output s
		run nobody setfattr -n security.y -v 1 "$MNT/d/a"
		assert_output "setfattr: $MNT/d/a: Operation not permitted"
		run nobody getfattr --absolute-names -d -m - "$MNT/d/a"
		assert_output "# file: $MNT/d/a
security.x=\"s\"
user.x=\"1\""
		# what it owns, it may
		run nobody bash -c "touch '$MNT/d/mine' && setfattr -n user.m -v 1 '$MNT/d/mine' &&
			setfattr -x user.m '$MNT/d/mine' && rm '$MNT/d/mine'"
		assert_success
		run getfattr --absolute-names -d "$MNT/d/a"
		assert_output "# file: $MNT/d/a
user.x=\"1\""
		umount_r4
	done
	fsck_both "$IMG"
}

@test "r4 import keeps the attributes and ACLs of files and directories" {
	mkdir -p "$T/src/dir"
	printf 'x' >"$T/src/dir/f"
	ln -s f "$T/src/dir/l"
	setfattr -n user.colour -v blue "$T/src/dir" 2>/dev/null ||
		skip "$T: no user.* attributes on this host file system"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.big", b"a" * 65536)' "$T/src/dir/f"
	setfattr -n trusted.t -v 1 "$T/src/dir/f"
	setfattr -n security.s -v 2 "$T/src/dir/f"
	if setfacl -m u:65534:r "$T/src/dir/f" 2>/dev/null; then
		acl=1
		setfacl -d -m u:65534:rx "$T/src/dir"
	fi
	run "$R4" import "$IMG" "$T/src" /in
	assert_success
	assert_output --regexp '^imported 1 file, 2 directories, 1 symlink, 0 special files, 0 hard links: 1 byte in [0-9.]+ s$'
	mount_r4
	cmp <(attrs "$T/src") <(attrs "$MNT/in")
	run getfattr --absolute-names --only-values -n user.colour "$MNT/in/dir"
	assert_output blue
	if [ -n "${acl:-}" ]; then
		run getfacl -cpn "$MNT/in/dir/f"
		assert_line user:65534:r--
	fi
	umount_r4
	fsck_both "$IMG"
}

@test "a write, fallocate or chown removes a file's capabilities, as the writer may (generic/688)" {
	need_cmd setcap "libcap2-bin not installed"
	need_cmd setpriv
	"$R4SH" -c '/d/..mode <- "0777"' -c '/d/ro <- "r"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	chmod 0777 "$MNT/d/a"
	for f in a b ro; do setcap cap_setuid+ep "$MNT/d/$f"; done
	run getcap "$MNT/d/a"
	assert_output "$MNT/d/a cap_setuid=ep"
	# by a user who may write it: the kernel removes them as that user
	run nobody fallocate -l 64k "$MNT/d/a"
	assert_success
	run getcap "$MNT/d/a"
	assert_output ''
	run nobody setfattr -x security.capability "$MNT/d/ro"
	assert_output "setfattr: $MNT/d/ro: Operation not permitted"
	# by root: a write, a chown
	echo more >>"$MNT/d/b"
	run getcap "$MNT/d/b"
	assert_output ''
	chown 65534 "$MNT/d/ro"
	run getcap "$MNT/d/ro"
	assert_output ''
	umount_r4
	fsck_both "$IMG"
}
