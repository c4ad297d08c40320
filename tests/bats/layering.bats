#!/usr/bin/env bats
# make layering (scripts/layering.sh) on a copy of the sources: clean, it
# passes; each planted violation of DESIGN.md section 3 fails it with a
# line that names the layer and the header.  (Violations in different
# layers are planted together: each layer is checked on its own.)

setup_file() {
	command -v bison >/dev/null 2>&1 || return 0
	# one pristine copy, its grammar headers made once; each test plants
	# into a copy of it (cp -a keeps the times, so make makes nothing)
	local repo
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	mkdir -p "$BATS_FILE_TMPDIR/src"
	(cd "$repo" && cp -r Makefile include engine exec parser grammar cli fuse-bridge lib scripts \
		"$BATS_FILE_TMPDIR/src"/)
	make -s -C "$BATS_FILE_TMPDIR/src" B="$BATS_FILE_TMPDIR/build" \
		"$BATS_FILE_TMPDIR/build/grammar/parser.h" "$BATS_FILE_TMPDIR/build/grammar/lexer.h"
}

setup() {
	load helper
	r4_setup
	need_cmd bison
	src=$T/src
	cp -a "$BATS_FILE_TMPDIR/src" "$src"
}

teardown() {
	r4_teardown
}

layering() {
	run make -s -C "$src" B="$BATS_FILE_TMPDIR/build" layering
}

@test "layering: the sources as they are pass" {
	layering
	assert_success
	refute_output --partial 'layering:'
}

@test "layering: a header of another layer by name is not on the path (cli, parser, exec)" {
	echo '#include "db.h"' >>"$src/cli/sh.h"
	echo '#include "tree.h"' >>"$src/parser/ast.h"
	sed -i '1i #include "ns.h"' "$src/exec/exec.c"
	layering
	assert_failure
	assert_output --regexp 'layering: cli/ includes what it may not see: .*db\.h: No such file'
	assert_output --regexp 'layering: parser/ includes what it may not see: .*tree\.h: No such file'
	assert_output --regexp 'layering: exec/ includes what it may not see: .*ns\.h: No such file'
}

@test "layering: by ../ path, the language in the engine, the file layer in the lower half, raw I/O, libnbd" {
	echo '#include "../engine/db.h"' >>"$src/cli/sh.h"
	echo '#include "../engine/obj.h"' >>"$src/fuse-bridge/r4fuse.c"
	echo '#include "../engine/db.h"' >>"$src/lib/r4call.c"
	sed -i '1i #include "../engine/db.h"' "$src/exec/exec.c"
	sed -i '1i #include "r4_lang.h"' "$src/engine/fs.c"
	sed -i '1i #include "obj.h"' "$src/engine/jnl.c"
	echo '#include "ns.h"' >>"$src/engine/tree.h"
	echo 'static void f(int fd) { (void)fsync(fd); }' >>"$src/engine/util.c"
	echo 'static void g(void *h) { nbd_close(h); }' >>"$src/engine/db.c"
	layering
	assert_failure
	assert_line 'layering: cli/ includes engine/db.h'
	assert_line 'layering: fuse-bridge/ includes engine/obj.h'
	assert_line 'layering: lib/ includes engine/db.h'
	assert_line 'layering: exec/ includes engine/db.h'
	assert_line 'layering: engine/ includes include/r4_lang.h'
	assert_line 'layering: engine/jnl.c (lower half) includes engine/obj.h'
	assert_line 'layering: engine/tree.c (lower half) includes engine/ns.h'
	assert_line 'layering: engine/txn.c (lower half) includes engine/ns.h'
	assert_output --partial 'layering: raw I/O outside engine/io_file.c: engine/util.c:'
	assert_output --partial 'layering: libnbd outside engine/io_nbd.c: engine/db.c:'
}
