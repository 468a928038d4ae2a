/*
 * test_h2ref_conn.c - the reference server's HTTP/2 logic driven in memory (servers/h2ref
 * conn.h): an nghttp2 client session talks to an h2b_conn through byte buffers, no sockets.
 * Covers the routes, /echo flow control, /delay and the idle timeout through the ctx clock, and
 * that the server's own code makes no allocation per request once warm.
 */
#include "core/alloc.h"
#include "core/clock.h"
#include "h2ref/conn.h"
#include "core/error.h"
#include "test.h"

#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BODY (1 << 20)

struct resp {
    int status;
    uint32_t rst;
    bool closed;
    size_t len;
    uint8_t body[MAX_BODY];
};

struct client {
    nghttp2_session *s;
    struct resp *r; /* the response of the stream being tested (one at a time) */
    int goaway;     /* -1 until a GOAWAY arrives, then its error code */
    const uint8_t *upload;
    size_t upload_len, upload_off;
};

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
    (void)s, (void)f, (void)flags;
    struct client *cl = ud;
    if (nl == 7 && memcmp(name, ":status", 7) == 0 && vl == 3)
        cl->r->status = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
    return 0;
}

static int cl_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *ud)
{
    (void)s, (void)flags, (void)id;
    struct client *cl = ud;
    if (cl->r->len + len <= MAX_BODY) {
        memcpy(cl->r->body + cl->r->len, data, len);
        cl->r->len += len;
    }
    return 0;
}

static int cl_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
    (void)s, (void)id;
    struct client *cl = ud;
    cl->r->closed = true;
    cl->r->rst = err;
    return 0;
}

static int cl_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    struct client *cl = ud;
    if (f->hd.type == NGHTTP2_GOAWAY)
        cl->goaway = (int)f->goaway.error_code;
    return 0;
}

static ssize_t cl_upload(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s, (void)id, (void)src;
    struct client *cl = ud;
    size_t n = cl->upload_len - cl->upload_off;
    if (n > length)
        n = length;
    memcpy(buf, cl->upload + cl->upload_off, n);
    cl->upload_off += n;
    if (cl->upload_off == cl->upload_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void client_init(struct client *cl, struct resp *r)
{
    memset(cl, 0, sizeof *cl);
    cl->r = r;
    cl->goaway = -1;
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cl_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cl_frame);
    /* The client allocates through the same counting nghttp2_mem, so that "every allocation
     * minus nghttp2's" is exactly the server code's own. */
    nghttp2_session_client_new3(&cl->s, cb, cl, NULL, h2b_alloc_nghttp2_mem());
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24}};
    nghttp2_submit_settings(cl->s, NGHTTP2_FLAG_NONE, iv, 1);
    nghttp2_session_set_local_window_size(cl->s, NGHTTP2_FLAG_NONE, 0, 1 << 30);
}

/* Moves bytes both ways until neither side has anything to say. */
static void pump(struct client *cl, struct h2b_conn *c)
{
    for (int round = 0; round < 100000; round++) {
        bool moved = false;
        const uint8_t *p;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(cl->s, &p)) > 0) {
            moved = true;
            if (h2b_conn_recv(c, p, (size_t)n) != H2B_OK)
                return;
        }
        const struct iovec *iov;
        int cnt = h2b_conn_output(c, &iov);
        if (cnt < 0)
            return;
        size_t total = 0;
        for (int i = 0; i < cnt; i++) {
            nghttp2_session_mem_recv(cl->s, iov[i].iov_base, iov[i].iov_len);
            total += iov[i].iov_len;
        }
        if (total > 0) {
            moved = true;
            h2b_conn_sent(c, total);
        }
        if (!moved)
            return;
    }
}

static struct resp *fetch(struct client *cl, struct h2b_conn *c, const char *method,
                          const char *path, const uint8_t *body, size_t body_len)
{
    memset(cl->r, 0, offsetof(struct resp, body));
    nghttp2_nv nva[] = {
        {(uint8_t *)":method", (uint8_t *)method, 7, strlen(method), 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
    };
    cl->upload = body;
    cl->upload_len = body_len;
    cl->upload_off = 0;
    nghttp2_data_provider prd = {.read_callback = cl_upload};
    nghttp2_submit_request(cl->s, NULL, nva, 4, body ? &prd : NULL, NULL);
    pump(cl, c);
    return cl->r;
}

static struct resp resp_buf;
static uint8_t upload_buf[300000];

static void put_file(int dfd, const char *name, const char *text)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
    }
}

/* Issue 13 defect 8: with the server's memory budget spent, a new request is refused before
 * any work (REFUSED_STREAM, counted); once memory is back it is served. */
static void test_memory_budget(void)
{
    _Atomic uint64_t used = 3u << 20;
    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    cfg.memory_budget = 2u << 20;
    cfg.memory_used = &used;
    struct h2b_conn_ctx *ctx = NULL;
    CHECK_EQ_INT(h2b_conn_ctx_new(&ctx, &cfg), H2B_OK);
    struct h2b_conn *c = NULL;
    CHECK_EQ_INT(h2b_conn_new(&c, ctx, NULL), H2B_OK);
    struct client cl;
    client_init(&cl, &resp_buf);
    struct resp *r = fetch(&cl, c, "GET", "/hello", NULL, 0);
    CHECK(r->closed && r->status == 0);
    CHECK_EQ_INT(r->rst, NGHTTP2_REFUSED_STREAM);
    CHECK_EQ_U64(h2b_conn_ctx_stats(ctx)->v[H2B_STAT_GUARD_MEMORY], 1);
    atomic_store(&used, 0);
    r = fetch(&cl, c, "GET", "/hello", NULL, 0);
    CHECK(r->closed && r->status == 200 && r->len == 13);
    h2b_conn_del(c);
    nghttp2_session_del(cl.s);
    h2b_conn_ctx_del(ctx);
}

/* --docroot: only plain segments below the docroot, never through a symlink, with openat2 and
 * with the O_NOFOLLOW walk. */
static void test_docroot(bool walk)
{
    char dir[] = "/tmp/h2b-docroot-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dfd >= 0);
    CHECK(mkdirat(dfd, "sub", 0755) == 0);
    put_file(dfd, "a.txt", "AAA");
    put_file(dfd, "sub/b.txt", "BBBB");
    put_file(dfd, "sp ace", "C");
    CHECK(symlinkat("/etc/hostname", dfd, "out") == 0);
    CHECK(symlinkat("/etc", dfd, "outdir") == 0);
    CHECK(symlinkat("a.txt", dfd, "in") == 0);
    CHECK(mkfifoat(dfd, "fifo", 0644) == 0);

    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    cfg.docroot_fd = dfd;
    cfg.docroot_walk = walk;
    struct h2b_conn_ctx *ctx = NULL;
    CHECK_EQ_INT(h2b_conn_ctx_new(&ctx, &cfg), H2B_OK);
    struct h2b_conn *c = NULL;
    CHECK_EQ_INT(h2b_conn_new(&c, ctx, NULL), H2B_OK);
    struct client cl;
    client_init(&cl, &resp_buf);
    static const struct {
        const char *path;
        int status;
        const char *body;
    } cases[] = {
        {"/a.txt", 200, "AAA"},
        {"/sub/b.txt", 200, "BBBB"},
        {"/sp%20ace", 200, "C"},
        {"/%61.txt?q=1", 200, "AAA"},
        {"//etc/hostname", 404, NULL},
        {"//tmp", 404, NULL},
        {"/out", 404, NULL},
        {"/outdir/hostname", 404, NULL},
        {"/in", 404, NULL},
        {"/sub/../a.txt", 404, NULL},
        {"/sub/./b.txt", 404, NULL},
        {"/./a.txt", 404, NULL},
        {"/%2e%2e/etc/hostname", 404, NULL},
        {"/sub/%2E%2E/a.txt", 404, NULL},
        {"/sub%2fb.txt", 404, NULL},
        {"/a.txt%00", 404, NULL},
        {"/a.tx%7", 404, NULL},
        {"/a.txt%zz", 404, NULL},
        {"/sub//b.txt", 404, NULL},
        {"/sub/", 404, NULL},
        {"/sub", 404, NULL},
        {"/fifo", 404, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct resp *r = fetch(&cl, c, "GET", cases[i].path, NULL, 0);
        if (r->status != cases[i].status)
            fprintf(stderr, "docroot%s %s: status %d\n", walk ? " (walk)" : "", cases[i].path,
                    r->status);
        CHECK_EQ_INT(r->status, cases[i].status);
        if (cases[i].body)
            CHECK(r->len == strlen(cases[i].body) && memcmp(r->body, cases[i].body, r->len) == 0);
    }
    h2b_conn_del(c);
    nghttp2_session_del(cl.s);
    h2b_conn_ctx_del(ctx);
    const char *names[] = {"a.txt", "sub/b.txt", "sp ace", "out", "outdir", "in", "fifo"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(unlinkat(dfd, names[i], 0) == 0);
    CHECK(unlinkat(dfd, "sub", AT_REMOVEDIR) == 0);
    close(dfd);
    CHECK(rmdir(dir) == 0);
}

int main(void)
{
    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    cfg.idle_timeout_ns = H2B_NS_PER_SEC;
    struct h2b_conn_ctx *ctx = NULL;
    CHECK_EQ_INT(h2b_conn_ctx_new(&ctx, &cfg), H2B_OK);
    struct h2b_conn_config bad = cfg;
    bad.frame_size = 100;
    struct h2b_conn_ctx *nope = NULL;
    CHECK_EQ_INT(h2b_conn_ctx_new(&nope, &bad), H2B_ERR_INVAL);
    CHECK(nope == NULL);

    uint64_t t = 1000 * H2B_NS_PER_SEC;
    h2b_conn_ctx_tick(ctx, t);
    struct h2b_conn *c = NULL;
    int marker = 7;
    CHECK_EQ_INT(h2b_conn_new(&c, ctx, &marker), H2B_OK);
    CHECK(h2b_conn_user(c) == &marker);
    struct client cl;
    client_init(&cl, &resp_buf);

    struct resp *r = fetch(&cl, c, "GET", "/hello", NULL, 0);
    CHECK_EQ_INT(r->status, 200);
    CHECK(r->closed && r->len == 13 && memcmp(r->body, "Hello, World!", 13) == 0);

    r = fetch(&cl, c, "GET", "/bytes/100000", NULL, 0);
    CHECK_EQ_INT(r->status, 200);
    CHECK_EQ_U64(r->len, 100000);
    bool pattern_ok = r->len == 100000;
    for (size_t i = 0; pattern_ok && i < r->len; i++)
        pattern_ok = r->body[i] == (uint8_t)(i & 0xff);
    CHECK(pattern_ok);

    static const struct {
        const char *method, *path;
        int status;
    } codes[] = {
        {"GET", "/no/such", 404},   {"GET", "/status/503", 503}, {"GET", "/status/99", 400},
        {"GET", "/bytes/12x", 400}, {"GET", "/sink", 405},       {"GET", "/echo", 405},
        {"HEAD", "/hello", 200},    {"GET", "/delay/x", 400},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        r = fetch(&cl, c, codes[i].method, codes[i].path, NULL, 0);
        CHECK_EQ_INT(r->status, codes[i].status);
    }
    CHECK_EQ_U64(fetch(&cl, c, "HEAD", "/hello", NULL, 0)->len, 0);

    for (size_t i = 0; i < sizeof upload_buf; i++)
        upload_buf[i] = (uint8_t)(i * 7 + 3);
    r = fetch(&cl, c, "POST", "/echo", upload_buf, sizeof upload_buf);
    CHECK_EQ_INT(r->status, 200);
    CHECK(r->len == sizeof upload_buf && memcmp(r->body, upload_buf, sizeof upload_buf) == 0);
    r = fetch(&cl, c, "POST", "/sink", upload_buf, 1000);
    CHECK(r->status == 200 && r->len == 5 && memcmp(r->body, "1000\n", 5) == 0);

    r = fetch(&cl, c, "GET", "/stats", NULL, 0);
    CHECK_EQ_INT(r->status, 200);
    r->body[r->len < MAX_BODY ? r->len : MAX_BODY - 1] = '\0';
    CHECK(strstr((char *)r->body, "\"requests\":") != NULL);
    CHECK(strstr((char *)r->body, "\"rss_kib\":") != NULL);

    /* /delay answers only once the ctx clock passes the deadline. */
    r = fetch(&cl, c, "GET", "/delay/50", NULL, 0);
    CHECK(!r->closed);
    CHECK(h2b_conn_ctx_next_deadline(ctx) == t + 50 * H2B_NS_PER_MS);
    h2b_conn_ctx_tick(ctx, t + 49 * H2B_NS_PER_MS);
    CHECK(h2b_conn_ctx_pop_dirty(ctx) == NULL);
    h2b_conn_ctx_tick(ctx, t + 50 * H2B_NS_PER_MS);
    CHECK(h2b_conn_ctx_pop_dirty(ctx) == c);
    pump(&cl, c);
    CHECK(r->closed && r->status == 200 && r->len == 13);

    /* Steady state: the server makes no malloc call per request (its nghttp2 allocations come
     * from the ctx pools); the only allocations are the client session's, counted apart. */
    for (int i = 0; i < 200; i++)
        fetch(&cl, c, "GET", "/hello", NULL, 0);
    if (h2b_alloc_counting_available()) {
        struct h2b_alloc_stats all, ng0, ng1;
        h2b_alloc_reset();
        h2b_alloc_nghttp2_read(&ng0);
        h2b_alloc_arm();
        for (int i = 0; i < 1000; i++)
            fetch(&cl, c, "GET", "/hello", NULL, 0);
        h2b_alloc_disarm();
        h2b_alloc_read(&all);
        h2b_alloc_nghttp2_read(&ng1);
        CHECK(all.allocs > 0);
        CHECK_EQ_U64(all.allocs, ng1.allocs - ng0.allocs); /* every one was nghttp2's */
        printf("steady state: %.2f malloc calls per request, all the client's nghttp2; the "
               "server made none\n",
               all.allocs / 1000.0);
    } else {
        printf("allocation check skipped: counting allocator unavailable (sanitizer build)\n");
    }

    /* Idle timeout: GOAWAY(NO_ERROR), then the connection is done. */
    uint64_t now = t + 60 * H2B_NS_PER_MS;
    h2b_conn_ctx_tick(ctx, now);
    CHECK(!h2b_conn_done(c));
    /* next_deadline may be early (a deadline that moved later is corrected when it comes up):
     * tick at it until the timer fires, as the server loop does. */
    uint64_t d = h2b_conn_ctx_next_deadline(ctx);
    CHECK(d != UINT64_MAX && d <= now + H2B_NS_PER_SEC);
    struct h2b_conn *due = NULL;
    for (int i = 0; i < 3 && !due; i++) {
        h2b_conn_ctx_tick(ctx, h2b_conn_ctx_next_deadline(ctx));
        due = h2b_conn_ctx_pop_dirty(ctx);
    }
    CHECK(due == c);
    pump(&cl, c);
    CHECK_EQ_INT(cl.goaway, NGHTTP2_NO_ERROR);
    CHECK(h2b_conn_done(c));
    CHECK(!h2b_conn_fatal(c));

    /* Garbage instead of a preface: fatal, counted. */
    struct h2b_conn *c2 = NULL;
    CHECK_EQ_INT(h2b_conn_new(&c2, ctx, NULL), H2B_OK);
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK_EQ_INT(h2b_conn_recv(c2, (const uint8_t *)junk, sizeof junk - 1), H2B_ERR_PROTO);
    CHECK(h2b_conn_done(c2) && h2b_conn_fatal(c2));
    CHECK_EQ_U64(h2b_conn_ctx_stats(ctx)->v[H2B_STAT_ERR_PREFACE], 1);
    CHECK_EQ_U64(h2b_conn_ctx_stats(ctx)->v[H2B_STAT_CONNS_OPEN], 2);

    h2b_conn_del(c2);
    h2b_conn_del(c);
    CHECK_EQ_U64(h2b_conn_ctx_stats(ctx)->v[H2B_STAT_CONNS_OPEN], 0);
    CHECK_EQ_U64(h2b_conn_ctx_stats(ctx)->v[H2B_STAT_STREAMS_OPEN], 0);
    nghttp2_session_del(cl.s);
    h2b_conn_ctx_del(ctx);

    test_docroot(false);
    test_docroot(true);
    test_memory_budget();
    return test_report();
}
