#!/usr/bin/env bats
# r4 fsck: exit codes (0 clean, 1 all fixed, 4 left uncorrected, 8
# operational, 16 usage), one line per problem, -n never writes, --fix
# repairs and a second run is clean, no progress output unless stderr is
# a terminal.  Damage is planted with python3 at fixed blocks of a fresh
# r4 mkfs image (the root twig is block 23, its leaf 24).

bats_require_minimum_version 1.5.0

setup() { load helper; r4_setup; need_cmd python3; }
teardown() { r4_teardown; }

# poke IMG BLOCK OFFSET HEXBYTES: overwrite bytes inside one block.
poke() {
	python3 - "$@" <<'EOF'
import sys
img, blk, off, data = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
with open(img, 'r+b') as f:
    f.seek(blk * 4096 + off)
    f.write(data)
EOF
}

# mark_used IMG FIRST COUNT: set bitmap bits of zone 0 and fix its Adler-32.
mark_used() {
	python3 - "$@" <<'EOF'
import sys, zlib, struct
img, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(img, 'r+b') as f:
    f.seek(18 * 4096)
    b = bytearray(f.read(4096))
    for blk in range(first, first + n):
        b[4 + blk // 8] |= 1 << (blk % 8)
    b[0:4] = struct.pack('<I', zlib.adler32(bytes(b[4:])))
    f.seek(18 * 4096)
    f.write(b)
EOF
}

fresh() {
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	mkdir -p "$T/src/d"
	printf 'hello\n' >"$T/src/d/f"
	head -c 50000 /dev/zero >"$T/src/big"
	"$R4" import "$T/a.img" "$T/src" >/dev/null
}

@test "fsck: a clean image exits 0 with a summary and nothing on stderr" {
	fresh
	run "$R4" fsck "$T/a.img"
	assert_success
	assert_output --regexp "^$T/a.img: clean, 4 objects, [0-9]+ nodes, [0-9]+ blocks in use$"
	"$R4" fsck "$T/a.img" >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ]
	run "$R4" fsck -n "$T/a.img"
	assert_success
}

@test "fsck: a leaked range is one line; -n leaves the image alone; --fix repairs it" {
	fresh
	mark_used "$T/a.img" 5000 3
	cp "$T/a.img" "$T/before.img"
	run "$R4" fsck -n "$T/a.img"
	assert_failure 4
	assert_line "blocks 5000-5002: bitmap: 3 blocks used in the bitmap but reached by nothing (leaked) [fixable]"
	assert_line "$T/a.img: 1 problem, 0 fixed, 1 left uncorrected"
	cmp "$T/a.img" "$T/before.img"
	run "$R4" fsck "$T/a.img"
	assert_failure 4
	cmp "$T/a.img" "$T/before.img"
	run "$R4" fsck --fix "$T/a.img"
	assert_failure 1
	assert_line "blocks 5000-5002: bitmap: 3 blocks used in the bitmap but reached by nothing (leaked) [fixed]"
	assert_line "$T/a.img: 1 problem, 1 fixed, 0 left uncorrected"
	run "$R4" fsck "$T/a.img"
	assert_success
	fsck_reiser4 "$T/a.img"
}

@test "fsck: -y repairs the super block's free count" {
	fresh
	free=$("$R4" info "$T/a.img" | awk '/^free blocks:/ {print $3}')
	poke "$T/a.img" 17 8 "$(python3 -c "import struct; print(struct.pack('<Q', $free + 7).hex())")"
	run "$R4" fsck "$T/a.img"
	assert_failure 4
	assert_line "block 17: super: free block count $((free + 7)), should be $free [fixable]"
	run "$R4" fsck -y "$T/a.img"
	assert_failure 1
	assert_line "block 17: super: free block count $((free + 7)), should be $free [fixed]"
	run "$R4" fsck "$T/a.img"
	assert_success
	fsck_reiser4 "$T/a.img"
}

@test "fsck: structural damage exits 4, and --fix writes nothing" {
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	# item 1 of the root leaf gets a key below item 0's
	poke "$T/a.img" 24 $((4096 - 2 * 38)) 0000000000000000
	cp "$T/a.img" "$T/before.img"
	run "$R4" fsck "$T/a.img"
	assert_failure 4
	assert_line "block 24: node: keys out of order at item 1"
	run "$R4" fsck --fix "$T/a.img"
	assert_failure 4
	cmp "$T/a.img" "$T/before.img"
}

@test "fsck: a stat data that does not decode: its block and why, no source location" {
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	# the root's stat data (block 24): its plugin set names member 65535
	poke "$T/a.img" 24 100 ffffffffffffffff
	run --separate-stderr "$R4" fsck "$T/a.img"
	assert_failure 4
	assert_output "block 24: node: bad stat data of object 2a: stat data: plugin set slot 7: unknown member 65535
$T/a.img: 1 problem, 0 fixed, 1 left uncorrected (the volume does not open)"
	[ -z "$stderr" ]
	# the other commands say it in the same words, then their own
	run --separate-stderr "$R4" ls "$T/a.img" /
	assert_failure 1
	assert_equal "$stderr" "r4: corrupt image at block 24: bad stat data of object 2a: stat data: plugin set slot 7: unknown member 65535
r4: cannot open image '$T/a.img': Structure needs cleaning (corrupt image)"
}

@test "fsck: a bitmap checksum mismatch names the bitmap block" {
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	poke "$T/a.img" 18 100 ff
	run "$R4" fsck -n "$T/a.img"
	assert_failure 4
	assert_line --regexp "^block 18: bitmap: bitmap of zone 0: stored Adler-32 [0-9a-f]+, computed [0-9a-f]+$"
}

@test "fsck: operational errors exit 8" {
	run "$R4" fsck "$T/missing.img"
	assert_failure 8
	assert_output --partial "cannot open image '$T/missing.img'"
	truncate -s 1M "$T/zero.img"
	run "$R4" fsck "$T/zero.img"
	assert_failure 8
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	chmod a-w "$T/a.img"
	if [ "$(id -u)" != 0 ]; then
		run "$R4" fsck --fix "$T/a.img"
		assert_failure 8
	fi
}

@test "fsck: usage errors exit 16" {
	run "$R4" fsck
	assert_failure 16
	"$R4" mkfs "$T/a.img" 32M >/dev/null
	run "$R4" fsck -n --fix "$T/a.img"
	assert_failure 16
	assert_output --partial "-n and --fix exclude each other"
	run "$R4" fsck --bogus "$T/a.img"
	assert_failure 16
	run "$R4" fsck "$T/a.img" "$T/b.img"
	assert_failure 16
}

@test "fsck: a progress line on a terminal's stderr only" {
	need_cmd script
	fresh
	script -qec "'$R4' fsck '$T/a.img'" "$T/typescript" >/dev/null
	grep -q 'checking' "$T/typescript"
	"$R4" fsck "$T/a.img" 2>"$T/err" >/dev/null
	[ ! -s "$T/err" ]
}
