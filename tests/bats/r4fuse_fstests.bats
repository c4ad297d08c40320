#!/usr/bin/env bats
# What fstests found wrong on the mount (issue 23), each as the test that
# found it does it: an open directory a rename replaced (generic/035),
# file handles (generic/426, 467, 477, 756, 777), SEEK_DATA and SEEK_HOLE
# (generic/286), and -o dev,suid (generic/184, 306, 434, 633).

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

# replaced DIR: open a directory and a file, rename another over each,
# then what a process still sees through them (and in the directory as
# its working directory); and in a working directory removed, with no
# descriptor open.  One line each.
replaced() {
	python3 - "$1" <<'EOF'
import os, sys
os.chdir(sys.argv[1])
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
	mknod "$MNT/null" c 1 3 2>/dev/null || true
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
