#!/usr/bin/env bats
# r4fuse_group: group commit on a real mount (root, /dev/fuse), unmounted
# in teardown even when a test fails.  Several processes change files and
# fsync at once: an fsync that returns 0 has its process's bytes on disk
# whether its own commit or another's made them durable (kill -9 of
# r4fuse right after), every file ends right, the image checks clean.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd python3
	# WRITER DIR NAME SECS ACK: pwrite an 8-digit counter over DIR/NAME.a
	# and DIR/NAME.b, fsync both, then append the counter to ACK (outside
	# the mount), for SECS seconds or until a call fails (the mount gone).
	WRITER=$T/writer.py
	cat >"$WRITER" <<'PY'
import os, sys, time
d, name, secs, ack = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
fds = [os.open("%s/%s.%s" % (d, name, s), os.O_RDWR | os.O_CREAT, 0o644) for s in "ab"]
out = open(ack, "a", buffering=1)
end, i = time.time() + secs, 0
try:
    while time.time() < end:
        i += 1
        for fd in fds:
            os.pwrite(fd, b"%08d" % i, 0)
        for fd in fds:
            os.fsync(fd)
        out.write("%d\n" % i)
except OSError:
    pass
PY
}

teardown() {
	fuse_teardown
	r4_teardown
}

# last_ack FILE: the last counter a writer saw fsync'd (0: none)
last_ack() {
	local n
	n=$(tail -n 1 "$1" 2>/dev/null)
	echo "${n:-0}"
}

@test "4 writers fsync at once, kill -9 of r4fuse: every fsync'd change is in the image" {
	# (commit=60: only fsync commits while the test runs)
	mount_r4_fg -o commit=60
	local i pids=()
	for i in 1 2 3 4; do
		python3 "$WRITER" "$MNT" "w$i" 30 "$T/ack$i" &
		pids+=($!)
	done
	sleep 1.5
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	wait "${pids[@]}" || true
	fusermount3 -uz "$MNT" 2>/dev/null || true
	for i in 1 2 3 4; do
		local ack got f
		ack=$(last_ack "$T/ack$i")
		[ "$ack" -gt 0 ] || { echo "writer $i: no fsync returned" >&2; return 1; }
		for f in a b; do
			run "$R4SH" -c "cat /w$i.$f" "$IMG"
			assert_success
			got=$((10#$output))
			# what fsync acknowledged, or the one change after it that
			# a commit may have taken along
			if [ "$got" -lt "$ack" ] || [ "$got" -gt $((ack + 1)) ]; then
				echo "w$i.$f holds $got, its last fsync returned after $ack" >&2
				return 1
			fi
		done
	done
	fsck_both "$IMG"
}

@test "4 writers with fsync on one mount: unmounted, every file holds its last change; fsck clean" {
	mount_r4_fg
	local i pids=()
	for i in 1 2 3 4; do
		python3 "$WRITER" "$MNT" "w$i" 1.5 "$T/ack$i" &
		pids+=($!)
	done
	# (and a fifth process making files meanwhile, without fsync)
	for i in $(seq 1 50); do echo "f$i" >"$MNT/f$i"; done
	wait "${pids[@]}"
	umount_r4
	for i in 1 2 3 4; do
		local ack
		ack=$(last_ack "$T/ack$i")
		[ "$ack" -gt 0 ]
		run "$R4SH" -c "cat /w$i.a /w$i.b" "$IMG"
		assert_success
		assert_output "$(printf '%08d\n%08d' "$ack" "$ack")"
	done
	run "$R4SH" -c 'cat /f1 /f50' "$IMG"
	assert_output $'f1\nf50'
	fsck_both "$IMG"
}

@test "fsync of one file makes the whole group durable, another process's changes too" {
	mount_r4_fg -o commit=60
	echo other >"$MNT/other"	# (this shell: one process)
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
os.write(fd, b"mine\n")
os.fsync(fd)' "$MNT/mine"
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	fusermount3 -uz "$MNT" 2>/dev/null || true
	run "$R4SH" -c 'cat /other /mine' "$IMG"
	assert_success
	assert_output $'other\nmine'
}

@test "a change after a commit another process's fsync made needs, and gets, a commit of its own" {
	mount_r4_fg -o commit=60
	# a writes and does not fsync; b's fsync commits a's change; a's fsync
	# then finds it durable; a later change of a needs a commit of its own
	python3 -c 'import os, sys, subprocess
fa = os.open(sys.argv[1] + "/a", os.O_RDWR | os.O_CREAT)
os.pwrite(fa, b"one", 0)
subprocess.check_call(["python3", "-c", "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); os.write(fd, b\"b\"); os.fsync(fd)", sys.argv[1] + "/b"])
os.fsync(fa)
os.pwrite(fa, b"two", 0)
os.fsync(fa)' "$MNT"
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	fusermount3 -uz "$MNT" 2>/dev/null || true
	run "$R4SH" -c 'cat /a /b' "$IMG"
	assert_success
	assert_output $'two\nb'
}
