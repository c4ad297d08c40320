# Precedence and associativity (LANGUAGE.md section 4), as bracketed AST dumps.
# Format: tests/lang/README.md.  Generated outputs were read and checked by hand.

=== prec: + is left-associative
--- input
a + b + c
--- ast
(+ (+ a b) c)

=== prec: <- is right-associative
--- input
/a <- /b <- "1"
--- ast
(<- /a (<- /b "1"))

=== prec: <- reaches right past or
--- input
x <- p or q
--- ast
(<- x (or p q))

=== prec: + binds tighter than <-
--- input
a + b <- c
--- ast
(+ a (<- b c))

=== prec: or is left-associative
--- input
a or b or c
--- ast
(or (or a b) c)

=== prec: and is left-associative
--- input
a and b and c
--- ast
(and (and a b) c)

=== prec: and binds tighter than or
--- input
a or b and c
--- ast
(or a (and b c))

=== prec: and before or, left side
--- input
a and b or c
--- ast
(or (and a b) c)

=== prec: not binds tighter than and
--- input
not a and b
--- ast
(and (not a) b)

=== prec: comparison binds tighter than not
--- input
not a eq b
--- ast
(not (eq a b))

=== prec: + binds tighter than a comparison
--- input
a + b eq c + d
--- ast
(eq (+ a b) (+ c d))

=== prec: * binds tighter than +
--- input
*a + b
--- ast
(+ (* a) b)

=== prec: * of a bracket
--- input
*(a + b)
--- ast
(* ((+ a b)))

=== prec: * applied to an assignment
--- input
*p <- "x"
--- ast
(* (<- p "x"))

=== prec: <- inside or's right operand
--- input
a or b <- c
--- ast
(or a (<- b c))

=== prec: else ends a then-branch assignment
--- input
if p then x <- y else z
--- ast
(if p (<- x y) z)

=== prec: assignment in else reaches the end
--- input
if p then x else y <- z + w
--- ast
(if p x (<- y (+ z w)))

=== prec: if inside an assignment
--- input
x <- if p then a else b
--- ast
(<- x (if p a b))

=== prec: if branch ends at ','
--- input
if p then a, b
--- ast
(if p a) , b

=== prec: if branch ends at ';'
--- input
if p then a; b
--- ast
(if p a)
b

=== prec: bracketed branch with ';'
--- input
if /ok then (/a <- "1"; /b <- "2")
--- ast
(if /ok ((<- /a "1") ; (<- /b "2")))

=== prec: not of not
--- input
not not a
--- ast
(not (not a))

=== prec: exist in a condition
--- input
if not exist /a or exist /b then c
--- ast
(if (or (not (exist /a)) (exist /b)) c)

=== prec: comparison with concatenation on both sides
--- input
a + b lt c
--- ast
(lt (+ a b) c)

=== prec: or inside if condition
--- input
if a or b then c else d
--- ast
(if (or a b) c d)

=== prec: append binds like replace
--- input
log <<- a + b
--- ast
(<<- log (+ a b))

=== prec: symlink right side
--- input
l -> a + b
--- ast
(-> l (+ a b))

=== prec: named result right-assoc
--- input
r <= a <- s <= b <- c
--- ast
(<= r (<- a (<= s (<- b c))))
