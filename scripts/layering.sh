#!/usr/bin/env bash
# scripts/layering.sh - check that each layer includes only what
# DESIGN.md section 3 lets it see (docs/architecture.md, "Layers").
#
#   CC=cc B=build FUSE_CFLAGS=... bash scripts/layering.sh   (make layering)
#
# For each layer, the preprocessor lists the headers its files include,
# with that layer's include path (the one the build uses); a header it
# cannot find, or one outside the layer's allowed folders, fails the check:
#   engine/       engine/*.h and include/r4.h  (depends on nothing of ours)
#   exec/         exec/*.h and include/r4.h alone: the executor runs plans on
#                 the public fs/ns API (it is built into the engine's library)
#   parser/       parser/, grammar/ (and its generated headers), include/
#   cli/          cli/ and include/
#   fuse-bridge/  fuse-bridge/ and include/
#   lib/          lib/ and include/ (libr4call, a program-level client of the
#                 engine and the front end)
# Inside the engine, the lower half (the files of LOWER below: transactions,
# journal, tree, cache, allocator, open) sees no header of the file layer
# (obj.h, ccreg.h, ns.h, perm.h): it reaches that layer only through the
# hooks of txn.h.  And only engine/io_file.c does raw I/O, only
# engine/io_nbd.c calls libnbd (an NBD export's I/O).  Prints one
# line per violation and exits 1 if there is any.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
CC=${CC:-cc} B=${B:-build}
read -r -a fuse_cflags <<<"${FUSE_CFLAGS:-$(pkg-config --cflags fuse3 2>/dev/null || echo -I/usr/include/fuse3)}"
bad=0

# deps LAYER CFLAGS...: the make rules of LAYER/*.c, and of each LAYER/*.h
# that no .c file includes (a header a .c file reaches needs no run of its
# own: the preprocessor runs were most of this script's time)
deps() {
	local layer=$1 out h
	shift
	out=$("$CC" -std=c11 -D_GNU_SOURCE "$@" -MM "$layer"/*.c 2>&1) || { printf '%s\n' "$out"; return 1; }
	printf '%s\n' "$out"
	for h in $(compgen -G "$layer/*.h"); do
		[[ " $out " == *[[:space:]]"$h"[[:space:]]* ]] && continue
		"$CC" -std=c11 -D_GNU_SOURCE "$@" -MM "$h" 2>&1 || return 1
	done
}

# check LAYER ALLOWED-REGEX CFLAGS...: the headers of LAYER/*.c and *.h;
# the rules stay in RULES
check() {
	local layer=$1 allowed=$2 h
	shift 2
	if ! RULES=$(deps "$layer" "$@"); then
		printf '%s\n' "$RULES" | grep -E 'fatal error|error:' | sed "s|^|layering: $layer/ includes what it may not see: |"
		bad=1
		return
	fi
	for h in $(printf '%s\n' "$RULES" | tr ' \\' '\n\n' | grep -E '\.h$' | sort -u |
		   xargs -r realpath --relative-base=. | grep -v '^/'); do	# (not system headers)
		if ! [[ $h =~ $allowed ]]; then
			echo "layering: $layer/ includes $h"
			bad=1
		fi
	done
}

check engine '^(engine/[^/]+\.h|include/r4\.h)$' -Iinclude -Iengine
engine_rules=$RULES
check exec '^(exec/[^/]+\.h|include/r4\.h)$' -Iinclude -Iexec
check parser "^(parser/[^/]+|grammar/[^/]+|$B/grammar/[^/]+|include/[^/]+)\\.h\$" \
	-Iinclude -Iparser -Igrammar -I"$B/grammar"
check cli '^(cli/[^/]+|include/[^/]+)\.h$' -Iinclude -Icli
check fuse-bridge '^(fuse-bridge/[^/]+|include/[^/]+)\.h$' -Iinclude "${fuse_cflags[@]}"
check lib '^(lib/[^/]+|include/[^/]+)\.h$' -Iinclude -Ilib

# the lower half, file by file, from the engine's rules ("f.o: f.c a.h \")
LOWER=(alloc cache db jnl tree txn)
UPPER_H='^engine/(obj|ccreg|ns|perm)\.h$'
for f in "${LOWER[@]}"; do
	for h in $(printf '%s\n' "$engine_rules" |
		   awk -v t="$f.o:" '/^[^ ]/ { on = $1 == t } on' |
		   tr ' \\' '\n\n' | grep -E '\.h$' | sort -u | xargs -r realpath --relative-to=.); do
		if [[ $h =~ $UPPER_H ]]; then
			echo "layering: engine/$f.c (lower half) includes $h"
			bad=1
		fi
	done
done

if grep -n -E '\b(pread|pwrite|fdatasync|fsync)\(' engine/*.c | grep -v '^engine/io_file.c' | \
	sed 's/^/layering: raw I\/O outside engine\/io_file.c: /' | grep .; then
	bad=1
fi
if grep -n -E '\bnbd_[a-z_]+\(' engine/*.c | grep -v '^engine/io_nbd.c' | \
	sed 's/^/layering: libnbd outside engine\/io_nbd.c: /' | grep .; then
	bad=1
fi
exit $bad
