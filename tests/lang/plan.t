# Transaction plans (LANGUAGE.md section 9, docs/plan.md): every example of section 10.
# Format: tests/lang/README.md.  Generated outputs were read and checked by hand.

=== section 9: the plan example
--- input
tw/pay[ if /bank/alice eq "100" then /bank/alice <- "40" else /bank/log <<- "stale\n" ]
--- plan
 0  BEGIN   pay                          1:1-1:87
 1  LOOKUP  h0 = /bank/alice             1:12-1:22
 2  READ    v0 = h0                      1:12-1:22
 3  TEST    v1 = eq v0 "100"             1:12-1:31
 4  JUMPF   v1 -> 10                     1:9-1:85
 5  LOOKUP  h1 = /bank/alice  create     1:38-1:48
 6  WRITE   h1 <- "40"                   1:38-1:56
 7  RESULT  h1                           1:38-1:56
 8  YIELD   h1                           1:38-1:56
 9  JUMP    -> 14                        1:9-1:85
10  LOOKUP  h2 = /bank/log  create       1:63-1:71
11  APPEND  h2 <- "stale\n"              1:63-1:85
12  RESULT  h2                           1:63-1:85
13  YIELD   h2                           1:63-1:85
14  COMMIT  pay                          1:1-1:87

=== example 1: create or replace
--- input
/bank/alice <- "100"
--- plan
 0  BEGIN                                1:1-1:20
 1  LOOKUP  h0 = /bank/alice  create     1:1-1:11
 2  WRITE   h0 <- "100"                  1:1-1:20
 3  RESULT  h0                           1:1-1:20
 4  YIELD   h0                           1:1-1:20
 5  COMMIT                               1:1-1:20

=== example 2: two writes in a scope
--- input
/bank/(alice <- "100", bob <- "50")
--- plan
 0  BEGIN                                1:1-1:35
 1  LOOKUP  h0 = /bank                   1:1-1:5
 2  SCOPE   h0                           1:7-1:35
 3  GROUP   2 members                    1:8-1:34
 4  LOOKUP  h1 = alice  create           1:8-1:12
 5  WRITE   h1 <- "100"                  1:8-1:21
 6  RESULT  h1                           1:8-1:21
 7  YIELD   h1                           1:8-1:21
 8  MEMBER                               1:24-1:34
 9  LOOKUP  h2 = bob  create             1:24-1:26
10  WRITE   h2 <- "50"                   1:24-1:34
11  RESULT  h2                           1:24-1:34
12  YIELD   h2                           1:24-1:34
13  ENDGROUP                             1:8-1:34
14  ENDSCOPE                             1:7-1:35
15  COMMIT                               1:1-1:35

=== example 3: atomic transfer
--- input
tw/transfer[ /bank/alice <- "60"; /bank/bob <- "90" ]
--- plan
 0  BEGIN   transfer                     1:1-1:53
 1  LOOKUP  h0 = /bank/alice  create     1:14-1:24
 2  WRITE   h0 <- "60"                   1:14-1:32
 3  RESULT  h0                           1:14-1:32
 4  YIELD   h0                           1:14-1:32
 5  LOOKUP  h1 = /bank/bob  create       1:35-1:43
 6  WRITE   h1 <- "90"                   1:35-1:51
 7  RESULT  h1                           1:35-1:51
 8  YIELD   h1                           1:35-1:51
 9  COMMIT  transfer                     1:1-1:53

=== example 4: guarded transfer
--- input
tw/xfer[ if /bank/alice eq "60" and /bank/bob eq "90" then (/bank/alice <- "10", /bank/bob <- "140") else "stale" ]
--- plan
 0  BEGIN   xfer                         1:1-1:115
 1  LOOKUP  h0 = /bank/alice             1:13-1:23
 2  READ    v1 = h0                      1:13-1:23
 3  TEST    v2 = eq v1 "60"              1:13-1:31
 4  JUMPF   v2 -> 10                     1:13-1:53
 5  LOOKUP  h1 = /bank/bob               1:37-1:45
 6  READ    v3 = h1                      1:37-1:45
 7  TEST    v4 = eq v3 "90"              1:37-1:53
 8  TEST    v0 = true v4                 1:13-1:53
 9  JUMP    -> 11                        1:13-1:53
10  CONST   v0 = ""                      1:13-1:53
11  JUMPF   v0 -> 24                     1:10-1:113
12  GROUP   2 members                    1:61-1:99
13  LOOKUP  h2 = /bank/alice  create     1:61-1:71
14  WRITE   h2 <- "10"                   1:61-1:79
15  RESULT  h2                           1:61-1:79
16  YIELD   h2                           1:61-1:79
17  MEMBER                               1:82-1:99
18  LOOKUP  h3 = /bank/bob  create       1:82-1:90
19  WRITE   h3 <- "140"                  1:82-1:99
20  RESULT  h3                           1:82-1:99
21  YIELD   h3                           1:82-1:99
22  ENDGROUP                             1:61-1:99
23  JUMP    -> 25                        1:10-1:113
24  YIELD   "stale"                      1:107-1:113
25  COMMIT  xfer                         1:1-1:115

=== example 5: compare-and-swap
--- input
tw/[ if /lock eq "free" then /lock <- "held" else "busy" ]
--- plan
 0  BEGIN                                1:1-1:58
 1  LOOKUP  h0 = /lock                   1:9-1:13
 2  READ    v0 = h0                      1:9-1:13
 3  TEST    v1 = eq v0 "free"            1:9-1:23
 4  JUMPF   v1 -> 10                     1:6-1:56
 5  LOOKUP  h1 = /lock  create           1:30-1:34
 6  WRITE   h1 <- "held"                 1:30-1:44
 7  RESULT  h1                           1:30-1:44
 8  YIELD   h1                           1:30-1:44
 9  JUMP    -> 11                        1:6-1:56
10  YIELD   "busy"                       1:51-1:56
11  COMMIT                               1:1-1:58

=== example 6: concatenate files and text
--- input
/srv/motd <- /srv/motd.head + "-- " + /srv/motd.local
--- plan
 0  BEGIN                                1:1-1:53
 1  LOOKUP  h0 = /srv/motd.head          1:14-1:27
 2  READ    v0 = h0                      1:14-1:27
 3  CONCAT  v1 = v0 + "-- "              1:14-1:35
 4  LOOKUP  h1 = /srv/motd.local         1:39-1:53
 5  READ    v2 = h1                      1:39-1:53
 6  CONCAT  v3 = v1 + v2                 1:14-1:53
 7  LOOKUP  h2 = /srv/motd  create       1:1-1:9
 8  WRITE   h2 <- v3                     1:1-1:53
 9  RESULT  h2                           1:1-1:53
10  YIELD   h2                           1:1-1:53
11  COMMIT                               1:1-1:53

=== example 7: prepend
--- input
/srv/notes <- "# top\n" + /srv/notes
--- plan
 0  BEGIN                                1:1-1:36
 1  LOOKUP  h0 = /srv/notes              1:27-1:36
 2  READ    v0 = h0                      1:27-1:36
 3  CONCAT  v1 = "# top\n" + v0          1:15-1:36
 4  LOOKUP  h1 = /srv/notes  create      1:1-1:10
 5  WRITE   h1 <- v1                     1:1-1:36
 6  RESULT  h1                           1:1-1:36
 7  YIELD   h1                           1:1-1:36
 8  COMMIT                               1:1-1:36

=== example 8: a directory unless it exists
--- input
if not exist /srv/cache then /srv/..new/(name <- "cache", type <- directory)
--- plan
 0  BEGIN                                1:1-1:76
 1  LOOKUP  h0 = /srv/cache  exist-test  1:14-1:23
 2  TEST    v0 = exist h0                1:8-1:23
 3  TEST    v1 = not v0                  1:4-1:23
 4  JUMPF   v1 -> 9                      1:1-1:76
 5  LOOKUP  h1 = /srv                    1:30-1:33
 6  CREATE  h2 = h1/"cache"  directory   1:30-1:76
 7  YIELD   h2                           1:30-1:76
 8  JUMP    -> 10                        1:1-1:76
 9  YIELD   ""                           1:1-1:76
10  COMMIT                               1:1-1:76

=== example 9: a private file, filled
--- input
/srv/..new/(name <- "key", perm <- "0600") <- "k3y\n"
--- plan
 0  BEGIN                                1:1-1:53
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  CREATE  h1 = h0/"key"  regular perm "0600" 1:1-1:42
 3  WRITE   h1 <- "k3y\n"                1:1-1:53
 4  YIELD   h1                           1:1-1:53
 5  COMMIT                               1:1-1:53

=== example 10: chmod, chown, mtime
--- input
/srv/key/..mode <- "0640"; /srv/key/..uid <- #1001; /srv/key/..mtime <- #1700000000
--- plan
 0  BEGIN                                1:1-1:83
 1  LOOKUP  h0 = /srv/key  nofollow      1:1-1:8
 2  SETATTR h0 ..mode <- "0640"          1:1-1:25
 3  RESULT  h0 ..mode                    1:1-1:25
 4  YIELD   h0                           1:1-1:25
 5  LOOKUP  h1 = /srv/key  nofollow      1:28-1:35
 6  SETATTR h1 ..uid <- "1001"           1:28-1:50
 7  RESULT  h1 ..uid                     1:28-1:50
 8  YIELD   h1                           1:28-1:50
 9  LOOKUP  h2 = /srv/key  nofollow      1:53-1:60
10  SETATTR h2 ..mtime <- "1700000000"   1:53-1:83
11  RESULT  h2 ..mtime                   1:53-1:83
12  YIELD   h2                           1:53-1:83
13  COMMIT                               1:1-1:83

=== example 11: rename, then unlink
--- input
/srv/draft/..name <- "final"; /srv/..unlink <- "final"
--- plan
 0  BEGIN                                1:1-1:54
 1  LOOKUP  h0 = /srv/draft  nofollow    1:1-1:10
 2  RENAME  h0 "final"                   1:1-1:28
 3  RESULT  h0 ..name                    1:1-1:28
 4  YIELD   h0                           1:1-1:28
 5  LOOKUP  h1 = /srv  nofollow          1:31-1:34
 6  UNLINK  h1 "final"                   1:31-1:54
 7  RESULT  h1 ..unlink                  1:31-1:54
 8  YIELD   h1                           1:31-1:54
 9  COMMIT                               1:1-1:54

=== example 12: symlinks
--- input
/srv/current -> /srv/releases/v2; /srv/latest -> "releases/v2"
--- plan
 0  BEGIN                                1:1-1:62
 1  LOOKUP  h0 = /srv/current  missing  nofollow 1:1-1:12
 2  SYMLINK h0 -> "/srv/releases/v2"     1:1-1:32
 3  RESULT  h0                           1:1-1:32
 4  YIELD   h0                           1:1-1:32
 5  LOOKUP  h1 = /srv/latest  missing  nofollow 1:35-1:45
 6  SYMLINK h1 -> "releases/v2"          1:35-1:62
 7  RESULT  h1                           1:35-1:62
 8  YIELD   h1                           1:35-1:62
 9  COMMIT                               1:1-1:62

=== example 13: hard link
--- input
/srv/..link/(name <- "README", target <- /srv/releases/v2/README)
--- plan
 0  BEGIN                                1:1-1:65
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  LOOKUP  h1 = /srv/releases/v2/README 1:42-1:64
 3  LINK    h2 = h0/"README" -> h1       1:1-1:65
 4  YIELD   h2                           1:1-1:65
 5  COMMIT                               1:1-1:65

=== example 14: copy a window
--- input
/tmp/head <- /var/log/big/..range/(offset <- #0, length <- #512)
--- plan
 0  BEGIN                                1:1-1:64
 1  LOOKUP  h0 = /var/log/big            1:14-1:25
 2  WINDOW  h1 = h0 offset "0" length "512"  shift 1:14-1:64
 3  READ    v0 = h1                      1:14-1:64
 4  LOOKUP  h2 = /tmp/head  create       1:1-1:9
 5  WRITE   h2 <- v0                     1:1-1:64
 6  RESULT  h2                           1:1-1:64
 7  YIELD   h2                           1:1-1:64
 8  COMMIT                               1:1-1:64

=== example 15: insert
--- input
/doc/text/..range/(offset <- #10, length <- #0) <- "inserted "
--- plan
 0  BEGIN                                1:1-1:62
 1  LOOKUP  h0 = /doc/text               1:1-1:9
 2  WINDOW  h1 = h0 offset "10" length "0"  shift 1:1-1:47
 3  WRITE   h1 <- "inserted "            1:1-1:62
 4  YIELD   h1                           1:1-1:62
 5  COMMIT                               1:1-1:62

=== example 16: overlay
--- input
/img/disk/..range/(offset <- #0x1be, length <- #64, mode <- overlay) <- /tmp/table
--- plan
 0  BEGIN                                1:1-1:82
 1  LOOKUP  h0 = /tmp/table              1:73-1:82
 2  READ    v0 = h0                      1:73-1:82
 3  LOOKUP  h1 = /img/disk               1:1-1:9
 4  WINDOW  h2 = h1 offset "446" length "64"  overlay 1:1-1:68
 5  WRITE   h2 <- v0                     1:1-1:82
 6  YIELD   h2                           1:1-1:82
 7  COMMIT                               1:1-1:82

=== example 17: a result child
--- input
/bank/alice <- "100"; /bank/log <<- /bank/alice/assign_length + " bytes\n"
--- plan
 0  BEGIN                                1:1-1:74
 1  LOOKUP  h0 = /bank/alice  create     1:1-1:11
 2  WRITE   h0 <- "100"                  1:1-1:20
 3  RESULT  h0                           1:1-1:20
 4  YIELD   h0                           1:1-1:20
 5  LOOKUP  h1 = /bank/alice/assign_length 1:37-1:61
 6  READ    v0 = h1                      1:37-1:61
 7  CONCAT  v1 = v0 + " bytes\n"         1:37-1:74
 8  LOOKUP  h2 = /bank/log  create       1:23-1:31
 9  APPEND  h2 <- v1                     1:23-1:74
10  RESULT  h2                           1:23-1:74
11  YIELD   h2                           1:23-1:74
12  COMMIT                               1:1-1:74

=== example 18: try and log
--- input
r <= /bank/carol <- /import/carol; if r/assign_result ne "0" then /bank/log <<- "import failed: " + r/assign_result + "\n"
--- plan
 0  BEGIN                                1:1-1:122
 1  TRY     r0 r -> 7                    1:1-1:1
 2  LOOKUP  h0 = /import/carol           1:21-1:33
 3  READ    v0 = h0                      1:21-1:33
 4  LOOKUP  h1 = /bank/carol  create     1:6-1:16
 5  WRITE   h1 <- v0                     1:1-1:33
 6  RESULT  h1 -> r0                     1:1-1:33
 7  ENDTRY  r0                           1:1-1:1
 8  YIELD   h1                           1:1-1:33
 9  RESVAL  v1 = r0/assign_result        1:39-1:53
10  TEST    v2 = ne v1 "0"               1:39-1:60
11  JUMPF   v2 -> 20                     1:36-1:122
12  RESVAL  v3 = r0/assign_result        1:101-1:115
13  CONCAT  v4 = "import failed: " + v3  1:81-1:115
14  CONCAT  v5 = v4 + "\n"               1:81-1:122
15  LOOKUP  h2 = /bank/log  create       1:67-1:75
16  APPEND  h2 <- v5                     1:67-1:122
17  RESULT  h2                           1:67-1:122
18  YIELD   h2                           1:67-1:122
19  JUMP    -> 21                        1:36-1:122
20  YIELD   ""                           1:36-1:122
21  COMMIT                               1:1-1:122

=== example 19: the bracket ends r
--- input
(r <= /a <- "1"; /tmp/n <- r/assign_length); /tmp/copy <- r
--- plan
 0  BEGIN                                1:1-1:59
 1  TRY     r0 r -> 5                    1:2-1:2
 2  LOOKUP  h0 = /a  create              1:7-1:8
 3  WRITE   h0 <- "1"                    1:2-1:15
 4  RESULT  h0 -> r0                     1:2-1:15
 5  ENDTRY  r0                           1:2-1:2
 6  YIELD   h0                           1:2-1:15
 7  RESVAL  v0 = r0/assign_length        1:28-1:42
 8  LOOKUP  h1 = /tmp/n  create          1:18-1:23
 9  WRITE   h1 <- v0                     1:18-1:42
10  RESULT  h1                           1:18-1:42
11  YIELD   h1                           1:18-1:42
12  LOOKUP  h2 = r                       1:59-1:59
13  READ    v1 = h2                      1:59-1:59
14  LOOKUP  h3 = /tmp/copy  create       1:46-1:54
15  WRITE   h3 <- v1                     1:46-1:59
16  RESULT  h3                           1:46-1:59
17  YIELD   h3                           1:46-1:59
18  COMMIT                               1:1-1:59

=== example 20: dereference
--- input
/tmp/copy <- */etc/active; (*/etc/active)/..mode <- "0444"
--- plan
 0  BEGIN                                1:1-1:58
 1  LOOKUP  h0 = /etc/active             1:15-1:25
 2  READ    v0 = h0                      1:15-1:25
 3  DEREF   h1 = *v0                     1:14-1:25
 4  READ    v1 = h1                      1:14-1:25
 5  LOOKUP  h2 = /tmp/copy  create       1:1-1:9
 6  WRITE   h2 <- v1                     1:1-1:25
 7  RESULT  h2                           1:1-1:25
 8  YIELD   h2                           1:1-1:25
 9  LOOKUP  h3 = /etc/active             1:30-1:40
10  READ    v2 = h3                      1:30-1:40
11  DEREF   h4 = *v2                     1:29-1:40
12  SETATTR h4 ..mode <- "0444"          1:28-1:58
13  RESULT  h4 ..mode                    1:28-1:58
14  YIELD   h4                           1:28-1:58
15  COMMIT                               1:1-1:58

=== example 21: quoted name, payload
--- input
/music/`Live at the Roxy (1976).ogg'/..size; /tmp/raw <- #s7:a;b "c"
--- plan
 0  BEGIN                                1:1-1:68
 1  LOOKUP  h0 = /music/`Live at the Roxy (1976).ogg'/..size 1:1-1:43
 2  YIELD   h0                           1:1-1:43
 3  LOOKUP  h1 = /tmp/raw  create        1:46-1:53
 4  WRITE   h1 <- "a;b \"c\""            1:46-1:68
 5  RESULT  h1                           1:46-1:68
 6  YIELD   h1                           1:46-1:68
 7  COMMIT                               1:1-1:68

=== example 23: a per-field rule
--- input
/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write)
--- plan
 0  BEGIN                                1:1-1:61
 1  LOOKUP  h0 = /etc/passwd/alice/shell 1:1-1:23
 2  RULE    h0 uid "1001" write          1:1-1:61
 3  YIELD   ""                           1:1-1:61
 4  COMMIT                               1:1-1:61

=== example 24: list
--- input
/tmp/names <- /etc/passwd/alice/..list
--- plan
 0  BEGIN                                1:1-1:38
 1  LOOKUP  h0 = /etc/passwd/alice/..list 1:15-1:38
 2  READ    v0 = h0                      1:15-1:38
 3  LOOKUP  h1 = /tmp/names  create      1:1-1:10
 4  WRITE   h1 <- v0                     1:1-1:38
 5  RESULT  h1                           1:1-1:38
 6  YIELD   h1                           1:1-1:38
 7  COMMIT                               1:1-1:38

=== example 25: an invert
--- input
/srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/motd.head + \"-- \" + /srv/motd.local"
--- plan
 0  BEGIN                                1:1-1:100
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  CREATE  h1 = h0/"motd"  invert       1:1-1:43
 3  SETATTR h1 ..invert <- "/srv/motd.head + \"-- \" + /srv/motd.local" 1:1-1:100
 4  RESULT  h1 ..invert                  1:1-1:100
 5  YIELD   h1                           1:1-1:100
 6  COMMIT                               1:1-1:100

=== and, or, not as values
--- input
/t <- a and b; /t <- a or b; /t <- not a
--- plan
 0  BEGIN                                1:1-1:40
 1  LOOKUP  h0 = a                       1:7-1:7
 2  READ    v1 = h0                      1:7-1:7
 3  JUMPF   v1 -> 8                      1:7-1:13
 4  LOOKUP  h1 = b                       1:13-1:13
 5  READ    v2 = h1                      1:13-1:13
 6  TEST    v0 = true v2                 1:7-1:13
 7  JUMP    -> 9                         1:7-1:13
 8  CONST   v0 = ""                      1:7-1:13
 9  LOOKUP  h2 = /t  create              1:1-1:2
10  WRITE   h2 <- v0                     1:1-1:13
11  RESULT  h2                           1:1-1:13
12  YIELD   h2                           1:1-1:13
13  LOOKUP  h3 = a                       1:22-1:22
14  READ    v4 = h3                      1:22-1:22
15  JUMPT   v4 -> 20                     1:22-1:27
16  LOOKUP  h4 = b                       1:27-1:27
17  READ    v5 = h4                      1:27-1:27
18  TEST    v3 = true v5                 1:22-1:27
19  JUMP    -> 21                        1:22-1:27
20  CONST   v3 = "1"                     1:22-1:27
21  LOOKUP  h5 = /t  create              1:16-1:17
22  WRITE   h5 <- v3                     1:16-1:27
23  RESULT  h5                           1:16-1:27
24  YIELD   h5                           1:16-1:27
25  LOOKUP  h6 = a                       1:40-1:40
26  READ    v6 = h6                      1:40-1:40
27  TEST    v7 = not v6                  1:36-1:40
28  LOOKUP  h7 = /t  create              1:30-1:31
29  WRITE   h7 <- v7                     1:30-1:40
30  RESULT  h7                           1:30-1:40
31  YIELD   h7                           1:30-1:40
32  COMMIT                               1:1-1:40

=== if without else as a value
--- input
/t <- if a then b
--- plan
 0  BEGIN                                1:1-1:17
 1  LOOKUP  h0 = a                       1:10-1:10
 2  READ    v1 = h0                      1:10-1:10
 3  JUMPF   v1 -> 8                      1:7-1:17
 4  LOOKUP  h1 = b                       1:17-1:17
 5  READ    v2 = h1                      1:17-1:17
 6  CONST   v0 = v2                      1:7-1:17
 7  JUMP    -> 9                         1:7-1:17
 8  CONST   v0 = ""                      1:7-1:17
 9  LOOKUP  h2 = /t  create              1:1-1:2
10  WRITE   h2 <- v0                     1:1-1:17
11  RESULT  h2                           1:1-1:17
12  YIELD   h2                           1:1-1:17
13  COMMIT                               1:1-1:17

=== if as a statement without else
--- input
if a then b
--- plan
 0  BEGIN                                1:1-1:11
 1  LOOKUP  h0 = a                       1:4-1:4
 2  READ    v0 = h0                      1:4-1:4
 3  JUMPF   v0 -> 7                      1:1-1:11
 4  LOOKUP  h1 = b                       1:11-1:11
 5  YIELD   h1                           1:11-1:11
 6  JUMP    -> 8                         1:1-1:11
 7  YIELD   ""                           1:1-1:11
 8  COMMIT                               1:1-1:11

=== comparisons
--- input
/t <- a lt b
--- plan
 0  BEGIN                                1:1-1:12
 1  LOOKUP  h0 = a                       1:7-1:7
 2  READ    v0 = h0                      1:7-1:7
 3  LOOKUP  h1 = b                       1:12-1:12
 4  READ    v1 = h1                      1:12-1:12
 5  TEST    v2 = lt v0 v1                1:7-1:12
 6  LOOKUP  h2 = /t  create              1:1-1:2
 7  WRITE   h2 <- v2                     1:1-1:12
 8  RESULT  h2                           1:1-1:12
 9  YIELD   h2                           1:1-1:12
10  COMMIT                               1:1-1:12

=== a relative path reads from the current directory
--- input
notes
--- plan
 0  BEGIN                                1:1-1:5
 1  LOOKUP  h0 = notes                   1:1-1:5
 2  YIELD   h0                           1:1-1:5
 3  COMMIT                               1:1-1:5

=== the root
--- input
/
--- plan
 0  BEGIN                                1:1-1:1
 1  LOOKUP  h0 = /                       1:1-1:1
 2  YIELD   h0                           1:1-1:1
 3  COMMIT                               1:1-1:1

=== a string statement
--- input
"hello"
--- plan
 0  BEGIN                                1:1-1:7
 1  YIELD   "hello"                      1:1-1:7
 2  COMMIT                               1:1-1:7

=== append
--- input
/log <<- "line\n"
--- plan
 0  BEGIN                                1:1-1:17
 1  LOOKUP  h0 = /log  create            1:1-1:4
 2  APPEND  h0 <- "line\n"               1:1-1:17
 3  RESULT  h0                           1:1-1:17
 4  YIELD   h0                           1:1-1:17
 5  COMMIT                               1:1-1:17

=== symlink to a bracketed path is its value
--- input
/l -> (/target)
--- plan
 0  BEGIN                                1:1-1:15
 1  LOOKUP  h0 = /target                 1:8-1:14
 2  READ    v0 = h0                      1:8-1:14
 3  LOOKUP  h1 = /l  missing  nofollow   1:1-1:2
 4  SYMLINK h1 -> v0                     1:1-1:15
 5  RESULT  h1                           1:1-1:15
 6  YIELD   h1                           1:1-1:15
 7  COMMIT                               1:1-1:15

=== ..plugin/<type> reads
--- input
/t <- /a/..plugin/hash
--- plan
 0  BEGIN                                1:1-1:22
 1  LOOKUP  h0 = /a/..plugin/hash        1:7-1:22
 2  READ    v0 = h0                      1:7-1:22
 3  LOOKUP  h1 = /t  create              1:1-1:2
 4  WRITE   h1 <- v0                     1:1-1:22
 5  RESULT  h1                           1:1-1:22
 6  YIELD   h1                           1:1-1:22
 7  COMMIT                               1:1-1:22

=== ..plugin/<type> writes
--- input
/a/..plugin/hash <- "r5_hash"
--- plan
 0  BEGIN                                1:1-1:29
 1  LOOKUP  h0 = /a  nofollow            1:1-1:2
 2  SETATTR h0 ..plugin/hash <- "r5_hash" 1:1-1:29
 3  RESULT  h0 ..plugin                  1:1-1:29
 4  YIELD   h0                           1:1-1:29
 5  COMMIT                               1:1-1:29

=== a constant parameter from a string
--- input
/srv/..new/(name <- "x", type <- "directory")
--- plan
 0  BEGIN                                1:1-1:45
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  CREATE  h1 = h0/"x"  directory       1:1-1:45
 3  YIELD   h1                           1:1-1:45
 4  COMMIT                               1:1-1:45

=== ..new aggregate with format
--- input
/etc/..new/(name <- "group", type <- aggregate, format <- colon)
--- plan
 0  BEGIN                                1:1-1:64
 1  LOOKUP  h0 = /etc                    1:1-1:4
 2  CREATE  h1 = h0/"group"  aggregate format colon 1:1-1:64
 3  YIELD   h1                           1:1-1:64
 4  COMMIT                               1:1-1:64

=== ..new symlink
--- input
/srv/..new/(name <- "l", type <- symlink, target <- "/x")
--- plan
 0  BEGIN                                1:1-1:57
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  CREATE  h1 = h0/"l"  symlink target "/x" 1:1-1:57
 3  YIELD   h1                           1:1-1:57
 4  COMMIT                               1:1-1:57

=== ..new in the current directory
--- input
..new/(name <- "x")
--- plan
 0  BEGIN                                1:1-1:19
 1  LOOKUP  h0 = .                       1:1-1:19
 2  CREATE  h1 = h0/"x"  regular         1:1-1:19
 3  YIELD   h1                           1:1-1:19
 4  COMMIT                               1:1-1:19

=== ..audit
--- input
/f/..audit/(log <- /var/log/f)
--- plan
 0  BEGIN                                1:1-1:30
 1  LOOKUP  h0 = /f                      1:1-1:2
 2  LOOKUP  h1 = /var/log/f              1:20-1:29
 3  AUDIT   h0 log h1                    1:1-1:30
 4  YIELD   ""                           1:1-1:30
 5  COMMIT                               1:1-1:30

=== ..acl by gid
--- input
/f/..acl/(gid <- #100, access <- denied)
--- plan
 0  BEGIN                                1:1-1:40
 1  LOOKUP  h0 = /f                      1:1-1:2
 2  RULE    h0 gid "100" denied          1:1-1:40
 3  YIELD   ""                           1:1-1:40
 4  COMMIT                               1:1-1:40

=== ..body written
--- input
/l/..body <- "new text"
--- plan
 0  BEGIN                                1:1-1:23
 1  LOOKUP  h0 = /l  nofollow            1:1-1:2
 2  SETATTR h0 ..body <- "new text"      1:1-1:23
 3  RESULT  h0 ..body                    1:1-1:23
 4  YIELD   h0                           1:1-1:23
 5  COMMIT                               1:1-1:23

=== ..size, ..atime written
--- input
/f/..size <- #0; /f/..atime <- #-5
--- plan
 0  BEGIN                                1:1-1:34
 1  LOOKUP  h0 = /f  nofollow            1:1-1:2
 2  SETATTR h0 ..size <- "0"             1:1-1:15
 3  RESULT  h0 ..size                    1:1-1:15
 4  YIELD   h0                           1:1-1:15
 5  LOOKUP  h1 = /f  nofollow            1:18-1:19
 6  SETATTR h1 ..atime <- "-5"           1:18-1:34
 7  RESULT  h1 ..atime                   1:18-1:34
 8  YIELD   h1                           1:18-1:34
 9  COMMIT                               1:1-1:34

=== a scope's value
--- input
/t <- /srv/(motd)
--- plan
 0  BEGIN                                1:1-1:17
 1  LOOKUP  h0 = /srv                    1:7-1:10
 2  SCOPE   h0                           1:12-1:17
 3  LOOKUP  h1 = motd                    1:13-1:16
 4  READ    v0 = h1                      1:13-1:16
 5  ENDSCOPE                             1:12-1:17
 6  LOOKUP  h2 = /t  create              1:1-1:2
 7  WRITE   h2 <- v0                     1:1-1:17
 8  RESULT  h2                           1:1-1:17
 9  YIELD   h2                           1:1-1:17
10  COMMIT                               1:1-1:17

=== a scope as a statement yields each member
--- input
/srv/(a; b)
--- plan
 0  BEGIN                                1:1-1:11
 1  LOOKUP  h0 = /srv                    1:1-1:4
 2  SCOPE   h0                           1:6-1:11
 3  LOOKUP  h1 = a                       1:7-1:7
 4  YIELD   h1                           1:7-1:7
 5  LOOKUP  h2 = b                       1:10-1:10
 6  YIELD   h2                           1:10-1:10
 7  ENDSCOPE                             1:6-1:11
 8  COMMIT                               1:1-1:11

=== a nested scope
--- input
/a/(b/(c <- "1"))
--- plan
 0  BEGIN                                1:1-1:17
 1  LOOKUP  h0 = /a                      1:1-1:2
 2  SCOPE   h0                           1:4-1:17
 3  LOOKUP  h1 = b                       1:5-1:5
 4  SCOPE   h1                           1:7-1:16
 5  LOOKUP  h2 = c  create               1:8-1:8
 6  WRITE   h2 <- "1"                    1:8-1:15
 7  RESULT  h2                           1:8-1:15
 8  YIELD   h2                           1:8-1:15
 9  ENDSCOPE                             1:7-1:16
10  ENDSCOPE                             1:4-1:17
11  COMMIT                               1:1-1:17

=== named result through a path
--- input
/run/r1 <= a <<- "x"; /t <- /run/r1/assign_length
--- plan
 0  BEGIN                                1:1-1:49
 1  TRY     r0 /run/r1 -> 5              1:1-1:7
 2  LOOKUP  h0 = a  create               1:12-1:12
 3  APPEND  h0 <- "x"                    1:1-1:20
 4  RESULT  h0 -> r0                     1:1-1:20
 5  ENDTRY  r0                           1:1-1:7
 6  YIELD   h0                           1:1-1:20
 7  RESVAL  v0 = r0/assign_length        1:29-1:49
 8  LOOKUP  h1 = /t  create              1:23-1:24
 9  WRITE   h1 <- v0                     1:23-1:49
10  RESULT  h1                           1:23-1:49
11  YIELD   h1                           1:23-1:49
12  COMMIT                               1:1-1:49

=== named result rebinding hides the older
--- input
r <= /a <- "1"; (r <= /b <- "2"; /t <- r/assign_result); /u <- r/assign_result
--- plan
 0  BEGIN                                1:1-1:78
 1  TRY     r0 r -> 5                    1:1-1:1
 2  LOOKUP  h0 = /a  create              1:6-1:7
 3  WRITE   h0 <- "1"                    1:1-1:14
 4  RESULT  h0 -> r0                     1:1-1:14
 5  ENDTRY  r0                           1:1-1:1
 6  YIELD   h0                           1:1-1:14
 7  TRY     r1 r -> 11                   1:18-1:18
 8  LOOKUP  h1 = /b  create              1:23-1:24
 9  WRITE   h1 <- "2"                    1:18-1:31
10  RESULT  h1 -> r1                     1:18-1:31
11  ENDTRY  r1                           1:18-1:18
12  YIELD   h1                           1:18-1:31
13  RESVAL  v0 = r1/assign_result        1:40-1:54
14  LOOKUP  h2 = /t  create              1:34-1:35
15  WRITE   h2 <- v0                     1:34-1:54
16  RESULT  h2                           1:34-1:54
17  YIELD   h2                           1:34-1:54
18  RESVAL  v1 = r0/assign_result        1:64-1:78
19  LOOKUP  h3 = /u  create              1:58-1:59
20  WRITE   h3 <- v1                     1:58-1:78
21  RESULT  h3                           1:58-1:78
22  YIELD   h3                           1:58-1:78
23  COMMIT                               1:1-1:78

=== a named result not yet visible in its own value
--- input
r <= /a <- r/assign_result
--- plan
 0  BEGIN                                1:1-1:26
 1  TRY     r0 r -> 7                    1:1-1:1
 2  LOOKUP  h0 = r/assign_result         1:12-1:26
 3  READ    v0 = h0                      1:12-1:26
 4  LOOKUP  h1 = /a  create              1:6-1:7
 5  WRITE   h1 <- v0                     1:1-1:26
 6  RESULT  h1 -> r0                     1:1-1:26
 7  ENDTRY  r0                           1:1-1:1
 8  YIELD   h1                           1:1-1:26
 9  COMMIT                               1:1-1:26

=== deref as a value
--- input
/t <- */p
--- plan
 0  BEGIN                                1:1-1:9
 1  LOOKUP  h0 = /p                      1:8-1:9
 2  READ    v0 = h0                      1:8-1:9
 3  DEREF   h1 = *v0                     1:7-1:9
 4  READ    v1 = h1                      1:7-1:9
 5  LOOKUP  h2 = /t  create              1:1-1:2
 6  WRITE   h2 <- v1                     1:1-1:9
 7  RESULT  h2                           1:1-1:9
 8  YIELD   h2                           1:1-1:9
 9  COMMIT                               1:1-1:9

=== exist
--- input
/t <- exist /a/b
--- plan
 0  BEGIN                                1:1-1:16
 1  LOOKUP  h0 = /a/b  exist-test        1:13-1:16
 2  TEST    v0 = exist h0                1:7-1:16
 3  LOOKUP  h1 = /t  create              1:1-1:2
 4  WRITE   h1 <- v0                     1:1-1:16
 5  RESULT  h1                           1:1-1:16
 6  YIELD   h1                           1:1-1:16
 7  COMMIT                               1:1-1:16

=== tw group nested joins the unit
--- input
tw/outer[ /a <- "1"; tw/inner[ /b <- "2" ] ]
--- plan
 0  BEGIN   outer                        1:1-1:44
 1  LOOKUP  h0 = /a  create              1:11-1:12
 2  WRITE   h0 <- "1"                    1:11-1:19
 3  RESULT  h0                           1:11-1:19
 4  YIELD   h0                           1:11-1:19
 5  BEGIN   inner                        1:22-1:42
 6  LOOKUP  h1 = /b  create              1:32-1:33
 7  WRITE   h1 <- "2"                    1:32-1:40
 8  RESULT  h1                           1:32-1:40
 9  YIELD   h1                           1:32-1:40
10  COMMIT  inner                        1:22-1:42
11  COMMIT  outer                        1:1-1:44

=== no conflict: two reads
--- input
(/t1 <- /a, /t2 <- /a)
--- plan
 0  BEGIN                                1:1-1:22
 1  GROUP   2 members                    1:2-1:21
 2  LOOKUP  h0 = /a                      1:9-1:10
 3  READ    v0 = h0                      1:9-1:10
 4  LOOKUP  h1 = /t1  create             1:2-1:4
 5  WRITE   h1 <- v0                     1:2-1:10
 6  RESULT  h1                           1:2-1:10
 7  YIELD   h1                           1:2-1:10
 8  MEMBER                               1:13-1:21
 9  LOOKUP  h2 = /a                      1:20-1:21
10  READ    v1 = h2                      1:20-1:21
11  LOOKUP  h3 = /t2  create             1:13-1:15
12  WRITE   h3 <- v1                     1:13-1:21
13  RESULT  h3                           1:13-1:21
14  YIELD   h3                           1:13-1:21
15  ENDGROUP                             1:2-1:21
16  COMMIT                               1:1-1:22

=== no conflict: different scopes
--- input
/d1/(a <- "1"), /d2/(a <- "2")
--- plan
 0  BEGIN                                1:1-1:30
 1  GROUP   2 members                    1:1-1:30
 2  LOOKUP  h0 = /d1                     1:1-1:3
 3  SCOPE   h0                           1:5-1:14
 4  LOOKUP  h1 = a  create               1:6-1:6
 5  WRITE   h1 <- "1"                    1:6-1:13
 6  RESULT  h1                           1:6-1:13
 7  YIELD   h1                           1:6-1:13
 8  ENDSCOPE                             1:5-1:14
 9  MEMBER                               1:17-1:30
10  LOOKUP  h2 = /d2                     1:17-1:19
11  SCOPE   h2                           1:21-1:30
12  LOOKUP  h3 = a  create               1:22-1:22
13  WRITE   h3 <- "2"                    1:22-1:29
14  RESULT  h3                           1:22-1:29
15  YIELD   h3                           1:22-1:29
16  ENDSCOPE                             1:21-1:30
17  ENDGROUP                             1:1-1:30
18  COMMIT                               1:1-1:30

=== a group of values concatenated
--- input
/t <- (a, b)
--- plan
 0  BEGIN                                1:1-1:12
 1  GROUP   2 members                    1:8-1:11
 2  LOOKUP  h0 = a                       1:8-1:8
 3  READ    v0 = h0                      1:8-1:8
 4  MEMBER                               1:11-1:11
 5  LOOKUP  h1 = b                       1:11-1:11
 6  READ    v1 = h1                      1:11-1:11
 7  CONCAT  v2 = v0 + v1                 1:11-1:11
 8  ENDGROUP                             1:8-1:11
 9  LOOKUP  h2 = /t  create              1:1-1:2
10  WRITE   h2 <- v2                     1:1-1:12
11  RESULT  h2                           1:1-1:12
12  YIELD   h2                           1:1-1:12
13  COMMIT                               1:1-1:12

=== bytes of a sequence
--- input
/t <- ("x"; "y")
--- plan
 0  BEGIN                                1:1-1:16
 1  CONCAT  v0 = "x" + "y"               1:13-1:15
 2  LOOKUP  h0 = /t  create              1:1-1:2
 3  WRITE   h0 <- v0                     1:1-1:16
 4  RESULT  h0                           1:1-1:16
 5  YIELD   h0                           1:1-1:16
 6  COMMIT                               1:1-1:16

=== reading a result child of an object
--- input
/f <- "1"; /t <- /f/assign_result
--- plan
 0  BEGIN                                1:1-1:33
 1  LOOKUP  h0 = /f  create              1:1-1:2
 2  WRITE   h0 <- "1"                    1:1-1:9
 3  RESULT  h0                           1:1-1:9
 4  YIELD   h0                           1:1-1:9
 5  LOOKUP  h1 = /f/assign_result        1:18-1:33
 6  READ    v0 = h1                      1:18-1:33
 7  LOOKUP  h2 = /t  create              1:12-1:13
 8  WRITE   h2 <- v0                     1:12-1:33
 9  RESULT  h2                           1:12-1:33
10  YIELD   h2                           1:12-1:33
11  COMMIT                               1:1-1:33
