# tests/bats/helper.bash - common setup for the bats suites.
#
# In a suite:
#     setup() { load helper; r4_setup; }
#     teardown() { r4_teardown; }
#
# Gives:
#   $R4        the r4 binary (tests/run.sh sets R4=$B/r4; default build/r4)
#   $R4_BUILD  the build directory (default build); $R4P = $R4_BUILD/tests/r4p
#   $T         a fresh temp dir per test, removed in r4_teardown unless the
#              test failed and R4_KEEP=1
#   need_cmd CMD [REASON]   skip the test unless CMD is on PATH
#   need_file PATH [REASON] skip the test unless PATH exists
#   need_r4p                skip unless the libreiser4 helper was built
#   mkfs_reiser4 IMG [SIZE] [MKFS_OPTS...]
#              make a reiser4 image with reiser4progs' mkfs.reiser4
#              (SIZE like 64M, default 64M; e.g. `mkfs_reiser4 $T/a.img 32M
#              -o create=reg40`); fails the test if mkfs fails
#   fsck_reiser4 IMG        fsck.reiser4 --check on IMG; fails unless clean
#   fsck_both IMG           r4 fsck and fsck.reiser4 --check on IMG; fails
#                           unless both call it clean
# and for the FUSE suites (real mounts as root, undone even when a test fails):
#   fuse_setup SIZE   skip without /dev/fuse or fusermount3; R4SH, R4FUSE,
#                     IMG ($T/a.img, a fresh image of SIZE), MNT ($T/mnt)
#   mount_r4 [OPTS]   r4fuse IMG MNT OPTS as the README runs it: it returns
#                     once mounted and serves as a daemon (r4fuse_pids)
#   mount_r4_fg [OPTS]  r4fuse IMG MNT -f OPTS in the background, for a
#                     test that needs its pid ($FUSE_PID) or its log
#                     ($T/fuse.log)
#   umount_r4         fusermount3 -u, and nothing more for a daemon: what
#                     the test runs next meets the image as a user's
#                     command does right after unmount; for mount_r4_fg,
#                     also wait for r4fuse and fail unless it exited 0
#   public_mnt        MNT becomes a fresh directory under /tmp that other
#                     users can reach (for tests that act as another uid:
#                     $T is 0700); fuse_teardown removes it
#   fuse_conn DIR     the mount's FUSE connection (/sys/fs/fuse/connections/N)
#   fuse_unmount DIR  fusermount3 -u DIR; one that hangs 10 s is aborted
#                     through its connection, then lazily unmounted
#   r4fuse_pids       the r4fuse (mount.fuse.r4) processes serving $IMG
#   fuse_teardown     unmount $MNT and everything under $T, stop what still
#                     serves
#   need_fusectl      skip unless the FUSE control file system is (or can
#                     be) mounted at /sys/fs/fuse/connections
#   fuse_within SECS CMD [ARGS...]
#                     run CMD (its output and status as usual); if it is
#                     still running after SECS seconds it hangs on the
#                     mount: abort the mount's FUSE connection ($FUSE_CONN,
#                     fusectl), which ends every request and frees what
#                     waited, and fail (needs need_fusectl first)
# and bats-support / bats-assert / bats-file (assert_success, assert_output,
# assert_file_exists, ...) from Debian's /usr/lib/bats.

_r4_repo=${BATS_TEST_DIRNAME%/tests/bats}
: "${R4_BUILD:=$_r4_repo/build}"
: "${R4:=$R4_BUILD/r4}"
R4P=$R4_BUILD/tests/r4p
export R4 R4_BUILD R4P

_r4_bats_lib=${BATS_LIB_PATH_DEBIAN:-/usr/lib/bats}
# (their files sourced straight: each load.bash starts a dirname process
# per file, 17 for every test, which was half of what a test cost)
for _lib in bats-support bats-assert bats-file; do
	if [ -f "$_r4_bats_lib/$_lib/load.bash" ]; then
		for _f in "$_r4_bats_lib/$_lib"/src/*.bash; do
			source "$_f"
		done
	else
		echo "helper.bash: $_r4_bats_lib/$_lib missing (bash scripts/deps.sh)" >&2
		return 1
	fi
done
unset _lib _f


r4_setup() {
	T=$(mktemp -d "${BATS_TEST_TMPDIR:-${BATS_TMPDIR:-/tmp}}/r4.XXXXXX")
	export T
}

r4_teardown() {
	if [ -n "${T:-}" ] && [ -d "$T" ]; then
		if [ "${R4_KEEP:-0}" = 1 ] && [ -z "${BATS_TEST_COMPLETED:-}" ]; then
			echo "# kept $T" >&3
		else
			rm -rf "$T"
		fi
	fi
}

need_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "${2:-$1 not installed}"
}

need_file() {
	[ -e "$1" ] || skip "${2:-$1 missing}"
}

need_r4p() {
	need_file "$R4P" "$R4P not built (make interop)"
	need_cmd mkfs.reiser4 "reiser4progs not installed"
}

# mkfs_reiser4 IMG [SIZE] [MKFS_OPTS...]: a fresh reiser4 image.
mkfs_reiser4() {
	local img=$1 size=${2:-64M}
	shift; [ $# -gt 0 ] && shift
	need_cmd mkfs.reiser4 "reiser4progs not installed"
	rm -f "$img"
	truncate -s "$size" "$img" || return 1
	if ! mkfs.reiser4 -y -f "$@" "$img" >"$img.mkfs.log" 2>&1; then
		cat "$img.mkfs.log" >&2
		echo "mkfs_reiser4: mkfs.reiser4 -y -f $* $img failed" >&2
		return 1
	fi
	rm -f "$img.mkfs.log"
}

# fsck_reiser4 IMG: fsck.reiser4 --check; succeeds only for a clean image.
fsck_reiser4() {
	need_cmd fsck.reiser4 "reiser4progs not installed"
	local out
	if ! out=$(fsck.reiser4 --check -y "$1" 2>&1); then
		printf '%s\n' "$out" >&2
		echo "fsck_reiser4: fsck.reiser4 --check -y $1 failed" >&2
		return 1
	fi
	if ! grep -q 'FS is consistent' <<<"$out"; then
		printf '%s\n' "$out" >&2
		echo "fsck_reiser4: $1 is not reported consistent" >&2
		return 1
	fi
}

fsck_both() {
	run "$R4" fsck "$1"
	assert_success
	fsck_reiser4 "$1"
}

fuse_setup() {
	[ -e /dev/fuse ] || skip "no /dev/fuse"
	need_cmd fusermount3 "fuse3 not installed"
	R4SH=$R4_BUILD/r4sh
	R4FUSE=$R4_BUILD/r4fuse
	IMG=$T/a.img
	MNT=$T/mnt
	FUSE_PID=
	mkdir -p "$MNT"
	"$R4" mkfs "$IMG" "$1" >/dev/null
}

mount_r4() {
	FUSE_PID=
	if ! "$R4FUSE" "$IMG" "$MNT" "$@" 2>"$T/mount.err"; then
		cat "$T/mount.err" >&2
		return 1
	fi
	# as root, a read-write mount is fuseblk, whose unmount returns with
	# the image final: the tests rely on that (docs/r4fuse.md, "Unmount")
	if grep -q 'a plain fuse mount' "$T/mount.err"; then
		cat "$T/mount.err" >&2
		return 1
	fi
	FUSE_CONN=$(fuse_conn "$MNT")
	[ -n "$FUSE_CONN" ]
}

mount_r4_fg() {
	# (with leak checks even where make check turns them off for speed:
	# umount_r4 sees a leak as r4fuse's exit status)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1 \
		"$R4FUSE" "$IMG" "$MNT" -f "$@" 2>"$T/fuse.log" &
	FUSE_PID=$!
	for _ in $(seq 200); do
		if mountpoint -q "$MNT"; then
			FUSE_CONN=$(fuse_conn "$MNT")
			return 0
		fi
		sleep 0.05
	done
	cat "$T/fuse.log" >&2
	return 1
}

public_mnt() {
	MNT=$(mktemp -d /tmp/r4mnt.XXXXXX)
	MNT_PUBLIC=$MNT
	chmod 755 "$MNT"
}

umount_r4() {
	local rc=0

	fusermount3 -u "$MNT" || return 1
	[ -n "${FUSE_PID:-}" ] || return 0
	wait "$FUSE_PID" || rc=$?
	FUSE_PID=
	if [ "$rc" -ne 0 ]; then
		cat "$T/fuse.log" >&2
		echo "umount_r4: r4fuse exited with status $rc" >&2
		return 1
	fi
}

# fuse_conn DIR: the FUSE connection of the mount at DIR, as
# /sys/fs/fuse/connections names it: the kernel's number of the mount's
# device, MAJOR << 20 | MINOR (a fuseblk mount's device is its block
# device, 7:N for a loop device; a plain one's is 0:N).  Read from
# mountinfo, without touching the mount, which may hang.
fuse_conn() {
	awk -v m="$1" '$5 == m { split($3, d, ":"); c = d[1] * 1048576 + d[2] }
		END { if (c != "") print c }' /proc/self/mountinfo
}

fuse_unmount() {
	local dir=$1 conn pid
	conn=$(fuse_conn "$dir")
	[ -n "$conn" ] || return 0
	# (a fuseblk unmount waits for the daemon's DESTROY answer)
	fusermount3 -u "$dir" 2>/dev/null &
	pid=$!
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "fuse_unmount: $dir still unmounting after 10 s: aborting connection $conn" >&2
		echo 1 >"/sys/fs/fuse/connections/$conn/abort" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	if [ -n "$(fuse_conn "$dir")" ]; then	# busy, or not ours to unmount
		fusermount3 -uz "$dir" 2>/dev/null || umount -l "$dir" 2>/dev/null || true
	fi
}

r4fuse_pids() {
	[ -n "${IMG:-}" ] && pgrep -f -- "(r4fuse|mount\.fuse\.r4) $IMG( |\$)"
}

fuse_teardown() {
	local dir pids
	# $MNT where a test put it outside $T (a mount point other users can
	# reach), then every mount under $T (by mountinfo: mountpoint(1) fails
	# on a connection aborted), deepest first
	[ -n "${MNT:-}" ] && fuse_unmount "$MNT"
	if [ -n "${T:-}" ]; then
		for dir in $(awk -v t="$T/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo |
			     sort -r); do
			fuse_unmount "$dir"
		done
	fi
	if [ -n "${FUSE_PID:-}" ]; then
		kill "$FUSE_PID" 2>/dev/null || true
		wait "$FUSE_PID" 2>/dev/null || true
	fi
	# daemons of this test's image leave once unmounted (3 s); then no mercy
	for _ in $(seq 30); do
		pids=$(r4fuse_pids) || break
		sleep 0.1
	done
	[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	[ -z "${MNT_PUBLIC:-}" ] || rmdir "$MNT_PUBLIC" 2>/dev/null || true
}

need_fusectl() {
	local d=/sys/fs/fuse/connections
	[ -d "$d" ] || skip "no $d (fuse not loaded?)"
	mountpoint -q "$d" || mount -t fusectl fusectl "$d" 2>/dev/null ||
		skip "cannot mount fusectl at $d: a hung mount could not be aborted"
}

fuse_within() {
	local secs=$1 out fd rc
	shift
	# The command runs in a process substitution whose one line is its
	# exit status: read -t waits for that line at most SECS seconds.
	exec {out}>&1
	exec {fd}< <("$@" >&"$out" {out}>&-; echo $?)
	if read -r -t "$secs" -u "$fd" rc; then
		exec {fd}<&- {out}>&-
		return "$rc"
	fi
	echo "fuse_within: '$*' still running after ${secs}s: aborting FUSE connection $FUSE_CONN" >&2
	echo 1 >"/sys/fs/fuse/connections/$FUSE_CONN/abort" || true
	read -r -t 30 -u "$fd" rc || true
	exec {fd}<&- {out}>&-
	echo "fuse_within: '$*' hung (status ${rc:-unknown} after the abort)" >&2
	return 1
}
