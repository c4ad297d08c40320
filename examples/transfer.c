/*
 * transfer.c - move money between two accounts (files holding a decimal
 * balance) with the reiser4() call of libr4call (docs/library.md): read
 * both balances in one unit, then write both in a compare-and-swap that
 * commits only if they are still what was read.
 *
 *   cc -o transfer transfer.c $(pkg-config --cflags --libs r4call)
 *   R4_IMAGE=bank.img ./transfer /bank/alice /bank/bob 40
 *   cd /mnt/r4 && ./transfer /bank/alice /bank/bob 40    (on an r4fuse mount)
 *
 * FROM and TO are R4L paths.  With EXPECT_FROM and EXPECT_TO, the swap
 * expects those balances instead of reading them (a stale view: the swap
 * fails and changes nothing).  Prints the new balances, or the failure's
 * errno, position and message; exits 0, or 1 when nothing moved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <r4call.h>

/* Print why a call failed: each diagnostic, as data. */
static int failed(const struct reiser4_result *r)
{
	if (!r) {
		fprintf(stderr, "transfer: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < r->ndiags; i++) {
		const struct reiser4_diag *d = &r->diags[i];

		fprintf(stderr, "transfer: status %d errno %d (%s) at %u:%u: %s\n", r->status,
			d->err, strerror(d->err), d->line, d->col, d->msg);
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct reiser4_result *r;
	long long from, to, amount;
	char cmd[1024];
	int n;

	if (argc != 4 && argc != 6) {
		fprintf(stderr, "usage: transfer FROM TO AMOUNT [EXPECT_FROM EXPECT_TO]\n");
		return 2;
	}
	amount = atoll(argv[3]);
	if (argc == 6) {
		from = atoll(argv[4]);
		to = atoll(argv[5]);
	} else {
		/* both balances in one unit: a consistent view */
		n = snprintf(cmd, sizeof(cmd), "%s; %s", argv[1], argv[2]);
		if (reiser4(cmd, (size_t)n, &r) || r->nvalues != 2) {
			n = failed(r);
			reiser4_result_free(r);
			return n;
		}
		from = atoll(r->values[0].bytes);
		to = atoll(r->values[1].bytes);
		reiser4_result_free(r);
	}
	if (amount <= 0 || amount > from) {
		fprintf(stderr, "transfer: cannot move %lld out of %lld\n", amount, from);
		return 1;
	}
	/*
	 * The swap: one unit that writes both balances if they are still the
	 * expected ones, else reads a file that is not there, which fails the
	 * unit (ENOENT) with a message naming it: nothing is written.
	 */
	n = snprintf(cmd, sizeof(cmd),
		     "tw/[ if %s eq \"%lld\" and %s eq \"%lld\"\n"
		     "     then (%s <- \"%lld\", %s <- \"%lld\")\n"
		     "     else *\"/stale balance\" ]",
		     argv[1], from, argv[2], to, argv[1], from - amount, argv[2], to + amount);
	if (reiser4(cmd, (size_t)n, &r)) {
		n = failed(r);
		reiser4_result_free(r);
		return n;
	}
	for (size_t i = 0; i < r->nvalues; i++)
		printf("%s%.*s", i ? " " : "", (int)r->values[i].len, r->values[i].bytes);
	printf("\n");
	reiser4_result_free(r);
	return 0;
}
