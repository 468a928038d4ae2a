/*
 * buf.c - growable text buffer (see buf.h).
 *
 * Doubling growth with a hard cap; vsnprintf twice when the first attempt does not fit. A latched
 * failure flag instead of a return code per append keeps the renderers readable.
 */
#include "buf.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct h2b_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > H2B_BUF_MAX) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void h2b_buf_append(struct h2b_buf *b, const char *s, size_t len)
{
    if (!reserve(b, len))
        return;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void h2b_buf_printf(struct h2b_buf *b, const char *fmt, ...)
{
    va_list ap;
    if (!reserve(b, 128))
        return;
    va_start(ap, fmt);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (!reserve(b, (size_t)n))
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

int h2b_buf_finish(struct h2b_buf *b, char **out)
{
    if (!b->failed && !b->data)
        reserve(b, 0);
    if (b->failed) {
        h2b_buf_free(b);
        return H2B_ERR_NOMEM;
    }
    b->data[b->len] = '\0';
    *out = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return H2B_OK;
}

void h2b_buf_free(struct h2b_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
