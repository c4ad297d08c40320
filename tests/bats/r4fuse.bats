#!/usr/bin/env bats
# r4fuse: a real mount (root, /dev/fuse), unmounted in teardown even when
# a test fails.  POSIX calls through the mount, pseudo files of
# directories, the control file, grouped commits and kill -9, read-only
# mounts, and the lock shared with r4sh.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
}

teardown() {
	if [ -n "${CWD_PID-}" ]; then
		exec 5>&-	# (it ends at EOF: then the mount is not busy)
		wait "$CWD_PID" || true
		exec 6<&-
	fi
	fuse_teardown
	r4_teardown
}

@test "POSIX through the mount: read, write, mkdir, rename, links, chmod, truncate" {
	mount_r4
	run cat "$MNT/bank/alice"
	assert_output 100
	echo hello >"$MNT/bank/note"
	echo more >>"$MNT/bank/note"
	mkdir "$MNT/d"
	cp /etc/hostname "$MNT/d/host"
	mv "$MNT/bank/note" "$MNT/d/note"
	ln -s ../bank/alice "$MNT/d/link"
	ln "$MNT/bank/bob" "$MNT/d/bob"
	chmod 0600 "$MNT/d/note"
	truncate -s 3 "$MNT/bank/alice"
	rm "$MNT/d/host"
	run ls "$MNT/d"
	assert_output $'bob\nlink\nnote'
	run cat "$MNT/d/note" "$MNT/d/link"
	assert_output $'hello\nmore\n100'
	run stat -c '%a %h %s' "$MNT/d/note" "$MNT/d/bob"
	assert_output $'600 1 11\n644 2 2'
	run readlink "$MNT/d/link"
	assert_output ../bank/alice
	run rmdir "$MNT/bank"
	assert_failure
	assert_output --partial 'Directory not empty'
	umount_r4
	# what r4 reads after the unmount, and what reiser4progs says of it
	run "$R4SH" -c 'cat /d/note' -c 'ls -l /d' "$IMG"
	assert_output - <<'EOF'
hello
more
-0644   2     0     0          2 bob
l0777   1     0     0         13 link -> ../bank/alice
-0600   1     0     0         11 note
EOF
	fsck_reiser4 "$IMG"
}

@test "pseudo files of directories by name; never in readdir" {
	mount_r4
	run cat "$MNT/bank/..mode"
	assert_output 0755
	echo 0700 >"$MNT/bank/..mode"
	run stat -c %a "$MNT/bank"
	assert_output 700
	run cat "$MNT/bank/..type" "$MNT/bank/..nlink"
	assert_output $'directory\n2'
	run ls -a "$MNT/bank"
	assert_output $'.\n..\nalice\nbob'
	run bash -c "echo 0999 > '$MNT/bank/..mode'"
	assert_failure
	run stat -c %a "$MNT/bank"
	assert_output 700
}

@test "the control file runs an R4L command as one unit, and answers" {
	mount_r4
	echo '/bank/(alice <- "60", bob <- "90")' >"$MNT/..reiser4"
	run cat "$MNT/bank/alice" "$MNT/bank/bob"
	assert_output 6090
	run bash -c "exec 3<>'$MNT/..reiser4'; printf '%s' '/bank/alice + \"/\" + /bank/bob' >&3; cat <&3"
	assert_output 60/90
	run bash -c "exec 3<>'$MNT/..reiser4'; printf '%s' '/bank/alice <- \"0\"; /bank/x/y <- \"1\"' >&3; cat <&3"
	assert_line "<control>:1:21: error: cannot write '/bank/x': No such file or directory"
	run cat "$MNT/bank/alice"
	assert_output 60
}

# gone PATH: the invalidation thread dropped the kernel's entry of PATH,
# removed through the control file (it does so right after the reply:
# 5 s at most)
gone() {
	for _ in $(seq 100); do
		[ -e "$1" ] || return 0
		sleep 0.05
	done
	return 1
}

@test "after a control-file change the kernel keeps the names it did not change: a working directory stays one" {
	need_cmd python3
	"$R4SH" -c 'mkdir /s' -c '/s/(a <- "", b <- "")' "$IMG" >/dev/null
	mount_r4 -o entry_timeout=600,attr_timeout=600
	# a process in $MNT/bank: getcwd(2) when told (the fifos sequence it)
	mkfifo "$T/in" "$T/out"
	python3 -c '
import os, sys
os.chdir(sys.argv[1])
print("in", flush=True)
sys.stdin.readline()
try:
	print(os.getcwd())
except OSError as e:
	print(e.strerror)' "$MNT/bank" <"$T/in" >"$T/out" 3>&- &
	CWD_PID=$!
	exec 5>"$T/in" 6<"$T/out"
	read -r line <&6
	assert_equal "$line" in
	cat "$MNT/bank/alice" "$MNT/bank/bob" "$MNT/s/a" >/dev/null
	"$R4SH" -c '/bank/alice <- "1"' -c '/s/..unlink <- "a"' "$MNT"
	# a pass of the invalidation thread has begun (none looks bank up
	# again: a lookup would put an unhashed entry back); b, looked up only
	# now, is in none begun before, so once b is gone that pass is over
	gone "$MNT/s/a"
	cat "$MNT/s/b"
	"$R4SH" -c '/s/..unlink <- "b"' "$MNT"
	gone "$MNT/s/b"
	echo >&5
	read -r line <&6
	exec 5>&- 6<&-
	wait "$CWD_PID"
	CWD_PID=
	assert_equal "$line" "$MNT/bank"
	# names it changed: gone from the listing at once, their entries soon
	"$R4SH" -c '/bank/..unlink <- "bob"' -c '/bank/alice/..name <- "carol"' "$MNT"
	run ls "$MNT/bank"
	assert_output carol
	gone "$MNT/bank/bob"
	gone "$MNT/bank/alice"
	run cat "$MNT/bank/carol"
	assert_output 1
}

@test "grouped commits survive kill -9 once the interval passed; fsync at once" {
	mount_r4_fg -o commit=1
	echo early >"$MNT/bank/early"
	sleep 2.5		# one commit interval and more
	echo synced >"$MNT/bank/synced"
	sync "$MNT/bank/synced"	# fsync(2) commits the group
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	fusermount3 -uz "$MNT" 2>/dev/null || true
	run "$R4SH" -c 'cat /bank/early /bank/synced' "$IMG"
	assert_success
	assert_output $'early\nsynced'
	fsck_reiser4 "$IMG"
	run "$R4" fsck "$IMG"
	assert_success
}

@test "-o ro: nothing can change; -o sync commits each call" {
	mount_r4_fg -o ro
	run bash -c "echo x > '$MNT/bank/new'"
	assert_failure
	assert_output --partial 'Read-only file system'
	umount_r4
	mount_r4_fg -o sync
	echo now >"$MNT/bank/now"
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	fusermount3 -uz "$MNT" 2>/dev/null || true
	run "$R4SH" -c 'cat /bank/now' "$IMG"
	assert_output now
}

@test "the lock: r4sh on a mounted image works through the mount; a second r4fuse is refused" {
	mount_r4_fg
	run "$R4SH" -c 'ls /' "$IMG"
	assert_success
	assert_output - <<OUT
r4sh: $IMG: in use by r4fuse (pid $FUSE_PID), mounted at $MNT: working through the mount
bank
OUT
	run "$R4SH" --read-only -c 'cat /bank/alice' "$IMG"
	assert_output 100
	run "$R4FUSE" "$IMG" "$T" -f
	assert_failure 1
	assert_output "r4fuse: $IMG: in use by r4fuse (pid $FUSE_PID), mounted at $MNT"
}

@test "r4sh MOUNTPOINT: R4L through the control file, reads through the mount" {
	"$R4SH" -c '/bank/alice/..mode <- "0640"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	run "$R4SH" -c 'ls -l /bank' -c '/bank/(alice <- "60", bob <- "90")' \
		-c '/bank/alice + "/" + /bank/bob' "$MNT"
	assert_success
	assert_output - <<'OUT'
-0640   1     0     0          3 alice
-0644   1     0     0          2 bob
60
90
60/90
OUT
	# a script: checked, then one unit per statement; cwd and positions
	printf 'cd /bank\nc <- "1"\nc + "2"\n/bank/no/x <- "3"\n' >"$T/s.r4"
	run "$R4SH" -f "$T/s.r4" "$MNT"
	assert_failure 1
	assert_output - <<OUT
1
12
$T/s.r4:4:1: error: cannot write '/bank/no': No such file or directory
/bank/no/x <- "3"
^~~~~~~~
r4sh: stopped: 2 statements before this one committed
OUT
	run cat "$MNT/bank/c"
	assert_output 1
	run "$R4SH" --json -c '/bank/c' "$MNT"
	assert_output '{"statement": 1, "range": "1:1-1:7", "path": "/bank/c", "value": "1"}'
	# identity: root may act as another; anyone else runs as itself
	run "$R4SH" --as 1000 -c '/bank/alice' "$MNT"
	assert_output 'r4sh: /bank/alice: Permission denied'
	if command -v setpriv >/dev/null; then
		run setpriv --reuid=1000 --regid=1000 --clear-groups "$R4SH" -c '/bank/bob' "$MNT"
		assert_output 90
		run setpriv --reuid=1000 --regid=1000 --clear-groups "$R4SH" -c '/bank/bob <- "0"' \
			"$MNT"
		assert_failure 1
		assert_output --partial 'Permission denied'
	fi
	# what needs the image itself says so
	run "$R4SH" -c 'begin' "$MNT"
	assert_failure 1
	assert_output --partial 'begin: not on a mount'
	run "$R4SH" --atomic -f "$T/s.r4" "$MNT"
	assert_failure 1
	assert_output --partial '--atomic: not on a mount'
	umount_r4
	run "$R4SH" -c '/bank/bob' "$IMG"
	assert_output 90
	run "$R4SH" --as 1000 -c '/bank/alice' "$IMG"
	assert_output 'r4sh: /bank/alice: Permission denied'
}

@test "the meta view: every object is a directory of its pseudo files and children" {
	mount_r4
	run ls "$MNT/..meta"
	assert_output bank
	run ls "$MNT/..meta/bank"
	assert_output $'alice\nbob'
	run ls -a "$MNT/..meta/bank/alice"
	assert_line ..mode
	assert_line ..body
	refute_line ..unlink
	run cat "$MNT/..meta/bank/alice/..body"
	assert_output 100
	run stat -c %F "$MNT/..meta/bank/alice"
	assert_output directory
	echo 0600 >"$MNT/..meta/bank/alice/..mode"
	run stat -c %a "$MNT/bank/alice"
	assert_output 600
	run ls -a "$MNT"
	refute_line ..meta
}

@test "pseudo files through the mount: text reads as a line, ..list names the table, ls -la the meta view" {
	mount_r4
	mkdir "$MNT/d"
	printf hi >"$MNT/d/f"
	chown 1000:100 "$MNT/d"
	touch -d @1700000000 "$MNT/d"
	# a value ends in a newline; contents are read as they are
	run bash -c "cat '$MNT/d/..mode'; echo x"
	assert_output $'0755\nx'
	run od -An -c "$MNT/..meta/d/..name"
	assert_output '   d  \n'
	run bash -c "cat '$MNT/..meta/d/f/..body'; echo x"
	assert_output 'hix'
	# st_size is what a read returns
	for p in ..mode ..uid ..owner ..name ..key ..list ..plugin ..mtime; do
		[ "$(stat -c %s "$MNT/d/$p")" = "$(wc -c <"$MNT/d/$p")" ]
	done
	[ "$(stat -c %s "$MNT/..meta/d/f/..body")" = 2 ]
	# written with the newline or without
	echo 0700 >"$MNT/d/..mode"
	printf 0750 >"$MNT/d/..mode"
	run stat -c %a "$MNT/d"
	assert_output 750
	# ..list: every name of the engine's table that applies, aliases too
	run cat "$MNT/d/..list"
	assert_output $'.\n..\nf\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..name\n..unlink\n..acl\n..audit\n..new\n..link'
	run ls -f "$MNT/..meta/d/f"
	assert_output $'.\n..\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..body\n..name\n..acl\n..audit\n..range'
	# every name has real attributes: what it allows, the object's owner and times
	run ls -la "$MNT/..meta/d"
	assert_success
	refute_output --partial '?'
	run stat -c '%A %u:%g %Y %s %n' "$MNT/..meta/d/..mode" "$MNT/..meta/d/..owner" \
		"$MNT/..meta/d/..oid" "$MNT/..meta/d/..unlink" "$MNT/..meta/d/..new" \
		"$MNT/..meta/d/..link" "$MNT/..meta/d/f/..range"
	assert_output - <<EOF
-rw-r--r-- 1000:100 1700000000 5 $MNT/..meta/d/..mode
-rw-r--r-- 1000:100 1700000000 5 $MNT/..meta/d/..owner
-r--r--r-- 1000:100 1700000000 $(wc -c <"$MNT/d/..oid") $MNT/..meta/d/..oid
--w--w--w- 1000:100 1700000000 0 $MNT/..meta/d/..unlink
---------- 1000:100 1700000000 0 $MNT/..meta/d/..new
---------- 1000:100 1700000000 0 $MNT/..meta/d/..link
---------- 0:0 $(stat -c %Y "$MNT/d/f") 0 $MNT/..meta/d/f/..range
EOF
	umount_r4
}

@test "pseudo files answer as the engine's r4_pseudo_read and r4_pseudo_write do" {
	need_cmd setpriv
	"$R4SH" -c 'mkdir /d' -c '/d/x <- "1"; /d/s <- "secret"' -c '/d/s/..mode <- "0600"' \
		-c 'mkdir /p' -c '/p/..mode <- "0700"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	as1000() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
	# a write-only pseudo file exists, and writing it does what it says
	echo x >"$MNT/d/..unlink"
	run ls "$MNT/d"
	assert_output s
	# a pseudo file the caller may not read, or that is no text, fails the read
	run as1000 cat "$MNT/..meta/d/s/..body"
	assert_failure
	assert_output --partial 'Permission denied'
	run as1000 ls "$MNT/..meta/p"
	assert_failure
	assert_output --partial 'Permission denied'
	run cat "$MNT/d/..body"
	assert_failure
	assert_output --partial 'Is a directory'
	# in the meta view a "..x" the table lacks does not exist
	run stat "$MNT/..meta/d/..nosuch"
	assert_failure
	assert_output --partial 'No such file'
	umount_r4
}

@test "extended attributes: user.r4.NAME is the pseudo file ..NAME, of any object" {
	need_cmd getfattr "attr not installed"
	mount_r4 -o list_pseudo_xattrs	# (getfattr -d; r4fuse_xattr.bats: the default)
	run getfattr --absolute-names --only-values -n user.r4.mode "$MNT/bank/alice"
	assert_output 0644
	run getfattr --absolute-names -d "$MNT/bank/alice"
	assert_line 'user.r4.mode="0644"'
	assert_line 'user.r4.type="regular"'
	assert_line 'user.r4.size="3"'
	setfattr -n user.r4.mode -v 0640 "$MNT/bank/alice"
	run stat -c %a "$MNT/bank/alice"
	assert_output 640
	run setfattr -n user.r4.mode -v 0999 "$MNT/bank/alice"
	assert_failure
	run setfattr -n user.r4.nosuch -v x "$MNT/bank/alice"
	assert_failure
	# another name is stored, and listed with them (r4fuse_xattrs_stored.bats)
	setfattr -n user.other -v x "$MNT/bank/alice"
	run getfattr --absolute-names -d "$MNT/bank/alice"
	assert_line 'user.other="x"'
	assert_line 'user.r4.mode="0640"'
	run setfattr -x user.r4.mode "$MNT/bank/alice"
	assert_failure
	run stat -c %a "$MNT/bank/alice"
	assert_output 640
}

@test "an unprivileged caller (allow_other): mode bits, and R4L as that uid" {
	need_cmd setpriv
	"$R4SH" -c '/bank/alice/..mode <- "0640"' -c 'mkdir /pub' -c '/pub/..mode <- "0777"' \
		"$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	as1000() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
	run as1000 cat "$MNT/bank/bob"
	assert_output 50
	run as1000 cat "$MNT/bank/alice"
	assert_failure
	assert_output --partial 'Permission denied'
	run as1000 bash -c "echo x > '$MNT/bank/new'"
	assert_failure
	as1000 bash -c "echo mine > '$MNT/pub/mine'"
	run stat -c '%U %u:%g %a' "$MNT/pub/mine"
	assert_output --regexp '^[^ ]+ 1000:1000 644$'
	run as1000 bash -c "echo 0777 > '$MNT/bank/..mode'"
	assert_failure
	run cat "$MNT/bank/..mode"
	assert_output 0755
	# the control file runs commands as the caller
	as1000 bash -c "echo '/pub/mine <- \"via control\"' > '$MNT/..reiser4'"
	run cat "$MNT/pub/mine"
	assert_output 'via control'
	run as1000 bash -c "exec 3<>'$MNT/..reiser4'; printf '%s' '/bank/alice' >&3; cat <&3"
	assert_output --partial "cannot read '/bank/alice': Permission denied"
}

@test "an aggregate through the mount: classic text, fields in the meta view, rules for the caller" {
	need_cmd setpriv
	"$R4SH" -c 'mkdir /etc' -c '/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"' \
		-c '/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write)' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	as1001() { setpriv --reuid=1001 --regid=1001 --clear-groups "$@"; }
	run cat "$MNT/etc/passwd"
	assert_output $'root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash'
	run stat -c '%F %s' "$MNT/etc/passwd"
	assert_output 'regular file 76'
	run cat "$MNT/..meta/etc/passwd/alice/home/..body"
	assert_output /home/alice
	# alice may write her shell, not her uid
	as1001 bash -c "echo /bin/zsh > '$MNT/..meta/etc/passwd/alice/shell/..body'"
	run as1001 bash -c "echo 0 > '$MNT/..meta/etc/passwd/alice/uid/..body'"
	assert_failure
	run as1001 bash -c "printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:0:1001:Alice:/home/alice:/bin/zsh\n' | cat > '$MNT/etc/passwd'"
	assert_failure
	assert_output --partial 'Permission denied'
	run cat "$MNT/..meta/etc/passwd/alice/uid/..body"
	assert_output 1001
	# the whole text written as root: a record added, one changed
	printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice L:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n' >"$MNT/etc/passwd"
	run cat "$MNT/etc/passwd"
	assert_output $'root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice L:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh'
	# the text applies at close(2): an invalid one fails it and changes nothing
	run bash -c "echo 'no colons' | cat > '$MNT/etc/passwd'"
	assert_failure
	assert_output --partial 'Invalid argument'
	run cat "$MNT/etc/passwd"
	assert_line --index 2 'bob:x:1002:1002:Bob:/home/bob:/bin/sh'
	umount_r4
	run "$R4SH" -c '/etc/passwd/bob/home' "$IMG"
	assert_output /home/bob
	fsck_reiser4 "$IMG"
}

@test "sed -i on an aggregate: the file renamed over it becomes its text, the records keep their rules" {
	need_cmd setpriv
	"$R4SH" -c 'mkdir /etc' -c '/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/dash\n"' \
		-c '/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write)' -c '/etc/..mode <- "0777"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	as1001() { setpriv --reuid=1001 --regid=1001 --clear-groups "$@"; }
	# alice may change her shell, not bob's (a later record): refused as a
	# whole, and the change she made before it stays
	as1001 bash -c "echo kept > '$MNT/etc/note'"
	run as1001 sed -i 's|/bin/bash|/bin/fish|; s|/bin/dash|/bin/ksh|' "$MNT/etc/passwd"
	assert_failure
	assert_output --partial 'Permission denied'
	run cat "$MNT/etc/note"
	assert_output kept
	run cat "$MNT/..meta/etc/passwd/alice/shell/..body"
	assert_output /bin/bash
	rm "$MNT/etc/note"
	as1001 sed -i 's|/bin/bash|/bin/fish|' "$MNT/etc/passwd"
	sed -i 's|/bin/fish|/bin/zsh|' "$MNT/etc/passwd"
	run cat "$MNT/etc/passwd"
	assert_output $'root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/dash'
	run ls -a "$MNT/etc"
	assert_output $'.\n..\npasswd'
	# an invalid text: the rename fails, nothing changes, the file stays
	printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:abc:1001:Alice:/home/alice:/bin/zsh\n' >"$MNT/etc/new"
	run mv "$MNT/etc/new" "$MNT/etc/passwd"
	assert_failure	# (EINVAL: mv says "to a subdirectory of itself")
	run cat "$MNT/etc/new"
	assert_success
	umount_r4
	run "$R4SH" -c '/etc/passwd/alice/shell' -c '/etc/passwd/alice/shell/..acl' -c '/etc/passwd/alice/uid' -c '/etc/passwd/bob/shell' "$IMG"
	assert_output $'/bin/zsh\nuid 1001 write\n1001\n/bin/dash'
	fsck_reiser4 "$IMG"
}

@test "an invert through the mount: its text live, its definition in the meta view, plain writes refused" {
	"$R4SH" -c 'mkdir /srv' -c '/srv/head <- "Welcome\n"; /srv/local <- "news\n"' \
		-c '/srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"' \
		"$IMG" >/dev/null
	mount_r4
	run cat "$MNT/srv/motd"
	assert_output $'Welcome\n-- news'
	echo 'more news' >"$MNT/srv/local"
	run cat "$MNT/srv/motd"
	assert_output $'Welcome\n-- more news'
	run stat -c '%F %s' "$MNT/srv/motd"
	assert_output 'regular file 21'
	run cat "$MNT/..meta/srv/motd/..invert"
	assert_output '(/srv/head <- "Welcome\n") + "-- " + (/srv/local <- "more news\n")'
	# an edited definition writes the edited part
	echo '(/srv/head <- "Hello\n") + "-- " + /srv/local' >"$MNT/..meta/srv/motd/..invert"
	run cat "$MNT/srv/head"
	assert_output Hello
	# a plain write is refused when the text is applied, at close(2)
	run bash -c "echo x | cat > '$MNT/srv/motd'"
	assert_failure
	assert_output --partial 'Operation not supported'
	run cat "$MNT/srv/motd"
	assert_output $'Hello\n-- more news'
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "as a mount helper: mount.fuse.r4 IMAGE DIR -o fstab options, in the background" {
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o rw,defaults,nofail,x-systemd.automount,commit=2
	mountpoint -q "$MNT"
	run cat "$MNT/bank/alice"
	assert_output 100
	echo fstab >"$MNT/bank/via"
	run "$R4SH" -c 'ls /bank' "$IMG"	# (the daemon holds the image: through the mount)
	assert_line --partial "in use by mount.fuse.r4 (pid "
	# a fuseblk mount: the image is committed and closed when the unmount returns
	run awk -v m="$MNT" '$5 == m { for (i = 7; $i != "-"; i++); print $(i + 1) }' /proc/self/mountinfo
	assert_output fuseblk.r4
	umount "$MNT"
	run "$R4SH" -c 'cat /bank/via' "$IMG"
	assert_output fstab
}

@test "as a mount helper: -o remount,ro commits and refuses changes, -o remount,rw allows them again" {
	# what mount(8) runs for `mount -t fuse.r4 -o remount,ro IMG DIR`
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o rw
	echo before >"$MNT/bank/note"
	exec 4>"$MNT/bank/open"
	run "$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,ro
	assert_failure 1
	assert_output "mount.fuse.r4: $MNT: remount: Device or resource busy"
	exec 4>&-
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,ro,nosuid
	run awk -v m="$MNT" '$5 == m { print $6 }' /proc/self/mountinfo
	assert_output ro,nosuid,relatime
	run touch "$MNT/bank/new"
	assert_failure
	assert_output --partial "Read-only file system"
	# committed at the remount: a reader beside the mount sees it
	run "$R4" cat "$IMG" /bank/note
	assert_output before
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,rw
	run awk -v m="$MNT" '$5 == m { print $6 }' /proc/self/mountinfo
	assert_output rw,nosuid,relatime
	echo after >>"$MNT/bank/note"
	umount "$MNT"
	run "$R4" cat "$IMG" /bank/note
	assert_output $'before\nafter'
	fsck_reiser4 "$IMG"
}

@test "as a mount helper: -o remount,rw of a read-only mount, or of what is not mounted there, is refused" {
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o ro
	run "$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,rw
	assert_failure 1
	assert_output "mount.fuse.r4: $MNT: served read-only (r4fuse -o ro holds no lock); unmount it and mount it read-write"
	"$R4" mkfs "$T/b.img" 16M >/dev/null
	run "$R4_BUILD/mount.fuse.r4" "$T/b.img" "$MNT" -o remount,ro
	assert_failure 1
	assert_output "mount.fuse.r4: $T/b.img: not mounted there by r4fuse"
	run awk -v m="$MNT" '$5 == m { print $6 }' /proc/self/mountinfo
	assert_output --regexp '^ro,'
	umount_r4
}

@test "an open file unlinked: readable and writable to its last close, then gone" {
	mount_r4
	echo hello >"$MNT/bank/tmp"
	# perl (Debian's perl-base) for an fd kept open across unlink
	run perl -e '
		my $f = "$ARGV[0]/bank/tmp";
		open(my $fh, "+<", $f) or die "open: $!";
		unlink($f) or die "unlink: $!";
		print -e $f ? "still there\n" : "gone\n";
		sysseek($fh, 0, 2); syswrite($fh, "world\n");
		sysseek($fh, 0, 0); sysread($fh, my $buf, 100); print $buf;
		my @st = stat($fh); print "nlink $st[3] size $st[7]\n";
		truncate($fh, 3) or die "ftruncate: $!"; @st = stat($fh); print "size $st[7]\n";
		open(my $again, "<", "/proc/self/fd/" . fileno($fh)) or die "reopen: $!";
		print scalar(<$again>), "\n";
		opendir(my $d, "$ARGV[0]/bank"); print join(" ", sort grep { !/^\./ } readdir($d)), "\n";
	' "$MNT"
	assert_success
	assert_output - <<'OUT'
gone
hello
world
nlink 0 size 12
size 3
hel
alice bob
OUT
	# a rename over an open file: the old one stays readable through its fd
	run perl -e '
		my $d = "$ARGV[0]/bank";
		open(my $fh, "<", "$d/bob") or die;
		rename("$d/alice", "$d/bob") or die "rename: $!";
		print scalar(<$fh>), "|";
		open(my $new, "<", "$d/bob") or die; print scalar(<$new>), "\n";
	' "$MNT"
	assert_output '50|100'
	# its directory removed too: fstat still answers (one inode per object)
	run perl -e '
		my $d = "$ARGV[0]/bank/t";
		mkdir($d) or die "mkdir: $!";
		open(my $fh, "+>", "$d/x") or die "open: $!"; syswrite($fh, "abc");
		unlink("$d/x") or die "unlink: $!"; rmdir($d) or die "rmdir: $!";
		my @st = stat($fh) or die "fstat: $!"; print "nlink $st[3] size $st[7]\n";
	' "$MNT"
	assert_success
	assert_output 'nlink 0 size 3'
	umount_r4
	run "$R4" fsck "$IMG"
	assert_success
	assert_output --partial '3 objects'
	fsck_reiser4 "$IMG"
}

@test "hard links are one file: O_APPEND through either name, rename between them" {
	mount_r4
	echo -n >"$MNT/bank/h1"
	ln "$MNT/bank/h1" "$MNT/bank/h2"
	run perl -e '
		my $d = "$ARGV[0]/bank";
		open(my $a, ">>", "$d/h1") or die; open(my $b, ">>", "$d/h2") or die;
		syswrite($a, "aaa"); syswrite($b, "bb"); print sysseek($b, 0, 1), " ";
		syswrite($a, "c"); print sysseek($a, 0, 1), " ";
		open(my $r, "<", "$d/h2") or die; print scalar(<$r>), " ";
		# rename between two names of one file changes nothing, even with b open
		rename("$d/h1", "$d/h2") or die "rename: $!";
		print -e "$d/h1" ? "h1 " : "no-h1 ", (stat("$d/h2"))[3], "\n";
	' "$MNT"
	assert_success
	assert_output '5 6 aaabbc h1 2'
	[ "$(stat -c %i "$MNT/bank/h1")" = "$(stat -c %i "$MNT/bank/h2")" ]
	rm "$MNT/bank/h1"
	[ "$(stat -c %h "$MNT/bank/h2")" = 1 ]
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "an open file unlinked, then kill -9: the next open removes the orphan" {
	mount_r4_fg -o commit=1
	echo doomed >"$MNT/bank/doomed"
	perl -e 'open(my $fh, "<", $ARGV[0]) or die; unlink($ARGV[0]) or die; sleep 30' \
		"$MNT/bank/doomed" &
	HOLDER=$!
	sleep 2.5		# the unlink is committed, the file still open
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	kill "$HOLDER" 2>/dev/null || true
	fusermount3 -uz "$MNT" 2>/dev/null || true
	wait "$HOLDER" 2>/dev/null || true
 	# before any read-write open: the orphan is there (the root, /bank,
	# alice, bob and it)
	run "$R4" info "$IMG"
	assert_line --regexp '^files: +5$'
	run "$R4SH" -c 'ls /bank' "$IMG"
	assert_output $'alice\nbob'
	run "$R4" info "$IMG"
	assert_line --regexp '^files: +4$'
	fsck_both "$IMG"
}

@test "readdir offsets are stable: entries made or removed meanwhile change nothing else" {
	mount_r4
	mkdir "$MNT/big"
	for i in $(seq -w 1 500); do : >"$MNT/big/f$i"; done
	run perl -e '
		my $d = "$ARGV[0]/big";
		opendir(my $dh, $d) or die;
		my (%seen, $dups, $mark);
		while (defined(my $e = readdir($dh))) {
			$dups++ if $seen{$e}++;
			if (keys(%seen) == 100) {
				$mark = telldir($dh);
				for my $i (1 .. 200) { open(my $fh, ">", "$d/n$i") or die; }
				unlink("$d/f250") or die;
			}
		}
		my $old = grep { /^f\d+$/ } keys %seen;
		print "dups ", $dups // 0, " old $old\n";
		seekdir($dh, $mark); my $next = readdir($dh);
		print defined($next) && $seen{$next} ? "seekdir ok\n" : "seekdir lost\n";
	' "$MNT"
	assert_success
	# 499 f-names survive; f250 may or may not have been listed before it went
	assert_output --regexp '^dups 0 old (499|500)'$'\n''seekdir ok$'
}

# POSIX permission rules for uid 1000, the same with the kernel checking
# (default_permissions) and with the bridge checking (without it).
permission_rules() {
	need_cmd setpriv
	"$R4SH" -c 'mkdir /pub' -c '/pub/..mode <- "1777"' -c 'mkdir /priv' \
		-c '/priv/..mode <- "0700"' -c '/priv/f <- "secret"' -c 'mkdir /sg' \
		-c '/sg/..gid <- "50"' -c '/sg/..mode <- "2777"' -c '/pub/root <- "r"' \
		-c '/pub/root/..mode <- "0666"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o "allow_other$1"
	as1000() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
	# search permission on the way
	run as1000 cat "$MNT/priv/f"
	assert_failure
	assert_output --partial 'Permission denied'
	run as1000 stat "$MNT/priv/f"
	assert_failure
	# access(2)
	run as1000 test -w "$MNT/bank/alice"
	assert_failure
	run as1000 test -r "$MNT/bank/alice"
	assert_success
	# a sticky directory: one's own entries only
	as1000 bash -c "echo mine > '$MNT/pub/mine'"
	run as1000 rm -f "$MNT/pub/root"
	assert_failure
	assert_output --partial 'Operation not permitted'
	run as1000 mv "$MNT/pub/root" "$MNT/pub/moved"
	assert_failure
	as1000 mv "$MNT/pub/mine" "$MNT/pub/mine2"
	# writing another's file is fine (0666); its mode, owner and explicit
	# times are not, "now" is
	as1000 bash -c "echo w > '$MNT/pub/root'"
	run as1000 chmod 0600 "$MNT/pub/root"
	assert_failure
	assert_output --partial 'Operation not permitted'
	run as1000 chown 0 "$MNT/pub/mine2"
	assert_failure
	run as1000 touch -d '2001-01-01' "$MNT/pub/root"
	assert_failure
	as1000 touch "$MNT/pub/root"
	as1000 touch -d '2001-01-01 00:00:00 UTC' "$MNT/pub/mine2"
	run stat -c '%Y %a %u' "$MNT/pub/mine2"
	assert_output '978307200 644 1000'
	run stat -c '%a %u %s' "$MNT/pub/root"
	assert_output '666 0 2'
	# truncate without write permission
	run as1000 truncate -s 0 "$MNT/bank/bob"
	assert_failure
	run cat "$MNT/bank/bob"
	assert_output 50
	# a setgid directory passes its group on, and setgid to new directories
	as1000 mkdir "$MNT/sg/d"
	as1000 touch "$MNT/sg/f"
	run stat -c '%a %u:%g' "$MNT/sg/d" "$MNT/sg/f"
	assert_output $'2755 1000:50\n644 1000:50'
	# chmod g+s by a non-member of the file's group drops setgid
	as1000 chmod 2755 "$MNT/sg/f"
	run stat -c %a "$MNT/sg/f"
	assert_output 755
	# a non-owner's write drops setuid and setgid (but is no chmod right)
	chmod 6777 "$MNT/pub/root"
	as1000 bash -c "echo more >> '$MNT/pub/root'"
	run stat -c '%a %s' "$MNT/pub/root"
	assert_output '777 7'
	run as1000 chmod 0700 "$MNT/pub/root"
	assert_failure
	umount_r4
	run "$R4" fsck "$IMG"
	assert_success
}

@test "permissions as uid 1000, checked by the kernel (-o default_permissions)" {
	permission_rules ,default_permissions
}

@test "permissions as uid 1000, checked by the bridge (no default_permissions)" {
	permission_rules ""
}

@test "bad images: refused, or read-only once damage is found; every error logged" {
	# a broken super block: refused, with the reason
	cp "$IMG" "$T/bad.img"
	printf 'XXXXXXXX' | dd of="$T/bad.img" bs=1 seek=65536 conv=notrunc 2>/dev/null
	run "$R4FUSE" "$T/bad.img" "$MNT" -f
	assert_failure 1
	assert_output --partial "r4fuse: $T/bad.img: cannot mount it:"
	run mountpoint -q "$MNT"
	assert_failure
	# a broken leaf: found at the first read of it, EIO, logged, and the
	# volume is marked damaged so that nothing more is written
	"$R4SH" -c 'mkdir /many' "$IMG" >/dev/null
	for i in $(seq 1 200); do echo "/many/f$i <- \"content of file $i\""; done >"$T/s.r4"
	"$R4SH" -f "$T/s.r4" "$IMG" >/dev/null
	blk=$("$R4SH" -c .tree "$IMG" | grep 'level 1' | tail -1 | sed 's/.*block \([0-9]*\):.*/\1/')
	printf '\377\377\377\377\377\377\377\377' |
		dd of="$IMG" bs=1 seek=$((blk * 4096)) conv=notrunc 2>/dev/null
	mount_r4_fg
	run cat "$MNT/bank/alice"
	assert_output 100
	run bash -c "cat '$MNT'/many/f* >/dev/null"
	assert_failure
	assert_output --partial 'Input/output error'
	run bash -c "echo x > '$MNT/bank/new'"
	assert_failure
	umount_r4
	run cat "$T/fuse.log"
	assert_line --partial "corrupt image at block $blk"
	assert_line --partial 'the volume is marked damaged'
	assert_line --regexp '^r4fuse: read /many/f[0-9]+: the image is damaged'
	# marked damaged: the next mount is read-only
	mount_r4_fg
	run cat "$MNT/bank/alice"
	assert_output 100
	run bash -c "echo x > '$MNT/bank/new'"
	assert_failure
	assert_output --partial 'Read-only file system'
	umount_r4
	run cat "$T/fuse.log"
	assert_line --partial 'mounted read-only'
	run "$R4SH" -c 'ls /bank' "$IMG"
	assert_failure
}

@test "limits: names over 255 bytes, sizes past the format's maximum, cache=" {
	mount_r4 -o cache=1M
	long=$(printf 'n%.0s' $(seq 256))
	ok=$(printf 'n%.0s' $(seq 255))
	for cmd in "touch" "mkdir" "ln -s x" "ln $MNT/bank/alice" "mv $MNT/bank/bob"; do
		run $cmd "$MNT/bank/$long"
		assert_failure
		assert_output --partial 'File name too long'
	done
	run ls "$MNT/bank"
	assert_output $'alice\nbob'
	touch "$MNT/bank/$ok"
	run ls "$MNT/bank"
	assert_line "$ok"
	# 2^62 bytes is the format's end (r4's reg40 limit)
	run truncate -s $((1 << 62 | 1)) "$MNT/bank/alice"
	assert_failure
	assert_output --partial 'File too large'
	truncate -s $((1 << 40)) "$MNT/bank/bob"
	run stat -c '%s %b' "$MNT/bank/bob"
	assert_output "$((1 << 40)) 8"
	run bash -c "tail -c 4 '$MNT/bank/bob' | od -An -tx1"
	assert_output ' 00 00 00 00'
	umount_r4
	run "$R4FUSE" "$IMG" "$MNT" -f -o cache=lots
	assert_failure 2
	assert_output --partial 'cache=lots'
	fsck_both "$IMG"
}

@test "fallocate: the modes r4 does fully, EOPNOTSUPP for the rest, ENOSPC before any change" {
	mount_r4
	printf 'abc' >"$MNT/bank/f"
	fallocate -l 1M "$MNT/bank/f"
	run stat -c '%s %b' "$MNT/bank/f"
	assert_output '1048576 2048'
	run head -c 3 "$MNT/bank/f"
	assert_output abc
	fallocate -z -o 1 -l 1 "$MNT/bank/f"
	run bash -c "head -c 3 '$MNT/bank/f' | od -An -c"
	assert_output '   a  \0   c'
	fallocate -n -o 0 -l 4096 "$MNT/bank/f"	# KEEP_SIZE, inside the file
	run fallocate -n -o 1M -l 4096 "$MNT/bank/f"
	assert_failure
	assert_output --partial 'keep size mode is unsupported'	# (util-linux's EOPNOTSUPP)
	run fallocate --collapse-range -o 0 -l 4096 "$MNT/bank/f"
	assert_failure
	assert_output --partial 'not supported'
	run fallocate -l 1G "$MNT/bank/big"
	assert_failure
	assert_output --partial 'No space left on device'
	run stat -c %s "$MNT/bank/f" "$MNT/bank/big"
	assert_output $'1048576\n0'
	umount_r4
	fsck_both "$IMG"
}

@test "rename flags and rules, nanosecond times, statfs from the allocator" {
	case $(uname -m) in
	x86_64) nr=316 ;;
	aarch64) nr=276 ;;
	*) skip "renameat2's syscall number for $(uname -m) not known here" ;;
	esac
	mount_r4
	mkdir -p "$MNT/d/sub"
	# renameat2(AT_FDCWD, a, AT_FDCWD, b, flags): 1 NOREPLACE, 2 EXCHANGE
	run perl -e '
		my ($nr, $d) = @ARGV;
		sub r2 { my $r = syscall($nr, -100, $_[0], -100, $_[1], $_[2]); $r ? "$!" : "ok" }
		print r2("$d/bank/alice", "$d/bank/bob", 1), "\n";
		print r2("$d/bank/alice", "$d/bank/bob", 2), "\n";
		print r2("$d/bank/alice", "$d/bank/none", 2), "\n";
		print r2("$d/d", "$d/d/sub/d", 0), "\n";
	' "$nr" "$MNT"
	assert_output - <<'OUT'
File exists
ok
No such file or directory
Invalid argument
OUT
	run cat "$MNT/bank/alice" "$MNT/bank/bob"
	assert_output 50100
	# over an empty directory yes, a full one no
	mkdir "$MNT/e"
	touch "$MNT/d/x"
	mv -T "$MNT/d/sub" "$MNT/e"
	run mv -T "$MNT/bank" "$MNT/d"
	assert_failure
	assert_output --partial 'Directory not empty'
	touch -d '2020-02-02 02:02:02.123456789 UTC' "$MNT/bank/alice"
	run stat -c '%.9Y' "$MNT/bank/alice"
	assert_output 1580608922.123456789
	touch -a -d '2021-01-01 00:00:00.5 UTC' "$MNT/bank/alice"	# UTIME_OMIT for mtime
	run stat -c '%.9X %.9Y' "$MNT/bank/alice"
	assert_output '1609459200.500000000 1580608922.123456789'
	# statfs: the allocator's blocks, before and after 1 MiB
	free0=$(stat -f -c %f "$MNT")
	head -c 1048576 /dev/zero >"$MNT/bank/mib"
	for i in $(seq 300); do echo "$i" >"$MNT/bank/s$i"; done
	free1=$(stat -f -c %f "$MNT")	# before any commit: new data and nodes count
	sync "$MNT/bank/mib"
	free2=$(stat -f -c %f "$MNT")	# packed at commit: a little less
	echo "# free blocks: $free0, $free1 before the commit, $free2 after" >&3
	[ $((free0 - free1)) -ge $((256 + 20)) ] && [ "$free2" -ge "$free1" ]
	[ $((free0 - free2)) -ge $((256 + 20)) ] && [ $((free0 - free2)) -le 320 ]
	run stat -f -c '%S %b' "$MNT"
	assert_output "4096 16384"
}

@test "audit: POSIX changes of an audited file or directory append its records, as the caller" {
	need_cmd setpriv
	# the records' SECONDS: the engine's clock, fixed by R4_TEST_CLOCK here
	R4_TEST_CLOCK=1700000000 "$R4SH" -c 'mkdir /srv' -c '/srv/f <- "x"; /srv/log <- ""' \
		-c '/srv/f/..audit/(log <- /srv/log)' -c '/srv/log/..audit/(log <- /srv/log)' \
		-c 'mkdir /d' -c '/d/..mode <- "0777"; /d/log <- ""' -c '/d/..audit/(log <- /d/log)' \
		"$IMG" >/dev/null
	public_mnt
	R4_TEST_CLOCK=1700000000 mount_r4 -o allow_other
	as1001() { setpriv --reuid=1001 --regid=1001 --clear-groups "$@"; }
	echo hello >"$MNT/srv/f"
	echo more >>"$MNT/srv/f"
	truncate -s 3 "$MNT/srv/f"
	chmod 0600 "$MNT/srv/f"
	chown 1001:1001 "$MNT/srv/f"
	touch -d '2020-02-02 02:02:02 UTC' "$MNT/srv/f"
	mv "$MNT/srv/f" "$MNT/srv/g"
	ln "$MNT/srv/g" "$MNT/srv/h"
	rm "$MNT/srv/h"
	as1001 bash -c "echo x >> '$MNT/srv/g'"
	run cat "$MNT/srv/g"
	assert_output helx
	rm "$MNT/srv/g"	# its last name: the setting goes, read before
	echo '# checked' >>"$MNT/srv/log"	# the log's own changes are not audited
	# a directory: its entries' changes, the objects themselves not
	touch "$MNT/d/new"
	mkdir "$MNT/d/sub"
	as1001 touch "$MNT/d/mine"
	echo data >"$MNT/d/mine2"
	mv "$MNT/d/new" "$MNT/d/renamed"
	rmdir "$MNT/d/sub"
	mv "$MNT/d/mine2" "$MNT/srv/moved"
	umount_r4
	run "$R4SH" -c '/srv/log' "$IMG"
	assert_output - <<'EOF2'
1700000000 0 setattr /srv/f 0
1700000000 0 truncate /srv/f 0
1700000000 0 write /srv/f 6
1700000000 0 append /srv/f 5
1700000000 0 truncate /srv/f 3
1700000000 0 setattr /srv/f 0
1700000000 0 setattr /srv/f 0
1700000000 0 setattr /srv/f 0
1700000000 0 rename /srv/g 1
1700000000 0 link /srv/h 0
1700000000 0 unlink /srv/h 1
1700000000 1001 append /srv/g 2
1700000000 0 unlink /srv/g 1
# checked
EOF2
	run "$R4SH" -c '/d/log' "$IMG"
	assert_output - <<'EOF2'
1700000000 0 setattr /d 0
1700000000 0 create /d/new 0
1700000000 0 create /d/sub 0
1700000000 1001 create /d/mine 0
1700000000 0 create /d/mine2 0
1700000000 0 rename /d/renamed 7
1700000000 0 unlink /d/sub 3
1700000000 0 rename /srv/moved 5
EOF2
	fsck_reiser4 "$IMG"
}

@test "audit: a change whose record cannot be written is refused before it changes anything" {
	rm -f "$IMG"
	"$R4" mkfs "$IMG" 16M >/dev/null
	R4_TEST_CLOCK=1700000000 "$R4SH" -c 'mkdir /srv' -c '/srv/f <- "x"; /srv/log <- ""' \
		-c '/srv/f/..audit/(log <- /srv/log)' \
		-c 'mkdir /d' -c '/d/log <- ""' -c '/d/..audit/(log <- /d/log)' "$IMG" >/dev/null
	R4_TEST_CLOCK=1700000000 mount_r4_fg
	# the log of an audited directory renamed: its record goes to the log it
	# was (by object); the directory's later changes find no log
	mv "$MNT/d/log" "$MNT/d/log.1"
	run ls "$MNT/d"
	assert_output log.1
	run touch "$MNT/d/new"
	assert_failure
	assert_output --partial 'No such file or directory'
	# a log renamed away (not audited itself): f's changes fail before they change anything
	touch "$MNT/srv/other"	# (a change in the group, which stays)
	mv "$MNT/srv/log" "$MNT/srv/log.1"
	run bash -c "echo more >> '$MNT/srv/f'"
	assert_failure
	assert_output --partial 'No such file or directory'
	run bash -c "echo new > '$MNT/srv/f'"	# open(O_TRUNC)
	assert_failure
	run chmod 0600 "$MNT/srv/f"
	assert_failure
	run rm "$MNT/srv/f"
	assert_failure
	run stat -c '%a %s' "$MNT/srv/f" "$MNT/srv/other"
	assert_output $'644 1\n644 0'
	mv "$MNT/srv/log.1" "$MNT/srv/log"
	echo y >>"$MNT/srv/f"
	# a full volume: the chmod whose record would not fit is refused before it changes anything
	dd if=/dev/zero of="$MNT/fill" bs=64k 2>/dev/null || true
	run perl -e 'for my $i (1 .. 5000) {
		chmod($i % 2 ? 0600 : 0644, $ARGV[0]) or do { print "$i $!\n"; exit 0 } }
		print "none\n"' "$MNT/srv/f"
	assert_output --regexp '^[0-9]+ No space left on device$'
	n=${output%% *}
	run stat -c %a "$MNT/srv/f"
	if [ $((n % 2)) = 1 ]; then assert_output 644; else assert_output 600; fi
	umount_r4
	# the setting, the append, and one record per chmod that succeeded
	run "$R4SH" -c '/srv/log' "$IMG"
	assert_line --index 0 '1700000000 0 setattr /srv/f 0'
	assert_line --index 1 '1700000000 0 append /srv/f 2'
	[ "${#lines[@]}" -eq $((n + 1)) ]
	assert_line --index "$n" '1700000000 0 setattr /srv/f 0'
	run "$R4SH" -c '/srv/f' -c '/srv/other/..size' -c '/d/log.1' "$IMG"
	assert_output $'xy\n0\n1700000000 0 setattr /d 0\n1700000000 0 rename /d/log.1 5'
	fsck_both "$IMG"
}

@test "ls -l: READDIRPLUS brings the names' attributes, no LOOKUP per name" {
	need_cmd setpriv
	public_mnt
	mount_r4
	mkdir "$MNT/d" "$MNT/d/sub" "$MNT/shut"
	for i in $(seq 1 40); do echo "$i" >"$MNT/d/f$i"; done
	ln "$MNT/d/f1" "$MNT/d/link"
	touch "$MNT/shut/x"
	chmod 0744 "$MNT/shut"	# (others may list it, not look names up)
	mkdir "$MNT/big"	# (more than one request's worth of entries)
	for i in $(seq 1 400); do : >"$MNT/big/$(printf '%0120d' "$i")"; done
	umount_r4
	mount_r4_fg -d -o allow_other
	run ls -ln "$MNT/d"
	assert_success
	assert_line --regexp '^-rw-r--r-- 2 0 0 2 .* f1$'
	assert_line --regexp '^drwxr-xr-x 2 0 0 [0-9]+ .* sub$'
	[ "${#lines[@]}" -eq 43 ]
	grep -q 'opcode: READDIRPLUS' "$T/fuse.log"
	# the kernel looked up "d" alone: every name came with the listing
	run grep -c 'opcode: LOOKUP' "$T/fuse.log"
	assert_output 1
	# a name the caller may not look up comes alone: ls asks, and is refused
	run setpriv --reuid=1000 --regid=1000 --clear-groups ls -l "$MNT/shut"
	assert_failure
	assert_output --partial "cannot access '$MNT/shut/x': Permission denied"
	run ls -l "$MNT/big"
	[ "${#lines[@]}" -eq 401 ]
	[ "$(ls "$MNT/big" | sort -u | wc -l)" -eq 400 ]
	[ "$(grep -c 'opcode: READDIRPLUS' "$T/fuse.log")" -gt 3 ]
	# the entries were lookups the kernel forgets as the names go; the
	# unmount checks for leaks
	rm -r "$MNT/d" "$MNT/big"
	umount_r4
	fsck_reiser4 "$IMG"
}
