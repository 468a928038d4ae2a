/*
 * test_failmalloc.c - allocation-failure injection in the nghttp2 style.
 *
 * For k = 1, 2, ... the k-th allocation of a scenario fails; the scenario must report
 * H2B_ERR_NOMEM (or a protocol error for a connection whose session could not allocate), leave
 * out-parameters untouched, and free everything it had taken: the asan build runs this test with
 * LeakSanitizer, so a leak on any failure path fails it. The loop ends at the first k beyond the
 * scenario's allocation count, and that clean run must succeed completely.
 *
 * Injection: the test links with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, which reroutes
 * every call made from the statically linked h2bench objects (core, server, and the nghttp2_mem
 * adapter through which nghttp2 allocates) to the __wrap_ functions below; jansson is pointed at
 * the same functions with json_set_alloc_funcs. Allocations inside libc or OpenSSL are not
 * injected.
 */
#include "h2ref/conn.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/json.h"
#include "core/results.h"
#include "test.h"

#include <nghttp2/nghttp2.h>
#include <unistd.h>

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static long alloc_calls, fail_at;

static bool inject(void)
{
    return ++alloc_calls == fail_at;
}

void *__wrap_malloc(size_t size)
{
    return inject() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    return inject() ? NULL : __real_realloc(p, size);
}

static void *jansson_malloc(size_t size)
{
    return __wrap_malloc(size);
}

/* A scenario returns H2B_OK when it ran to the end, H2B_ERR_NOMEM when it stopped cleanly on the
 * injected failure, and anything else when it misbehaved. */
typedef int (*scenario_fn)(void);

static int scenario_hist(void)
{
    struct h2b_hist *h = NULL, *d = NULL;
    int rv = h2b_hist_new_default(&h);
    if (rv != H2B_OK)
        return h == NULL ? rv : H2B_ERR_INVAL;
    for (uint64_t v = 1; v < 1000000; v = v * 3 + 1)
        h2b_hist_record(h, v);
    char *text = NULL;
    rv = h2b_hist_encode(h, &text);
    if (rv == H2B_OK) {
        rv = h2b_hist_decode(text, &d);
        if (rv == H2B_OK && d->total != h->total)
            rv = H2B_ERR_INVAL;
        else if (rv != H2B_OK && d != NULL)
            rv = H2B_ERR_INVAL;
        h2b_hist_del(d);
        free(text);
    } else if (text != NULL) {
        rv = H2B_ERR_INVAL;
    }
    h2b_hist_del(h);
    return rv;
}

static char results_path[64];

static int scenario_results(void)
{
    json_t *doc = NULL;
    int rv = h2b_results_new(&doc, "failmalloc", NULL);
    if (rv != H2B_OK)
        return doc == NULL ? rv : H2B_ERR_INVAL;
    struct h2b_diag diag = {0};
    rv = h2b_results_write(results_path, doc, &diag);
    json_decref(doc);
    if (rv != H2B_OK)
        return rv;
    json_t *back = NULL;
    rv = h2b_results_read(results_path, &back, &diag);
    if (rv == H2B_OK && !json_is_object(back))
        rv = H2B_ERR_INVAL;
    json_decref(back);
    /* A parse error from a failed allocation inside jansson is reported as malformed input:
     * acceptable as long as nothing leaks and the message is set. */
    if (rv == H2B_ERR_PARSE && diag.message[0] != '\0')
        return H2B_ERR_NOMEM;
    return rv;
}

/* Client bytes: preface, SETTINGS, GET /hello and POST /echo with a body, made once with
 * nghttp2's own client session before injection starts. */
static uint8_t client_bytes[4096];
static size_t client_len;

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *user)
{
    (void)s, (void)id, (void)src, (void)user;
    size_t n = len < 100 ? len : 100;
    memset(buf, 'x', n);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void make_client_bytes(void)
{
    nghttp2_session_callbacks *cbs;
    nghttp2_session *s;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_client_new(&s, cbs, NULL);
    nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
    const nghttp2_nv get[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)"/hello", 5, 6, 0},
    };
    const nghttp2_nv post[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)"/echo", 5, 5, 0},
    };
    nghttp2_submit_request(s, NULL, get, 4, NULL, NULL);
    nghttp2_data_provider dp = {.read_callback = body_read};
    nghttp2_submit_request(s, NULL, post, 4, &dp, NULL);
    client_len = 0; /* the client session writes the connection preface itself */
    const uint8_t *data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(s, &data)) > 0) {
        memcpy(client_bytes + client_len, data, (size_t)n);
        client_len += (size_t)n;
    }
    nghttp2_session_del(s);
    nghttp2_session_callbacks_del(cbs);
}

/* Bytes the last scenario_server_conn run produced. With an allocation failing the server may
 * refuse a stream instead of answering it (less output, still H2B_OK); the clean run must answer
 * both requests. */
static size_t conn_out_bytes;

static int scenario_server_conn(void)
{
    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    struct h2b_conn_ctx *ctx = NULL;
    int rv = h2b_conn_ctx_new(&ctx, &cfg);
    if (rv != H2B_OK)
        return ctx == NULL ? rv : H2B_ERR_INVAL;
    h2b_conn_ctx_tick(ctx, 1000000000ULL);
    struct h2b_conn *c = NULL;
    rv = h2b_conn_new(&c, ctx, NULL);
    if (rv != H2B_OK) {
        h2b_conn_ctx_del(ctx);
        return c == NULL ? rv : H2B_ERR_INVAL;
    }
    size_t out_bytes = 0;
    rv = h2b_conn_recv(c, client_bytes, client_len);
    for (int turn = 0; rv == H2B_OK && turn < 100; turn++) {
        const struct iovec *iov;
        int n = h2b_conn_output(c, &iov);
        if (n < 0)
            rv = n;
        if (n <= 0)
            break;
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += iov[i].iov_len;
        out_bytes += total;
        h2b_conn_sent(c, total);
    }
    h2b_conn_del(c);
    h2b_conn_ctx_del(ctx);
    conn_out_bytes = out_bytes;
    return rv == H2B_ERR_PROTO ? H2B_ERR_NOMEM : rv;
}

static void run(const char *name, scenario_fn fn)
{
    long k;
    int bad = 0;
    for (k = 1;; k++) {
        alloc_calls = 0;
        fail_at = k;
        int rv = fn();
        bool injected = alloc_calls >= k;
        fail_at = 0;
        if (!injected) {
            CHECK_EQ_INT(rv, H2B_OK); /* the clean run */
            break;
        }
        if (rv != H2B_OK && rv != H2B_ERR_NOMEM) {
            fprintf(stderr, "%s: failing allocation %ld gave %d (%s)\n", name, k, rv,
                    h2b_strerror(rv));
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("%s: %ld allocations, each failed once, handled\n", name, k - 1);
}

int main(void)
{
    snprintf(results_path, sizeof(results_path), "/tmp/h2b-failmalloc-%d.json", (int)getpid());
    json_set_alloc_funcs(jansson_malloc, free);
    make_client_bytes();
    run("hist", scenario_hist);
    run("results", scenario_results);
    run("server-conn", scenario_server_conn);
    CHECK(conn_out_bytes >= 150); /* SETTINGS, ACK, two HEADERS, "Hello, World!", the echo */
    unlink(results_path);
    return test_report();
}
