#!/usr/bin/env bats
# r4fuse when space runs out or the image fails (issue 21, items 3 to 5):
# a full volume refuses changes at the call, never drops acknowledged
# writes, and can always be emptied; a commit that fails makes every
# fsync and close of a file whose changes were lost say so, once per
# descriptor, turns the mount read-only and names what was lost; a file
# the lost group made answers ESTALE, never another file's bytes; a
# rename with RENAME_WHITEOUT on a full volume (generic/626).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

# pwrite_fsync FILE OFFSET SRC: write SRC's bytes at OFFSET of FILE, then
# fsync it; prints "write N|ERROR" and "fsync 0|ERROR" on two lines.
pwrite_fsync() {
	perl -e 'use IO::Handle; use Fcntl;
		sysopen(my $f, $ARGV[0], O_WRONLY) or die "open: $!\n";
		open(my $s, "<", $ARGV[2]) or die; binmode $s; local $/; my $d = <$s>;
		sysseek($f, $ARGV[1], 0);
		my $n = syswrite($f, $d); print "write ", defined $n ? $n : $!, "\n";
		print "fsync ", $f->sync ? 0 : $!, "\n"' "$@"
}

@test "a full volume: an overwrite of committed data is refused, not dropped; removal always works" {
	mount_r4_fg
	dd if=/dev/urandom of="$MNT/big" bs=1M count=40 conv=fsync 2>/dev/null
	cp "$MNT/big" "$T/big.0"
	# full: 1 MiB pieces, then 4 KiB ones, each fsync'ed
	run dd if=/dev/zero of="$MNT/fill" bs=1M conv=fsync
	assert_failure
	assert_output --partial 'No space left on device'
	run dd if=/dev/zero of="$MNT/fill2" bs=4k conv=fsync
	assert_output --partial 'No space left on device'
	# rewriting committed data needs blocks for its journal copies: refused
	# at the call, nothing changed, and nothing else of the group dropped
	head -c 1048576 /dev/urandom >"$T/new"
	echo "acknowledged" >"$MNT/note"
	run pwrite_fsync "$MNT/big" 3145728 "$T/new"
	assert_line --index 0 'write No space left on device'
	assert_line --index 1 'fsync 0'
	cmp "$MNT/big" "$T/big.0"
	run cat "$MNT/note"
	assert_output acknowledged
	run df -B4096 --output=avail "$MNT"
	assert_line --index 1 --regexp '^ *[0-9]{1,2}$'
	# removing works on the full volume; then the overwrite fits
	rm "$MNT/fill" "$MNT/fill2"
	run pwrite_fsync "$MNT/big" 3145728 "$T/new"
	assert_line --index 0 'write 1048576'
	assert_line --index 1 'fsync 0'
	dd if="$T/new" of="$T/big.0" bs=1M seek=3 conv=notrunc 2>/dev/null
	umount_r4
	run grep -c 'lost\|commit failed' "$T/fuse.log"
	assert_output 0
	"$R4" cat "$IMG" /big >"$T/big.1"
	cmp "$T/big.1" "$T/big.0"
	run "$R4" cat "$IMG" /note
	assert_output acknowledged
	fsck_reiser4 "$IMG"
}

@test "a full volume of small files empties: rm -r in one go, df's Avail keeps the reserve" {
	mount_r4
	mkdir "$MNT/d"
	# small files until the volume refuses (tails and stat data: node space)
	run perl -e 'my $d = "x" x 3000;
		for my $i (1 .. 100000) {
			my $ok = open(my $f, ">", "$ARGV[0]/d/f$i");
			$ok &&= print {$f} $d;
			$ok &&= close($f);
			$ok or do { print "full at $i: $!\n"; exit 0 } }' "$MNT"
	assert_output --regexp '^full at [0-9]+: No space left on device$'
	run df -B4096 --output=avail,size "$MNT"
	read -r avail size <<<"${lines[1]}"
	[ "$avail" -lt 128 ]	# (less than a create and its tail costs at most)
	rm -r "$MNT/d"
	run ls "$MNT"
	assert_output ''
	run df -B4096 --output=avail "$MNT"
	[ "${lines[1]}" -gt 15000 ]
	umount_r4
	fsck_reiser4 "$IMG"
}

@test "a commit that fails: fsync and close say so once per descriptor, the mount turns read-only" {
	"$R4SH" -c '/old <- "old"' "$IMG" >/dev/null
	# the image's first write fails: the first commit
	R4_TEST_FAULT=write:1:5 mount_r4_fg
	run perl -e 'use IO::Handle; use Fcntl; use POSIX;
		sysopen(my $n, "$ARGV[0]/new", O_CREAT | O_WRONLY, 0644) or die;
		sysopen(my $o, "$ARGV[0]/old", O_WRONLY) or die;
		sysopen(my $r, "$ARGV[0]/old", O_RDONLY) or die;
		syswrite($n, "dropped") == 7 or die; syswrite($o, "NEW") == 3 or die;
		print "fsync ", $n->sync ? 0 : $!, "\n";
		print "fsync again ", $n->sync ? 0 : $!, "\n";
		print "close ", close($o) ? 0 : $!, "\n";
		print "fstat ", (stat($n))[7] // $!, "\n";
		my $b; sysread($r, $b, 10); print "read $b\n";
		print "create ", open(my $x, ">", "$ARGV[0]/x") ? 0 : $!, "\n"' "$MNT"
	assert_output - <<'EOF'
fsync Input/output error
fsync again 0
close Input/output error
fstat Stale file handle
read old
create Read-only file system
EOF
	umount_r4
	run cat "$T/fuse.log"
	assert_line --partial 'commit failed (Input/output error): the changes since the last commit are lost'
	assert_line --partial 'lost: changes to /old (inode '
	assert_line --partial 'lost: changes to /new (inode '
	assert_line --partial 'mounted read-only now (errors=remount-ro)'
	run "$R4SH" -c 'ls /' -c 'cat /old' "$IMG"
	assert_output --partial 'old'
	refute_output --partial 'new'
	fsck_reiser4 "$IMG"
}

@test "-o errors=continue: a lost group leaves the mount as writable as the image is" {
	R4_TEST_FAULT=write:1:5 mount_r4_fg -o errors=continue
	echo a >"$MNT/a"
	run perl -e 'use IO::Handle; open(my $f, ">>", $ARGV[0]) or die;
		print "fsync ", $f->sync ? 0 : $!, "\n"' "$MNT/a"
	assert_output 'fsync Input/output error'
	# the image could not be written: the engine stops writing until
	# mounted again (EIO), but the bridge itself refuses nothing
	run touch "$MNT/b"
	assert_failure
	assert_output --partial 'Input/output error'
	umount_r4
	refute grep -q 'mounted read-only now' "$T/fuse.log"
	"$R4FUSE" "$IMG" "$MNT" -o errors=bogus 2>"$T/err" && false
	run cat "$T/err"
	assert_output 'r4fuse: errors=bogus: want remount-ro or continue'
}

@test "fallocate of all but 512 KiB of what df says is free succeeds, and the volume is full (generic/103)" {
	mount_r4_fg
	for i in $(seq 16); do touch "$MNT/f.$i"; done
	avail=$(df -P -k "$MNT" | awk 'NR == 2 { print $4 }')
	want=$(( (avail - 512) * 1024 ))
	fallocate -l "$want" "$MNT/spc"
	run stat -c %s "$MNT/spc"
	assert_output "$want"
	run df -P -k "$MNT"
	assert_line --index 1 --regexp ' [0-9]{1,3} +100% '
	# what is left is little, and reports so; removal works
	run fallocate -l 4M "$MNT/more"
	assert_output --partial 'No space left on device'
	rm "$MNT"/f.*
	umount_r4
	"$R4" cat "$IMG" /spc | cmp - <(head -c "$want" /dev/zero)
	fsck_reiser4 "$IMG"
}

@test "generic/626: RENAME_WHITEOUT on a full volume is refused, nothing changed; a plain rename is done" {
	[ "$(uname -m)" = x86_64 ] || skip "renameat2's syscall number: x86_64's here"
	mount_r4
	for i in $(seq 0 63); do echo "$i" >"$MNT/src$i"; done
	run dd if=/dev/zero of="$MNT/fill" bs=1M conv=fsync
	assert_output --partial 'No space left on device'
	run perl -e 'for my $i (1 .. 10000) {
			open(my $f, ">", "$ARGV[0]/e$i") or do { print "$!\n"; exit 0 } }' "$MNT"
	assert_output 'No space left on device'
	# renameat2(srcI, dstI, RENAME_WHITEOUT) of each, then one without it
	r2() {
		perl -e 'my ($d, $fl) = (shift, shift);
			for (@ARGV) { my ($a, $b) = split /:/;
				print syscall(316, -100, "$d/$a", -100, "$d/$b", $fl + 0) ? "$!\n" : "ok\n" }' "$@"
	}
	run r2 "$MNT" 4 $(for i in $(seq 0 63); do echo "src$i:dst$i"; done)
	assert_output "$(for i in $(seq 0 63); do echo 'No space left on device'; done)"
	run r2 "$MNT" 0 src0:moved
	assert_output ok
	umount_r4
	mount_r4
	run ls "$MNT"
	refute_line --regexp '^dst'
	for i in $(seq 1 63); do
		[ "$(stat -c %F "$MNT/src$i")" = 'regular file' ] && [ "$(cat "$MNT/src$i")" = "$i" ]
	done
	run cat "$MNT/moved"
	assert_output 0
	# with room again
	rm "$MNT/fill"
	run r2 "$MNT" 4 src1:dst1
	assert_output ok
	run stat -c '%F %t:%T' "$MNT/src1"
	assert_output 'character special file 0:0'
	umount_r4
	fsck_both "$IMG"
}
