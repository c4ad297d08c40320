#!/usr/bin/env bats
# r4 frag, the layout report (docs/repack.md): its data and tree
# fragmentation against measurefs.reiser4's, to the six decimals both
# print, on images r4 made by mkfs, by import and by R4L writes in many
# commits; a fresh import against a volume fragmented on purpose; a
# subtree; bad inputs; an image in use by a mount.

setup() { load helper; r4_setup; }
teardown() {
	[ -z "${MNT:-}" ] || fuse_teardown
	r4_teardown
}

# measurefs.reiser4's tree and data fragmentation of IMG: "TREE DATA"
measurefs() {
	measurefs.reiser4 -y -T -D "$1" |
		awk '/^Tree fragmentation:/ {t = $3} /^Data fragmentation is:/ {d = $4}
		     END {print t, d}'
}

# KEY's value in the JSON object r4 frag --json printed ($output)
jkey() { grep -o "\"$1\": [0-9.]*" <<<"$output" | awk '{print $2}'; }

# r4 frag --json IMG; its fragmentation is measurefs.reiser4's
agrees() {
	need_cmd measurefs.reiser4
	local want
	want=$(measurefs "$1")
	run "$R4" frag --json "$1"
	assert_success
	assert_equal "$(jkey tree_frag) $(jkey data_frag)" "$want"
}

# N bytes of the letter C
bytes() { head -c "$1" /dev/zero | tr '\0' "$2"; }

@test "an empty volume: the report's lines, the figures measurefs.reiser4 gives" {
	"$R4" mkfs "$T/a.img" 16M
	agrees "$T/a.img"
	assert_output --partial '"objects": 1, "files": 0, "dirs": 1, "others": 0'
	run "$R4" frag "$T/a.img"
	assert_success
	assert_line "layout of / (the whole volume)"
	assert_line --regexp '^data fragmentation:  0\.000000   \(measurefs\.reiser4 -D, over 1 objects\)$'
	assert_line --regexp '^tree fragmentation:  [01]\.[0-9]{6}   \(measurefs\.reiser4 -T\)$'
	assert_line --regexp '^leaf packing:        [0-9]+\.[0-9]{2}%   \(1 leaves\)$'
	assert_line --regexp '^twig packing:        [0-9]+\.[0-9]{2}%   \(1 twigs\)$'
	assert_line --regexp '^seeks per MiB:       [0-9]+\.[0-9]{2}   \(1 seeks, 2 blocks read in walk order\)$'
	assert_line "objects:             0 files, 1 directories, 0 other"
	assert_line "extents:             0   (0 data blocks)"
	# the free space: one run, from after the tree to the end of the volume
	free=$("$R4" info "$T/a.img" | sed -n 's/^free blocks: *\([0-9]*\).*/\1/p')
	assert_line --regexp "^free space:          [0-9]+ blocks in 1 runs   \(largest [0-9]+, [0-9]+ at the end\)$"
	run "$R4" frag --json "$T/a.img"
	n=$(sed 's/.*"free_blocks": \([0-9]*\).*/\1/' <<<"$output")
	assert_output --partial "\"free_blocks\": $n, \"free_runs\": 1, \"free_largest\": $n, \"free_at_end\": $n,"
	[ "$free" = "$n" ]	# (r4 info's count: the super block's)
}

@test "a fresh import: data fragmentation 0, as measurefs.reiser4 says" {
	mkdir -p "$T/src/sub/deeper"
	for i in $(seq 1 40); do bytes $((i * 37)) a >"$T/src/small$i"; done
	for i in 1 2 3; do bytes $((i * 70000)) b >"$T/src/sub/big$i"; done
	seq 1 5000 >"$T/src/sub/deeper/numbers"
	ln -s small1 "$T/src/link"
	mkfifo "$T/src/fifo"
	"$R4" mkfs "$T/a.img" 32M
	"$R4" import "$T/a.img" "$T/src"
	agrees "$T/a.img"
	assert_equal "$(jkey data_frag)" 0.000000
	assert_output --partial '"files": 44, "dirs": 3, "others": 2'
}

@test "appends in turns, each its own commit: fragmented as measurefs.reiser4 says, more seeks than fresh" {
	# the same four files, written whole by an import, and appended to
	# in turns by R4L, one commit each (renamed, linked and removed
	# meanwhile too)
	mkdir "$T/src"
	for f in a b c d; do bytes $((6 * 20000)) x >"$T/src/$f"; done
	"$R4" mkfs "$T/fresh.img" 32M
	"$R4" import "$T/fresh.img" "$T/src" /d
	agrees "$T/fresh.img"
	assert_equal "$(jkey data_frag)" 0.000000
	fresh=$(jkey seeks_per_mib)

	x=$(bytes 20000 x)
	{
		echo '/..new/(name <- "d", type <- directory)'
		for i in 1 2 3 4 5 6; do
			for f in a b c d; do echo "/d/$f <<- \"$x\""; done
			echo "/d/t$i <- \"$x\""
		done
	} >"$T/turns.r4"
	"$R4" mkfs "$T/a.img" 32M
	"$R4" run --script -f "$T/turns.r4" "$T/a.img" >/dev/null
	"$R4_BUILD/r4sh" -c 'rm /d/t2' -c 'mv /d/t3 /t3' -c 'ln /d/t4 /d/t4b' "$T/a.img"
	agrees "$T/a.img"
	awk -v d="$(jkey data_frag)" 'BEGIN {exit !(d > 0)}'
	aged=$(jkey seeks_per_mib)
	awk -v a="$aged" -v f="$fresh" 'BEGIN {exit !(a > f)}'

	# one file of it: its fragmentation is measurefs.reiser4 -F's
	run "$R4" frag --json "$T/a.img" /d/a
	assert_success
	assert_output --partial '"objects": 1, "files": 1, "dirs": 0, "others": 0'
	got=$(jkey data_frag)
	run measurefs.reiser4 -y -F /d/a "$T/a.img"
	assert_output --partial "Fragmentation for /d/a is $got"
	awk -v g="$got" 'BEGIN {exit !(g > 0)}'
	# the directory: its files, once each (t4 has two names)
	run "$R4" frag --json "$T/a.img" /d
	assert_output --partial '"files": 8, "dirs": 1, "others": 0'
}

@test "bad inputs: a clear error and exit 1, misuse exit 2" {
	"$R4" mkfs "$T/a.img" 16M
	run "$R4" frag "$T/missing.img"
	assert_failure 1
	assert_output "r4: cannot open image '$T/missing.img': No such file or directory"
	run "$R4" frag "$T/a.img" /nope
	assert_failure 1
	assert_output "r4: frag '/nope': No such file or directory"
	truncate -s 16M "$T/zero.img"
	run "$R4" frag "$T/zero.img"
	assert_failure 1
	assert_output --partial "r4: cannot open image '$T/zero.img': "
	run "$R4" frag
	assert_failure 2
	run "$R4" frag "$T/a.img" / /extra
	assert_failure 2
	run "$R4" frag --frob "$T/a.img"
	assert_failure 2
}

@test "an image in use by a mount: read beside it" {
	fuse_setup 32M
	mount_r4
	mkdir "$MNT/d"
	bytes 100000 q >"$MNT/d/f"
	sync "$MNT/d/f"	# (fsync: the mount commits)
	run "$R4" frag --json "$IMG"
	assert_success
	assert_output --partial '"files": 1, "dirs": 2'
	umount_r4
}
