# r4 - userspace Reiser4.  `make` builds the programs, `make check` builds an
# ASan+UBSan variant and runs every test, `make bench` runs the benchmarks
# (`make bench-age` the aging one, bench/age.sh).
# SAN=1 selects the sanitizer build (objects under build/san/).

CC      ?= cc
CFLAGS_WARN = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror
# Copies and fills of a known size (a struct assignment: an inode is 352
# bytes) call glibc's memcpy and memset, not GCC's inline rep movs/stos,
# whose start-up costs more than the copy: 8% of an atomic script's CPU
# (bench/RESULTS.md, "fifth increment").  x86 GCC's flag; else nothing.
STRINGOP := $(shell $(CC) -mstringop-strategy=libcall -E -x c /dev/null >/dev/null 2>&1 && \
	      echo -mstringop-strategy=libcall)
OPT     ?= -O2 -g $(STRINGOP)
ifeq ($(SAN),1)
  B       = build/san
  SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  # the invariants that walk whole structures (R4_INVARIANT, r4_int.h)
  OPT     = -O1 -g -DR4_CHECK_INVARIANTS
else
  B       = build
  SANFLAGS =
endif
# Position-independent, for the engine and the front end go into libr4call.so
# too (lib/); the linker relaxes what the programs do not need, and without
# interposition the compiler inlines as it would for them.
PIC = -fPIC -fno-semantic-interposition
CFLAGS_ALL = $(CFLAGS_WARN) $(OPT) $(PIC) $(SANFLAGS) -MMD -MP $(CFLAGS)
# Each layer sees the public headers (include/) and its own folder, no more:
# the compiler keeps programs and the parser off the engine's internals.
# Unit tests see everything they test.
ENGINE_INC = -Iinclude -Iengine
# the executor (exec/) runs plans on the public fs/ns API alone (DESIGN.md 3)
EXEC_INC   = -Iinclude -Iexec
PARSE_INC  = -Iinclude -Iparser -Igrammar -I$(B)/grammar
CLI_INC    = -Iinclude -Icli
UNIT_INC   = -Iinclude -Iengine -Iparser -Itests/unit
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
UUID_LIBS = $(shell pkg-config --libs uuid 2>/dev/null || echo -luuid)
# ccreg40's compressors, the libraries whose formats the kernel writes
ZIP_LIBS = $(shell pkg-config --libs lzo2 zlib libzstd 2>/dev/null || echo -llzo2 -lz -lzstd)
# where a volume is: a partition table (libblkid); an NBD export's libnbd is
# loaded at run time, by engine/io_nbd.c, the first time one is opened
VOLUME_LIBS = $(shell pkg-config --libs blkid 2>/dev/null || echo -lblkid)
ENGINE_LIBS = $(UUID_LIBS) $(ZIP_LIBS) $(VOLUME_LIBS)

ENGINE_SRC = $(sort $(wildcard engine/*.c exec/*.c))
ENGINE_OBJ = $(ENGINE_SRC:%.c=$(B)/%.o)
PARSE_SRC  = $(sort $(wildcard parser/*.c))
PARSE_OBJ  = $(PARSE_SRC:%.c=$(B)/%.o) $(B)/grammar/parser.o $(B)/grammar/lexer.o
CLI_SRC    = $(sort $(wildcard cli/*.c))
CLI_OBJ    = $(CLI_SRC:%.c=$(B)/%.o)
UNIT_SRC   = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   = $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
UNIT_LIB_SRC = $(filter-out $(UNIT_SRC),$(sort $(wildcard tests/unit/*.c)))
UNIT_LIB_OBJ = $(UNIT_LIB_SRC:%.c=$(B)/%.o)
INTEROP_SRC = $(sort $(wildcard tests/interop/*.c))
INTEROP_BIN = $(INTEROP_SRC:tests/interop/%.c=$(B)/tests/%)
LIB_SRC    = $(sort $(wildcard lib/*.c))
LIB_OBJ    = $(LIB_SRC:%.c=$(B)/%.o)
R4CALL_SO = libr4call.so.1
R4CALL_LIBS = $(B)/$(R4CALL_SO) $(B)/libr4call.so $(B)/libr4call.a
FSX_SRC    = $(sort $(wildcard tests/fsx/*.c))
FSX_BIN    = $(FSX_SRC:tests/fsx/%.c=$(B)/tests/%)

# the release (include/r4.h's R4_VERSION), for r4call.pc
VERSION = $(shell sed -n 's/^\#define R4_VERSION "\(.*\)"/\1/p' include/r4.h)
PROGS = $(B)/r4 $(B)/r4sh $(B)/r4fuse $(B)/mount.fuse.r4
EDIT_LIBS = $(shell pkg-config --libs libedit 2>/dev/null || echo -ledit)
# JSON output of r4sh --json, r4 frag --json (jansson: UTF-8 checked, escaping
# right, where our own printer read bytes as Latin-1)
JSON_LIBS = $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3 2>/dev/null || echo -I/usr/include/fuse3)
FUSE_LIBS = $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3 -lpthread)
FUSE_SRC = $(sort $(wildcard fuse-bridge/*.c))
FUSE_OBJ = $(FUSE_SRC:%.c=$(B)/%.o)

# The compiler and flags the objects were built with: when they change (a
# new flag in this file, CFLAGS=...), every object is built again.
$(B)/cflags: FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(CFLAGS_ALL)' | cmp -s - $@ || echo '$(CC) $(CFLAGS_ALL)' >$@
FORCE:

.PHONY: FORCE all check check-long test unit interop fsx clean layering bench bench-age fuzz fuzz-build \
	install uninstall
all: $(PROGS) $(B)/libr4parse.a $(R4CALL_LIBS) layering

$(B)/libr4engine.a: $(ENGINE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/engine/%.o: engine/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(ENGINE_INC) -c -o $@ $<
$(B)/exec/%.o: exec/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(EXEC_INC) -c -o $@ $<
$(B)/cli/%.o: cli/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(CLI_INC) -c -o $@ $<
$(B)/tests/unit/%.o: tests/unit/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(UNIT_INC) -c -o $@ $<
$(B)/tests/fsx/%.o: tests/fsx/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

# The language front end: grammar/ is generated into $(B)/grammar and built,
# with parser/, into libr4parse.a.  Bison fails the build on any conflict.
BISON ?= bison
FLEX  ?= flex
BISONFLAGS = -Wall -Werror -Wcounterexamples
$(B)/grammar/parser.c $(B)/grammar/parser.h &: grammar/parser.y
	@mkdir -p $(@D)
	$(BISON) $(BISONFLAGS) --header=$(B)/grammar/parser.h -o $(B)/grammar/parser.c $<
$(B)/grammar/lexer.c $(B)/grammar/lexer.h &: grammar/lexer.l $(B)/grammar/parser.h
	@mkdir -p $(@D)
	$(FLEX) --header-file=$(B)/grammar/lexer.h -o $(B)/grammar/lexer.c $<
# generated code: our flags, minus what flex's and bison's output trips
GEN_CFLAGS = $(filter-out -Wmissing-prototypes,$(CFLAGS_ALL)) -Wno-unused-function \
	-Wno-sign-compare -Wno-unused-parameter
$(B)/grammar/%.o: $(B)/grammar/%.c $(B)/cflags
	$(CC) $(GEN_CFLAGS) $(PARSE_INC) -c -o $@ $<
$(B)/parser/%.o: parser/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(PARSE_INC) -c -o $@ $<
# only parse.c includes the generated headers (-MMD cannot know them first)
$(B)/parser/parse.o: $(B)/grammar/parser.h $(B)/grammar/lexer.h
$(B)/libr4parse.a: $(PARSE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/fuse-bridge/%.o: fuse-bridge/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iinclude $(FUSE_CFLAGS) -c -o $@ $<
$(B)/r4: $(CLI_OBJ) $(FUSE_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(ENGINE_LIBS) $(EDIT_LIBS) $(FUSE_LIBS) $(JSON_LIBS)
# r4sh and r4fuse are r4 under other names (cli/r4.c looks at argv[0])
$(B)/r4sh $(B)/r4fuse $(B)/mount.fuse.r4: $(B)/r4
	ln -sf r4 $@

# libr4call (lib/, docs/library.md): the reiser4() call for programs, over
# the engine and the front end.  Both libraries show the call and its free
# alone: the shared one by its version script, the static one by being one
# object whose other symbols are made local, so neither lends the engine's
# names to a program.
$(B)/lib/%.o: lib/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iinclude -Ilib -c -o $@ $<
$(B)/$(R4CALL_SO): $(LIB_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a lib/r4call.map
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,$(R4CALL_SO) -Wl,--version-script=lib/r4call.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a $(ENGINE_LIBS)
$(B)/libr4call.so: $(B)/$(R4CALL_SO)
	ln -sf $(R4CALL_SO) $@
$(B)/libr4call.a: $(LIB_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a
	$(LD) -r -o $(B)/lib/r4call-all.o $(LIB_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a
	objcopy --keep-global-symbol=reiser4 --keep-global-symbol=reiser4_result_free \
		$(B)/lib/r4call-all.o
	rm -f $@ && ar rcs $@ $(B)/lib/r4call-all.o

$(B)/tests/%: $(B)/tests/unit/%.o $(UNIT_LIB_OBJ) $(B)/libr4parse.a $(B)/libr4engine.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(ENGINE_LIBS)

# Interop helpers link reiser4progs' libreiser4; they live under tests/ only.
# They are the reference, not what is tested: built without the sanitizers
# (whose leak scan at exit costs 0.2 s a call in libreiser4's heap).
$(B)/tests/interop/%.o: tests/interop/%.c $(B)/cflags
	@mkdir -p $(@D)
	$(CC) $(filter-out $(SANFLAGS) -Wstrict-prototypes -Wmissing-prototypes,$(CFLAGS_ALL)) \
		-Wno-unused-parameter -c -o $@ $<
$(INTEROP_BIN): $(B)/tests/%: $(B)/tests/interop/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lreiser4 -laal

# The mounted file system's testers (tests/fsx, used by the bats suites):
# plain POSIX programs, not unit tests, so no test_ prefix.
$(FSX_BIN): $(B)/tests/%: $(B)/tests/fsx/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^

unit: $(UNIT_BIN) $(FSX_BIN)
interop: $(INTEROP_BIN)
fsx: $(FSX_BIN)

# Build the plain programs, then the sanitizer variant of everything, and run
# every test against the sanitizer build.  Ends with "N passed, N failed".
# (its builds use every core even when make was called without -j)
NPROC := $(shell nproc 2>/dev/null || echo 2)
check:
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) SAN=1 all unit interop build/san/tests/test_fuzz \
		$(if $(shell command -v $(FUZZ_CC)),build/fuzz/fuzz_parse build/fuzz/fuzz_image)
	B=build/san bash tests/run.sh

# make check with the long variants of the random, sampled and repeated
# tests (make check's sizes in brackets): test_fs operations (1000), sampled
# crash states of test_crash (150), test_badimg's byte flips (8), seconds
# of fuzzing (5), fsx operations on the mount (6000) and seconds of its
# writers (3), unmount-then-check tries under load (12), runs of the demo in
# a row (3); and ASan's default quarantine of freed memory and leak checks
# in every program the bats suites start (tests/run.sh).
LONG = ASAN_OPTIONS= R4_LEAKS=1 R4_OPS=5000 R4_CRASH_SAMPLES=2000 R4_FUZZ=200 \
	R4_FUZZ_SECONDS=300 R4_STRESS_OPS=100000 R4_STRESS_SECONDS=15 \
	R4_UMOUNT_TRIES=100 R4_DEMO_RUNS=20
check-long:
	$(LONG) $(MAKE) check

# The libFuzzer targets (clang): lex + parse, and damaged images through the
# engine.  `make fuzz` runs each for R4_FUZZ_SECONDS (default 5) as make
# check does, through tests/fuzz/check.sh.
FUZZ_CC ?= clang
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
FUZZ_SRC = $(filter-out parser/run.c parser/wire.c,$(PARSE_SRC)) engine/util.c engine/plan.c tests/fuzz/fuzz_parse.c
build/fuzz/fuzz_parse: $(FUZZ_SRC) build/grammar/parser.c build/grammar/lexer.c $(wildcard parser/*.h grammar/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iinclude -Iengine -Iparser -Igrammar -Ibuild/grammar -o $@ \
		$(FUZZ_SRC) build/grammar/parser.c build/grammar/lexer.c
build/fuzz/fuzz_image: $(ENGINE_SRC) tests/fuzz/fuzz_image.c $(wildcard engine/*.h include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(ENGINE_INC) -o $@ $(ENGINE_SRC) tests/fuzz/fuzz_image.c \
		$(ENGINE_LIBS) -lpthread
fuzz-build: build/fuzz/fuzz_parse build/fuzz/fuzz_image
fuzz: fuzz-build
	$(MAKE) unit
	R4_BUILD=build bash tests/fuzz/check.sh
# the fuzz run as one more "unit program" of tests/run.sh
$(B)/tests/test_fuzz: tests/fuzz/check.sh
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bash "%s/tests/fuzz/check.sh" "$$@"\n' "$(CURDIR)" >$@
	chmod +x $@

test: check

# Each layer includes only what DESIGN.md section 3 lets it see (the build's
# include paths already refuse most of it; this also catches "../" paths).
layering: $(B)/grammar/parser.h $(B)/grammar/lexer.h
	@CC="$(CC)" B="$(B)" FUSE_CFLAGS="$(FUSE_CFLAGS)" bash scripts/layering.sh

bench: all
	bash bench/run.sh

bench-age: all
	bash bench/age.sh

clean:
	rm -rf build

# make install [PREFIX=/usr/local] [DESTDIR=...] [MOUNT_HELPER_DIR=/sbin]:
# r4 in PREFIX/bin with its other names r4sh and r4fuse; mount.fuse.r4,
# the name mount(8) runs for `-t fuse.r4`, in MOUNT_HELPER_DIR, where
# mount(8) looks for helpers; the man pages under PREFIX/share/man;
# libr4call (shared and static) in LIBDIR, its header r4call.h in
# INCLUDEDIR and its pkg-config file r4call.pc in LIBDIR/pkgconfig.
# DESTDIR is prepended to every path (a staged install, for packaging).
PREFIX ?= /usr/local
MOUNT_HELPER_DIR ?= /sbin
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR = $(LIBDIR)/pkgconfig
MAN_PAGES = $(sort $(wildcard docs/man/*.[1-8]))
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MOUNT_HELPER_DIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(B)/r4 $(DESTDIR)$(BINDIR)/r4
	ln -sf r4 $(DESTDIR)$(BINDIR)/r4sh
	ln -sf r4 $(DESTDIR)$(BINDIR)/r4fuse
	ln -sf $(BINDIR)/r4 $(DESTDIR)$(MOUNT_HELPER_DIR)/mount.fuse.r4
	for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done
	install -m 755 $(B)/$(R4CALL_SO) $(DESTDIR)$(LIBDIR)/$(R4CALL_SO)
	ln -sf $(R4CALL_SO) $(DESTDIR)$(LIBDIR)/libr4call.so
	install -m 644 $(B)/libr4call.a $(DESTDIR)$(LIBDIR)/libr4call.a
	install -m 644 lib/r4call.h $(DESTDIR)$(INCLUDEDIR)/r4call.h
	sed -e 's|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		-e 's|@LIBS@|$(ENGINE_LIBS)|' lib/r4call.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/r4call.pc
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/r4 $(DESTDIR)$(BINDIR)/r4sh $(DESTDIR)$(BINDIR)/r4fuse \
		$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.fuse.r4
	for m in $(MAN_PAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done
	rm -f $(DESTDIR)$(LIBDIR)/$(R4CALL_SO) $(DESTDIR)$(LIBDIR)/libr4call.so \
		$(DESTDIR)$(LIBDIR)/libr4call.a $(DESTDIR)$(INCLUDEDIR)/r4call.h \
		$(DESTDIR)$(PKGCONFIGDIR)/r4call.pc

-include $(shell find build -name '*.d' 2>/dev/null)
.SECONDARY:
