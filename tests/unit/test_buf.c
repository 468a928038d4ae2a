/*
 * test_buf.c - the escapers of core/buf.h, one per consumer, against hostile names (issue 29
 * item 6): what each turns a name into, table-driven, and the properties that make it safe
 * (nothing ends a code span or a table cell, no raw HTML or control byte passes); and the
 * Mermaid string of the report's --summary charts.
 */
#include "core/buf.h"
#include "test.h"

#include <string.h>

struct esc_case {
    const char *in, *md, *code, *term;
};

static const struct esc_case cases[] = {
    {"hpack/decode-browser-request", "hpack/decode-browser-request",
     "`hpack/decode-browser-request`", "hpack/decode-browser-request"},
    {"perf_event_open x86_64", "perf_event_open x86_64", "`perf_event_open x86_64`",
     "perf_event_open x86_64"},
    {"Intel(R) Xeon(R)", "Intel(R) Xeon(R)", "`Intel(R) Xeon(R)`", "Intel(R) Xeon(R)"},
    {"a`b<img src=x onerror=alert(1)>", "a\\`b\\<img src=x onerror=alert(1)\\>",
     "``a`b<img src=x onerror=alert(1)>``", "a`b<img src=x onerror=alert(1)>"},
    {"x``` y", "x\\`\\`\\` y", "````x``` y````", "x``` y"},
    {"`", "\\`", "`` ` ``", "`"},
    {"a|b\nc\r", "a\\|b c ", "`a\\|b c `", "a|b?c?"},
    {"*em* _u_ [l](http://e) ~~s~~ &lt;",
     "\\*em\\* \\_u\\_ \\[l\\](http://e) \\~\\~s\\~\\~ &amp;lt;",
     "`*em* _u_ [l](http://e) ~~s~~ &lt;`", "*em* _u_ [l](http://e) ~~s~~ &lt;"},
    {"\x1b[31mred\x07\x7f\\", "?\\[31mred??\\\\", "`?[31mred??\\`", "?[31mred??\\"},
    {"", "", "``", ""},
};

static char *run(void (*fn)(struct h2b_buf *, const char *), const char *s)
{
    struct h2b_buf b = {0};
    fn(&b, s);
    return h2b_buf_take(&b);
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct esc_case *c = &cases[i];
        char *md = run(h2b_buf_md, c->in), *code = run(h2b_buf_md_code, c->in),
             *term = run(h2b_buf_term, c->in);
        CHECK_STR(md, c->md);
        CHECK_STR(code, c->code);
        CHECK_STR(term, c->term);
        /* safe whatever the expectation says: no raw '<' in text, no unescaped '|', no control
         * byte anywhere, and the terminal form keeps the width */
        for (const char *p = md; p && *p; p++) {
            CHECK(!(*p == '<' && (p == md || p[-1] != '\\')));
            CHECK(!(*p == '|' && (p == md || p[-1] != '\\')));
            CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
        }
        for (const char *p = term; p && *p; p++)
            CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
        CHECK(term && strlen(term) == strlen(c->in));
        free(md);
        free(code);
        free(term);
    }
    /* Mermaid strings: nothing ends the string, the statement or the ``` fence */
    static const struct {
        const char *in;
        size_t max;
        const char *out;
    } mm[] = {
        {"h2ref", 40, "\"h2ref\""},
        {"a\"b] [c`d", 40, "\"a'b) (c'd\""},
        {"```\nmermaid\r\n%%{init: {}}%%", 40, "\"'''?mermaid??%%(init: ())%%\""},
        {"<script>&lt;#quot;;\\", 40, "\"?script??lt??quot???\""},
        {"abcdef", 3, "\"abc...\""},
        {"ab\xc2\xb5s", 3, "\"ab...\""}, /* µ is not cut in half */
        {"", 40, "\"\""},
    };
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        struct h2b_buf m = {0};
        h2b_buf_mermaid(&m, mm[i].in, mm[i].max);
        CHECK_STR(h2b_buf_str(&m), mm[i].out);
        const char *q = h2b_buf_str(&m);
        size_t len = strlen(q);
        CHECK(len >= 2 && q[0] == '"' && q[len - 1] == '"' && !memchr(q + 1, '"', len - 2));
        CHECK(!strchr(q, '`') && !strchr(q, '\n') && !strchr(q, '\r') && !strchr(q, '<'));
        h2b_buf_free(&m);
    }
    struct h2b_buf b = {0};
    h2b_buf_pad(&b, 70);
    CHECK(b.len == 70 && strspn(h2b_buf_str(&b), " ") == 70);
    h2b_buf_free(&b);
    if (test_passed == 0)
        return 1; /* a test that checked nothing fails */
    return test_report();
}
