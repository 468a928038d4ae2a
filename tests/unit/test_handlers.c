/*
 * test_handlers.c - the reference server's route table and responses (servers/h2ref/handlers.c),
 * which h2ref's HTTP/2 engine, its HTTP/1.1 side and the HTTP/3 server all go through.
 */
#include "h2ref/handlers.h"
#include "test.h"

static void test_routes(void)
{
    static const struct {
        const char *path;
        enum h2b_route route;
        uint64_t arg;
    } cases[] = {
        {"/", H2B_ROUTE_HELLO, 0},
        {"/?x=1", H2B_ROUTE_HELLO, 0},
        {"/hello", H2B_ROUTE_HELLO, 0},
        {"/hello?", H2B_ROUTE_HELLO, 0},
        {"/hellox", H2B_ROUTE_NOTFOUND, 0},
        {"/hell", H2B_ROUTE_NOTFOUND, 0},
        {"/hel?lo", H2B_ROUTE_NOTFOUND, 0},
        {"/bytes/0", H2B_ROUTE_BYTES, 0},
        {"/bytes/999?q", H2B_ROUTE_BYTES, 999},
        {"/bytes/1000", H2B_ROUTE_BYTES, 1000},
        {"/bytes/1001", H2B_ROUTE_BAD, 0}, /* max_body below is 1000 */
        {"/bytes/", H2B_ROUTE_BAD, 0},
        {"/bytes/?1", H2B_ROUTE_BAD, 0},
        {"/bytes/-1", H2B_ROUTE_BAD, 0},
        {"/bytes/1a", H2B_ROUTE_BAD, 0},
        {"/bytes/18446744073709551616", H2B_ROUTE_BAD, 0},
        {"/bytes", H2B_ROUTE_NOTFOUND, 0},
        {"/sink", H2B_ROUTE_SINK, 0},
        {"/sink?a", H2B_ROUTE_SINK, 0},
        {"/sinks", H2B_ROUTE_NOTFOUND, 0},
        {"/echo", H2B_ROUTE_ECHO, 0},
        {"/echo/", H2B_ROUTE_NOTFOUND, 0},
        {"/status/200", H2B_ROUTE_STATUS, 200},
        {"/status/599?x", H2B_ROUTE_STATUS, 599},
        {"/status/204", H2B_ROUTE_STATUS, 204},
        {"/status/199", H2B_ROUTE_BAD, 0},
        {"/status/600", H2B_ROUTE_BAD, 0},
        {"/status/20", H2B_ROUTE_BAD, 0},
        {"/status/20?0", H2B_ROUTE_BAD, 0},
        {"/status/2000", H2B_ROUTE_BAD, 0},
        {"/delay/0", H2B_ROUTE_DELAY, 0},
        {"/delay/60000", H2B_ROUTE_DELAY, 60000},
        {"/delay/60001", H2B_ROUTE_BAD, 0},
        {"/stats", H2B_ROUTE_STATS, 0},
        {"/stats?pretty", H2B_ROUTE_STATS, 0},
        {"/statsx", H2B_ROUTE_NOTFOUND, 0},
        {"", H2B_ROUTE_NOTFOUND, 0},
        {"hello", H2B_ROUTE_NOTFOUND, 0},
        {"*", H2B_ROUTE_NOTFOUND, 0},
        {"//hello", H2B_ROUTE_NOTFOUND, 0},
        {"/index.html", H2B_ROUTE_NOTFOUND, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t arg = 0;
        enum h2b_route r =
            h2b_route_parse((const uint8_t *)cases[i].path, strlen(cases[i].path), 1000, &arg);
        if (r != cases[i].route)
            fprintf(stderr, "route %s: %d, want %d\n", cases[i].path, (int)r, (int)cases[i].route);
        CHECK_EQ_INT(r, cases[i].route);
        if (r == cases[i].route && cases[i].arg)
            CHECK_EQ_U64(arg, cases[i].arg);
    }
    /* the length bounds the path: bytes after it are not read */
    uint64_t arg = 0;
    CHECK_EQ_INT(h2b_route_parse((const uint8_t *)"/hello", 1, 1000, &arg), H2B_ROUTE_HELLO);
    CHECK_EQ_INT(h2b_route_parse((const uint8_t *)"/bytes/12", 8, 1000, &arg), H2B_ROUTE_BYTES);
    CHECK_EQ_U64(arg, 1);
}

static void test_methods(void)
{
    static const struct {
        const char *m;
        enum h2b_method want;
        bool upload;
    } cases[] = {
        {"GET", H2B_METHOD_GET, false},    {"HEAD", H2B_METHOD_HEAD, false},
        {"POST", H2B_METHOD_POST, true},   {"PUT", H2B_METHOD_PUT, true},
        {"get", H2B_METHOD_OTHER, false},  {"DELETE", H2B_METHOD_OTHER, false},
        {"GETX", H2B_METHOD_OTHER, false}, {"", H2B_METHOD_OTHER, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum h2b_method m = h2b_method_parse((const uint8_t *)cases[i].m, strlen(cases[i].m));
        CHECK_EQ_INT(m, cases[i].want);
        CHECK(h2b_method_upload((uint8_t)m) == cases[i].upload);
    }
}

/* The number parser of route arguments and content-length (both engines). */
static void test_digits(void)
{
    static const struct {
        const char *s;
        uint64_t max;
        bool ok;
        uint64_t v;
    } cases[] = {
        {"0", 10, true, 0},
        {"10", 10, true, 10},
        {"11", 10, false, 0},
        {"007", 10, true, 7},
        {"", 10, false, 0},
        {"1 ", 10, false, 0},
        {"+1", 10, false, 0},
        {"-1", 10, false, 0},
        {"1a", 10, false, 0},
        {"9223372036854775807", UINT64_MAX / 2, true, UINT64_MAX / 2},
        {"9223372036854775808", UINT64_MAX / 2, false, 0},
        {"9999999999999999999", UINT64_MAX, true, 9999999999999999999ull},
        {"10000000000000000000", UINT64_MAX, false, 0}, /* 20 digits */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 42;
        bool ok =
            h2b_parse_digits((const uint8_t *)cases[i].s, strlen(cases[i].s), cases[i].max, &v);
        CHECK(ok == cases[i].ok);
        CHECK_EQ_U64(v, ok ? cases[i].v : 42); /* untouched on failure */
    }
}

static void handle(uint8_t route, uint8_t method, uint64_t arg, uint64_t rx, char *text,
                   struct h2b_response *rs)
{
    struct h2b_request rq = {.route = route, .method = method, .arg = arg, .rx = rx};
    memset(rs, 0xa5, sizeof *rs); /* every field must be set */
    h2b_handle(&rq, text, rs);
}

static void test_responses(void)
{
    char text[H2B_TEXT_MAX];
    struct h2b_response rs;

    handle(H2B_ROUTE_HELLO, H2B_METHOD_GET, 0, 0, text, &rs);
    CHECK_EQ_INT(rs.status, 200);
    CHECK_EQ_INT(rs.body, H2B_BODY_MEM);
    CHECK(rs.has_cl && !rs.headers_only);
    CHECK(rs.len == 13 && memcmp(rs.mem, "Hello, World!", 13) == 0);
    CHECK(rs.ct_len == strlen(rs.ct) && strcmp(rs.ct, "text/plain") == 0);

    handle(H2B_ROUTE_HELLO, H2B_METHOD_HEAD, 0, 0, text, &rs);
    CHECK(rs.headers_only && rs.has_cl && rs.len == 13); /* HEAD: GET's headers */

    handle(H2B_ROUTE_BYTES, H2B_METHOD_GET, 70000, 0, text, &rs);
    CHECK(rs.status == 200 && rs.body == H2B_BODY_PATTERN && rs.len == 70000 && rs.has_cl);
    CHECK_STR(rs.ct, "application/octet-stream");

    handle(H2B_ROUTE_SINK, H2B_METHOD_POST, 0, 12345, text, &rs);
    CHECK(rs.status == 200 && rs.body == H2B_BODY_MEM && rs.len == 6);
    CHECK(rs.mem == (const uint8_t *)text && memcmp(text, "12345\n", 6) == 0);
    handle(H2B_ROUTE_SINK, H2B_METHOD_GET, 0, 0, text, &rs);
    CHECK(rs.status == 405 && rs.body == H2B_BODY_NONE && rs.has_cl && rs.len == 0);

    handle(H2B_ROUTE_ECHO, H2B_METHOD_PUT, 0, 0, text, &rs);
    CHECK(rs.status == 200 && rs.body == H2B_BODY_ECHO && !rs.has_cl);
    handle(H2B_ROUTE_ECHO, H2B_METHOD_HEAD, 0, 0, text, &rs);
    CHECK(rs.status == 405 && rs.body == H2B_BODY_NONE);

    handle(H2B_ROUTE_STATUS, H2B_METHOD_GET, 503, 0, text, &rs);
    CHECK(rs.status == 503 && rs.body == H2B_BODY_NONE && rs.has_cl && rs.len == 0);
    handle(H2B_ROUTE_STATUS, H2B_METHOD_GET, 204, 0, text, &rs);
    CHECK(rs.status == 204 && !rs.has_cl);
    handle(H2B_ROUTE_STATUS, H2B_METHOD_GET, 304, 0, text, &rs);
    CHECK(rs.status == 304 && !rs.has_cl);

    handle(H2B_ROUTE_DELAY, H2B_METHOD_GET, 5, 0, text, &rs);
    CHECK_EQ_INT(rs.body, H2B_BODY_DELAY);
    handle(H2B_ROUTE_STATS, H2B_METHOD_GET, 0, 0, text, &rs);
    CHECK(rs.status == 200 && rs.body == H2B_BODY_STATS);
    CHECK_STR(rs.ct, "application/json");

    struct h2b_request rq = {.route = H2B_ROUTE_FILE, .method = H2B_METHOD_GET, .file_len = 99};
    h2b_handle(&rq, text, &rs);
    CHECK(rs.status == 200 && rs.body == H2B_BODY_FILE && rs.len == 99 && rs.has_cl);

    handle(H2B_ROUTE_BAD, H2B_METHOD_GET, 0, 0, text, &rs);
    CHECK(rs.status == 400 && rs.body == H2B_BODY_NONE && rs.has_cl && rs.len == 0);
    handle(H2B_ROUTE_NOTFOUND, H2B_METHOD_GET, 0, 0, text, &rs);
    CHECK(rs.status == 404 && rs.body == H2B_BODY_MEM && rs.len == 10);
    CHECK(memcmp(rs.mem, "Not Found\n", 10) == 0);

    h2b_response_status(&rs, 503);
    CHECK(rs.status == 503 && rs.body == H2B_BODY_NONE && rs.has_cl && rs.len == 0);
    CHECK_STR(rs.ct, "text/plain");
}

static void test_helpers(void)
{
    char buf[24], st[4];
    CHECK(h2b_fmt_u64(buf, 0) == 1 && strcmp(buf, "0") == 0);
    CHECK(h2b_fmt_u64(buf, UINT64_MAX) == 20 && strcmp(buf, "18446744073709551615") == 0);
    h2b_status_digits(st, 404);
    CHECK_STR(st, "404");
    for (uint64_t off = 0; off < 600; off += 37) {
        const uint8_t *p = h2b_pattern_at(off);
        CHECK(p[0] == (uint8_t)(off & 0xff) &&
              p[H2B_PATTERN_STEP - 1] == (uint8_t)((off + H2B_PATTERN_STEP - 1) & 0xff));
    }
    CHECK_EQ_U64(strlen(h2b_server_name), H2B_SERVER_NAME_LEN);
    uint64_t len = 0;
    CHECK(h2b_docroot_open(-1, false, (const uint8_t *)"/a", 2, &len) == -1);
}

int main(void)
{
    test_routes();
    test_methods();
    test_digits();
    test_responses();
    test_helpers();
    return test_report();
}
