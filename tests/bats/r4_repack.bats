#!/usr/bin/env bats
# r4 repack (issue 24, docs/repack.md) on an image made with r4 import of
# a small tree and then fragmented by appends in turns, each its own
# transaction: every file moves into one run, reads and lists as before,
# r4 fsck and fsck.reiser4 are clean, measurefs.reiser4's data
# fragmentation drops to 0; a second run moves nothing and writes
# nothing; --dry-run says what would move and writes nothing; bad inputs
# and an image a mount holds are refused, changing nothing.

bats_require_minimum_version 1.5.0

setup() {
	load helper
	r4_setup
	IMG=$T/a.img
}

teardown() {
	fuse_teardown
	r4_teardown
}

# A tree imported, then four rounds of appends to four files in turns.
fragmented() {
	local x y r
	mkdir -p "$T/src/d1/sub" "$T/src/d2"
	head -c 30000 /dev/urandom >"$T/src/d1/f1"
	head -c 50000 /dev/urandom >"$T/src/d1/f2"
	head -c 70000 /dev/urandom >"$T/src/d1/sub/h"
	head -c 40000 /dev/urandom >"$T/src/d2/g1"
	head -c 60000 /dev/urandom >"$T/src/d2/g2"
	echo small >"$T/src/d1/s"
	"$R4" mkfs "$IMG" 32M >/dev/null
	"$R4" import "$IMG" "$T/src" /
	x=$(head -c 9000 /dev/zero | tr '\0' x)
	y=$(head -c 9000 /dev/zero | tr '\0' y)
	for r in 1 2 3 4; do
		"$R4_BUILD/r4sh" -c "/d1/f1 <<- \"$x$r\"" -c "/d2/g1 <<- \"$y\"" \
			-c "/d1/f2 <<- \"$x\"" -c "/d1/sub/h <<- \"$y$r\"" "$IMG" >/dev/null
	done
}

# What users see: every file's bytes and every listing.
contents() {
	local f
	for f in /d1/f1 /d1/f2 /d1/s /d1/sub/h /d2/g1 /d2/g2; do
		echo "$f $("$R4" cat "$IMG" "$f" | md5sum)"
	done
	"$R4" ls "$IMG" /d1
	"$R4" ls "$IMG" /d1/sub
	"$R4" ls "$IMG" /d2
}

data_frag() {
	measurefs.reiser4 -D -y "$1" 2>/dev/null | sed -n 's/^Data fragmentation is: //p'
}

@test "r4 repack: every file in one run, contents as before, clean; a second run moves nothing" {
	need_cmd measurefs.reiser4 "reiser4progs not installed"
	fragmented
	contents >"$T/before"
	frag0=$(data_frag "$IMG")
	run --separate-stderr "$R4" repack "$IMG"
	assert_success
	assert_line --index 0 --regexp '^/: 5 files with data blocks: 5 moved \([0-9]+ blocks, [0-9]+ runs into 5\), 0 in place, 0 skipped$'
	# the layout before and after, r4 frag's figures
	assert_line --index 1 --regexp "^layout before: data fragmentation $frag0, tree fragmentation [0-9.]+, leaves [0-9.]+% packed, twigs [0-9.]+% packed, [0-9.]+ seeks per MiB$"
	assert_line --index 2 --regexp '^layout after:  data fragmentation 0\.000000, '
	[ "${#lines[@]}" = 3 ]
	[ -z "$stderr" ]	# no progress line off a terminal
	contents >"$T/after"
	diff "$T/before" "$T/after"
	fsck_both "$IMG"
	frag1=$(data_frag "$IMG")
	echo "data fragmentation $frag0 then $frag1"
	[ "$frag1" = 0.000000 ]
	awk -v a="$frag0" 'BEGIN { exit !(a > 0.01) }'

	cp "$IMG" "$T/once.img"
	run "$R4" repack "$IMG"
	assert_success
	assert_line --index 0 "/: 5 files with data blocks: 0 moved, 5 in place, 0 skipped"
	cmp "$IMG" "$T/once.img"
}

@test "r4 repack --compact: passes until one moves nothing; the free space is one run at the end; clean" {
	fragmented
	contents >"$T/before"
	run "$R4" frag --json "$IMG"
	runs0=$(sed 's/.*"free_runs": \([0-9]*\).*/\1/' <<<"$output")
	run "$R4" repack --compact "$IMG"
	assert_success
	assert_line --index 0 --regexp '^/: 5 files with data blocks: 5 moved \([0-9]+ blocks, [0-9]+ runs into 5\), 0 in place, 0 skipped$'
	assert_line --regexp '^compact: [2-4] passes; the last moved nothing$'
	run "$R4" frag --json "$IMG"
	free=$(sed 's/.*"free_blocks": \([0-9]*\).*/\1/' <<<"$output")
	assert_output --partial "\"free_runs\": 1, \"free_largest\": $free, \"free_at_end\": $free,"
	echo "free runs $runs0 then 1"
	[ "$runs0" -gt 2 ]
	contents >"$T/after"
	diff "$T/before" "$T/after"
	fsck_both "$IMG"
	# a fixed point: the next moves nothing, writes nothing
	cp "$IMG" "$T/once.img"
	run "$R4" repack --compact "$IMG"
	assert_success
	assert_line --index 0 "/: 5 files with data blocks: 0 moved, 5 in place, 0 skipped"
	assert_line --index 3 "compact: 1 pass; the last moved nothing"
	cmp "$IMG" "$T/once.img"
}

@test "r4 repack PATH: only that subtree; -v names each file moved" {
	fragmented
	contents >"$T/before"
	run "$R4" repack -v "$IMG" /d2
	assert_success
	assert_line --index 0 --regexp '^moved /d2/g1: [0-9]+ blocks in [0-9]+ runs, to 1 run at block [0-9]+$'
	assert_line --index 1 --regexp '^moved /d2/g2: [0-9]+ blocks in 1 run, to 1 run at block [0-9]+$'
	assert_line --index 2 --regexp '^/d2: 2 files with data blocks: 2 moved \([0-9]+ blocks, [0-9]+ runs into 2\), 0 in place, 0 skipped$'
	assert_line --index 3 --regexp '^layout before: '
	assert_line --index 4 --regexp '^layout after:  data fragmentation 0\.000000, '
	[ "${#lines[@]}" = 5 ]
	run "$R4" repack -n "$IMG" /d1
	assert_success
	assert_line --index 3 --regexp '^/d1: 3 files with data blocks: 3 would move '
	contents >"$T/after"
	diff "$T/before" "$T/after"
	fsck_reiser4 "$IMG"
}

@test "r4 repack --dry-run: says what would move, writes nothing; the real run moves that" {
	fragmented
	cp "$IMG" "$T/orig.img"
	run "$R4" repack --dry-run "$IMG"
	assert_success
	assert_line --index 0 --regexp '^would move /d1/f[12]: [0-9]+ blocks in [0-9]+ runs?, to 1 run at block [0-9]+$'
	assert_line --index 5 --regexp '^/: 5 files with data blocks: 5 would move \([0-9]+ blocks, [0-9]+ runs into 5\), 0 in place, 0 skipped \(dry run: nothing written\)$'
	assert_line --index 6 --regexp '^layout now:    data fragmentation '
	[ "${#lines[@]}" = 7 ]
	dry=${lines[5]/ would move/ moved}
	now=${lines[6]#layout now:   }
	cmp "$IMG" "$T/orig.img"
	run "$R4" repack "$IMG"
	assert_success
	assert_line --index 0 "${dry% (dry run: nothing written)}"
	assert_line --index 1 "layout before:$now"
}

@test "r4 repack: bad inputs are refused and change nothing" {
	fragmented
	cp "$IMG" "$T/orig.img"
	run "$R4" repack "$T/none.img"
	assert_failure 1
	assert_output "r4: cannot open image '$T/none.img': No such file or directory"
	run "$R4" repack "$IMG" /nowhere
	assert_failure 1
	assert_output "r4: repack '/nowhere': No such file or directory (nothing was changed)"
	run "$R4" repack "$IMG" /d1/f1/x
	assert_failure 1
	assert_output "r4: repack '/d1/f1/x': Not a directory (nothing was changed)"
	run "$R4" repack --commit 0 "$IMG"
	assert_failure 2
	assert_output "r4: repack: bad size '0'"
	run "$R4" repack --bogus "$IMG"
	assert_failure 2
	assert_line --index 0 "r4: repack: unknown option '--bogus'"
	run "$R4" repack "$IMG" / extra
	assert_failure 2
	run "$R4" repack
	assert_failure 2
	cmp "$IMG" "$T/orig.img"
}

@test "r4 repack of an image a mount holds: refused with the lock's words; a dry run reads beside it" {
	fuse_setup 64M
	mount_r4
	pid=$(r4fuse_pids)
	run "$R4" repack "$IMG"
	assert_failure 1
	assert_output "r4: $IMG: in use by r4fuse (pid $pid), mounted at $MNT; repack its mount point to repack it live"
	run "$R4" repack -n "$IMG"
	assert_success
	assert_line --index 0 "note: $IMG is in use by r4fuse (pid $pid), mounted at $MNT; this plans against its last commit"
	assert_line --index 1 "/: 0 files with data blocks: 0 would move, 0 in place, 0 skipped (dry run: nothing written)"
	run "$R4" repack -n "$MNT"
	assert_failure 2
	assert_output "r4: repack -n: $MNT is a mount; a dry run reads the image: r4 repack -n IMAGE, beside the mount"
	run "$R4" repack --rate 1M "$IMG"
	assert_failure 2
	assert_output "r4: repack: --rate is for a live mount (an image is repacked at full speed)"
}

# What users see through the mount: every file's bytes.
contents_live() {
	(cd "$MNT" && md5sum d1/f1 d1/f2 d1/s d1/sub/h d2/g1 d2/g2 && ls -lR --time-style=+%s.%N)
}

@test "r4 repack MNT: the pass runs in the mount; contents as before; clean; a second pass moves nothing" {
	need_cmd measurefs.reiser4 "reiser4progs not installed"
	fuse_setup 32M
	rm "$IMG"
	fragmented
	public_mnt
	mount_r4 -o allow_other
	contents_live >"$T/before"
	# only root and the user who mounted may repack it
	if command -v setpriv >/dev/null; then
		run setpriv --reuid=1000 --regid=1000 --clear-groups "$R4" repack "$MNT"
		assert_failure 1
		assert_output "r4: repack $MNT '/': Operation not permitted"
	fi
	run --separate-stderr "$R4" repack -v "$MNT"
	assert_success
	assert_line --index 0 --regexp '^moved /d1/f[12]: [0-9]+ blocks in [0-9]+ runs, to 1 run at block [0-9]+$'
	assert_line --index 5 --regexp '^/: 5 files with data blocks: 5 moved \([0-9]+ blocks, [0-9]+ runs into 5\), 0 in place, 0 skipped$'
	assert_line --index 6 --regexp '^layout before: data fragmentation 0\.[0-9]*[1-9][0-9]*, '
	assert_line --index 7 --regexp '^layout after:  data fragmentation 0\.000000, '
	[ "${#lines[@]}" = 8 ]
	contents_live >"$T/after"
	diff "$T/before" "$T/after"
	run "$R4" repack "$MNT" /d1
	assert_success
	assert_line --index 0 "/d1: 3 files with data blocks: 0 moved, 3 in place, 0 skipped"
	# compacting on the mount: the free space one run at the end
	run "$R4" repack --compact "$MNT"
	assert_success
	assert_line --regexp '^compact: [1-4] pass(es)?; the last moved nothing$'
	contents_live >"$T/after"
	diff "$T/before" "$T/after"
	umount_r4
	fsck_both "$IMG"
	[ "$(data_frag "$IMG")" = 0.000000 ]
	run "$R4" frag --json "$IMG"
	assert_output --regexp '"free_runs": 1, "free_largest": ([0-9]+), "free_at_end": \1,'
}

@test "r4 repack MNT under r4fsx: no mismatch, nothing users see changes, clean" {
	# (a quarter of the stress suites' operations: 1,500 in make check)
	local fsx=$R4_BUILD/tests/r4fsx seed=${R4_SEED:-$(date +%s)} pid passes=0 moved=0 tw
	local ops=$((${R4_STRESS_OPS:-6000} / 4))
	need_file "$fsx" "$fsx not built (make fsx)"
	fuse_setup 32M
	rm "$IMG"
	fragmented
	mount_r4
	contents_live >"$T/before"
	tw=$T/twin
	mkdir "$MNT/fsx" "$tw"
	echo "# seed $seed" >&3
	# the passes commit every 64 KiB moved, beside fsx's writes, renames,
	# truncates and punched holes (at 32 MiB/s they let fsx in between
	# files: files it wrote meanwhile hold data not placed yet, which a
	# commit places first); fsx compares every answer with a twin
	# files up to 3 MB: the passes move them 1 MiB an operation, and fsx's
	# calls come between the pieces
	"$fsx" -s "$seed" -n "$ops" -U -T -L -c 500 -l 3000000 "$MNT/fsx" "$tw" >"$T/fsx.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		run "$R4" repack --commit 64K --rate 32M "$MNT"
		[ "$status" = 0 ] || { kill "$pid" 2>/dev/null || true; echo "$output" >&2; false; }
		n=$(sed -n 's/^\/: [0-9]* files\{0,1\} with data blocks: \([0-9]*\) moved.*/\1/p' <<<"${lines[0]}")
		moved=$((moved + n)) passes=$((passes + 1))
	done
	wait "$pid" || { tail -30 "$T/fsx.log" >&2; false; }
	echo "# $passes passes moved $moved files beside r4fsx: $(tail -1 "$T/fsx.log")" >&3
	[ "$passes" -ge 2 ] && [ "$moved" -gt 5 ]
	"$fsx" -C "$MNT/fsx" "$tw" >/dev/null
	rm -rf "$MNT/fsx"
	contents_live >"$T/after"
	diff "$T/before" "$T/after"
	umount_r4
	fsck_both "$IMG"
}

@test "r4 repack MNT: on a full volume, and beside cp -a, tar and rsync -aX in and out: copies whole, nothing lost, clean" {
	local fill=0 pid
	need_cmd rsync "rsync not installed"
	fuse_setup 32M
	rm "$IMG"
	fragmented
	mount_r4
	contents_live >"$T/before"
	# full: a file grown until the volume refuses (ENOSPC, said by dd),
	# 64 KiB and then 4 KiB at a time
	run dd if=/dev/urandom of="$MNT/fill" bs=64K status=none
	assert_failure
	assert_output --partial "No space left on device"
	run dd if=/dev/urandom of="$MNT/fill" bs=4K status=none oflag=append conv=notrunc
	assert_failure
	assert_output --partial "No space left on device"
	sync "$MNT/fill"
	fill=$(md5sum <"$MNT/fill")
	# a pass moves what the room beyond the reserve for removals allows
	# and skips the rest
	run "$R4" repack "$MNT"
	assert_success
	assert_line --index 0 --regexp '^/: 6 files with data blocks: [0-9]+ moved .*, [0-9]+ skipped$'
	echo "# on the full volume: ${lines[0]}" >&3
	# copies out while a compacting pass moves under them
	"$R4" repack --compact --commit 64K --rate 8M "$MNT" >"$T/rp.out" 2>&1 &
	pid=$!
	cp -a "$MNT/d1" "$T/cp"
	tar -C "$MNT" -cf "$T/t.tar" d1 d2
	rsync -aX "$MNT/d2/" "$T/rs/"
	wait "$pid" || { cat "$T/rp.out" >&2; false; }
	diff -r "$MNT/d1" "$T/cp"
	diff -r "$MNT/d2" "$T/rs"
	mkdir "$T/tx" && tar -C "$T/tx" -xf "$T/t.tar" && diff -r "$MNT/d1" "$T/tx/d1"
	[ "$(md5sum <"$MNT/fill")" = "$fill" ]
	# room again, and copies in while passes move the old files
	rm "$MNT/fill"
	"$R4" repack --compact --commit 64K --rate 8M "$MNT" >"$T/rp.out" 2>&1 &
	pid=$!
	cp -a "$T/cp" "$MNT/cp"
	tar -C "$MNT" -xf "$T/t.tar" --transform 's,^,tx/,'
	rsync -aX "$T/rs/" "$MNT/rs/"
	wait "$pid" || { cat "$T/rp.out" >&2; false; }
	run "$R4" repack "$MNT"
	assert_success
	diff -r "$T/cp" "$MNT/cp"
	diff -r "$T/tx" "$MNT/tx"
	diff -r "$T/rs" "$MNT/rs"
	rm -r "$MNT/cp" "$MNT/tx" "$MNT/rs"
	contents_live >"$T/after"
	diff "$T/before" "$T/after"
	umount_r4
	fsck_both "$IMG"
}

@test "r4 repack MNT: unmount, a read-only remount, Ctrl-C and --stop stop the pass; what it moved stays; the next goes on" {
	local pid rc
	fuse_setup 32M
	rm "$IMG"
	fragmented
	mount_r4
	contents_live >"$T/before"
	# at 4 KiB a second, the first file's move is followed by a long wait
	"$R4" repack --rate 4K "$MNT" >"$T/out" 2>&1 &
	pid=$!
	sleep 0.3
	# (the client opens the control file a moment each tenth of a second:
	# an unmount that meets it is busy, and is tried again)
	for _ in 1 2 3; do fusermount3 -u "$MNT" 2>/dev/null && break; sleep 0.1; done
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 1 ]
	run cat "$T/out"
	assert_output "r4: repack $MNT: the mount went away: its pass stopped there, what it moved is committed; run it again to go on"
	fsck_both "$IMG"

	mount_r4
	contents_live >"$T/after"
	diff "$T/before" "$T/after"

	# a read-only remount (what mount -o remount,ro runs) stops it too,
	# and nothing is written to the image after
	"$R4" repack --rate 4K "$MNT" >"$T/out" 2>&1 &
	pid=$!
	sleep 0.3
	for _ in 1 2 3; do
		"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,ro 2>/dev/null && break
		sleep 0.1
	done
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 1 ]
	run cat "$T/out"
	assert_output "r4: repack $MNT: the mount turned read-only: its pass stopped there, what it moved is committed; run it again to go on"
	sum=$(md5sum <"$IMG")
	sleep 0.5
	[ "$(md5sum <"$IMG")" = "$sum" ]
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o remount,rw

	"$R4" repack --rate 4K "$MNT" >"$T/out" 2>&1 &
	pid=$!
	sleep 0.8
	run "$R4" repack "$MNT"
	assert_failure 1
	assert_output "r4: repack $MNT '/': a pass runs on this mount already (r4 repack --stop MNT stops it)"
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 1 ]
	run cat "$T/out"
	assert_line --index 0 --regexp '^/: [1-4] files? with data blocks: 1 moved '
	assert_line "stopped: interrupted; what was moved is committed, run it again to go on"

	# r4 repack --stop: from another process, for a pass whose client is
	# gone or elsewhere; it follows the pass to its end
	"$R4" repack --rate 4K "$MNT" >"$T/out" 2>&1 &
	pid=$!
	sleep 0.8
	run "$R4" repack --stop "$MNT"
	assert_failure 1
	assert_line --index 0 --regexp '^/: [1-5] files? with data blocks: 1 moved '
	assert_line "stopped: interrupted; what was moved is committed, run it again to go on"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 1 ]
	run "$R4" repack --stop "$MNT"
	assert_failure 1
	assert_output "r4: repack --stop $MNT: no pass runs on this mount"

	run "$R4" repack "$MNT"
	assert_success
	assert_line --index 0 --regexp '^/: 5 files with data blocks: 1 moved .*, 4 in place, 0 skipped$'
	contents_live >"$T/after"
	diff "$T/before" "$T/after"
}

# tree_frag OUTPUT-LINE: the tree fragmentation of a "layout ..." line.
tree_frag() {
	sed -n 's/.*tree fragmentation \([0-9.]*\),.*/\1/p' <<<"$1"
}

@test "r4 repack of small files in leaves only: the tree gets less fragmented, not more; a second pass moves nothing" {
	# six imports of 50 tail files each (1 to 15 KiB): their leaves
	# interleave, under several twigs; the pass puts them in key order in
	# one run, and the next finds them in place
	"$R4" mkfs "$IMG" 6M >/dev/null
	for r in 1 2 3 4 5 6; do
		mkdir -p "$T/src$r/d"
		perl -e 'for my $i (1 .. 50) {
			open(my $f, ">", "$ARGV[0]/f$i") or die;
			print $f chr(64 + $ARGV[1]) x (($i * 7919 + $ARGV[1] * 104729) % 14000 + 1000) }' \
			"$T/src$r/d" "$r"
		"$R4" import "$IMG" "$T/src$r" "/i$r"
	done
	run "$R4" repack "$IMG"
	assert_success
	assert_line --index 1 --regexp '^tree nodes: [0-9]+ moved into walk order, 0 left for want of room$'
	before=$(tree_frag "${lines[2]}")
	after=$(tree_frag "${lines[3]}")
	echo "tree fragmentation $before then $after"
	awk -v a="$before" -v b="$after" 'BEGIN { exit !(b * 4 < a * 3) }'
	for r in 1 6; do
		"$R4" cat "$IMG" "/i$r/d/f17" | cmp - "$T/src$r/d/f17"
	done
	fsck_both "$IMG"
	# the leaves in key order, one run: tails in neighbouring blocks
	run "$R4" frag "$IMG"
	assert_line --index 1 --regexp '^data fragmentation:  0\.000000 '
	# a second pass finds every twig in place and writes nothing
	cp "$IMG" "$T/once.img"
	run "$R4" repack "$IMG"
	assert_success
	assert_line --index 0 '/: 0 files with data blocks: 0 moved, 0 in place, 0 skipped'
	assert_line --index 1 --regexp '^layout before: '
	cmp "$IMG" "$T/once.img"
}

# The blocks of the leaves whose first item is of locality LOC (hex), in
# the dump $1.
leaves_of() {
	awk -v loc="$2" '/level 1 \(leaf\), block/ { b = $5; sub(":", "", b); getline
		split($1, a, ":"); if (substr(a[1], 2) == loc) print b }' "$1"
}

@test "r4 repack: a directory's leaves lie right before its files' bodies, also in a pass over a subtree; a second pass writes nothing" {
	# /a0 with one file, then /b1 and /b2, each with 40 small files
	# (tails, in leaves) and 3 larger ones appended to in turns, one
	# transaction each: leaves at the top, bodies in pieces; the same
	# tree under /p, repacked as the subtree /p
	local top d g r x body ord oid i
	mkdir -p "$T/src/a0" "$T/src/b1" "$T/src/b2"
	head -c 40000 /dev/urandom >"$T/src/a0/f"
	for d in b1 b2; do
		perl -e 'for my $i (1 .. 40) {
			open(my $f, ">", "$ARGV[0]/s$i") or die; print $f "t" x (200 + $i * 97) }' \
			"$T/src/$d"
		for g in g1 g2 g3; do head -c 20000 /dev/urandom >"$T/src/$d/$g"; done
	done
	x=$(head -c 9000 /dev/zero | tr '\0' x)
	for top in "" /p; do
		"$R4" mkfs -f "$IMG" 16M >/dev/null
		"$R4" import "$IMG" "$T/src" "${top:-/}"
		for r in 1 2 3; do
			"$R4_BUILD/r4sh" -c "$top/b1/g1 <<- \"$x\"" -c "$top/b2/g1 <<- \"$x\"" \
				-c "$top/b1/g2 <<- \"$x\"" -c "$top/b2/g2 <<- \"$x\"" \
				-c "$top/b1/g3 <<- \"$x\"" -c "$top/b2/g3 <<- \"$x\"" "$IMG" >/dev/null
		done
		run "$R4" repack -v "$IMG" "${top:-/}"
		assert_success
		"$R4" dump "$IMG" >"$T/dump"
		for d in b1 b2; do
			# the first body of the directory in walk order, and its leaves
			body=$(printf '%s\n' "${lines[@]}" | sed -n "s|^moved $top/$d/g1: .* at block \([0-9]*\)$|\1|p")
			ord=$(printf '%s' "$d" | od -An -tx1 | tr -d ' \n')0000000000
			oid=$(grep -F "(SD):$ord:" "$T/dump" | head -1 | cut -d: -f4)
			mapfile -t leaves < <(leaves_of "$T/dump" "$oid")
			echo "$top/$d (oid $oid): leaves ${leaves[*]}, first body at $body"
			[ -n "$body" ] && [ "${#leaves[@]}" -ge 2 ]
			for i in "${!leaves[@]}"; do
				[ "${leaves[$i]}" = $((body - ${#leaves[@]} + i)) ]
			done
		done
		fsck_both "$IMG"
		"$R4" cat "$IMG" "$top/b2/s17" | cmp - "$T/src/b2/s17"
		cp "$IMG" "$T/once.img"
		run "$R4" repack "$IMG" "${top:-/}"
		assert_success
		assert_line --index 0 "${top:-/}: 7 files with data blocks: 0 moved, 7 in place, 0 skipped"
		cmp "$IMG" "$T/once.img"
	done
}
