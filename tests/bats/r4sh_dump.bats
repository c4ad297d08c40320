#!/usr/bin/env bats
# r4sh .dump: an R4L script that makes a subtree again.  Run into a fresh
# image, it must give the same tree: contents (any bytes), modes, owners,
# times (seconds), symlinks, hard links, aggregates, inverts, rules, audit.

setup() {
	load helper
	r4_setup
	R4SH=$R4_BUILD/r4sh
	IMG=$T/a.img
	NEW=$T/b.img
	"$R4" mkfs "$IMG" 64M >/dev/null
	"$R4" mkfs "$NEW" 64M >/dev/null
}
teardown() {
	[ -z "${MNT:-}" ] || fuse_teardown
	r4_teardown
}

# The varied tree: binary bytes, an empty and a 100 KB file, odd names, a
# 0555 directory, a symlink, a hard link, set-id and private modes, owners,
# times, /etc/passwd as an aggregate, rules, an invert, an audited file.
build_tree() {
	mkdir -p "$T/host/d/big"
	head -c 100000 /dev/urandom >"$T/host/d/big/random"
	"$R4" import "$IMG" "$T/host" / >/dev/null
	cat >"$T/build.r4" <<'EOF'
/d/bin <- "a\x00b\xffc\n\xc3\xa9 \"q\" \\ \ttab\r\nls /\n# no comment\n"
/d/empty <- ""
/d/`my file' <- "spaces"
/d/`a `b' c' <- "nested quotes"
/d/..new/(name <- "it's") <- "a lone quote"
/d/..new/(name <- "`tick") <- "a lone backquote"
/d/..new/(name <- "new\nline") <- "a newline"
/d/..new/(name <- "ro", type <- directory)
/d/ro/f <- "in a 0555 directory"
/d/..new/(name <- "sub", type <- directory)
/d/sub/deeper <- "x"
/d/sym -> "bin"
/d/..link/(name <- "hard", target <- /d/bin)
/d/bin/..uid <- #1000; /d/bin/..gid <- #1000; /d/bin/..mode <- "4755"
/d/empty/..mode <- "0600"
/d/bin/..mtime <- #1600000000; /d/sub/deeper/..mtime <- #1500000000
/d/bin/..acl/(uid <- #1001, access <- read)
/d/bin/..acl/(gid <- #100, access <- write)
/d/head <- "Hello"
/d/..new/(name <- "motd", type <- invert)/..invert <- "/d/head + \", \" + (/d/tail <- \"world\n\")"
/d/audit.log <- ""
/d/head/..audit/(log <- /d/audit.log)
/d/ro/..mode <- "0555"
/d/sub/..mtime <- #1400000000
/..new/(name <- "etc", type <- directory)
/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh
alice:x:1001:1001:Alice:/home/alice:/bin/bash
"
/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write)
/etc/passwd/alice/passwd/..mode <- "0600"
EOF
	"$R4SH" -f "$T/build.r4" "$IMG" >/dev/null
}

# Every path of an export, with its type and mode, owner, mtime, links
# and symlink text (sizes of directories are the host's own).
listing() {
	(cd "$1" && find . -printf '%p %M %U %G %Ts %n %l\n' | sort)
}

@test ".dump, run into a fresh image, gives the same tree" {
	build_tree
	run "$R4SH" -c .dump "$IMG"
	assert_success
	printf '%s\n' "$output" >"$T/dump.r4"
	# the header says what and from where; the names R4L cannot spell as
	# words are quoted or reached by a dereference; contents are strings
	assert_line --index 0 --regexp "^# r4sh \.dump of / on the image $IMG, [0-9-]+ [0-9:]+ UTC$"
	assert_line '/d/`my file'"'"' <- "spaces"'
	assert_line '/d/..new/(name <- "new\nline") <- "a newline"'
	assert_line '/d/..link/(name <- "hard", target <- /d/bin)'
	assert_line '/d/sym -> "bin"'
	assert_line --partial '/d/bin/..uid <- #1000; /d/bin/..gid <- #1000; /d/bin/..mode <- "4755"; /d/bin/..acl/(uid <- #1001, access <- read); /d/bin/..acl/(gid <- #100, access <- write);'
	run "$R4SH" -f "$T/dump.r4" "$NEW"
	assert_success
	# the same bytes, modes, owners, times, links
	"$R4" export -p "$IMG" / "$T/e1" >/dev/null
	"$R4" export -p "$NEW" / "$T/e2" >/dev/null
	diff -r "$T/e1" "$T/e2"
	diff <(listing "$T/e1") <(listing "$T/e2")
	run grep -c . <(listing "$T/e2")
	assert_output 40
	cmp "$T/host/d/big/random" "$T/e2/d/big/random"
	# the aggregate, its fields and rules, the invert, the audit setting
	run "$R4SH" -c '/etc/passwd/..type' -c '/etc/passwd/alice/shell' -c '/etc/passwd/alice/shell/..acl' \
		-c '/etc/passwd/alice/passwd/..mode' -c '/etc/passwd' -c '/d/motd' -c '/d/motd/..type' \
		-c '/d/bin/..acl' -c '/d/head/..audit' -c '/d/hard/..nlink' "$NEW"
	assert_success
	assert_output - <<'EOF'
aggregate
/bin/bash
uid 1001 write
0600
root:x:0:0:root:/root:/bin/sh
alice:x:1001:1001:Alice:/home/alice:/bin/bash
Hello, world
invert
uid 1001 read
gid 100 write
/d/audit.log
2
EOF
	# (the log as it was: turning audit on again did not add to it)
	run cat "$T/e2/d/audit.log"
	assert_output --regexp '^[0-9]+ 0 setattr /d/head 0$'
	# dumped again, the new image gives the same script
	run "$R4SH" -c .dump "$NEW"
	assert_success
	diff <(tail -n +2 "$T/dump.r4") <(printf '%s\n' "$output" | tail -n +2)
}

@test ".dump PATH makes that subtree only, at its own path, its parents as mkdir -p" {
	build_tree
	run "$R4SH" -c 'cd /d' -c '.dump sub' "$IMG"
	assert_success
	printf '%s\n' "$output" >"$T/dump.r4"
	assert_line --index 0 --regexp '^# r4sh \.dump of /d/sub on the image '
	assert_line 'if not exist /d then /..new/(name <- "d", type <- directory)'
	assert_line '/d/..new/(name <- "sub", type <- directory)'
	refute_output --partial '/etc'
	refute_output --partial '/d/bin'
	run "$R4SH" -f "$T/dump.r4" "$NEW"
	assert_success
	run "$R4SH" -c 'ls /' -c 'ls /d' -c '/d/sub/deeper' -c '/d/sub/deeper/..mtime' -c '/d/sub/..mtime' "$NEW"
	assert_output - <<'EOF'
d
sub
x
1500000000
1400000000
EOF
}

@test ".dump: what R4L cannot make or the identity cannot read is said and left out: exit 1" {
	mkdir -p "$T/host/odd"
	echo in >"$T/host/odd/keep"
	echo x >"$T/host/odd/..dots"
	mkfifo "$T/host/odd/pipe"
	"$R4" import "$IMG" "$T/host" / >/dev/null
	"$R4SH" -c 'mkdir /priv' -c '/priv/s <- "secret"' -c '/priv/..mode <- "0700"' \
		-c '/odd/mine <- "0600"' -c '/odd/mine/..mode <- "0600"' "$IMG" >/dev/null
	run bash -c '"$0" -c ".dump /odd" "$1" >"$2"' "$R4SH" "$IMG" "$T/dump.r4"
	assert_failure 1
	assert_line "<command>:1:7: error: .dump: cannot dump '/odd/..dots': R4L makes no name that starts with '..'"
	assert_line "<command>:1:7: error: .dump: cannot dump '/odd/pipe': R4L makes no device, fifo or socket"
	run cat "$T/dump.r4"
	assert_line '# left out: "/odd/pipe" (R4L makes no device, fifo or socket)'
	run "$R4SH" -f "$T/dump.r4" "$NEW"
	assert_success
	run "$R4SH" -c 'ls /odd' -c '/odd/keep' "$NEW"
	assert_output $'keep\nmine\nin'
	# as uid 1000: the private directory is made, empty; the 0600 file not
	run "$R4SH" --as 1000 -c .dump "$IMG"
	assert_failure 1
	assert_line "<command>:1:1: error: .dump: cannot dump '/odd/mine': Permission denied"
	assert_line "<command>:1:1: error: .dump: cannot dump '/priv': Permission denied"
	assert_line '/..new/(name <- "priv", type <- directory)'
	refute_line --partial 'secret'
}

@test ".dump through a live mount gives the script .dump gives on the image" {
	rm "$IMG"
	fuse_setup 64M
	build_tree
	mount_r4
	# (on the mount an aggregate is a file of its text, an invert one of its
	# parts: R4L still reads them as what they are)
	run bash -c '"$0" -c .dump "$1" >"$2"' "$R4SH" "$MNT" "$T/mount.r4"
	assert_success
	run bash -c '"$0" --read-only -c .dump "$1" >"$2"' "$R4SH" "$IMG" "$T/image.r4"
	assert_success
	umount_r4
	run head -1 "$T/mount.r4"
	assert_output --regexp "^# r4sh \.dump of / on the mount $MNT, "
	grep -q '^/etc/..new/(name <- "passwd", type <- aggregate, format <- passwd) <- "root:' "$T/mount.r4"
	grep -q '^/etc/passwd/alice/shell/..uid <- #0; ' "$T/mount.r4"
	diff <(tail -n +2 "$T/image.r4") <(tail -n +2 "$T/mount.r4")
}
