#!/usr/bin/env bats
# r4sh: -c, the batch runner (-f, stdin, --atomic, --dry-run, --json,
# --as), the verbs, begin/commit/rollback across -c, the image lock, and
# the exit codes (0 ok, 1 run time, 2 usage, 3 check).

setup() {
	load helper
	r4_setup
	R4SH=$R4_BUILD/r4sh
	IMG=$T/a.img
	"$R4" mkfs "$IMG" 32M >/dev/null
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
}
teardown() { r4_teardown; }

sum() { md5sum "$IMG" | cut -d' ' -f1; }

@test "-c runs a verb or an R4L command, each one unit, and prints values" {
	run "$R4SH" -c 'cat /bank/alice' -c '/bank/alice + "/" + /bank/bob' "$IMG"
	assert_success
	assert_output $'100\n100/50'
}

@test "--quiet shows no values, and a value of nothing still fails its unit" {
	run "$R4SH" --quiet -c '/bank/carol <- "7"; /bank/carol' "$IMG"
	assert_success
	assert_output ''
	before=$(sum)
	run "$R4SH" --quiet -c '/bank/dave <- "8"; /bank/nobody' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:20: error: cannot read '/bank/nobody': No such file or directory
/bank/dave <- "8"; /bank/nobody
                   ^~~~~~~~~~~~
EOF
	[ "$(sum)" = "$before" ]
	run "$R4SH" -c 'ls /bank' "$IMG"
	assert_output $'alice\nbob\ncarol'
}

@test "-c with a run-time error: exit 1, the diagnostic, nothing of that unit" {
	run "$R4SH" -c '/bank/alice <- "0"; /bank/bob <- /bank/nobody' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:34: error: cannot read '/bank/nobody': No such file or directory
/bank/alice <- "0"; /bank/bob <- /bank/nobody
                                 ^~~~~~~~~~~~
EOF
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 100
}

@test "a script runs statement by statement and stops at the first failure" {
	cat >"$T/pay.r4" <<'EOF'
/bank/alice <- "90"
/bank/dave <- /bank/carol/balance
/bank/bob <- "60"
EOF
	run "$R4SH" -f "$T/pay.r4" "$IMG"
	assert_failure 1
	assert_output - <<EOF
90
$T/pay.r4:2:15: error: cannot read '/bank/carol': No such file or directory
/bank/dave <- /bank/carol/balance
              ^~~~~~~~~~~
r4sh: stopped: 1 statement before this one committed
EOF
	run "$R4SH" -c 'cat /bank/alice /bank/bob' "$IMG"
	assert_output $'90\n50'
}

@test "a script is checked whole before anything runs: exit 3, image unchanged" {
	before=$(sum)
	printf '/bank/alice <- "1"\n/etc/passwd/..oid <- #7\n' >"$T/bad.r4"
	run "$R4SH" -f "$T/bad.r4" "$IMG"
	assert_failure 3
	assert_output - <<EOF
$T/bad.r4:2:13: error: '..oid' is read-only
/etc/passwd/..oid <- #7
            ^~~~~
EOF
	[ "$(sum)" = "$before" ]
}

@test "--atomic: one unit for the whole script; a failure commits nothing" {
	before=$(sum)
	printf '/bank/alice <- "1"\n/bank/x/y <- "2"\n' >"$T/s.r4"
	run "$R4SH" --atomic --quiet -f "$T/s.r4" "$IMG"
	assert_failure 1
	assert_line 'r4sh: --atomic: nothing of the script was committed'
	[ "$(sum)" = "$before" ]
	# the values of statements that did not stay are not shown
	run "$R4SH" --atomic -f "$T/s.r4" "$IMG"
	assert_failure 1
	refute_line 1
	[ "$(sum)" = "$before" ]
	printf '/bank/alice <- "1"\n/bank/bob <- "2"\n' >"$T/s.r4"
	run "$R4SH" --atomic -f "$T/s.r4" "$IMG"
	assert_success
	assert_output $'1\n2'
	run "$R4SH" -c 'cat /bank/alice /bank/bob' "$IMG"
	assert_output $'1\n2'
}

# A script of 1,701 statements (165 KB) with a string of 301 lines across
# the 64 KiB mark where r4sh cuts a long script to check and run it part
# by part, ending in $1.
long_script() {
	for i in $(seq 1 600); do printf '/bank/f%04d <- "%090d"\n' "$i" "$i"; done
	printf '/bank/long <- "first\n'
	for i in $(seq 1 300); do printf 'line %d of a string across the cut\n' "$i"; done
	printf 'end"\n'
	for i in $(seq 601 1400); do printf '/bank/f%04d <- "%090d"\n' "$i" "$i"; done
	printf '%s\n' "$1"
}

@test "a long script is checked and run in parts: its lines, its stop, --atomic whole" {
	before=$(sum)
	long_script '/bank/alice/..nosuch' >"$T/s.r4"
	run "$R4SH" --atomic -f "$T/s.r4" "$IMG"
	assert_failure 3
	assert_output - <<EOF
$T/s.r4:1703:13: error: unknown pseudo file '..nosuch'
/bank/alice/..nosuch
            ^~~~~~~~
EOF
	[ "$(sum)" = "$before" ]
	# (an --atomic script of R4L alone is checked as it runs: a run-time
	# failure early gives way to a check error later, as a check first would)
	{ echo '/bank/x/y <- "2"'; long_script '/bank/alice/..nosuch'; } >"$T/s.r4"
	run "$R4SH" --atomic -f "$T/s.r4" "$IMG"
	assert_failure 3
	assert_output - <<EOF
$T/s.r4:1704:13: error: unknown pseudo file '..nosuch'
/bank/alice/..nosuch
            ^~~~~~~~
EOF
	[ "$(sum)" = "$before" ]
	long_script '/bank/x/y <- "2"' >"$T/s.r4"
	run "$R4SH" --atomic --quiet -f "$T/s.r4" "$IMG"
	assert_failure 1
	assert_line --index 0 "$T/s.r4:1703:1: error: cannot write '/bank/x': No such file or directory"
	assert_line 'r4sh: --atomic: nothing of the script was committed'
	[ "$(sum)" = "$before" ]
	run "$R4SH" --quiet -f "$T/s.r4" "$IMG"
	assert_failure 1
	assert_line 'r4sh: stopped: 1401 statements before this one committed'
	run "$R4SH" -c 'cat /bank/long' "$IMG"
	assert_line --index 0 first
	assert_line --index 150 'line 150 of a string across the cut'
	assert_line --index 301 end
	run "$R4SH" -c 'cat /bank/f1400' "$IMG"
	assert_output "$(printf '%090d' 1400)"
	# a named result's failure in an --atomic script: its unit is done again
	# (a name lives in its statement; tw/[ ] makes two statements one)
	printf '/bank/alice <- "1"\ntw/[ r <= /bank/q/z <- "1"; /bank/log <- r/assign_result ]\n' \
		>"$T/t.r4"
	run "$R4SH" --atomic --quiet -f "$T/t.r4" "$IMG"
	assert_success
	run "$R4SH" -c 'cat /bank/alice /bank/log' "$IMG"
	assert_output $'1\n2'
}

@test "an --atomic script that fills the volume: ENOSPC in a later part, nothing committed" {
	# (100 files of 100 KB on an 8 MiB volume: the script runs in parts of
	# about 64 KiB, got ready ahead in a second thread)
	"$R4" mkfs "$T/s.img" 8M >/dev/null
	x=$(head -c 100000 /dev/zero | tr '\0' x)
	{ echo '/..new/(name <- "big", type <- directory)'
	  for i in $(seq 1 100); do printf '/big/f%03d <- "%s"\n' "$i" "$x"; done; } >"$T/full.r4"
	before=$(md5sum "$T/s.img" | cut -d' ' -f1)
	run "$R4SH" --atomic --quiet -f "$T/full.r4" "$T/s.img"
	assert_failure 1
	assert_line --index 0 --regexp "^$T/full.r4:[0-9]+:1: error: cannot write '/big/f0[0-9]+': No space left on device\$"
	assert_line 'r4sh: --atomic: nothing of the script was committed'
	[ "$(md5sum "$T/s.img" | cut -d' ' -f1)" = "$before" ]
	run "$R4" fsck "$T/s.img"
	assert_success
}

@test "a script file changed or cut short while it runs stops it: nothing unchecked runs" {
	# (r4sh maps a script file: it reads what the file holds when it runs)
	S=$T/s.r4
	printf '/bank/a <- "1"\n.shell printf "/bank/a <- \\"1\\"\\\\n.shell true\\\\n/bank/b <- \\"9\\"\\\\n" >%s\n/bank/b <- "2"\n' \
		"$S" >"$S"
	run "$R4SH" --quiet -f "$S" "$IMG"
	assert_failure 1
	assert_output "r4sh: $S: the script changed after it was checked; stopped before its line 3"
	{ printf '/bank/c <- "1"\n.shell : >%s\n' "$S"
	  for i in $(seq 1 2000); do printf '/bank/f%d <- "%0100d"\n' "$i" "$i"; done; } >"$S"
	run "$R4SH" --quiet -f "$S" "$IMG"
	assert_failure 1
	assert_output 'r4sh: the script file was cut short while it ran; stopped'
	run "$R4SH" -c 'ls /bank' "$IMG"
	assert_output $'a\nalice\nbob\nc'
	run "$R4" fsck "$IMG"
	assert_success
}

@test "a pipe on stdin is a script; --dry-run explains without opening the image" {
	run bash -c "echo '/bank/carol <- \"7\"' | '$R4SH' '$IMG'"
	assert_success
	assert_output 7
	before=$(sum)
	run bash -c "echo 'tw/pay[ /bank/alice <- \"1\" ]' | '$R4SH' --dry-run '$IMG'"
	assert_success
	assert_output - <<'EOF'
 0  BEGIN   pay                          1:1-1:28
 1  LOOKUP  h0 = /bank/alice  create     1:9-1:19
 2  WRITE   h0 <- "1"                    1:9-1:26
 3  RESULT  h0                           1:9-1:26
 4  YIELD   h0                           1:9-1:26
 5  COMMIT  pay                          1:1-1:28
EOF
	[ "$(sum)" = "$before" ]
}

@test "--json: one object per statement value, and the error" {
	# a unit that fails hands over no values: only the error
	run "$R4SH" --json -c '/bank/alice; "x\ty"; /bank/nobody' "$IMG"
	assert_failure 1
	refute_line --partial '"value"'
	assert_line '{"statement": 1, "range": "1:22-1:33", "error": "cannot read '\''/bank/nobody'\'': No such file or directory", "errno": 2, "stage": "run"}'
	run "$R4SH" --json -c '/bank/alice; "x\ty"' "$IMG"
	assert_output - <<'EOF'
{"statement": 1, "range": "1:1-1:11", "path": "/bank/alice", "value": "100"}
{"statement": 2, "range": "1:14-1:19", "value": "x\ty"}
EOF
}

@test "--json is JSON: UTF-8 kept, other bytes in base64, errno a number, verbs' output and errors too" {
	"$R4SH" -c '/bank/café <- "crème brûlée\n"' -c $'/bank/bin <- "\xff\\x00\\x01"' "$IMG"
	run "$R4SH" --json -c 'cat /bank/café' "$IMG"
	assert_output '{"path": "/bank/café", "value": "crème brûlée\n"}'
	run "$R4SH" --json -c '/bank/bin' "$IMG"
	assert_output '{"statement": 1, "range": "1:1-1:9", "path": "/bank/bin", "value_base64": "/wAB"}'
	run "$R4SH" --json -c '/bank' "$IMG"
	assert_output '{"statement": 1, "range": "1:1-1:5", "path": "/bank", "error": "Is a directory", "errno": 21}'
	run "$R4SH" --json -c '/x <-' "$IMG"
	assert_failure 3
	assert_line --index 0 '{"range": "1:6-1:6", "error": "unexpected end of input, expecting an expression", "errno": 22, "stage": "syntax"}'
	run "$R4SH" --json -c 'ls /bank' -c 'pwd' "$IMG"
	assert_output - <<'EOF'
{"path": "/bank/alice", "name": "alice"}
{"path": "/bank/bin", "name": "bin"}
{"path": "/bank/bob", "name": "bob"}
{"path": "/bank/café", "name": "café"}
{"cwd": "/"}
EOF
	run "$R4SH" --json -c 'ls -l /bank/alice' "$IMG"
	assert_output --regexp '^\{"path": "/bank/alice", "name": "alice", "type": "regular", "mode": "0644", "nlink": 1, "uid": 0, "gid": 0, "size": 3, "atime": [0-9]+, "atime_nsec": [0-9]+, "mtime": [0-9]+, "mtime_nsec": [0-9]+, "ctime": [0-9]+, "ctime_nsec": [0-9]+\}$'
	run "$R4SH" --json -c 'stat /bank/alice' "$IMG"
	assert_output --regexp '^\{"path": "/bank/alice", "type": "regular", "mode": "0644", "uid": 0, "gid": 0, "size": 3, "nlink": 1, "atime": [0-9]+, "atime_nsec": [0-9]+, .*"plugins": \{"file": "reg40", .*\}\}$'
	run "$R4SH" --json -c 'rm /bank/nope' "$IMG"
	assert_failure 1
	assert_line --index 0 '{"verb": "rm", "operand": "/bank/nope", "line": 1, "column": 4, "error": "cannot remove '\''/bank/nope'\'': No such file or directory", "errno": 2}'
	run "$R4SH" --json -c '.info' -c '.fsck' "$IMG"
	assert_line --index 0 --regexp '^\{"image": ".*", "read_only": false, "block_size": 4096, "blocks": [0-9]+, "free_blocks": [0-9]+, "files": [0-9]+, "tree_height": [0-9]+, "label": "", "hash": "r5_hash", "fibration": "ext_1_fibre", "formatting": "smart"\}$'
	assert_line --index 1 --regexp '^\{"image": ".*", "clean": true, "objects": [0-9]+, "problems": 0\}$'
	# every line is JSON, as a JSON parser reads it
	run bash -c "'$R4SH' --json -c 'ls -l /bank' -c 'stat /bank' -c 'tree /' -c '/bank/bin; /bank/café' '$IMG' | python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]; print(\"ok\")'"
	assert_output ok
}

@test "--as: access checks for another identity" {
	"$R4SH" -c '/bank/bob/..mode <- "0600"' "$IMG" >/dev/null
	run "$R4SH" --as 1000:1000 -c 'cat /bank/bob' "$IMG"
	assert_failure 1
	assert_line --index 0 "<command>:1:5: error: cat: cannot read '/bank/bob': Permission denied"
	run "$R4SH" --as 1000 -c '/bank/alice <- "1"' "$IMG"
	assert_failure 1
	assert_line "<command>:1:1: error: cannot write '/bank/alice': Permission denied"
	run "$R4SH" --as nobody -c 'pwd' "$IMG"
	assert_failure 2
	assert_output "r4sh: .as: no user 'nobody' in the image's /etc/passwd"
}

@test "begin ... rollback across -c restores the image exactly; commit keeps" {
	before=$(sum)
	run "$R4SH" -c begin -c '/bank/alice <- "1"' -c 'mkdir /tmp' -c 'cat /bank/alice' \
		-c rollback "$IMG"
	assert_success
	assert_output $'1\n1'
	[ "$(sum)" = "$before" ]
	# -c stops at the first failure; the transaction left open is rolled back
	run "$R4SH" -c begin -c '/bank/alice <- "2"' -c '/bank/x/y <- "no"' \
		-c '/bank/bob <- "3"' -c commit "$IMG"
	assert_failure 1
	[ "$(sum)" = "$before" ]
	run "$R4SH" -c begin -c '/bank/alice <- "2"' -c '/bank/bob <- "3"' -c commit "$IMG"
	assert_success
	run "$R4SH" -c 'cat /bank/alice /bank/bob' "$IMG"
	assert_output $'2\n3'
}

@test "mv of a file onto an aggregate: the file becomes its text, checked, its name goes" {
	"$R4SH" -c 'mkdir /etc' -c '/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"' \
		-c '/etc/new <- "root:x:0:0:root:/root:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"' \
		-c '/bad <- "root:x:0:0:root:/root:/bin/sh\nzed:x:5:x:Z:/:/bin/sh\n"' "$IMG" >/dev/null
	run "$R4SH" -c 'mv /etc/new /etc/passwd' -c 'ls /etc' -c '/etc/passwd/bob/home' "$IMG"
	assert_success
	assert_output $'passwd\n/home/bob'
	run "$R4SH" -c 'mv /bad /etc/passwd' "$IMG"
	assert_failure
	assert_output --partial "cannot write '/etc/passwd': line 2: gid 'x' is not a number from 0 to 4294967294"
	run "$R4SH" -c 'ls /' -c 'cat /etc/passwd' "$IMG"
	assert_output $'bad\nbank\netc\nroot:x:0:0:root:/root:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh'
}

@test "an invert with a part gone: reading it names the part and why" {
	"$R4SH" -c '/bank/..new/(name <- "motd", type <- invert)/..invert <- "/bank/alice + \" \" + /bank/bob"' \
		-c 'rm /bank/bob' "$IMG" >/dev/null
	run "$R4SH" -c 'cat /bank/motd' "$IMG"
	assert_failure
	assert_line --index 0 "<command>:1:5: error: cat: cannot read '/bank/motd': cannot read '/bank/bob': No such file or directory"
	run "$R4SH" -c '/bank/motd' "$IMG"
	assert_output "r4sh: /bank/motd: cannot read '/bank/bob': No such file or directory"
	run "$R4SH" --json -c '/bank/motd' "$IMG"
	assert_output --partial '"error": "cannot read '"'/bank/bob'"': No such file or directory", "errno": 2}'
}

@test "verbs: ls, ls -l, ls -a, cd and pwd, write, cp, mv, ln, rm, tree" {
	run "$R4SH" -c 'ls /bank' -c 'cd /bank' -c pwd -c 'ls' "$IMG"
	assert_output $'alice\nbob\n/bank\nalice\nbob'
	run "$R4SH" -c 'ls -l /bank' "$IMG"
	assert_output - <<'EOF'
-0644   1     0     0          3 alice
-0644   1     0     0          2 bob
EOF
	run "$R4SH" -c 'ls -a /bank/alice' "$IMG"
	assert_output /bank/alice
	run "$R4SH" -c 'ls -a /bank' "$IMG"
	assert_line --index 0 .
	assert_line --index 1 ..
	assert_line --index 2 alice
	assert_line ..mode
	assert_line ..new
	run "$R4SH" -c $'write /bank/note\nline one\nline two\n.' -c 'cat /bank/note' "$IMG"
	assert_output $'line one\nline two'
	run "$R4SH" -c 'cp /bank/alice /bank/carol' -c 'mkdir -p /x/y/z' -c 'cp /bank/bob /x/y' \
		-c 'mv /bank/carol /bank/dave' -c 'mv /bank/dave /x' -c 'ln -s /bank/alice /x/link' \
		-c 'ln /bank/bob /x/hard' -c 'cat /x/y/bob /x/dave /x/link /x/hard' "$IMG"
	assert_success
	assert_output $'50\n100\n100\n50'
	run "$R4SH" -c 'mv /x/y /bank' -c 'rm /x/link' -c 'rm -r /x' -c 'tree /' "$IMG"
	assert_success
	assert_output - <<'EOF'
/
  bank/
    alice
    bob
    note
    y/
      bob
      z/
EOF
	run "$R4SH" -c 'rm /bank/y' "$IMG"
	assert_failure 1
	assert_line "<command>:1:4: error: rm: cannot remove '/bank/y': Directory not empty"
	fsck_reiser4 "$IMG"
}

@test "a verb's error names the verb, the operand and the reason, the caret under the user's line" {
	"$R4SH" -c 'mkdir /srv' -c '/srv/x <- "1"' "$IMG"
	run "$R4SH" -c 'rm /srv' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:4: error: rm: cannot remove '/srv': Directory not empty
rm /srv
   ^~~~
EOF
	run "$R4SH" -c 'ls -z' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:4: error: ls: no option '-z' (ls [-l] [-a] [PATH...]; a name starting with '-' is written ./-z)
ls -z
   ^~
EOF
	run "$R4SH" -c 'rm -r /' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:7: error: rm: cannot remove '/': it is the root
rm -r /
      ^
EOF
	run "$R4SH" -c 'stat /nope' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:6: error: stat: cannot read '/nope': No such file or directory
stat /nope
     ^~~~~
EOF
	# the operand the error is about, among several
	run "$R4SH" -c 'mkdir /a /srv /b' "$IMG"
	assert_line --index 0 "<command>:1:10: error: mkdir: cannot create '/srv': File exists"
	assert_line --index 2 '         ^~~~'
	run "$R4SH" -c 'cp /bank/nope /bank/c' "$IMG"
	assert_line --index 0 "<command>:1:4: error: cp: cannot read '/bank/nope': No such file or directory"
	# in a script: the script's name and the verb's own line
	printf 'ls /\n\n/bank/alice <- "1"\nrm /srv\n' >"$T/s.r4"
	run "$R4SH" -f "$T/s.r4" "$IMG"
	assert_line "$T/s.r4:4:4: error: rm: cannot remove '/srv': Directory not empty"
	# -v: the R4L the verb ran, too
	run "$R4SH" -v -c 'rm /srv' "$IMG"
	assert_line '//..unlink <- #s3:srv;'
	assert_line "<command>:1:4: error: rm: cannot remove '/srv': Directory not empty"
	# ls of several paths lists each, and says what is missing
	run "$R4SH" -c 'ls /nope /srv /bank' "$IMG"
	assert_failure 1
	assert_output - <<'EOF'
<command>:1:4: error: ls: cannot read '/nope': No such file or directory
ls /nope /srv /bank
   ^~~~~
/srv:
x

/bank:
alice
bob
EOF
}

@test "stat prints times as stat(1) does, with nanoseconds" {
	"$R4SH" -c '/bank/alice/..mtime <- #1614834367' "$IMG"
	run env TZ=UTC "$R4SH" -c 'stat /bank/alice' "$IMG"
	assert_success
	assert_line 'mtime: 2021-03-04 05:06:07.000000000 +0000'
	assert_line --regexp '^atime: 20[0-9-]+ [0-9:]+\.[0-9]{9} \+0000$'
}

@test "verbs: stat, explain, .help, .mode, .info, .fsck" {
	run "$R4SH" -c 'stat /bank/alice' "$IMG"
	assert_success
	assert_line --index 0 'path: /bank/alice'
	assert_line 'type: regular'
	assert_line 'mode: 0644'
	assert_line 'size: 3'
	assert_line 'plugin: file reg40'
	run "$R4SH" -c 'explain /bank/alice <- "1"' "$IMG"
	assert_output - <<'EOF'
 0  BEGIN                                1:1-1:18
 1  LOOKUP  h0 = /bank/alice  create     1:1-1:11
 2  WRITE   h0 <- "1"                    1:1-1:18
 3  RESULT  h0                           1:1-1:18
 4  YIELD   h0                           1:1-1:18
 5  COMMIT                               1:1-1:18
EOF
	run "$R4SH" -c '.help cat' "$IMG"
	assert_output $'cat PATH...\n    print files'
	run "$R4SH" -c '.help' "$IMG"
	assert_line --index 0 'Verbs (anything else is an R4L command; one entry is one transaction):'
	assert_line --partial 'rollback                       undo everything since begin'
	run "$R4SH" -c '.mode json' -c '/bank/bob' "$IMG"
	assert_output '{"statement": 1, "range": "1:1-1:9", "path": "/bank/bob", "value": "50"}'
	run "$R4SH" -c '.info' "$IMG"
	assert_line 'files: 4'
	run "$R4SH" -c '.fsck' "$IMG"
	assert_output --partial ': clean, 4 objects, 0 problems'
}

@test "a verb's name followed by an operator is R4L: ls <- writes a file ls" {
	run "$R4SH" -c 'cd /bank' -c 'ls <- "listing"' -c 'cat ls' "$IMG"
	assert_success
	assert_output $'listing\nlisting'
}

@test "usage errors exit 2; a verb with wrong arguments says its usage" {
	run "$R4SH"
	assert_failure 2
	assert_line --index 0 'usage: r4sh [OPTIONS] IMAGE'
	run "$R4SH" -c 'mv /a' "$IMG"
	assert_failure 1
	assert_output 'usage: mv FROM TO'
}

@test "the image is locked while open read-write; --read-only reads beside it" {
	mkfifo "$T/fifo"
	"$R4SH" -f "$T/fifo" "$IMG" >"$T/holder.out" 2>&1 &
	holder=$!
	exec 5>"$T/fifo"	# the holder now has the image open and waits for its script
	for _ in $(seq 50); do
		grep -q '' /proc/$holder/fdinfo/* 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_failure 1
	assert_output "r4sh: $IMG: in use by r4sh (pid $holder); --read-only opens it anyway, without changing it"
	run "$R4SH" --read-only -c 'cat /bank/alice' "$IMG"
	assert_success
	assert_output 100
	echo '/bank/alice <- "5"' >&5
	exec 5>&-
	wait $holder
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 5
}

@test "verbs: .tree, .echo, .timer, .read, .open, .quit" {
	run "$R4SH" -c '.tree' "$IMG"
	assert_success
	assert_line --index 0 "the storage tree of $IMG: height 2"
	assert_line --index 1 --regexp '^level 2 \(twig\), block [0-9]+: 1 item, [0-9]+ bytes free$'
	assert_line --regexp '^    level 1 \(leaf\), block [0-9]+: 8 items, [0-9]+ bytes free$'
	assert_line '      [29:1(SD):0:2a:0] stat, 94 bytes'
	assert_line --regexp '^      \[10000:4\(FB\):616c6963650000:10001:0\] tail, 3 bytes$'
	run "$R4SH" -c '.echo on' -c 'cat /bank/bob' "$IMG"
	assert_output $'cat /bank/bob\n50'
	run "$R4SH" -c '.timer on' -c '/bank/bob' "$IMG"
	assert_line --index 0 50
	assert_line --index 1 --regexp '^time: real [0-9]+\.[0-9]{3} s, user [0-9]+\.[0-9]{3} s, sys [0-9]+\.[0-9]{3} s$'
	printf '/bank/carol <- "1"\nls /bank\n' >"$T/inc.r4"
	run "$R4SH" -c ".read $T/inc.r4" -c 'cat /bank/carol' "$IMG"
	assert_output $'1\nalice\nbob\ncarol\n1'
	"$R4" mkfs "$T/b.img" 32M >/dev/null
	run "$R4SH" -c ".open $T/b.img" -c 'ls /' -c '.quit' -c 'ls /' "$IMG"
	assert_success
	assert_output ''
	run "$R4SH" -c '.echo maybe' "$IMG"
	assert_failure 1
	assert_output "r4sh: .echo: on or off, not 'maybe'"
}

@test "Ctrl-C (SIGINT) stops a running command; its unit is rolled back" {
	before=$(sum)
	# 8,000 statements that each rewrite a growing file: seconds of work
	{ echo '/big <- ""'; for _ in $(seq 8000); do echo '/big <- /big + "0123456789"'; done; } \
		>"$T/long.r4"
	"$R4SH" --atomic --quiet -f "$T/long.r4" "$IMG" 2>"$T/err" &
	pid=$!
	sleep 0.3	# (a signal before the run starts stops it at its first step)
	kill -INT $pid
	rc=0
	wait $pid || rc=$?
	[ "$rc" = 1 ]
	run cat "$T/err"
	assert_line --partial 'error: interrupted'
	assert_line 'r4sh: --atomic: nothing of the script was committed'
	[ "$(sum)" = "$before" ]
}

@test "a script's stop counts every statement committed before it; a mistyped dot command; a bare number" {
	printf '/bank/a1 <- "1"\nls /bank\n/bank/a2 <- "2"\n/nope/x <- "3"\n' >"$T/r.r4"
	run "$R4SH" -c ".read $T/r.r4" "$IMG"
	assert_failure 1
	assert_line 'r4sh: stopped: 2 statements before this one committed'
	# .foo is no command, and says so before anything of the script runs
	printf '/bank/a3 <- "3"\n.foo bar\n' >"$T/d.r4"
	run "$R4SH" -f "$T/d.r4" "$IMG"
	assert_failure 3
	assert_output - <<EOF
$T/d.r4:2:1: error: .foo: no such command (.help lists them; a file named .foo is read as ./.foo)
.foo bar
^~~~
EOF
	run "$R4SH" -c 'cat /bank/a3' "$IMG"
	assert_failure 1
	run "$R4SH" -c '/bank/alice/..range/(offset <- 0, length <- #1)' "$IMG"
	assert_failure 1
	assert_line --index 0 "<command>:1:32: error: cannot read '0': No such file or directory (a number is written #0)"
}

@test "the sqlite3 shell's habits: .mode for listings, .output and .once, .shell, .timer" {
	"$R4SH" -c '/bank/alice/..mtime <- #1614834367' -c '/bank/bob/..mtime <- #1614834368' "$IMG"
	run "$R4SH" -c '.mode csv' -c 'ls -l /bank' "$IMG"
	assert_success
	assert_line --index 0 'path,name,type,mode,nlink,uid,gid,size,atime,atime_nsec,mtime,mtime_nsec,ctime,ctime_nsec'
	assert_line --index 1 --regexp '^/bank/alice,alice,regular,0644,1,0,0,3,[0-9]+,[0-9]+,1614834367,0,[0-9]+,[0-9]+$'
	[ "${#lines[@]}" -eq 3 ]
	run "$R4SH" -c '.mode list' -c 'ls /bank' "$IMG"
	assert_output $'/bank/alice|alice\n/bank/bob|bob'
	run "$R4SH" -c '.mode line' -c 'ls /bank' "$IMG"
	assert_output - <<'EOF'
path = /bank/alice
name = alice

path = /bank/bob
name = bob
EOF
	run "$R4SH" -c '.mode box' -c 'ls /bank' -c 'pwd' "$IMG"
	assert_output - <<'EOF'
┌─────────────┬───────┐
│ path        │ name  │
├─────────────┼───────┤
│ /bank/alice │ alice │
│ /bank/bob   │ bob   │
└─────────────┴───────┘
┌─────┐
│ cwd │
├─────┤
│ /   │
└─────┘
EOF
	run "$R4SH" -c '.mode yaml' "$IMG"
	assert_failure 1
	assert_line --index 0 "<command>:1:7: error: .mode: human, json, list, line, csv or box, not 'yaml'"
	# .once: the next entry only; .output: until .output alone
	run "$R4SH" -c ".once $T/once.txt" -c 'ls /bank' -c 'cat /bank/bob' "$IMG"
	assert_output 50
	assert_equal "$(cat "$T/once.txt")" $'alice\nbob'
	run "$R4SH" -c ".output $T/out.txt" -c 'cat /bank/alice' -c '/bank/bob' -c '.output' -c 'pwd' "$IMG"
	assert_output /
	assert_equal "$(cat "$T/out.txt")" $'100\n50'
	run "$R4SH" -c ".output $T/no/such/dir" "$IMG"
	assert_failure 1
	assert_line --index 0 "<command>:1:9: error: .output: cannot write '$T/no/such/dir': No such file or directory"
	# .shell: the command's output in order; a failing one fails the entry
	run "$R4SH" -c 'cat /bank/bob' -c '.shell echo from the shell' -c 'cat /bank/alice' "$IMG"
	assert_output $'50\nfrom the shell\n100'
	run "$R4SH" -c '.shell exit 3' "$IMG"
	assert_failure 1
	assert_line --index 0 '<command>:1:8: error: .shell: exit status 3'
	# .timer: real, user and system time of each entry (and of what .shell ran)
	run "$R4SH" -c '.timer on' -c '.shell sleep 0.2' "$IMG"
	assert_line --regexp '^time: real (0\.[2-9][0-9]{2}|[1-9][0-9]*\.[0-9]{3}) s, user [0-9]+\.[0-9]{3} s, sys [0-9]+\.[0-9]{3} s$'
}

@test ".backup FILE: a copy of the image as committed, while a transaction stays open" {
	run "$R4SH" -c 'begin' -c '/bank/alice <- "0"' -c ".backup $T/copy.img" -c 'commit' "$IMG"
	assert_success
	# the copy has what was committed before begin; the image what commit made
	run "$R4SH" --read-only -c 'cat /bank/alice' "$T/copy.img"
	assert_output 100
	run "$R4SH" --read-only -c 'cat /bank/alice' "$IMG"
	assert_output 0
	fsck_reiser4 "$T/copy.img"
	# sparse: no more blocks than the image
	[ "$(stat -c %b "$T/copy.img")" -le "$(stat -c %b "$IMG")" ]
	# the image itself is held by this shell: refused, and nothing changes
	run "$R4SH" -c ".backup $IMG" "$IMG"
	assert_failure 1
	assert_line --index 0 --partial "error: .backup: cannot write '$IMG': "
	run "$R4SH" --read-only -c 'cat /bank/alice' "$IMG"
	assert_output 0
}

@test "writing a write-only pseudo file prints no false error: its value is empty" {
	run "$R4SH" -c '/bank/..unlink <- "bob"' "$IMG"
	assert_success
	assert_output ''
	run "$R4SH" --json -c '/bank/..unlink <- "alice"' "$IMG"
	assert_output '{"statement": 1, "range": "1:1-1:25", "path": "/bank/..unlink", "value": ""}'
	run "$R4SH" -c 'ls /bank' "$IMG"
	assert_output ''
}
