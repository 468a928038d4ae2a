/*
 * buf.c - the one growable text buffer with sticky errors (buf.h).
 *
 * Doubling growth up to H2B_BUF_MAX. printf-style appends format straight into the spare
 * capacity and only grow and retry when the text does not fit, so most appends cost one
 * vsnprintf. The escapers live here, one per consumer (XML, markdown text, markdown code
 * span, terminal), next to the buffer they write, so every renderer escapes the same way.
 *
 * Rejected: open_memstream (no maximum, and its errors surface only at fclose); two buffers,
 * one per engine (the gate's and the report's had drifted apart in their error rules).
 */
#include "core/buf.h"
#include "core/check.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
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
    H2B_ASSERT(n < b->cap - b->len); /* reserve made room for n and the NUL */
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
    H2B_ASSERT(b->len < b->cap); /* the text and its NUL fit */
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

static bool ctl_byte(char ch)
{
    return (unsigned char)ch < 0x20 || ch == 0x7f;
}

static bool alnum(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (unsigned char)ch >= 0x80;
}

void h2b_buf_md(struct h2b_buf *b, const char *s)
{
    for (const char *s0 = s; *s; s++) {
        /* '_' between two word characters never opens or closes emphasis (intraword): kept,
         * so perf_event_open and x86_64 read as they are */
        bool inword = *s == '_' && s > s0 && alnum(s[-1]) && alnum(s[1]);
        if (*s == '&')
            h2b_buf_append(b, "&amp;", 5);
        else if (*s == '\n' || *s == '\r')
            h2b_buf_append(b, " ", 1);
        else if (ctl_byte(*s))
            h2b_buf_append(b, "?", 1);
        else if (!inword && strchr("\\`*_[]<>|~", *s)) {
            h2b_buf_append(b, "\\", 1);
            h2b_buf_append(b, s, 1);
        } else
            h2b_buf_append(b, s, 1);
    }
}

void h2b_buf_md_code(struct h2b_buf *b, const char *s)
{
    size_t longest = 0, run = 0, n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    bool space = n > 0 && (s[0] == '`' || s[n - 1] == '`');
    for (size_t i = 0; i <= longest; i++)
        h2b_buf_append(b, "`", 1);
    if (space)
        h2b_buf_append(b, " ", 1);
    for (; *s; s++) {
        if (*s == '|')
            h2b_buf_append(b, "\\|", 2);
        else if (*s == '\n' || *s == '\r')
            h2b_buf_append(b, " ", 1);
        else if (ctl_byte(*s))
            h2b_buf_append(b, "?", 1);
        else
            h2b_buf_append(b, s, 1);
    }
    if (space)
        h2b_buf_append(b, " ", 1);
    for (size_t i = 0; i <= longest; i++)
        h2b_buf_append(b, "`", 1);
}

void h2b_buf_term(struct h2b_buf *b, const char *s)
{
    for (; *s; s++)
        h2b_buf_append(b, ctl_byte(*s) ? "?" : s, 1);
}

void h2b_buf_mermaid(struct h2b_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    bool cut = n > max;
    if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
    }
    h2b_buf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        const char *out = &s[i];
        if (c == '"' || c == '`')
            out = "'";
        else if (c == '[' || c == '{')
            out = "(";
        else if (c == ']' || c == '}')
            out = ")";
        else if (ctl_byte(c) || strchr("<>#&;\\", c))
            out = "?";
        h2b_buf_append(b, out, 1);
    }
    h2b_buf_puts(b, cut ? "...\"" : "\"");
}

void h2b_buf_pad(struct h2b_buf *b, size_t n)
{
    static const char spaces[] = "                                ";
    while (n > 0) {
        size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
        h2b_buf_append(b, spaces, k);
        n -= k;
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
