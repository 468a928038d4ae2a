/*
 * strbuf.h - a growable text buffer for building markdown, gnuplot scripts and data files.
 *
 * Errors are sticky: after an allocation fails (or the buffer would pass its maximum) every
 * append is a no-op and h2b_strbuf_error() returns the code, so a renderer appends freely and
 * checks once at the end. Not thread-safe; the caller owns the storage (_init/_free).
 */
#ifndef H2B_STRBUF_H
#define H2B_STRBUF_H

#include <stddef.h>

#define H2B_STRBUF_MAX ((size_t)64 << 20) /* 64 MiB: no report comes near it */

struct h2b_strbuf {
    char *data; /* NUL-terminated while len > 0 or after any append; NULL when empty */
    size_t len;
    size_t cap;
    int err; /* H2B_OK, or the first error: H2B_ERR_NOMEM or H2B_ERR_RANGE */
};

void h2b_strbuf_init(struct h2b_strbuf *b);
void h2b_strbuf_free(struct h2b_strbuf *b);

/* Appends n bytes of s / a NUL-terminated string / printf-formatted text. */
void h2b_strbuf_append(struct h2b_strbuf *b, const char *s, size_t n);
void h2b_strbuf_puts(struct h2b_strbuf *b, const char *s);
void h2b_strbuf_printf(struct h2b_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The text so far ("" when empty; never NULL). Valid until the next append or free. */
const char *h2b_strbuf_str(const struct h2b_strbuf *b);

/* H2B_OK or the first error an append hit. */
int h2b_strbuf_error(const struct h2b_strbuf *b);

/* Hands the text to the caller (malloc'd, caller frees) and empties b. Returns NULL after an
 * error (b is then freed) or when allocation fails. */
char *h2b_strbuf_take(struct h2b_strbuf *b);

#endif
