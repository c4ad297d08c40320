# Plans of scripts: one unit per top-level statement (LANGUAGE.md section 1).
# Format: tests/lang/README.md.  Generated outputs were read and checked by hand.

=== script: one unit per statement
--- input
/a <- "1"
/b <- "2"
--- plan-script
 0  BEGIN                                1:1-1:9
 1  LOOKUP  h0 = /a  create              1:1-1:2
 2  WRITE   h0 <- "1"                    1:1-1:9
 3  RESULT  h0                           1:1-1:9
 4  YIELD   h0                           1:1-1:9
 5  COMMIT                               1:1-1:9
 6  BEGIN                                2:1-2:9
 7  LOOKUP  h1 = /b  create              2:1-2:2
 8  WRITE   h1 <- "2"                    2:1-2:9
 9  RESULT  h1                           2:1-2:9
10  YIELD   h1                           2:1-2:9
11  COMMIT                               2:1-2:9

=== script: a tw group is its unit
--- input
/a <- "0"
tw/transfer[ /a <- "40"; /b <- "160" ]
--- plan-script
 0  BEGIN                                1:1-1:9
 1  LOOKUP  h0 = /a  create              1:1-1:2
 2  WRITE   h0 <- "0"                    1:1-1:9
 3  RESULT  h0                           1:1-1:9
 4  YIELD   h0                           1:1-1:9
 5  COMMIT                               1:1-1:9
 6  BEGIN   transfer                     2:1-2:38
 7  LOOKUP  h1 = /a  create              2:14-2:15
 8  WRITE   h1 <- "40"                   2:14-2:23
 9  RESULT  h1                           2:14-2:23
10  YIELD   h1                           2:14-2:23
11  LOOKUP  h2 = /b  create              2:26-2:27
12  WRITE   h2 <- "160"                  2:26-2:36
13  RESULT  h2                           2:26-2:36
14  YIELD   h2                           2:26-2:36
15  COMMIT  transfer                     2:1-2:38
