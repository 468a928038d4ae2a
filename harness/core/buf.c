/*
 * buf.c - the one growable text buffer with sticky errors (buf.h).
 *
 * Doubling growth up to H2B_BUF_MAX. printf-style appends format straight into the spare
 * capacity and only grow and retry when the text does not fit, so most appends cost one
 * vsnprintf. The escapes for XML and markdown cells live here, next to the buffer they write,
 * so every renderer escapes for its consumer the same way.
 *
 * Rejected: open_memstream (no maximum, and its errors surface only at fclose); two buffers,
 * one per engine (the gate's and the report's had drifted apart in their error rules).
 */
#include "core/buf.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h2b_buf_init(struct h2b_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->err = H2B_OK;
}

void h2b_buf_free(struct h2b_buf *b)
{
    free(b->data);
    h2b_buf_init(b);
}

/* Makes room for extra more bytes plus the NUL. */
static int reserve(struct h2b_buf *b, size_t extra)
{
    if (b->err)
        return b->err;
    if (extra >= H2B_BUF_MAX - b->len) {
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

void h2b_buf_append(struct h2b_buf *b, const char *s, size_t n)
{
    if (reserve(b, n) != H2B_OK)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void h2b_buf_puts(struct h2b_buf *b, const char *s)
{
    h2b_buf_append(b, s, strlen(s));
}

void h2b_buf_printf(struct h2b_buf *b, const char *fmt, ...)
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

void h2b_buf_xml(struct h2b_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            h2b_buf_append(b, "&amp;", 5);
            break;
        case '<':
            h2b_buf_append(b, "&lt;", 4);
            break;
        case '>':
            h2b_buf_append(b, "&gt;", 4);
            break;
        case '"':
            h2b_buf_append(b, "&quot;", 6);
            break;
        case '\'':
            h2b_buf_append(b, "&apos;", 6);
            break;
        default:
            /* XML 1.0 forbids most control characters even escaped. */
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                h2b_buf_append(b, "?", 1);
            else
                h2b_buf_append(b, s, 1);
        }
    }
}

void h2b_buf_md(struct h2b_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            h2b_buf_append(b, "\\|", 2);
        else if (*s == '\n')
            h2b_buf_append(b, " ", 1);
        else
            h2b_buf_append(b, s, 1);
    }
}

const char *h2b_buf_str(const struct h2b_buf *b)
{
    return b->data ? b->data : "";
}

int h2b_buf_error(const struct h2b_buf *b)
{
    return b->err;
}

char *h2b_buf_take(struct h2b_buf *b)
{
    if (b->err) {
        h2b_buf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    h2b_buf_init(b);
    return s;
}

int h2b_buf_finish(struct h2b_buf *b, char **out)
{
    int err = b->err;
    char *s = h2b_buf_take(b);
    if (!s)
        return err ? err : H2B_ERR_NOMEM;
    *out = s;
    return H2B_OK;
}

size_t h2b_buf_width(size_t w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > w ? n : w;
}
