# Reiser4 semantics (LANGUAGE.md sections 6.4 and 7): aggregates, access
# rules, audit, plugin conversion.  Outcomes were made with R4_LANG_BLESS=1
# and read by hand; docs/semantics.md says where each thing lives on disk.

=== aggregate: created, written, read whole and by record
--- setup
/..new/(name <- "etc", type <- directory)
--- input
/etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"; /etc/passwd/alice; /etc/passwd/..type; /etc/passwd/alice/..type; /etc/passwd/alice/home; /etc/passwd/..size; /etc/passwd/..plugin
--- outcome
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
value /etc/passwd/alice "alice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
value /etc/passwd/..type "aggregate"
value /etc/passwd/alice/..type "record"
value /etc/passwd/alice/home "/home/alice"
value /etc/passwd/..size "76"
value /etc/passwd/..plugin "file aggregate\nformat passwd\nhash r5_hash\nfibration ext_1_fibre\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: the text keeps its order; rewriting reorders, adds, removes
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <- "bob:x:1002:1002:Bob:/home/bob:/bin/sh\ncarol:x:1003:1003:Carol:/home/carol:/bin/sh\nroot:x:0:0:root:/root:/bin/sh\n"; /etc/passwd
--- outcome
value /etc/passwd "bob:x:1002:1002:Bob:/home/bob:/bin/sh\ncarol:x:1003:1003:Carol:/home/carol:/bin/sh\nroot:x:0:0:root:/root:/bin/sh\n"
value /etc/passwd "bob:x:1002:1002:Bob:/home/bob:/bin/sh\ncarol:x:1003:1003:Carol:/home/carol:/bin/sh\nroot:x:0:0:root:/root:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/carol/ 0755 0:0
/etc/passwd/carol/gecos 0644 0:0 "Carol"
/etc/passwd/carol/gid 0644 0:0 "1003"
/etc/passwd/carol/home 0644 0:0 "/home/carol"
/etc/passwd/carol/name 0644 0:0 "carol"
/etc/passwd/carol/passwd 0644 0:0 "x"
/etc/passwd/carol/shell 0644 0:0 "/bin/sh"
/etc/passwd/carol/uid 0644 0:0 "1003"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: unchanged field files are not touched
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/home/..mode <- "0600"; /etc/passwd/alice/home/..mtime <- #1000
--- input
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice Liddell:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/home/..mtime
--- outcome
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice Liddell:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
value /etc/passwd/alice/home/..mtime "1000"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice Liddell"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0600 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a wrong field count is EINVAL and changes nothing
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': line 2 has 3 fields, a passwd record has 7: Invalid argument
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a duplicate record is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <- "bob:x:1:1:::\nbob:x:2:2:::\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': line 2: record 'bob' appears twice: Invalid argument
/etc/passwd <- "bob:x:1:1:::\nbob:x:2:2:::\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a name that cannot be a record is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <- "..x:x:1:1:::\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': line 1: '..x' cannot name a record: Invalid argument
/etc/passwd <- "..x:x:1:1:::\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: append adds records
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <<- "carol::1003:1003:Carol:/home/carol:/bin/sh\n"; /etc/passwd/carol
--- outcome
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\ncarol::1003:1003:Carol:/home/carol:/bin/sh\n"
value /etc/passwd/carol "carol::1003:1003:Carol:/home/carol:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/carol/ 0755 0:0
/etc/passwd/carol/gecos 0644 0:0 "Carol"
/etc/passwd/carol/gid 0644 0:0 "1003"
/etc/passwd/carol/home 0644 0:0 "/home/carol"
/etc/passwd/carol/name 0644 0:0 "carol"
/etc/passwd/carol/passwd 0644 0:0 ""
/etc/passwd/carol/shell 0644 0:0 "/bin/sh"
/etc/passwd/carol/uid 0644 0:0 "1003"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: append of an existing record is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd <<- "bob:x:9:9:::\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': record 'bob' exists already: Invalid argument
/etc/passwd <<- "bob:x:9:9:::\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: one field written
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd/alice/shell <- "/bin/zsh\n"; /etc/passwd
--- outcome
value /etc/passwd/alice/shell "/bin/zsh"
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/zsh"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a field holds no colon
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd/alice/shell <- "/bin:/zsh"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd/alice/shell': a field holds no ':', line feed or NUL: Invalid argument
/etc/passwd/alice/shell <- "/bin:/zsh"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: the name field renames the record
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd/alice/name <- "alicia"; /etc/passwd/alicia; exist /etc/passwd/alice
--- outcome
value /etc/passwd/alicia/name "alicia"
value /etc/passwd/alicia "alicia:x:1001:1001:Alice:/home/alice:/bin/bash\n"
value ""
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alicia/ 0755 0:0
/etc/passwd/alicia/gecos 0644 0:0 "Alice"
/etc/passwd/alicia/gid 0644 0:0 "1001"
/etc/passwd/alicia/home 0644 0:0 "/home/alice"
/etc/passwd/alicia/name 0644 0:0 "alicia"
/etc/passwd/alicia/passwd 0644 0:0 "x"
/etc/passwd/alicia/shell 0644 0:0 "/bin/bash"
/etc/passwd/alicia/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: renaming a record moves its name field
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd/bob/..name <- "robert"; /etc/passwd
--- outcome
value /etc/passwd/robert/..name "robert"
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nrobert:x:1002:1002:Bob:/home/bob:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/robert/ 0755 0:0
/etc/passwd/robert/gecos 0644 0:0 "Bob"
/etc/passwd/robert/gid 0644 0:0 "1002"
/etc/passwd/robert/home 0644 0:0 "/home/bob"
/etc/passwd/robert/name 0644 0:0 "robert"
/etc/passwd/robert/passwd 0644 0:0 "x"
/etc/passwd/robert/shell 0644 0:0 "/bin/sh"
/etc/passwd/robert/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: unlink removes a record
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- input
/etc/passwd/..unlink <- "bob"; /etc/passwd
--- outcome
value /etc/passwd/..unlink ""
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: colon format
--- setup
/..new/(name <- "etc", type <- directory)
--- input
/etc/..new/(name <- "group", type <- aggregate, format <- colon) <- "wheel:x:10:root,alice\nusers:x:100:\n"; /etc/group/wheel/4; /etc/group <- "wheel:x:10\n"; /etc/group/..list
--- outcome
value /etc/group "wheel:x:10:root,alice\nusers:x:100:\n"
value /etc/group/wheel/4 "root,alice"
value /etc/group "wheel:x:10\n"
value /etc/group/..list ".\n..\nwheel\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..body\n..name\n..unlink\n..acl\n..audit\n..new\n..link\n..range\n"
exit 0
/etc/ 0755 0:0
/etc/group/ 0755 0:0
/etc/group/wheel/ 0755 0:0
/etc/group/wheel/1 0644 0:0 "wheel"
/etc/group/wheel/2 0644 0:0 "x"
/etc/group/wheel/3 0644 0:0 "10"

=== aggregate: a text file converted, and back
--- setup
/..new/(name <- "etc", type <- directory); /etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
--- input
/etc/passwd/..plugin/file <- "aggregate"; /etc/passwd/..type; /etc/passwd/alice/uid; /etc/passwd/..plugin/file <- "reg40"; /etc/passwd/..type; /etc/passwd
--- outcome
value /etc/passwd/..plugin/file "aggregate"
value /etc/passwd/..type "aggregate"
value /etc/passwd/alice/uid "1001"
value /etc/passwd/..plugin/file "reg40"
value /etc/passwd/..type "regular"
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
exit 0
/etc/ 0755 0:0
/etc/passwd 0644 0:0 "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\n"

=== aggregate: converting invalid text is EINVAL and changes nothing
--- setup
/..new/(name <- "etc", type <- directory); /etc/passwd <- "not a passwd file\n"
--- input
/etc/passwd/..plugin/file <- "aggregate"
--- outcome
<command>:1:1: error: cannot convert '/etc/passwd': line 1 has 1 fields, a passwd record has 7: Invalid argument
/etc/passwd/..plugin/file <- "aggregate"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd 0644 0:0 "not a passwd file\n"

=== rules: alice may write her gecos and shell
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd/alice/gecos <- "Alice L"; /etc/passwd/alice/shell <- "/bin/zsh"
--- outcome
value /etc/passwd/alice/gecos "Alice L"
value /etc/passwd/alice/shell "/bin/zsh"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice L"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/zsh"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: alice may not write her uid
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd/alice/uid <- "0"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd/alice/uid': Permission denied
/etc/passwd/alice/uid <- "0"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: bob may not write alice's fields
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1002:1002
--- input
/etc/passwd/alice/shell <- "/bin/sh"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd/alice/shell': Permission denied
/etc/passwd/alice/shell <- "/bin/sh"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: a whole-file write touching alice's uid is EACCES and changes nothing
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice::0:1001:Alice:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': cannot write '/etc/passwd/alice/uid': Permission denied
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice::0:1001:Alice:/home/alice:/bin/zsh\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: an unreadable field reads empty and stays when written back empty
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd/alice; /etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nalice::1001:1001:Alice L:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
--- outcome
value /etc/passwd/alice "alice::1001:1001:Alice:/home/alice:/bin/bash\n"
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\nalice::1001:1001:Alice L:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice L"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: adding a record needs write on the aggregate
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd <<- "mallory::0:0:::\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': cannot add record 'mallory' to '/etc/passwd': Permission denied
/etc/passwd <<- "mallory::0:0:::\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: read back, replaced, removed
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- input
/etc/passwd/alice/passwd/..acl; /etc/passwd/alice/passwd/..acl <- "gid 100 read\nuid 7 write\n"; /etc/passwd/alice/passwd/..acl; /etc/passwd/alice/passwd/..acl <- ""; /etc/passwd/alice/passwd/..acl
--- outcome
value /etc/passwd/alice/passwd/..acl "uid 1001 denied\n"
value /etc/passwd/alice/passwd/..acl "gid 100 read\nuid 7 write\n"
value /etc/passwd/alice/passwd/..acl "gid 100 read\nuid 7 write\n"
value /etc/passwd/alice/passwd/..acl ""
value /etc/passwd/alice/passwd/..acl ""
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: a malformed rule is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- input
/etc/passwd/alice/passwd/..acl <- "uid alice write"
--- outcome
<command>:1:1: error: 'uid alice write' is not an access rule ('uid N ACCESS' or 'gid N ACCESS'): Invalid argument
/etc/passwd/alice/passwd/..acl <- "uid alice write"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: only the owner changes rules
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\nbob:x:1002:1002:Bob:/home/bob:/bin/sh\n"; /etc/passwd/alice/gecos/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); /etc/passwd/alice/passwd/..acl <- "uid 1001 denied"
--- as
1001:1001
--- input
/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- denied)
--- outcome
<command>:1:1: error: cannot change '/etc/passwd/alice/shell/..acl': only its owner may: Operation not permitted
/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- denied)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/bash"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/bob/ 0755 0:0
/etc/passwd/bob/gecos 0644 0:0 "Bob"
/etc/passwd/bob/gid 0644 0:0 "1002"
/etc/passwd/bob/home 0644 0:0 "/home/bob"
/etc/passwd/bob/name 0644 0:0 "bob"
/etc/passwd/bob/passwd 0644 0:0 "x"
/etc/passwd/bob/shell 0644 0:0 "/bin/sh"
/etc/passwd/bob/uid 0644 0:0 "1002"
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== rules: a group rule, the most permissive wins
--- setup
/..new/(name <- "d", type <- directory); /d/f <- "secret"; /d/f/..mode <- "0600"; /d/f/..acl <- "gid 100 denied\ngid 200 read"
--- as
1000:100,200
--- input
/d/f; r <= /d/f <- "x"; r/assign_result
--- outcome
value /d/f "secret"
value ""
value "13"
exit 0
/d/ 0755 0:0
/d/f 0600 0:0 "secret"

=== audit: one record per change, in the same unit
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/log <- ""; /bank/alice/..audit/(log <- /bank/log); /bank/log <- ""
--- clock
1700000000
--- input
/bank/alice/..audit; /bank/alice <- "90"; /bank/alice <<- "0"; /bank/alice/..mode <- "0600"; /bank/log
--- outcome
value /bank/alice/..audit "/bank/log"
value /bank/alice "90"
value /bank/alice "900"
value /bank/alice/..mode "0600"
value /bank/log "1700000000 0 write /bank/alice 2\n1700000000 0 append /bank/alice 1\n1700000000 0 setattr /bank/alice 4\n"
exit 0
/bank/ 0755 0:0
/bank/alice 0600 0:0 "900"
/bank/log 0644 0:0 "1700000000 0 write /bank/alice 2\n1700000000 0 append /bank/a"... (102 bytes)

=== audit: records roll back with their unit
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/log <- ""; /bank/alice/..audit/(log <- /bank/log); /bank/log <- ""
--- clock
1700000000
--- input
/bank/alice <- "1"; /bank/nobody/x <- "2"
--- outcome
<command>:1:21: error: cannot write '/bank/nobody': No such file or directory
/bank/alice <- "1"; /bank/nobody/x <- "2"
                    ^~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/log 0644 0:0 ""

=== audit: an empty setting stops it
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/log <- ""; /bank/alice/..audit/(log <- /bank/log); /bank/log <- ""
--- clock
1700000000
--- input
/bank/alice/..audit <- ""; /bank/alice <- "5"; /bank/alice/..audit
--- outcome
value /bank/alice/..audit ""
value /bank/alice "5"
value /bank/alice/..audit ""
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "5"
/bank/log 0644 0:0 ""

=== invert: made, read live, its canonical text
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"
--- input
/srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"; /srv/motd; /srv/local <- "more news\n"; /srv/motd; /srv/motd/..type; /srv/motd/..size; /srv/motd/..plugin; /srv/motd/..body
--- outcome
value /srv/motd/..invert "(/srv/head <- \"Welcome\\n\") + \"-- \" + (/srv/local <- \"news\\n\")\n"
value /srv/motd "Welcome\n-- news\n"
value /srv/local "more news\n"
value /srv/motd "Welcome\n-- more news\n"
value /srv/motd/..type "invert"
value /srv/motd/..size "21"
value /srv/motd/..plugin "file invert\nformatting smart\n"
value /srv/motd/..body "Welcome\n-- more news\n"
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "more news\n"
/srv/motd 0644 0:0 ""

=== invert: a new one has no parts
--- setup
/..new/(name <- "srv", type <- directory)
--- input
/srv/..new/(name <- "i", type <- invert); /srv/i/..invert; /srv/i/..mode
--- outcome
value /srv/i ""
value /srv/i/..invert ""
value /srv/i/..mode "0644"
exit 0
/srv/ 0755 0:0
/srv/i 0644 0:0 ""

=== invert: the canonical text written back changes nothing
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"; /srv/log <- ""; /srv/head/..audit/(log <- /srv/log); /srv/local/..audit/(log <- /srv/log); /srv/motd/..audit/(log <- /srv/log); /srv/log <- ""
--- clock
1700000000
--- input
/srv/motd/..invert <- /srv/motd/..invert; /srv/log
--- outcome
value /srv/motd/..invert "(/srv/head <- \"Welcome\\n\") + \"-- \" + (/srv/local <- \"news\\n\")\n"
value /srv/log ""
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/log 0644 0:0 ""
/srv/motd 0644 0:0 ""

=== invert: edited contents update exactly those files
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"; /srv/log <- ""; /srv/head/..audit/(log <- /srv/log); /srv/local/..audit/(log <- /srv/log); /srv/motd/..audit/(log <- /srv/log); /srv/log <- ""
--- clock
1700000000
--- input
/srv/motd/..invert <- "(/srv/head <- \"Welcome\\n\") + \"-- \" + (/srv/local <- \"edited\\n\")\n"; /srv/motd; /srv/log
--- outcome
value /srv/motd/..invert "(/srv/head <- \"Welcome\\n\") + \"-- \" + (/srv/local <- \"edited\\n\")\n"
value /srv/motd "Welcome\n-- edited\n"
value /srv/log "1700000000 0 write /srv/local 7\n1700000000 0 write /srv/motd 64\n"
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "edited\n"
/srv/log 0644 0:0 "1700000000 0 write /srv/local 7\n1700000000 0 write /srv/motd 64\n"
/srv/motd 0644 0:0 ""

=== invert: a part written first is created
--- setup
/..new/(name <- "srv", type <- directory); /srv/..new/(name <- "i", type <- invert)
--- input
/srv/i/..invert <- "(/srv/new <- \"fresh\") + \"!\""; /srv/i
--- outcome
value /srv/i/..invert "(/srv/new <- \"fresh\") + \"!\"\n"
value /srv/i "fresh!"
exit 0
/srv/ 0755 0:0
/srv/i 0644 0:0 ""
/srv/new 0644 0:0 "fresh"

=== invert: a missing part is ENOENT
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/..unlink <- "local"; /srv/copy <- /srv/motd
--- outcome
<command>:1:40: error: cannot read '/srv/local': No such file or directory
/srv/..unlink <- "local"; /srv/copy <- /srv/motd
                                       ^~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: plain writes, appends and truncation are EOPNOTSUPP
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
r1 <= /srv/motd <- "x"; r2 <= /srv/motd <<- "x"; r3 <= /srv/motd/..size <- #0; r4 <= /srv/motd/..range/(offset <- #0) <- "x"; r1/assign_result + " " + r2/assign_result + " " + r3/assign_result + " " + r4/assign_result
--- outcome
value ""
value ""
value ""
value ""
value "95 95 95 95"
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: text that is not a composition is EINVAL and changes nothing
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/motd/..invert <- "(/srv/head <- \"x\") + srv/local"
--- outcome
<command>:1:1: error: cannot write '/srv/motd/..invert': a part that is not an absolute path or a string at byte 21 (an invert is paths and "strings" joined by '+', a part may be (PATH <- "text")): Invalid argument
/srv/motd/..invert <- "(/srv/head <- \"x\") + srv/local"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: a relative path is EINVAL
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/motd/..invert <- "head"
--- outcome
<command>:1:1: error: cannot write '/srv/motd/..invert': a part that is not an absolute path or a string at byte 0 (an invert is paths and "strings" joined by '+', a part may be (PATH <- "text")): Invalid argument
/srv/motd/..invert <- "head"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: one that reads itself is ELOOP
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/motd/..invert <- "/srv/head + /srv/motd"; /srv/copy <- /srv/motd
--- outcome
<command>:1:61: error: cannot read '/srv/motd': inverts nest more than 8 deep: Too many levels of symbolic links
/srv/motd/..invert <- "/srv/head + /srv/motd"; /srv/copy <- /srv/motd
                                                            ^~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: of a plain file is EOPNOTSUPP
--- setup
/..new/(name <- "srv", type <- directory); /srv/f <- "x"
--- input
/srv/f/..invert <- "/srv/f"
--- outcome
<command>:1:1: error: cannot write '/srv/f/..invert': not an invert (make one with ..new/(..., type <- invert)): Operation not supported
/srv/f/..invert <- "/srv/f"
^~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/f 0644 0:0 "x"

=== invert: a part the caller cannot read is EACCES
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"; /srv/local/..mode <- "0600"
--- as
1000:1000
--- input
if /srv/motd eq "" then "empty"
--- outcome
<command>:1:4: error: cannot read '/srv/local': Permission denied
if /srv/motd eq "" then "empty"
   ^~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0600 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: defining one needs write permission on it
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- as
1000:1000
--- input
/srv/motd/..invert <- "/srv/head"
--- outcome
<command>:1:1: error: cannot write '/srv/motd/..invert': Permission denied
/srv/motd/..invert <- "/srv/head"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: a window reads its text
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/motd/..range/(offset <- #3, length <- #6)
--- outcome
value /srv/motd/..range "come\n-"
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "news\n"
/srv/motd 0644 0:0 ""

=== invert: converted to reg40 keeps its text
--- setup
/..new/(name <- "srv", type <- directory); /srv/head <- "Welcome\n"; /srv/local <- "news\n"; /srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/head + \"-- \" + /srv/local"
--- input
/srv/motd/..plugin/file <- "reg40"; /srv/motd/..type; /srv/local <- "gone\n"; /srv/motd
--- outcome
value /srv/motd/..plugin/file "reg40"
value /srv/motd/..type "regular"
value /srv/local "gone\n"
value /srv/motd "Welcome\n-- news\n"
exit 0
/srv/ 0755 0:0
/srv/head 0644 0:0 "Welcome\n"
/srv/local 0644 0:0 "gone\n"
/srv/motd 0644 0:0 "Welcome\n-- news\n"

=== window: on an aggregate reads and writes its text
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/sh\n"
--- input
/etc/passwd/..range/(offset <- #0, length <- #4); /etc/passwd/..range/(offset <- #0, length <- #4) <- "toor"; /etc/passwd/..range/(offset <- #22, length <- #7) <- "/bin/bash"; /etc/passwd/toor/..list
--- outcome
value /etc/passwd/..range "root"
value /etc/passwd/..range "toor"
value /etc/passwd/..range "/bin/ba"
value /etc/passwd/toor/..list ".\n..\ngecos\ngid\nhome\nname\npasswd\nshell\nuid\n..uid\n..owner\n..gid\n..mode\n..type\n..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n..plugin\n..list\n..body\n..name\n..unlink\n..acl\n..audit\n..new\n..link\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/alice/ 0755 0:0
/etc/passwd/alice/gecos 0644 0:0 "Alice"
/etc/passwd/alice/gid 0644 0:0 "1001"
/etc/passwd/alice/home 0644 0:0 "/home/alice"
/etc/passwd/alice/name 0644 0:0 "alice"
/etc/passwd/alice/passwd 0644 0:0 "x"
/etc/passwd/alice/shell 0644 0:0 "/bin/sh"
/etc/passwd/alice/uid 0644 0:0 "1001"
/etc/passwd/toor/ 0755 0:0
/etc/passwd/toor/gecos 0644 0:0 "root"
/etc/passwd/toor/gid 0644 0:0 "0"
/etc/passwd/toor/home 0644 0:0 "/root"
/etc/passwd/toor/name 0644 0:0 "toor"
/etc/passwd/toor/passwd 0644 0:0 "x"
/etc/passwd/toor/shell 0644 0:0 "/bin/bash"
/etc/passwd/toor/uid 0644 0:0 "0"

=== window: on an aggregate beyond its text is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd/..range/(offset <- #100) <- "x"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd/..range': a window of an aggregate starts within its text (30 bytes): Invalid argument
/etc/passwd/..range/(offset <- #100) <- "x"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== plugin: a file's formatting switched, its body kept
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/big <- "0123456789abcdef" + "0123456789abcdef" + "0123456789abcdef" + "0123456789abcdef"
--- input
/bank/big/..plugin/formatting <- "extents"; /bank/big/..plugin; /bank/big/..plugin/formatting <- "tails"; /bank/big/..plugin/formatting; /bank/big/..plugin/formatting <- "smart"; /bank/big/..plugin; /bank/big
--- outcome
value /bank/big/..plugin/formatting "extents"
value /bank/big/..plugin "file reg40\nformatting extents\n"
value /bank/big/..plugin/formatting "tails"
value /bank/big/..plugin/formatting "tails"
value /bank/big/..plugin/formatting "smart"
value /bank/big/..plugin "file reg40\nformatting smart\n"
value /bank/big "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/big 0644 0:0 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/bank/bob 0644 0:0 "50"

=== plugin: an empty directory's hash switched
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"; /bank/..new/(name <- "d", type <- directory)
--- input
/bank/d/..plugin/hash <- "tea_hash"; /bank/d/(x <- "1"; y <- "2"); /bank/d/..plugin; /bank/d/x + /bank/d/y
--- outcome
value /bank/d/..plugin/hash "tea_hash"
value /bank/d/x "1"
value /bank/d/y "2"
value /bank/d/..plugin "file dir40\nhash tea_hash\nfibration ext_1_fibre\n"
value "12"
exit 0
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"
/bank/d/ 0755 0:0
/bank/d/x 0644 0:0 "1"
/bank/d/y 0644 0:0 "2"

=== plugin: a directory with entries keeps its hash
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..plugin/hash <- "tea_hash"
--- outcome
<command>:1:1: error: cannot switch '/bank/..plugin/hash': a directory changes its hash only while it is empty: Directory not empty
/bank/..plugin/hash <- "tea_hash"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== plugin: an unknown label is EINVAL
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..plugin/formatting <- "sometimes"
--- outcome
<command>:1:1: error: cannot switch '/bank/alice/..plugin/formatting': 'sometimes' is no formatting plugin: Invalid argument
/bank/alice/..plugin/formatting <- "sometimes"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== plugin: only the owner switches one
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- as
1000:1000
--- input
/bank/alice/..plugin/formatting <- "tails"
--- outcome
<command>:1:1: error: cannot switch '/bank/alice/..plugin/formatting': only its owner may: Operation not permitted
/bank/alice/..plugin/formatting <- "tails"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== plugin: a member r4 cannot switch is EOPNOTSUPP
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/..plugin/fibration <- "lexic_fibre"
--- outcome
<command>:1:1: error: cannot switch '/bank/..plugin/fibration': r4 switches file, formatting and hash: Operation not supported
/bank/..plugin/fibration <- "lexic_fibre"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== plugin: a file has no hash
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/bob <- "50"
--- input
/bank/alice/..plugin/hash <- "tea_hash"
--- outcome
<command>:1:1: error: cannot switch '/bank/alice/..plugin/hash': only a directory has a hash: Operation not supported
/bank/alice/..plugin/hash <- "tea_hash"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"
/bank/bob 0644 0:0 "50"

=== audit: removing an audited file's last name is its last record
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/log <- ""; /bank/alice/..audit/(log <- /bank/log); /bank/log <- ""
--- clock
1700000000
--- input
/bank/..unlink <- "alice"; /bank/log
--- outcome
value /bank/..unlink ""
value /bank/log "1700000000 0 unlink /bank/alice 5\n"
exit 0
/bank/ 0755 0:0
/bank/log 0644 0:0 "1700000000 0 unlink /bank/alice 5\n"

=== plugin: a new directory takes its directory's own hash, a file does not
--- setup
/..new/(name <- "bank", type <- directory); /bank/..new/(name <- "d", type <- directory); /bank/d/..plugin/hash <- "tea_hash"
--- input
/bank/d/..new/(name <- "sub", type <- directory); /bank/d/sub/..plugin; /bank/d/sub/f <- "1"; /bank/d/sub/f/..plugin; /..plugin/hash
--- outcome
value /bank/d/sub (Is a directory)
value /bank/d/sub/..plugin "file dir40\nhash tea_hash\nfibration ext_1_fibre\n"
value /bank/d/sub/f "1"
value /bank/d/sub/f/..plugin "file reg40\nformatting smart\n"
value /..plugin/hash "r5_hash"
exit 0
/bank/ 0755 0:0
/bank/d/ 0755 0:0
/bank/d/sub/ 0755 0:0
/bank/d/sub/f 0644 0:0 "1"

=== aggregate: a NUL byte in the text or a field is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
r1 <= /etc/passwd <- "root:x:0:0:ro\0t:/root:/bin/sh\n"; r2 <= /etc/passwd/root/gecos <- "ro\0t"; r3 <= /etc/passwd/..range/(offset <- #11, length <- #4, mode <- zero) <- "ro"; r1/assign_result + " " + r2/assign_result + " " + r3/assign_result; /etc/passwd
--- outcome
value ""
value ""
value ""
value "22 22 22"
value /etc/passwd "root:x:0:0:root:/root:/bin/sh\n"
exit 0
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a uid that is not a number is EINVAL and changes nothing
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd/root/uid <- "abc"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd/root/uid': uid 'abc' is not a number from 0 to 4294967294: Invalid argument
/etc/passwd/root/uid <- "abc"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a gid out of range in the whole text is EINVAL and changes nothing
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nbob:x:1002:4294967295:Bob:/home/bob:/bin/sh\n"
--- outcome
<command>:1:1: error: cannot write '/etc/passwd': line 2: gid '4294967295' is not a number from 0 to 4294967294: Invalid argument
/etc/passwd <- "root:x:0:0:root:/root:/bin/sh\nbob:x:1002:4294967295:Bob:/home/bob:/bin/sh\n"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: appending to a uid makes a value that must be a number
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd/root/uid <<- "1"; /etc/passwd/root/gid <<- "x"
--- outcome
<command>:1:31: error: cannot append to '/etc/passwd/root/gid': gid '0x' is not a number from 0 to 4294967294: Invalid argument
/etc/passwd/root/uid <<- "1"; /etc/passwd/root/gid <<- "x"
                              ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a directory made in it is no record (EOPNOTSUPP)
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd/..new/(name <- "foo", type <- directory)
--- outcome
<command>:1:1: error: cannot create '/etc/passwd/foo': a record is made by writing its line to its aggregate (/etc/passwd <<- "foo:x:UID:GID:GECOS:HOME:SHELL\n"): Operation not supported
/etc/passwd/..new/(name <- "foo", type <- directory)
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== aggregate: a record renamed to a name with ':' is EINVAL
--- setup
/..new/(name <- "etc", type <- directory); /etc/..new/(name <- "passwd", type <- aggregate) <- "root:x:0:0:root:/root:/bin/sh\n"
--- input
/etc/passwd/root/..name <- "ro:ot"
--- outcome
<command>:1:1: error: cannot rename '/etc/passwd/root' to 'ro:ot': a record's name holds no ':' or line feed: Invalid argument
/etc/passwd/root/..name <- "ro:ot"
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
exit 1
/etc/ 0755 0:0
/etc/passwd/ 0755 0:0
/etc/passwd/root/ 0755 0:0
/etc/passwd/root/gecos 0644 0:0 "root"
/etc/passwd/root/gid 0644 0:0 "0"
/etc/passwd/root/home 0644 0:0 "/root"
/etc/passwd/root/name 0644 0:0 "root"
/etc/passwd/root/passwd 0644 0:0 "x"
/etc/passwd/root/shell 0644 0:0 "/bin/sh"
/etc/passwd/root/uid 0644 0:0 "0"

=== audit: a missing log refuses the change, names the log and how to turn auditing off
--- setup
/..new/(name <- "bank", type <- directory); /bank/alice <- "100"; /bank/log <- ""; /bank/alice/..audit/(log <- /bank/log); /bank/..unlink <- "log"
--- input
/bank/alice <- "5"
--- outcome
<command>:1:1: error: cannot audit '/bank/alice': the audit log '/bank/log' is missing (make it again, or turn auditing off: /bank/alice/..audit <- ""): No such file or directory
/bank/alice <- "5"
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0
/bank/alice 0644 0:0 "100"

=== audit: a directory's missing log names the directory's setting
--- setup
/..new/(name <- "bank", type <- directory); /log <- ""; /bank/..audit/(log <- /log); /..unlink <- "log"
--- input
/bank/carol <- "5"
--- outcome
<command>:1:1: error: cannot audit '/bank/carol': the audit log '/log' is missing (make it again, or turn auditing off: /bank/..audit <- ""): No such file or directory
/bank/carol <- "5"
^~~~~~~~~~~~~~~~~~
exit 1
/bank/ 0755 0:0

=== pseudo files of long names and paths print whole
--- setup
/..new/(name <- "dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", type <- directory); /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn <- "x"; /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/log <- ""; /..new/(name <- "inv", type <- invert)
--- clock
1700000000
--- input
/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/..name; /inv/..invert <- "/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"; /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/..audit/(log <- /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/log); /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/..audit
--- outcome
value /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/..name "fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
value /inv/..invert "(/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn <- \"x\")\n"
value ""
value /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/..audit "/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/log"
exit 0
/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/ 0755 0:0
/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/fnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn 0644 0:0 "x"
/dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/log 0644 0:0 "1700000000 0 setattr /dnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"... (428 bytes)
/inv 0644 0:0 ""
