# r4 - userspace Reiser4.  `make` builds the programs, `make check` builds an
# ASan+UBSan variant and runs every test, `make bench` runs the benchmarks.
# SAN=1 selects the sanitizer build (objects under build/san/).

CC      ?= cc
CFLAGS_WARN = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror
OPT     ?= -O2 -g
ifeq ($(SAN),1)
  B       = build/san
  SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  OPT     = -O1 -g
else
  B       = build
  SANFLAGS =
endif
CFLAGS_ALL = $(CFLAGS_WARN) $(OPT) $(SANFLAGS) -MMD -MP -Iengine -Itests/unit $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
UUID_LIBS = $(shell pkg-config --libs uuid 2>/dev/null || echo -luuid)

ENGINE_SRC = $(sort $(wildcard engine/*.c))
ENGINE_OBJ = $(ENGINE_SRC:%.c=$(B)/%.o)
CLI_SRC    = $(sort $(wildcard cli/*.c))
CLI_OBJ    = $(CLI_SRC:%.c=$(B)/%.o)
UNIT_SRC   = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   = $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
UNIT_LIB_SRC = $(filter-out $(UNIT_SRC),$(sort $(wildcard tests/unit/*.c)))
UNIT_LIB_OBJ = $(UNIT_LIB_SRC:%.c=$(B)/%.o)
INTEROP_SRC = $(sort $(wildcard tests/interop/*.c))
INTEROP_BIN = $(INTEROP_SRC:tests/interop/%.c=$(B)/tests/%)

PROGS = $(B)/r4

.PHONY: all check test unit interop clean layering bench
all: $(PROGS) layering

$(B)/libr4engine.a: $(ENGINE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(B)/r4: $(CLI_OBJ) $(B)/libr4engine.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(UUID_LIBS)

$(B)/tests/%: $(B)/tests/unit/%.o $(UNIT_LIB_OBJ) $(B)/libr4engine.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(UUID_LIBS)

# Interop helpers link reiser4progs' libreiser4; they live under tests/ only.
$(B)/tests/interop/%.o: tests/interop/%.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(CFLAGS_ALL)) -Wno-unused-parameter -c -o $@ $<
$(INTEROP_BIN): $(B)/tests/%: $(B)/tests/interop/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lreiser4 -laal

unit: $(UNIT_BIN)
interop: $(INTEROP_BIN)

# Build the plain programs, then the sanitizer variant of everything, and run
# every test against the sanitizer build.  Ends with "N passed, N failed".
check:
	$(MAKE) all
	$(MAKE) SAN=1 all unit interop
	B=build/san bash tests/run.sh

test: check

# engine/ depends on nothing of ours; cli/ sees only the public headers.
layering:
	@! grep -n '#include "' engine/*.[ch] | grep -v -E '"(r4|r4_int|[a-z0-9_]+)\.h"' | grep . || \
		{ echo "layering: engine includes a foreign header"; exit 1; }
	@! grep -n -E '#include "(r4_int|node|tree|item|key|format|alloc|io|cache)\.h"' cli/*.c 2>/dev/null | \
		grep . || { echo "layering: cli/ includes an engine-internal header"; exit 1; }
	@! grep -n -E '\b(pread|pwrite|fdatasync|fsync)\(' engine/*.c | grep -v '^engine/io_file.c' | grep . || \
		{ echo "layering: raw I/O outside engine/io_file.c"; exit 1; }

bench: all
	bash bench/run.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
.SECONDARY:
