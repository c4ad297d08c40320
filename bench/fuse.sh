#!/usr/bin/env bash
# bench/fuse.sh - the FUSE benchmark (issue 6 item 7): r4fuse beside
# fuse2fs (e2fsprogs, an ext4 image file of the same size) and libfuse's
# passthrough example on a tmpfs (the FUSE ceiling on this machine), in
# one run.  bench/run.sh runs it last (R4_BENCH_FUSE=0 skips it); it also
# runs alone:
#   bash bench/fuse.sh
#
# Workloads (bench/fsbench.c, POSIX calls timed with clock_gettime), each
# run R4_BENCH_REPS times (default 3) per peer, peers taking turns, every
# run on a fresh image (fresh tmpfs) per peer:
#   1. create: N files of 100 bytes in one directory (open O_CREAT|O_EXCL,
#      write, close);
#   2. unmount, mount again (the file system's caches cold), stat every
#      file, then read every file comparing its bytes;
#   3. rm -rf of the directory;
#   4. on a second fresh image: one file of MIB MiB in 1 MiB writes +
#      fsync; unmount, mount, read it back in 1 MiB reads, comparing;
#   5. bytes used per small file: statvfs's (f_blocks - f_bfree) * f_frsize
#      after step 2's mount minus before step 1's files, over N; for r4
#      also from the image (r4 info) after step 1's unmount.
# The table shows, per peer, the median of each number over the runs, and
# the ratios r4fuse / fuse2fs and r4fuse / passthrough.  On the first run
# fsck.reiser4 --check (r4) and e2fsck -fn (ext4) check the image holding
# the N files.  The exit status is non-zero only when a workload breaks
# (an error, wrong bytes read back, a mount that fails, an inconsistent
# image); nothing here passes or fails on time.
#
# Each peer runs with its defaults, in the foreground (-f) so this script
# knows its pid and can wait for it after the unmount (r4fuse commits and
# closes the image then):
#   r4fuse IMG MNT -f                (commit=5; libfuse multithreaded)
#   fuse2fs IMG MNT -f               (its default -o kernel_cache,
#                                     attr_timeout=0,big_writes; libfuse 2)
#   passthrough MNT -f               (entry/attr/negative timeouts 0)
# The kernel's view of each mount (/proc/mounts) is printed.  passthrough
# is compiled here from Debian's copy of libfuse's example
# (/usr/share/doc/libfuse3-dev/examples/passthrough.c, or
# R4_BENCH_FUSE_PTSRC); without it, or
# without fuse2fs, that peer is skipped with a message.  Mounts are always
# undone (fusermount3 -u, on EXIT too).
#
# R4_BENCH_FUSE_STRACE=1 adds an untimed pass after the runs: per peer,
# strace -c -f on the daemon during workload 1 and during the sequential
# write, printed as system calls per file and per MiB, the rarer ones left
# out (the daemon's read() of /dev/fuse is one request from the kernel,
# its writev one reply).
#
# Environment: R4_BENCH_FUSE_FILES (N, default 10000), R4_BENCH_FUSE_MIB
# (default 1024, 0 = skip 4), R4_BENCH_FUSE_SIZE (image and tmpfs size,
# default 2G), R4_BENCH_FUSE_PEERS (default "r4 fuse2fs passthrough"),
# R4_BENCH_REPS, R4_BENCH_DIR (where images live, default /tmp),
# R4_BENCH_FUSE_R4OPTS (more r4fuse options, e.g. "-o 32bittimes"),
# R4_BENCH_FUSE_PTSRC (a directory holding passthrough.c and
# passthrough_helpers.h, where Debian's libfuse3-dev has none: libfuse's
# example/ of the same release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

N=${R4_BENCH_FUSE_FILES:-10000}
MIB=${R4_BENCH_FUSE_MIB:-1024}
SIZE=${R4_BENCH_FUSE_SIZE:-2G}
PEERS=${R4_BENCH_FUSE_PEERS:-r4 fuse2fs passthrough}
REPS=${R4_BENCH_REPS:-3}
BDIR=${R4_BENCH_DIR:-/tmp}
R4OPTS=${R4_BENCH_FUSE_R4OPTS:-}	# e.g. "-o 32bittimes"
STRACE=${R4_BENCH_FUSE_STRACE:-0}
CC=${CC:-cc}
B=build/bench
PT_SRC=${R4_BENCH_FUSE_PTSRC:-/usr/share/doc/libfuse3-dev/examples}

if [[ ! -c /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
	echo "bench fuse: /dev/fuse or fusermount3 missing: no FUSE benchmark"
	exit 0
fi
if ((STRACE)) && ! command -v strace >/dev/null; then
	echo "bench fuse: strace missing: no system call counts"
	STRACE=0
fi
make -s all
mkdir -p "$B"
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror bench/fsbench.c -o "$B/fsbench"

TMP=$(mktemp -d "$BDIR/r4fusebench.XXXXXX")
MNT=$TMP/mnt
TMPFS=$TMP/tmpfs
mkdir -p "$MNT" "$TMPFS"
LOG=$TMP/log
: >"$LOG"
DPID=
TMPFS_MOUNTED=0
status=0

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null ||
			umount -l "$MNT" 2>/dev/null || true
	fi
	if [[ -n $DPID ]]; then
		for _ in $(seq 1 100); do
			kill -0 "$DPID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$DPID" 2>/dev/null || true
	fi
	if ((TMPFS_MOUNTED)); then
		umount "$TMPFS" 2>/dev/null || umount -l "$TMPFS" 2>/dev/null || true
	fi
	rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench fuse: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -srm)," \
	"commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- engine fuse-bridge 2>/dev/null || echo '+dirty engine/fuse-bridge')"

# ---- the peers ----
HAVE=""
FUSE_FLAGS=$(pkg-config fuse3 --cflags --libs 2>/dev/null || echo "-I/usr/include/fuse3 -lfuse3 -lpthread")
# shellcheck disable=SC2086 # FUSE_FLAGS is a list of flags
for p in $PEERS; do
	case $p in
	r4) HAVE="$HAVE r4" ;;
	fuse2fs)
		if command -v fuse2fs >/dev/null && command -v mkfs.ext4 >/dev/null; then
			HAVE="$HAVE fuse2fs"
		else
			echo "bench fuse: fuse2fs or mkfs.ext4 missing: no fuse2fs peer (apt-get install fuse2fs)"
		fi
		;;
	passthrough)
		if [[ ! -f $PT_SRC/passthrough.c || ! -f $PT_SRC/passthrough_helpers.h ]]; then
			echo "bench fuse: $PT_SRC/passthrough.c missing: no passthrough peer (libfuse3-dev)"
		elif ! $CC -Wall -O2 -I"$PT_SRC" "$PT_SRC/passthrough.c" $FUSE_FLAGS \
			-o "$B/passthrough" 2>"$TMP/cc.out"; then
			echo "bench fuse: passthrough.c did not compile: no passthrough peer"
			sed 's/^/  /' "$TMP/cc.out" | tail -5
		elif [[ $(id -u) != 0 ]]; then
			echo "bench fuse: not root, cannot mount a tmpfs: no passthrough peer"
		else
			HAVE="$HAVE passthrough"
		fi
		;;
	*) echo "bench fuse: unknown peer '$p'" && exit 2 ;;
	esac
done
FSCK=$(command -v fsck.reiser4 || true)

# fresh PEER: a new, empty file system for PEER (image or tmpfs).
fresh() {
	case $1 in
	r4)
		rm -f "$TMP/r4.img"
		build/r4 mkfs "$TMP/r4.img" "$SIZE" >/dev/null
		;;
	fuse2fs)
		rm -f "$TMP/ext4.img"
		truncate -s "$SIZE" "$TMP/ext4.img"
		mkfs.ext4 -q -F "$TMP/ext4.img" >/dev/null
		;;
	passthrough)
		if ((TMPFS_MOUNTED)); then
			umount "$TMPFS"
			TMPFS_MOUNTED=0
		fi
		mount -t tmpfs -o "size=$SIZE,mode=0755" r4bench "$TMPFS"
		TMPFS_MOUNTED=1
		;;
	esac
}

# root PEER: the directory where PEER's workloads run.
root() { [[ $1 == passthrough ]] && echo "$MNT$TMPFS" || echo "$MNT"; }

# mount_fs PEER: mount PEER's file system on MNT, its daemon in DPID.
mount_fs() {
	local cmd
	case $1 in
	r4) cmd=(build/r4fuse "$TMP/r4.img" "$MNT" -f $R4OPTS) ;;
	fuse2fs) cmd=(fuse2fs "$TMP/ext4.img" "$MNT" -f) ;;
	passthrough) cmd=("$B/passthrough" "$MNT" -f) ;;
	esac
	"${cmd[@]}" >>"$TMP/daemon-$1.log" 2>&1 &
	DPID=$!
	for _ in $(seq 1 200); do
		mountpoint -q "$MNT" && break
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID" || true
			DPID=
			echo "bench fuse: $1 did not mount:"
			sed 's/^/  /' "$TMP/daemon-$1.log" | tail -5
			return 1
		fi
		sleep 0.05
	done
	if ! mountpoint -q "$MNT"; then
		echo "bench fuse: $1: no mount after 10 s"
		return 1
	fi
	if ! grep -q "^mount $1 " "$LOG"; then
		echo "mount $1 $(awk -v m="$MNT" '$2 == m { print $1, $3, $4 }' /proc/mounts)" >>"$LOG"
	fi
}

# umount_fs PEER: unmount MNT and wait until the daemon has finished.
umount_fs() {
	local rc=0
	fusermount3 -u "$MNT" || { echo "bench fuse: $1: fusermount3 -u failed"; status=1; }
	if [[ -n $DPID ]]; then
		wait "$DPID" || rc=$?
		DPID=
		if ((rc)); then
			echo "bench fuse: $1 exited with status $rc after the unmount:"
			sed 's/^/  /' "$TMP/daemon-$1.log" | tail -5
			status=1
		fi
	fi
}

# run PEER REP CMD...: run one fsbench command, its lines tagged into the log.
run() {
	local tag="$1 $2" out
	shift 2
	if ! out=$("$@" 2>"$TMP/err"); then
		status=1
		echo "bench fuse: $tag $2 failed:"
		sed 's/^/  /' "$TMP/err" | tail -5
		return 1
	fi
	printf '%s\n' "$out" | sed "s/^/$tag /" >>"$LOG"
}

# check_image PEER: fsck of the image holding the N files (unmounted).
check_image() {
	local verdict
	case $1 in
	r4)
		build/r4 info "$TMP/r4.img" | awk '/^blocks:/ { b = $2 } /^free blocks:/ { f = $3 }
			END { printf "image r4 used=%d\n", (b - f) * 4096 }' >>"$LOG"
		if [[ -z $FSCK ]]; then
			verdict="not-run(no-fsck.reiser4)"
		elif "$FSCK" --check -y "$TMP/r4.img" >"$TMP/fsck.out" 2>&1 &&
			grep -q 'FS is consistent' "$TMP/fsck.out"; then
			verdict=consistent
		else
			verdict=INCONSISTENT
			status=1
			sed 's/^/  fsck: /' "$TMP/fsck.out" | grep -iv '^  fsck: *$' | tail -15
		fi
		;;
	fuse2fs)
		if e2fsck -fn "$TMP/ext4.img" >"$TMP/fsck.out" 2>&1; then
			verdict=clean
		else
			verdict=ERRORS
			status=1
			sed 's/^/  e2fsck: /' "$TMP/fsck.out" | tail -15
		fi
		;;
	*) return 0 ;;
	esac
	echo "fsck $1 $verdict" >>"$LOG"
}

# one PEER REP: all workloads of one run of PEER.
one() {
	local p=$1 rep=$2 r
	r=$(root "$p")
	fresh "$p"
	mount_fs "$p" || { status=1; return; }
	run "$p" "$rep" "$B/fsbench" create "$r/d" "$N" || { umount_fs "$p"; return; }
	umount_fs "$p"
	[[ $rep == 1 ]] && check_image "$p"
	mount_fs "$p" || { status=1; return; }
	if run "$p" "$rep" "$B/fsbench" check "$r/d" "$N"; then
		run "$p" "$rep" "$B/fsbench" rm "$r/d" "$N" || true
	fi
	umount_fs "$p"
	((MIB > 0)) || return 0
	fresh "$p"
	mount_fs "$p" || { status=1; return; }
	run "$p" "$rep" "$B/fsbench" write "$r/big" "$MIB" || { umount_fs "$p"; return; }
	umount_fs "$p"
	mount_fs "$p" || { status=1; return; }
	run "$p" "$rep" "$B/fsbench" read "$r/big" "$MIB" || true
	umount_fs "$p"
}

echo "bench fuse: $N files of 100 bytes, $MIB MiB sequential, $SIZE file systems," \
	"$REPS runs; peers:$HAVE"
echo "bench fuse: libfuse $(pkg-config --modversion fuse3 2>/dev/null || echo '?')" \
	"(r4fuse, passthrough)$([[ $HAVE == *fuse2fs* ]] &&
		fuse2fs -V 2>&1 | awk 'NR == 1 { v = $0 } /FUSE library/ { l = $NF }
			END { printf ", %s on libfuse %s", v, l }')"
for rep in $(seq 1 "$REPS"); do
	for p in $HAVE; do
		one "$p" "$rep"
	done
	if ((TMPFS_MOUNTED)); then
		umount "$TMPFS"
		TMPFS_MOUNTED=0
	fi
done

# traced PEER WHAT CMD...: run one fsbench command (untimed) with strace -c
# -f on the daemon; its counts go to the log as "strace PEER WHAT SYSCALL CALLS".
traced() {
	local p=$1 what=$2 spid
	shift 2
	strace -c -S calls -f -p "$DPID" -o "$TMP/strace.out" 2>/dev/null &
	spid=$!
	# start once every thread of the daemon is traced
	for _ in $(seq 1 100); do
		! grep -q '^TracerPid:[[:space:]]*0$' /proc/"$DPID"/task/*/status 2>/dev/null && break
		sleep 0.05
	done
	"$@" >/dev/null 2>"$TMP/err" || { echo "bench fuse: traced $p $what failed"; status=1; }
	kill -INT "$spid"
	wait "$spid" || true
	# "% time, seconds, usecs/call, calls, [errors,] syscall"
	awk -v p="$p" -v w="$what" '$(NF - 1) ~ /^[0-9]+$/ && $NF != "total" {
		print "strace", p, w, $NF, NF == 6 ? $4 : $(NF - 1) }' "$TMP/strace.out" >>"$LOG"
}

if ((STRACE)); then
	for p in $HAVE; do
		r=$(root "$p")
		fresh "$p"
		mount_fs "$p" || continue
		traced "$p" create "$B/fsbench" create "$r/d" "$N"
		umount_fs "$p"
		if ((MIB > 0)); then
			fresh "$p"
			mount_fs "$p" || continue
			traced "$p" write "$B/fsbench" write "$r/big" "$MIB"
			umount_fs "$p"
		fi
	done
	if ((TMPFS_MOUNTED)); then
		umount "$TMPFS"
		TMPFS_MOUNTED=0
	fi
fi

# The table: per peer, the median over the runs of each number; ratios
# r4fuse / peer (> 1: r4fuse is faster, or for bytes per file uses more).
awk -v n="$N" -v reps="$REPS" -v mib="$MIB" '
function kv(s, k) { return match(s, " " k "=[^ ]*") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "" }
function med(p, m,   a, i, j, t, k) {
	k = cnt[p, m]
	if (!k) return ""
	for (i = 1; i <= k; i++) a[i] = val[p, m, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((k + 1) / 2)]
}
function add(p, m, v) { val[p, m, ++cnt[p, m]] = v }
/^mount / { mnt[$2] = substr($0, length($1 " " $2 " ") + 1); next }
/^fsck / { fsck[$2] = $3; next }
/^image / { img[$2] = kv($0, "used"); next }
/^strace / {
	k = $2 " " $3; if (!(k in sc)) sorder[++ns] = k
	v = $5 / ($3 == "create" ? n : mib)
	if (v >= 0.05) sc[k] = sc[k] sprintf("%s %s %.2f", sc[k] == "" ? "" : ",", $4, v)
	next
}
{
	p = $1; rep = $2; ph = kv($0, "phase")
	if (!(p in seen)) { seen[p] = 1; order[++np] = p }
	add(p, ph, kv($0, "rate") + 0)
	if (ph == "create") { before[p, rep] = kv($0, "used_before"); hot[p, rep] = kv($0, "used_after") }
	if (ph == "stat" && ((p, rep) in before)) {
		add(p, "bpf", (kv($0, "used_before") - before[p, rep]) / n)
		add(p, "bpf-hot", (hot[p, rep] - before[p, rep]) / n)
	}
	raw = raw "\n  " $0
}
function cell(p, m, f,   v) { v = med(p, m); return v == "" ? "-" : sprintf(f, v) }
function ratio(m, q,   a, b) {
	a = med("r4", m); b = med(q, m)
	return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b)
}
END {
	names["r4"] = "r4fuse"; names["fuse2fs"] = "fuse2fs"; names["passthrough"] = "passthrough/tmpfs"
	printf "\nFUSE, median of %s runs: %s x 100 B files in one directory; %s MiB file in 1 MiB calls\n",
	       reps, n, mib
	printf "  %-18s %10s %10s %10s %10s %11s %11s %10s %14s\n", "peer", "create/s", "stat/s", "read/s",
	       "rm/s", "wr MiB/s", "rd MiB/s", "B/file", "fsck"
	for (i = 1; i <= np; i++) {
		p = order[i]
		printf "  %-18s %10s %10s %10s %10s %11s %11s %10s %14s\n", names[p], cell(p, "create", "%.0f"),
		       cell(p, "stat", "%.0f"), cell(p, "read", "%.0f"), cell(p, "rm", "%.0f"),
		       cell(p, "seq-write", "%.1f"), cell(p, "seq-read", "%.1f"), cell(p, "bpf", "%.1f"),
		       (p in fsck) ? fsck[p] : "-"
	}
	for (i = 1; i <= np; i++) {
		q = order[i]
		if (q == "r4" || !("r4" in seen)) continue
		printf "\nratios r4fuse / %s (> 1: r4fuse faster; B/file > 1: r4fuse uses more):\n", names[q]
		printf "  create %s, stat %s, read %s, rm %s, seq write %s, seq read %s, B/file %s\n",
		       ratio("create", q), ratio("stat", q), ratio("read", q), ratio("rm", q),
		       ratio("seq-write", q), ratio("seq-read", q), ratio("bpf", q)
	}
	if ("r4" in seen) {
		printf "\nr4fuse bytes per file: %s after the remount (statvfs), %s before the unmount",
		       cell("r4", "bpf", "%.1f"), cell("r4", "bpf-hot", "%.1f")
		if ("r4" in img && ("r4", 1) in before)
			printf ", %.1f from the image (r4 info, first run)", (img["r4"] - before["r4", 1]) / n
		printf "\n"
	}
	if (ns) printf "\ndaemon system calls (strace -c -f, untimed pass), per file (create) or per MiB (write),\n" \
		       "at least 0.05:\n"
	for (i = 1; i <= ns; i++) { split(sorder[i], a, " "); printf "  %-18s %-6s%s\n", names[a[1]], a[2], sc[sorder[i]] }
	printf "\nmounts (/proc/mounts: source, type, options):\n"
	for (i = 1; i <= np; i++) printf "  %-18s %s\n", names[order[i]], mnt[order[i]]
	printf "\nraw lines:%s\n", raw
}' "$LOG"
exit $status
