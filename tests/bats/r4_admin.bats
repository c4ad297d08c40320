#!/usr/bin/env bats
# r4's admin subcommands (mkfs, info, ls, cat, import) and their interop
# with reiser4progs: fsck.reiser4 judges what r4 writes, libreiser4 (r4p)
# and debugfs.reiser4 read it, and r4 reads what they write.

setup() { load helper; r4_setup; }
teardown() { r4_teardown; }

UUID=01234567-89ab-cdef-0123-456789abcdef

@test "mkfs makes a volume fsck.reiser4 calls consistent" {
	run "$R4" mkfs "$T/a.img" 64M --label demo --uuid $UUID
	assert_success
	fsck_reiser4 "$T/a.img"
	run "$R4" info "$T/a.img"
	assert_success
	assert_line "block size:    4096"
	assert_line "blocks:        16384"
	assert_line "free blocks:   16359"
	assert_line "uuid:          $UUID"
	assert_line "label:         demo"
	assert_line "tree height:   2"
	assert_line "files:         1"
	assert_line "hash:          r5_hash"
	assert_line "fibration:     ext_1_fibre"
	assert_line "status:        consistent"
}

@test "mkfs matches what debugfs.reiser4 expects of the super blocks" {
	need_cmd debugfs.reiser4
	"$R4" mkfs "$T/a.img" 1G --label big --uuid $UUID -o hash=tea_hash,fibration=lexic_fibre
	fsck_reiser4 "$T/a.img"
	run debugfs.reiser4 -s "$T/a.img"
	assert_success
	assert_output --partial "uuid:		$UUID"
	assert_output --partial "label:		big"
	assert_output --partial "blocks:		262144"
	assert_output --partial "tree height:	2"
	run "$R4" info "$T/a.img"
	assert_line "hash:          tea_hash"
	assert_line "fibration:     lexic_fibre"
}

@test "mkfs with node41 checksums" {
	"$R4" mkfs "$T/a.img" 64M --node node41
	fsck_reiser4 "$T/a.img"
	run "$R4" info "$T/a.img"
	assert_line "node plugin:   node41"
}

@test "usage errors exit 2, run-time errors 1, with a message" {
	run "$R4" mkfs "$T/a.img"
	assert_failure 2
	run "$R4" mkfs "$T/a.img" 12Q
	assert_failure 2
	assert_output "r4: bad size '12Q'"
	run "$R4" mkfs "$T/a.img" 64M -o hash=nope
	assert_failure 2
	assert_output "r4: unknown hash plugin 'nope'"
	run "$R4" frobnicate
	assert_failure 2
	run "$R4" mkfs "$T/small.img" 1K
	assert_failure 1
	assert_output "r4: cannot make '$T/small.img': 1K is too small for a Reiser4 volume (at least 1M)"
	# what is no Reiser4 volume says so, in one line (no log, no block)
	truncate -s 1M "$T/zero.img"
	run "$R4" info "$T/zero.img"
	assert_failure 1
	assert_output "r4: cannot open image '$T/zero.img': not a Reiser4 volume (no Reiser4 super block at offset 65536)"
	seq 1 100 >"$T/text"
	run "$R4_BUILD/r4sh" -c '/' "$T/text"
	assert_failure 1
	assert_output "r4sh: $T/text: not a Reiser4 volume (no Reiser4 super block at offset 65536)"
	run "$R4" info "$T/missing.img"
	assert_failure 1
	assert_output "r4: cannot open image '$T/missing.img': No such file or directory"
}

@test "--version on every program; -h and --help on every subcommand: its usage, exit 0" {
	run "$R4" --version
	assert_success
	assert_output --regexp '^r4 [0-9]+\.[0-9]+$'
	run "$R4_BUILD/r4sh" --version
	assert_success
	assert_output --regexp '^r4sh [0-9]+\.[0-9]+$'
	run "$R4_BUILD/r4fuse" --version
	assert_success
	assert_output --regexp '^r4fuse [0-9]+\.[0-9]+ \(libfuse 3\.[0-9.]+\)$'
	local sub
	for sub in mkfs info ls cat import export fsck repack dump frag plugins parse explain run; do
		run "$R4" "$sub" --help
		assert_success
		assert_line --index 0 --regexp "^usage: r4 $sub( |\$)"
		run "$R4" "$sub" -h
		assert_success
		assert_line --index 0 --regexp "^usage: r4 $sub( |\$)"
	done
	run "$R4" info --help
	assert_output "usage: r4 info IMAGE"
	# (-h as the value of -c is the command's, not a request for help)
	run "$R4" parse -c -h
	refute_output --partial usage
}

@test "make install: r4 and its other names, the mount helper, the man pages; uninstall removes them" {
	local repo=${BATS_TEST_DIRNAME%/tests/bats} st=$T/stage m
	[ -x "$repo/build/r4" ] || skip "no plain build (make all) to install"
	run make -s -C "$repo" install DESTDIR="$st" PREFIX=/usr
	assert_success
	assert_equal "$(readlink "$st/usr/bin/r4sh")" r4
	assert_equal "$(readlink "$st/usr/bin/r4fuse")" r4
	assert_equal "$(readlink "$st/sbin/mount.fuse.r4")" /usr/bin/r4
	run "$st/usr/bin/r4sh" --version
	assert_output --regexp '^r4sh [0-9.]+$'
	run "$st/usr/bin/r4fuse" --version
	assert_output --regexp '^r4fuse [0-9.]+ '
	for m in man8/r4.8 man1/r4sh.1 man8/r4fuse.8 man7/r4l.7; do
		[ -f "$st/usr/share/man/$m" ]
		# (renders without a warning)
		run groff -man -ww -z "$st/usr/share/man/$m"
		assert_success
		assert_output ""
	done
	run make -s -C "$repo" uninstall DESTDIR="$st" PREFIX=/usr
	assert_success
	[ -z "$(find "$st" ! -type d)" ]
}

mk_tree() {
	mkdir -p "$T/src/sub/deeper" "$T/src/$(printf 'long-%.0s' {1..40})"
	seq 1 3000 >"$T/src/numbers.txt"
	head -c 100000 /dev/urandom >"$T/src/sub/rand.bin"
	head -c 16384 /dev/urandom >"$T/src/sub/exactly16k"
	head -c 16385 /dev/urandom >"$T/src/sub/16k-and-1"
	: >"$T/src/empty"
	echo hello >"$T/src/sub/deeper/hello.c"
	ln -s numbers.txt "$T/src/link"
}

@test "import copies a host tree; r4, libreiser4 and debugfs read the same bytes" {
	need_r4p
	mk_tree
	"$R4" mkfs "$T/a.img" 64M
	run "$R4" import "$T/a.img" "$T/src"
	assert_success
	fsck_reiser4 "$T/a.img"
	for f in numbers.txt sub/rand.bin sub/exactly16k sub/16k-and-1 empty sub/deeper/hello.c; do
		cmp <("$R4" cat "$T/a.img" "/$f") "$T/src/$f"
		cmp <("$R4P" cat "$T/a.img" "/$f") "$T/src/$f"
	done
	run debugfs.reiser4 -k /sub/deeper/hello.c "$T/a.img"
	assert_output --partial hello
	run "$R4" ls "$T/a.img" /
	assert_line --regexp '^l0777 +1 .* 11 link$'
	assert_line --regexp '^d0755 +3 .* sub$'
	assert_line --regexp '^d0755 +5 .* \.$'
}

@test "ls: the long form by default and with -l, -1 the sorted names alone" {
	mkdir -p "$T/src/sub" "$T/src/Zdir"
	echo hello >"$T/src/b.txt"
	ln "$T/src/b.txt" "$T/src/hard"
	ln -s b.txt "$T/src/link"
	: >"$T/src/a b"
	printf x >"$T/src/é"
	chmod 0640 "$T/src/b.txt"
	chmod 0644 "$T/src/a b" "$T/src/é"
	chmod 0711 "$T/src/sub"
	chmod 2755 "$T/src/Zdir"
	"$R4" mkfs "$T/a.img" 64M >/dev/null
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	u=$(id -u) g=$(id -g)
	# the format r4 ls has always printed: type and mode, links, uid, gid, size, name
	{
		printf 'd0755   5 %5u %5u          9 .\n' 0 0
		printf 'd0755   5 %5u %5u          9 ..\n' 0 0
		printf 'd2755   2 %5u %5u          2 Zdir\n' "$u" "$g"
		printf -- '-0644   1 %5u %5u          0 a b\n' "$u" "$g"
		printf -- '-0640   2 %5u %5u          6 b.txt\n' "$u" "$g"
		printf -- '-0640   2 %5u %5u          6 hard\n' "$u" "$g"
		printf 'l0777   1 %5u %5u          5 link\n' "$u" "$g"
		printf 'd0711   2 %5u %5u          2 sub\n' "$u" "$g"
		printf -- '-0644   1 %5u %5u          1 é\n' "$u" "$g"
	} >"$T/want"
	run "$R4" ls "$T/a.img" /
	assert_success
	assert_output "$(cat "$T/want")"
	run "$R4" ls -l "$T/a.img"
	assert_output "$(cat "$T/want")"
	run "$R4" ls -1 "$T/a.img" /
	assert_success
	assert_output "$(printf '.\n..\nZdir\na b\nb.txt\nhard\nlink\nsub\né')"
	run "$R4" ls "$T/a.img" -1 /sub
	assert_output "$(printf '.\n..')"
	run "$R4" ls -1 "$T/a.img" /b.txt
	assert_failure 1
	assert_output "r4: cannot list '/b.txt': Not a directory"
	run "$R4" ls -x "$T/a.img"
	assert_failure 2
	assert_line --index 0 "r4: ls: unknown option '-x'"
}

@test "files libreiser4 wrote read back byte-exact in r4" {
	need_r4p
	for profile in "" "-o create=reg40"; do
		mkfs_reiser4 "$T/p.img" 256M $profile
		"$R4P" gen "$T/p.img" 7 30 >"$T/list"
		while read -r path size crc; do
			"$R4" cat "$T/p.img" "$path" >"$T/r4.out"
			cmp "$T/r4.out" <("$R4P" cat "$T/p.img" "$path")
			[ "$(stat -c %s "$T/r4.out")" -eq "$size" ]
		done <"$T/list"
		[ "$(wc -l <"$T/list")" -eq 30 ]
	done
}

@test "r4 adds directories, files and links to images mkfs.reiser4 made" {
	need_r4p
	mk_tree
	for profile in "" "-o create=reg40" "-o node=node41"; do
		mkfs_reiser4 "$T/m.img" 64M $profile
		run "$R4" import "$T/m.img" "$T/src" /copy
		assert_success
		fsck_reiser4 "$T/m.img"
		cmp <("$R4P" cat "$T/m.img" /copy/sub/rand.bin) "$T/src/sub/rand.bin"
	done
}

@test "dump: the storage tree as text and as a Graphviz digraph that dot renders" {
	mk_tree
	"$R4" mkfs "$T/a.img" 64M
	"$R4" import "$T/a.img" "$T/src" >/dev/null
	run "$R4" dump "$T/a.img"
	assert_success
	assert_line --index 0 --regexp '^the storage tree of .*a\.img: height [0-9]+$'
	assert_line --regexp '^ *\[29:1\(SD\):0:2a:0\] stat, [0-9]+ bytes$'
	local nodes ptrs
	nodes=$(grep -c '^ *level ' <<<"$output")
	ptrs=$(grep -c ' nodeptr -> block ' <<<"$output")
	[ "$ptrs" -eq $((nodes - 1)) ]
	run "$R4" dump --dot "$T/a.img"
	assert_success
	assert_line --index 0 'digraph r4 {'
	assert_line --index $((${#lines[@]} - 1)) '}'
	[ "$(grep -c ' \[label="{' <<<"$output")" -eq "$nodes" ]
	[ "$(grep -c ' -> n[0-9]*;$' <<<"$output")" -eq "$ptrs" ]
	if ! command -v dot >/dev/null; then
		skip "graphviz's dot not installed (scripts/deps.sh installs it)"
	fi
	dot -Tsvg -o "$T/tree.svg" <<<"$output"
	[ "$(grep -c '<g id="node' "$T/tree.svg")" -eq "$nodes" ]
	run "$R4" dump --dot
	assert_failure 2
}

@test "plugins: the registry by type, labels reiser4progs knows too" {
	run "$R4" plugins formatting
	assert_success
	assert_output "$(printf '%s\n' \
		'formatting        0  extents          bodies in extents only (whole blocks)' \
		'formatting        1  tails            bodies in tails only (packed into the leaves)' \
		'formatting        2  smart            tails up to four blocks, extents beyond (the default)')"
	run "$R4" plugins
	assert_success
	assert_line --regexp '^item +5  extent40 '
	assert_line --regexp '^compression +2  zstd1 '
	# every label debugfs.reiser4 lists for a type r4 shares is r4's too, with the same id
	if ! command -v debugfs.reiser4 >/dev/null; then
		skip "reiser4progs not installed (scripts/deps.sh installs it)"
	fi
	"$R4" mkfs "$T/p.img" 32M
	run "$R4" plugins	# (the whole registry, each line checked below)
	assert_success
	local line label id type n=0
	declare -A kernel=([0x0]=file [0x1]=item [0x2]=node [0x3]=hash [0x4]=fibration
		[0x5]=formatting [0xc]=compression [0xd]=compression_mode [0x10]=cluster)
	while read -r line; do
		[[ $line =~ ^\"([^\"]+)\"\ +\(id:(0x[0-9a-f]+)\ type:(0x[0-9a-f]+)\) ]] || continue
		label=${BASH_REMATCH[1]} id=$((BASH_REMATCH[2])) type=${kernel[${BASH_REMATCH[3]}]:-}
		[ -n "$type" ] || continue
		assert_line --regexp "^$type +$id  $label "
		n=$((n + 1))
	done < <(debugfs.reiser4 -l "$T/p.img" 2>/dev/null)
	[ "$n" -ge 39 ]
	run "$R4" plugins colour
	assert_failure 2
	assert_output "r4: plugins: no plugin type 'colour'"
}
