/*
 * test_h1parse.c - the HTTP/1.1 head parser and chunked decoder (harness/core/h1parse.c): a
 * request and a response parsed whole, the limits (414 for the request line, 431 for the head,
 * with the empty lines skipped before a request counted against the head's limit), smuggling
 * pairs, and a chunked body fed a byte at a time.
 */
#include "test.h"
#include "core/h1parse.h"

static const struct h2b_h1_limits lim = {.max_line = 64, .max_head = 256};

static int req(const char *s, struct h2b_h1_head *h)
{
    return h2b_h1_parse_request((const uint8_t *)s, strlen(s), &lim, h);
}

static void requests(void)
{
    struct h2b_h1_head h;
    const char *get = "GET /a?b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    CHECK_EQ_INT(req(get, &h), (int)strlen(get) - 5);
    CHECK(h.method.n == 3 && memcmp(h.method.p, "GET", 3) == 0);
    CHECK(h.target.n == 4 && memcmp(h.target.p, "/a?b", 4) == 0);
    CHECK_EQ_INT(h.content_length, 5);
    CHECK_EQ_INT(h.minor, 1);
    CHECK(!h.close && h.has_host);
    CHECK_EQ_INT(req("GET / HTTP/1.1\r\nHost: x\r\n", &h), H2B_H1_INCOMPLETE);
    CHECK_EQ_INT(req("GET / HTTP/1.1\r\n\r\n", &h), H2B_H1_BAD); /* no Host */
    CHECK_EQ_INT(req("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", &h), 34);
    CHECK(h.target.n == 1 && h.target.p[0] == '/');
    CHECK_EQ_INT(req("GET / HTTP/1.0\r\n\r\n", &h), 18);
    CHECK(h.close);
    CHECK_EQ_INT(req("GET / HTTP/2.0\r\nHost: x\r\n\r\n", &h), H2B_H1_VERSION);
    CHECK_EQ_INT(
        req("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", &h),
        H2B_H1_SMUGGLE);
    CHECK_EQ_INT(req("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Length: 1\r\n\r\n",
                     &h),
                 H2B_H1_SMUGGLE);
    CHECK_EQ_INT(req("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", &h),
                 H2B_H1_UNSUPPORTED);
    CHECK_EQ_INT(h2b_h1_err_status(H2B_H1_SMUGGLE), 400);
    CHECK_EQ_INT(h2b_h1_err_status(H2B_H1_UNSUPPORTED), 501);
}

/* A request of exactly n bytes: a request line, Host, and one header padded to fit. */
static char *sized_request(size_t n)
{
    static const char head[] = "GET / HTTP/1.1\r\nHost: x\r\nX: ";
    char *s = malloc(n + 1);
    if (!s)
        abort();
    size_t pad = n - (sizeof head - 1) - 4;
    memcpy(s, head, sizeof head - 1);
    memset(s + sizeof head - 1, 'b', pad);
    memcpy(s + sizeof head - 1 + pad, "\r\n\r\n", 5);
    return s;
}

static void limits(void)
{
    struct h2b_h1_head h;
    char line[128];
    snprintf(line, sizeof line, "GET /%0*d HTTP/1.1\r\n", 60, 0);
    CHECK_EQ_INT(req(line, &h), H2B_H1_URI_TOO_LONG);
    CHECK_EQ_INT(h2b_h1_err_status(H2B_H1_URI_TOO_LONG), 414);

    char *full = sized_request(lim.max_head);
    CHECK_EQ_INT(req(full, &h), (int)lim.max_head);
    free(full);
    char *over = sized_request(lim.max_head + 1);
    CHECK_EQ_INT(req(over, &h), H2B_H1_TOO_LARGE);
    CHECK_EQ_INT(h2b_h1_err_status(H2B_H1_TOO_LARGE), 431);
    free(over);

    /* empty lines before the request line count against max_head: a head of max_head bytes
     * after one CRLF is over the limit, one of max_head - 2 bytes is not (what the server
     * buffers for a head stays within max_head) */
    char buf[512];
    char *r = sized_request(lim.max_head);
    snprintf(buf, sizeof buf, "\r\n%s", r);
    CHECK_EQ_INT(req(buf, &h), H2B_H1_TOO_LARGE);
    free(r);
    r = sized_request(lim.max_head - 2);
    snprintf(buf, sizeof buf, "\r\n%s", r);
    CHECK_EQ_INT(req(buf, &h), (int)lim.max_head);
    free(r);
    r = sized_request(lim.max_head - 8);
    snprintf(buf, sizeof buf, "\r\n\r\n\r\n\r\n%s", r);
    CHECK_EQ_INT(req(buf, &h), (int)lim.max_head);
    free(r);
    CHECK_EQ_INT(req("\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", &h), H2B_H1_BAD);
    CHECK_EQ_INT(req("\r\n", &h), H2B_H1_INCOMPLETE);
}

static void responses(void)
{
    struct h2b_h1_head h;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    CHECK_EQ_INT(h2b_h1_parse_response((const uint8_t *)ok, strlen(ok), &lim, &h),
                 (int)strlen(ok) - 2);
    CHECK_EQ_INT(h.status, 200);
    CHECK_EQ_INT(h.content_length, 2);
    const char *bad = "HTTP/1.1 2x0 OK\r\n\r\n";
    CHECK_EQ_INT(h2b_h1_parse_response((const uint8_t *)bad, strlen(bad), &lim, &h), H2B_H1_BAD);
    CHECK(h2b_h1_no_body(204, false));
    CHECK(h2b_h1_no_body(200, true));
    CHECK(!h2b_h1_no_body(200, false));
}

static void chunked(void)
{
    const char *body = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\nNEXT";
    size_t n = strlen(body), off = 0;
    struct h2b_h1_chunked c;
    h2b_h1_chunked_init(&c);
    char out[32];
    size_t got = 0;
    int rv = 0;
    while (off < n) {
        size_t used = 0, dlen = 0;
        const uint8_t *d = NULL;
        rv = h2b_h1_chunked_next(&c, (const uint8_t *)body + off, 1, 64, &used, &d, &dlen);
        if (rv < 0)
            break;
        if (rv == 1 && got + dlen < sizeof out) {
            memcpy(out + got, d, dlen);
            got += dlen;
        }
        off += used;
        if (rv == 2)
            break;
    }
    CHECK_EQ_INT(rv, 2);
    CHECK_EQ_INT(off, n - 4); /* stops right after the trailers */
    CHECK(got == 11 && memcmp(out, "hello world", 11) == 0);

    h2b_h1_chunked_init(&c);
    size_t used = 0, dlen = 0;
    const uint8_t *d = NULL;
    const char *huge = "1000000000000000\r\n";
    CHECK(h2b_h1_chunked_next(&c, (const uint8_t *)huge, strlen(huge), 64, &used, &d, &dlen) < 0);
}

int main(void)
{
    requests();
    limits();
    responses();
    chunked();
    return test_report();
}
