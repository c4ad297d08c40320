#!/usr/bin/env bash
# bench/age.sh - aging benchmark of the repacker (issue 24 item 4): the same
# seeded aging workload on r4 (through r4fuse) and on ext4, then cold reads
# of three states of the same tree, side by side.  `make bench-age` runs it:
#   bash bench/age.sh                 (default size: a few minutes)
#   R4_AGE_FULL=1 bash bench/age.sh   (1,200 MiB live on the 2 GiB image)
#
# The workload is bench/age.c (its header describes it): ROUNDS rounds of
# OPS creates, appends, overwrites and deletes over DIRS directories and
# one large directory (big/), filling to MIB MiB of live data and then
# churning around it, a sync (fsync of the root, then syncfs) every 50
# operations.  Deterministic for a
# seed: both file systems get the same calls and end with the same tree
# (checked: a digest of names, sizes and bytes).
#
# Per file system (2 GiB each, images under R4_BENCH_DIR):
#   r4:   `r4 mkfs IMG 2G`, `r4fuse IMG MNT -f -o commit=86400` (commits
#         only at the workload's fsyncs: the same image for a seed), the
#         workload.
#   ext4: `mkfs.ext4 -q -F` on a 2 GiB file, `mount -o loop` (fuse2fs when
#         the loop mount fails: then no e4defrag), the workload.
# Three states of the same tree, each its own image:
#   fresh:    a new image, the aged tree copied in once (tar from the aged
#             mount, read-only, into the new one: written in walk order);
#   aged:     the image the workload left;
#   repacked: a copy of the aged image, then r4: `r4 repack $R4_AGE_REPACK
#             IMG` (unmounted; default --compact);
#             ext4: `e4defrag MNT` on the mount.
# Then, R4_AGE_REPS times (default 3), states and file systems taking turns,
# each read on a freshly mounted image (read-only) after `sync` and
# `echo 3 > /proc/sys/vm/drop_caches` (said when not permitted):
#   (a) tree: `tar -cf - . | cat >/dev/null` at the root (a walk in readdir
#       order; through cat because GNU tar skips reading for /dev/null);
#   (b) big:  the same for big/ alone.
# Reported: the median seconds and MiB/s of each read, the read requests
# the disk under R4_BENCH_DIR served during it (/proc/diskstats: a figure of
# the layout that other load on the machine does not move), the ratios
# repacked/fresh and aged/fresh (> 1: slower than fresh) and r4/ext4;
# measurefs.reiser4 -D -T and `r4 frag` (packing, seeks per MiB) for each
# r4 state; `e4defrag -c` scores for ext4; fsck.reiser4 --check and e2fsck
# -fn of every image.  Nothing here passes or fails on time; the exit status
# is non-zero when a step breaks (an error, a tree that differs, an
# inconsistent image).  Mounts, daemons and loop devices this script made
# are undone on exit, failure or Ctrl-C.
#
# Environment: R4_AGE_SEED (default: the clock; printed), R4_AGE_ROUNDS
# (12), R4_AGE_OPS (operations per round, 600), R4_AGE_MIB (live data, 160),
# R4_AGE_DIRS (40), R4_AGE_SIZE (image size, 2G), R4_AGE_REPS (3),
# R4_AGE_REPACK (r4 repack's options, --compact; "" for one plain pass),
# R4_AGE_FULL=1 (OPS 4000, MIB 1200), R4_AGE_PEERS ("r4 ext4"),
# R4_BENCH_DIR (where images live, default /tmp: on a disk, not tmpfs, or
# dropping the page cache means nothing), R4_AGE_KEEP=1 (keep the images
# and say where, to look at them afterwards).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FULL=${R4_AGE_FULL:-0}
SEED=${R4_AGE_SEED:-$(date +%s)}
ROUNDS=${R4_AGE_ROUNDS:-12}
OPS=${R4_AGE_OPS:-$( ((FULL)) && echo 4000 || echo 600)}
MIB=${R4_AGE_MIB:-$( ((FULL)) && echo 1200 || echo 160)}
DIRS=${R4_AGE_DIRS:-40}
SIZE=${R4_AGE_SIZE:-2G}
REPS=${R4_AGE_REPS:-3}
PEERS=${R4_AGE_PEERS:-r4 ext4}
BDIR=${R4_BENCH_DIR:-/tmp}
CC=${CC:-cc}
B=build/bench
STATES="fresh aged repacked"
REPACK=${R4_AGE_REPACK---compact}

if [[ $(id -u) != 0 ]]; then
	echo "bench age: needs root (mounts, drop_caches)"
	exit 0
fi
if [[ ! -c /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
	echo "bench age: /dev/fuse or fusermount3 missing: no r4fuse"
	exit 0
fi
make -s all
mkdir -p "$B"
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror bench/age.c -lm -o "$B/age"

TMP=$(mktemp -d "$BDIR/r4age.XXXXXX")
MNT=$TMP/mnt
MNT2=$TMP/mnt2
mkdir -p "$MNT" "$MNT2"
LOG=$TMP/log
declare -A DPID=()	# mount point -> FUSE daemon's pid
status=0

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local m img dev
	for m in "$MNT" "$MNT2"; do
		if mountpoint -q "$m"; then
			fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null ||
				umount -l "$m" 2>/dev/null || true
		fi
		if [[ -n ${DPID[$m]:-} ]]; then
			for _ in $(seq 1 100); do
				kill -0 "${DPID[$m]}" 2>/dev/null || break
				sleep 0.1
			done
			kill "${DPID[$m]}" 2>/dev/null || true
		fi
	done
	# loop devices still over our images (ours only: losetup -j IMAGE)
	for img in "$TMP"/*.img; do
		[[ -e $img ]] || continue
		for dev in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
			losetup -d "$dev" 2>/dev/null || true
		done
	done
	if [[ -n ${R4_AGE_KEEP:-} ]]; then
		echo "bench age: images kept in $TMP"
	else
		rm -rf --one-file-system "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "bench age: $*"; }
log() { echo "$*" >>"$LOG"; }

commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -srm), commit $commit"
say "seed $SEED: $ROUNDS rounds x $OPS ops, $MIB MiB live, $DIRS dirs + big/, $SIZE images," \
	"$REPS cold reads per state; peers: $PEERS; images in $BDIR"

DROP=1
if ! { sync && echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
	DROP=0
	say "echo 3 > /proc/sys/vm/drop_caches not permitted: reads are NOT cold (host cache kept)"
fi
drop() { sync; ((DROP)) && echo 3 >/proc/sys/vm/drop_caches; return 0; }

EXT4_LOOP=1
have_fuse2fs=$(command -v fuse2fs || true)

# mkimg PEER IMG: a new, empty file system.
mkimg() {
	rm -f "$2"
	case $1 in
	r4) build/r4 mkfs "$2" "$SIZE" >/dev/null ;;
	ext4) truncate -s "$SIZE" "$2" && mkfs.ext4 -q -F "$2" >/dev/null ;;
	esac
}

# mnt PEER IMG DIR [ro|age]: mount; for FUSE the daemon runs in the
# foreground so that its end can be waited for after the unmount.  r4fuse
# ages with commit=86400: the workload's fsyncs commit, not the clock, so
# the aged image is the same for a seed.
mnt() {
	local p=$1 img=$2 d=$3 ro=${4:-} cmd
	[[ $ro == age ]] && ro=
	case $p in
	r4) cmd=(build/r4fuse "$img" "$d" -f -o "${ro:+ro,}commit=$([[ ${4:-} == age ]] && echo 86400 || echo 5)") ;;
	ext4)
		if ((EXT4_LOOP)); then
			mount -t ext4 -o "loop${ro:+,ro}" "$img" "$d" && return 0
			[[ -z $have_fuse2fs ]] && { say "mount -o loop failed and no fuse2fs"; return 1; }
			say "mount -o loop failed: ext4 through fuse2fs from here on (no e4defrag)"
			EXT4_LOOP=0
		fi
		cmd=(fuse2fs "$img" "$d" -f ${ro:+-o ro})
		;;
	esac
	"${cmd[@]}" >>"$TMP/daemon.log" 2>&1 &
	DPID[$d]=$!
	for _ in $(seq 1 200); do
		mountpoint -q "$d" && return 0
		if ! kill -0 "${DPID[$d]}" 2>/dev/null; then
			wait "${DPID[$d]}" || true
			DPID[$d]=
			say "$p did not mount $img:"
			tail -5 "$TMP/daemon.log" | sed 's/^/  /'
			return 1
		fi
		sleep 0.05
	done
	say "$p: no mount after 10 s"
	return 1
}

# umnt DIR: unmount, wait for the daemon (r4fuse commits and closes then).
umnt() {
	local d=$1 rc=0
	if [[ -n ${DPID[$d]:-} ]]; then
		fusermount3 -u "$d" || { say "fusermount3 -u $d failed"; status=1; }
		wait "${DPID[$d]}" || rc=$?
		DPID[$d]=
		((rc == 0)) || { say "daemon exited with $rc after the unmount"; status=1; }
	else
		umount "$d" || { say "umount $d failed"; status=1; }
	fi
}

# digest DIR: names, types, file sizes and bytes of the tree under DIR
# (ext4's lost+found left out).
digest() {
	(cd "$1" && {
		find . -path ./lost+found -prune -o \( -type f -printf '%p f %s\n' \) -o -printf '%p %y\n' |
			LC_ALL=C sort
		find . -path ./lost+found -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r cat
	} | md5sum | cut -c1-16)
}

# secs CMD...: run CMD (its output to $TMP/out), print its wall time in seconds.
secs() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >"$TMP/out"
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000))" | awk '{ printf "%.3f", $1 / 1000 }'
}
# shellcheck disable=SC2317 # run through secs
tarcat() { (cd "$1" && tar -cf - . | cat >/dev/null); }

# The disk under the images, as /proc/diskstats names it (empty when it is
# not there: a tmpfs, a device mapper name we do not follow).
DISK=$(basename "$(findmnt -no SOURCE -T "$BDIR" 2>/dev/null || true)")
awk -v d="$DISK" '$3 == d { f = 1 } END { exit !f }' /proc/diskstats 2>/dev/null || DISK=
# reqs: read requests the disk has completed so far (field 4), 0 without DISK.
reqs() { [[ -n $DISK ]] && awk -v d="$DISK" '$3 == d { print $4 }' /proc/diskstats || echo 0; }

# layout PEER STATE IMG: fragmentation figures into the log (unmounted).
layout() {
	local p=$1 s=$2 img=$3 m
	case $p in
	r4)
		log "frag $s $(build/r4 frag --json "$img")"
		log "fragbig $s $(build/r4 frag --json "$img" /big)"
		if command -v measurefs.reiser4 >/dev/null; then
			m=$(measurefs.reiser4 -y -D -T "$img" 2>&1 | awk '/^Data fragmentation is:/ { d = $NF }
				/^Tree fragmentation:/ { t = $NF } END { printf "D=%s T=%s", d, t }')
			log "measurefs $s $m"
		fi
		;;
	ext4)
		if ((EXT4_LOOP)) && mnt ext4 "$img" "$MNT" ro; then
			log "e4defrag $s $(e4defrag -c "$MNT" 2>&1 | awk '/Fragmentation score/ { print "score=" $NF }
				/Total\/best extents/ { print "extents=" $NF }' | paste -sd' ')"
			log "e4defragbig $s $(e4defrag -c "$MNT/big" 2>&1 | awk '/Fragmentation score/ { print "score=" $NF }' | paste -sd' ')"
			umnt "$MNT"
		fi
		;;
	esac
}

# check PEER IMG: fsck of an unmounted image.
check() {
	local out=$TMP/fsck.out
	case $1 in
	r4)
		if ! command -v fsck.reiser4 >/dev/null; then
			log "fsck r4 $(basename "$2") not-run"
		elif fsck.reiser4 --check -y "$2" >"$out" 2>&1 && grep -q 'FS is consistent' "$out"; then
			log "fsck r4 $(basename "$2") consistent"
		else
			log "fsck r4 $(basename "$2") INCONSISTENT"
			status=1
			grep -v '^ *$' "$out" | tail -10 | sed 's/^/  fsck: /'
		fi
		;;
	ext4)
		if e2fsck -fn "$2" >"$out" 2>&1; then
			log "fsck ext4 $(basename "$2") clean"
		else
			log "fsck ext4 $(basename "$2") ERRORS"
			status=1
			tail -10 "$out" | sed 's/^/  e2fsck: /'
		fi
		;;
	esac
}

# ---- aging, fresh copy, repack ----
for p in $PEERS; do
	case $p in r4 | ext4) ;; *) say "unknown peer '$p'" && exit 2 ;; esac
	aged=$TMP/$p-aged.img fresh=$TMP/$p-fresh.img rep=$TMP/$p-repacked.img
	mkimg "$p" "$aged"
	mnt "$p" "$aged" "$MNT" age
	t=$(secs "$B/age" "$MNT" "$SEED" "$ROUNDS" "$OPS" "$MIB" "$DIRS")
	umnt "$MNT"
	log "workload $p $(cat "$TMP/out")"
	mnt "$p" "$aged" "$MNT" ro
	d_aged=$(digest "$MNT")
	mkimg "$p" "$fresh"
	mnt "$p" "$fresh" "$MNT2"
	tc=$(secs sh -c "cd '$MNT' && tar -cf - . | (cd '$MNT2' && tar -xpf -)")
	umnt "$MNT2"
	umnt "$MNT"
	log "aging $p seconds=$t copy_seconds=$tc digest=$d_aged"
	say "$p: aged in ${t}s, fresh copy in ${tc}s, tree digest $d_aged"
	cp --sparse=always "$aged" "$rep"
	case $p in
	r4)
		t=$(date +%s%N)
		# shellcheck disable=SC2086
		build/r4 repack $REPACK "$rep" >"$TMP/repack.out" 2>&1 || { say "r4 repack failed:"; status=1; }
		t=$((($(date +%s%N) - t) / 1000000))
		sed 's/^/  r4 repack: /' "$TMP/repack.out"
		log "repack $p ms=$t"
		;;
	ext4)
		if ((EXT4_LOOP)); then
			mnt ext4 "$rep" "$MNT"
			t=$(date +%s%N)
			e4defrag "$MNT" >"$TMP/repack.out" 2>&1 || { say "e4defrag failed:"; status=1; }
			t=$((($(date +%s%N) - t) / 1000000))
			grep -E 'Success|Failure' "$TMP/repack.out" | sed 's/^/  e4defrag: /'
			umnt "$MNT"
			log "repack $p ms=$t"
		else
			say "no loop mount: ext4 'repacked' is the aged image, e4defrag not run"
		fi
		;;
	esac
	for s in $STATES; do
		img=$TMP/$p-$s.img
		d=$d_aged
		if [[ $s != aged ]]; then
			mnt "$p" "$img" "$MNT" ro
			d=$(digest "$MNT")
			umnt "$MNT"
		fi
		if [[ $d != "$d_aged" ]]; then
			say "$p $s: the tree differs from the aged one ($d against $d_aged)"
			status=1
		fi
		log "digest $p $s $d"
		layout "$p" "$s" "$img"
		check "$p" "$img"
	done
done
dig=$(awk '$1 == "aging" { sub(".*digest=", ""); print }' "$LOG" | sort -u | wc -l)
if ((dig > 1)); then
	say "r4 and ext4 ended with different trees for the same seed"
	status=1
fi

# ---- cold reads: reps x states x peers, each on a fresh mount ----
for rep in $(seq 1 "$REPS"); do
	for s in $STATES; do
		for p in $PEERS; do
			for what in tree big; do
				drop
				mnt "$p" "$TMP/$p-$s.img" "$MNT" ro
				r=$(reqs)
				if [[ $what == tree ]]; then
					t=$(secs tarcat "$MNT")
				else
					t=$(secs tarcat "$MNT/big")
				fi
				r=$(($(reqs) - r))
				umnt "$MNT"
				log "read $p $s $what $rep $t $r"
			done
		done
	done
done
for p in $PEERS; do
	mnt "$p" "$TMP/$p-fresh.img" "$MNT" ro
	log "size $p tree $(du -sm --apparent-size "$MNT" | cut -f1) big $(du -sm --apparent-size "$MNT/big" | cut -f1)"
	umnt "$MNT"
done

# ---- the tables ----
awk -v reps="$REPS" -v drop="$DROP" '
function kv(s, k) { return match(s, k "=[^ ,}]*") ? substr(s, RSTART + length(k) + 1, RLENGTH - length(k) - 1) : "-" }
function js(s, k) { return match(s, "\"" k "\": [^,}]*") ? substr(s, RSTART + length(k) + 4, RLENGTH - length(k) - 4) : "-" }
function med(k,   a, i, j, t, n) {
	n = cnt[k]
	if (!n) return ""
	for (i = 1; i <= n; i++) a[i] = val[k, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((n + 1) / 2)]
}
function r(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
$1 == "read" { k = $2 " " $3 " " $4; val[k, ++cnt[k]] = $6; peers[$2] = 1
	if ($7 != "" && $7 > 0) { k = k " reqs"; val[k, ++cnt[k]] = $7 }
	next }
$1 == "size" { mib[$2, "tree"] = $4; mib[$2, "big"] = $6; next }
$1 == "frag" || $1 == "fragbig" { fr[$1, $2] = $0; next }
$1 == "measurefs" { mf[$2] = $0; next }
$1 == "e4defrag" || $1 == "e4defragbig" { e4[$1, $2] = kv($0, "score"); ex[$1, $2] = kv($0, "extents"); next }
$1 == "fsck" { fsck[$2] = fsck[$2] " " $4; next }
$1 == "repack" { rp[$2] = kv($0, "ms") / 1000; next }
$1 == "workload" { wl[$2] = substr($0, length($1 " " $2 " ") + 1); next }
$1 == "aging" { ag[$2] = kv($0, "seconds"); cp[$2] = kv($0, "copy_seconds"); next }
END {
	ns = split("fresh aged repacked", S, " ")
	np = 0; if ("r4" in peers) P[++np] = "r4"; if ("ext4" in peers) P[++np] = "ext4"
	printf "\ncold reads (%s), median of %s, seconds (MiB/s):\n", drop ? "page cache dropped before each" : "page cache NOT dropped", reps
	printf "  %-5s %-9s %16s %16s\n", "fs", "state", "tree", "big/"
	for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++) {
		p = P[i]; s = S[j]; a = med(p " " s " tree"); b = med(p " " s " big")
		printf "  %-5s %-9s %16s %16s\n", p, s,
		       a == "" ? "-" : sprintf("%.2f (%.0f)", a, mib[p, "tree"] / a),
		       b == "" ? "-" : sprintf("%.2f (%.0f)", b, mib[p, "big"] / b)
	}
	printf "  (tree: r4 %s MiB, ext4 %s MiB; big/: %s MiB)\n", mib["r4", "tree"], mib["ext4", "tree"], mib["r4", "big"]
	if (med(P[1] " fresh tree reqs") != "") {
		printf "\nread requests the disk served (median; other CPU load does not move it, other disk I/O does):\n"
		printf "  %-5s %-9s %10s %10s\n", "fs", "state", "tree", "big/"
		for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++)
			printf "  %-5s %-9s %10s %10s\n", P[i], S[j], med(P[i] " " S[j] " tree reqs"), med(P[i] " " S[j] " big reqs")
	}
	printf "\nratios of read times (> 1: slower):\n"
	printf "  %-22s %8s %8s\n", "", "tree", "big/"
	for (i = 1; i <= np; i++) for (j = 2; j <= ns; j++) {
		p = P[i]; s = S[j]
		printf "  %-22s %8s %8s\n", p " " s "/fresh", r(med(p " " s " tree"), med(p " fresh tree")), r(med(p " " s " big"), med(p " fresh big"))
	}
	if (np == 2) for (j = 1; j <= ns; j++) {
		s = S[j]
		printf "  %-22s %8s %8s\n", "r4/ext4 " s, r(med("r4 " s " tree"), med("ext4 " s " tree")), r(med("r4 " s " big"), med("ext4 " s " big"))
	}
	if ("r4" in peers) {
		printf "\nr4 layout (measurefs.reiser4 -D -T; r4 frag, whole volume):\n"
		printf "  %-9s %10s %10s %8s %8s %7s %9s %8s %9s %10s %10s\n", "state", "data -D", "tree -T", "leaf%", "twig%", "twigs", "seeks/MiB", "extents", "big/ -D", "free runs", "free@end"
		for (j = 1; j <= ns; j++) {
			s = S[j]; f = fr["frag", s]
			printf "  %-9s %10s %10s %8s %8s %7s %9s %8s %9s %10s %9s%%\n", s, kv(mf[s], "D"), kv(mf[s], "T"), js(f, "leaf_fill"), js(f, "twig_fill"),
			       js(f, "twigs"), js(f, "seeks_per_mib"), js(f, "extents"), js(fr["fragbig", s], "data_frag"), js(f, "free_runs"),
			       js(f, "free_blocks") ? sprintf("%.1f", 100 * js(f, "free_at_end") / js(f, "free_blocks")) : "-"
		}
		printf "  r4 repack took %.1f s; fsck.reiser4 --check (fresh aged repacked):%s\n", rp["r4"], fsck["r4"]
	}
	if ("ext4" in peers) {
		printf "\next4 layout (e4defrag -c: fragmentation score, 0-30 no problem, 31-55 a little, 56- needs defrag):\n"
		printf "  %-9s %8s %18s %10s\n", "state", "score", "extents now/best", "big/ score"
		for (j = 1; j <= ns; j++) { s = S[j]; printf "  %-9s %8s %18s %10s\n", s, e4["e4defrag", s], ex["e4defrag", s], e4["e4defragbig", s] }
		printf "  e4defrag took %s s; e2fsck -fn (fresh aged repacked):%s\n", rp["ext4"] == "" ? "-" : rp["ext4"], fsck["ext4"]
	}
	for (i = 1; i <= np; i++) printf "\n%s %s", P[i], wl[P[i]]
	printf "\naging: r4 %s s, ext4 %s s; fresh copy: r4 %s s, ext4 %s s\n", ag["r4"], ag["ext4"], cp["r4"], cp["ext4"]
}' "$LOG"
printf '\nraw lines:\n'
sed 's/^/  /' "$LOG"
exit $status
