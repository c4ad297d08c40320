#!/usr/bin/env bats
# r4 export, and what r4 import and r4 mkfs -d keep (issue 25 items 1
# and 2): a varied host tree -> image -> host is the same tree (diff -r,
# and every path's mode, owner, rdev, link count, size, blocks, atime and
# mtime); a subtree; a DEST that exists; an image in use by a mount; a
# DEST that cannot be written; r4's pseudo attributes on request; the
# progress line on a terminal and the summary's words.

setup() { load helper; r4_setup; }
teardown() {
	[ -z "${MNT:-}" ] || fuse_teardown
	[ -z "${U:-}" ] || rm -rf "$U"
	if [ -n "${T:-}" ] && mountpoint -q "$T/ro" 2>/dev/null; then umount "$T/ro"; fi
	r4_teardown
}

# The summary line of a copy: VERB, then files, directories, symlinks,
# special files, hard links and bytes (regexp)
summary() {
	echo "^$1 $2 files?, $3 director(y|ies), $4 symlinks?, $5 special files?, $6 hard links?: $7 bytes? in [0-9]+\.[0-9]{2} s$8\$"
}

# A varied tree at $1 (as root: owners, a device node, trusted.*).
mk_tree() {
	local s=$1 t='2001-02-03 04:05:06.123456789'
	mkdir -p "$s/d1/d2/d3" "$s/empty" "$s/other" "$s/sgid" "$s/sticky"
	echo hello >"$s/d1/f"
	: >"$s/emptyfile"
	# data, a hole in the middle, data, a hole at the end
	dd if=/dev/urandom of="$s/sparse" bs=4096 count=3 status=none
	dd if=/dev/urandom of="$s/sparse" bs=4096 count=2 seek=64 conv=notrunc status=none
	truncate -s 1M "$s/sparse"
	truncate -s 200K "$s/allhole"
	head -c 3M /dev/urandom >"$s/big"
	ln "$s/big" "$s/d1/d2/big2"				# 2 names
	ln "$s/d1/f" "$s/other/f2"; ln "$s/d1/f" "$s/sticky/f3"	# 3 names
	ln -s ../d1/f "$s/other/rel"
	ln -s /etc/passwd "$s/abs"
	ln -s nowhere "$s/other/dangling"
	mkfifo "$s/fifo"
	mknod "$s/null" c 1 3
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$s/sock"
	chmod 0600 "$s/d1/f"; chmod 0751 "$s/d1"; chmod 2775 "$s/sgid"; chmod 1777 "$s/sticky"
	chmod 0640 "$s/fifo"
	chown 1234:5678 "$s/big"; chown 99:98 "$s/d1/d2"; chown -h 4321:8765 "$s/other/rel"
	setfattr -n user.colour -v blue "$s/big"
	setfattr -n trusted.t -v 1 "$s/d1"
	setfattr -n security.s -v 2 "$s/sparse"
	setfattr -h -n trusted.l -v 3 "$s/other/rel"
	setfattr -n trusted.p -v 4 "$s/fifo"
	touch -d "$t" "$s/d1/f" "$s/emptyfile"
	touch -a -d '1999-12-31 23:59:59.999999999' "$s/sparse"
	touch -m -d '2010-10-10 10:10:10.000000001' "$s/big"
	touch -h -d "$t" "$s/other/rel" "$s/null"
	# directories last: what was made in them moved their times
	touch -d '2005-05-05 05:05:05.5' "$s/d1/d2/d3" "$s/d1/d2" "$s/empty" "$s/sgid" "$s"
}

# Every path of tree $1, sorted, into $2; then the stat line of each, for
# tree $3, into $4.  (A directory is listed only here: a listing moves its
# atime, so a copy's stat lines are taken from this list, not a listing.)
list_tree() { (cd "$1" && find . | LC_ALL=C sort) >"$2"; }
stat_lines() {
	(cd "$1" && xargs -d '\n' stat -c '%n %f %t:%T %u %g %h %s %x %y' <"$2") >"$3"
}
blocks() { (cd "$1" && xargs -d '\n' stat -c '%b' <"$2"); }
xattrs() { (cd "$1" && xargs -d '\n' getfattr -h -d -m - <"$2" 2>/dev/null); }

# The copy at $2 is tree $1, whose list is $T/list and stat lines $T/src.stat.
same_tree() {
	# (first: reading the copy moves its atimes)
	stat_lines "$2" "$T/list" "$T/out.stat"
	diff "$T/src.stat" "$T/out.stat"
	# (diff compares no fifo, device or socket: their stat lines do)
	diff -r --no-dereference -x fifo -x null -x sock "$1" "$2"
	# Blocks: both trees lie on one host file system, which allocates
	# what is written; the copy writes only the data ranges, so it has
	# never more blocks than the source (on tmpfs exactly as many: XFS's
	# speculative preallocation could give the source more), and the
	# sparse files far fewer than their size.
	paste -d ' ' <(blocks "$1" "$T/list") <(blocks "$2" "$T/list") "$T/list" |
		awk '$2 > $1 {print "more blocks: " $0; bad = 1} END {exit bad}'
	[ "$(stat -c %b "$2/sparse")" -le 40 ]
	[ "$(stat -c %b "$2/allhole")" -eq 0 ]
	diff <(xattrs "$1" "$T/list") <(xattrs "$2" "$T/list")
}

prepare() {
	[ "$(id -u)" = 0 ] || skip "owners, a device node and trusted.* need root"
	mk_tree "$T/src"
	setfattr -n user.x -v 1 "$T/src/big" 2>/dev/null || skip "no user.* attributes in $T"
	list_tree "$T/src" "$T/list"
	stat_lines "$T/src" "$T/list" "$T/src.stat"
}

@test "a varied tree: r4 import, then r4 export, gives the same tree" {
	prepare
	"$R4" mkfs "$T/a.img" 64M
	run "$R4" import "$T/a.img" "$T/src"
	assert_success
	assert_output --regexp "$(summary imported 5 8 3 3 3 3166214)"
	# the source was read without moving its atimes (but a symlink's:
	# readlink(2) moves it, and no flag keeps it; its copy has the atime
	# from before)
	stat_lines "$T/src" "$T/list" "$T/again.stat"
	diff <(grep -v '^[^ ]* a1ff ' "$T/src.stat") <(grep -v '^[^ ]* a1ff ' "$T/again.stat")
	run "$R4" export "$T/a.img" "$T/out"
	assert_success
	assert_output --regexp "$(summary exported 5 8 3 3 3 3166214)"
	same_tree "$T/src" "$T/out"
	fsck_both "$T/a.img"
}

@test "r4 mkfs -d DIR IMAGE SIZE fills the new volume as import does" {
	prepare
	run "$R4" mkfs -d "$T/src" "$T/a.img" 64M
	assert_success
	assert_output --regexp "$(summary imported 5 8 3 3 3 3166214)"
	run "$R4" export "$T/a.img" "$T/out"
	assert_success
	same_tree "$T/src" "$T/out"
	fsck_both "$T/a.img"
	# a DIR that is not one: no volume made
	run "$R4" mkfs -d "$T/nothing" "$T/b.img" 64M
	assert_failure 1
	assert_output "r4: mkfs -d '$T/nothing': No such file or directory"
	[ ! -e "$T/b.img" ]
}

@test "import keeps hard links as links inside the image, and is whole or nothing" {
	mkdir -p "$T/src/a" "$T/src/b"
	echo x >"$T/src/a/f"
	ln "$T/src/a/f" "$T/src/b/g"
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" /in >/dev/null
	run "$R4" ls "$T/a.img" /in/b
	assert_line --regexp '^-0644 +2 .* 2 g$'
	# a name that exists: the import fails, naming the host path, and
	# nothing of it stays
	mkdir "$T/src2" "$T/old" && echo y >"$T/src2/new" && echo z >"$T/src2/f"
	echo old >"$T/old/f"
	"$R4" import "$T/a.img" "$T/old" /in2 >/dev/null
	run "$R4" import "$T/a.img" "$T/src2" /in2
	assert_failure 1
	assert_output "r4: cannot import '$T/src2/f': File exists (nothing was changed)"
	run "$R4" ls "$T/a.img" /in2
	refute_output --partial new
}

@test "export of a subtree, of a file, and into a DEST that exists" {
	mkdir -p "$T/src/d/e"
	echo one >"$T/src/d/e/one"
	echo top >"$T/src/d/top"
	chmod 0711 "$T/src/d"
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	# a directory's contents go into DEST, which takes its attributes
	run "$R4" export "$T/a.img" /d "$T/sub"
	assert_success
	assert_output --regexp "$(summary exported 2 2 0 0 0 8)"
	diff -r "$T/src/d" "$T/sub"
	[ "$(stat -c %a "$T/sub")" = 711 ]
	# a file goes into DEST as DEST/NAME
	run "$R4" export "$T/a.img" /d/e/one/ "$T/f"
	assert_success
	cmp "$T/src/d/e/one" "$T/f/one"
	# into a DEST that exists: directories are merged, a name that exists
	# is not overwritten: said, counted, the rest copied, exit 1
	mkdir -p "$T/sub2/e" && echo mine >"$T/sub2/top"
	run "$R4" export "$T/a.img" /d "$T/sub2"
	assert_failure 1
	assert_line --index 0 "r4: export '/d/top': File exists"
	assert_line --index 1 --regexp "$(summary exported 1 2 0 0 0 4 '; 1 failed')"
	[ "$(cat "$T/sub2/top")" = mine ]
	cmp "$T/src/d/e/one" "$T/sub2/e/one"
	# a DEST that is a file
	run "$R4" export "$T/a.img" /d "$T/f/one"
	assert_failure 1
	assert_output "r4: export: cannot make '$T/f/one': Not a directory"
	# a PATH the image lacks
	run "$R4" export "$T/a.img" /nope "$T/x"
	assert_failure 1
	assert_output "r4: export '/nope': No such file or directory"
	run "$R4" export "$T/a.img" nope "$T/x"
	assert_failure 2
	run "$R4" export "$T/a.img"
	assert_failure 2
	assert_line --index 0 --partial usage
	run "$R4" export -h
	assert_success
	assert_line --index 0 --regexp '^usage: r4 export \[-p\] \[--pseudo\] IMAGE \[PATH\] DEST'
}

@test "export to a DEST that cannot be written: each failure names its path, exit 1" {
	[ "$(id -u)" = 0 ] || skip "mounts a read-only tmpfs"
	mkdir -p "$T/src/d" "$T/ro"
	echo a >"$T/src/a" && echo b >"$T/src/d/b"
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	mount -t tmpfs -o ro none "$T/ro"
	run "$R4" export "$T/a.img" "$T/ro/new"
	assert_failure 1
	assert_output "r4: export: cannot make '$T/ro/new': Read-only file system"
	run "$R4" export "$T/a.img" "$T/ro"
	assert_failure 1
	assert_line "r4: export '/a': Read-only file system"
	assert_line "r4: export '/d': Read-only file system"
	assert_line "r4: export '/': Read-only file system"
	assert_line --regexp "$(summary exported 0 1 0 0 0 0 '; 3 failed')"
}

@test "export of an image in use by a mount: said once, its last committed state comes out" {
	fuse_setup 64M
	mkdir -p "$T/src" && echo before >"$T/src/f"
	"$R4" import "$IMG" "$T/src" >/dev/null
	mount_r4
	echo committed >"$MNT/g"
	sync "$MNT/g"		# (fsync: committed)
	run "$R4" export "$IMG" "$T/out"
	assert_success
	assert_line --index 0 "r4: $IMG: in use by r4fuse (pid $(r4fuse_pids)), mounted at $MNT; exporting its last committed state"
	assert_line --index 1 --regexp "$(summary exported 2 1 0 0 0 17)"
	[ "$(cat "$T/out/f")" = before ]
	[ "$(cat "$T/out/g")" = committed ]
}

@test "r4's pseudo attributes only with --pseudo, as user.r4.* attributes" {
	mkdir -p "$T/src/d" && echo x >"$T/src/d/f"
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	"$R4" export "$T/a.img" "$T/plain" >/dev/null
	run getfattr -h -d -m - "$T/plain/d/f"
	assert_output ''
	run "$R4" export --pseudo "$T/a.img" "$T/ps"
	assert_success
	run getfattr --absolute-names --only-values -n user.r4.oid "$T/ps/d/f"
	assert_output "$("$R4" run -c '/d/f/..oid' "$T/a.img")"
	run getfattr --absolute-names --only-values -n user.r4.plugin "$T/ps/d"
	assert_output --partial dir40
}

@test "not root: the copies belong to the runner, said once; the progress line on a terminal" {
	mkdir -p "$T/src/d" && echo x >"$T/src/d/f"
	chown -R 1234:1234 "$T/src" 2>/dev/null || true
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	if [ "$(id -u)" = 0 ]; then
		# (a place nobody reaches: $T is root's alone)
		U=$(mktemp -d /dev/shm/r4-export.XXXXXX) && chmod 0777 "$U"
		cp "$T/a.img" "$U/a.img" && chmod 0644 "$U/a.img"
		run setpriv --reuid=65534 --regid=65534 --clear-groups "$R4" export "$U/a.img" "$U/out"
		assert_success
		assert_line --index 0 "r4: export: not run as root: the copies belong to you (-p keeps the owners where the host allows)"
		[ "$(stat -c %u "$U/out/d/f")" = 65534 ]
		# salvage writes through the same writer
		run setpriv --reuid=65534 --regid=65534 --clear-groups "$R4" export --salvage "$U/a.img" "$U/salv"
		assert_success
		assert_line --index 0 "r4: export: not run as root: the copies belong to you (-p keeps the owners where the host allows)"
		[ "$(stat -c %u "$U/salv/d/f")" = 65534 ]
	fi
	# -p as root keeps the owners, salvage too
	if [ "$(id -u)" = 0 ] && [ "$(stat -c %u "$T/src/d/f")" = 1234 ]; then
		"$R4" export --salvage -p "$T/a.img" "$T/p" >/dev/null
		[ "$(stat -c %u:%g "$T/p/d/f")" = 1234:1234 ]
	fi
	# on a terminal: the progress line (\r-updated, cleared) before the summary
	need_cmd script
	script -qec "'$R4' export '$T/a.img' '$T/tty'" /dev/null >"$T/tty.out"
	grep -q $'\r\033\[K' "$T/tty.out"
	grep -q 'exported 1 file, 2 directories' "$T/tty.out"
	script -qec "'$R4' export --salvage '$T/a.img' '$T/tty2'" /dev/null >"$T/tty.out"
	grep -q $'\r\033\[K' "$T/tty.out"
	grep -q 'salvaged 1 file, 2 directories.*; nothing lost' "$T/tty.out"
}

@test "a compressed (ccreg40) file's holes come out as holes, its bytes the same" {
	# 64K clusters: text, random bytes, 1M without items, text to the size
	mkdir "$T/cc"
	{ yes 'reiser4 compresses clusters' | head -c 65536; head -c 65536 /dev/urandom; } >"$T/cc/f"
	yes 'text again' | head -c 20000 | dd of="$T/cc/f" bs=1 seek=$((65536 * 18)) status=none
	mkfs_reiser4 "$T/a.img" 32M	# its default: ccreg40, lzo1, 64K clusters
	"$R4" import "$T/a.img" "$T/cc" / >/dev/null
	run "$R4" export "$T/a.img" /f "$T/out"
	assert_success
	cmp "$T/cc/f" "$T/out/f"
	# the hole is not written: the copy has about the 3 clusters' blocks
	# (a copy that wrote zeros would have over 2300)
	[ "$(stat -c %b "$T/out/f")" -le 400 ]
	run python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); print(os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 3 * 65536, os.SEEK_DATA))' "$T/out/f"
	assert_output "131072 1179648"
}
