#!/usr/bin/env bash
# bench/run.sh - run r4's benchmarks (`make bench`), each beside the program
# a user would otherwise pick, in one run, and print the numbers and ratios
# that go into bench/RESULTS.md (with this command, the date and the
# machine).  Nothing here passes or fails on time: the exit status is
# non-zero only when a workload breaks (an error, wrong bytes read back, or
# fsck.reiser4 finding the image inconsistent).
#
# scale (bench/scale.c, bench/scale_peer.c; issue 2):
#   - N files of 100 bytes in one directory, commit (peer: sync) every
#     1,000 files, then reopen and read every file back comparing bytes;
#     r4 and libreiser4 (reiser4progs) side by side: time, files/s, peak RSS
#     of each phase (its own child process), bytes used per file;
#   - one big file written in 1 MiB chunks, commit every 64 MiB, read back
#     and compared (r4 only: libreiser4 leaves the extents it writes
#     unallocated, see README.md);
#   - fsck.reiser4 --check on every image afterwards.
#
# wa (bench/wa.c; issue 3 item 9): write amplification, bytes written to
# the image (wchar of /proc/self/io) / bytes of user data:
#   - new files on a fresh image (default 1024 files of 1 MiB, commit every
#     64 files);
#   - 1 GiB of random aligned 4 KiB overwrites, 256 per transaction, into
#     a file of 64, 256 and 1024 MiB written and committed before; the
#     content is compared with a model after a reopen.  Peer: the same
#     writes with fsync per 256 on ext4 data=journal (a loop device; its
#     sectors written), when this runs as root and the mount works;
#   - fsck.reiser4 --check on every image.
# commit (bench/commit.c): durable commits per second of a two-record
# update (two 100-byte files in r4, two rows in SQLite WAL with
# synchronous=FULL), side by side, with syncs and bytes per commit, and
# the floor in the same run: raw 4 KiB syncs at one place, pairs of
# them at two places as a commit's two syncs go, and the format's least
# commit of one changed block (12 KiB, sync, 4 KiB, sync).
#
# Environment: R4_BENCH_SMALL (file counts, default "10000 200000"),
# R4_BENCH_BIG_MIB (default 1024, 0 = skip), R4_BENCH_REPS (runs of each
# workload, default 3; the table shows the run with the median write time),
# R4_BENCH_SCALE=0 skips all of scale.  R4_BENCH_WA=0 skips wa;
# R4_BENCH_WA_NEW ("NFILES FILE_MIB FILES_PER_TXN", default "1024 1 64",
# "" = skip), R4_BENCH_WA_FILES (file sizes in MiB, default "64 256 1024",
# "" = skip), R4_BENCH_WA_MIB (MiB of overwrites, default 1024), R4_SEED
# (default: the clock; printed), R4_BENCH_EXT4=0 skips the ext4 peer.
# R4_BENCH_COMMIT=0 skips commit; R4_BENCH_COMMITS (default 2000).
# lang (bench/lang.c; issue 4 item 10): a script of N small writes
# ("/b/fI <- ..."), run through r4_run (lex, parse, check, compile,
# execute) and done with direct fs API calls, side by side: all in one
# unit (new files, then overwrites) and one unit (one durable commit) per
# statement; compile time as a share of the run.  R4_BENCH_LANG=0 skips
# it; R4_BENCH_LANG_N (default 10000).
# ls (bench/scale.c and bench/scale_peer.c `ls`; issue 27 item 3): a
# directory of N files (R4_BENCH_LS_N, default 100000; scale's small
# write), listed LS_REPS (5) times each way on a fresh open, the median:
# names alone (r4_readdir_stat R4_READDIR_NAMES / reiser4_object_readdir),
# names and attributes (r4_readdir_stat / readdir + reiser4_object_obtain
# by the entry's key + reiser4_object_stat), r4_readdir and the old r4 ls
# way (r4_stat per path) beside them; then `r4 ls -1 IMG /d` and `r4 ls IMG
# /d` end to end (fork, exec, open, sort, print to /dev/null), 5 runs each,
# the median.  R4_BENCH_LS=0 skips it.
# atomic (bench/atomic.c; issue 27 item 1): one atomic script of N files
# of 100 bytes in 100 directories (`r4sh --quiet --atomic -f SCRIPT IMG`,
# a fresh image each time) beside SQLite's one transaction of the same N
# rows (path TEXT PRIMARY KEY, 100-byte blob; WAL, synchronous=FULL, the
# INSERT prepared once), each timed as a whole process, taking turns,
# ATOMIC_REPS (5) times, the median; after each, every file and row is
# read back and compared (outside the timing), and r4's directories
# counted.  R4_BENCH_ATOMIC=0 skips it; R4_BENCH_ATOMIC_N (100000).  Then
# one script of R4_BENCH_ATOMIC_BIG statements (1000000; 0 skips it), once,
# for its time and peak RSS beside the cache bound (issue 27 item 4).
# ops (bench/scale.c `ops`; issue 27 item 4): time per operation against
# the number of files.  For each N in R4_BENCH_OPS_SIZES (default "1000
# 10000 100000 1000000") and each shape (flat: /d/fI, N files in one
# directory; tree3: /d/aA/bB/fI, three directory levels of F = ceil(cbrt N)
# entries each, F files per leaf directory), a volume of N files of 100
# bytes is built with the API in transactions of 50,000 files (its time
# shown), closed, then on a fresh open in a child process: lookup + stat
# (r4_stat of the path) of R4_BENCH_OPS_M (default 20,000) random existing
# files, 3 times, the median (and the first, from an empty cache); then, on
# another fresh open, min(M, N) creates of new 100-byte files in the
# directories of random files, each named to sort right after a random
# file's name (so at a random place of its directory;
# R4_BENCH_OPS_APPEND=1: after all the names, the best case), committed
# every 1,000.  Microseconds per operation, wall and CPU (the CPU time of
# the process: steadier when other work shares the machine), with each
# phase's peak RSS beside the cache bound (r4_info's cache_nodes: by
# default 1/16 of the machine's memory, 64 MiB to 1 GiB of clean nodes).
# Then the same stats by stat(2) through an r4fuse mount of the volume
# (entry and attr timeouts 0, so that every lookup reaches r4fuse), and
# min(M, N) creates through it at the same random places (open O_CREAT,
# write 100 bytes, close; syncfs(2) every 1,000): wall microseconds per
# call, what a program on the mount sees (R4_BENCH_OPS_FUSE=0 skips both,
# as does a machine without /dev/fuse).
# Beside it, SQLite (bench/ops_sqlite.c; without libsqlite3-dev, a message
# and no peer): the same paths as rows of a table (path TEXT PRIMARY KEY,
# 100-byte blob; WAL, synchronous=FULL, a page cache as large as r4's
# bound), the same stats (SELECT by path) and creates (INSERT, a commit
# every 1,000), every new row read back and integrity_check run: its own
# table, how a B-tree database's cost grows on the same machine.  Random paths from R4_SEED.  Writes
# bench/scale-ops.dat and, when gnuplot is installed, bench/scale-ops.svg
# (without it: a message, no plot; gnuplot is not in scripts/deps.sh, to
# keep CI's installs small).  R4_BENCH_OPS=0 skips it.
# fuse (bench/fuse.sh, bench/fsbench.c; issue 6 item 7): r4fuse beside
# fuse2fs and libfuse's passthrough example on a tmpfs: small-file
# create, stat, read and rm, a 1 GiB sequential write and read, bytes per
# small file; fuse.sh describes it and its R4_BENCH_FUSE_* settings.
# R4_BENCH_FUSE=0 skips it; `bash bench/fuse.sh` runs it alone.
# group (bench/group.sh, bench/group.c; issue 27 item 2): group commit:
# P processes (R4_BENCH_GROUP_PROCS, default 4) and one, each making K
# (R4_BENCH_GROUP_K, default 150) durable two-file changes (write two
# files, fsync both) through one r4fuse mount, beside the same on one
# SQLite WAL database (two rows per transaction, synchronous=FULL), with
# syncs and commits per change and the raw 4 KiB fdatasync rate; group.sh
# describes it.  R4_BENCH_GROUP=0 skips it; `bash bench/group.sh` runs it
# alone.
# Images live in a temporary directory under R4_BENCH_DIR (default /tmp),
# removed at the end.  Just the issue 3 parts:
#   R4_BENCH_SCALE=0 bash bench/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SMALL=${R4_BENCH_SMALL:-10000 200000}
BIG_MIB=${R4_BENCH_BIG_MIB:-1024}
REPS=${R4_BENCH_REPS:-3}
SCALE=${R4_BENCH_SCALE:-1}
WA=${R4_BENCH_WA:-1}
WA_NEW=${R4_BENCH_WA_NEW-1024 1 64}
WA_FILES=${R4_BENCH_WA_FILES-64 256 1024}
WA_MIB=${R4_BENCH_WA_MIB:-1024}
SEED=${R4_SEED:-$(date +%s)}
EXT4=${R4_BENCH_EXT4:-1}
COMMIT=${R4_BENCH_COMMIT:-1}
COMMITS=${R4_BENCH_COMMITS:-2000}
LANG_RUN=${R4_BENCH_LANG:-1}
LANG_N=${R4_BENCH_LANG_N:-10000}
FUSE_RUN=${R4_BENCH_FUSE:-1}
GROUP_RUN=${R4_BENCH_GROUP:-1}
LS_RUN=${R4_BENCH_LS:-1}
LS_N=${R4_BENCH_LS_N:-100000}
ATOMIC_RUN=${R4_BENCH_ATOMIC:-1}
ATOMIC_N=${R4_BENCH_ATOMIC_N:-100000}
ATOMIC_BIG=${R4_BENCH_ATOMIC_BIG:-1000000}
OPS_RUN=${R4_BENCH_OPS:-1}
OPS_SIZES=${R4_BENCH_OPS_SIZES:-1000 10000 100000 1000000}
OPS_M=${R4_BENCH_OPS_M:-20000}
BDIR=${R4_BENCH_DIR:-/tmp}
CC=${CC:-cc}
B=build/bench

make -s all
mkdir -p "$B"
# the engine's libraries: libuuid, ccreg40's compressors, libblkid (libnbd is loaded at run time)
# (io_volume.c, io_nbd.c), as the Makefile's ENGINE_LIBS
UUID_LIBS="$(pkg-config --libs uuid 2>/dev/null || echo -luuid) $(pkg-config --libs lzo2 zlib libzstd 2>/dev/null || echo -llzo2 -lz -lzstd) $(pkg-config --libs blkid 2>/dev/null || echo -lblkid)"
# shellcheck disable=SC2086 # UUID_LIBS is a list of flags
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude bench/scale.c build/libr4engine.a \
	$UUID_LIBS -o "$B/scale"
PEER=1
if [[ -f /usr/include/reiser4/libreiser4.h ]] && command -v mkfs.reiser4 >/dev/null; then
	$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wno-unused-parameter \
		bench/scale_peer.c -lreiser4 -laal -o "$B/scale_peer"
else
	echo "bench: libreiser4-dev or mkfs.reiser4 missing: no peer columns (scripts/deps.sh installs them)"
	PEER=0
fi
# wa and commit count the engine's pwrite and fdatasync calls through
# link-time wrappers (bench/iocount.h).
WRAP="-Wl,--wrap=pwrite -Wl,--wrap=fdatasync"
# shellcheck disable=SC2086 # UUID_LIBS and WRAP are lists of flags
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude bench/wa.c build/libr4engine.a \
	$UUID_LIBS $WRAP -o "$B/wa"
if ((COMMIT)); then
	if pkg-config --exists sqlite3 2>/dev/null || [[ -f /usr/include/sqlite3.h ]]; then
		SQLITE_LIBS=$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
		# shellcheck disable=SC2086
		$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude bench/commit.c \
			build/libr4engine.a $UUID_LIBS $SQLITE_LIBS $WRAP -o "$B/commit"
	else
		echo "bench: libsqlite3-dev missing: no commit benchmark (scripts/deps.sh installs it)"
		COMMIT=0
	fi
fi
if ((LANG_RUN)); then
	# shellcheck disable=SC2086
	$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude bench/lang.c \
		build/libr4parse.a build/libr4engine.a $UUID_LIBS -o "$B/lang"
fi
OPS_PEER=0
if ((OPS_RUN)); then
	if pkg-config --exists sqlite3 2>/dev/null || [[ -f /usr/include/sqlite3.h ]]; then
		# shellcheck disable=SC2046 # a list of flags
		$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra bench/ops_sqlite.c \
			$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3) -o "$B/ops_sqlite" &&
			OPS_PEER=1
	else
		echo "bench: libsqlite3-dev missing: no SQLite beside ops (scripts/deps.sh installs it)"
	fi
fi
if ((ATOMIC_RUN)); then
	if pkg-config --exists sqlite3 2>/dev/null || [[ -f /usr/include/sqlite3.h ]]; then
		SQLITE_LIBS=$(pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
		# shellcheck disable=SC2086
		$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude bench/atomic.c \
			build/libr4engine.a $UUID_LIBS $SQLITE_LIBS -o "$B/atomic"
	else
		echo "bench: libsqlite3-dev missing: no atomic benchmark (scripts/deps.sh installs it)"
		ATOMIC_RUN=0
	fi
fi
FSCK=$(command -v fsck.reiser4 || true)

TMP=$(mktemp -d "$BDIR/r4bench.XXXXXX")
MNT=$TMP/mnt
LOOP=
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if [[ -n $LOOP ]]; then
		mountpoint -q "$MNT" && { umount "$MNT" || umount -l "$MNT"; }
		losetup -d "$LOOP"
	fi
	rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
LOG=$TMP/log
: >"$LOG"
status=0

echo "bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -srm)," \
	"commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- engine 2>/dev/null || echo '+dirty engine')"

# fsck IMG TAG: record "fsck TAG VERDICT" in the log.
fsck_image() {
	local verdict
	if [[ -z $FSCK ]]; then
		verdict="not-run(no-fsck.reiser4)"
	elif "$FSCK" --check -y "$1" >"$TMP/fsck.out" 2>&1 &&
		grep -q 'FS is consistent' "$TMP/fsck.out"; then
		verdict=consistent
	else
		verdict=INCONSISTENT
		status=1
		sed 's/^/  fsck: /' "$TMP/fsck.out" | grep -iv '^  fsck: *$' | tail -15
	fi
	echo "fsck $2 $verdict" >>"$LOG"
}

# run TAG CMD...: run one workload, append its lines (tagged) to the log.
run() {
	local tag=$1 out
	shift
	if ! out=$("$@" 2>"$TMP/err"); then
		status=1
		echo "bench: $tag failed:"
		sed 's/^/  /' "$TMP/err" | tail -5
	fi
	printf '%s\n' "$out" | sed "s/^/$tag /" >>"$LOG"
}

# ---- scale ----
if ((SCALE)); then
	for rep in $(seq 1 "$REPS"); do
		for n in $SMALL; do
			img=$TMP/r4-$n.img
			run "r4 small $n $rep" "$B/scale" small "$img" "$n"
			[[ $rep == 1 ]] && fsck_image "$img" "r4-small-$n"
			rm -f "$img"
			if ((PEER)); then
				img=$TMP/peer-$n.img
				truncate -s $((256 * 1024 * 1024 + n * 4096)) "$img"
				mkfs.reiser4 -y -f -o create=reg40 "$img" >/dev/null 2>&1
				run "peer small $n $rep" "$B/scale_peer" small "$img" "$n"
				[[ $rep == 1 ]] && fsck_image "$img" "peer-small-$n"
				rm -f "$img"
			fi
		done
		if ((BIG_MIB > 0)); then
			img=$TMP/r4-big.img
			run "r4 big $BIG_MIB $rep" "$B/scale" big "$img" "$BIG_MIB"
			[[ $rep == 1 ]] && fsck_image "$img" "r4-big-$BIG_MIB"
			rm -f "$img"
		fi
	done

	# The table: per workload and implementation, the run with the median
	# write time; ratios are r4 / peer (time: > 1 means r4 is slower; space:
	# > 1 means r4 uses more).
	awk -v reps="$REPS" '
function kv(s, k,   m) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
/^fsck / { fsck[$2] = $3; next }
{
	key = $1 " " $2 " " $3; rep = $4; line = $0
	if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
	if (line ~ /phase=[a-z-]*write/) { wsecs[key, rep] = kv(line, "secs") + 0 }
	if (line ~ /FAILED/) failed[key] = 1
	data[key, rep] = data[key, rep] "\n" line
}
function median(key,   r, n, a, i, j, t) {
	n = 0
	for (r = 1; r <= reps; r++) if ((key, r) in wsecs) a[++n] = r
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (wsecs[key, a[j]] < wsecs[key, a[i]]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n ? a[int((n + 1) / 2)] : 1
}
function field(key, phase, k,   r, nl, ls, i) {
	r = pick[key]; nl = split(data[key, r], ls, "\n")
	for (i = 1; i <= nl; i++) if (ls[i] ~ ("phase=" phase " ") || (phase == "space" && ls[i] ~ / space /)) return kv(ls[i], k)
	return ""
}
END {
	for (i = 1; i <= nk; i++) pick[order[i]] = median(order[i])
	printf "\n%-22s %-5s %9s %11s %9s %11s %12s %12s %10s %12s\n", "workload", "impl", "write s", "write rate",
	       "read s", "read rate", "RSS wr MiB", "RSS rd MiB", "B/file", "fsck"
	for (i = 1; i <= nk; i++) {
		key = order[i]; split(key, p, " "); impl = p[1]; kind = p[2]; n = p[3]
		wp = (impl == "peer" ? "peer-" : "") kind "-write"; rp = (impl == "peer" ? "peer-" : "") kind "-read"
		unit = kind == "small" ? "f/s" : "MiB/s"
		name = kind == "small" ? n " x 100 B" : n " MiB file"
		ft = impl "-" kind "-" n
		if (failed[key]) { printf "%-22s %-5s FAILED (see above)\n", name, impl; continue }
		bpf = kind == "small" ? field(key, "space", "bytes_per_file") : "-"
		printf "%-22s %-5s %9.2f %7.0f %-3s %9.2f %7.0f %-3s %12.1f %12.1f %10s %12s\n", name, impl,
		       field(key, wp, "secs"), field(key, wp, "rate"), unit, field(key, rp, "secs"),
		       field(key, rp, "rate"), unit, field(key, wp, "maxrss_kib") / 1024,
		       field(key, rp, "maxrss_kib") / 1024, bpf, (ft in fsck) ? fsck[ft] : "-"
		ws[impl, kind, n] = field(key, wp, "secs"); rs[impl, kind, n] = field(key, rp, "secs")
		bp[impl, kind, n] = bpf
		wm[impl, kind, n] = field(key, wp, "maxrss_kib"); rm[impl, kind, n] = field(key, rp, "maxrss_kib")
	}
	printf "\nratios r4 / peer (libreiser4), same run:\n"
	for (i = 1; i <= nk; i++) {
		key = order[i]; split(key, p, " ")
		if (p[1] != "r4" || p[2] != "small" || !(("peer", "small", p[3]) in ws)) continue
		n = p[3]
		printf "  %s x 100 B: write time %.2f, read time %.2f, bytes/file %.2f, peak RSS write %.2f, read %.2f\n", n,
		       ws["r4", "small", n] / ws["peer", "small", n], rs["r4", "small", n] / rs["peer", "small", n],
		       bp["r4", "small", n] / bp["peer", "small", n], wm["r4", "small", n] / wm["peer", "small", n],
		       rm["r4", "small", n] / rm["peer", "small", n]
	}
	printf "\nraw lines (median run of each):"
	for (i = 1; i <= nk; i++) { s = data[order[i], pick[order[i]]]; gsub(/\n/, "\n  ", s); printf "%s", s }
	printf "\n"
}' "$LOG"
fi

# ---- wa and commit (issue 3 item 9) ----
: >"$LOG"
if ((WA || COMMIT)) && ! git diff --quiet HEAD -- engine 2>/dev/null; then
	echo "bench: engine/ differs from HEAD: diff sha1 $(git diff HEAD -- engine | sha1sum | cut -c1-12)"
fi

# ext4_probe: can this run mount ext4 data=journal on a loop device?
ext4_probe() {
	local why='' img=$TMP/probe.img
	if [[ $(id -u) != 0 ]]; then
		why="not root"
	elif ! command -v mke2fs >/dev/null || ! command -v losetup >/dev/null; then
		why="mke2fs or losetup missing"
	else
		truncate -s 64M "$img"
		mkdir -p "$MNT"
		if ! mke2fs -q -t ext4 -F "$img" >/dev/null 2>&1 || ! LOOP=$(losetup -f --show "$img" 2>/dev/null); then
			why="mke2fs or losetup failed"
		elif ! mount -o data=journal "$LOOP" "$MNT" 2>/dev/null; then
			why="mount -o data=journal failed"
		fi
		mountpoint -q "$MNT" && umount "$MNT"
		[[ -n $LOOP ]] && losetup -d "$LOOP"
		LOOP=
		rm -f "$img"
	fi
	if [[ -n $why ]]; then
		echo "bench: ext4 data=journal peer skipped ($why)"
		echo "note ext4-skipped $why" >>"$LOG"
		return 1
	fi
}

# sectors_written: of the loop device, from /sys/block/*/stat (512-byte units).
sectors_written() { awk '{ print $7 }' "/sys/block/${LOOP#/dev/}/stat"; }

# ext4_over MIB: wa's overwrite workload on ext4 data=journal (a 4 GiB
# image, mke2fs defaults: 64 MiB journal); bytes written are the loop
# device's sectors written from after the mount to after the umount (so
# the checkpoint of the journal is in), the file filled and synced before.
ext4_over() {
	local mib=$1 img=$TMP/ext4.img s0 s1 jmib opts=data=journal,noatime,noinit_itable
	rm -f "$img"
	truncate -s 4G "$img"
	if ! mke2fs -q -t ext4 -F "$img" >/dev/null 2>&1 || ! LOOP=$(losetup -f --show "$img") ||
		! mount -o "$opts" "$LOOP" "$MNT"; then
		echo "bench: ext4 $mib: mke2fs, losetup or mount failed"
		status=1
		return
	fi
	jmib=$(dumpe2fs -h "$LOOP" 2>/dev/null | awk '/^Total journal size:/ { print $4 + 0 }')
	run "ext4 wa-fill $mib" "$B/wa" posix-fill "$MNT/f" "$mib"
	umount "$MNT"
	mount -o "$opts" "$LOOP" "$MNT"
	s0=$(sectors_written)
	run "ext4 wa-over $mib" "$B/wa" posix-over "$MNT/f" "$mib" "$WA_MIB" "$SEED"
	umount "$MNT"
	s1=$(sectors_written)
	echo "ext4 wa-over $mib phase=wa-over-ext4 file_mib=$mib journal_mib=${jmib:-?}" \
		"bytes_user=$((WA_MIB * 1048576)) bytes_written=$(((s1 - s0) * 512))" \
		"wa=$(awk -v w=$(((s1 - s0) * 512)) -v u=$((WA_MIB * 1048576)) 'BEGIN { printf "%.3f", w / u }')" \
		>>"$LOG"
	mount -o ro,noatime "$LOOP" "$MNT"
	run "ext4 wa-verify $mib" "$B/wa" posix-verify "$MNT/f" "$mib" "$WA_MIB" "$SEED"
	umount "$MNT"
	losetup -d "$LOOP"
	LOOP=
	rm -f "$img"
}

if ((WA)); then
	echo "bench: wa seed=$SEED"
	if [[ -n $WA_NEW ]]; then
		read -r nf fm pt <<<"$WA_NEW"
		img=$TMP/wa-new.img
		run "r4 wa-new $nf" "$B/wa" new "$img" "$nf" "$fm" "$pt"
		[[ -f $img ]] && fsck_image "$img" "r4-wa-new"
		rm -f "$img"
	fi
	ext4_ok=0
	if ((EXT4)) && [[ -n $WA_FILES ]] && ext4_probe; then
		ext4_ok=1
	fi
	for mib in $WA_FILES; do
		img=$TMP/wa-over-$mib.img
		run "r4 wa-over $mib" "$B/wa" over "$img" "$mib" "$WA_MIB" "$SEED"
		[[ -f $img ]] && fsck_image "$img" "r4-wa-over-$mib"
		rm -f "$img"
		if ((ext4_ok)); then
			ext4_over "$mib"
		fi
	done
fi
if ((COMMIT)); then
	run "both commit $COMMITS" "$B/commit" "$TMP" "$COMMITS"
	[[ -f $TMP/commit.img ]] && fsck_image "$TMP/commit.img" "r4-commit"
	rm -f "$TMP"/commit.*
fi

# The table: WA = bytes written / user bytes (r4: wchar; ext4: loop
# device sectors); ratios r4 / peer (WA > 1: r4 writes more; commits/s
# > 1: r4 commits faster).
if [[ -s $LOG ]]; then
	awk '
function kv(s, k,   m) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
function get(tag, phase, k) { return ((tag, phase) in line) ? kv(line[tag, phase], k) : "" }
function fs(t) { return (t in fsck) ? fsck[t] : "-" }
/^fsck / { fsck[$2] = $3; next }
/^note / { note = note "\n  " substr($0, 6); next }
{
	tag = $1 " " $2 " " $3; ph = kv($0, "phase")
	if (ph != "") line[tag, ph] = $0
	if (!(tag in seen)) { seen[tag] = 1; order[++nt] = tag }
	raw = raw "\n  " $0
}
END {
	printf "\nwrite amplification: bytes written to the image / bytes of user data\n"
	printf "%-40s %-5s %7s %9s %8s %9s %8s %14s\n", "workload", "impl", "WA", "syncs/txn", "secs", "MiB/s",
	       "content", "fsck"
	for (i = 1; i <= nt; i++) {
		tag = order[i]; split(tag, p, " ")
		if (p[2] == "wa-new") {
			l = line[tag, "wa-new"]
			name = kv(l, "files") " new files x " kv(l, "file_mib") " MiB, " kv(l, "files_per_txn") "/txn"
			if (l == "") { printf "%-40s %-5s FAILED (see above)\n", "new files", "r4"; continue }
			printf "%-40s %-5s %7.3f %9.2f %8.2f %9.1f %8s %14s\n", name, "r4", kv(l, "wa"),
			       kv(l, "syncs_per_txn"), kv(l, "secs"), kv(l, "rate"),
			       ((tag, "wa-new-verify") in line) ? "ok" : "FAILED", fs("r4-wa-new")
		} else if (p[2] == "wa-over" && p[1] == "r4") {
			mib = p[3]; l = line[tag, "wa-over"]
			name = kv(l, "over_mib") " MiB of 4K overwrites, " mib " MiB file"
			if (l == "") { printf "%-40s %-5s FAILED (see above)\n", mib " MiB file", "r4"; continue }
			printf "%-40s %-5s %7.3f %9.2f %8.2f %9.1f %8s %14s\n", name, "r4", kv(l, "wa"),
			       kv(l, "syncs_per_txn"), kv(l, "secs"), kv(l, "rate"),
			       ((tag, "wa-over-verify") in line) ? "ok" : "FAILED", fs("r4-wa-over-" mib)
			r4wa[mib] = kv(l, "wa"); overs[++no] = mib
			e = line["ext4 wa-over " mib, "wa-over-ext4"]; ep = line["ext4 wa-over " mib, "wa-over-posix"]
			if (e != "" && ep != "") {
				printf "%-40s %-5s %7.3f %9s %8.2f %9.1f %8s %14s\n", "  (journal " kv(e, "journal_mib") " MiB)",
				       "ext4", kv(e, "wa"), "1 fsync", kv(ep, "secs"), kv(ep, "rate"),
				       (("ext4 wa-verify " mib, "wa-over-posix-verify") in line) ? "ok" : "FAILED", "-"
				e4wa[mib] = kv(e, "wa")
			}
		}
	}
	for (k = 1; k <= no; k++) {
		mib = overs[k]
		if (k == 1) printf "\nratios r4 / ext4 data=journal, overwrites (WA; target r4 <= 1.5):\n"
		if (mib in e4wa) printf "  %s MiB file: WA %.3f / %.3f = %.2f\n", mib, r4wa[mib], e4wa[mib], r4wa[mib] / e4wa[mib]
		else printf "  %s MiB file: WA %.3f (no ext4 peer run; the issue cites 2.0 for data=journal)\n", mib, r4wa[mib]
	}
	for (i = 1; i <= nt; i++) {
		tag = order[i]; split(tag, p, " ")
		if (p[2] != "commit") continue
		r = line[tag, "commit-r4"]; q = line[tag, "commit-sqlite"]
		printf "\ndurable commits/s, two 100-byte records per transaction, %s commits:\n", p[3]
		printf "  %-28s %12s %12s %12s %14s\n", "impl", "commits/s", "syncs/commit", "bytes/commit", "check"
		if (r != "") printf "  %-28s %12.0f %12.2f %12.0f %14s\n", "r4 (2 files)", kv(r, "rate"), kv(r, "syncs_per_commit"),
		       kv(r, "bytes_per_commit"), fs("r4-commit")
		else printf "  r4: FAILED (see above)\n"
		if (q != "") printf "  %-28s %12.0f %12.2f %12.0f %14s\n", "sqlite WAL sync=FULL (2 rows)", kv(q, "rate"),
		       kv(q, "syncs_per_commit"), kv(q, "bytes_per_commit"), "integrity ok"
		else if (r != "") printf "  sqlite: FAILED (see above)\n"
		if (r != "" && q != "")
			printf "  ratio r4 / sqlite: commits/s %.2f, syncs/commit %.2f, bytes/commit %.2f\n",
			       kv(r, "rate") / kv(q, "rate"), kv(r, "syncs_per_commit") / kv(q, "syncs_per_commit"),
			       kv(r, "bytes_per_commit") / kv(q, "bytes_per_commit")
		w1 = line[tag, "commit-raw1"]; w2 = line[tag, "commit-raw2"]; w3 = line[tag, "commit-raw3"]
		if (r != "" && w1 != "" && w2 != "") {
			printf "  raw 4 KiB pwrite+fdatasync at one place: %.0f syncs/s; two in turn (a moving place, a fixed one): %.0f pairs/s\n",
			       kv(w1, "rate"), kv(w2, "rate")
			printf "  r4 / (raw / 2) (issue 27 item 2, target >= 0.95): %.2f; r4 / the pairs: %.2f\n",
			       kv(r, "rate") / (kv(w1, "rate") / 2), kv(r, "rate") / kv(w2, "rate")
		}
		if (r != "" && w3 != "")
			printf "  the least commit of the format, one block changed (12 KiB + sync, 4 KiB + sync): %.0f/s = %.2f of raw / 2; r4 / it: %.2f\n",
			       kv(w3, "rate"), kv(w3, "rate") / (kv(w1, "rate") / 2), kv(r, "rate") / kv(w3, "rate")
	}
	if (note != "") printf "\nnotes:%s\n", note
	printf "\nraw lines:%s\n", raw
}' "$LOG"
fi
# ---- lang (issue 4 item 10) ----
if ((LANG_RUN)); then
	for rep in $(seq 1 "$REPS"); do
		img=$TMP/lang.img
		run "lang $LANG_N $rep" "$B/lang" "$img" "$LANG_N" "$LANG_N"
		[[ $rep == 1 ]] && fsck_image "$img" "lang"
		rm -f "$img"
	done
	# per phase, the median over the runs; ratios language / direct
	awk -v reps="$REPS" '
function kv(s, k,   m) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
/^fsck lang / { fsck = $3; next }
$1 == "lang" {
	n = $2; ph = kv($0, "phase")
	if (!(ph in cnt)) order[++np] = ph
	v[ph, ++cnt[ph]] = kv($0, "secs") + 0
	u[ph, cnt[ph]] = kv($0, "cpu") + 0
	if (kv($0, "share") != "") share[ph, cnt[ph]] = kv($0, "share") + 0
}
function med(ph, which,   a, i, j, t, k) {
	k = cnt[ph]
	for (i = 1; i <= k; i++) a[i] = which == "cpu" ? u[ph, i] : v[ph, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((k + 1) / 2)]
}
END {
	printf "\nlanguage vs direct fs API, %s statements (median of %s; fsck.reiser4 %s):\n", n, reps, fsck
	printf "  %-30s %9s %11s %9s %11s %9s %9s %9s %9s\n", "workload", "direct s", "direct/s", "lang s",
	       "lang/s", "overhead", "cpu dir", "cpu lang", "compile"
	split("atomic-create atomic-overwrite units", w, " ")
	for (i = 1; i <= 3; i++) {
		d = med("direct-" w[i]); l = med("lang-" w[i]); c = med("lang-" w[i] "-compile")
		cd = med("direct-" w[i], "cpu"); cl = med("lang-" w[i], "cpu")
		printf "  %-30s %9.3f %11.0f %9.3f %11.0f %8.1f%% %9.3f %9.3f %8.1f%%\n",
		       w[i] (w[i] == "units" ? " (commit each)" : " (one unit)"),
		       d, n / d, l, n / l, (l / d - 1) * 100, cd, cl, c / l * 100
	}
	printf "  (overhead: wall time, lang / direct - 1; cpu: CPU seconds of each side, the waits for\n"
	printf "  the disk left out; compile: lex+parse+check+compile as a share of the language run)\n"
}' "$LOG"
fi
# ---- ls (issue 27 item 3) ----
if ((LS_RUN)); then
	: >"$LOG"
	img=$TMP/r4-ls.img
	run "r4" "$B/scale" ls "$img" "$LS_N"
	# median of 5 runs of a command, stdout to /dev/null (run in $(...):
	# whether it works is checked below)
	cmd_median() {
		local t0 t1 ts=()
		for _ in 1 2 3 4 5; do
			t0=$(date +%s.%N)
			"$@" >/dev/null
			t1=$(date +%s.%N)
			ts+=("$(echo "$t1 - $t0" | bc)")
		done
		printf '%s\n' "${ts[@]}" | sort -g | sed -n 3p
	}
	echo "r4 phase=cmd-ls-1 secs=$(cmd_median build/r4 ls -1 "$img" /d)" >>"$LOG"
	echo "r4 phase=cmd-ls-l secs=$(cmd_median build/r4 ls "$img" /d)" >>"$LOG"
	for opt in -1 -l; do
		[[ $(build/r4 ls $opt "$img" /d | wc -l) == $((LS_N + 2)) ]] ||
			{ echo "bench: r4 ls $opt /d: failed or wrong count"; status=1; }
	done
	rm -f "$img"
	if ((PEER)); then
		img=$TMP/peer-ls.img
		truncate -s $((256 * 1024 * 1024 + LS_N * 4096)) "$img"
		mkfs.reiser4 -y -f -o create=reg40 "$img" >/dev/null 2>&1
		run "peer" "$B/scale_peer" ls "$img" "$LS_N"
		rm -f "$img"
	fi
	awk -v n="$LS_N" '
function kv(s, k) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
/phase=/ { p = kv($0, "phase"); sub(/^peer-/, "", p); t[$1, p] = kv($0, "secs") }
function row(what, r4k, peerk,   a, b) {
	a = t["r4", r4k]; b = (peerk == "" ? "" : t["peer", peerk])
	if (b != "" && a != "") printf "%-44s %9.4f %9.4f %8.2f\n", what, a, b, a / b
	else printf "%-44s %9.4f %9s %8s\n", what, a, "-", "-"
}
END {
	printf "\nls: a directory of %d files (+ . and ..), seconds (median); ratio r4 / libreiser4 (< 1: r4 faster)\n", n
	printf "%-44s %9s %9s %8s\n", "", "r4", "peer", "ratio"
	row("names (readdir)", "ls-names", "ls-names")
	row("names + attributes", "ls-stat", "ls-stat")
	row("r4_readdir (names + types)", "ls-readdir", "")
	row("names, then r4_stat per path (old r4 ls)", "ls-path", "")
	row("`r4 ls -1 IMG /d` end to end", "cmd-ls-1", "ls-names")
	row("`r4 ls IMG /d` end to end", "cmd-ls-l", "ls-stat")
	printf "(end to end rows: beside the peer'"'"'s in-process listing, which has no process start, open or printing)\n"
}' "$LOG"
	sed 's/^/  /' "$LOG"
fi
# ---- atomic (issue 27 item 1) ----
if ((ATOMIC_RUN)); then
	: >"$LOG"
	ATOMIC_REPS=5
	script=$TMP/atomic.r4
	img=$TMP/atomic.img
	db=$TMP/atomic.sqlite
	"$B/atomic" script "$script" "$ATOMIC_N" 100
	# (`atomic run CMD`: its wall time and peak RSS, as a whole process)
	for rep in $(seq 1 "$ATOMIC_REPS"); do
		rm -f "$img"
		build/r4 mkfs "$img" $((64 + ATOMIC_N / 128))M >/dev/null
		if t=$("$B/atomic" run build/r4sh --quiet --atomic -f "$script" "$img") &&
			"$B/atomic" check "$img" "$ATOMIC_N" 100; then
			echo "r4 $t" >>"$LOG"
		else
			echo "bench: atomic r4 run $rep failed"
			status=1
		fi
		[[ $rep == 1 ]] && fsck_image "$img" "atomic"
		rm -f "$db" "$db"-wal "$db"-shm
		if t=$("$B/atomic" run "$B/atomic" sqlite "$db" "$ATOMIC_N" 100) &&
			"$B/atomic" sqlite-check "$db" "$ATOMIC_N" 100; then
			echo "sqlite $t" >>"$LOG"
		else
			echo "bench: atomic sqlite run $rep failed"
			status=1
		fi
	done
	rm -f "$img" "$db" "$db"-wal "$db"-shm "$script"
	# one script of ATOMIC_BIG statements, once: its time and peak memory
	# beside the engine's cache bound (clean nodes: 1/16 of the machine's
	# memory, 64 MiB to 1 GiB; 16,384 nodes of 4 KiB dirty before a long
	# transaction writes them out early)
	if ((ATOMIC_BIG)); then
		"$B/atomic" script "$script" "$ATOMIC_BIG" 100
		build/r4 mkfs "$img" $((64 + ATOMIC_BIG / 128))M >/dev/null
		if t=$("$B/atomic" run build/r4sh --quiet --atomic -f "$script" "$img") &&
			"$B/atomic" check "$img" "$ATOMIC_BIG" 100; then
			echo "big $t" >>"$LOG"
		else
			echo "bench: atomic r4 run of $ATOMIC_BIG statements failed"
			status=1
		fi
		rm -f "$img" "$script"
	fi
	awk -v n="$ATOMIC_N" -v reps="$ATOMIC_REPS" -v big="$ATOMIC_BIG" '
/^fsck / { fsck = $3; next }
{ i = ++k[$1]; t[$1, i] = substr($2, 6) + 0; rss[$1, i] = substr($3, 12) / 1024 }
function med(w,   a, i, j, x, m) {
	m = k[w]
	for (i = 1; i <= m; i++) a[i] = t[w, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
	return m ? a[int((m + 1) / 2)] : 0
}
function all(w,   i, s) { for (i = 1; i <= k[w]; i++) s = s sprintf(" %.2f", t[w, i]); return s }
END {
	printf "\natomic: %d files of 100 bytes in 100 directories, one unit; seconds, median of %d\n", n, reps
	printf "  %-52s %8.3f  (runs:%s; peak RSS %.0f MiB; fsck.reiser4 %s)\n", "r4sh --quiet --atomic -f SCRIPT IMG", med("r4"), all("r4"), rss["r4", 1], fsck
	printf "  %-52s %8.3f  (runs:%s; peak RSS %.0f MiB)\n", "SQLite, one transaction (WAL, synchronous=FULL)", med("sqlite"), all("sqlite"), rss["sqlite", 1]
	if (med("r4") > 0 && med("sqlite") > 0)
		printf "  ratio SQLite s / r4 s: %.2f (target >= 1: r4 at least as fast)\n", med("sqlite") / med("r4")
	if (k["big"])
		printf "  one script of %d statements, once: %.1f s, peak RSS %.0f MiB (cache bound: 64 MiB dirty, clean 1/16 of memory from 64 MiB to 1 GiB)\n", big, t["big", 1], rss["big", 1]
	printf "  (both read back whole and compared after every run)\n"
}' "$LOG"
fi
# ---- ops (issue 27 item 4) ----
if ((OPS_RUN)); then
	: >"$LOG"
	img=$TMP/ops.img
	# the same stats through an r4fuse mount of the volume (after the
	# creates), entry and attr timeouts 0: every lookup reaches r4fuse
	OPS_FUSE=${R4_BENCH_OPS_FUSE:-1}
	if ((OPS_FUSE)) && ! { [[ -c /dev/fuse && -x build/r4fuse ]] && command -v fusermount3 >/dev/null; }; then
		echo "bench: no /dev/fuse, build/r4fuse or fusermount3: no stat through a mount"
		OPS_FUSE=0
	fi
	# ops_mount_stat IMG N SHAPE
	ops_mount_stat() {
		local mnt=$TMP/ops-mnt pid
		mkdir -p "$mnt"
		build/r4fuse "$1" "$mnt" -f -o entry_timeout=0,attr_timeout=0 >"$TMP/ops-fuse.log" 2>&1 &
		pid=$!
		for _ in $(seq 1 200); do
			mountpoint -q "$mnt" && break
			sleep 0.05
		done
		if mountpoint -q "$mnt"; then
			run "r4" "$B/scale" mstat "$mnt" "$2" "$3" "$OPS_M" "$SEED"
			run "r4" "$B/scale" mcreate "$mnt" "$2" "$3" "$OPS_M" "$SEED"
			fusermount3 -u "$mnt" || { echo "bench: ops: fusermount3 -u failed"; status=1; }
		else
			echo "bench: ops: r4fuse did not mount:"
			sed 's/^/  /' "$TMP/ops-fuse.log" | tail -5
			status=1
		fi
		wait "$pid" || { echo "bench: ops: r4fuse exited with status $?"; status=1; }
	}
	for n in $OPS_SIZES; do
		for shape in flat tree3; do
			run "r4" "$B/scale" ops "$img" "$n" "$shape" "$OPS_M" "$SEED"
			fsck_image "$img" "$n-$shape"
			((OPS_FUSE)) && ops_mount_stat "$img" "$n" "$shape"
			rm -f "$img"
			if ((OPS_PEER)); then
				# (the page cache r4's open took as its bound)
				kib=$(sed -n "s/^r4 ops n=$n shape=$shape .*cache_kib=\([0-9]*\).*/\1/p" "$LOG" | tail -1)
				run "sqlite" "$B/ops_sqlite" "$TMP/ops.sqlite" "$n" "$shape" "$OPS_M" "$SEED" "${kib:-65536}"
				rm -f "$TMP"/ops.sqlite*
			fi
		done
	done
	dat=bench/scale-ops.dat
	awk -v m="$OPS_M" -v seed="$SEED" -v dat="$dat" '
function kv(s, k) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
/ ops n=/ { n = kv($0, "n"); sh = kv($0, "shape"); bound[n, sh] = kv($0, "cache_kib") / 1024
	    if (!(n in seen)) { seen[n] = 1; ns[++nn] = n } }
/ result=build / { build[n, sh] = kv($0, "secs") }
/ result=stat / { su[n, sh] = kv($0, "us"); sc[n, sh] = kv($0, "cpu_us"); sf[n, sh] = kv($0, "first") }
/ result=create / { cu[n, sh] = kv($0, "us"); cc[n, sh] = kv($0, "cpu_us") }
/ result=mstat / { mu[n, sh] = kv($0, "us") }
/ result=mcreate / { mc[n, sh] = kv($0, "us") }
/ result=sq-stat / { qn = kv($0, "n"); qs = kv($0, "shape"); qsc[qn, qs] = kv($0, "cpu_us"); qsu[qn, qs] = kv($0, "us"); peer = 1 }
/ result=sq-create / { qn = kv($0, "n"); qs = kv($0, "shape"); qcc[qn, qs] = kv($0, "cpu_us"); qcu[qn, qs] = kv($0, "us") }
/ phase=ops-stat / { srss[n, sh] = kv($0, "maxrss_kib") / 1024 }
/ phase=ops-create / { crss[n, sh] = kv($0, "maxrss_kib") / 1024 }
/^fsck / { fsck[$2] = $3 }
function r(a, b) { return (a > 0 && b > 0) ? sprintf("%.1fx", a / b) : "-" }
END {
	printf "\nops: time per operation against the number of files (M = %d random paths, seed %s)\n", m, seed
	printf "%8s %-5s %7s | %8s %8s %8s %6s | %8s %8s %6s | %8s %8s | %8s %8s %6s | %s\n", "N", "shape", "build s",
	       "stat us", "cpu us", "first", "x1e3", "create", "cpu us", "x1e3", "fuse st", "fuse cr",
	       "RSS st", "RSS cr", "bound", "fsck"
	print "# N shape stat_us stat_cpu_us create_us create_cpu_us stat_rss_mib create_rss_mib bound_mib build_s fuse_stat_us sqlite_stat_cpu_us sqlite_create_cpu_us fuse_create_us" >dat
	for (sv = 1; sv <= 2; sv++) {
		sh = sv == 1 ? "flat" : "tree3"
		for (i = 1; i <= nn; i++) {
			n = ns[i]; b = ns[1]
			printf "%8d %-5s %7.2f | %8.2f %8.2f %8.2f %6s | %8.2f %8.2f %6s | %8s %8s | %7.1fM %7.1fM %5.0fM | %s\n",
			       n, sh, build[n, sh], su[n, sh], sc[n, sh], sf[n, sh], r(sc[n, sh], sc[b, sh]),
			       cu[n, sh], cc[n, sh], r(cc[n, sh], cc[b, sh]), (mu[n, sh] == "" ? "-" : mu[n, sh]),
			       (mc[n, sh] == "" ? "-" : mc[n, sh]), srss[n, sh], crss[n, sh], bound[n, sh], fsck[n "-" sh]
			printf "%d %s %s %s %s %s %.1f %.1f %.0f %s %s %s %s %s\n", n, sh, su[n, sh], sc[n, sh], cu[n, sh], cc[n, sh],
			       srss[n, sh], crss[n, sh], bound[n, sh], build[n, sh], (mu[n, sh] == "" ? "NaN" : mu[n, sh]),
			       (qsc[n, sh] == "" ? "NaN" : qsc[n, sh]), (qcc[n, sh] == "" ? "NaN" : qcc[n, sh]),
			       (mc[n, sh] == "" ? "NaN" : mc[n, sh]) >dat
		}
		print "\n" >dat
	}
	printf "(us: wall per operation; cpu us: the process'"'"'s CPU time per operation; x1e3: CPU per\n"
	printf " operation against the smallest N; RSS st/cr: peak RSS of the stat and create phases;\n"
	printf " bound: the clean nodes'"'"' cache bound; first: the first stat rep, from an empty cache;\n"
	printf " fuse st: stat(2) through an r4fuse mount, timeouts 0, wall us per call, median of 3;\n"
	printf " fuse cr: a create through it (open, write 100 bytes, close; syncfs every 1,000), wall us)\n"
	if (!peer)
		exit
	printf "\nops beside SQLite (the same paths as rows; CPU us per operation, x1e3 against the smallest N)\n"
	printf "%8s %-5s | %8s %6s %8s %6s | %8s %6s %8s %6s\n", "N", "shape", "r4 stat", "x1e3", "sq stat", "x1e3",
	       "r4 creat", "x1e3", "sq creat", "x1e3"
	for (sv = 1; sv <= 2; sv++) {
		sh = sv == 1 ? "flat" : "tree3"
		for (i = 1; i <= nn; i++) {
			n = ns[i]; b = ns[1]
			printf "%8d %-5s | %8.2f %6s %8.2f %6s | %8.2f %6s %8.2f %6s\n", n, sh,
			       sc[n, sh], r(sc[n, sh], sc[b, sh]), qsc[n, sh], r(qsc[n, sh], qsc[b, sh]),
			       cc[n, sh], r(cc[n, sh], cc[b, sh]), qcc[n, sh], r(qcc[n, sh], qcc[b, sh])
		}
	}
}' "$LOG"
	if command -v gnuplot >/dev/null; then
		gnuplot <<EOF || { echo "bench: gnuplot failed"; status=1; }
set terminal svg size 760,560 dynamic enhanced font "sans,12"
set output "bench/scale-ops.svg"
set title "r4 and SQLite: time per operation against the number of files"
set logscale x
set logscale y
set format x "10^{%L}"
set xlabel "files in the volume"
set ylabel "microseconds per operation"
set key below maxrows 5
set grid
set xrange [500:2000000]
plot "$dat" index 0 using 1:4 with linespoints lw 2 title "stat, flat (CPU)", \\
     "$dat" index 1 using 1:4 with linespoints lw 2 title "stat, tree3 (CPU)", \\
     "$dat" index 0 using 1:6 with linespoints lw 2 title "create, flat (CPU)", \\
     "$dat" index 1 using 1:6 with linespoints lw 2 title "create, tree3 (CPU)", \\
     "$dat" index 0 using 1:11 with linespoints dt 2 title "stat(2) via r4fuse, flat (wall)", \\
     "$dat" index 1 using 1:11 with linespoints dt 2 title "stat(2) via r4fuse, tree3 (wall)", \\
     "$dat" index 0 using 1:14 with linespoints dt 2 title "create via r4fuse, flat (wall)", \\
     "$dat" index 1 using 1:14 with linespoints dt 2 title "create via r4fuse, tree3 (wall)", \\
     "$dat" index 0 using 1:12 with linespoints dt 3 title "SQLite stat, flat (CPU)", \\
     "$dat" index 0 using 1:13 with linespoints dt 3 title "SQLite create, flat (CPU)"
EOF
	else
		echo "bench: gnuplot missing: no bench/scale-ops.svg (apt-get install gnuplot-nox)"
	fi
fi
# ---- fuse (issue 6 item 7): its own script, mounts and clean-up ----
if ((FUSE_RUN)); then
	R4_BENCH_REPS=$REPS R4_BENCH_DIR=$BDIR bash bench/fuse.sh || status=1
fi
# ---- group commit (issue 27 item 2): its own script, mounts and clean-up ----
if ((GROUP_RUN)); then
	R4_BENCH_REPS=$REPS R4_BENCH_DIR=$BDIR bash bench/group.sh || status=1
fi
exit $status
