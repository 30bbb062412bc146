/*
 * tap.h - a minimal TAP producer for fasttime's standalone unit tests.
 *
 *	ok(cond, "description %s", ...)	one test point
 *	todo_start("why") / todo_end()		failures in between are known bugs:
 *										reported "# TODO", not counted failed
 *	diag("...")							a "# " comment line
 *	return tap_done();					"1..N" and the closing count line
 *
 * test/unit/tap.h
 */
#ifndef FT_TAP_H
#define FT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int	tap_n = 0;
static int	tap_failed = 0;
static int	tap_todo_failed = 0;
static const char *tap_todo = NULL;

static void tap_ok(int pass, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list		ap;

	tap_n++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (tap_todo)
		printf(" # TODO %s", tap_todo);
	printf("\n");
	if (!pass)
	{
		printf("#   failed at %s line %d\n", file, line);
		if (tap_todo)
			tap_todo_failed++;
		else
			tap_failed++;
	}
	fflush(stdout);
}

#define ok(cond, ...) tap_ok((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))
#define todo_start(why) (tap_todo = (why))
#define todo_end() (tap_todo = NULL)

/* Plan, then the closing line the stage script counts. */
static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_todo_failed)
		printf("# %d known bug(s) marked TODO\n", tap_todo_failed);
	printf("%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
	return tap_failed == 0 ? 0 : 1;
}

#endif							/* FT_TAP_H */
