/*
 * strbuf.c - growable text buffer with sticky errors.
 *
 * Doubling growth up to H2B_STRBUF_MAX. printf-style appends format straight into the spare
 * capacity and only grow and retry when the text does not fit, so most appends cost one
 * vsnprintf.
 */
#include "strbuf.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h2b_strbuf_init(struct h2b_strbuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->err = H2B_OK;
}

void h2b_strbuf_free(struct h2b_strbuf *b)
{
    free(b->data);
    h2b_strbuf_init(b);
}

/* Makes room for extra more bytes plus the NUL. */
static int reserve(struct h2b_strbuf *b, size_t extra)
{
    if (b->err)
        return b->err;
    if (extra >= H2B_STRBUF_MAX - b->len) {
        b->err = H2B_ERR_RANGE;
        return b->err;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return H2B_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        b->err = H2B_ERR_NOMEM;
        return b->err;
    }
    b->data = p;
    b->cap = cap;
    return H2B_OK;
}

void h2b_strbuf_append(struct h2b_strbuf *b, const char *s, size_t n)
{
    if (reserve(b, n) != H2B_OK)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void h2b_strbuf_puts(struct h2b_strbuf *b, const char *s)
{
    h2b_strbuf_append(b, s, strlen(s));
}

void h2b_strbuf_printf(struct h2b_strbuf *b, const char *fmt, ...)
{
    if (reserve(b, 0) != H2B_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = H2B_ERR_INVAL;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (reserve(b, (size_t)n) != H2B_OK)
            return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

const char *h2b_strbuf_str(const struct h2b_strbuf *b)
{
    return b->data ? b->data : "";
}

int h2b_strbuf_error(const struct h2b_strbuf *b)
{
    return b->err;
}

char *h2b_strbuf_take(struct h2b_strbuf *b)
{
    if (b->err) {
        h2b_strbuf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    h2b_strbuf_init(b);
    return s;
}
