#!/usr/bin/env bats
# r4 logdump, the journal as it lies (docs/fsck.md, "The journal as it lies"): a
# settled image has nothing unplayed; a commit cut after its header
# (R4_TEST_FAULT fails the sync that follows it) shows with its wander
# record and pairs, as debugfs.reiser4 -j prints them, and -v says what
# each wandered copy holds; a read-write open replays it.  A broken
# journal, usage, bad inputs, an image in use by a mount.

bats_require_minimum_version 1.5.0

setup() { load helper; r4_setup; }
teardown() {
	[ -z "${MNT:-}" ] || fuse_teardown
	r4_teardown
}

# debugfs.reiser4 -j IMG's header and footer: "COMMITTED FLUSHED FREE OID FILES"
debugfs_ends() {
	debugfs.reiser4 -j "$1" 2>/dev/null |
		awk '/^last commited:/ {c = $3} /^last flushed:/ {f = $3}
		     /^free blocks:/ && !fb {fb = $3} /^next oid:/ && !o {o = $3}
		     /^used oids:/ && !u {u = $3} END {print c, f, fb, o, u}'
}

# The same from r4 logdump's text ($output)
r4_ends() {
	awk '/^journal header/ {c = $NF} /^journal footer/ {f = $NF}
	     /^  free blocks/ && !fb {fb = $3; o = $8; u = $5; sub(",", "", fb); sub(",", "", u)}
	     END {print c, f, fb, o, u}' <<<"$output"
}

# An image whose last commit is on disk up to its header, not in place
unplayed() {
	"$R4" mkfs "$1" 16M >/dev/null
	"$R4" run -c '/a <- "hello"' "$1"
	R4_TEST_FAULT=sync:2 run "$R4" run -c '/b <- "world"' "$1"
	assert_failure
	assert_output --partial 'cannot commit: Input/output error'
}

@test "a settled image: header and footer name one transaction, nothing unplayed" {
	"$R4" mkfs "$T/a.img" 16M >/dev/null
	"$R4" run -c '/a <- "hello"' "$T/a.img"
	run "$R4" logdump "$T/a.img"
	assert_success
	assert_line --index 0 --regexp '^journal header \(block 19\): last committed: tx head [0-9]+$'
	assert_line --index 1 --regexp '^journal footer \(block 20\): last played: tx head [0-9]+$'
	assert_line --index 2 --regexp '^  free blocks [0-9]+, files 2, next oid 0x10001$'
	assert_line --index 3 'no unplayed transactions'
	assert_equal "${#lines[@]}" 4
	local tx=${lines[0]##* }
	assert_equal "${lines[1]##* }" "$tx"
	if command -v debugfs.reiser4 >/dev/null; then
		assert_equal "$(r4_ends)" "$(debugfs_ends "$T/a.img")"
	fi
}

@test "a commit cut after its header: the transaction and its pairs, as debugfs.reiser4 -j has them" {
	unplayed "$T/a.img"
	run "$R4" logdump "$T/a.img"
	assert_success
	local committed=${lines[0]##* } played=${lines[1]##* }
	[ "$committed" != "$played" ]
	assert_line --index 3 "transaction 1: tx head $committed, 1 wander record, previous: tx head $played"
	assert_line --index 4 --regexp '^  after it: free blocks [0-9]+, files 3, next oid 0x10002$'
	assert_line --index 5 --regexp '^  wander record 1 at block [0-9]+: 2 blocks$'
	assert_line --index 6 --regexp '^    17 -> [0-9]+$'
	assert_line --index 7 --regexp '^    [0-9]+ -> [0-9]+$'
	assert_line --index 8 '1 committed transaction not played: a read-write open replays it'
	assert_equal "${#lines[@]}" 9
	need_cmd debugfs.reiser4
	assert_equal "$(r4_ends)" "$(debugfs_ends "$T/a.img")"
	assert_equal "$(grep -E '^    [0-9]+ -> ' <<<"$output" | tr -s ' ' | sed 's/^ //')" \
		"$(debugfs.reiser4 -j "$T/a.img" 2>/dev/null | grep -E '^[0-9]+ -> [0-9]+$')"
}

@test "-v: what each wandered copy holds; a read-write open replays it, then nothing is left" {
	unplayed "$T/a.img"
	local root
	root=$("$R4" info "$T/a.img" | awk '/^root block:/ {print $3}')
	run "$R4" logdump -v "$T/a.img"
	assert_success
	assert_line --regexp "^    17 -> [0-9]+  format super block: root $root, height 2, free blocks [0-9]+$"
	assert_line --regexp '^    [0-9]+ -> [0-9]+  leaf node, [0-9]+ items$'
	# the image is as it was: logdump replays nothing, not even in memory
	run "$R4" logdump "$T/a.img"
	assert_line '1 committed transaction not played: a read-write open replays it'
	"$R4" run -c '/c <- "x"' "$T/a.img"
	run "$R4" logdump "$T/a.img"
	assert_success
	assert_line --index 3 'no unplayed transactions'
	run "$R4" cat "$T/a.img" /b
	assert_output world
	fsck_both "$T/a.img"
}

@test "a broken journal: the lines read before it, then the block that is wrong" {
	unplayed "$T/a.img"
	run "$R4" logdump "$T/a.img"
	local rec=${lines[5]#  wander record 1 at block }
	rec=${rec%%:*}
	printf XXXXXXXX | dd of="$T/a.img" bs=4096 seek="$rec" conv=notrunc status=none
	run --separate-stderr "$R4" logdump "$T/a.img"
	assert_failure 1
	assert_equal "${#lines[@]}" 5
	assert_line --index 3 --partial 'transaction 1: tx head '
	assert_equal "$stderr" "r4: corrupt image at block $rec: no wander record (wrong magic)
r4: logdump '$T/a.img': Structure needs cleaning (corrupt image)"
}

@test "usage, -h, and what is not an image" {
	run "$R4" logdump -h
	assert_success
	assert_line --index 0 --partial 'usage: r4 logdump [-v] IMAGE'
	run "$R4" logdump
	assert_failure 2
	run "$R4" logdump -x "$T/a.img"
	assert_failure 2
	run "$R4" logdump "$T/none.img"
	assert_failure 1
	assert_output "r4: cannot open image '$T/none.img': No such file or directory"
	head -c 1M /dev/zero >"$T/zero.img"
	run "$R4" logdump "$T/zero.img"
	assert_failure 1
	assert_output --partial "r4: cannot open image '$T/zero.img'"
}

@test "an image in use by a mount: read beside it, and it says so" {
	fuse_setup 32M
	mount_r4 -o sync
	echo data >"$MNT/f"	# (-o sync: committed at once, left unplayed)
	sync "$MNT/f"	# (fsync: nothing left to commit; nothing played)
	run "$R4" logdump "$IMG"
	assert_success
	assert_line --index 0 --partial "note: $IMG is in use by r4fuse (pid "
	assert_line --index 1 --regexp '^journal header \(block 19\): last committed: tx head [0-9]+$'
	assert_line --index 2 'journal footer (block 20): last played: none'
	assert_line --index 4 --regexp '^transaction 1: tx head [0-9]+, 1 wander record, previous: none$'
	assert_line --regexp '^[0-9]+ committed transactions not played: a read-write open replays them$'
	local before=${lines[-1]%% *}
	echo more >"$MNT/g"	# (the journal's window holds this one too)
	run "$R4" logdump "$IMG"
	assert_success
	assert_line --index 4 --regexp '^transaction 1: tx head [0-9]+, 1 wander record, previous: none$'
	[ "${lines[-1]%% *}" -gt "$before" ]
	umount_r4
	run "$R4" logdump "$IMG"
	assert_success
	assert_line --index 3 'no unplayed transactions'
}
