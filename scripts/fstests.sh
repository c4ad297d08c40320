#!/usr/bin/env bash
# fstests.sh - run fstests (xfstests) on r4fuse, as root.
#
#   scripts/fstests.sh [-f FSTESTS] [-d DIR] [-r RESULTS] [-s SIZE]
#                      [-o MOUNT_OPTIONS] [--users] [CHECK_ARGS...]
#
# Builds r4 (make all), makes two fresh sparse images (DIR/test.img,
# DIR/scratch.img) with `r4 mkfs`, attaches a loop device to each, points
# /sbin/mount.fuse.r4 at this build for the run, writes DIR/local.config,
# runs FSTESTS/check with tests/fstests/exclude (CHECK_ARGS, default `-g
# quick`), prints fstests' summary with the counts, checks both volumes
# with `r4 fsck -n`, and leaves nothing mounted or attached.
# docs/conformance.md explains each step and records the results.
#
#   -f FSTESTS   an fstests tree (default $FSTESTS, else ../fstests beside
#                this checkout); built here if it is not yet
#   -d DIR       images, mount points and local.config (default /var/tmp/r4-fstests)
#   -r RESULTS   fstests' RESULT_BASE (default DIR/results)
#   -s SIZE      each image's size (default 1G; K, M, G, T as r4 mkfs takes)
#   -o OPTIONS   mount options for both mounts (default allow_other)
#   --users      add the users and group fstests' permission tests want
#                (fsgqa, fsgqa2, 123456-fsgqa; group fsgqa) if missing
#
# R4_BUILD=build/san mounts with the sanitizer build (make SAN=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

fstests=${FSTESTS:-$(dirname "$repo")/fstests}
dir=/var/tmp/r4-fstests
results=
size=1G
mount_opts=allow_other
users=false
while (($#)); do
	case $1 in
	-f) fstests=$2; shift 2 ;;
	-d) dir=$2; shift 2 ;;
	-r) results=$2; shift 2 ;;
	-s) size=$2; shift 2 ;;
	-o) mount_opts=$2; shift 2 ;;
	--users) users=true; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
(($#)) || set -- -g quick

die() { echo "fstests.sh: $*" >&2; exit 1; }
((EUID == 0)) || die "run it as root (it mounts, and attaches loop devices)"
[[ -x $fstests/check ]] ||
	die "$fstests: no fstests tree (git clone https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git $fstests; docs/conformance.md)"
# (fstests' awk scripts use gawk's functions: with mawk, generic/062 fails
# on "function asort never defined")
awk --version 2>/dev/null | grep -q '^GNU Awk' || die "awk is not GNU awk: apt-get install gawk"
if [[ ! -x $fstests/ltp/fsx ]]; then
	echo "+ make -C $fstests"
	make -C "$fstests" -j"$(nproc)" >/dev/null
fi

build=${R4_BUILD:-build}
case $build in
build) san=() ;;
build/san) san=(SAN=1) ;;
*) die "R4_BUILD=$build: want build or build/san" ;;
esac
commit=$(git -C "$repo" describe --always --dirty)	# (what is built, for the summary)
echo "+ make ${san[*]} all"
make -j"$(nproc)" "${san[@]}" all >/dev/null
r4=$repo/$build/r4
[[ -x $r4 && -L $repo/$build/mount.fuse.r4 ]] || die "$build: no r4 or mount.fuse.r4 after make"

dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
results=$(realpath -m "${results:-$dir/results}")	# (fstests takes a relative one as under its tree)
mkdir -p "$dir/bin" "$dir/test" "$dir/scratch" "$results"

# Undone at exit, whatever happens: the mounts, the daemons, the loop
# devices, the helper.
loops=() helper_old='' helper_made=false test_dev='' scratch_dev=''
unmount() {
	local m
	for m in "$dir/test" "$dir/scratch"; do
		if findmnt -rn --mountpoint "$m" >/dev/null; then umount "$m"; fi
	done
}
cleanup() {
	local l pid
	unmount
	for l in "${loops[@]}"; do
		# umount of a fuseblk mount waits for the daemon's DESTROY;
		# the daemon exits just after
		for pid in $(pgrep -f "mount.fuse.r4 $l " || true); do
			while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		done
		losetup -d "$l"
	done
	if $helper_made; then
		rm -f /sbin/mount.fuse.r4
		[[ -z $helper_old ]] || ln -s "$helper_old" /sbin/mount.fuse.r4
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mount(8) runs /sbin/mount.fuse.r4 for `mount -t fuse.r4`: this build's,
# for the run.
[[ ! -e /sbin/mount.fuse.r4 || -L /sbin/mount.fuse.r4 ]] ||
	die "/sbin/mount.fuse.r4 is a file, not a link: move it away for the run"
if [[ $(readlink -f /sbin/mount.fuse.r4 || true) != "$(readlink -f "$r4")" ]]; then
	helper_old=$(readlink /sbin/mount.fuse.r4 || true)
	helper_made=true
	ln -sfn "$repo/$build/mount.fuse.r4" /sbin/mount.fuse.r4
	echo "+ ln -s $repo/$build/mount.fuse.r4 /sbin/mount.fuse.r4${helper_old:+   (was $helper_old: put back at exit)}"
fi

# The images, and a loop device on each: fstests finds its mounts by
# device (/proc/mounts' source must be TEST_DEV), and r4fuse mounts a block
# device as fuseblk with that device as the source.
for v in test scratch; do
	img=$dir/$v.img
	l=$(losetup -j "$img" | cut -d: -f1)
	[[ -z $l ]] || die "$img is attached to $l already (another run?)"
	rm -f "$img"
	truncate -s "$size" "$img"
	"$r4" mkfs "$img" "$size" --label "fstests-$v" >/dev/null
	l=$(losetup -f --show "$img")
	loops+=("$l")
	printf -v "${v}_dev" %s "$l"
	echo "+ $r4 mkfs $img $size; losetup -f --show $img: $l"
done

# df -T names the type fuseblk.r4; fstests' _fs_type compares it with
# FSTYP=fuse (as it maps fuse.glusterfs to glusterfs).
cat >"$dir/bin/df" <<'EOF'
#!/bin/sh
# fstests' DF_PROG (scripts/fstests.sh): df, with type fuse for fuse(blk).r4
df "$@" | sed -E 's/^([^ ]+ +)fuse(blk)?\.r4( |$)/\1fuse\3/'
EOF
# check wipes the scratch device before each test (wipefs -a knows
# Reiser4's magic); FSTYP=fuse has no mkfs, so make a fresh volume there.
cat >"$dir/bin/wipefs" <<EOF
#!/bin/sh
# fstests' WIPEFS_PROG (scripts/fstests.sh): a fresh r4 volume on SCRATCH_DEV
# before each test, instead of wiping it
[ "\$1" = -a ] && [ "\$2" = "$scratch_dev" ] || exit 0
exec "$r4" mkfs -f "$scratch_dev" "$size" --label fstests-scratch >/dev/null
EOF
chmod +x "$dir/bin/df" "$dir/bin/wipefs"

cat >"$dir/local.config" <<EOF
# fstests on r4fuse, written by scripts/fstests.sh (docs/conformance.md)
export FSTYP=fuse
export FUSE_SUBTYP=.r4
export TEST_DEV=$test_dev
export TEST_DIR=$dir/test
export SCRATCH_DEV=$scratch_dev
export SCRATCH_MNT=$dir/scratch
export FUSE_MOUNT_OPTIONS="-o $mount_opts"
export DF_PROG="$dir/bin/df -T -P"
export WIPEFS_PROG=$dir/bin/wipefs
export RESULT_BASE=$results
EOF
echo "+ $dir/local.config:"
sed 's/^/    /' "$dir/local.config"

if $users; then
	for u in fsgqa fsgqa2 123456-fsgqa; do
		id "$u" >/dev/null 2>&1 && continue
		g=()
		if getent group "$u" >/dev/null; then g=(-g "$u"); fi
		useradd -m "${g[@]}" "$u" || echo "fstests.sh: no user $u: its tests will not run" >&2
	done
	getent group fsgqa >/dev/null || groupadd fsgqa
fi

echo "+ cd $fstests; HOST_OPTIONS=$dir/local.config ./check -E $repo/tests/fstests/exclude $*"
start=$(date +%s)
logged=0
if [[ -f $results/check.log ]]; then logged=$(wc -l <"$results/check.log"); fi
rc=0
# kill -TERM $(cat DIR/check.pid) stops it early, with the summary
(cd "$fstests" && echo $BASHPID >"$dir/check.pid" &&
	HOST_OPTIONS=$dir/local.config exec ./check -E "$repo/tests/fstests/exclude" "$@") |
	tee "$results/check.out" || rc=$?
secs=$(($(date +%s) - start))

# check leaves TEST_DIR mounted: unmount both, then both volumes must pass
# fsck (fstests checks nothing for FSTYP=fuse).
unmount
echo
echo "== summary ($(date -u +%F), r4 $commit, $((secs / 60)) min $((secs % 60)) s)"
# check.log has this run's summary after the lines it had (stdout lacks
# it when check is stopped).  Its Ran: counts the tests that began, also
# those that found they cannot run here (Not run:); the excluded ones say
# [expunged] on stdout.
tail -n +$((logged + 1)) "$results/check.log" >"$results/summary" 2>/dev/null || true
words() { sed -n "s/^$1: //p" "$results/summary" | wc -w; }
ran=$(words Ran) notrun=$(words 'Not run') failed=$(words Failures)
excluded=$(grep -c '\[expunged\]$' "$results/check.out" || true)
if grep -q '^Interrupted' "$results/summary"; then
	# the last test that began did not end
	echo "stopped during $(awk '/^Ran:/ { print $NF }' "$results/summary")"
	ran=$((ran - 1))
fi
echo "ran $ran: passed $((ran - failed - notrun)), failed $failed, not run $notrun; excluded $excluded"
grep '^Failures:' "$results/summary" || true
for l in "${loops[@]}"; do
	"$r4" fsck -n "$l" 2>&1 | tail -1 || true
done
exit "$rc"
