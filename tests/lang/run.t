# Run cases: a fresh 16 MiB image, the setup (run as root), then the input;
# the outcome is each value, the diagnostics, the exit code, and the namespace
# (tests/lang/README.md).  Outcomes were made with R4_LANG_BLESS=1 and read by hand.

=== write replaces a file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "7"
--- outcome
value /bank/alice "7"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "7"
/bank/bob 0644 0:0 "50"

=== write creates a missing file in an existing directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/carol <- "30"
--- outcome
value /bank/carol "30"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/carol 0644 0:0 "30"

=== write into a missing directory is ENOENT
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/x/y <- "1"
--- outcome
<command>:1:1: error: cannot write '/bank/x': No such file or directory
/bank/x/y <- "1"
^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== write under a file is ENOTDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/y <- "1"
--- outcome
<command>:1:1: error: cannot write '/bank/alice/y': Not a directory
/bank/alice/y <- "1"
^~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== write to a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank <- "1"
--- outcome
<command>:1:1: error: cannot write '/bank': Is a directory
/bank <- "1"
^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== append to a file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <<- "0"
--- outcome
value /bank/alice "1000"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1000"
/bank/bob 0644 0:0 "50"

=== append creates a missing file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/log <<- "a\n"; /bank/log <<- "b\n"
--- outcome
value /bank/log "a\n"
value /bank/log "a\nb\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "a\nb\n"

=== prepend reads before it writes
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1" + /bank/alice
--- outcome
value /bank/alice "1100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1100"
/bank/bob 0644 0:0 "50"

=== write an empty value truncates
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- ""
--- outcome
value /bank/alice ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 ""
/bank/bob 0644 0:0 "50"

=== concatenation of files and text
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/sum <- /bank/alice + "+" + /bank/bob
--- outcome
value /bank/sum "100+50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/sum 0644 0:0 "100+50"

=== operands are read in order
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
(/bank/f <- "1") + (/bank/f <- "2")
--- outcome
value "12"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/f 0644 0:0 "2"

=== assignment chain is right associative
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/a <- /bank/b <- "1"
--- outcome
value /bank/a "1"
exit 0
/bank/ 0755 0:0
/bank/a 0644 0:0 "1"
/bank/alice 0644 0:0 "100"
/bank/b 0644 0:0 "1"
/bank/bob 0644 0:0 "50"

=== value of an assignment is its target
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "9"
--- outcome
value /bank/alice "9"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "9"
/bank/bob 0644 0:0 "50"

=== binary literal with NUL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input-escaped
/bank/raw <- #s3:a\0b
--- outcome
value /bank/raw "a\x00b"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/raw 0644 0:0 "a\x00b"

=== number literal is decimal text
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/n <- #0x1F
--- outcome
value /bank/n "31"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/n 0644 0:0 "31"

=== missing file read is ENOENT with the path up to the missing name
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/dave <- /bank/carol/balance
--- outcome
<command>:1:15: error: cannot read '/bank/carol': No such file or directory
/bank/dave <- /bank/carol/balance
              ^~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== spec example 10: the unit rolls back
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "0"; /bank/bob <- /bank/nobody
--- outcome
<command>:1:34: error: cannot read '/bank/nobody': No such file or directory
/bank/alice <- "0"; /bank/bob <- /bank/nobody
                                 ^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== read a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/x <- /bank
--- outcome
<command>:1:12: error: cannot read '/bank': Is a directory
/bank/x <- /bank
           ^~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== relative path from the current directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- cwd
/bank
--- input
alice <- "1"; bob
--- outcome
value /bank/alice "1"
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "50"

=== bad current directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- cwd
/nowhere
--- input
x
--- outcome
<command>:1:1: error: bad current directory '/nowhere': No such file or directory
x
^
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== dot and dotdot
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/./alice <- "2"; /bank/../bank/bob; /../bank/alice
--- outcome
value /bank/alice "2"
value /bank/bob "50"
value /bank/alice "2"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "2"
/bank/bob 0644 0:0 "50"

=== quoted names are literal
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/`a b' <- "q"; /bank/`if' <- "kw"; /bank/`if'
--- outcome
value /bank/a b "q"
value /bank/if "kw"
value /bank/if "kw"
exit 0
/bank/ 0755 0:0
/bank/a b 0644 0:0 "q"
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/if 0644 0:0 "kw"

=== symlink to a plain path is its spelling
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/cur -> /bank/alice; /bank/cur
--- outcome
value /bank/cur "/bank/alice"
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/cur 0777 0:0 -> "/bank/alice"

=== symlink to a string is literal
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/rel -> "alice"; /bank/rel
--- outcome
value /bank/rel "alice"
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/rel 0777 0:0 -> "alice"

=== write through a symlink
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/cur -> /bank/alice; /bank/cur <- "5"
--- outcome
value /bank/cur "/bank/alice"
value /bank/alice "5"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "5"
/bank/bob 0644 0:0 "50"
/bank/cur 0777 0:0 -> "/bank/alice"

=== symlink as an intermediate component
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/l -> "/bank"; /l/bob
--- outcome
value /l "/bank"
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/l 0777 0:0 -> "/bank"

=== an existing symlink is replaced
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/cur -> "alice"; /bank/cur -> "bob"; /bank/cur
--- outcome
value /bank/cur "alice"
value /bank/cur "bob"
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/cur 0777 0:0 -> "bob"

=== symlink over a file is EEXIST
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice -> "bob"
--- outcome
<command>:1:1: error: cannot make '/bank/alice' a symlink: File exists
/bank/alice -> "bob"
^~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== symlink over a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank -> "x"
--- outcome
<command>:1:1: error: cannot make '/bank' a symlink: Is a directory
/bank -> "x"
^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== symlink loop is ELOOP
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/a -> "/b"; /b -> "/a"; /a/x
--- outcome
<command>:1:25: error: cannot read '/a': Too many levels of symbolic links
/a -> "/b"; /b -> "/a"; /a/x
                        ^~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== dangling symlink written creates its target
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/d -> "dave"; /bank/d <- "new"
--- outcome
value /bank/d "dave"
value /bank/dave "new"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d 0777 0:0 -> "dave"
/bank/dave 0644 0:0 "new"

=== pseudo name under a symlink applies to the link
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/cur -> "alice"; /bank/cur/..type; /bank/cur/..body
--- outcome
value /bank/cur "alice"
value /bank/cur/..type "symlink"
value /bank/cur/..body "alice"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/cur 0777 0:0 -> "alice"

=== symlink body is changed in place
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/cur -> "alice"; /bank/cur/..body <- "bob"; /bank/cur
--- outcome
value /bank/cur "alice"
value /bank/cur/..body "bob"
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/cur 0777 0:0 -> "bob"

=== exist of present and missing names
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
exist /bank/alice; exist /bank/zed; exist /bank/alice/x
--- outcome
value "1"
value ""
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== comparisons are byte-wise
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
#9 lt #10; "abc" lt "abd"; "ab" lt "abc"; "b" ge "abc"; /bank/alice eq "100"
--- outcome
value ""
value "1"
value "1"
value "1"
value "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== not and or short-circuit
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
not "" and "y"; "" or "z"; "a" or /bank/nothing
--- outcome
value "1"
value "1"
value "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== and stops at the first empty operand
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
"" and /bank/nothing
--- outcome
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== if without else yields empty when false
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
if "" then /bank/alice <- "x"
--- outcome
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== if chooses a branch
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
if /bank/alice eq "100" then /bank/alice <- "99" else /bank/bob <- "0"
--- outcome
value /bank/alice "99"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "99"
/bank/bob 0644 0:0 "50"

=== create a directory unless it exists
--- input
if not exist /srv then /..new/(name <- "srv", type <- directory); if not exist /srv then /..new/(name <- "srv", type <- directory)
--- outcome
value /srv (Is a directory)
value ""
exit 0
/srv/ 0755 0:0

=== spec section 9 example: stale
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice <- "60"
--- input
tw/pay[ if /bank/alice eq "100" then /bank/alice <- "40" else /bank/log <<- "stale\n" ]
--- outcome
value /bank/log "stale\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "60"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "stale\n"

=== spec section 9 example: pays
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/pay[ if /bank/alice eq "100" then /bank/alice <- "40" else /bank/log <<- "stale\n" ]
--- outcome
value /bank/alice "40"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "40"
/bank/bob 0644 0:0 "50"

=== atomic transfer
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/transfer[ /bank/alice <- "60"; /bank/bob <- "90" ]
--- outcome
value /bank/alice "60"
value /bank/bob "90"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "60"
/bank/bob 0644 0:0 "90"

=== failed transfer changes nothing
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/transfer[ /bank/alice <- "60"; /bank/bob/x <- "90" ]
--- outcome
<command>:1:35: error: cannot write '/bank/bob/x': Not a directory
tw/transfer[ /bank/alice <- "60"; /bank/bob/x <- "90" ]
                                  ^~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== guarded transfer
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/xfer[ if /bank/alice eq "100" and /bank/bob eq "50" then (/bank/alice <- "10", /bank/bob <- "140") else "stale" ]
--- outcome
value /bank/alice "10"
value /bank/bob "140"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "10"
/bank/bob 0644 0:0 "140"

=== compare-and-swap swaps
--- setup
/lock <- "free"
--- input
tw/[ if /lock eq "free" then /lock <- "held" else "busy" ]
--- outcome
value /lock "held"
exit 0
/lock 0644 0:0 "held"

=== compare-and-swap busy
--- setup
/lock <- "held"
--- input
tw/[ if /lock eq "free" then /lock <- "held" else "busy" ]
--- outcome
value "busy"
exit 0
/lock 0644 0:0 "held"

=== script: units before the failing one stay
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- script
--- input
/bank/alice <- "1"
/bank/bob <- /bank/nobody
/bank/carol <- "3"
--- outcome
value /bank/alice "1"
<command>:2:14: error: cannot read '/bank/nobody': No such file or directory
/bank/bob <- /bank/nobody
             ^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "50"

=== script: a tw line is one unit
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- script
--- input
/bank/alice <- "1"
tw/t[ /bank/bob <- "2"; /bank/x/y <- "3" ]
--- outcome
value /bank/alice "1"
<command>:2:25: error: cannot write '/bank/x': No such file or directory
tw/t[ /bank/bob <- "2"; /bank/x/y <- "3" ]
                        ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "50"

=== command: one unit for all statements
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"
/bank/bob <- "2"
/bank/x/y <- "3"
--- outcome
<command>:3:1: error: cannot write '/bank/x': No such file or directory
/bank/x/y <- "3"
^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== nested tw groups join the unit
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/a[ /bank/alice <- "1"; tw/b[ /bank/bob <- "2" ] ]; /bank/zz/q <- "x"
--- outcome
<command>:1:55: error: cannot write '/bank/zz': No such file or directory
tw/a[ /bank/alice <- "1"; tw/b[ /bank/bob <- "2" ] ]; /bank/zz/q <- "x"
                                                      ^~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== result children of a target
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "100"; /bank/log <<- /bank/alice/assign_length + " bytes\n"; /bank/alice/assign_result
--- outcome
value /bank/alice "100"
value /bank/log "3 bytes\n"
value "0"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "3 bytes\n"

=== result children hide real entries
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "d", type <- directory); /bank/d/assign_result <- "real"; /bank/d/..mode <- "0700"; /bank/d/..mode/assign_result; /bank/d/assign_result
--- outcome
value /bank/d (Is a directory)
value /bank/d/assign_result "real"
value /bank/d/..mode "0700"
value "0"
value /bank/d/assign_result "real"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d/ 0700 0:0
/bank/d/assign_result 0644 0:0 "real"

=== result child without an assignment reads a real entry
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/..new/(name <- "d", type <- directory); /bank/d/assign_result <- "real"
--- input
/bank/d/assign_result
--- outcome
value /bank/d/assign_result "real"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d/ 0755 0:0
/bank/d/assign_result 0644 0:0 "real"

=== named result catches a failure
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/carol <- /import/carol; if r/assign_result ne "0" then /bank/log <<- "import failed: " + r/assign_result + "\n"
--- outcome
value ""
value /bank/log "import failed: 2\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "import failed: 2\n"

=== named result on success
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/carol <- "5"; r/assign_result + " " + r/assign_length
--- outcome
value /bank/carol "5"
value "0 1"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/carol 0644 0:0 "5"

=== named result undoes only its own effects
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; r <= /bank/bob <- /bank/nobody; /bank/log <- r/assign_result
--- outcome
value /bank/alice "1"
value ""
value /bank/log "2"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "2"

=== named result on a window
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/alice/..range/(offset <- #1, length <- #1) <- "99"; r/assign_length; /bank/alice
--- outcome
value /bank/alice/..range "9"
value "2"
value /bank/alice "1990"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1990"
/bank/bob 0644 0:0 "50"

=== named result bracket scope ends
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /r <- "file r"
--- input
(r <= /bank/a <- "1"; /bank/n <- r/assign_length); /bank/copy <- r
--- outcome
value /bank/a "1"
value /bank/n "1"
value /bank/copy "file r"
exit 0
/bank/ 0755 0:0
/bank/a 0644 0:0 "1"
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/copy 0644 0:0 "file r"
/bank/n 0644 0:0 "1"
/r 0644 0:0 "file r"

=== named result in an untaken branch is unbound
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
(if "" then (r <= /bank/a <- "1"; "x") else "y"); "z"
--- outcome
value "y"
value "z"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== nested named results: the inner one catches
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
o <= /bank/out <- (i <= /bank/x/y <- "1"; i/assign_result + "," + /bank/alice); o/assign_result; /bank/out
--- outcome
value /bank/out "2,100"
value "0"
value /bank/out "2,100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/out 0644 0:0 "2,100"

=== nested named results: the outer one catches
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
o <= /bank/out <- (i <= /bank/x/y <- "1"; /bank/zz); o/assign_result; exist /bank/out
--- outcome
value ""
value "2"
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== named result catch then later failure rolls back all
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/x/y <- "1"; /bank/log <- r/assign_result; /bank/q/z <- "2"
--- outcome
<command>:1:54: error: cannot write '/bank/q': No such file or directory
r <= /bank/x/y <- "1"; /bank/log <- r/assign_result; /bank/q/z <- "2"
                                                     ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== dereference a path held in a file
--- setup
/..new/(name <- "etc", type <- directory); /etc/active <- "/bank/alice\n"; /..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/tmp2 <- */etc/active
--- outcome
value /tmp2 "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/etc/ 0755 0:0
/etc/active 0644 0:0 "/bank/alice\n"
/tmp2 0644 0:0 "100"

=== dereference as a target
--- setup
/..new/(name <- "etc", type <- directory); /etc/active <- "/bank/alice\n"; /..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
(*/etc/active) <- "x"; (*/etc/active)/..mode <- "0444"; /bank/alice/..mode
--- outcome
value /bank/alice "x"
value /bank/alice/..mode "0444"
value /bank/alice/..mode "0444"
exit 0
/bank/ 0755 0:0
/bank/alice 0444 0:0 "x"
/bank/bob 0644 0:0 "50"
/etc/ 0755 0:0
/etc/active 0644 0:0 "/bank/alice\n"

=== dereference of empty bytes is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
*""
--- outcome
<command>:1:1: error: cannot dereference empty bytes: Invalid argument
*""
^~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== dereference of a relative path
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- cwd
/bank
--- input
*"alice"
--- outcome
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== dereference of a missing name
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
*"/bank/nobody"
--- outcome
<command>:1:1: error: cannot read '/bank/nobody': No such file or directory
*"/bank/nobody"
^~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== read metadata
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..mtime <- #1700000000; /bank/alice/..atime <- #1600000000
--- input
/bank/alice/..uid; /bank/alice/..owner; /bank/alice/..gid; /bank/alice/..mode; /bank/alice/..type; /bank/alice/..size; /bank/alice/..nlink; /bank/alice/..mtime; /bank/alice/..atime
--- outcome
value /bank/alice/..uid "0"
value /bank/alice/..uid "0"
value /bank/alice/..gid "0"
value /bank/alice/..mode "0644"
value /bank/alice/..type "regular"
value /bank/alice/..size "3"
value /bank/alice/..nlink "1"
value /bank/alice/..mtime "1700000000"
value /bank/alice/..atime "1600000000"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== types
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/l -> "alice"
--- input
/bank/..type; /bank/l/..type; /..type
--- outcome
value /bank/..type "directory"
value /bank/l/..type "symlink"
value /..type "directory"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/l 0777 0:0 -> "alice"

=== oid and key of the root
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/..oid; /..key; /..name
--- outcome
value /..oid "42"
value /..key "29:1:0:2a:0"
value /..name "/"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== name of an object
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name; /bank/..name
--- outcome
value /bank/alice/..name "alice"
value /bank/..name "bank"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chmod
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "0640"; /bank/alice/..mode
--- outcome
value /bank/alice/..mode "0640"
value /bank/alice/..mode "0640"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chmod takes 1 to 4 octal digits
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "7"; /bank/alice/..mode; /bank/alice/..mode <- "4755"; /bank/alice/..mode
--- outcome
value /bank/alice/..mode "0007"
value /bank/alice/..mode "0007"
value /bank/alice/..mode "4755"
value /bank/alice/..mode "4755"
exit 0
/bank/ 0755 0:0
/bank/alice 4755 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chmod with a trailing LF
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "600\n"; /bank/alice/..mode
--- outcome
value /bank/alice/..mode "0600"
value /bank/alice/..mode "0600"
exit 0
/bank/ 0755 0:0
/bank/alice 0600 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chmod malformed is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "0999"
--- outcome
<command>:1:1: error: '..mode' takes 1 to 4 octal digits: Invalid argument
/bank/alice/..mode <- "0999"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chmod too long is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "07777"
--- outcome
<command>:1:1: error: '..mode' takes 1 to 4 octal digits: Invalid argument
/bank/alice/..mode <- "07777"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== chown as root
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..uid <- #1001; /bank/alice/..gid <- #100; /bank/alice/..uid + ":" + /bank/alice/..gid
--- outcome
value /bank/alice/..uid "1001"
value /bank/alice/..gid "100"
value "1001:100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 1001:100 "100"
/bank/bob 0644 0:0 "50"

=== chown malformed is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..uid <- "alice"
--- outcome
<command>:1:1: error: '..uid' takes a decimal id: Invalid argument
/bank/alice/..uid <- "alice"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== truncate and extend through size
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..size <- #1; /bank/alice; /bank/bob/..size <- #4; /bank/bob
--- outcome
value /bank/alice/..size "1"
value /bank/alice "1"
value /bank/bob/..size "4"
value /bank/bob "50\x00\x00"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "50\x00\x00"

=== size of a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..size <- #0
--- outcome
<command>:1:1: error: cannot write '/bank/..size': Is a directory
/bank/..size <- #0
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== set mtime
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mtime <- #1700000000; /bank/alice/..mtime
--- outcome
value /bank/alice/..mtime "1700000000"
value /bank/alice/..mtime "1700000000"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== negative time is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mtime <- #-1
--- outcome
<command>:1:1: error: cannot write '/bank/alice/..mtime': the format stores times from 0 to 4294967295: Invalid argument
/bank/alice/..mtime <- #-1
^~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== ctime is read-only at run time
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
(*"/bank/alice/..ctime") <- "1"
--- outcome
<command>:1:1: error: cannot write '/bank/alice/..ctime': it is read-only: Permission denied
(*"/bank/alice/..ctime") <- "1"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== nlink counts links
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..link/(name <- "al", target <- /bank/alice); /bank/alice/..nlink; /bank/al
--- outcome
value /bank/al "100"
value /bank/alice/..nlink "2"
value /bank/al "100"
exit 0
/bank/ 0755 0:0
/bank/al 0644 0:0 "100" links 2
/bank/alice 0644 0:0 "100" links 2
/bank/bob 0644 0:0 "50"

=== list of a file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..list
--- outcome
value /bank/alice/..list "..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..body\n..name\n..acl\n..audit\n..range\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== list of a directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..list
--- outcome
value /bank/..list ".\n..\nalice\nbob\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..name\n..unlink\n..acl\n..audit\n..new\n..link\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== body of a file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..body; /bank/alice/..body <- "new"; /bank/alice/..body <<- "er"; /bank/alice
--- outcome
value /bank/alice/..body "100"
value /bank/alice/..body "new"
value /bank/alice/..body "newer"
value /bank/alice "newer"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "newer"
/bank/bob 0644 0:0 "50"

=== body of a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..body
--- outcome
value /bank/..body (Is a directory)
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename in place
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name <- "alicia"; /bank/..list
--- outcome
value /bank/alicia/..name "alicia"
value /bank/..list ".\n..\nalicia\nbob\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..name\n..unlink\n..acl\n..audit\n..new\n..link\n"
exit 0
/bank/ 0755 0:0
/bank/alicia 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename onto a taken name is EEXIST
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name <- "bob"
--- outcome
<command>:1:1: error: cannot rename '/bank/alice' to 'bob': File exists
/bank/alice/..name <- "bob"
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename to an invalid name is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name <- "a/b"
--- outcome
<command>:1:1: error: cannot rename '/bank/alice' to 'a/b': Invalid argument
/bank/alice/..name <- "a/b"
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename to a pseudo name is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name <- "..x"
--- outcome
<command>:1:1: error: cannot rename '/bank/alice' to '..x': Invalid argument
/bank/alice/..name <- "..x"
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename the root is EBUSY
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/..name <- "x"
--- outcome
<command>:1:1: error: cannot rename '/': Device or resource busy
/..name <- "x"
^~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rename then unlink (spec example 11)
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..name <- "final"; /bank/..unlink <- "final"
--- outcome
value /bank/final/..name "final"
value /bank/..unlink ""
exit 0
/bank/ 0755 0:0
/bank/bob 0644 0:0 "50"

=== unlink a missing entry is ENOENT
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..unlink <- "nobody"
--- outcome
<command>:1:1: error: cannot remove '/bank/nobody': No such file or directory
/bank/..unlink <- "nobody"
^~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== unlink a non-empty directory is ENOTEMPTY
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/..unlink <- "bank"
--- outcome
<command>:1:1: error: cannot remove '/bank': Directory not empty
/..unlink <- "bank"
^~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== unlink an empty directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "e", type <- directory); /bank/..unlink <- "e"
--- outcome
value /bank/e (Is a directory)
value /bank/..unlink ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== unlink in a file is ENOTDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..unlink <- "x"
--- outcome
<command>:1:1: error: cannot remove entries of '/bank/alice': Not a directory
/bank/alice/..unlink <- "x"
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== write-only unlink read at run time
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
*"/bank/..unlink"
--- outcome
value /bank/..unlink ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== plugin set of a directory and a file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..plugin; /bank/alice/..plugin; /bank/..plugin/hash
--- outcome
value /bank/..plugin "file dir40\nhash r5_hash\nfibration ext_1_fibre\n"
value /bank/alice/..plugin "file reg40\nformatting smart\n"
value /bank/..plugin/hash "r5_hash"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== unknown plugin member
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..plugin/colour
--- outcome
value /bank/..plugin/colour (No such file or directory)
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== access rules of a file without any
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..acl
--- outcome
value /bank/alice/..acl ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== access rule block
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..acl/(uid <- #1001, access <- write)
--- outcome
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== audit block
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- clock
1700000000
--- input
/bank/alice/..audit/(log <- /bank/bob)
--- outcome
value ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "501700000000 0 setattr /bank/alice 0\n"

=== new file with defaults
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "f")
--- outcome
value /bank/f ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/f 0644 0:0 ""

=== new file with perm and contents (spec example 9)
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "key", perm <- "0600") <- "k3y\n"
--- outcome
value /bank/key "k3y\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/key 0600 0:0 "k3y\n"

=== new directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "d", type <- directory)/(x <- "1")
--- outcome
value /bank/d/x "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d/ 0755 0:0
/bank/d/x 0644 0:0 "1"

=== new symlink
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "s", type <- symlink, target <- "alice"); /bank/s
--- outcome
value /bank/s "alice"
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/s 0777 0:0 -> "alice"

=== new over a taken name is EEXIST
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "alice")
--- outcome
<command>:1:1: error: cannot create '/bank/alice': File exists
/bank/..new/(name <- "alice")
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== new with a bad name is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "..x")
--- outcome
<command>:1:1: error: cannot create '..x' in '/bank': Invalid argument
/bank/..new/(name <- "..x")
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== new with a bad perm is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "x", perm <- "rw")
--- outcome
<command>:1:1: error: 'perm' takes 1 to 4 octal digits: Invalid argument
/bank/..new/(name <- "x", perm <- "rw")
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== new in a file is ENOTDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..new/(name <- "x")
--- outcome
<command>:1:1: error: cannot create in '/bank/alice': Not a directory
/bank/alice/..new/(name <- "x")
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== new aggregate
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "p", type <- aggregate)
--- outcome
value /bank/p ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/p/ 0755 0:0

=== umask applies to new objects
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- "f"); /bank/..new/(name <- "d", type <- directory); /bank/g <- "1"
--- outcome
value /bank/f ""
value /bank/d (Is a directory)
value /bank/g "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d/ 0755 0:0
/bank/f 0644 0:0 ""
/bank/g 0644 0:0 "1"

=== name from a computed value
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..new/(name <- /bank/bob + "x")
--- outcome
value /bank/50x ""
exit 0
/bank/ 0755 0:0
/bank/50x 0644 0:0 ""
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== hard link (spec example 13)
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..link/(name <- "b2", target <- /bank/bob); /bank/b2
--- outcome
value /bank/b2 "50"
value /bank/b2 "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/b2 0644 0:0 "50" links 2
/bank/bob 0644 0:0 "50" links 2

=== hard link to a directory is EPERM
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/..link/(name <- "b", target <- /bank)
--- outcome
<command>:1:1: error: cannot link to '/bank': it is a directory: Operation not permitted
/..link/(name <- "b", target <- /bank)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== hard link onto a taken name is EEXIST
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..link/(name <- "alice", target <- /bank/bob)
--- outcome
<command>:1:1: error: cannot link '/bank/alice' to '/bank/bob': File exists
/bank/..link/(name <- "alice", target <- /bank/bob)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== window read
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #3); /doc/..range/(offset <- #8); /doc/..range/(offset <- #10); /doc/..range/(offset <- #20, length <- #5)
--- outcome
value /doc/..range "234"
value /doc/..range "89"
value /doc/..range ""
value /doc/..range ""
exit 0
/doc 0644 0:0 "0123456789"

=== window read length 0
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #0, length <- #0)
--- outcome
value /doc/..range ""
exit 0
/doc 0644 0:0 "0123456789"

=== window copy (spec example 14)
--- setup
/doc <- "0123456789"
--- input
/head <- /doc/..range/(offset <- #0, length <- #4)
--- outcome
value /head "0123"
exit 0
/doc 0644 0:0 "0123456789"
/head 0644 0:0 "0123"

=== shift insert (spec example 15)
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #0) <- "ab"; /doc
--- outcome
value /doc/..range ""
value /doc "01ab23456789"
exit 0
/doc 0644 0:0 "01ab23456789"

=== shift replace grows
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #2) <- "abcd"; /doc
--- outcome
value /doc/..range "ab"
value /doc "01abcd456789"
exit 0
/doc 0644 0:0 "01abcd456789"

=== shift replace shrinks
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #5) <- "x"; /doc
--- outcome
value /doc/..range "x789"
value /doc "01x789"
exit 0
/doc 0644 0:0 "01x789"

=== shift cut with an empty value
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #5) <- ""; /doc
--- outcome
value /doc/..range "789"
value /doc "01789"
exit 0
/doc 0644 0:0 "01789"

=== shift default length is to the end
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #5) <- "!"; /doc
--- outcome
value /doc/..range "!"
value /doc "01234!"
exit 0
/doc 0644 0:0 "01234!"

=== shift at the end appends
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #10) <- "ab"; /doc
--- outcome
value /doc/..range "ab"
value /doc "0123456789ab"
exit 0
/doc 0644 0:0 "0123456789ab"

=== shift beyond the end extends with zeros
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #12) <- "ab"; /doc
--- outcome
value /doc/..range "ab"
value /doc "0123456789\x00\x00ab"
exit 0
/doc 0644 0:0 "0123456789\x00\x00ab"

=== shift oversized window
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #8, length <- #100) <- "X"; /doc
--- outcome
value /doc/..range "X"
value /doc "01234567X"
exit 0
/doc 0644 0:0 "01234567X"

=== zero mode pads
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #4, mode <- zero) <- "ab"; /doc
--- outcome
value /doc/..range "ab\x00\x00"
value /doc "01ab\x00\x006789"
exit 0
/doc 0644 0:0 "01ab\x00\x006789"

=== zero mode cuts
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #2, mode <- zero) <- "abcdef"; /doc
--- outcome
value /doc/..range "ab"
value /doc "01ab456789"
exit 0
/doc 0644 0:0 "01ab456789"

=== zero mode past the end
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #8, length <- #4, mode <- zero) <- "a"; /doc
--- outcome
value /doc/..range "a\x00\x00\x00"
value /doc "01234567a\x00\x00\x00"
exit 0
/doc 0644 0:0 "01234567a\x00\x00\x00"

=== zero mode length 0 writes nothing
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #3, length <- #0, mode <- zero) <- "abc"; /doc
--- outcome
value /doc/..range ""
value /doc "0123456789"
exit 0
/doc 0644 0:0 "0123456789"

=== overlay (spec example 16)
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #4, mode <- overlay) <- "ab"; /doc
--- outcome
value /doc/..range "ab45"
value /doc "01ab456789"
exit 0
/doc 0644 0:0 "01ab456789"

=== overlay drops excess bytes
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2, length <- #2, mode <- overlay) <- "abcdef"; /doc
--- outcome
value /doc/..range "ab"
value /doc "01ab456789"
exit 0
/doc 0644 0:0 "01ab456789"

=== overlay default length
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #7, mode <- overlay) <- "abcdef"; /doc
--- outcome
value /doc/..range "abc"
value /doc "0123456abc"
exit 0
/doc 0644 0:0 "0123456abc"

=== overlay beyond the end extends only
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #12, mode <- overlay) <- "ab"; /doc/..size
--- outcome
value /doc/..range ""
value /doc/..size "12"
exit 0
/doc 0644 0:0 "0123456789\x00\x00"

=== window of a directory is EISDIR
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..range/(offset <- #0)
--- outcome
<command>:1:1: error: cannot take a window of '/bank': Is a directory
/bank/..range/(offset <- #0)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== window negative offset is EINVAL
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #-1)
--- outcome
<command>:1:1: error: 'offset' takes a decimal number from 0: Invalid argument
/doc/..range/(offset <- #-1)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/doc 0644 0:0 "0123456789"

=== window offset not a number is EINVAL
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- "x")
--- outcome
<command>:1:1: error: 'offset' takes a decimal number from 0: Invalid argument
/doc/..range/(offset <- "x")
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/doc 0644 0:0 "0123456789"

=== window offset from a file
--- setup
/doc <- "0123456789"; /off <- "7\n"
--- input
/doc/..range/(offset <- /off)
--- outcome
value /doc/..range "789"
exit 0
/doc 0644 0:0 "0123456789"
/off 0644 0:0 "7\n"

=== window of a missing file is ENOENT
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/nothing/..range/(offset <- #0) <- "x"
--- outcome
<command>:1:1: error: cannot read '/nothing': No such file or directory
/nothing/..range/(offset <- #0) <- "x"
^~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== scope (spec example 2)
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/(alice <- "100", bob <- "50")
--- outcome
value /bank/alice "100"
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== scope value then further components
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/(carol <- "")/..size
--- outcome
value /bank/carol/..size "0"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/carol 0644 0:0 ""

=== scope on a missing object is ENOENT
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/nothing/(a <- "1")
--- outcome
<command>:1:1: error: cannot read '/nothing': No such file or directory
/nothing/(a <- "1")
^~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== bracket first keeps the current directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- cwd
/bank
--- input
(alice)
--- outcome
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== independent members
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/(alice <- "1", bob <- "2"); /bank/alice + /bank/bob
--- outcome
value /bank/alice "1"
value /bank/bob "2"
value "12"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1"
/bank/bob 0644 0:0 "2"

=== run-time conflict through a symlink
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/al -> "alice"
--- input
/bank/(alice <- "1", al <- "2")
--- outcome
<command>:1:22: error: conflict: '/bank/alice' is changed by two members of a ',' group: Device or resource busy
/bank/(alice <- "1", al <- "2")
                     ^~~~~~~~~
<command>:1:8: note: the other member changes it here
/bank/(alice <- "1", al <- "2")
       ^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/al 0777 0:0 -> "alice"
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== run-time conflict through a hard link
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/..link/(name <- "hl", target <- /bank/alice)
--- input
/bank/alice <- "1", /bank/hl <- "2"
--- outcome
<command>:1:21: error: conflict: '/bank/hl' is changed by two members of a ',' group: Device or resource busy
/bank/alice <- "1", /bank/hl <- "2"
                    ^~~~~~~~~~~~~~~
<command>:1:1: note: the other member changes it here
/bank/alice <- "1", /bank/hl <- "2"
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100" links 2
/bank/bob 0644 0:0 "50"
/bank/hl 0644 0:0 "100" links 2

=== run-time conflict through dereference
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- cwd
/bank
--- input
(*"/bank/alice") <- "1", (*"alice") <- "2"
--- outcome
<command>:1:26: error: conflict: '/bank/alice' is changed by two members of a ',' group: Device or resource busy
(*"/bank/alice") <- "1", (*"alice") <- "2"
                         ^~~~~~~~~~~~~~~~~
<command>:1:1: note: the other member changes it here
(*"/bank/alice") <- "1", (*"alice") <- "2"
^~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== readers do not conflict
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/x <- /bank/alice, /bank/y <- /bank/alice
--- outcome
value /bank/x "100"
value /bank/y "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/x 0644 0:0 "100"
/bank/y 0644 0:0 "100"

=== reader and writer conflict
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/x <- /bank/alice, (*"/bank/alice") <- "2"
--- outcome
<command>:1:25: error: conflict: '/bank/alice' is changed by two members of a ',' group: Device or resource busy
/bank/x <- /bank/alice, (*"/bank/alice") <- "2"
                        ^~~~~~~~~~~~~~~~~~~~~~~
<command>:1:12: note: the other member uses it here
/bank/x <- /bank/alice, (*"/bank/alice") <- "2"
           ^~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== create and lookup of one name conflict
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/(new <- "1", y <- (*"/bank/new"))
--- outcome
<command>:1:26: error: conflict: '/bank/new' is used by two members of a ',' group: Device or resource busy
/bank/(new <- "1", y <- (*"/bank/new"))
                         ^~~~~~~~~~~~
<command>:1:8: note: the other member changes it here
/bank/(new <- "1", y <- (*"/bank/new"))
       ^~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== metadata and contents are separate units
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..mode <- "0600", /bank/alice <- "1"
--- outcome
value /bank/alice/..mode "0600"
value /bank/alice "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0600 0:0 "1"
/bank/bob 0644 0:0 "50"

=== owner may write
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/alice <- "1"
--- outcome
value /bank/alice "1"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "1"
/bank/bob 0600 0:0 "50"

=== others may not read
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/bob
--- outcome
value /bank/bob (Permission denied)
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== group may read
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1001:1000
--- input
/bank/alice
--- outcome
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== group may not write
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1001:1000
--- input
/bank/alice <- "1"
--- outcome
<command>:1:1: error: cannot write '/bank/alice': Permission denied
/bank/alice <- "1"
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== supplementary group
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1001:50,1000
--- input
/bank/alice
--- outcome
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== creating needs write on the directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/carol <- "1"
--- outcome
<command>:1:1: error: cannot change '/bank/carol': Permission denied
/bank/carol <- "1"
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== search permission on a directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"; /bank/..mode <- "0700"
--- as
1000:1000
--- input
/bank/alice
--- outcome
<command>:1:1: error: cannot read '/bank/alice': Permission denied
/bank/alice
^~~~~~~~~~~
exit 1
/bank/ 0700 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== root bypasses mode bits
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
0:0
--- input
/bank/bob
--- outcome
value /bank/bob "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== chmod by a non-owner is EPERM
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/bob/..mode <- "0666"
--- outcome
<command>:1:1: error: cannot change '/bank/bob/..mode': Operation not permitted
/bank/bob/..mode <- "0666"
^~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== chmod by the owner
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/alice/..mode <- "0600"; /bank/alice/..mode
--- outcome
value /bank/alice/..mode "0600"
value /bank/alice/..mode "0600"
exit 0
/bank/ 0755 0:0
/bank/alice 0600 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== chown by a non-root is EPERM
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/alice/..uid <- #1001
--- outcome
<command>:1:1: error: cannot change '/bank/alice/..uid': Operation not permitted
/bank/alice/..uid <- #1001
^~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== chgrp to an own group
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000,50
--- input
/bank/alice/..gid <- #50; /bank/alice/..gid
--- outcome
value /bank/alice/..gid "50"
value /bank/alice/..gid "50"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:50 "100"
/bank/bob 0600 0:0 "50"

=== chgrp to a foreign group is EPERM
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000,50
--- input
/bank/alice/..gid <- #51
--- outcome
<command>:1:1: error: cannot change '/bank/alice/..gid': Operation not permitted
/bank/alice/..gid <- #51
^~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== new objects are owned by the caller
--- setup
/..new/(name <- "srv", type <- directory); /srv/..mode <- "0777"
--- as
1000:1000
--- input
/srv/f <- "x"; /srv/..new/(name <- "d", type <- directory)
--- outcome
value /srv/f "x"
value /srv/d (Is a directory)
exit 0
/srv/ 0777 0:0
/srv/d/ 0755 1000:1000
/srv/f 0644 1000:1000 "x"

=== unlink needs write on the directory
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/..unlink <- "alice"
--- outcome
<command>:1:1: error: cannot change '/bank/alice': Permission denied
/bank/..unlink <- "alice"
^~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== sticky directory
--- setup
/..new/(name <- "t", type <- directory, perm <- "1777"); /t/..mode <- "1777"; /t/f <- "x"; /t/f/..uid <- #1001
--- as
1000:1000
--- input
/t/..unlink <- "f"
--- outcome
<command>:1:1: error: cannot change '/t/f': the directory is sticky: Operation not permitted
/t/..unlink <- "f"
^~~~~~~~~~~~~~~~~~
exit 1
/t/ 1777 0:0
/t/f 0644 1001:0 "x"

=== metadata readable without read permission
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/bob/..size
--- outcome
value /bank/bob/..size "2"
exit 0
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== setuid cleared by a non-owner write
--- setup
/f <- "x"; /f/..mode <- "4777"
--- as
1000:1000
--- input
/f <- "y"; /f/..mode
--- outcome
value /f "y"
value /f/..mode "0777"
exit 0
/f 0777 0:0 "y"

=== set times as a non-owner is EPERM
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/alice/..uid <- #1000; /bank/alice/..gid <- #1000; /bank/alice/..mode <- "0640"; /bank/bob/..mode <- "0600"; /bank/..mode <- "0755"
--- as
1000:1000
--- input
/bank/bob/..mtime <- #5
--- outcome
<command>:1:1: error: cannot change '/bank/bob/..mtime': Operation not permitted
/bank/bob/..mtime <- #5
^~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0640 1000:1000 "100"
/bank/bob 0600 0:0 "50"

=== metadata write with a trailing LF
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..uid <- "7\n"; /bank/alice/..uid
--- outcome
value /bank/alice/..uid "7"
value /bank/alice/..uid "7"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 7:0 "100"
/bank/bob 0644 0:0 "50"

=== exist propagates EACCES
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/..mode <- "0700"
--- as
1000:1000
--- input
exist /bank/alice
--- outcome
<command>:1:7: error: cannot read '/bank/alice': Permission denied
exist /bank/alice
      ^~~~~~~~~~~
exit 1
/bank/ 0700 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== forty symlinks are followed, not forty-one
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /l0 -> "/bank/alice"; /l1 -> "/l0"; /l2 -> "/l1"; /l3 -> "/l2"; /l4 -> "/l3"; /l5 -> "/l4"; /l6 -> "/l5"; /l7 -> "/l6"; /l8 -> "/l7"; /l9 -> "/l8"; /l10 -> "/l9"; /l11 -> "/l10"; /l12 -> "/l11"; /l13 -> "/l12"; /l14 -> "/l13"; /l15 -> "/l14"; /l16 -> "/l15"; /l17 -> "/l16"; /l18 -> "/l17"; /l19 -> "/l18"; /l20 -> "/l19"; /l21 -> "/l20"; /l22 -> "/l21"; /l23 -> "/l22"; /l24 -> "/l23"; /l25 -> "/l24"; /l26 -> "/l25"; /l27 -> "/l26"; /l28 -> "/l27"; /l29 -> "/l28"; /l30 -> "/l29"; /l31 -> "/l30"; /l32 -> "/l31"; /l33 -> "/l32"; /l34 -> "/l33"; /l35 -> "/l34"; /l36 -> "/l35"; /l37 -> "/l36"; /l38 -> "/l37"; /l39 -> "/l38"; /l40 -> "/l39"
--- input
/l40/..type
--- outcome
value /l40/..type "symlink"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/l0 0777 0:0 -> "/bank/alice"
/l1 0777 0:0 -> "/l0"
/l10 0777 0:0 -> "/l9"
/l11 0777 0:0 -> "/l10"
/l12 0777 0:0 -> "/l11"
/l13 0777 0:0 -> "/l12"
/l14 0777 0:0 -> "/l13"
/l15 0777 0:0 -> "/l14"
/l16 0777 0:0 -> "/l15"
/l17 0777 0:0 -> "/l16"
/l18 0777 0:0 -> "/l17"
/l19 0777 0:0 -> "/l18"
/l2 0777 0:0 -> "/l1"
/l20 0777 0:0 -> "/l19"
/l21 0777 0:0 -> "/l20"
/l22 0777 0:0 -> "/l21"
/l23 0777 0:0 -> "/l22"
/l24 0777 0:0 -> "/l23"
/l25 0777 0:0 -> "/l24"
/l26 0777 0:0 -> "/l25"
/l27 0777 0:0 -> "/l26"
/l28 0777 0:0 -> "/l27"
/l29 0777 0:0 -> "/l28"
/l3 0777 0:0 -> "/l2"
/l30 0777 0:0 -> "/l29"
/l31 0777 0:0 -> "/l30"
/l32 0777 0:0 -> "/l31"
/l33 0777 0:0 -> "/l32"
/l34 0777 0:0 -> "/l33"
/l35 0777 0:0 -> "/l34"
/l36 0777 0:0 -> "/l35"
/l37 0777 0:0 -> "/l36"
/l38 0777 0:0 -> "/l37"
/l39 0777 0:0 -> "/l38"
/l4 0777 0:0 -> "/l3"
/l40 0777 0:0 -> "/l39"
/l5 0777 0:0 -> "/l4"
/l6 0777 0:0 -> "/l5"
/l7 0777 0:0 -> "/l6"
/l8 0777 0:0 -> "/l7"
/l9 0777 0:0 -> "/l8"

=== forty-one symlinks are ELOOP
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /l0 -> "/bank/alice"; /l1 -> "/l0"; /l2 -> "/l1"; /l3 -> "/l2"; /l4 -> "/l3"; /l5 -> "/l4"; /l6 -> "/l5"; /l7 -> "/l6"; /l8 -> "/l7"; /l9 -> "/l8"; /l10 -> "/l9"; /l11 -> "/l10"; /l12 -> "/l11"; /l13 -> "/l12"; /l14 -> "/l13"; /l15 -> "/l14"; /l16 -> "/l15"; /l17 -> "/l16"; /l18 -> "/l17"; /l19 -> "/l18"; /l20 -> "/l19"; /l21 -> "/l20"; /l22 -> "/l21"; /l23 -> "/l22"; /l24 -> "/l23"; /l25 -> "/l24"; /l26 -> "/l25"; /l27 -> "/l26"; /l28 -> "/l27"; /l29 -> "/l28"; /l30 -> "/l29"; /l31 -> "/l30"; /l32 -> "/l31"; /l33 -> "/l32"; /l34 -> "/l33"; /l35 -> "/l34"; /l36 -> "/l35"; /l37 -> "/l36"; /l38 -> "/l37"; /l39 -> "/l38"; /l40 -> "/l39"; /l41 -> "/l40"
--- input
/l41
--- outcome
<command>:1:1: error: cannot read '/l41': Too many levels of symbolic links
/l41
^~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/l0 0777 0:0 -> "/bank/alice"
/l1 0777 0:0 -> "/l0"
/l10 0777 0:0 -> "/l9"
/l11 0777 0:0 -> "/l10"
/l12 0777 0:0 -> "/l11"
/l13 0777 0:0 -> "/l12"
/l14 0777 0:0 -> "/l13"
/l15 0777 0:0 -> "/l14"
/l16 0777 0:0 -> "/l15"
/l17 0777 0:0 -> "/l16"
/l18 0777 0:0 -> "/l17"
/l19 0777 0:0 -> "/l18"
/l2 0777 0:0 -> "/l1"
/l20 0777 0:0 -> "/l19"
/l21 0777 0:0 -> "/l20"
/l22 0777 0:0 -> "/l21"
/l23 0777 0:0 -> "/l22"
/l24 0777 0:0 -> "/l23"
/l25 0777 0:0 -> "/l24"
/l26 0777 0:0 -> "/l25"
/l27 0777 0:0 -> "/l26"
/l28 0777 0:0 -> "/l27"
/l29 0777 0:0 -> "/l28"
/l3 0777 0:0 -> "/l2"
/l30 0777 0:0 -> "/l29"
/l31 0777 0:0 -> "/l30"
/l32 0777 0:0 -> "/l31"
/l33 0777 0:0 -> "/l32"
/l34 0777 0:0 -> "/l33"
/l35 0777 0:0 -> "/l34"
/l36 0777 0:0 -> "/l35"
/l37 0777 0:0 -> "/l36"
/l38 0777 0:0 -> "/l37"
/l39 0777 0:0 -> "/l38"
/l4 0777 0:0 -> "/l3"
/l40 0777 0:0 -> "/l39"
/l41 0777 0:0 -> "/l40"
/l5 0777 0:0 -> "/l4"
/l6 0777 0:0 -> "/l5"
/l7 0777 0:0 -> "/l6"
/l8 0777 0:0 -> "/l7"
/l9 0777 0:0 -> "/l8"

=== named result rebinding hides the older one
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/a <- "1"; (r <= /bank/x/y <- "2"; /bank/n1 <- r/assign_result); /bank/n2 <- r/assign_result
--- outcome
value /bank/a "1"
value ""
value /bank/n1 "2"
value /bank/n2 "0"
exit 0
/bank/ 0755 0:0
/bank/a 0644 0:0 "1"
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/n1 0644 0:0 "2"
/bank/n2 0644 0:0 "0"

=== result children are replaced by the next assignment
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; /bank/alice <<- "234"; /bank/alice/assign_length
--- outcome
value /bank/alice "1"
value /bank/alice "1234"
value "3"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "1234"
/bank/bob 0644 0:0 "50"

=== window targets get no result children
--- setup
/doc <- "0123"
--- input
/doc/..range/(offset <- #0) <- "x"; /doc/assign_result
--- outcome
<command>:1:37: error: cannot read '/doc/assign_result': Not a directory
/doc/..range/(offset <- #0) <- "x"; /doc/assign_result
                                    ^~~~~~~~~~~~~~~~~~
exit 1
/doc 0644 0:0 "0123"

=== value of a metadata assignment is the pseudo file
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/x <- (/bank/alice/..mode <- "0600")
--- outcome
value /bank/x "0600"
exit 0
/bank/ 0755 0:0
/bank/alice 0600 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/x 0644 0:0 "0600"

=== append to a symlink body is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/l -> "alice"
--- input
/bank/l/..body <<- "x"
--- outcome
<command>:1:1: error: cannot append to '/bank/l/..body': Invalid argument
/bank/l/..body <<- "x"
^~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/l 0777 0:0 -> "alice"

=== rename a symlink, not its target
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/l -> "alice"
--- input
/bank/l/..name <- "m"; /bank/m
--- outcome
value /bank/m/..name "m"
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/m 0777 0:0 -> "alice"

=== spec example 1: create or replace
--- setup
/..new/(name <- "bank", type <- directory)
--- input
/bank/alice <- "100"
--- outcome
value /bank/alice "100"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"

=== spec example 3: atomic transfer
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/transfer[ /bank/alice <- "60"; /bank/bob <- "90" ]
--- outcome
value /bank/alice "60"
value /bank/bob "90"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "60"
/bank/bob 0644 0:0 "90"

=== spec example 4: guarded transfer, stale
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
tw/xfer[ if /bank/alice eq "60" and /bank/bob eq "90" then (/bank/alice <- "10", /bank/bob <- "140") else "stale" ]
--- outcome
value "stale"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== spec example 6: concatenate files and text
--- setup
/..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
/srv/motd <- /srv/motd.head + "-- " + /srv/motd.local
--- outcome
value /srv/motd "Welcome\n-- local news\n"
exit 0
/srv/ 0755 0:0
/srv/draft 0644 0:0 "d"
/srv/key 0644 0:0 "k"
/srv/motd 0644 0:0 "Welcome\n-- local news\n"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "old\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"

=== spec example 7: prepend
--- setup
/..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
/srv/notes <- "# top\n" + /srv/notes
--- outcome
value /srv/notes "# top\nold\n"
exit 0
/srv/ 0755 0:0
/srv/draft 0644 0:0 "d"
/srv/key 0644 0:0 "k"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "# top\nold\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"

=== spec example 8: create a directory unless it exists
--- setup
/..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
if not exist /srv/cache then /srv/..new/(name <- "cache", type <- directory)
--- outcome
value /srv/cache (Is a directory)
exit 0
/srv/ 0755 0:0
/srv/cache/ 0755 0:0
/srv/draft 0644 0:0 "d"
/srv/key 0644 0:0 "k"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "old\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"

=== spec example 10: chmod, chown, set mtime
--- setup
/..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
/srv/key/..mode <- "0640"; /srv/key/..uid <- #1001; /srv/key/..mtime <- #1700000000; /srv/key/..mtime
--- outcome
value /srv/key/..mode "0640"
value /srv/key/..uid "1001"
value /srv/key/..mtime "1700000000"
value /srv/key/..mtime "1700000000"
exit 0
/srv/ 0755 0:0
/srv/draft 0644 0:0 "d"
/srv/key 0640 1001:0 "k"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "old\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"

=== spec example 12: symlinks
--- setup
/..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
/srv/current -> /srv/releases/v2; /srv/latest -> "releases/v2"; /srv/latest/README
--- outcome
value /srv/current "/srv/releases/v2"
value /srv/latest "releases/v2"
value /srv/releases/v2/README "read me\n"
exit 0
/srv/ 0755 0:0
/srv/current 0777 0:0 -> "/srv/releases/v2"
/srv/draft 0644 0:0 "d"
/srv/key 0644 0:0 "k"
/srv/latest 0777 0:0 -> "releases/v2"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "old\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"

=== spec example 17: an assignment's result child
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "100"; /bank/log <<- /bank/alice/assign_length + " bytes\n"
--- outcome
value /bank/alice "100"
value /bank/log "3 bytes\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "3 bytes\n"

=== spec example 18: try the import
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
r <= /bank/carol <- /import/carol; if r/assign_result ne "0" then /bank/log <<- "import failed: " + r/assign_result + "\n"
--- outcome
value ""
value /bank/log "import failed: 2\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/log 0644 0:0 "import failed: 2\n"

=== spec example 19: the bracket ends r
--- setup
/..new/(name <- "tmp", type <- directory); /r <- "the file r"
--- input
(r <= /a <- "1"; /tmp/n <- r/assign_length); /tmp/copy <- r
--- outcome
value /a "1"
value /tmp/n "1"
value /tmp/copy "the file r"
exit 0
/a 0644 0:0 "1"
/r 0644 0:0 "the file r"
/tmp/ 0755 0:0
/tmp/copy 0644 0:0 "the file r"
/tmp/n 0644 0:0 "1"

=== spec example 20: dereference
--- setup
/..new/(name <- "tmp", type <- directory); /..new/(name <- "etc", type <- directory); /etc/active <- "/srv/key\n"; /..new/(name <- "srv", type <- directory); /srv/motd.head <- "Welcome\n"; /srv/motd.local <- "local news\n"; /srv/notes <- "old\n"; /srv/draft <- "d"; /srv/key <- "k"; /srv/..new/(name <- "releases", type <- directory)/(..new/(name <- "v2", type <- directory)/(README <- "read me\n"))
--- input
/tmp/copy <- */etc/active; (*/etc/active)/..mode <- "0444"
--- outcome
value /tmp/copy "k"
value /srv/key/..mode "0444"
exit 0
/etc/ 0755 0:0
/etc/active 0644 0:0 "/srv/key\n"
/srv/ 0755 0:0
/srv/draft 0644 0:0 "d"
/srv/key 0444 0:0 "k"
/srv/motd.head 0644 0:0 "Welcome\n"
/srv/motd.local 0644 0:0 "local news\n"
/srv/notes 0644 0:0 "old\n"
/srv/releases/ 0755 0:0
/srv/releases/v2/ 0755 0:0
/srv/releases/v2/README 0644 0:0 "read me\n"
/tmp/ 0755 0:0
/tmp/copy 0644 0:0 "k"

=== spec example 21: a quoted name, a binary-safe literal
--- setup
/..new/(name <- "tmp", type <- directory); /..new/(name <- "music", type <- directory); /music/`Live at the Roxy (1976).ogg' <- "ogg"
--- input
/music/`Live at the Roxy (1976).ogg'/..size; /tmp/raw <- #s7:a;b "c"
--- outcome
value /music/Live at the Roxy (1976).ogg/..size "3"
value /tmp/raw "a;b \"c\""
exit 0
/music/ 0755 0:0
/music/Live at the Roxy (1976).ogg 0644 0:0 "ogg"
/tmp/ 0755 0:0
/tmp/raw 0644 0:0 "a;b \"c\""

=== rollback after 1 changes
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; /bank/x/y <- "fail"
--- outcome
<command>:1:21: error: cannot write '/bank/x': No such file or directory
/bank/alice <- "1"; /bank/x/y <- "fail"
                    ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rollback after 2 changes
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/x/y <- "fail"
--- outcome
<command>:1:67: error: cannot write '/bank/x': No such file or directory
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/x/y <- "fail"
                                                                  ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rollback after 3 changes
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/bob/..mode <- "0600"; /bank/x/y <- "fail"
--- outcome
<command>:1:95: error: cannot write '/bank/x': No such file or directory
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/bob/..mode <- "0600"; /bank/x/y <- "fail"
                                                                                              ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rollback after 4 changes
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/bob/..mode <- "0600"; /bank/alice/..name <- "al"; /bank/x/y <- "fail"
--- outcome
<command>:1:123: error: cannot write '/bank/x': No such file or directory
/bank/alice <- "1"; /bank/..new/(name <- "d", type <- directory); /bank/bob/..mode <- "0600"; /bank/alice/..name <- "al"; /bank/x/y <- "fail"
                                                                                                                          ^~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rollback after a symlink and a link
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/s -> "alice"; /bank/..link/(name <- "h", target <- /bank/bob); /bank/..unlink <- "bob"; /bank/nothing/x
--- outcome
<command>:1:95: error: cannot read '/bank/nothing': No such file or directory
/bank/s -> "alice"; /bank/..link/(name <- "h", target <- /bank/bob); /bank/..unlink <- "bob"; /bank/nothing/x
                                                                                              ^~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== rollback after a window write
--- setup
/doc <- "0123456789"
--- input
/doc/..range/(offset <- #2) <- "x"; /doc/..size <- #100; *""
--- outcome
<command>:1:58: error: cannot dereference empty bytes: Invalid argument
/doc/..range/(offset <- #2) <- "x"; /doc/..size <- #100; *""
                                                         ^~~
exit 1
/doc 0644 0:0 "0123456789"

=== empty input does nothing
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
# nothing here
--- outcome
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== front-end error changes nothing
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice <- "unfinished
--- outcome
<command>:1:16: error: unterminated string
/bank/alice <- "unfinished
               ^
exit 3
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== check error changes nothing
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/etc/passwd/..oid <- #7
--- outcome
<command>:1:13: error: '..oid' is read-only
/etc/passwd/..oid <- #7
            ^~~~~
exit 3
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

