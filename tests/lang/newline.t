# Statement separation (LANGUAGE.md section 2.5): the newline rule.
# Format: tests/lang/README.md.  Generated outputs were read and checked by hand.

=== newline: ends a complete statement
--- input
a <- b
c <- d
--- ast
(<- a b)
(<- c d)

=== newline: after an operator continues
--- input
a <- b +
c
--- ast
(<- a (+ b c))

=== newline: after <- continues
--- input
a <-
b
--- ast
(<- a b)

=== newline: after a keyword continues
--- input
if a then
b
--- ast
(if a b)

=== newline: else on its own line ends it
--- input
if a then b
else c
--- diag
<command>:2:1: error: unexpected 'else': the newline ended the previous statement
else c
^~~~

=== newline: inside brackets is whitespace
--- input
(if c then x
else y)
--- ast
((if c x y))

=== newline: inside tw brackets
--- input
tw/[
 a <- "1";
 b <- "2"
]
--- ast
(tw ((<- a "1") ; (<- b "2")))

=== newline: after ',' continues
--- input
a,
b
--- ast
a , b

=== newline: after ';' is whitespace
--- input
a;
b
--- ast
a
b

=== newline: after '/' continues
--- input
/srv/
motd
--- ast
/srv/motd

=== newline: at the start is whitespace
--- input


a
--- ast
a

=== newline: after a quoted name ends
--- input
`x'
y
--- ast
`x'
y

=== newline: after a number ends
--- input
a <- #1
b
--- ast
(<- a #1)
b

=== newline: inside a string is a byte
--- input
a <- "x
y"
b
--- ast
(<- a "x\ny")
b

=== newline: statement-initial else
--- input
if /lock eq "free" then /lock <- "held"
else "busy"
--- diag
<command>:2:1: error: unexpected 'else': the newline ended the previous statement
else "busy"
^~~~

=== newline: statement-initial then
--- input
if a
then b
--- diag
<command>:1:5: error: unexpected newline, expecting 'then': a newline after an operand ends the statement; break lines after an operator or inside brackets
if a
    ^
<command>:2:1: error: unexpected 'then': the newline ended the previous statement
then b
^~~~

=== newline: statement-initial +
--- input
a <- b
+ c
--- diag
<command>:2:1: error: unexpected '+': the newline ended the previous statement
+ c
^

=== newline: statement-initial ','
--- input
a
, b
--- diag
<command>:2:1: error: unexpected ',': the newline ended the previous statement
, b
^

=== newline: statement-initial ';'
--- input
a
; b
--- diag
<command>:2:1: error: unexpected ';': the newline ended the previous statement
; b
^

=== newline: statement-initial <-
--- input
a
<- b
--- diag
<command>:2:1: error: unexpected '<-': the newline ended the previous statement
<- b
^~
