#!/usr/bin/env bats
# r4fuse_loop: the serving loop (fuse-bridge/r4fuse.c, loop_own) on a real
# mount (root, /dev/fuse), unmounted in teardown even when a test fails.
# One thread reads /dev/fuse and answers what it read, so one process's
# calls one after the other all go to it (no second worker: libfuse's
# loop started one at the first call); a call that waits (an fsync
# gathering others) hands the reading to another thread, so the others'
# calls go on; the loop ends at the unmount and at SIGTERM.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
}

teardown() {
	fuse_teardown
	r4_teardown
}

# threads: how many threads r4fuse has now
threads() {
	ls "/proc/$FUSE_PID/task" | wc -l
}

@test "one process's calls one after the other: one worker answers them all, each new file seen by another process at once" {
	# (commit=60: no timer commit takes the mutex while the test runs)
	mount_r4_fg -o commit=60
	stat "$MNT" >/dev/null
	local before i
	before=$(threads)
	mkdir "$MNT/d"
	for i in $(seq 1 100); do
		printf 'file %d\n' "$i" >"$MNT/d/f$i"
		# another process (stat) sees the name at once
		[ "$(stat -c %s "$MNT/d/f$i")" = "$(printf 'file %d\n' "$i" | wc -c)" ]
	done
	# O_EXCL on a name made just before fails (bash's noclobber opens so)
	run bash -c "set -o noclobber; echo x >'$MNT/d/f7'"
	[ "$status" -ne 0 ]
	[[ $output == *"cannot overwrite existing file"* ]]
	[ "$(cat "$MNT/d/f7")" = "file 7" ]
	[ "$(threads)" -eq "$before" ]
	umount_r4
}

@test "calls that wait hand the reading on: fsyncs at once from 4 processes, creates beside them; all done, fsck clean" {
	need_cmd python3
	mount_r4_fg -o commit=60
	stat "$MNT" >/dev/null
	local before i pids=()
	before=$(threads)
	for i in 1 2 3 4; do
		python3 -c '
import os, sys
d = sys.argv[1]
for k in range(30):
    fd = os.open("%s/%d" % (d, k), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"%d" % k)
    os.fsync(fd)
    os.close(fd)
' "$(mkdir "$MNT/p$i" && echo "$MNT/p$i")" &
		pids+=($!)
	done
	mkdir "$MNT/s"
	for i in $(seq 1 50); do
		echo "$i" >"$MNT/s/$i"
	done
	wait "${pids[@]}"
	for i in 1 2 3 4; do
		[ "$(ls "$MNT/p$i" | wc -l)" -eq 30 ]
		[ "$(cat "$MNT/p$i/29")" = 29 ]
	done
	[ "$(cat "$MNT/s/50")" = 50 ]
	# (the fsyncs waited for each other: more threads answered)
	[ "$(threads)" -gt "$before" ]
	umount_r4
	run "$R4" fsck "$IMG"
	[ "$status" -eq 0 ]
}

@test "SIGTERM ends the loop: r4fuse unmounts, commits and exits 0; the file is in the image" {
	mount_r4_fg
	echo kept >"$MNT/f"
	kill -TERM "$FUSE_PID"
	local rc=0
	wait "$FUSE_PID" || rc=$?
	FUSE_PID=
	[ "$rc" -eq 0 ]
	! mountpoint -q "$MNT"
	run "$R4" cat "$IMG" /f
	[ "$status" -eq 0 ]
	[ "$output" = kept ]
}

@test "-o max_idle_threads=N still serves with libfuse's loop" {
	mount_r4_fg -o max_idle_threads=2
	echo one >"$MNT/f"
	[ "$(cat "$MNT/f")" = one ]
	umount_r4
}
