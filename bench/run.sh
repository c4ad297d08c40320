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
# Environment: R4_BENCH_SMALL (file counts, default "10000 200000"),
# R4_BENCH_BIG_MIB (default 1024, 0 = skip), R4_BENCH_REPS (runs of each
# workload, default 3; the table shows the run with the median write time).
# Images live in a temporary directory under /tmp, removed at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SMALL=${R4_BENCH_SMALL:-10000 200000}
BIG_MIB=${R4_BENCH_BIG_MIB:-1024}
REPS=${R4_BENCH_REPS:-3}
CC=${CC:-cc}
B=build/bench

make -s all
mkdir -p "$B"
UUID_LIBS=$(pkg-config --libs uuid 2>/dev/null || echo -luuid)
# shellcheck disable=SC2086 # UUID_LIBS is a list of flags
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iengine bench/scale.c build/libr4engine.a \
	$UUID_LIBS -o "$B/scale"
PEER=1
if [[ -f /usr/include/reiser4/libreiser4.h ]] && command -v mkfs.reiser4 >/dev/null; then
	$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wno-unused-parameter \
		bench/scale_peer.c -lreiser4 -laal -o "$B/scale_peer"
else
	echo "bench: libreiser4-dev or mkfs.reiser4 missing: no peer columns (scripts/deps.sh installs them)"
	PEER=0
fi
FSCK=$(command -v fsck.reiser4 || true)

TMP=$(mktemp -d /tmp/r4bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
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
exit $status
