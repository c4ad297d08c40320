#!/usr/bin/env bats
# make layering (scripts/layering.sh) on a copy of the sources: clean, it
# passes; each planted violation of DESIGN.md section 3 fails it with a
# line that names the layer and the header.

setup() {
	load helper
	r4_setup
	need_cmd bison
	repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	src=$T/src
	mkdir -p "$src"
	(cd "$repo" && cp -r Makefile include engine exec parser grammar cli fuse-bridge scripts "$src"/)
}

teardown() {
	r4_teardown
}

layering() {
	run make -s -C "$src" B="$T/build" layering
}

@test "layering: the sources as they are pass" {
	layering
	assert_success
	refute_output --partial 'layering:'
}

@test "layering: cli/ including an engine header fails, by name or by ../ path" {
	echo '#include "db.h"' >>"$src/cli/sh.h"
	layering
	assert_failure
	assert_output --regexp 'layering: cli/ includes what it may not see: .*db\.h: No such file'
	sed -i '$d' "$src/cli/sh.h"
	echo '#include "../engine/db.h"' >>"$src/cli/sh.h"
	layering
	assert_failure
	assert_line 'layering: cli/ includes engine/db.h'
}

@test "layering: the bridge and the parser may not see the engine's internals" {
	echo '#include "../engine/obj.h"' >>"$src/fuse-bridge/r4fuse.c"
	echo '#include "tree.h"' >>"$src/parser/ast.h"
	layering
	assert_failure
	assert_line 'layering: fuse-bridge/ includes engine/obj.h'
	assert_output --regexp 'layering: parser/ includes what it may not see: .*tree\.h: No such file'
}

@test "layering: the engine may not see the language" {
	sed -i '1i #include "r4_lang.h"' "$src/engine/fs.c"
	layering
	assert_failure
	assert_line 'layering: engine/ includes include/r4_lang.h'
}

@test "layering: the executor may not see the engine's internals, by name or by ../ path" {
	sed -i '1i #include "ns.h"' "$src/exec/exec.c"
	layering
	assert_failure
	assert_output --regexp 'layering: exec/ includes what it may not see: .*ns\.h: No such file'
	sed -i '1d' "$src/exec/exec.c"
	sed -i '1i #include "../engine/db.h"' "$src/exec/exec.c"
	layering
	assert_failure
	assert_line 'layering: exec/ includes engine/db.h'
}

@test "layering: raw I/O outside engine/io_file.c fails" {
	echo 'static void f(int fd) { (void)fsync(fd); }' >>"$src/engine/util.c"
	layering
	assert_failure
	assert_output --partial 'layering: raw I/O outside engine/io_file.c: engine/util.c:'
}

@test "layering: the engine's lower half may not see the file layer" {
	sed -i '1i #include "obj.h"' "$src/engine/jnl.c"
	echo '#include "ns.h"' >>"$src/engine/tree.h"
	layering
	assert_failure
	assert_line 'layering: engine/jnl.c (lower half) includes engine/obj.h'
	assert_line 'layering: engine/tree.c (lower half) includes engine/ns.h'
	assert_line 'layering: engine/txn.c (lower half) includes engine/ns.h'
}
