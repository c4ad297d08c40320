#!/usr/bin/env bats
# The image's lock and the end of a mount (issue 21), on real mounts made
# the way users make them: `r4fuse IMG MNT` in the background, no -f.
#  - one writer per image, in every program: a second r4fuse, r4 import,
#    r4 run, r4 fsck -y, r4 mkfs are refused while a mount holds the
#    image, and say who holds it (program, pid, mount point);
#  - r4 mkfs asks for -f before it overwrites a Reiser4 volume;
#  - r4 fsck on an image in use: exit 8, or with -n a warning and a check;
#  - r4sh on a mounted image works through the mount;
#  - the image is final when unmount returns: under load, fusermount3 -u
#    then at once r4 fsck -n and fsck.reiser4 --check, R4_UMOUNT_TRIES
#    times (default 12; `make check-long` runs 100);
#  - the mount's kind: fuseblk over a loop device (or the block device
#    itself), plain fuse read-only (without loop devices: r4_lock_ns.bats).
# Teardown unmounts everything under $T, aborting a hung connection.

bats_require_minimum_version 1.5.0

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
	LOOPDEV=
}

teardown() {
	fuse_teardown
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
	r4_teardown
}

# The words every program uses for the image held by the mount at $MNT.
held_by_mount() {
	local pid
	pid=$(r4fuse_pids)
	[ "$(wc -w <<<"$pid")" = 1 ] || { echo "r4fuse processes of $IMG: '$pid'" >&2; return 1; }
	echo "in use by r4fuse (pid $pid), mounted at $MNT"
}

@test "two background mounts of one image: the second is refused and names the first" {
	mount_r4
	held=$(held_by_mount)
	mkdir "$T/m2"
	run "$R4FUSE" "$IMG" "$T/m2"
	assert_failure 1
	assert_output "r4fuse: $IMG: $held"
	run mountpoint -q "$T/m2"
	assert_failure
	# the daemon, not the process that forked it, holds the image: it still serves
	echo new >"$MNT/bank/carol"
	run cat "$MNT/bank/carol"
	assert_output new
	fusermount3 -u "$MNT"
	run "$R4SH" -c 'cat /bank/carol' "$IMG"
	assert_success
	assert_output new
}

@test "r4 import, r4 run, r4 fsck -y, r4 mkfs on a mounted image: refused, naming the holder" {
	mount_r4
	held=$(held_by_mount)
	mkdir -p "$T/src" && echo s >"$T/src/f"
	run "$R4" import "$IMG" "$T/src" /imp
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" run -c '/bank/alice <- "0"' "$IMG"
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" fsck -y "$IMG"
	assert_failure 8
	assert_output "r4: $IMG: $held"
	run "$R4" fsck --fix "$IMG"
	assert_failure 8
	run "$R4" mkfs -f "$IMG" 64M
	assert_failure 1
	assert_output "r4: $IMG: $held"
	run "$R4" mkfs "$IMG" 64M
	assert_failure 1
	assert_output "r4: $IMG: $held"
	# nothing of it reached the image
	run cat "$MNT/bank/alice"
	assert_output 100
	run ls "$MNT"
	assert_output bank
	fusermount3 -u "$MNT"
	run "$R4" ls "$IMG" /bank
	assert_success
	assert_line --partial alice
}

@test "r4 mkfs refuses to overwrite a Reiser4 volume without -f" {
	run "$R4" mkfs "$IMG" 32M
	assert_failure 1
	assert_output "r4: $IMG: holds a Reiser4 volume already; -f (--force) overwrites it"
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 100
	# one of mkfs.reiser4's too
	need_cmd mkfs.reiser4
	mkfs_reiser4 "$T/p.img" 32M
	run "$R4" mkfs "$T/p.img" 32M
	assert_failure 1
	assert_output --partial 'holds a Reiser4 volume already'
	run "$R4" mkfs --force "$T/p.img" 32M
	assert_success
	run "$R4" mkfs -f "$IMG" 32M
	assert_success
	run "$R4" ls "$IMG" /
	assert_success
	refute_output --partial bank
	# anything else is no volume: made without asking
	truncate -s 16M "$T/zero.img"
	run "$R4" mkfs "$T/zero.img" 16M
	assert_success
}

@test "r4 fsck on a mounted image: exit 8 with the reason; -n warns and checks" {
	mount_r4
	held=$(held_by_mount)
	run --separate-stderr "$R4" fsck "$IMG"
	assert_failure 8
	assert_output ''
	[ "$stderr" = "r4: $IMG: $held; not checked: -n checks it anyway, read-only" ]
	run --separate-stderr "$R4" fsck -n "$IMG"
	assert_success
	assert_output --partial "$IMG: clean"
	[ "$stderr" = "r4: $IMG: $held; checking it anyway, read-only: it can change while it is read, so problems may show that are not there" ]
	fusermount3 -u "$MNT"
	run --separate-stderr "$R4" fsck "$IMG"
	assert_success
	[ -z "$stderr" ]
}

@test "r4sh -c on a background mount works through it; --read-only opens the image beside it" {
	mount_r4
	held=$(held_by_mount)
	run --separate-stderr "$R4SH" -c '/bank/alice <- "70"' -c 'ls /bank' "$IMG"
	assert_success
	assert_output - <<OUT
70
alice
bob
OUT
	[ "$stderr" = "r4sh: $IMG: $held: working through the mount" ]
	# through the mount, so the mount sees it at once
	run cat "$MNT/bank/alice"
	assert_output 70
	# the image itself, read beside the mount, holds what was committed
	echo fsynced >"$MNT/bank/dave" && sync "$MNT/bank/dave"
	run "$R4SH" --read-only -c 'cat /bank/dave' "$IMG"
	assert_success
	assert_output fsynced
	run "$R4SH" --read-only -c '/bank/x <- "1"' "$IMG"
	assert_failure
	fusermount3 -u "$MNT"
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 70
}

@test "a read-write mount is fuseblk over a loop device of the image, gone at unmount; ro is fuse" {
	mount_r4
	read -r maj_min type src < <(awk -v m="$MNT" '$5 == m { for (i = 7; $i != "-"; i++); print $3, $(i + 1), $(i + 2) }' /proc/self/mountinfo)
	[ "$type" = fuseblk.r4 ]
	[[ "$src" == /dev/loop* ]]
	[ "$(cat "/sys/dev/block/$maj_min/loop/backing_file")" = "$IMG" ]
	[ "$(cat "/sys/dev/block/$maj_min/loop/autoclear")" = 1 ]
	run df --output=source "$MNT"
	assert_line "$src"
	fusermount3 -u "$MNT"
	run losetup -j "$IMG"
	assert_output ''
	mount_r4 -o ro
	run awk -v m="$MNT" '$5 == m { for (i = 7; $i != "-"; i++); print $(i + 1), $(i + 2) }' /proc/self/mountinfo
	assert_output "fuse.r4 $IMG"
	# a read-only mount holds nothing: the image is not in use
	run "$R4" fsck "$IMG"
	assert_success
}

@test "a block device image: mounted fuseblk itself; others refused by the lock and the kernel" {
	LOOPDEV=$(losetup -f --show "$IMG")
	IMG=$LOOPDEV	# (r4fuse_pids looks for the device's name)
	mount_r4
	run awk -v m="$MNT" '$5 == m { for (i = 7; $i != "-"; i++); print $(i + 1), $(i + 2) }' /proc/self/mountinfo
	assert_output "fuseblk.r4 $LOOPDEV"
	held=$(held_by_mount)
	run "$R4FUSE" "$LOOPDEV" "$T"
	assert_failure 1
	assert_output "r4fuse: $LOOPDEV: $held"
	run "$R4" fsck -y "$LOOPDEV"
	assert_failure 8
	assert_output "r4: $LOOPDEV: $held"
	run "$R4SH" -c 'ls /' "$LOOPDEV"
	assert_success
	assert_line --partial 'working through the mount'
	echo hi >"$MNT/f"
	fusermount3 -u "$MNT"
	run "$R4" fsck "$LOOPDEV"
	assert_success
	run "$R4" cat "$LOOPDEV" /f
	assert_output hi
}

# writer DIR: writes files in DIR until killed, fsyncing every other one
# until $T/nosync exists; between two files it holds none open, so an
# unmount can get through.  (An fsync commits everything written before
# it, so a commit left to the unmount needs a while without one.)
writer() {
	local i=0
	while :; do
		if [ $((i % 2)) = 0 ] && [ ! -e "$T/nosync" ]; then
			dd if=/dev/urandom of="$1/s$((i % 20))" bs=16k count=$((1 + i % 8)) \
				conv=fsync status=none 2>/dev/null
		else
			dd if=/dev/urandom of="$1/u$((i % 20))" bs=64k count=$((1 + i % 16)) \
				status=none 2>/dev/null
		fi
		i=$((i + 1))
	done
}

r4_cat() {
	"$R4" cat "$@" 2>&1
}

@test "the image is final when unmount returns: under load, then both checkers at once" {
	need_cmd fsck.reiser4 "reiser4progs not installed"
	local tries=${R4_UMOUNT_TRIES:-12} bad=0 busy=0 t0 ms
	t0=$(date +%s%N)
	for i in $(seq "$tries"); do
		mount_r4
		mkdir -p "$MNT/w"
		rm -f "$T/nosync"
		writer "$MNT/w" &
		wpid=$!
		sleep 0.$((RANDOM % 3 + 1))
		# then unsynced writes only: the unmount's commit takes them
		touch "$T/nosync"
		dd if=/dev/urandom of="$MNT/w/big" bs=1M count=8 status=none
		echo "$i" >"$MNT/w/mark"
		# fusermount3 -u while the writer goes on; busy while it holds a file
		n=0
		until fusermount3 -u "$MNT" 2>/dev/null; do
			n=$((n + 1))
			[ "$n" -lt 2000 ] || { kill "$wpid"; wait "$wpid"; fusermount3 -u "$MNT"; break; }
		done
		busy=$((busy + n))
		# at once: what was written last is there, r4's checker finds the
		# image clean and no one holding it, and so does reiser4progs'
		if [ "$(r4_cat "$IMG" /w/mark)" != "$i" ]; then
			echo "# try $i: /w/mark is not in the image yet" >&3
			bad=$((bad + 1))
		fi
		if ! out=$("$R4" fsck -n "$IMG" 2>&1) || [[ "$out" != *": clean, "* ]] ||
		   [[ "$out" == *"in use by"* ]]; then
			echo "# try $i: r4 fsck -n: $out" >&3
			bad=$((bad + 1))
		fi
		if ! out=$(fsck.reiser4 --check -y "$IMG" 2>&1) || [[ "$out" != *"FS is consistent"* ]]; then
			echo "# try $i: fsck.reiser4 --check: $out" >&3
			bad=$((bad + 1))
		fi
		kill "$wpid" 2>/dev/null || true
		wait "$wpid" 2>/dev/null || true
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# $tries unmounts under load, each checked at once: $bad failed checks," \
		"$busy busy retries, $((ms / 1000)).$((ms % 1000 / 100)) s" >&3
	[ "$bad" = 0 ]
}
