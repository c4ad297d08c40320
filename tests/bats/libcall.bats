#!/usr/bin/env bats
# libcall: the reiser4() call for programs (lib/, docs/library.md), as a
# program gets it: `make install` to a prefix, examples/transfer.c built
# with `pkg-config --cflags --libs r4call` against what was installed, and
# examples/transfer.py through ctypes; both move money with a
# compare-and-swap on an image (R4_IMAGE) and on a mount (the current
# directory's), and a stale swap changes nothing and hands back its errno,
# position and message.  (The installed library is the plain build's:
# a sanitizer build's library would need its runtime preloaded.)

setup_file() {
	local repo=${BATS_TEST_DIRNAME%/tests/bats} p=$BATS_FILE_TMPDIR/usr
	make -s -C "$repo" install PREFIX="$p" MOUNT_HELPER_DIR="$BATS_FILE_TMPDIR/sbin" >&2
	PKG_CONFIG_PATH=$p/lib/pkgconfig
	cc -std=c11 -Wall -Wextra -Werror -o "$BATS_FILE_TMPDIR/transfer" \
		"$repo/examples/transfer.c" $(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs r4call)
}

setup() {
	load helper
	r4_setup
	export LD_LIBRARY_PATH=$BATS_FILE_TMPDIR/usr/lib
	unset R4_IMAGE
	C=$BATS_FILE_TMPDIR/transfer
	PY="python3 $BATS_TEST_DIRNAME/../../examples/transfer.py"
	STALE="transfer: status 3 errno 2 (No such file or directory) at 3:11: cannot read '/stale balance': No such file or directory"
}

teardown() {
	fuse_teardown
	r4_teardown
}

# bank IMG: /bank/alice 100, /bank/bob 50 on a fresh image
bank() {
	"$R4" run -c '/..new/(name <- "bank", type <- directory); /bank/(alice <- "100", bob <- "50")' \
		"$1" >/dev/null
}

@test "libcall: make install puts the library, its header, pkg-config file and reiser4(3)" {
	local p=$BATS_FILE_TMPDIR/usr
	assert_file_exists "$p/include/r4call.h"
	assert_file_exists "$p/lib/libr4call.a"
	assert_file_exists "$p/share/man/man3/reiser4.3"
	run readlink "$p/lib/libr4call.so"
	assert_output libr4call.so.1
	run bash -c "objdump -p '$p/lib/libr4call.so.1' | awk '/SONAME/ { print \$2 }'"
	assert_output libr4call.so.1
	# the call and its free, nothing of the engine's
	run bash -c "nm -D --defined-only '$p/lib/libr4call.so.1' | awk '\$2 == \"T\" { print \$3 }'"
	assert_output "$(printf 'reiser4@@R4CALL_1\nreiser4_result_free@@R4CALL_1')"
	run bash -c "nm -g --defined-only '$p/lib/libr4call.a' | awk 'NF == 3 { print \$3 }'"
	assert_output "$(printf 'reiser4\nreiser4_result_free')"
	run bash -c "echo \$(PKG_CONFIG_PATH='$p/lib/pkgconfig' pkg-config --cflags --libs r4call)"
	assert_output "-I$p/include -L$p/lib -lr4call"
}

@test "libcall: on an image (R4_IMAGE), from C and Python: transfers, a stale one refused as data" {
	"$R4" mkfs "$T/a.img" 16M >/dev/null
	bank "$T/a.img"
	export R4_IMAGE=$T/a.img
	run "$C" /bank/alice /bank/bob 40
	assert_success
	assert_output '60 90'
	run $PY /bank/alice /bank/bob 10
	assert_success
	assert_output '50 100'
	# a swap expecting the balances of before: refused, nothing written
	run "$C" /bank/alice /bank/bob 10 100 50
	assert_failure 1
	assert_output "$STALE"
	run $PY /bank/alice /bank/bob 10 60 90
	assert_failure 1
	assert_output "$STALE"
	run "$R4" run -c '/bank/alice + " " + /bank/bob' "$T/a.img"
	assert_output '50 100'
	# an error before anything runs: data too
	run "$C" '/bank/alice +' /bank/bob 10
	assert_failure 1
	assert_output "transfer: status 1 errno 22 (Invalid argument) at 1:14: unexpected ';', expecting an expression"
	R4_IMAGE=$T/none.img run "$C" /bank/alice /bank/bob 10
	assert_failure 1
	assert_output "transfer: status 4 errno 2 (No such file or directory) at 0:0: R4_IMAGE $T/none.img: No such file or directory"
	fsck_both "$T/a.img"
}

@test "libcall: on the mount holding the current directory, from C and Python, as the caller" {
	fuse_setup 64M
	bank "$IMG"
	mount_r4
	cd "$MNT/bank"
	run "$C" /bank/alice /bank/bob 40
	assert_success
	assert_output '60 90'
	# relative paths start at the current directory, which the change above
	# left in place (r4fuse keeps the names a change did not touch)
	run $PY alice bob 10
	assert_success
	assert_output '50 100'
	run "$C" alice bob 10 100 50
	assert_failure 1
	assert_output "$STALE"
	run $PY /bank/alice /bank/bob 10 60 90
	assert_failure 1
	assert_output "$STALE"
	run cat alice bob
	assert_output '50100'
	cd /
	run "$C" /bank/alice /bank/bob 10
	assert_failure 1
	assert_output "transfer: status 4 errno 2 (No such file or directory) at 0:0: R4_IMAGE is not set and no r4 mount holds the current directory"
	# the image is the mount's: the library says who holds it
	R4_IMAGE=$IMG run "$C" /bank/alice /bank/bob 10
	assert_failure 1
	assert_output --regexp "^transfer: status 4 errno 16 \(Device or resource busy\) at 0:0: R4_IMAGE $IMG: in use by r4fuse \(pid [0-9]+\), mounted at $MNT\$"
	umount_r4
	fsck_both "$IMG"
}
