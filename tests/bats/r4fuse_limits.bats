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

# close_after FILE MODE TEXT: open FILE (a perl MODE: "+<" reads and
# writes), write TEXT, close; prints "write N|ERROR" and "close 0|ERROR".
close_after() {
	perl -e 'open(my $f, $ARGV[1], $ARGV[0]) or die "open: $!\n";
		my $n = syswrite($f, $ARGV[2]); print "write ", defined $n ? $n : $!, "\n";
		print "close ", close($f) ? 0 : $!, "\n"' "$@"
}

@test "the control file: a failing command fails write(2) write-only, close(2) otherwise" {
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
	mount_r4
	# echo's shell ignores close(2): the write says it
	run bash -c "echo '/bank/nope/x <- \"1\"' > '$MNT/..reiser4'"
	assert_failure
	assert_output --partial 'No such file or directory'
	run sh -c "echo '/bank/nope/x <- \"1\"' > '$MNT/..reiser4'"
	assert_failure
	echo '/bank/alice <- "60"' >"$MNT/..reiser4"
	run cat "$MNT/bank/alice"
	assert_output 60
	# a text still incomplete (an open quote) waits for more: at close it
	# fails close(2) alone, which the shell does not report
	run bash -c "echo '/bank/alice <- \"unclosed' > '$MNT/..reiser4'"
	assert_success
	run cat "$MNT/bank/alice"
	assert_output 60
	# a command written in pieces runs once it is complete, as one unit
	{ echo '/bank/alice <-'; echo '"59"'; } >"$MNT/..reiser4"
	run cat "$MNT/bank/alice"
	assert_output 59
	{ echo '/bank/(alice <- "61",'; echo 'bob <- "51")'; } >"$MNT/..reiser4"
	run cat "$MNT/bank/alice" "$MNT/bank/bob"
	assert_output 6151
	# one write, one command: a failed one does not stop the next
	run bash -c "{ echo '/bank/nope/x <- \"1\"'; echo '/bank/bob <- \"52\"'; } > '$MNT/..reiser4'"
	assert_output --partial 'No such file or directory'
	run cat "$MNT/bank/bob"
	assert_output 52
	# no newline: the command runs at close, which fails
	run bash -c "/usr/bin/printf '%s' '/bank/nope/x <- \"1\"' > '$MNT/..reiser4'"
	assert_failure
	assert_output --partial 'No such file or directory'
	# opened for reading too: the answer is read back, and a failure
	# closed unread fails close(2)
	run bash -c "exec 3<>'$MNT/..reiser4'; printf '%s\n' '/bank/alice <- \"0\"; /bank/x/y <- \"1\"' >&3; cat <&3"
	assert_line "<control>:1:21: error: cannot write '/bank/x': No such file or directory"
	run close_after "$MNT/..reiser4" '+<' '/bank/x/y <- "1"'
	assert_output $'write 16\nclose No such file or directory'
	run close_after "$MNT/..reiser4" '+<' '/bank/bob <- "53"'
	assert_output $'write 17\nclose 0'
	run cat "$MNT/bank/alice" "$MNT/bank/bob"
	assert_output 6153
}

@test "an aggregate's text: a malformed line fails write(2), and then nothing is applied" {
	"$R4SH" -c 'mkdir /etc' -c '/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"' \
		"$IMG" >/dev/null
	mount_r4
	run bash -c "echo 'no colons' > '$MNT/etc/passwd'"
	assert_failure
	assert_output --partial 'Invalid argument'
	run cat "$MNT/etc/passwd"
	assert_output 'root:x:0:0:root:/root:/bin/sh'
	# a record twice, in two writes: the second fails, nothing is applied
	run bash -c "{ echo 'a:x:1:1::/a:/bin/sh'; echo 'a:x:1:1::/a:/bin/sh'; } > '$MNT/etc/passwd'"
	assert_failure
	assert_output --partial 'Invalid argument'
	run cat "$MNT/etc/passwd"
	assert_output 'root:x:0:0:root:/root:/bin/sh'
	# a line split across writes is judged once whole
	{ printf 'root:x:0:0:root:/root:'; printf '/bin/sh\nbob:x:1:1::/b:/bin/sh\n'; } >"$MNT/etc/passwd"
	run cat "$MNT/etc/passwd"
	assert_output $'root:x:0:0:root:/root:/bin/sh\nbob:x:1:1::/b:/bin/sh'
	umount_r4
	run "$R4SH" -c '/etc/passwd/bob/home' "$IMG"
	assert_output /b
	fsck_reiser4 "$IMG"
}
