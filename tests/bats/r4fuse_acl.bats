#!/usr/bin/env bats
# r4fuse: POSIX ACLs (engine/acl.c, the rules of engine/perm.c;
# docs/semantics.md, "POSIX ACLs"; docs/r4fuse.md): setfacl and getfacl on
# a mount without and with -o default_permissions (the engine checks, or
# the kernel with FUSE_CAP_POSIX_ACL): named users and groups within the
# mask as uid 65534, at once after each setfacl; chmod's effect; default
# ACLs inherited by touch and mkdir whatever the umask; cp -a and tar
# --acls in and out; the refusals with their errors; r4 fsck and
# fsck.reiser4 clean after.  Real mounts (root, /dev/fuse).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd setfacl "acl not installed"
	need_cmd setfattr "attr not installed"
	need_cmd setpriv
	"$R4SH" -c 'mkdir /d' -c '/d/..mode <- "0777"' -c '/d/f <- "secret"' \
		-c '/d/f/..mode <- "0600"' "$IMG" >/dev/null
	public_mnt
}

teardown() {
	fuse_teardown
	r4_teardown
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# (in group 100 besides its own)
nobody_in() { setpriv --reuid=65534 --regid=65534 --groups="$1" "${@:2}"; }

# named_entries: what setfacl's named entries and the mask give uid 65534
# on the mount as it is, each at once
named_entries() {
	local f=$MNT/d/f

	run nobody cat "$f"
	assert_failure
	assert_output "cat: $f: Permission denied"
	setfacl -m u:65534:rw "$f"
	run nobody cat "$f"
	assert_success
	assert_output secret
	nobody sh -c "echo more >>'$f'"
	run stat -c %a "$f"
	assert_output 660	# (the mask, rw, in the group bits)
	# the mask limits the named user
	setfacl -m m:r "$f"
	run stat -c %a "$f"
	assert_output 640
	run nobody sh -c "echo x >>'$f'"
	assert_failure
	run nobody cat "$f"
	assert_success
	# an entry that names the user denies, whatever other says
	setfacl -m u:65534:-,g::r,o:r "$f"
	run nobody cat "$f"
	assert_failure
	# a named group, for a member of it
	setfacl -x u:65534 "$f"
	setfacl -m g:100:r,o:- "$f"
	run nobody cat "$f"
	assert_failure
	run nobody_in 100 cat "$f"
	assert_success
	setfacl -b "$f"
	run getfacl -pc "$f"
	assert_output "user::rw-
group::r--
other::---"
	run nobody_in 100 cat "$f"
	assert_failure
}

@test "named users and groups, within the mask, as the engine checks (no default_permissions)" {
	mount_r4 -o allow_other
	named_entries
	umount_r4
	fsck_both "$IMG"
}

@test "named users and groups, within the mask, as the kernel checks (default_permissions)" {
	mount_r4 -o allow_other,default_permissions
	named_entries
	umount_r4
	fsck_both "$IMG"
}

# chmod_keeps OPTS: chmod on a mount with OPTS changes the ACL's owner,
# mask and other entries, at once and after a remount
chmod_keeps() {
	mount_r4 -o "$1"
	setfacl -m u:65534:rwx,g:100:rx "$MNT/d/f"
	run nobody sh -c "echo x >>'$MNT/d/f'"
	assert_success
	chmod 0741 "$MNT/d/f"
	run nobody sh -c "echo x >>'$MNT/d/f'"
	assert_failure
	umount_r4
	mount_r4 -o "$1"
	run getfacl -pc "$MNT/d/f"
	assert_output "user::rwx
user:nobody:rwx	#effective:r--
group::---
group:users:r-x	#effective:r--
mask::r--
other::--x"
	run nobody cat "$MNT/d/f"
	assert_success
	run nobody sh -c "echo x >>'$MNT/d/f'"
	assert_failure
	umount_r4
	fsck_both "$IMG"
}

@test "chmod changes the owner, mask and other entries; getfacl shows them; a remount keeps them" {
	chmod_keeps allow_other
}

@test "chmod changes the ACL with default_permissions too (the kernel's cached copy follows)" {
	chmod_keeps allow_other,default_permissions
}

# inherits: a default ACL on d/i; what touch and mkdir make in it with
# umask 077, and a symlink
inherits() {
	mkdir "$MNT/d/i"
	setfacl -d -m u:65534:rwx,g::rx,o:r "$MNT/d/i"
	(umask 077 && touch "$MNT/d/i/file" && mkdir "$MNT/d/i/sub" && touch "$MNT/d/i/sub/deeper" &&
		ln -s file "$MNT/d/i/link")
	run stat -c '%a %n' "$MNT/d/i/file" "$MNT/d/i/sub" "$MNT/d/i/sub/deeper"
	assert_output "664 $MNT/d/i/file
774 $MNT/d/i/sub
664 $MNT/d/i/sub/deeper"
	run getfacl -pc "$MNT/d/i/file"
	assert_output "user::rw-
user:nobody:rwx	#effective:rw-
group::r-x	#effective:r--
mask::rw-
other::r--"
	run getfacl -pc "$MNT/d/i/sub"
	assert_output "user::rwx
user:nobody:rwx
group::r-x
mask::rwx
other::r--
default:user::rwx
default:user:nobody:rwx
default:group::r-x
default:mask::rwx
default:other::r--"
	run getfattr -h -n system.posix_acl_access "$MNT/d/i/link"
	assert_failure
	nobody sh -c "echo mine >'$MNT/d/i/sub/deeper'"
	# without a default ACL, the umask
	(umask 077 && touch "$MNT/d/plain" && mkdir "$MNT/d/plaindir")
	run stat -c %a "$MNT/d/plain" "$MNT/d/plaindir"
	assert_output "600
700"
}

@test "a default ACL is inherited by touch and mkdir, whatever the umask (no default_permissions)" {
	mount_r4 -o allow_other
	inherits
	umount_r4
	fsck_both "$IMG"
}

@test "a default ACL is inherited by touch and mkdir, whatever the umask (default_permissions)" {
	mount_r4 -o allow_other,default_permissions
	inherits
	umount_r4
	fsck_both "$IMG"
}

@test "cp -a and tar --acls carry ACLs into, within and out of the mount" {
	need_cmd tar
	local h=$T/host
	mkdir -p "$h/dir"
	echo data >"$h/file"
	setfacl -m u:65534:rw,g:100:r "$h/file" || skip "the host's $T keeps no ACLs"
	setfacl -d -m u:65534:rx "$h/dir"
	mount_r4
	cp -a "$h/file" "$h/dir" "$MNT/d/"
	run getfacl -pc "$MNT/d/file"
	assert_output "$(getfacl -pc "$h/file")"
	run getfacl -pc "$MNT/d/dir"
	assert_output "$(getfacl -pc "$h/dir")"
	cp -a "$MNT/d/file" "$MNT/d/copy"
	run getfacl -pc "$MNT/d/copy"
	assert_output "$(getfacl -pc "$h/file")"
	tar --acls -C "$MNT/d" -cf "$T/a.tar" file dir
	mkdir "$T/out"
	tar --acls -C "$T/out" -xf "$T/a.tar"
	run getfacl -pc "$T/out/file" "$T/out/dir"
	assert_output "$(getfacl -pc "$h/file" "$h/dir")"
	mkdir "$MNT/d/untar"
	tar --acls -C "$MNT/d/untar" -xf "$T/a.tar"
	run getfacl -pc "$MNT/d/untar/file"
	assert_output "$(getfacl -pc "$h/file")"
	umount_r4
	fsck_both "$IMG"
}

@test "the refusals: EINVAL, EOPNOTSUPP, EPERM, EACCES, ENODATA; what changes nothing" {
	mount_r4 -o allow_other
	local f=$MNT/d/f
	touch "$MNT/d/mine"
	chown 65534 "$MNT/d/mine"
	# malformed: a short value, another version, no OTHER, named without MASK
	run setfattr -n system.posix_acl_access -v 0x0200 "$f"
	assert_failure
	assert_output "setfattr: $f: Invalid argument"
	run setfattr -n system.posix_acl_access -v 0x03000000 "$f"
	assert_output "setfattr: $f: Operation not supported"
	run setfattr -n system.posix_acl_access -v 0x0200000001000600ffffffff04000400ffffffff "$f"
	assert_output "setfattr: $f: Invalid argument"
	run setfattr -n system.posix_acl_access \
		-v 0x0200000001000600ffffffff02000600feff000004000400ffffffff20000000ffffffff "$f"
	assert_output "setfattr: $f: Invalid argument"
	run setfattr -n system.posix_acl_other -v 0x02000000 "$f"
	assert_output "setfattr: $f: Operation not supported"
	# not the owner
	run nobody setfacl -m u:65534:r "$f"
	assert_failure
	assert_output "setfacl: $f: Operation not permitted"
	run nobody setfacl -m u:0:r "$MNT/d/mine"
	assert_success
	# a default ACL on a file: refused to set; none to read; removed: nothing
	run setfattr -n system.posix_acl_default \
		-v 0x0200000001000600ffffffff04000400ffffffff20000000ffffffff "$f"
	assert_output "setfattr: $f: Permission denied"
	run getfattr -n system.posix_acl_default "$f"
	assert_output "$f: system.posix_acl_default: No such attribute"
	run getfattr -n system.posix_acl_access "$f"
	assert_output "$f: system.posix_acl_access: No such attribute"
	setfattr -x system.posix_acl_default "$f"
	setfattr -x system.posix_acl_access "$f"
	# an ACL the mode says: the mode, nothing stored (or listed)
	setfacl -m u::rwx,g::r,o::x "$f"
	run stat -c %a "$f"
	assert_output 741
	run getfattr -d -m - "$f"
	assert_output ""
	# a setter outside the group loses setgid
	chgrp 100 "$MNT/d/mine"
	chmod 02770 "$MNT/d/mine"
	nobody setfacl -m u:0:rwx "$MNT/d/mine"
	run stat -c %a "$MNT/d/mine"
	assert_output 770
	run getfattr --absolute-names -m - "$MNT/d/mine"
	assert_output "# file: $MNT/d/mine
system.posix_acl_access"
	umount_r4
	fsck_both "$IMG"
}
