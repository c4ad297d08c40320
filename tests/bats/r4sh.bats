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
	printf '/bank/alice <- "1"\n/bank/bob <- "2"\n' >"$T/s.r4"
	run "$R4SH" --atomic -f "$T/s.r4" "$IMG"
	assert_success
	run "$R4SH" -c 'cat /bank/alice /bank/bob' "$IMG"
	assert_output $'1\n2'
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
	assert_line '{"statement": 1, "range": "1:22-1:33", "error": "cannot read '\''/bank/nobody'\'': No such file or directory", "errno": "No such file or directory"}'
	run "$R4SH" --json -c '/bank/alice; "x\ty"' "$IMG"
	assert_output - <<'EOF'
{"statement": 1, "range": "1:1-1:11", "path": "/bank/alice", "value": "100"}
{"statement": 2, "range": "1:14-1:19", "value": "x\ty"}
EOF
}

@test "--as: access checks for another identity" {
	"$R4SH" -c '/bank/bob/..mode <- "0600"' "$IMG" >/dev/null
	run "$R4SH" --as 1000:1000 -c 'cat /bank/bob' "$IMG"
	assert_failure 1
	assert_output 'r4sh: cat: /bank/bob: Permission denied'
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
	assert_output "r4sh: cat: /bank/motd: cannot read '/bank/bob': No such file or directory"
	run "$R4SH" -c '/bank/motd' "$IMG"
	assert_output "r4sh: /bank/motd: cannot read '/bank/bob': No such file or directory"
	run "$R4SH" --json -c '/bank/motd' "$IMG"
	assert_output --partial '"why": "cannot read '"'/bank/bob'"': No such file or directory"'
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
	assert_line "<command>:1:1: error: cannot remove '/bank/y': Directory not empty"
	fsck_reiser4 "$IMG"
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
	assert_line --index 1 --regexp '^time: [0-9]+\.[0-9]{3} s$'
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
