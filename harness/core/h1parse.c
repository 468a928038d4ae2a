/*
 * h1parse.c - a small strict HTTP/1.1 head parser and chunked decoder (see h1parse.h).
 *
 * Why our own: Debian 12 packages neither llhttp nor picohttpparser as a C library
 * (`apt-cache search` finds only node-llhttp, the JavaScript sources), and the brief prefers
 * Debian's libraries over vendored copies. The parser needs far less than those do: one head
 * at a time, both ends under our control, and strictness is the point (the server must refuse
 * smuggling pairs, not interpret them), so a few hundred lines that reject everything RFC 9112
 * lets a recipient reject are simpler to audit and fuzz than a general lenient parser.
 *
 * Approach: the head is parsed only once its end (CRLF CRLF) is in the buffer; until then only
 * the limits are checked (a request line without CRLF within max_line is 414, a head without
 * its end within max_head is 431), so a head split across reads is rescanned at most
 * max_head bytes per read. Names and values are compared in place, case-insensitively.
 * Rejected: accepting bare LF, obs-fold or whitespace before the colon (lenient parsers differ
 * on each, which is what request smuggling exploits); merging identical Content-Length values
 * (allowed by RFC 9110 but never needed by our clients; refusing is the conservative choice).
 */
#include "core/h1parse.h"
#include "core/check.h"
#include "core/token.h"

#include <string.h>

static uint8_t lower(uint8_t ch)
{
    return ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch;
}

static bool ieq(const uint8_t *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    if (n != l)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(p[i]) != (uint8_t)lit[i])
            return false;
    return true;
}

unsigned h2b_h1_err_status(int err)
{
    switch (err) {
    case H2B_H1_URI_TOO_LONG:
        return 414;
    case H2B_H1_TOO_LARGE:
        return 431;
    case H2B_H1_UNSUPPORTED:
        return 501;
    case H2B_H1_VERSION:
        return 505;
    default:
        return 400;
    }
}

bool h2b_h1_no_body(unsigned status, bool head_request)
{
    return head_request || (status >= 100 && status < 200) || status == 204 || status == 304;
}

/* Finds CRLF CRLF in buf[0..len); returns the head length including it, 0 when it is not
 * there yet, or SIZE_MAX at a bare LF (rejected at once rather than waited on). */
static size_t head_end(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i == 0 || buf[i - 1] != '\r')
            return SIZE_MAX;
        if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r')
            return i + 1;
    }
    return 0;
}

/* "HTTP/1.x" at p (8 bytes). Returns 0/1 for the minor version, H2B_H1_VERSION for another
 * well-formed version, H2B_H1_BAD otherwise. */
static int parse_version(const uint8_t *p, size_t n)
{
    if (n != 8 || memcmp(p, "HTTP/", 5) != 0 || p[6] != '.')
        return H2B_H1_BAD;
    if (p[5] < '0' || p[5] > '9' || p[7] < '0' || p[7] > '9')
        return H2B_H1_BAD;
    if (p[5] != '1' || p[7] > '1')
        return H2B_H1_VERSION;
    return p[7] - '0';
}

static bool parse_len(const uint8_t *p, size_t n, int64_t *out)
{
    if (n == 0 || n > 18)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return true;
}

/* Does the comma-separated token list p[0..n) contain tok (case-insensitive)? */
static bool list_has(const uint8_t *p, size_t n, const char *tok)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == ','))
            i++;
        size_t s = i;
        while (i < n && p[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (p[e - 1] == ' ' || p[e - 1] == '\t'))
            e--;
        if (e > s && ieq(p + s, e - s, tok))
            return true;
    }
    return false;
}

/* Parses the header fields in buf[0..len) (after the start line, up to and including the
 * final CRLF). */
static int parse_fields(const uint8_t *buf, size_t len, bool request, struct h2b_h1_head *h)
{
    bool has_te = false, keep_alive = false, conn_close = false;
    unsigned hosts = 0;
    size_t i = 0;
    while (i < len) {
        const uint8_t *line = buf + i;
        const uint8_t *eol = memchr(line, '\r', len - i);
        if (!eol || (size_t)(eol - buf) + 1 >= len || eol[1] != '\n')
            return H2B_H1_BAD;
        size_t ln = (size_t)(eol - line);
        i += ln + 2;
        if (ln == 0)
            break; /* the empty line: end of the head */
        size_t c = 0;
        while (c < ln && h2b_token_char(line[c]))
            c++;
        if (c == 0 || c == ln || line[c] != ':')
            return H2B_H1_BAD; /* also obs-fold (a line starting with SP/HTAB) */
        const uint8_t *name = line;
        size_t nn = c;
        size_t vs = c + 1, ve = ln;
        while (vs < ve && (line[vs] == ' ' || line[vs] == '\t'))
            vs++;
        while (ve > vs && (line[ve - 1] == ' ' || line[ve - 1] == '\t'))
            ve--;
        for (size_t k = vs; k < ve; k++) {
            uint8_t ch = line[k];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                return H2B_H1_BAD;
        }
        const uint8_t *val = line + vs;
        size_t vn = ve - vs;
        h->nheaders++;
        if (ieq(name, nn, "content-length")) {
            if (h->content_length >= 0)
                return H2B_H1_SMUGGLE;
            if (!parse_len(val, vn, &h->content_length))
                return H2B_H1_BAD;
        } else if (ieq(name, nn, "transfer-encoding")) {
            if (has_te)
                return H2B_H1_SMUGGLE;
            has_te = true;
            if (!ieq(val, vn, "chunked"))
                return H2B_H1_UNSUPPORTED;
            h->chunked = true;
        } else if (ieq(name, nn, "connection")) {
            if (list_has(val, vn, "close"))
                conn_close = true;
            if (list_has(val, vn, "keep-alive"))
                keep_alive = true;
        } else if (request && ieq(name, nn, "host")) {
            hosts++;
        } else if (request && ieq(name, nn, "expect")) {
            if (!ieq(val, vn, "100-continue"))
                return H2B_H1_BAD;
            h->expect_continue = true;
        }
    }
    if (has_te && h->content_length >= 0)
        return H2B_H1_SMUGGLE;
    if (has_te && h->minor == 0)
        return H2B_H1_BAD; /* RFC 9112 6.1: chunked is not defined for HTTP/1.0 */
    if (request) {
        if (hosts > 1 || (h->minor == 1 && hosts == 0))
            return H2B_H1_BAD;
        h->has_host = hosts == 1;
    }
    h->close = conn_close || (h->minor == 0 && !keep_alive);
    return 0;
}

static void head_init(struct h2b_h1_head *h)
{
    memset(h, 0, sizeof *h);
    h->content_length = -1;
}

static bool http_prefix_s(const uint8_t *p)
{
    return lower(p[0]) == 'h' && lower(p[1]) == 't' && lower(p[2]) == 't' && lower(p[3]) == 'p' &&
           lower(p[4]) == 's';
}

#define MAX_EMPTY_LINES 4 /* CRLFs before a request line that are skipped (RFC 9112 2.2) */

/* The origin-form path of an absolute-form target "http://authority/path" (case-insensitive
 * scheme http or https; RFC 9112 3.2.2): its "/path?query" part, or "/" for none. False when t
 * is not absolute-form with an authority. */
static bool absolute_path(struct h2b_h1_span *t)
{
    static const char slash[] = "/";
    size_t k = 0;
    while (k < t->n && k < 6 && t->p[k] != ':')
        k++;
    bool http = k == 4 && lower(t->p[0]) == 'h' && lower(t->p[1]) == 't' && lower(t->p[2]) == 't' &&
                lower(t->p[3]) == 'p';
    bool https = k == 5 && http_prefix_s(t->p);
    if (!(http || https) || t->n < k + 3 || t->p[k + 1] != '/' || t->p[k + 2] != '/')
        return false;
    size_t a = k + 3, e = a;
    while (e < t->n && t->p[e] != '/' && t->p[e] != '?' && t->p[e] != '#')
        e++;
    if (e == a)
        return false; /* no authority */
    if (e == t->n || t->p[e] != '/') {
        if (e != t->n)
            return false; /* "http://x?q": no path to give the query to */
        *t = (struct h2b_h1_span){(const uint8_t *)slash, 1};
        return true;
    }
    *t = (struct h2b_h1_span){t->p + e, t->n - e};
    return true;
}

int h2b_h1_parse_request(const uint8_t *buf, size_t len, const struct h2b_h1_limits *lim,
                         struct h2b_h1_head *out)
{
    /* empty lines before the request line are ignored (a client's CRLF after a body) */
    size_t skip = 0;
    while (skip + 1 < len && buf[skip] == '\r' && buf[skip + 1] == '\n' &&
           skip < 2 * MAX_EMPTY_LINES)
        skip += 2;
    if (skip > 0) {
        if (skip == len || (skip + 1 == len && buf[skip] == '\r'))
            return H2B_H1_INCOMPLETE;
        if (buf[skip] == '\r' && buf[skip + 1] == '\n')
            return H2B_H1_BAD; /* more empty lines than that: not a client's stray CRLF */
        /* the skipped lines count against max_head: what a caller buffers for one head stays
         * within it */
        struct h2b_h1_limits rest = *lim;
        rest.max_head = lim->max_head > skip ? lim->max_head - skip : 0;
        int rv = h2b_h1_parse_request(buf + skip, len - skip, &rest, out);
        return rv > 0 ? rv + (int)skip : rv;
    }
    size_t scan = len < lim->max_head ? len : lim->max_head;
    size_t end = head_end(buf, scan);
    if (end == SIZE_MAX)
        return H2B_H1_BAD;
    const uint8_t *lf = memchr(buf, '\n', end ? end : scan);
    size_t line = lf ? (size_t)(lf - buf) : scan;
    if (line > 0 && lf && buf[line - 1] == '\r')
        line--;
    if (line > lim->max_line)
        return H2B_H1_URI_TOO_LONG;
    if (!end) {
        if (!lf && scan > lim->max_line + 1)
            return H2B_H1_URI_TOO_LONG;
        return len >= lim->max_head ? H2B_H1_TOO_LARGE : H2B_H1_INCOMPLETE;
    }
    struct h2b_h1_head h;
    head_init(&h);
    if (!lf || lf == buf || lf[-1] != '\r')
        return H2B_H1_BAD;
    /* request-line = method SP request-target SP HTTP-version */
    size_t i = 0;
    while (i < line && h2b_token_char(buf[i]))
        i++;
    if (i == 0 || i == line || buf[i] != ' ')
        return H2B_H1_BAD;
    h.method = (struct h2b_h1_span){buf, i};
    size_t ts = ++i;
    while (i < line && buf[i] > 0x20 && buf[i] < 0x7f)
        i++;
    if (i == ts || i == line || buf[i] != ' ')
        return H2B_H1_BAD;
    h.target = (struct h2b_h1_span){buf + ts, i - ts};
    if (h.target.p[0] != '/' &&
        !(h.target.n == 1 && h.target.p[0] == '*' && h.method.n == 7 &&
          memcmp(h.method.p, "OPTIONS", 7) == 0) &&
        !absolute_path(&h.target))
        return H2B_H1_BAD;
    i++;
    int v = parse_version(buf + i, line - i);
    if (v < 0)
        return v;
    h.minor = (unsigned)v;
    int rv = parse_fields(buf + line + 2, end - line - 2, true, &h);
    if (rv < 0)
        return rv;
    *out = h;
    return (int)end;
}

int h2b_h1_parse_response(const uint8_t *buf, size_t len, const struct h2b_h1_limits *lim,
                          struct h2b_h1_head *out)
{
    size_t scan = len < lim->max_head ? len : lim->max_head;
    size_t end = head_end(buf, scan);
    if (end == SIZE_MAX)
        return H2B_H1_BAD;
    if (!end)
        return len >= lim->max_head ? H2B_H1_TOO_LARGE : H2B_H1_INCOMPLETE;
    const uint8_t *lf = memchr(buf, '\n', end);
    size_t line = (size_t)(lf - buf);
    if (line == 0 || buf[line - 1] != '\r')
        return H2B_H1_BAD;
    line--;
    if (line > lim->max_line)
        return H2B_H1_TOO_LARGE;
    /* status-line = HTTP-version SP status-code SP [ reason-phrase ] */
    struct h2b_h1_head h;
    head_init(&h);
    if (line < 12 || buf[8] != ' ' || (line > 12 && buf[12] != ' '))
        return H2B_H1_BAD;
    int v = parse_version(buf, 8);
    if (v < 0)
        return v;
    h.minor = (unsigned)v;
    for (int k = 9; k < 12; k++) {
        if (buf[k] < '0' || buf[k] > '9')
            return H2B_H1_BAD;
        h.status = h.status * 10 + (unsigned)(buf[k] - '0');
    }
    if (h.status < 100)
        return H2B_H1_BAD;
    for (size_t k = 13; k < line; k++) {
        uint8_t ch = buf[k];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return H2B_H1_BAD;
    }
    int rv = parse_fields(buf + line + 2, end - line - 2, false, &h);
    if (rv < 0)
        return rv;
    *out = h;
    return (int)end;
}

/* ---- chunked ---- */

enum {
    C_SIZE,
    C_SIZE_WS, /* whitespace after the size: only ';' or CR may follow */
    C_EXT,
    C_SIZE_LF,
    C_DATA,
    C_DATA_CR,
    C_DATA_LF,
    C_TRAILER,
    C_TRAILER_LF,
    C_DONE
};

void h2b_h1_chunked_init(struct h2b_h1_chunked *c)
{
    memset(c, 0, sizeof *c);
}

static int hexv(uint8_t ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = lower(ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

int h2b_h1_chunked_next(struct h2b_h1_chunked *c, const uint8_t *p, size_t n, size_t max_trailers,
                        size_t *used, const uint8_t **data, size_t *dlen)
{
    size_t i = 0;
    while (i < n) {
        uint8_t ch = p[i];
        switch (c->state) {
        case C_SIZE: {
            int v = hexv(ch);
            if (v >= 0) {
                if (c->digits >= 15)
                    return H2B_H1_TOO_LARGE; /* over 2^60 */
                c->left = c->left * 16 + (uint64_t)v;
                c->digits++;
                i++;
                break;
            }
            if (c->digits == 0)
                return H2B_H1_BAD;
            if (ch == '\r') {
                c->state = C_SIZE_LF;
            } else if (ch == ';') {
                c->state = C_EXT;
                c->line = 0;
            } else if (ch == ' ' || ch == '\t') {
                c->state = C_SIZE_WS;
                c->line = 0;
            } else {
                return H2B_H1_BAD;
            }
            i++;
            break;
        }
        case C_SIZE_WS: /* chunk-size BWS: "3 garbage" is refused, "3 ;ext" and "3 " are not */
            if (ch == '\r')
                c->state = C_SIZE_LF;
            else if (ch == ';')
                c->state = C_EXT;
            else if (ch != ' ' && ch != '\t')
                return H2B_H1_BAD;
            else if (++c->line > max_trailers)
                return H2B_H1_TOO_LARGE;
            i++;
            break;
        case C_EXT:
            /* chunk extensions are skipped, bounded like trailers */
            if (ch == '\r')
                c->state = C_SIZE_LF;
            else if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                return H2B_H1_BAD;
            else if (++c->line > max_trailers)
                return H2B_H1_TOO_LARGE;
            i++;
            break;
        case C_SIZE_LF:
            if (ch != '\n')
                return H2B_H1_BAD;
            i++;
            c->digits = 0;
            if (c->left == 0) {
                c->state = C_TRAILER;
                c->line = 0;
            } else {
                c->state = C_DATA;
            }
            break;
        case C_DATA: {
            /* entered only with a chunk's bytes to come; left at 0 goes on to C_DATA_CR */
            H2B_ASSERT(c->left > 0);
            size_t k = n - i < c->left ? n - i : (size_t)c->left;
            c->left -= k;
            if (c->left == 0)
                c->state = C_DATA_CR;
            *data = p + i;
            *dlen = k;
            *used = i + k;
            return 1;
        }
        case C_DATA_CR:
            if (ch != '\r')
                return H2B_H1_BAD;
            c->state = C_DATA_LF;
            i++;
            break;
        case C_DATA_LF:
            if (ch != '\n')
                return H2B_H1_BAD;
            c->state = C_SIZE;
            i++;
            break;
        case C_TRAILER:
            /* trailer fields are skipped; an empty line ends the body */
            if (ch == '\r') {
                c->state = C_TRAILER_LF;
            } else if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
                return H2B_H1_BAD;
            } else {
                c->line++;
            }
            if (++c->trailers > max_trailers)
                return H2B_H1_TOO_LARGE;
            i++;
            break;
        case C_TRAILER_LF:
            if (ch != '\n')
                return H2B_H1_BAD;
            i++;
            if (c->line == 0) {
                c->state = C_DONE;
                *used = i;
                return 2;
            }
            c->line = 0;
            c->state = C_TRAILER;
            break;
        default:
            *used = i;
            return 2;
        }
    }
    *used = n;
    return c->state == C_DONE ? 2 : 0;
}
