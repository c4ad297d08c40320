#!/usr/bin/env bats
# Volumes where they are (docs/volumes.md): a partition of a disk image
# (--partition N, MBR with a logical partition, GPT) for r4, r4sh and
# r4fuse, writing nothing outside it; an NBD export (nbdkit, and a qcow2
# image through qemu-nbd) named by its URI; a partitioned disk over NBD;
# the errors' words.

setup() { load helper; r4_setup; }
teardown() {
	[ -z "${MNT:-}" ] || fuse_teardown
	local p
	for p in "$T"/*.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	r4_teardown
}

# mbr_disk IMG: 24 MiB of random bytes with an MBR: 1 and 2 primary
# (4 and 6 MiB), 3 extended holding 5 (8 MiB)
mbr_disk() {
	need_cmd sfdisk "sfdisk not installed (Debian's fdisk)"
	head -c 24M /dev/urandom >"$1"
	printf 'label: dos\n,4M,L\n,6M,L\n,,E\n,8M,L\n' | sfdisk -q "$1"
}

# gpt_disk IMG: 24 MiB of random bytes with a GPT: 1 (4 MiB) and 2 (8 MiB)
gpt_disk() {
	need_cmd sfdisk "sfdisk not installed (Debian's fdisk)"
	head -c 24M /dev/urandom >"$1"
	printf 'label: gpt\n,4M,L\n,8M,L\n' | sfdisk -q "$1"
}

# part IMG N: "START SIZE" of partition N in bytes, as sfdisk reads the table
part() {
	sfdisk -d "$1" | awk -v p="$1$2" '$1 == p {
		gsub(/[^0-9]/, "", $4); gsub(/[^0-9]/, "", $6); print $4 * 512, $6 * 512 }'
}

# outside IMG N: the checksums of the bytes before and after partition N
outside() {
	local start size
	read -r start size < <(part "$1" "$2")
	{ head -c "$start" "$1" | md5sum; tail -c +$((start + size + 1)) "$1" | md5sum; } |
		tr -d ' \n-'
}

# serve IMG [PLUGIN-ARGS...]: nbdkit's file plugin serves IMG on $T/nbd.sock;
# URI names it
serve() {
	need_cmd nbdkit "nbdkit not installed"
	nbdkit --unix "$T/nbd.sock" -P "$T/nbdkit.pid" file "$1"
	wait_socket "$T/nbd.sock"
	URI="nbd+unix:///?socket=$T/nbd.sock"
}

# wait_socket PATH: the server made it (both servers make it before they
# go to the background; this bounds the wait if one does not)
wait_socket() {
	for _ in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.05
	done
	echo "no socket $1" >&2
	return 1
}

@test "mkfs --partition 2 on an MBR disk: import, ls, cat and fsck inside it, and not a byte outside" {
	mbr_disk "$T/disk.img"
	before=$(outside "$T/disk.img" 2)
	mkdir -p "$T/src/d" && echo one >"$T/src/d/f" && echo two >"$T/src/g"
	run "$R4" mkfs --partition 2 "$T/disk.img" 6M
	assert_success
	run "$R4" import "$T/disk.img" "$T/src" --partition=2
	assert_success
	run "$R4" ls --partition 2 "$T/disk.img" /d
	assert_success
	assert_output --partial ' f'
	run "$R4" cat --partition 2 "$T/disk.img" /d/f
	assert_output one
	run "$R4" fsck --partition 2 "$T/disk.img"
	assert_success
	run "$R4" info --partition 2 "$T/disk.img"
	assert_line 'blocks:        1536'
	# salvage and export read the partition too
	run "$R4" export --salvage --partition 2 "$T/disk.img" "$T/salv"
	assert_success
	diff -r "$T/src" "$T/salv"
	run "$R4" export --partition 2 "$T/disk.img" /d "$T/out"
	assert_success
	diff -r "$T/src/d" "$T/out"
	assert_equal "$(outside "$T/disk.img" 2)" "$before"
	read -r start size < <(part "$T/disk.img" 2)
	dd if="$T/disk.img" of="$T/p2.img" bs=512 skip=$((start / 512)) count=$((size / 512)) status=none
	fsck_both "$T/p2.img"
	run "$R4" cat "$T/p2.img" /g
	assert_output two
}

@test "a logical partition (5) of an MBR disk and a GPT partition" {
	mbr_disk "$T/disk.img"
	before=$(outside "$T/disk.img" 5)
	"$R4" mkfs --partition 5 "$T/disk.img" 8M
	run "$R4" run --partition 5 -c '/x <- "in five"' "$T/disk.img"
	assert_success
	run "$R4" cat --partition 5 "$T/disk.img" /x
	assert_output 'in five'
	assert_equal "$(outside "$T/disk.img" 5)" "$before"

	gpt_disk "$T/gpt.img"
	before=$(outside "$T/gpt.img" 2)
	"$R4" mkfs --partition 2 "$T/gpt.img" 8M
	run "$R4" mkfs --partition 2 "$T/gpt.img" 8M
	assert_failure 1
	assert_output "r4: $T/gpt.img: holds a Reiser4 volume already; -f (--force) overwrites it"
	"$R4" mkfs -f --partition 2 "$T/gpt.img" 8M
	run "$R4" info --partition 2 "$T/gpt.img"
	assert_line 'blocks:        2048'
	run "$R4" fsck --partition 2 "$T/gpt.img"
	assert_success
	assert_equal "$(outside "$T/gpt.img" 2)" "$before"
	read -r start size < <(part "$T/gpt.img" 2)
	dd if="$T/gpt.img" of="$T/p.img" bs=512 skip=$((start / 512)) count=$((size / 512)) status=none
	fsck_reiser4 "$T/p.img"
}

@test "r4sh and r4fuse --partition: a file written by each, read back by r4 cat" {
	fuse_setup 16M
	mbr_disk "$T/disk.img"
	before=$(outside "$T/disk.img" 2)
	"$R4" mkfs --partition 2 "$T/disk.img" 6M
	run "$R4SH" --partition 2 -c '/sh <- "from r4sh"' "$T/disk.img"
	assert_success
	IMG=$T/disk.img
	mount_r4 -o partition=2
	assert_equal "$(cat "$MNT/sh")" 'from r4sh'
	echo 'from the mount' >"$MNT/m"
	umount_r4
	run "$R4" cat --partition 2 "$T/disk.img" /m
	assert_output 'from the mount'
	mount_r4 --partition 2 -o ro
	assert_equal "$(cat "$MNT/m")" 'from the mount'
	umount_r4
	mount_r4 --partition=2 -o ro
	assert_equal "$(cat "$MNT/m")" 'from the mount'
	umount_r4
	assert_equal "$(outside "$T/disk.img" 2)" "$before"
	run "$R4" fsck --partition 2 "$T/disk.img"
	assert_success
}

@test "no partition table, no partition N, the extended one, a bad N: what each program says" {
	mbr_disk "$T/disk.img"
	"$R4" mkfs "$T/plain.img" 4M
	run "$R4" ls --partition 1 "$T/plain.img"
	assert_failure 1
	assert_line "r4: '$T/plain.img' has no partition table"
	run "$R4" ls --partition 9 "$T/disk.img"
	assert_failure 1
	assert_line "r4: '$T/disk.img' has no partition 9 (it has 1, 2, 5)"
	run "$R4" ls --partition 3 "$T/disk.img"
	assert_failure 1
	assert_line "r4: '$T/disk.img': partition 3 is the extended one, which holds the logical ones (it has 1, 2, 5)"
	run "$R4" fsck --partition 9 "$T/disk.img"
	assert_line "r4: '$T/disk.img' has no partition 9 (it has 1, 2, 5)"
	run "$R4" mkfs --partition 9 "$T/disk.img" 4M
	assert_failure 1
	assert_line "r4: '$T/disk.img' has no partition 9 (it has 1, 2, 5)"
	run "$R4" mkfs --partition 1 "$T/disk.img" 5M
	assert_failure 1
	assert_output "r4: cannot make '$T/disk.img': 5M is larger than the partition"
	run "$R4" mkfs --partition 1 "$T/none.img" 4M
	assert_failure 1
	assert_file_not_exists "$T/none.img"
	run "$R4" ls --partition x "$T/disk.img"
	assert_failure 2
	assert_output "r4: --partition 'x': want a partition number (1, 2, ...)"
	gpt_disk "$T/gpt.img"
	run "$R4" cat --partition 3 "$T/gpt.img" /x
	assert_line "r4: '$T/gpt.img' has no partition 3 (it has 1, 2)"
	run "$R4_BUILD/r4sh" --partition 4 -c 'ls /' "$T/gpt.img"
	assert_failure 1
	assert_line "r4sh: '$T/gpt.img' has no partition 4 (it has 1, 2)"
	run "$R4_BUILD/r4fuse" "$T/gpt.img" "$T" -o partition=4
	assert_failure 1
	assert_line "r4fuse: $T/gpt.img: '$T/gpt.img' has no partition 4 (it has 1, 2)"
}

@test "an NBD export (nbdkit): ls, cat, import, a mount's write; the image is consistent after" {
	fuse_setup 16M
	mkdir -p "$T/src" && echo one >"$T/src/f"
	"$R4" import "$IMG" "$T/src"
	serve "$IMG"
	run "$R4" ls "$URI" /
	assert_success
	assert_output --partial ' f'
	run "$R4" cat "$URI" /f
	assert_output one
	echo two >"$T/src/g"
	run "$R4" import "$URI" "$T/src" /in
	assert_success
	run "$R4" cat "$URI" /in/g
	assert_output two
	disk=$IMG
	IMG=$URI
	# in the background, as users mount: the unmount returns once the
	# last commit is on the export (a fuseblk mount over a stand-in loop
	# device), so a reader right after sees it
	mount_r4
	echo 'over nbd' >"$MNT/m"
	umount_r4
	run "$R4" cat "$URI" /m
	assert_output 'over nbd'
	kill "$(cat "$T/nbdkit.pid")"
	rm "$T/nbdkit.pid"
	run "$R4" cat "$disk" /m
	assert_output 'over nbd'
	fsck_both "$disk"
}

@test "a qcow2 image through qemu-nbd; a partitioned disk over NBD" {
	need_cmd qemu-nbd "qemu-utils not installed"
	"$R4" mkfs "$T/a.img" 8M
	"$R4" run -c '/q <- "in qcow2"' "$T/a.img"
	qemu-img convert -f raw -O qcow2 "$T/a.img" "$T/a.qcow2"
	qemu-nbd --socket="$T/q.sock" --fork --pid-file="$T/qemu.pid" -f qcow2 "$T/a.qcow2"
	wait_socket "$T/q.sock"
	run "$R4" cat "nbd+unix:///?socket=$T/q.sock" /q
	assert_success
	assert_output 'in qcow2'

	mbr_disk "$T/disk.img"
	before=$(outside "$T/disk.img" 5)
	serve "$T/disk.img"
	run "$R4" mkfs --partition 5 "$URI" 8M
	assert_success
	run "$R4" run --partition 5 -c '/n <- "five over nbd"' "$URI"
	assert_success
	run "$R4" cat --partition 5 "$URI" /n
	assert_output 'five over nbd'
	run "$R4" export --salvage --list --partition 5 "$URI" /n
	assert_output "- 0644     0     0         13 /n"
	run "$R4" ls --partition 7 "$URI"
	assert_line "r4: '$URI' has no partition 7 (it has 1, 2, 5)"
	kill "$(cat "$T/nbdkit.pid")"
	rm "$T/nbdkit.pid"
	run "$R4" cat --partition 5 "$T/disk.img" /n
	assert_output 'five over nbd'
	assert_equal "$(outside "$T/disk.img" 5)" "$before"
}

@test "an NBD URI no server answers: a clear error, status 1" {
	run "$R4" ls "nbd+unix:///?socket=$T/none.sock"
	assert_failure 1
	assert_line "r4: cannot open image 'nbd+unix:///?socket=$T/none.sock': No such file or directory"
	run "$R4" info nbd://127.0.0.1:1/x
	assert_failure 1
	assert_line "r4: cannot open image 'nbd://127.0.0.1:1/x': Connection refused"
	run "$R4_BUILD/r4sh" -c 'ls /' "nbd+unix:///?socket=$T/none.sock"
	assert_failure 1
	assert_output --partial 'nbd_connect_uri'
}
