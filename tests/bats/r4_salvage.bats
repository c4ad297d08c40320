#!/usr/bin/env bats
# r4 export --salvage (docs/salvage.md): a host tree imported (and a hard link),
# damaged on purpose (the root, which holds the extents; the bitmap;
# nothing) or cut after a commit point (its journal readable or not), then listed and copied out: what comes out against what went
# in, byte for byte, the report's lines exactly, the exit code, and the
# image unchanged after.

setup() {
	load helper
	r4_setup
	mkdir -p "$T/src/a/b/c" "$T/src/empty"
	printf 'hello\n' >"$T/src/a/f"
	head -c 3000 /dev/urandom >"$T/src/a/b/c/tail"
	head -c 200000 /dev/urandom >"$T/src/a/b/big"
	head -c 50000 /dev/urandom >"$T/src/mid"
	ln -s a/f "$T/src/sym"
	"$R4" mkfs "$T/a.img" 16M >/dev/null
	"$R4" import "$T/a.img" "$T/src" / >/dev/null
	SUM=$(sha256sum <"$T/a.img")
}
teardown() {
	# salvage never writes the image
	[ "$(sha256sum <"$T/a.img")" = "$SUM" ] || { echo "the image changed"; false; }
	r4_teardown
}

# r4 info's value of FIELD for the image
info() { "$R4" info "$T/a.img" | awk -F':  *' -v f="$1" '$1 == f {print $2}'; }

# zero block N of the image (damage, then a new checksum to keep)
zero_block() {
	dd if=/dev/zero of="$T/a.img" bs=4096 seek="$1" count=1 conv=notrunc status=none
	SUM=$(sha256sum <"$T/a.img")
}

MAXKEY='[fffffffffffffff:ff(?):ffffffffffffffff:ffffffffffffffff:ffffffffffffffff]'

@test "an undamaged volume: everything comes out identical, nothing reported, exit 0" {
	run "$R4" export --salvage "$T/a.img" "$T/out"
	assert_success
	assert_output --regexp "^salvaged 4 files, 5 directories, 1 symlink, 0 special files, 0 hard links: 253006 bytes in [0-9.]+ s; nothing lost\$"
	diff -r "$T/src" "$T/out"
	[ "$(readlink "$T/out/sym")" = a/f ]
	[ "$(stat -c %a "$T/out/a")" = "$(stat -c %a "$T/src/a")" ]
}

@test "--list: type, mode, owner, size and path of each object, parent first" {
	run "$R4" export --salvage --list "$T/a.img" /a
	assert_success
	assert_line --index 0 "d 0755     0     0          4 /a"
	assert_line --index 1 "d 0755     0     0          4 /a/b"
	assert_line --index 2 "- 0644     0     0     200000 /a/b/big"
	assert_line --index 3 "d 0755     0     0          3 /a/b/c"
	assert_line --index 4 "- 0644     0     0       3000 /a/b/c/tail"
	assert_line --index 5 "- 0644     0     0          6 /a/f"
	[ "${#lines[@]}" -eq 6 ]
	run "$R4" export --salvage --list "$T/a.img"
	assert_line "l 0777     0     0          3 /sym -> a/f"
}

@test "a hard link comes out as a hard link, its first name first" {
	"$R4_BUILD/r4sh" "$T/a.img" -c 'ln /a/f /a/b/f2'
	SUM=$(sha256sum <"$T/a.img")
	run "$R4" export --salvage --list "$T/a.img" /a
	assert_line "- 0644     0     0          6 /a/b/f2"
	assert_line "- 0644     0     0          6 /a/f => /a/b/f2"
	run "$R4" export --salvage "$T/a.img" "$T/out"
	assert_success
	[ "$(stat -c '%i %h' "$T/out/a/f")" = "$(stat -c '%i %h' "$T/out/a/b/f2")" ]
	[ "$(stat -c %h "$T/out/a/f")" = 2 ]
	cmp "$T/src/a/f" "$T/out/a/b/f2"
}

@test "PATH: only its subtree, DEST standing for it (a file: in it)" {
	run "$R4" export --salvage "$T/a.img" /a/b "$T/out"
	assert_success
	diff -r "$T/src/a/b" "$T/out"
	# a file: into DEST
	run "$R4" export --salvage "$T/a.img" /a/b/big "$T/one"
	assert_success
	[ "$(ls "$T/one")" = big ]
	cmp "$T/src/a/b/big" "$T/one/big"
}

@test "the root zeroed: the scan finds every leaf, everything comes out, the report names the root" {
	root=$(info "root block")
	[ "$(info "tree height")" = 2 ]
	# a volume this small is a twig over leaves: the root holds the extents
	zero_block "$root"
	run "$R4" export --salvage "$T/a.img" "$T/out"
	assert_failure 1
	assert_line --index 0 "block $root: the root (level 2) unreadable: bad node magic 0x00000000; keys [0:0(NAME):0:0:0] to $MAXKEY"
	assert_line --index 1 "/a/b/big: bytes 0 to 199999 lost (block $root)"
	assert_line --index 2 "/mid: bytes 0 to 49999 lost (block $root)"
	assert_line --index 3 --regexp "^salvaged 4 files, 5 directories, 1 symlink, 0 special files, 0 hard links: 3006 bytes in [0-9.]+ s; some of the volume could not be read \(above\)\$"
	[ "${#lines[@]}" -eq 4 ]
	# the files held in leaves are whole; those in extents keep their size, as holes
	diff -r -x big -x mid "$T/src" "$T/out"
	[ "$(stat -c '%s %b' "$T/out/a/b/big")" = "200000 0" ]
	cmp "$T/out/mid" <(head -c 50000 /dev/zero)
}

@test "the bitmap zeroed: nothing needs it, everything comes out" {
	zero_block 18
	run "$R4" export --salvage "$T/a.img" "$T/out"
	assert_success
	diff -r "$T/src" "$T/out"
}

@test "a commit cut after its header: salvage reads its wandered copies; a broken journal header is reported and left out" {
	# R4_TEST_FAULT fails the sync after the header: nothing goes in place
	R4_TEST_FAULT=sync:2 run "$R4" run -c '/mid <- "rewritten"; /new <- "made"' "$T/a.img"
	assert_failure
	SUM=$(sha256sum <"$T/a.img")
	run "$R4" export --salvage "$T/a.img" "$T/out"
	assert_success
	assert_output --regexp "^salvaged 5 files, .*; 1 committed transaction read from the journal; nothing lost\$"
	[ "$(cat "$T/out/mid")" = rewritten ]
	[ "$(cat "$T/out/new")" = made ]
	diff -r -x mid -x new "$T/src" "$T/out"
	# the header names a tx head past the end: the blocks in place, as before the commit
	printf '\xee\xee\xee\xee\xee\xee\xee\xee' |
		dd of="$T/a.img" bs=1 seek=$((19 * 4096)) conv=notrunc status=none
	SUM=$(sha256sum <"$T/a.img")
	run "$R4" export --salvage "$T/a.img" "$T/out2"
	assert_failure 1
	assert_line --index 0 "journal: corrupt image at block 19: last committed tx head 17216961135462248174 out of range; not read, so transactions committed but not played are not seen"
	assert_line --index 1 --regexp "^salvaged 4 files, 5 directories, 1 symlink, 0 special files, 0 hard links: 253006 bytes in [0-9.]+ s; some of the volume could not be read \(above\)\$"
	[ "${#lines[@]}" -eq 2 ]
	diff -r "$T/src" "$T/out2"
}

@test "extended attributes come out on their objects; r4's private directory does not; also with the root zeroed" {
	need_cmd setfattr "attr not installed"
	mkdir -p "$T/x/d"
	printf 'x\n' >"$T/x/f"
	setfattr -n user.colour -v blue "$T/x/f"
	setfattr -n trusted.t -v "$(head -c 300 /dev/zero | tr '\0' t)" "$T/x/f"
	setfattr -n user.on-dir -v 1 "$T/x/d"
	"$R4" mkfs -f "$T/a.img" 16M >/dev/null
	"$R4" import "$T/a.img" "$T/x" / >/dev/null
	SUM=$(sha256sum <"$T/a.img")
	run "$R4" export --salvage --list "$T/a.img"
	assert_success
	refute_output --partial '..r4'
	for damage in none root; do
		[ "$damage" = root ] && zero_block "$(info "root block")"
		rm -rf "$T/out"
		run "$R4" export --salvage "$T/a.img" "$T/out"
		assert_equal "$(ls -A "$T/out")" "$(printf 'd\nf')"
		assert_equal "$(getfattr -d -m - --absolute-names "$T/out/f" | sed 1d)" \
			"$(getfattr -d -m - --absolute-names "$T/x/f" | sed 1d)"
		assert_equal "$(getfattr -d -m - --absolute-names "$T/out/d" | sed 1d)" \
			"$(getfattr -d -m - --absolute-names "$T/x/d" | sed 1d)"
	done
}

@test "a file that is no Reiser4 volume, a missing image, a missing PATH, bad usage" {
	head -c 1M /dev/zero >"$T/zero.img"
	run "$R4" export --salvage --list "$T/zero.img"
	assert_failure 1
	assert_output "r4: no Reiser4 volume to salvage: no super block decodes and no node of one was found
r4: salvage: cannot open '$T/zero.img': Structure needs cleaning (corrupt image)"
	run "$R4" export --salvage --list "$T/none.img"
	assert_failure 1
	assert_output "r4: salvage: cannot open '$T/none.img': No such file or directory"
	run "$R4" export --salvage --list "$T/a.img" /nope
	assert_failure 1
	assert_output "r4: salvage '/nope': No such file or directory"
	run "$R4" export --salvage "$T/a.img"
	assert_failure 2
	run "$R4" export -h
	assert_success
	assert_line "usage: r4 export --salvage [--list] IMAGE [PATH] DEST  from a damaged volume:"
}

@test "a compressed (ccreg40) file comes out the same, its hole a hole" {
	mkdir "$T/cc"
	{ yes 'reiser4 compresses clusters' | head -c 65536; head -c 65536 /dev/urandom; } >"$T/cc/f"
	yes 'text again' | head -c 20000 | dd of="$T/cc/f" bs=1 seek=$((65536 * 18)) status=none
	mkfs_reiser4 "$T/a.img" 32M	# its default: ccreg40, lzo1, 64K clusters
	"$R4" import "$T/a.img" "$T/cc" / >/dev/null
	SUM=$(sha256sum <"$T/a.img")
	run "$R4" export --salvage "$T/a.img" /f "$T/out"
	assert_success
	assert_output --regexp "^salvaged 1 file, 0 directories, 0 symlinks, 0 special files, 0 hard links: 151072 bytes in [0-9.]+ s; nothing lost\$"
	cmp "$T/cc/f" "$T/out/f"
	[ "$(stat -c %b "$T/out/f")" -le 400 ]
}
