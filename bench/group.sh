#!/usr/bin/env bash
# bench/group.sh - group commit (issue 27 item 2): durable two-file changes
# from several processes through one r4fuse mount, beside the same number
# of processes doing two-row transactions on one SQLite WAL database
# (synchronous=FULL), and one process of each; the machine's raw sync
# rate in the same run.  bench/run.sh runs it (R4_BENCH_GROUP=0 skips
# it); it also runs alone:
#   bash bench/group.sh
#
# Workloads (bench/group.c has the details), R4_BENCH_REPS runs each
# (default 3), peers taking turns, the median shown:
#   raw:    a 4 KiB pwrite + fdatasync, 500 times, of a file in the
#           directory the images live in (R4_BENCH_DIR, default /tmp):
#           the sync rate r4's commits are bounded by (measured in every
#           round: a virtual disk's rate drifts);
#   r4:     a fresh image (r4 mkfs, 256M), mounted `r4fuse IMG MNT -f`
#           (defaults: commit=5, multithreaded); P processes, each with
#           its own two files, K times: pwrite 100 bytes over each, fsync
#           both.  Unmounted (the image final), mounted again and every
#           file compared with its last bytes; r4 fsck and fsck.reiser4
#           --check on the image after the first run;
#   ctl:    the same change through the mount's control file: each
#           process K times writes one R4L command (`/gI.a <- #s100:...;
#           /gI.b <- #s100:...`) to MNT/..reiser4 and reads its answer
#           back (the command runs at the read and is durable when it
#           returns); checked as r4;
#   ctlw:   the same commands through a write-only open, each run by its
#           write(2) (one FUSE round trip a change; the kernel sends one
#           write of the file at a time, so processes share no commit);
#   sqlite: P processes, each K times BEGIN IMMEDIATE, UPDATE of its two
#           rows, COMMIT on one database (WAL, synchronous=FULL), then
#           every row compared and integrity_check.
# for P = 1 and P = R4_BENCH_GROUP_PROCS (default 4), K =
# R4_BENCH_GROUP_K (default 150).  Counted: r4fuse's fdatasync calls and
# journal header writes (= commits) through bench/group_preload.c
# (LD_PRELOAD), SQLite's xSync calls through a VFS shim; shown per durable
# change.  Targets (issue 27): r4 with P processes (through POSIX calls,
# and through the control file) at least SQLite's rate with P; r4 with one
# process at 2 syncs per commit and at least 95% of half the raw rate.  A
# round runs raw, r4, SQLite, ctl and ctlw with one process, then with P,
# one after another: the ratios are also given per round, and their
# median, since a virtual disk's sync rate can drift tenfold between
# rounds.  The exit status is non-zero only when a workload
# breaks (an error, wrong bytes read back, an inconsistent image).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PROCS=${R4_BENCH_GROUP_PROCS:-4}
K=${R4_BENCH_GROUP_K:-150}
REPS=${R4_BENCH_REPS:-3}
BDIR=${R4_BENCH_DIR:-/tmp}
CC=${CC:-cc}
B=build/bench

if [[ ! -c /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
	echo "bench group: /dev/fuse or fusermount3 missing: no group commit benchmark"
	exit 0
fi
if ! pkg-config --exists sqlite3 2>/dev/null && [[ ! -f /usr/include/sqlite3.h ]]; then
	echo "bench group: libsqlite3-dev missing: no group commit benchmark"
	exit 0
fi
make -s all
mkdir -p "$B"
SQLITE_LIBS=$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
# shellcheck disable=SC2086 # SQLITE_LIBS is a list of flags
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror bench/group.c $SQLITE_LIBS -o "$B/group"
$CC -O2 -Wall -Wextra -Werror -shared -fPIC bench/group_preload.c -ldl -o "$B/group_preload.so"
FSCK=$(command -v fsck.reiser4 || true)

TMP=$(mktemp -d "$BDIR/r4group.XXXXXX")
MNT=$TMP/mnt
IMG=$TMP/group.img
DB=$TMP/group.sqlite
CNT=$TMP/counts
LOG=$TMP/log
mkdir -p "$MNT"
: >"$LOG"
DPID=
status=0

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null ||
			umount -l "$MNT" 2>/dev/null || true
	fi
	[[ -z $DPID ]] || wait "$DPID" 2>/dev/null || true
	rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench group: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -srm)," \
	"commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- engine fuse-bridge 2>/dev/null || echo '+dirty engine/fuse-bridge')," \
	"images in $BDIR ($(df --output=fstype "$BDIR" | tail -1))"

# mount [ENV...]: r4fuse IMG MNT -f in the background (DPID), until mounted
mount_img() {
	env "$@" build/r4fuse "$IMG" "$MNT" -f 2>"$TMP/fuse.log" &
	DPID=$!
	for _ in $(seq 1 200); do
		mountpoint -q "$MNT" && return 0
		sleep 0.05
	done
	echo "bench group: the mount did not come up:"
	sed 's/^/  /' "$TMP/fuse.log" | tail -5
	return 1
}

# unmount MNT and wait for r4fuse to finish (it commits and closes then)
umount_img() {
	local rc=0
	fusermount3 -u "$MNT" || { echo "bench group: fusermount3 -u failed"; status=1; }
	wait "$DPID" || rc=$?
	DPID=
	if ((rc)); then
		echo "bench group: r4fuse exited with $rc:"
		sed 's/^/  /' "$TMP/fuse.log" | tail -5
		status=1
	fi
}

# run TAG CMD...: one workload; its line, tagged, into the log
run() {
	local tag=$1 out
	shift
	if ! out=$("$@" 2>"$TMP/err"); then
		status=1
		echo "bench group: $tag failed:"
		sed 's/^/  /' "$TMP/err" | tail -5
		return 1
	fi
	printf '%s %s\n' "$tag" "$out" >>"$LOG"
}

r4_run() {	# MODE P REP (MODE: group.c's files, ctl or ctlw)
	local mode=$1 p=$2 rep=$3 tag
	tag=$([[ $mode == files ]] && echo r4 || echo "$mode").$p
	rm -f "$IMG"
	build/r4 mkfs "$IMG" 256M >/dev/null
	head -c 16 /dev/zero >"$CNT"
	mount_img LD_PRELOAD="$PWD/$B/group_preload.so" R4_GROUP_COUNTS="$CNT" || { status=1; return; }
	run "$tag" "$B/group" "$mode" "$MNT" "$p" "$K" "$CNT" || true
	umount_img
	# read back through a fresh mount
	mount_img || { status=1; return; }
	if ! "$B/group" files-check "$MNT" "$p" "$K" 2>"$TMP/err"; then
		echo "bench group: $tag: wrong content read back:"
		sed 's/^/  /' "$TMP/err" | tail -5
		status=1
	fi
	umount_img
	if ((rep == 1)); then
		local v=consistent
		build/r4 fsck "$IMG" >"$TMP/fsck.out" 2>&1 || v=INCONSISTENT
		if [[ -n $FSCK ]] && ! { "$FSCK" --check -y "$IMG" >>"$TMP/fsck.out" 2>&1 &&
			grep -q 'FS is consistent' "$TMP/fsck.out"; }; then
			v=INCONSISTENT
		fi
		[[ $v == consistent ]] || { status=1; tail -15 "$TMP/fsck.out" | sed 's/^/  fsck: /'; }
		echo "fsck.$tag $v" >>"$LOG"
	fi
}

for rep in $(seq 1 "$REPS"); do
	run raw "$B/group" raw "$BDIR" 500 || true
	for p in 1 "$PROCS"; do
		r4_run files "$p" "$rep"
		rm -f "$DB" "$DB"-wal "$DB"-shm
		run "sqlite.$p" "$B/group" sqlite "$DB" "$p" "$K" || true
		r4_run ctl "$p" "$rep"
		r4_run ctlw "$p" "$rep"
	done
done
rm -f "$DB" "$DB"-wal "$DB"-shm

awk -v procs="$PROCS" -v k="$K" -v reps="$REPS" '
function val(line, key,   i, n, f) {
	n = split(line, f, " ")
	for (i = 1; i <= n; i++) if (index(f[i], key "=") == 1) return substr(f[i], length(key) + 2) + 0
	return -1
}
/^fsck\./ { fsck[substr($1, 6)] = $2; next }
{ tag = $1; m = ++cnt[tag]; rate[tag, m] = val($0, "rate"); syncs[tag, m] = val($0, "syncs")
  commits[tag, m] = val($0, "commits"); n[tag] = val($0, "n") }
# the run with the median rate
function med(tag,   i, j, a, x, c) {
	c = cnt[tag]
	for (i = 1; i <= c; i++) a[i] = i
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (rate[tag, a[j]] < rate[tag, a[i]]) { x = a[i]; a[i] = a[j]; a[j] = x }
	return c ? a[int((c + 1) / 2)] : 0
}
# the ratio x / (f * y) of each round (the two ran within seconds of each
# other: a disk drifts far more between rounds), and their median
function ratios(x, y, f,   i, j, a, t, c, s) {
	c = cnt[x]
	if (c != cnt[y] || !c) return "(a run failed: no per-round ratios)"
	for (i = 1; i <= c; i++) a[i] = rate[x, i] / (f * rate[y, i])
	for (i = 1; i <= c; i++) s = s sprintf(" %.2f", a[i])
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return sprintf("per round:%s, median %.2f", s, a[int((c + 1) / 2)])
}
function all(tag,   i, s) { for (i = 1; i <= cnt[tag]; i++) s = s sprintf(" %.0f", rate[tag, i]); return s }
function row(label, tag,   m) {
	m = med(tag)
	if (!m) { printf "  %-44s %s\n", label, "(no run)"; return }
	printf "  %-44s %8.1f  %6.2f  %6.2f  %7.2f  (runs:%s)\n", label, rate[tag, m],
		syncs[tag, m] / n[tag], commits[tag, m] / n[tag],
		commits[tag, m] ? syncs[tag, m] / commits[tag, m] : 0, all(tag)
}
END {
	printf "\ngroup: durable two-file changes (two rows), K=%d per process; rate: changes/s, median of %d\n", k, reps
	printf "  %-44s %8s  %6s  %6s  %7s\n", "", "rate", "syncs/", "commits/", "syncs/"
	printf "  %-44s %8s  %6s  %6s  %7s\n", "", "", "change", "change", "commit"
	row("r4fuse, 1 process (fsync both files)", "r4.1")
	row("SQLite WAL FULL, 1 process", "sqlite.1")
	row("r4fuse control file, 1 process", "ctl.1")
	row("r4fuse control file write-only, 1 process", "ctlw.1")
	row("r4fuse, " procs " processes", "r4." procs)
	row("SQLite WAL FULL, " procs " processes", "sqlite." procs)
	row("r4fuse control file, " procs " processes", "ctl." procs)
	row("r4fuse control file write-only, " procs " proc.", "ctlw." procs)
	raw = rate["raw", med("raw")]
	printf "  raw 4 KiB pwrite+fdatasync in the images'"'"' directory: %.1f syncs/s, half: %.1f (runs:%s)\n", raw, raw / 2, all("raw")
	a = rate["r4.1", med("r4.1")]; b = rate["sqlite.1", med("sqlite.1")]
	c = rate["r4." procs, med("r4." procs)]; d = rate["sqlite." procs, med("sqlite." procs)]
	if (b) printf "  ratio r4 / SQLite, 1 process: %.2f of the medians; %s\n", a / b, ratios("r4.1", "sqlite.1", 1)
	if (d) printf "  ratio r4 / SQLite, %d processes (target >= 1): %.2f of the medians; %s\n", procs, c / d, ratios("r4." procs, "sqlite." procs, 1)
	if (raw) printf "  r4, 1 process / (raw / 2) (target >= 0.95): %.2f of the medians; %s\n", a / (raw / 2), ratios("r4.1", "raw", 0.5)
	e = rate["ctl.1", med("ctl.1")]; g = rate["ctl." procs, med("ctl." procs)]
	if (d && g) printf "  ratio control file / SQLite, %d processes (target >= 1): %.2f of the medians; %s\n", procs, g / d, ratios("ctl." procs, "sqlite." procs, 1)
	if (raw && e) printf "  control file, 1 process / (raw / 2) (target >= 0.95): %.2f of the medians; %s\n", e / (raw / 2), ratios("ctl.1", "raw", 0.5)
	h = rate["ctlw.1", med("ctlw.1")]
	if (raw && h) printf "  control file write-only, 1 process / (raw / 2): %.2f of the medians; %s\n", h / (raw / 2), ratios("ctlw.1", "raw", 0.5)
	printf "  fsck (r4 fsck, fsck.reiser4) after the first runs: POSIX 1 process %s, %d processes %s; control file 1 process %s, %d processes %s; write-only %s, %s\n", fsck["r4.1"], procs, fsck["r4." procs], fsck["ctl.1"], procs, fsck["ctl." procs], fsck["ctlw.1"], fsck["ctlw." procs]
	printf "  (every file and row read back and compared after every run)\n"
}' "$LOG"
exit $status
