#!/usr/bin/env bash
# bench/run.sh - run r4's benchmarks (`make bench`).  Each benchmark will
# run r4 beside the program a user would otherwise pick (SQLite, ext4 via
# fuse2fs, reiser4progs) in one run and report ratios; results go to
# bench/RESULTS.md with the command that produced them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "bench: no benchmarks exist yet (nothing to run)"
exit 0
