/*
 * test_load_config.c - `h2bench load` option parsing: h2load's spellings and meanings, our
 * options, the cross-checks, and errors for everything malformed. Also the URI parser.
 */
#include "core/error.h"
#include "load/load.h"
#include "test.h"

#include <stdarg.h>

#define MAXARGS 32

/* Parses a NULL-terminated list of arguments into a fresh config. */
static int parse(struct h2b_load_config *cfg, struct h2b_diag *err, ...)
{
    char *argv[MAXARGS];
    int argc = 0;
    argv[argc++] = "load";
    va_list ap;
    va_start(ap, err);
    char *a;
    while ((a = va_arg(ap, char *)) != NULL && argc < MAXARGS - 1)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    h2b_load_config_init(cfg);
    return h2b_load_config_parse(cfg, argc, argv, err);
}

static void defaults_and_h2load_flags(void)
{
    struct h2b_load_config c;
    struct h2b_diag err = {0};
    CHECK_EQ_INT(parse(&c, &err, "http://127.0.0.1:8080/x", NULL), H2B_OK);
    CHECK_EQ_U64(c.requests, 1);
    CHECK_EQ_INT(c.connections, 1);
    CHECK_EQ_INT(c.streams, 1);
    CHECK_EQ_INT(c.threads, 1);
    CHECK_EQ_INT(c.window_bits, 30);
    CHECK_EQ_INT(c.conn_window_bits, 30);
    CHECK_EQ_INT(c.header_table_size, 4096);
    CHECK_EQ_U64(c.timeout_ns, 30000000000ULL);
    CHECK_EQ_U64(c.coalesce_ns, 100000ULL);
    CHECK(c.rate == 0);
    CHECK_EQ_INT(c.nuris, 1);
    CHECK_STR(c.uris[0].authority, "127.0.0.1:8080");
    CHECK_STR(c.uris[0].path, "/x");
    h2b_load_config_free(&c);

    CHECK_EQ_INT(parse(&c, &err, "-n1000", "-c", "10", "--max-concurrent-streams=20", "-t2", "-H",
                       "X-Foo: bar", "--header=accept:  */*", "-w", "16", "-W16",
                       "--header-table-size=8K", "--encoder-header-table-size", "0", "-f", "32K",
                       "-T", "5s", "-N", "500ms", "http://h/a", "http://h/b", NULL),
                 H2B_OK);
    CHECK_EQ_U64(c.requests, 1000);
    CHECK_EQ_INT(c.connections, 10);
    CHECK_EQ_INT(c.streams, 20);
    CHECK_EQ_INT(c.threads, 2);
    CHECK_EQ_INT(c.nheaders, 2);
    CHECK_STR(c.headers[0].name, "x-foo");
    CHECK_STR(c.headers[0].value, "bar");
    CHECK_STR(c.headers[1].name, "accept");
    CHECK_STR(c.headers[1].value, "*/*");
    CHECK_EQ_INT(c.window_bits, 16);
    CHECK_EQ_INT(c.conn_window_bits, 16);
    CHECK_EQ_INT(c.header_table_size, 8192);
    CHECK_EQ_INT(c.encoder_table_size, 0);
    CHECK_EQ_INT(c.max_frame_size, 32768);
    CHECK_EQ_U64(c.conn_active_timeout_ns, 5000000000ULL);
    CHECK_EQ_U64(c.conn_inactivity_timeout_ns, 500000000ULL);
    CHECK_EQ_INT(c.nuris, 2);
    CHECK_STR(c.uris[1].path, "/b");
    h2b_load_config_free(&c);

    /* -D makes -n irrelevant (h2load ignores it); --warm-up-time goes with it */
    CHECK_EQ_INT(parse(&c, &err, "-D", "1.5", "--warm-up-time", "250ms", "-n", "5", "-c", "10",
                       "http://h/", NULL),
                 H2B_OK);
    CHECK_EQ_U64(c.duration_ns, 1500000000ULL);
    CHECK_EQ_U64(c.warmup_ns, 250000000ULL);
    CHECK_EQ_U64(c.requests, 0);
    h2b_load_config_free(&c);
    /* a header name with a leading colon */
    CHECK_EQ_INT(parse(&c, &err, "-H", ":authority: example.org", "http://h/", NULL), H2B_OK);
    CHECK_STR(c.headers[0].name, ":authority");
    CHECK_STR(c.headers[0].value, "example.org");
    h2b_load_config_free(&c);
}

static void our_flags(void)
{
    struct h2b_load_config c;
    struct h2b_diag err = {0};
    CHECK_EQ_INT(parse(&c, &err, "--total-rps", "2000", "--arrival=poisson", "--seed", "9",
                       "--timeout", "2s", "--cpus", "1", "--json", "out.json", "--fail-on-error",
                       "--progress", "-D", "5", "https://[::1]:8443/p?q=1", NULL),
                 H2B_OK);
    CHECK(c.rate == 2000);
    CHECK_EQ_INT(c.arrival, H2B_ARRIVAL_POISSON);
    CHECK_EQ_U64(c.seed, 9);
    CHECK_EQ_U64(c.timeout_ns, 2000000000ULL);
    CHECK(c.pin);
    CHECK(CPU_ISSET(1, &c.cpus));
    CHECK_EQ_INT(CPU_COUNT(&c.cpus), 1);
    CHECK_STR(c.json_path, "out.json");
    CHECK(c.fail_on_error);
    CHECK_EQ_INT(c.progress, H2B_LOAD_PROGRESS_ON);
    CHECK(c.uris[0].tls);
    CHECK_STR(c.uris[0].host, "::1");
    CHECK_STR(c.uris[0].port, "8443");
    CHECK_STR(c.uris[0].path, "/p?q=1");
    h2b_load_config_free(&c);
    CHECK_EQ_INT(parse(&c, &err, "--no-progress", "--timeout=0", "http://h/", NULL), H2B_OK);
    CHECK_EQ_INT(c.progress, H2B_LOAD_PROGRESS_OFF);
    CHECK_EQ_U64(c.timeout_ns, 0);
    h2b_load_config_free(&c);
    CHECK_EQ_INT(parse(&c, &err, "--coalesce=0", "http://h/", NULL), H2B_OK);
    CHECK_EQ_U64(c.coalesce_ns, 0);
    h2b_load_config_free(&c);
    CHECK_EQ_INT(parse(&c, &err, "--coalesce", "50us", "http://h/", NULL), H2B_OK);
    CHECK_EQ_U64(c.coalesce_ns, 50000ULL);
    h2b_load_config_free(&c);
    CHECK_EQ_INT(parse(&c, &err, "--help", NULL), H2B_OK);
    CHECK(c.help);
    h2b_load_config_free(&c);
}

static void errors(void)
{
    static const char *const bad[][4] = {
        {"http://h/", "-c", "0", NULL},
        {"http://h/", "-c", "10x", NULL},
        {"http://h/", "-n", "-5", NULL},
        {"http://h/", "-n", "2", "-c"}, /* missing value */
        {"http://h/", "-c", "4", "-n"}, /* missing value */
        {"http://h/", "-w", "31", NULL},
        {"http://h/", "-f", "1K", NULL},
        {"http://h/", "-D", "0", NULL},
        {"http://h/", "--rate", "0", NULL},
        {"http://h/", "--coalesce", "2ms", NULL},
        {"http://h/", "--coalesce", "soon", NULL},
        {"http://h/", "--total-rps", "0", NULL},
        {"http://h/", "--arrival", "bursty", NULL},
        {"http://h/", "--cpus", "x", NULL},
        {"http://h/", "--warm-up-time", "1", NULL},
        {"http://h/", "--bogus", NULL, NULL},
        {"ftp://h/", NULL, NULL, NULL},
        {"http://:80/", NULL, NULL, NULL},
        {"http://h:99999/", NULL, NULL, NULL},
        {"http://h:/", NULL, NULL, NULL},
        {"-n", "10", NULL, NULL}, /* no URI */
        {"-t", "3", "-c", "2"},   /* more threads than connections, and no URI */
        {"-c", "3", "-n", "2"},   /* fewer requests than connections */
        {"-H", "no-colon", "http://h/", NULL},
        {"-d", "/nonexistent/file", "http://h/", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct h2b_load_config c;
        struct h2b_diag err = {0};
        int rv = parse(&c, &err, bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL);
        CHECK(rv != H2B_OK);
        CHECK(err.message[0] != '\0');
        if (rv == H2B_OK)
            fprintf(stderr, "accepted bad arguments #%zu\n", i);
        h2b_load_config_free(&c);
    }
    /* three threads for two connections, with a URI */
    struct h2b_load_config c;
    struct h2b_diag err = {0};
    CHECK_EQ_INT(parse(&c, &err, "-t", "3", "-c", "2", "-n", "2", "http://h/", NULL),
                 H2B_ERR_INVAL);
    CHECK(strstr(err.message, "-t 3") != NULL);
    h2b_load_config_free(&c);
}

static void uris(void)
{
    struct h2b_load_uri u;
    CHECK_EQ_INT(h2b_load_uri_parse("http://example.org", &u, NULL), H2B_OK);
    CHECK_STR(u.host, "example.org");
    CHECK_STR(u.port, "80");
    CHECK_STR(u.path, "/");
    CHECK_STR(u.authority, "example.org");
    CHECK(!u.tls);
    h2b_load_uri_free(&u);
    CHECK_EQ_INT(h2b_load_uri_parse("https://example.org?x=1#frag", &u, NULL), H2B_OK);
    CHECK_STR(u.port, "443");
    CHECK_STR(u.path, "/?x=1");
    h2b_load_uri_free(&u);
    CHECK_EQ_INT(h2b_load_uri_parse("http://[::1]/a/b", &u, NULL), H2B_OK);
    CHECK_STR(u.host, "::1");
    CHECK_STR(u.authority, "[::1]");
    CHECK_STR(u.path, "/a/b");
    h2b_load_uri_free(&u);
    CHECK_EQ_INT(h2b_load_uri_parse("http://[::1", &u, NULL), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_load_uri_parse("http://[::1]x/", &u, NULL), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_load_uri_parse("http:///", &u, NULL), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_load_uri_parse("http://h:0/", &u, NULL), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_load_uri_parse("http://h:8a/", &u, NULL), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_load_uri_parse("//h/", &u, NULL), H2B_ERR_PARSE);
}

int main(void)
{
    defaults_and_h2load_flags();
    our_flags();
    errors();
    uris();
    return test_report();
}
