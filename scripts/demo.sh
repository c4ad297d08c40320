#!/usr/bin/env bash
# demo.sh - the main job, from a fresh Debian 12 machine: install what is
# missing (scripts/deps.sh), build (make), make a demo Reiser4 image with
# `r4 mkfs`, copy the engine's sources into it with `r4 import`, list and
# read them back, and print `r4 info`; run examples/bank.r4 into it with
# r4sh; if reiser4progs is there, let fsck.reiser4 check the image r4
# made; and last, on a terminal, open r4sh on it.
#
#   bash scripts/demo.sh [IMAGE]      (default IMAGE: build/demo.img)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

img=${1:-build/demo.img}

bash scripts/deps.sh
make -j"$(nproc)"

mkdir -p "$(dirname "$img")"
rm -f "$img"
echo "+ build/r4 mkfs $img 64M --label r4demo"
build/r4 mkfs "$img" 64M --label r4demo
echo "+ build/r4 import $img engine /src/engine      (a host tree, one transaction)"
build/r4 import "$img" engine /src/engine
echo "+ build/r4 ls $img /src/engine | sed -n 1,10p      (sed reads it all: no SIGPIPE under pipefail)"
build/r4 ls "$img" /src/engine | sed -n 1,10p
echo "+ build/r4 cat $img /src/engine/db.h | sed -n 1,3p"
build/r4 cat "$img" /src/engine/db.h | sed -n 1,3p
echo "+ build/r4 info $img"
build/r4 info "$img"

echo "+ build/r4sh -f examples/bank.r4 $img      (accounts, guarded transfers)"
build/r4sh -f examples/bank.r4 "$img"

if command -v fsck.reiser4 >/dev/null 2>&1; then
	echo "+ fsck.reiser4 --check -y $img"
	if out=$(fsck.reiser4 --check -y "$img" 2>&1) && grep -q 'FS is consistent' <<<"$out"; then
		echo "fsck.reiser4: FS is consistent."
	else
		printf '%s\n' "$out"
		echo "demo: fsck.reiser4 does not accept $img" >&2
		exit 1
	fi
fi

if [ -t 0 ] && [ -t 1 ]; then
	echo "+ build/r4sh $img      (.help lists the verbs; try: ls /bank, stat /bank/alice, begin ... rollback)"
	exec build/r4sh "$img"
fi
echo "demo: open the shell on the image with: build/r4sh $img"
