#!/usr/bin/env bats
# What fstests found wrong on the mount (issue 23), each as the test that
# found it does it: an open directory a rename replaced (generic/035),
# file handles (generic/426, 467, 477, 756, 777), SEEK_DATA and SEEK_HOLE
# (generic/286), -o dev,suid (generic/184, 306, 434, 633), buffered reads
# beside O_DIRECT writes (generic/451), and fallocate's PUNCH_HOLE (the
# fpunch tests).

setup() { load helper; r4_setup; fuse_setup 64M; HANDLE=$R4_BUILD/tests/r4handle; }
teardown() { exec 4<&-; fuse_teardown; r4_teardown; }

# replaced DIR: open a directory and a file, rename another over each,
# then what a process still sees through them (and in the directory as
# its working directory); and in a working directory removed, with no
# descriptor open.  One line each.
replaced() {
	python3 - "$1" <<'EOF'
import os, sys
os.chdir(sys.argv[1])
os.umask(0o022)
def say(what, f):
    try:
        print(what, f())
    except OSError as e:
        print(what, e.strerror)
os.mkdir("a"); os.mkdir("b")
fd = os.open("b", os.O_RDONLY | os.O_DIRECTORY)
os.rename("a", "b")
say("dir fstat", lambda: (oct(os.fstat(fd).st_mode), os.fstat(fd).st_nlink))
say("dir listed", lambda: sorted(e.name for e in os.scandir(fd)))
say("fchdir", lambda: os.fchdir(fd))
say("opendir .", lambda: os.listdir("."))
say("stat .", lambda: os.stat(".").st_nlink)
say("getcwd", os.getcwd)
say("mkdir in it", lambda: os.mkdir("x"))
os.chdir(sys.argv[1])
os.close(fd)
open("f", "w").write("new"); open("g", "w").write("old")
fd = os.open("g", os.O_RDONLY)
os.rename("f", "g")
say("file fstat", lambda: os.fstat(fd).st_nlink)
say("file read", lambda: os.pread(fd, 10, 0))
os.close(fd)
say("listed", lambda: sorted(os.listdir(".")))
os.mkdir("c"); os.chdir("c"); os.rmdir("../c")
say("removed cwd listed", lambda: os.listdir("."))
say("removed cwd stat", lambda: (oct(os.stat(".").st_mode), os.stat(".").st_nlink))
EOF
}

@test "generic/035: an open directory or file a rename replaced: fstat, fchdir, readdir as on tmpfs" {
	need_cmd python3
	mount_r4
	mkdir "$T/ref" "$MNT/m"
	replaced "$T/ref" >"$T/ref.out"
	run replaced "$MNT/m"
	assert_success
	assert_output "$(cat "$T/ref.out")"
	assert_line "dir fstat ('0o40755', 0)"
	assert_line "dir listed []"
	assert_line "file fstat 0"
	assert_line "removed cwd listed []"
	umount_r4
	run "$R4" fsck -n "$IMG"
	assert_success
}

# The mount's own options (mountinfo's sixth field).
mount_opts() {
	awk -v m="$MNT" '$5 == m { print $6 }' /proc/self/mountinfo
}

# What dev and suid do, as one line: a device file opened and a set-uid
# program run by uid 65534 (the mount needs allow_other for that).
dev_suid() {
	[ -c "$MNT/null" ] || mknod "$MNT/null" c 1 3
	cp /usr/bin/id "$MNT/id" && chmod 4755 "$MNT/id"
	if { echo x >"$MNT/null"; } 2>/dev/null; then echo -n "dev "; else echo -n "nodev "; fi
	echo "euid $(setpriv --reuid=65534 --regid=65534 --clear-groups "$MNT/id" -u)"
}

@test "generic/184 etc: -o dev,suid as root; nodev,nosuid by default" {
	need_cmd setpriv
	mount_r4 -o allow_other
	run mount_opts
	assert_output --regexp '(^|,)nosuid(,|$)'
	assert_output --regexp '(^|,)nodev(,|$)'
	run dev_suid
	assert_output 'nodev euid 65534'
	umount_r4
	mount_r4 -o allow_other,dev,suid
	run mount_opts
	refute_output --partial nosuid
	refute_output --partial nodev
	run dev_suid
	assert_output 'dev euid 0'
	umount_r4
	mount_r4 -o allow_other,suid,nodev
	run mount_opts
	refute_output --partial nosuid
	assert_output --partial nodev
	umount_r4
}

@test "mount.fuse.r4: dev,suid unless nodev or nosuid, as mount(8) means them" {
	# `mount -t fuse.r4 -o dev,suid IMG DIR` runs the helper with `-o rw`
	# alone (util-linux: dev and suid are mount(2)'s defaults)
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o rw,allow_other
	run mount_opts
	refute_output --partial nosuid
	refute_output --partial nodev
	run dev_suid
	assert_output 'dev euid 0'
	umount "$MNT"
	"$R4_BUILD/mount.fuse.r4" "$IMG" "$MNT" -o rw,nosuid,nodev,allow_other
	run mount_opts
	assert_output --partial nosuid
	assert_output --partial nodev
	run dev_suid
	assert_output 'nodev euid 65534'
	umount "$MNT"
}

# seeks FILE WHENCE:OFFSET...: lseek's answer to each (or its error).
seeks() {
	python3 - "$@" <<'EOF2'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for a in sys.argv[2:]:
    w, o = a.split(":")
    try:
        print(a, os.lseek(fd, int(o), {"data": os.SEEK_DATA, "hole": os.SEEK_HOLE}[w]))
    except OSError as e:
        print(a, e.strerror)
EOF2
}

@test "generic/286: SEEK_DATA and SEEK_HOLE find the holes; cp keeps them" {
	need_cmd python3
	mount_r4
	# 4 MiB: a hole, 8 KiB of zeros written at 1 MiB (data), a hole, 10
	# bytes at 3 MiB, a hole to the end
	truncate -s 4M "$MNT/s"
	dd if=/dev/zero of="$MNT/s" bs=4096 seek=256 count=2 conv=notrunc status=none
	printf 0123456789 | dd of="$MNT/s" bs=1 seek=3145728 conv=notrunc status=none
	run seeks "$MNT/s" data:0 hole:0 hole:1048576 data:1048676 data:1056768 hole:3145730 \
		data:3149824 hole:4194303 hole:4194304 data:-1
	assert_output - <<'EOF2'
data:0 1048576
hole:0 0
hole:1048576 1056768
data:1048676 1048676
data:1056768 3145728
hole:3145730 3149824
data:3149824 No such device or address
hole:4194303 4194303
hole:4194304 No such device or address
data:-1 No such device or address
EOF2
	# the same after a commit (the blocks placed) and in a small (tail) file
	sync "$MNT/s"
	run seeks "$MNT/s" data:0 hole:1048576
	assert_output $'data:0 1048576\nhole:1048576 1056768'
	printf abc >"$MNT/t"
	run seeks "$MNT/t" data:0 hole:1 data:3
	assert_output $'data:0 0\nhole:1 3\ndata:3 No such device or address'
	# cp asks for the data (coreutils 9 reads only what SEEK_DATA finds)
	# and keeps the holes (and makes holes of the zeros)
	if strace -o /dev/null true 2>/dev/null; then
		strace -o "$T/trace" -e trace=lseek cp --sparse=always "$MNT/s" "$MNT/copy"
		run grep -c 'SEEK_DATA) *= 1048576$' "$T/trace"
		assert_output 1
	else
		cp --sparse=always "$MNT/s" "$MNT/copy"
	fi
	cmp "$MNT/s" "$MNT/copy"
	run stat -c %b "$MNT/s" "$MNT/copy"
	assert_output $'24\n8'
	umount_r4
	run "$R4" fsck -n "$IMG"
	assert_success
}

@test "fallocate -p (PUNCH_HOLE): zeros in the range, its blocks freed, SEEK_HOLE finds it" {
	need_cmd python3
	mount_r4
	head -c 1M /dev/urandom >"$T/ref"
	cp "$T/ref" "$MNT/p"
	sync "$MNT/p"
	# blocks 3..123 go, the edges are zeroed; past the end nothing
	fallocate -p -o 10000 -l 500000 "$MNT/p"
	fallocate -p -o $((1048576 - 100)) -l 1M "$MNT/p"
	head -c 500000 /dev/zero | dd of="$T/ref" seek=10000 oflag=seek_bytes conv=notrunc status=none
	head -c 100 /dev/zero | dd of="$T/ref" seek=1048476 oflag=seek_bytes conv=notrunc status=none
	cmp "$T/ref" "$MNT/p"
	run stat -c '%s %b' "$MNT/p"
	assert_output "1048576 $((2048 - 121 * 8))"
	run seeks "$MNT/p" hole:0 data:12288
	assert_output $'hole:0 12288\ndata:12288 507904'
	# a small file's tail: zeros, no hole
	printf abcdefgh >"$MNT/t"
	fallocate -p -o 2 -l 3 "$MNT/t"
	run od -An -c "$MNT/t"
	assert_output '   a   b  \0  \0  \0   f   g   h'
	umount_r4
	run "$R4" fsck -n "$IMG"
	assert_success
	fsck_reiser4 "$IMG"
	# read back from the image after the unmount
	mount_r4
	cmp "$T/ref" "$MNT/p"
}

# Files and directories whose handles are saved ($T/handles), then moved,
# linked, unlinked and removed; $T/expected: what opening them by handle
# finds.
handles_setup() {
	need_file "$HANDLE" "$HANDLE not built (make fsx)"
	mkdir -p "$MNT/d/e" "$MNT/d/x"
	printf one >"$MNT/d/e/f"
	printf two >"$MNT/d/g"
	printf three >"$MNT/gone"
	printf kept >"$MNT/kept"
	"$HANDLE" save "$T/handles" "$MNT/d" "$MNT/d/e" "$MNT/d/e/f" \
		"$MNT/d/g" "$MNT/gone" "$MNT/d/x" "$MNT/kept"
	mv "$MNT/d/e/f" "$MNT/d/f2"
	ln "$MNT/d/g" "$MNT/d/e/g2"
	rm "$MNT/d/g" "$MNT/gone"
	rmdir "$MNT/d/x"
	exec 4<"$MNT/kept"	# (an orphan while open)
	rm "$MNT/kept"
	cat >"$T/expected" <<EOF2
$MNT/d: dir, same inode, nlink 3: e f2
$MNT/d/e: dir, same inode, nlink 2: g2
$MNT/d/e/f: file, same inode, nlink 1: one
$MNT/d/g: file, same inode, nlink 1: two
$MNT/gone: Stale file handle
$MNT/d/x: Stale file handle
$MNT/kept: file, same inode, nlink 0: kept
EOF2
}

@test "generic/426 etc: open_by_handle_at of files and directories moved, linked, removed" {
	mount_r4
	handles_setup
	run "$HANDLE" open "$MNT" "$T/handles"
	assert_output "$(cat "$T/expected")"
	exec 4<&-
	# a new session knows the same ids
	umount_r4
	mount_r4
	run "$HANDLE" open -w "$MNT" "$T/handles"
	assert_output "$(sed 's|kept: .*|kept: Stale file handle|' "$T/expected")"
	run cat "$MNT/d/f2" "$MNT/d/e/g2"
	assert_output one+two+
	umount_r4
	run "$R4" fsck -n "$IMG"
	assert_success
}

@test "generic/426 etc: open_by_handle_at after the kernel dropped its inodes (drop_caches)" {
	mount_r4
	handles_setup
	# the kernel forgets the nodes: it asks the bridge for "." of each id,
	# and reconnects a directory through ".." and its parent's listing
	{ echo 2 >/proc/sys/vm/drop_caches; } 2>/dev/null ||
		skip "/proc/sys/vm/drop_caches is not writable"
	run "$HANDLE" open -w "$MNT" "$T/handles"
	assert_output "$(cat "$T/expected")"
	echo 2 >/proc/sys/vm/drop_caches
	run "$HANDLE" open "$MNT" "$T/handles"
	assert_output "$(sed 's|: one$|: one+|; s|: two$|: two+|; s|: kept$|: kept+|' "$T/expected")"
	exec 4<&-
	run cat "$MNT/d/e/g2"
	assert_output two+
	umount_r4
}

@test "buffered reads beside O_DIRECT writes see what was written (generic/451)" {
	mount_r4
	# AIO O_DIRECT writes, each read back through a new buffered open,
	# while two threads read the file buffered
	run "$R4_BUILD/tests/r4dio" "$MNT/f" 3
	assert_success
	assert_output --regexp '^[1-9][0-9]* cycles, 0 stale$'
}
