#!/usr/bin/env bats
# r4fuse_ctlgroup: commands written to the control file by several
# processes at once share commits (root, /dev/fuse), unmounted in teardown
# even when a test fails.  Each command stays a unit of its own: one that
# fails is undone alone and hears of it alone, the others' changes stay;
# a write(2) that returned has its command on disk (kill -9 of r4fuse
# right after); fewer commits than commands, counted by
# bench/group_preload.c preloaded into r4fuse.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd python3
	need_cmd cc
	# WRITERS MNT K DIR: four processes, each sending K commands through
	# MNT/..reiser4 at once (a barrier before each), each changing
	# /wI.a and /wI.b to the 8-digit counter; DIR/ackI (outside the
	# mount) gets "N ok" or "N ERRNO" for each.  w3 and w4 make every
	# odd command change /wI.a and then write into a missing directory:
	# w3's whole command must be undone, w4's runs one unit per statement
	# (its /w4.a stays).  w1 and w3 open the file write-only for each
	# command and write it without a newline, so that it runs at close(2),
	# which fails with its error; w2 and w4 keep one read-write open, write
	# the command at 0 and read its answer (its values, or diagnostics).
	WRITERS=$T/writers.py
	cat >"$WRITERS" <<'PY'
import errno, multiprocessing as mp, os, sys
mnt, k, dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctl = mnt + "/..reiser4"

def work(n, mode, how, bar):
    name = "w%d" % n
    out = open("%s/ack%d" % (dir, n), "w", buffering=1)
    rw = os.open(ctl, os.O_RDWR) if how == "read" else -1
    for i in range(1, k + 1):
        cmd = '/%s.a <- "%08d"; /%s.b <- "%08d"' % (name, i, name, i)
        want = "%08d\n%08d\n" % (i, i)
        if mode != "ok" and i % 2:
            cmd = '/%s.a <- "%08d"; /nope/%s <- "%08d"' % (name, i, name, i)
            if mode == "per-statement":
                cmd = "# r4 per-statement\n" + cmd
        bar.wait()
        if how == "close":
            fd = os.open(ctl, os.O_WRONLY)
            os.write(fd, cmd.encode())
            try:
                os.close(fd)
                out.write("%d ok\n" % i)
            except OSError as e:
                out.write("%d %s\n" % (i, errno.errorcode[e.errno]))
            continue
        os.pwrite(rw, cmd.encode(), 0)
        a = os.pread(rw, 65536, 0).decode()
        if a == want:
            out.write("%d ok\n" % i)
        elif "error: cannot" in a and "No such file or directory" in a:
            # (per statement: the first one's value, then the diagnostic)
            done = "%08d\n" % i if mode == "per-statement" else ""
            out.write("%d %s\n" % (i, "ENOENT" if a.startswith(done) else repr(a)))
        else:
            out.write("%d %r\n" % (i, a))

bar = mp.Barrier(4, timeout=20)
ps = [mp.Process(target=work, args=a + (bar,)) for a in
      [(1, "ok", "close"), (2, "ok", "read"), (3, "fail", "close"), (4, "per-statement", "read")]]
for p in ps:
    p.start()
for p in ps:
    p.join()
sys.exit(max(p.exitcode for p in ps))
PY
	PRELOAD=$T/group_preload.so
	cc -O2 -shared -fPIC "$BATS_TEST_DIRNAME/../../bench/group_preload.c" -ldl -o "$PRELOAD"
	COUNTS=$T/counts
	head -c 16 /dev/zero >"$COUNTS"
}

teardown() {
	fuse_teardown
	r4_teardown
}

# mount_counted OPTS: mount_r4_fg with the commit counter preloaded
mount_counted() {
	LD_PRELOAD=$PRELOAD R4_GROUP_COUNTS=$COUNTS \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 mount_r4_fg "$@"
}

# commits: the journal header writes (= commits) counted so far
commits() {
	od -An -t u8 -j 8 -N 8 "$COUNTS" | tr -d ' '
}

# kill9: r4fuse killed at once, the mount gone
kill9() {
	kill -9 "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	fusermount3 -uz "$MNT" 2>/dev/null || true
}

@test "4 processes write commands at once: each its own outcome, fewer commits than commands; kill -9: every change there" {
	local k=31 i c0 c1
	mount_counted -o commit=60
	c0=$(commits)
	python3 "$WRITERS" "$MNT" "$k" "$T"
	c1=$(commits)
	kill9
	# each process heard of its own commands, and only of them
	for i in 1 2 3 4; do
		run cat "$T/ack$i"
		if [ "$i" -le 2 ]; then
			assert_output "$(for n in $(seq 1 $k); do echo "$n ok"; done)"
		else
			assert_output "$(for n in $(seq 1 $k); do
				if ((n % 2)); then echo "$n ENOENT"; else echo "$n ok"; fi; done)"
		fi
	done
	# (one commit each, unshared, would be one for each command with a
	# change that stays: all of w1's and w2's, w3's even ones, all of
	# w4's, whose first statement stays)
	echo "commits: $((c1 - c0)) for $((2 * k + k / 2 + k)) commands that change" >&3
	[ $((c1 - c0)) -lt $((2 * k + k / 2 + k)) ]
	# what the writes acknowledged is in the image; a failed command is
	# gone whole, a failed statement alone
	run "$R4SH" -c '/w1.a; /w1.b; /w2.a; /w2.b; /w3.a; /w3.b; /w4.a; /w4.b' "$IMG"
	assert_success
	assert_output "$(printf '%08d\n' $k $k $k $k $((k - 1)) $((k - 1)) $k $((k - 1)))"
	run "$R4SH" -c '/nope' "$IMG"
	assert_failure
	fsck_both "$IMG"
}

@test "concurrent commands with answers: each process reads its own values or diagnostics" {
	mount_r4_fg -o commit=60
	# (the answer is read back through the same open: the command runs then)
	cat >"$T/asker.py" <<'PY'
import os, sys
mnt, name, k, bad = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "bad"
for i in range(1, k + 1):
    fd = os.open(mnt + "/..reiser4", os.O_RDWR)
    tgt = "/nope/" + name if bad and i % 2 else "/" + name
    os.write(fd, ('%s <- "%s %d"' % (tgt, name, i)).encode())
    a = os.read(fd, 65536).decode()
    os.close(fd)
    want = "%s %d\n" % (name, i)
    if bad and i % 2:
        if "error: cannot" not in a or "No such file or directory" not in a or want in a:
            sys.exit("%s %d: answer %r" % (name, i, a))
    elif a != want:
        sys.exit("%s %d: answer %r, not %r" % (name, i, a, want))
PY
	local i pids=()
	for i in 1 2 3; do
		python3 "$T/asker.py" "$MNT" "q$i" 20 "$([ "$i" = 2 ] && echo bad || echo good)" &
		pids+=($!)
	done
	# and r4sh (framed), and echo (each command run by its write(2)):
	# their exit status and diagnostic their own
	(for n in $(seq 1 8); do
		"$R4SH" -c "/s <- \"$n\"" "$MNT" >/dev/null || exit 1
		if "$R4SH" -c "/nope/s <- \"$n\"" "$MNT" 2>"$T/sh.err"; then exit 2; fi
		grep -q "No such file or directory" "$T/sh.err" || exit 3
	done) &
	pids+=($!)
	(for n in $(seq 1 8); do
		echo "/e <- \"$n\"" >"$MNT/..reiser4" || exit 1
		if echo "/nope/e <- \"$n\"" 2>"$T/echo.err" >"$MNT/..reiser4"; then exit 2; fi
		grep -q "No such file or directory" "$T/echo.err" || exit 3
	done) &
	pids+=($!)
	for i in "${pids[@]}"; do
		wait "$i"
	done
	run "$R4SH" -c '/q1; /q2; /q3; /s; /e' "$MNT"
	assert_success
	assert_output $'q1 20\nq2 20\nq3 20\n8\n8'
	umount_r4
	fsck_both "$IMG"
}

@test "a failed commit fails the commands in it, each with its own answer" {
	# (the first sync fails: the first commit, the command's own)
	R4_TEST_FAULT=sync:1 mount_r4_fg -o commit=60
	run python3 -c 'import os, sys
fd = os.open(sys.argv[1] + "/..reiser4", os.O_RDWR)
os.write(fd, b"# r4 per-statement\n/a <- \"1\"; /b <- \"2\"")
sys.stdout.write(os.read(fd, 4096).decode())' "$MNT"
	assert_success
	assert_output "<control>: error: cannot commit: Input/output error"
	# framed, as r4sh reads it
	printf '/c <- "3"\n/d <- "4"\n' >"$T/s.r4"
	run "$R4SH" -f "$T/s.r4" "$MNT"
	assert_failure
	assert_output --partial "s.r4:1:1: error: cannot"
	kill9
	run "$R4SH" -c '/a' "$IMG"
	assert_failure
	assert_output --partial "No such file or directory"
	fsck_both "$IMG"
}

@test "a script one unit per statement shares one commit; over 64 KiB it commits each statement" {
	mount_counted -o commit=60
	local c0 c1 c2
	# SEND PAD N: one write(2) of a script of 3 statements after a
	# comment of PAD bytes, run one unit per statement
	cat >"$T/send.py" <<'PY'
import os, sys
fd = os.open(sys.argv[1] + "/..reiser4", os.O_WRONLY)
pad, n = int(sys.argv[2]), int(sys.argv[3])
os.write(fd, b"# r4 per-statement\n# %s\n/a <- \"%d\"\n/b <- \"%d\"\n/c <- \"%d\"\n"
         % (b"x" * pad, n, n + 1, n + 2))
PY
	c0=$(commits)
	python3 "$T/send.py" "$MNT" 10 1
	c1=$(commits)
	python3 "$T/send.py" "$MNT" 70000 4
	c2=$(commits)
	[ $((c1 - c0)) -eq 1 ]
	[ $((c2 - c1)) -eq 3 ]
	run "$R4SH" -c '/a; /b; /c' "$MNT"
	assert_output $'4\n5\n6'
	umount_r4
}
