#!/usr/bin/env bats
# r4fuse_stress: the FUSE bridge under load, on real mounts (root,
# /dev/fuse), unmounted in teardown even when a test fails.
#  - r4fsx (tests/fsx/r4fsx.c): R4_STRESS_OPS random operations on the mount
#    and on a twin directory on tmpfs, every answer compared; then fsck,
#    and the tree again after a remount;
#  - 8 concurrent r4writer processes (tests/fsx/r4writer.c), each on its
#    own files and on shared ones, each checked against its own model;
#  - r4fsx on a volume of compressed files (mkfs.reiser4's default);
#  - 4 r4fsx at once, each in its own directory;
#  - compare-and-swap through the control file from two processes.
# Seeds come from R4_SEED or the clock and are printed (# seed N).
# R4_STRESS_OPS (6,000; make check-long: 100,000) sizes the first r4fsx
# run, the others a quarter of it; R4_STRESS_SECONDS (3; make check-long:
# 15) the writers.
#
# r4fsx's -U (files unlinked while open) and -T (open with O_TRUNC) have
# tests of their own, and so has -L (hard links).

setup() {
	load helper
	r4_setup
	fuse_setup 256M
	FSX=$R4_BUILD/tests/r4fsx
	WRITER=$R4_BUILD/tests/r4writer
	need_file "$FSX" "$FSX not built (make fsx)"
	need_file "$WRITER" "$WRITER not built (make fsx)"
	# the twin lives on tmpfs where there is one
	local base=/dev/shm
	[ -d "$base" ] && [ -w "$base" ] || base=$T
	TW=$(mktemp -d "$base/r4stress.XXXXXX")
	SEED=${R4_SEED:-$(date +%s)}
	OPS=${R4_STRESS_OPS:-6000}
}

teardown() {
	fuse_teardown
	[ -n "${TW:-}" ] && rm -rf "$TW"
	r4_teardown
}

# run_fsx ARGS...: r4fsx on MNT/fsx against TW/fsx, with the seed
run_fsx() {
	echo "# seed $SEED" >&3
	mkdir "$MNT/fsx" "$TW/fsx"
	run "$FSX" -s "$SEED" "$@" "$MNT/fsx" "$TW/fsx"
	assert_success
	echo "# ${lines[${#lines[@]} - 1]}" >&3
}

# the same tree in MNT/fsx and TW/fsx: names, types, sizes, nlink, bytes
same_tree() {
	diff -r "$MNT/fsx" "$TW/fsx"
	local a b
	a=$(cd "$MNT/fsx" && find . \( -type f -printf '%P f %s %n\n' \) -o -printf '%P %y %n\n' | sort)
	b=$(cd "$TW/fsx" && find . \( -type f -printf '%P f %s %n\n' \) -o -printf '%P %y %n\n' | sort)
	[ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") >&2; return 1; }
	"$FSX" -C "$MNT/fsx" "$TW/fsx" >/dev/null
}

@test "r4fsx: ${R4_STRESS_OPS:-6000} random operations agree with a tmpfs twin; fsck clean; same tree after a remount" {
	mount_r4
	run_fsx -U -T -L -n "$OPS"
	umount_r4
	fsck_both "$IMG"
	mount_r4
	same_tree
	umount_r4
}

@test "r4fsx on compressed files (mkfs.reiser4's ccreg40 default): fsck clean" {
	mkfs_reiser4 "$IMG" 256M
	mount_r4
	run_fsx -n $((OPS / 4))
	umount_r4
	fsck_both "$IMG"
}

@test "4 r4fsx at once, each in its own directory with its own twin; fsck clean" {
	local pids=() i bad=0
	echo "# seeds $SEED..$((SEED + 3))" >&3
	mount_r4
	for i in 0 1 2 3; do
		mkdir "$MNT/x$i" "$TW/x$i"
		"$FSX" -n "$((OPS / 4))" -s $((SEED + i)) "$MNT/x$i" "$TW/x$i" >"$T/x$i.log" 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		if ! wait "${pids[$i]}"; then
			bad=1
			cat "$T/x$i.log" >&2
		fi
	done
	[ "$bad" -eq 0 ]
	umount_r4
	fsck_both "$IMG"
}

# check_writers N: every writer's files are what its model says, and the
# shared files hold each writer's part intact
check_writers() {
	local i total=0 out=$TW/out
	for i in $(seq 0 $(($1 - 1))); do
		diff -r "$MNT/w$i" "$out/w$i"
		diff <(cd "$MNT" && find "w$i" -type f -printf '%p %s %n\n' | sort) \
			<(cd "$out" && find "w$i" -type f -printf '%p %s %n\n' | sort)
		cmp "$MNT/shared/cur.$i" "$out/cur.$i"
		cmp <(dd if="$MNT/shared/blocks" bs=65536 skip="$i" count=1 status=none) "$out/blocks.$i"
		cmp <(grep "^w$i " "$MNT/shared/log") "$out/log.$i"
		total=$((total + $(wc -l <"$out/log.$i")))
	done
	run wc -l <"$MNT/shared/log"
	assert_output "$total"
	run grep -c -v -E '^w[0-9]+ [0-9]+ x*$' "$MNT/shared/log"
	assert_output 0
	run stat -c %s "$MNT/shared/blocks"
	assert_output $(($1 * 65536))
	run ls "$MNT/shared"
	assert_output "$(printf '%s\n' blocks $(seq -f 'cur.%g' 0 $(($1 - 1))) log)"
}

@test "8 concurrent writers: own and shared files, renames in one directory; each as its model says, after a remount too" {
	local n=8 secs=${R4_STRESS_SECONDS:-3} pids=() i bad=0 ops=0
	echo "# seed $SEED" >&3
	mount_r4
	mkdir "$MNT/shared" "$TW/out"
	: >"$MNT/shared/log"
	truncate -s $((n * 65536)) "$MNT/shared/blocks"
	for i in $(seq 0 $((n - 1))); do
		"$WRITER" -s "$SEED" -t "$secs" "$i" "$MNT" "$TW/out" >"$T/w$i.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 0 $((n - 1))); do
		if ! wait "${pids[$i]}"; then
			bad=1
			cat "$T/w$i.log" >&2
		fi
	done
	[ "$bad" -eq 0 ]
	for i in $(seq 0 $((n - 1))); do
		ops=$((ops + $(sed -n 's/.*: \([0-9]*\) ops:.*/\1/p' "$T/w$i.log")))
	done
	echo "# $n writers, $secs s: $ops operations" >&3
	check_writers "$n"
	umount_r4
	fsck_both "$IMG"
	mount_r4
	check_writers "$n"
	umount_r4
}

# cas_worker K N: N compare-and-swap increments of /counter through the
# control file, each a read and then a CAS from the value read, retried
# when another process got in between; prints each value it set
cas_worker() {
	local n=0 busy=0 v out
	while [ "$n" -lt "$2" ]; do
		exec 3<>"$MNT/..reiser4"
		printf '%s' /counter >&3
		IFS= read -r v <&3
		exec 3>&-
		exec 3<>"$MNT/..reiser4"
		printf 'tw/[ if /counter eq "%s" then /counter <- "%s" else "busy" ]' "$v" $((v + 1)) >&3
		IFS= read -r out <&3
		exec 3>&-
		if [ "$out" = $((v + 1)) ]; then
			echo "$out"
			n=$((n + 1))
		elif [ "$out" = busy ]; then
			busy=$((busy + 1))
		else
			echo "cas_worker $1: the CAS from '$v' answered '$out'" >&2
			return 1
		fi
	done
	echo "$busy" >"$T/busy.$1"
}

@test "the control file: compare-and-swap increments from two processes never lose or repeat one" {
	local n=300
	"$R4SH" -c '/counter <- "0"' "$IMG" >/dev/null
	mount_r4
	cas_worker 1 "$n" >"$T/cas.1" &
	local p1=$!
	cas_worker 2 "$n" >"$T/cas.2" &
	local p2=$!
	wait "$p1"
	wait "$p2"
	echo "# $((2 * n)) increments, $(cat "$T/busy.1") + $(cat "$T/busy.2") CAS retries" >&3
	run cat "$MNT/counter"
	assert_output $((2 * n))
	run sort -n "$T/cas.1" "$T/cas.2"
	assert_output "$(seq 1 $((2 * n)))"
	umount_r4
	run "$R4SH" -c 'cat /counter' "$IMG"
	assert_output $((2 * n))
	fsck_both "$IMG"
}

# ---- the operation classes r4fsx leaves off by default ----

@test "r4fsx -U: files unlinked while open stay readable and writable" {
	mount_r4
	run_fsx -U -n "$((OPS / 4))"
	umount_r4
}

@test "r4fsx -T: open(O_TRUNC) of an existing file truncates it" {
	mount_r4
	run_fsx -T -n "$((OPS / 4))"
	umount_r4
}

@test "r4fsx -L: hard links see one another's size, nlink and appends" {
	mount_r4
	run_fsx -L -n "$((OPS / 4))"
	umount_r4
}
