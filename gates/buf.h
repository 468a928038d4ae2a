/*
 * buf.h - a growable text buffer for the gate's renderers (tables, markdown, JUnit, JSON).
 *
 * Appends never fail silently: the first allocation failure latches buf->failed and later
 * appends do nothing, so a renderer appends freely and checks once at the end.
 */
#ifndef H2B_BUF_H
#define H2B_BUF_H

#include <stdbool.h>
#include <stddef.h>

#define H2B_BUF_MAX (64u << 20) /* a rendered report never needs more than 64 MiB */

struct h2b_buf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len, cap;
    bool failed;
};

/* printf-style append. */
void h2b_buf_printf(struct h2b_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends len bytes of s. */
void h2b_buf_append(struct h2b_buf *b, const char *s, size_t len);

/* Appends s escaped for XML text and attributes (&, <, >, ", '). */
void h2b_buf_xml(struct h2b_buf *b, const char *s);

/* Appends s with markdown table cell metacharacters (|) escaped. */
void h2b_buf_md(struct h2b_buf *b, const char *s);

/* Hands the text over: returns H2B_OK with a malloc'd string in *out (an empty string for an
 * empty buffer), or H2B_ERR_NOMEM if any append failed. The buffer is empty afterwards. */
int h2b_buf_finish(struct h2b_buf *b, char **out);

/* Frees the buffer's memory. */
void h2b_buf_free(struct h2b_buf *b);

#endif
