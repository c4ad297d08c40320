#!/usr/bin/env bats
# r4sh at a terminal, driven through tmux (a private server per test,
# killed in teardown even when a test fails): the prompt, multi-line
# entries, Ctrl-C while typing, begin/rollback, tab completion, history
# recall and its file, and leaving with a transaction open.

setup() {
	load helper
	r4_setup
	need_cmd tmux
	R4SH=$R4_BUILD/r4sh
	IMG=$T/a.img
	SOCK=r4sh-test-$$-$BATS_TEST_NUMBER
	"$R4" mkfs "$IMG" 32M >/dev/null
	"$R4SH" -c 'mkdir /bank' -c '/bank/(alice <- "100", bob <- "50")' "$IMG" >/dev/null
}

teardown() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	r4_teardown
}

tm() { tmux -L "$SOCK" "$@"; }

# start the shell in a 100x40 terminal; "EXITED rc" shows when it ends
start() {
	tm new-session -d -x 100 -y 40 \
		"R4SH_HISTORY='$T/history' '$R4SH' '$IMG'; echo EXITED \$?; sleep 60"
	wait_for 'r4:/>'
}

screen() { tm capture-pane -p; }

# wait_for [-x] TEXT: until the screen shows TEXT, with -x as one whole
# line (5 s at most; the screen has no trailing spaces)
wait_for() {
	local how=-qF
	[ "$1" = -x ] && { how=-qxF; shift; }
	for _ in $(seq 100); do
		screen | grep "$how" -- "$1" && return 0
		sleep 0.05
	done
	echo "never saw: $1" >&2
	screen >&2
	return 1
}

type_line() { tm send-keys -l -- "$1"; tm send-keys Enter; }

@test "prompt, a multi-line entry, and Ctrl-C dropping an unfinished one" {
	start
	type_line '/bank/(carol <- "7",'
	wait_for '...>'
	type_line ' dave <- "8")'
	wait_for -x 8
	# a user presses Ctrl-C on what they see typed: keys still queued in
	# the terminal when the signal comes are dropped by the terminal itself
	tm send-keys -l -- '/bank/eve <- "unfinished'
	wait_for 'r4:/> /bank/eve <- "unfinished'
	tm send-keys C-c
	wait_for '^C'
	type_line 'ls /bank'
	wait_for 'dave'
	run screen
	assert_line 'r4:/> /bank/(carol <- "7",'
	assert_line '...>  dave <- "8")'
	assert_line 'r4:/> /bank/eve <- "unfinished^C'
	refute_line eve
	run "$R4SH" --read-only -c 'ls /bank' "$IMG"
	assert_output $'alice\nbob\ncarol\ndave'
}

@test "Ctrl-C stops a running script; the next line typed runs" {
	seq 20000 | awk '{printf "/f%d <- \"ran-one\";\n", $1}' >"$T/big.r4l"
	start
	type_line ".read $T/big.r4l"
	# (its values show when it stops: Ctrl-C a moment after it started)
	wait_for 'r4:/> .read '
	sleep 0.5
	tm send-keys C-c
	wait_for 'interrupted'
	type_line '/y <- "written"'
	type_line 'cat /bank/bob'
	wait_for '50'
	run "$R4SH" --read-only -c 'cat /y' "$IMG"
	assert_output written
}

@test ".open of an image that is not there keeps the one open" {
	start
	type_line '.open /nonexistent.img'
	wait_for 'No such file or directory'
	type_line 'ls /bank'
	wait_for 'alice'
	run screen
	assert_line 'bob'
}

@test ".output at the terminal: listings go to the file, the prompt stays on the screen" {
	start
	type_line ".output $T/o.txt"
	type_line 'ls /bank'
	type_line '.output'
	type_line 'pwd'
	wait_for 'r4:/> pwd'
	wait_for '/'
	run screen
	assert_line 'r4:/> ls /bank'
	refute_line 'alice'
	assert_equal "$(cat "$T/o.txt")" $'alice\nbob'
}

@test "begin marks the prompt; a failing entry is undone alone; rollback restores" {
	before=$(md5sum "$IMG")
	start
	type_line begin
	wait_for 'r4:/*>'
	type_line 'cd /bank'
	wait_for 'r4:/bank*>'
	type_line 'alice <- "1"'
	type_line 'x/y <- "2"'
	wait_for "cannot write 'x'"
	type_line 'cat alice'
	wait_for 'r4:/bank*> cat alice'
	type_line rollback
	wait_for 'r4:/bank>'
	type_line '.quit'
	wait_for 'EXITED 0'
	# inside the transaction, cat alice printed the new value
	run bash -c "tmux -L '$SOCK' capture-pane -p | grep -A1 -F 'r4:/bank*> cat alice'"
	assert_output $'r4:/bank*> cat alice\n1'
	[ "$(md5sum "$IMG")" = "$before" ]
}

@test "tab completes verbs, paths, pseudo names and parameter names" {
	start
	tm send-keys -l -- 'ca'
	tm send-keys Tab
	tm send-keys -l -- '/ba'
	tm send-keys Tab
	tm send-keys -l -- 'al'
	tm send-keys Tab
	tm send-keys Enter
	wait_for 'r4:/> cat /bank/alice'
	tm send-keys -l -- '/bank/alice/..mo'
	tm send-keys Tab Enter
	wait_for '0644'
	tm send-keys -l -- '/bank/..new/(na'
	tm send-keys Tab
	tm send-keys -l -- '<- "d", ty'
	tm send-keys Tab
	tm send-keys -l -- '<- directory)'
	tm send-keys Enter
	wait_for 'type <- directory)'
	# a member of a group P/( ... ) is a name under P; a path right after [
	tm send-keys -l -- '/bank/(al'
	tm send-keys Tab
	tm send-keys -l -- ', bo'
	tm send-keys Tab
	tm send-keys -l -- ')'
	tm send-keys Enter
	wait_for 'r4:/> /bank/(alice , bob )'
	tm send-keys -l -- 'tw/[/bank/bo'
	tm send-keys Tab
	tm send-keys -l -- ']'
	tm send-keys Enter
	wait_for 'r4:/> tw/[/bank/bob ]'
	run screen
	assert_line 'r4:/> cat /bank/alice'
	assert_line 'r4:/> /bank/alice/..mode'
	assert_line 'r4:/> /bank/..new/(name <- "d", type <- directory)'
	run "$R4SH" --read-only -c 'ls /bank' "$IMG"
	assert_line d
}

@test "history: Up recalls an entry; the history file keeps it; batch mode does not write it" {
	start
	type_line 'cat /bank/bob'
	wait_for '50'
	tm send-keys Up
	wait_for 'r4:/> cat /bank/bob'
	tm send-keys C-u
	type_line '.quit'
	wait_for 'EXITED 0'
	run grep -c 'cat' "$T/history"
	assert_output 1
	R4SH_HISTORY=$T/history2 "$R4SH" -c 'cat /bank/bob' "$IMG" >/dev/null
	[ ! -e "$T/history2" ]
}

@test "Ctrl-D with a transaction open asks; no keeps it, yes discards and leaves" {
	start
	type_line begin
	type_line '/bank/alice <- "9"'
	wait_for 'r4:/*>'
	tm send-keys C-d
	wait_for 'discard it and leave? [y/N]'
	type_line n
	wait_for 'r4:/*>'
	tm send-keys C-d
	wait_for 'discard it and leave? [y/N]'
	type_line y
	wait_for 'EXITED 0'
	run "$R4SH" -c 'cat /bank/alice' "$IMG"
	assert_output 100
}
