#!/usr/bin/env bats
# r4fuse: what fstests found on the mount (issue 23), each as the test
# that failed saw it: generic/309 (a rename's times), generic/258 (times
# before 1970), generic/683 and 685 (set-id bits after fallocate),
# generic/676 (seekdir in a large directory), generic/126 (execute
# without read), generic/078 (renameat2's RENAME_WHITEOUT).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

# renameat2(2) with flags (1: RENAME_NOREPLACE, 2: RENAME_EXCHANGE, 4:
# RENAME_WHITEOUT), through perl's syscall
renameat2() {
	local nr
	case $(uname -m) in
	x86_64) nr=316 ;;
	aarch64) nr=276 ;;
	*) skip "renameat2's syscall number for $(uname -m) not known here" ;;
	esac
	perl -e 'syscall($ARGV[0], -100, $ARGV[1], -100, $ARGV[2], $ARGV[3] + 0) == 0 or die "$!\n"' \
		"$nr" "$@"
}

# Each ctime in $2 (one a line) later than the one on its line in $1.
all_later() {
	paste <(echo "$1") <(echo "$2") | while read -r before after; do
		[[ $after > $before ]] || fail "ctime $before, then $after"
	done
}

@test "generic/309: a rename over an entry stamps both directories and what it replaced" {
	mount_r4
	mkdir "$MNT/d1" "$MNT/d2"
	touch "$MNT/d1/a" "$MNT/d2/a" "$MNT/d1/x" "$MNT/d2/y"
	ln "$MNT/d2/a" "$MNT/d2/b"	# the replaced file lives on as b
	touch -m -d @1000 "$MNT/d1" "$MNT/d2" "$MNT/d2/b"
	c0=$(stat -c %.9Z "$MNT/d1" "$MNT/d2" "$MNT/d2/b")
	mv "$MNT/d1/a" "$MNT/d2/a"
	run stat -c %Y "$MNT/d1" "$MNT/d2" "$MNT/d2/b"
	refute_line --index 0 1000
	refute_line --index 1 1000
	assert_line --index 2 1000	# (b's contents did not change)
	all_later "$c0" "$(stat -c %.9Z "$MNT/d1" "$MNT/d2" "$MNT/d2/b")"
	# RENAME_EXCHANGE across directories: both directories, both files
	touch -m -d @1000 "$MNT/d1" "$MNT/d2"
	c0=$(stat -c %.9Z "$MNT/d1" "$MNT/d2" "$MNT/d1/x" "$MNT/d2/y")
	renameat2 "$MNT/d1/x" "$MNT/d2/y" 2
	run stat -c %Y "$MNT/d1" "$MNT/d2"
	refute_line 1000
	all_later "$c0" "$(stat -c %.9Z "$MNT/d1" "$MNT/d2" "$MNT/d2/y" "$MNT/d1/x")"
	umount_r4
	run "$R4" fsck "$IMG"
	assert_success
}

@test "generic/258: a time before 1970 is the format's first second, not 2096" {
	mount_r4
	touch "$MNT/old"
	touch -d '1960-01-01 00:00:00 UTC' "$MNT/old"
	run stat -c '%.9X %.9Y' "$MNT/old"
	assert_output '0.000000000 0.000000000'
	umount_r4
	# as stored: what the next mount, r4sh and fsck.reiser4 read
	run "$R4SH" -c '/old/..atime' -c '/old/..mtime' "$IMG"
	assert_output $'0\n0'
	mount_r4
	run stat -c '%X %Y' "$MNT/old"
	assert_output '0 0'
	umount_r4
	fsck_reiser4 "$IMG"
}

# generic/683 (fallocate) and 685 (fallocate --zero-range): the mode and
# size of a file of root's, mode $2, after $1 (nobody: uid 65534, no
# member of its group; or root) allocates 64 KiB in it with fallocate $3.
setid_after() {
	local who=$1 mode=$2 op=$3
	rm -f "$MNT/w/f"
	touch "$MNT/w/f"
	chmod "$mode" "$MNT/w/f"
	if [ "$who" = root ]; then
		fallocate $op -l 64K "$MNT/w/f"
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups fallocate $op -l 64K "$MNT/w/f"
	fi
	stat -c '%a %s' "$MNT/w/f"
}

@test "generic/683, 685: fallocate and zero-range by a non-member drop setuid and setgid" {
	need_cmd setpriv
	need_cmd fallocate
	"$R4SH" -c 'mkdir /w' -c '/w/..mode <- "0777"' "$IMG" >/dev/null
	public_mnt
	mount_r4 -o allow_other
	for op in "" -z; do
		run setid_after nobody 6666 "$op"
		assert_output '666 65536'
		run setid_after nobody 6676 "$op"
		assert_output '676 65536'
		run setid_after nobody 4666 "$op"
		assert_output '666 65536'
		run setid_after root 6676 "$op"
		assert_output '6676 65536'
	done
	# inside the file's data, and truncate(2): the kernel's FUSE sends a
	# SETATTR dropping setuid alone (the rule before Linux 6.2) first, or
	# with the size; r4 drops setgid too
	for op in "fallocate -o 4096 -l 4096" "fallocate -z -o 4096 -l 4096" "truncate -s 100"; do
		head -c 16384 /dev/zero >"$MNT/w/g"
		chmod 6666 "$MNT/w/g"
		stat "$MNT/w/g" >/dev/null
		setpriv --reuid=65534 --regid=65534 --clear-groups $op "$MNT/w/g"
		run stat -c '%a' "$MNT/w/g"
		assert_output 666
	done
	umount_r4
	run "$R4" fsck "$IMG"
	assert_success
}

@test "generic/676: seekdir to any telldir position of a 4000-entry directory, in any open" {
	mount_r4
	mkdir "$MNT/big"
	(cd "$MNT/big" && seq -f 'entry-%g-of-a-long-name' 4000 | xargs touch)
	run perl -e '
		my $d = "$ARGV[0]/big";
		sub rest { my ($dh, $n) = @_; my @r;
			while (@r < $n && defined(my $e = readdir($dh))) { push @r, $e } "@r" }
		opendir(my $dh, $d) or die;
		my (@tell, @after, $n);
		while (1) {
			if ($n % 500 == 7) { push @tell, telldir($dh); push @after, rest($dh, 20); $n += 20 }
			defined(readdir($dh)) or last;
			$n++;
		}
		print "entries $n marks ", scalar(@tell), "\n";
		# back to an early one, then to a later one, then through the rest
		for my $i (1, 7, 0, 5, 3) {
			seekdir($dh, $tell[$i]);
			print "seekdir $i: ", rest($dh, 20) eq $after[$i] ? "same" : "differs", "\n";
		}
		# another open of the directory takes the same positions
		opendir(my $other, $d) or die;
		seekdir($other, $tell[6]);
		print "other open: ", rest($other, 20) eq $after[6] ? "same" : "differs", "\n";
		# an entry gone after its position was handed out: the position stays
		my ($gone) = split / /, $after[1];
		unlink("$d/$gone") or die;
		seekdir($dh, $tell[2]);
		print "after unlink: ", rest($dh, 20) eq $after[2] ? "same" : "differs", "\n";
	' "$MNT"
	assert_success
	assert_output - <<'OUT'
entries 4002 marks 8
seekdir 1: same
seekdir 7: same
seekdir 0: same
seekdir 5: same
seekdir 3: same
other open: same
after unlink: same
OUT
}

@test "generic/126: a file its caller may execute but not read runs; reading it is refused" {
	need_cmd setpriv
	public_mnt
	mount_r4 -o allow_other
	cp /bin/true "$MNT/t"
	chmod 0711 "$MNT/t"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$MNT/t"
	assert_success
	run setpriv --reuid=65534 --regid=65534 --clear-groups cat "$MNT/t"
	assert_failure
	assert_output --partial 'Permission denied'
	chmod 0744 "$MNT/t"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$MNT/t"
	assert_failure
	assert_output --partial 'Permission denied'
	umount_r4
}

@test "generic/078: RENAME_WHITEOUT moves the file and leaves a character device 0:0 at its name" {
	mount_r4
	mkdir -p "$MNT/d1/sub" "$MNT/d2"
	echo one >"$MNT/d1/a"
	echo two >"$MNT/d2/b"
	ino=$(stat -c %i "$MNT/d1/a")
	renameat2 "$MNT/d1/a" "$MNT/d2/b" 4	# over b, to another directory
	run stat -c '%F %t:%T %a %h %u:%g %s' "$MNT/d1/a"
	assert_output 'character special file 0:0 0 1 0:0 0'
	run stat -c '%i %h' "$MNT/d2/b"
	assert_output "$ino 1"
	run cat "$MNT/d2/b"
	assert_output one
	# NOREPLACE too, to a free name; a directory
	renameat2 "$MNT/d2/b" "$MNT/d2/c" 5
	renameat2 "$MNT/d1/sub" "$MNT/d2/sub" 4
	# refused: NOREPLACE onto a name (a whiteout), EXCHANGE with WHITEOUT
	run renameat2 "$MNT/d2/c" "$MNT/d1/a" 5
	assert_failure
	assert_output 'File exists'
	run renameat2 "$MNT/d2/c" "$MNT/d1/a" 6
	assert_failure
	assert_output 'Invalid argument'
	check() {
		stat -c '%n %F %t:%T %h' "$MNT/d1/a" "$MNT/d1/sub" "$MNT/d2/b" "$MNT/d2/c" \
			"$MNT/d2/sub" "$MNT/d1" "$MNT/d2"
		ls "$MNT/d1" "$MNT/d2"
		cat "$MNT/d2/c"
	}
	want=$(cat <<OUT
$MNT/d1/a character special file 0:0 1
$MNT/d1/sub character special file 0:0 1
$MNT/d2/b character special file 0:0 1
$MNT/d2/c regular file 0:0 1
$MNT/d2/sub directory 0:0 2
$MNT/d1 directory 0:0 2
$MNT/d2 directory 0:0 3
$MNT/d1:
a
sub

$MNT/d2:
b
c
sub
one
OUT
	)
	run check
	assert_output "$want"
	umount_r4
	fsck_both "$IMG"
	# as stored: the next mount sees the same
	mount_r4
	run check
	assert_output "$want"
	umount_r4
}
