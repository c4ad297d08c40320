# Grammar (LANGUAGE.md section 3): every production, syntax errors, recovery.
# Format: tests/lang/README.md.  Generated outputs were read and checked by hand.

=== empty input
--- input

--- ast


=== only whitespace and comments
--- input-escaped
  \n# one\n\t# two\n
--- ast


=== one statement
--- input
/bank/alice <- "100"
--- ast
(<- /bank/alice "100")

=== statements by ';'
--- input
a <- "1"; b <- "2"; c <- "3"
--- ast
(<- a "1")
(<- b "2")
(<- c "3")

=== statements by newline
--- input
a <- "1"
b <- "2"
c
--- ast
(<- a "1")
(<- b "2")
c

=== trailing ';' is allowed
--- input
a <- b;
--- ast
(<- a b)

=== trailing newline is allowed
--- input-escaped
a <- b\n
--- ast
(<- a b)

=== blank lines between statements
--- input
a


b
--- ast
a
b

=== replace
--- input
a <- b
--- ast
(<- a b)

=== append
--- input
a <<- b
--- ast
(<<- a b)

=== symlink
--- input
cur -> /srv/v2
--- ast
(-> cur /srv/v2)

=== named result
--- input
r <= /bank/carol <- /import/carol
--- ast
(<= r (<- /bank/carol /import/carol))

=== named result with a path
--- input
/run/r1 <= a <<- "x"
--- ast
(<= /run/r1 (<<- a "x"))

=== if then
--- input
if a then b
--- ast
(if a b)

=== if then else
--- input
if a then b else c
--- ast
(if a b c)

=== if nests, else binds to the nearest
--- input
if a then if b then c else d
--- ast
(if a (if b c d))

=== or and not
--- input
not a or b and c
--- ast
(or (not a) (and b c))

=== all comparisons
--- input
a eq b, a ne b, a lt b, a gt b, a le b, a ge b
--- ast
(eq a b) , (ne a b) , (lt a b) , (gt a b) , (le a b) , (ge a b)

=== exist
--- input
if exist /srv/cache then /srv/cache
--- ast
(if (exist /srv/cache) /srv/cache)

=== concatenation
--- input
/srv/motd <- /srv/motd.head + "-- " + /srv/motd.local
--- ast
(<- /srv/motd (+ (+ /srv/motd.head "-- ") /srv/motd.local))

=== dereference
--- input
/tmp/copy <- */etc/active
--- ast
(<- /tmp/copy (* /etc/active))

=== dereference bracketed as a target
--- input
(*/etc/active)/..mode <- "0444"
--- ast
(<- ((* /etc/active))/..mode "0444")

=== dereference of a string
--- input
*"it's"
--- ast
(* "it's")

=== string and number primaries
--- input
"text"; #12
--- ast
"text"
#12

=== tw group
--- input
tw/[ a <- "1" ]
--- ast
(tw ((<- a "1")))

=== tw group with a label
--- input
tw/transfer[ /bank/alice <- "60"; /bank/bob <- "90" ]
--- ast
(tw transfer ((<- /bank/alice "60") ; (<- /bank/bob "90")))

=== tw group, trailing ';' inside
--- input
tw/[ a; b; ]
--- ast
(tw (a ; b))

=== tw group nested
--- input
tw/outer[ a; tw/inner[ b ] ]
--- ast
(tw outer (a ; (tw inner (b))))

=== tw group's value used
--- input
x <- tw/[ y ]
--- ast
(<- x (tw (y)))

=== comma group
--- input
/bank/(alice <- "1", bob <- "2")
--- ast
/bank/((<- alice "1") , (<- bob "2"))

=== comma group at top level
--- input
a <- "1", b <- "2"
--- ast
(<- a "1") , (<- b "2")

=== comma and semicolon in a block
--- input
(a, b; c, d)
--- ast
(a , b ; c , d)

=== scope component
--- input
/srv/(tmp <- "")/..mode
--- ast
/srv/((<- tmp ""))/..mode

=== bracket first keeps the current directory
--- input
(a <- b)
--- ast
((<- a b))

=== brackets nest
--- input
((a))
--- ast
((a))

=== bracket after a pseudo file
--- input
/srv/..new/(name <- "key", perm <- "0600") <- "k3y\n"
--- ast
(<- /srv/..new/((<- name "key") , (<- perm "0600")) "k3y\n")

=== relative path
--- input
a/b/c
--- ast
a/b/c

=== absolute path
--- input
/a/b/c
--- ast
/a/b/c

=== dot and dot-dot are names
--- input
./../a/..
--- ast
./../a/..

=== root path
--- input
/ <- x
--- ast
(<- / x)

=== guarded transfer
--- input
tw/xfer[ if /bank/alice eq "60" and /bank/bob eq "90" then (/bank/alice <- "10", /bank/bob <- "140") else "stale" ]
--- ast
(tw xfer ((if (and (eq /bank/alice "60") (eq /bank/bob "90")) ((<- /bank/alice "10") , (<- /bank/bob "140")) "stale")))

=== compare-and-swap
--- input
tw/[ if /lock eq "free" then /lock <- "held" else "busy" ]
--- ast
(tw ((if (eq /lock "free") (<- /lock "held") "busy")))

=== the plan example of section 9
--- input
tw/pay[ if /bank/alice eq "100" then /bank/alice <- "40" else /bank/log <<- "stale\n" ]
--- ast
(tw pay ((if (eq /bank/alice "100") (<- /bank/alice "40") (<<- /bank/log "stale\n"))))

=== named result scope example
--- input
(r <= /a <- "1"; /tmp/n <- r/assign_length); /tmp/copy <- r
--- ast
((<= r (<- /a "1")) ; (<- /tmp/n r/assign_length))
(<- /tmp/copy r)

=== result child use
--- input
/bank/alice <- "100"; /bank/log <<- /bank/alice/assign_length + " bytes\n"
--- ast
(<- /bank/alice "100")
(<<- /bank/log (+ /bank/alice/assign_length " bytes\n"))

=== example 21: quoted name and payload
--- input
/music/`Live at the Roxy (1976).ogg'/..size; /tmp/raw <- #s7:a;b "c"
--- ast
/music/`Live at the Roxy (1976).ogg'/..size
(<- /tmp/raw "a;b \"c\"")

=== example 25: invert
--- input
/srv/..new/(name <- "motd", type <- invert)/..invert <- "/srv/motd.head + \"-- \" + /srv/motd.local"
--- ast
(<- /srv/..new/((<- name "motd") , (<- type invert))/..invert "/srv/motd.head + \"-- \" + /srv/motd.local")

=== syntax error: string as target
--- input
"balance" <- /bank/alice
--- diag
<command>:1:11: error: unexpected '<-': a string is not a target
"balance" <- /bank/alice
          ^~

=== syntax error: number as target
--- input
#5 <- a
--- diag
<command>:1:4: error: unexpected '<-': a number is not a target
#5 <- a
   ^~

=== syntax error: expression as target
--- input
(a) + b <- c
--- ast
(+ (a) (<- b c))

=== syntax error: named result on a string
--- input
"r" <= a <- b
--- diag
<command>:1:5: error: unexpected '<=': a string is not a target
"r" <= a <- b
    ^~

=== syntax error: named result without an assignment
--- input
r <= a
--- diag
<command>:1:7: error: unexpected end of input, expecting '<-', '<<-' or '->'
r <= a
      ^

=== syntax error: mismatched bracket
--- input
tw/[ /bank/alice <- "1" )
--- diag
<command>:1:25: error: ')' does not match '['
tw/[ /bank/alice <- "1" )
                        ^
<command>:1:4: note: '[' opened here; it closes with ']'
tw/[ /bank/alice <- "1" )
   ^

=== syntax error: closer without opener
--- input
a )
--- diag
<command>:1:3: error: ')' closes nothing
a )
  ^

=== syntax error: unclosed bracket at end
--- input
a <- (b
--- diag
<command>:1:8: error: unexpected end of input: '(' is not closed
a <- (b
       ^
<command>:1:6: note: '(' opened here
a <- (b
     ^

=== syntax error: unclosed tw group
--- input
tw/[ a
--- diag
<command>:1:7: error: unexpected end of input: '[' is not closed
tw/[ a
      ^
<command>:1:4: note: '[' opened here
tw/[ a
   ^

=== syntax error: empty brackets
--- input
()
--- diag
<command>:1:2: error: empty brackets
()
 ^

=== syntax error: empty tw group
--- input
tw/[ ]
--- diag
<command>:1:6: error: empty brackets
tw/[ ]
     ^

=== syntax error: empty statement
--- input
a; ; b
--- diag
<command>:1:4: error: empty statement before ';'
a; ; b
   ^

=== syntax error: leading ';'
--- input
; a
--- diag
<command>:1:1: error: empty statement before ';'
; a
^

=== syntax error: ';' inside brackets, empty
--- input
(a; ; b)
--- diag
<command>:1:5: error: empty statement before ';'
(a; ; b)
    ^

=== syntax error: missing operand at end
--- input
a <-
--- diag
<command>:1:5: error: unexpected end of input, expecting an expression
a <-
    ^

=== syntax error: missing right operand of +
--- input
a + 
--- diag
<command>:1:5: error: unexpected end of input, expecting an expression
a + 
    ^

=== syntax error: missing operand before ','
--- input
a <- , b
--- diag
<command>:1:6: error: unexpected ',', expecting an expression
a <- , b
     ^

=== syntax error: missing then
--- input
if a b
--- diag
<command>:1:6: error: unexpected word b, expecting 'then'
if a b
     ^

=== syntax error: else without if
--- input
a else b
--- diag
<command>:1:3: error: unexpected 'else': no 'if' is open here
a else b
  ^~~~

=== syntax error: reserved braces
--- input
{a}
--- diag
<command>:1:1: error: unexpected '{': '{ }' are reserved
{a}
^

=== syntax error: brackets without tw
--- input
[a]
--- diag
<command>:1:1: error: unexpected '[': brackets '[ ]' only follow 'tw/'
[a]
^

=== syntax error: tw without slash
--- input
tw[ a ]
--- diag
<command>:1:3: error: unexpected '[': brackets '[ ]' only follow 'tw/'
tw[ a ]
  ^

=== syntax error: tw label then slash
--- input
tw/x/[ a ]
--- diag
<command>:1:5: error: unexpected '/', expecting '['
tw/x/[ a ]
    ^

=== syntax error: name needs a slash before a bracket
--- input
d/..new(name <- "x")
--- diag
<command>:1:8: error: unexpected '(': a bracket after a name needs a '/' before it
d/..new(name <- "x")
       ^

=== syntax error: trailing slash
--- input
a/
--- diag
<command>:1:3: error: unexpected end of input, expecting a word, a quoted name or '('
a/
  ^

=== syntax error: comparisons do not chain
--- input
a eq b eq c
--- diag
<command>:1:8: error: unexpected 'eq': comparisons do not chain; bracket one of them
a eq b eq c
       ^~

=== syntax error: exist takes a path
--- input
exist "a"
--- diag
<command>:1:7: error: unexpected string "a", expecting a word, a quoted name, '/' or '('
exist "a"
      ^~~

=== syntax error: two paths in a row
--- input
a b
--- diag
<command>:1:3: error: unexpected word b after an operand: an operator or a separator is missing
a b
  ^

=== syntax error: keyword as a name
--- input
/srv/if/x
--- diag
<command>:1:6: error: unexpected 'if', expecting a word, a quoted name or '('
/srv/if/x
     ^~

=== syntax error: recovery at ';' reports each statement
--- input
a <- ; b <- ) ; c
--- diag
<command>:1:6: error: unexpected ';', expecting an expression
a <- ; b <- ) ; c
     ^
<command>:1:13: error: ')' closes nothing
a <- ; b <- ) ; c
            ^

=== syntax error: recovery at newlines
--- input
a <-

b +

)
c
--- diag
<command>:5:1: error: ')' closes nothing
)
^

=== syntax error: lexical and syntax errors together
--- input
a <- "x\q"; b <-
--- diag
<command>:1:8: error: unknown escape '\q' in a string
a <- "x\q"; b <-
       ^~
<command>:1:17: error: unexpected end of input, expecting an expression
a <- "x\q"; b <-
                ^
