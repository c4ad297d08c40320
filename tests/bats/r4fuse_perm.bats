#!/usr/bin/env bats
# r4fuse: the POSIX rules the engine enforces for the calling process
# (engine/perm.c), with and without default_permissions; issue 22, defects
# 2 (a link through a directory that lost its search bit; FIFOs) and 3 (the
# caller's umask for what the control file and r4sh MOUNTPOINT make).
# Real mounts (root, /dev/fuse), uid 65534 through setpriv.

setup() {
	load helper
	r4_setup
	fuse_setup 64M
	need_cmd setpriv
	"$R4SH" -c 'mkdir /w' -c '/w/..mode <- "0777"' "$IMG" >/dev/null
	public_mnt
}

teardown() {
	fuse_teardown
	r4_teardown
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# Defect 2: the source of a link is reached through the directory it is
# in now (n1), not through the name the bridge last gave its node (n2/n4,
# removed since).  All within entry_timeout, so the kernel asks no lookup.
link_way() {
	mount_r4 -o "allow_other$1"
	run fuse_within 20 nobody bash -c "cd '$MNT/w' && mkdir n1 n2 && touch n1/n3 &&
		ln n1/n3 n2/n4 && rm n2/n4 && chmod 0644 n1 && ln n1/n3 n2/n4"
	assert_failure
	assert_output --partial 'Permission denied'
	run stat -c %h "$MNT/w/n1/n3"
	assert_output 1
	umount_r4
}

@test "perm: link needs search on the source's directory (bridge checks)" {
	link_way ""
}

@test "perm: link needs search on the source's directory (default_permissions)" {
	link_way ,default_permissions
}

# Defect 3: the control file and r4sh MOUNTPOINT make files and
# directories with the caller's umask, as r4sh does on an image.
umask_rules() {
	local cmd
	mount_r4 -o "allow_other$1"
	# (R4L makes a directory with ..new; r4sh's mkdir is a verb of its own)
	cmd=$(mktemp /tmp/r4cmd.XXXXXX)
	chmod 644 "$cmd"
	printf '%s\n' '/w/cf <- "x"' '/w/..new/(name <- "cd", type <- directory)' >"$cmd"
	(umask 022 && cat "$cmd" >"$MNT/..reiser4")
	run stat -c %a "$MNT/w/cf" "$MNT/w/cd"
	assert_output $'644\n755'
	sed -i 's/cf/nf/; s/"cd"/"nd"/' "$cmd"
	run fuse_within 20 nobody bash -c "umask 027 && cat '$cmd' >'$MNT/..reiser4'"
	assert_success
	run stat -c '%a %u' "$MNT/w/nf" "$MNT/w/nd"
	assert_output $'640 65534\n750 65534'
	rm -f "$cmd"
	(umask 022 && "$R4SH" -c '/w/sf <- "x"' -c 'mkdir /w/sd' "$MNT")
	run stat -c %a "$MNT/w/sf" "$MNT/w/sd"
	assert_output $'644\n755'
	run fuse_within 20 nobody bash -c "umask 077 && '$R4SH' -c '/w/tf <- \"x\"' '$MNT'"
	assert_success
	run stat -c '%a %u' "$MNT/w/tf"
	assert_output '600 65534'
	# POSIX calls: the umask the kernel passes
	run fuse_within 20 nobody bash -c "umask 027 && mkdir '$MNT/w/pd' && touch '$MNT/w/pf'"
	assert_success
	run stat -c %a "$MNT/w/pd" "$MNT/w/pf"
	assert_output $'750\n640'
	umount_r4
}

@test "perm: the control file and r4sh MOUNTPOINT use the caller's umask (bridge checks)" {
	umask_rules ""
}

@test "perm: the control file and r4sh MOUNTPOINT use the caller's umask (default_permissions)" {
	umask_rules ,default_permissions
}

@test "perm: the same commands on an image give 644 and 755" {
	(umask 022 && "$R4SH" -c '/w/sf <- "x"' -c 'mkdir /w/sd' "$IMG" >/dev/null)
	run "$R4SH" -c '/w/sf/..mode' -c '/w/sd/..mode' "$IMG"
	assert_output $'0644\n0755'
}

# A FIFO whose mode denies the caller: the kernel opens FIFOs itself, with
# no OPEN to the bridge, so only default_permissions refuses it
# (docs/r4fuse.md, "Permissions").
@test "perm: a FIFO the mode denies does not open (default_permissions)" {
	mount_r4 -o allow_other,default_permissions
	mkfifo -m 0600 "$MNT/w/fifo"
	run fuse_within 20 nobody timeout 2 cat "$MNT/w/fifo"
	assert_failure
	assert_output --partial 'Permission denied'
	umount_r4
}

# Rename, sticky bit and a moved directory's "..": the engine's rules.
@test "perm: a directory moved to another parent needs write on itself (bridge checks)" {
	mount_r4 -o allow_other
	run fuse_within 20 nobody bash -c "cd '$MNT/w' && mkdir a b a/d && chmod 0555 a/d &&
		mv a/d b/d"
	assert_failure
	assert_output --partial 'Permission denied'
	run fuse_within 20 nobody bash -c "cd '$MNT/w' && mv a/d a/e"
	assert_success
	umount_r4
}
