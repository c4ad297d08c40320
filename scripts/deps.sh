#!/usr/bin/env bash
# deps.sh - install the Debian 12 packages r4 needs to build and test.
#
# Idempotent: checks each package (pkg-config module, command or dpkg status)
# and runs `apt-get update` once and `apt-get install -y` only for what is
# missing.  Prints what it installs, or "deps: nothing to do".
# Needs root (or sudo) only when something is missing.
set -euo pipefail

# package  kind:what-to-check   (pc = pkg-config module, cmd = command,
#                                 file = path, pkg = dpkg status only)
DEPS='
build-essential   cmd:gcc
build-essential   cmd:make
pkg-config        cmd:pkg-config
flex              cmd:flex
bison             cmd:bison
uuid-dev          pc:uuid
libedit-dev       pc:libedit
libfuse3-dev      pc:fuse3
fuse3             cmd:fusermount3
bats              cmd:bats
bats-support      file:/usr/lib/bats/bats-support/load.bash
bats-assert       file:/usr/lib/bats/bats-assert/load.bash
bats-file         file:/usr/lib/bats/bats-file/load.bash
reiser4progs      cmd:mkfs.reiser4
libreiser4-dev    file:/usr/include/reiser4/libreiser4.h
clang             cmd:clang
libclang-rt-14-dev pkg:libclang-rt-14-dev
sqlite3           cmd:sqlite3
libsqlite3-dev    pc:sqlite3
e2fsprogs         cmd:mke2fs
fuse2fs           cmd:fuse2fs
liblzo2-dev       pc:lzo2
zlib1g-dev        pc:zlib
libzstd-dev       pc:libzstd
tmux              cmd:tmux
attr              cmd:getfattr
acl               cmd:setfacl
libcap2-bin       cmd:setcap
rsync             cmd:rsync
tar               cmd:tar
graphviz          cmd:dot
groff-base        cmd:groff
libblkid-dev      pc:blkid
libnbd-dev        pc:libnbd
libjansson-dev    pc:jansson
xfsprogs          cmd:xfs_io
nbdkit            cmd:nbdkit
qemu-utils        cmd:qemu-nbd
fdisk             cmd:sfdisk
'

# every package's dpkg status, asked once (one dpkg-query per package costs
# seconds, and the demo runs this every time)
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $(awk 'NF {print $1}' <<<"$DEPS" | sort -u) \
	2>/dev/null | awk '/install ok installed$/ {printf "%s ", $1}' || true)"
have_pkg() { case $installed in *" $1 "*) return 0 ;; esac; return 1; }

missing=()
while read -r pkg check; do
	[ -n "$pkg" ] || continue
	kind=${check%%:*} what=${check#*:}
	ok=0
	case $kind in
	pc)   command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$what" && ok=1 ;;
	cmd)  command -v "$what" >/dev/null 2>&1 && ok=1 ;;
	file) [ -e "$what" ] && ok=1 ;;
	esac
	# A check that passes still needs the package itself (e.g. gcc without
	# build-essential's g++); dpkg is the final word.
	if [ $ok = 1 ] && [ $kind != pkg ]; then
		have_pkg "$pkg" || ok=0
	elif [ $kind = pkg ]; then
		have_pkg "$pkg" && ok=1
	fi
	if [ $ok = 0 ]; then
		case " ${missing[*]-} " in *" $pkg "*) ;; *) missing+=("$pkg") ;; esac
	fi
done <<<"$DEPS"

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: nothing to do"
	exit 0
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "deps: need root to install: ${missing[*]}" >&2; exit 1; }
	SUDO=sudo
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "deps: installed ${missing[*]}"
