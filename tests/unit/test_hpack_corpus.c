/*
 * test_hpack_corpus.c - HPACK decoding against the hpack-test-case corpus (tests/data/hpack/:
 * stories encoded by nghttp2, by nghttp2 with table size changes, by Go and by python-hpack).
 *
 * What: both decoding paths of the project, checked case by case.
 *   1. The inflater. Every case of every story goes through nghttp2_hd_inflate_hd2, the decoder
 *      behind h2ref's sessions and the hpack/decode-* microbenchmarks: one inflater per story (a
 *      story is one compression context), the decoder-side table size applied with
 *      nghttp2_hd_inflate_change_table_size where the corpus gives one, and the decoded list must
 *      equal the corpus's, name by name and value by value, in order.
 *   2. The reference server. Every request story is replayed as HEADERS frames into one
 *      in-memory h2ref connection (h2b_conn_recv: nghttp2's session, then h2ref's own
 *      on_begin_headers/on_header callbacks, header-list budget and router). h2ref keeps the
 *      decoded fields to itself, so the test observes two behaviours that depend on them:
 *      - routing: a GET whose decoded :path is "/" (query aside) is answered 200, any other path
 *        404;
 *      - the header-list budget (name + value + 32 per field, RST_STREAM(ENHANCE_YOUR_CALM) once
 *        over it): replayed a second time with the budget set to the median size of the story's
 *        requests, exactly the requests whose corpus header list is larger must be refused and
 *        the others answered. That also shows a refused request leaves the dynamic table in
 *        step for the ones after it. No replay may end the connection (COMPRESSION_ERROR).
 *
 * Rejected: a Python client checking h2ref over a socket (h2ref has no endpoint echoing request
 * headers, and the in-memory connection is the same code without the scheduling noise);
 * copying nghttp2's inflater tests (they test the library, not our use of it).
 */
#include "h2ref/conn.h"
#include "core/error.h"
#include "test.h"

#include <dirent.h>
#include <stddef.h>
#include <jansson.h>
#include <nghttp2/nghttp2.h>

#ifndef H2B_TEST_DATA
#error "H2B_TEST_DATA must name tests/data/hpack"
#endif

#define MAX_FIELDS 256
#define MAX_BLOCK 16384

struct field {
    const char *name, *value;
    size_t nlen, vlen;
};

/* One case: the wire block, the expected list, the decoder's table size (0: unchanged). */
struct hcase {
    uint8_t wire[MAX_BLOCK];
    size_t wire_len;
    struct field f[MAX_FIELDS];
    size_t nf;
    uint32_t table_size;
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads case i of a story into *hc. Returns false (and reports where) on a malformed case. */
static bool load_case(const char *file, json_t *c, size_t i, struct hcase *hc)
{
    const char *wire = json_string_value(json_object_get(c, "wire"));
    json_t *headers = json_object_get(c, "headers");
    json_t *ts = json_object_get(c, "header_table_size");
    size_t wl = wire ? strlen(wire) : 0;
    if (!wire || wl % 2 || wl / 2 > MAX_BLOCK || !json_is_array(headers) ||
        json_array_size(headers) > MAX_FIELDS || (ts && !json_is_integer(ts))) {
        fprintf(stderr,
                "%s: cases[%zu]: expected wire (hex), headers (array) and an optional "
                "integer header_table_size\n",
                file, i);
        return false;
    }
    for (size_t k = 0; k < wl / 2; k++) {
        int hi = hexval(wire[2 * k]), lo = hexval(wire[2 * k + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "%s: cases[%zu].wire: not hex at %zu\n", file, i, 2 * k);
            return false;
        }
        hc->wire[k] = (uint8_t)(hi << 4 | lo);
    }
    hc->wire_len = wl / 2;
    hc->table_size = ts ? (uint32_t)json_integer_value(ts) : 0;
    hc->nf = json_array_size(headers);
    for (size_t k = 0; k < hc->nf; k++) {
        json_t *h = json_array_get(headers, k);
        const char *name = json_is_object(h) && json_object_size(h) == 1
                               ? json_object_iter_key(json_object_iter(h))
                               : NULL;
        json_t *v = name ? json_object_get(h, name) : NULL;
        if (!json_is_string(v)) {
            fprintf(stderr, "%s: cases[%zu].headers[%zu]: expected {\"name\": \"value\"}\n", file,
                    i, k);
            return false;
        }
        hc->f[k] = (struct field){name, json_string_value(v), strlen(name), json_string_length(v)};
    }
    return true;
}

static bool field_eq(const struct field *f, const nghttp2_nv *nv)
{
    return f->nlen == nv->namelen && f->vlen == nv->valuelen &&
           memcmp(f->name, nv->name, f->nlen) == 0 && memcmp(f->value, nv->value, f->vlen) == 0;
}

/* Expected h2ref status for the case's request: 200 for "/" (query aside), 404 otherwise, 0 when
 * the path names one of h2ref's other routes (not predicted here). */
static int expected_status(const struct hcase *hc)
{
    for (size_t k = 0; k < hc->nf; k++) {
        if (hc->f[k].nlen != 5 || memcmp(hc->f[k].name, ":path", 5) != 0)
            continue;
        const char *p = hc->f[k].value;
        size_t n = hc->f[k].vlen;
        const char *q = memchr(p, '?', n);
        if (q)
            n = (size_t)(q - p);
        if ((n == 1 && p[0] == '/') || (n == 6 && memcmp(p, "/hello", 6) == 0))
            return 200;
        static const char *const other[] = {"/bytes/",  "/sink",   "/echo",
                                            "/status/", "/delay/", "/stats"};
        for (size_t o = 0; o < sizeof other / sizeof other[0]; o++)
            if (n >= strlen(other[o]) && memcmp(p, other[o], strlen(other[o])) == 0)
                return 0;
        return 404;
    }
    return 0;
}

static bool name_is(const struct field *f, const char *name)
{
    return f->nlen == strlen(name) && memcmp(f->name, name, f->nlen) == 0;
}

/* RFC 9113 §8.2.2: connection-specific fields make a request malformed (nghttp2's HTTP
 * messaging resets the stream with PROTOCOL_ERROR before h2ref's on_header sees the field). */
static bool malformed_field(const struct field *f)
{
    static const char *const conn_specific[] = {"connection", "keep-alive", "proxy-connection",
                                                "transfer-encoding", "upgrade"};
    for (size_t k = 0; k < sizeof conn_specific / sizeof conn_specific[0]; k++)
        if (name_is(f, conn_specific[k]))
            return true;
    return name_is(f, "te") && !(f->vlen == 8 && memcmp(f->value, "trailers", 8) == 0);
}

/* What h2ref must answer with the given budget: -PROTOCOL_ERROR for a malformed request,
 * -ENHANCE_YOUR_CALM once the fields accepted so far pass the budget, else the status
 * (0: not predicted). *refused is set when the budget is what refuses it. */
static int predict(const struct hcase *hc, uint32_t budget, bool *refused)
{
    uint64_t sum = 0;
    *refused = false;
    for (size_t k = 0; k < hc->nf; k++) {
        if (malformed_field(&hc->f[k]))
            return -NGHTTP2_PROTOCOL_ERROR;
        sum += hc->f[k].nlen + hc->f[k].vlen + 32;
        if (sum > budget) {
            *refused = true;
            return -NGHTTP2_ENHANCE_YOUR_CALM;
        }
    }
    return expected_status(hc);
}

/* Header list size as h2ref's budget counts it: the fields h2ref's on_header sees, those before
 * the first malformed one. */
static uint64_t list_size(const struct hcase *hc)
{
    uint64_t n = 0;
    for (size_t k = 0; k < hc->nf && !malformed_field(&hc->f[k]); k++)
        n += hc->f[k].nlen + hc->f[k].vlen + 32;
    return n;
}

static bool is_request(const struct hcase *hc)
{
    for (size_t k = 0; k < hc->nf; k++)
        if (hc->f[k].nlen == 7 && memcmp(hc->f[k].name, ":method", 7) == 0)
            return true;
    return false;
}

static struct hcase *cases; /* one story's cases */
static size_t ncases;
static uint64_t total_cases, total_fields, total_requests, total_refused, total_malformed;

/* ---- 1. the inflater ------------------------------------------------------------------------ */

static void inflate_story(const char *file)
{
    nghttp2_hd_inflater *inf = NULL;
    CHECK_EQ_INT(nghttp2_hd_inflate_new(&inf), 0);
    if (!inf)
        return;
    for (size_t i = 0; i < ncases; i++) {
        struct hcase *hc = &cases[i];
        if (hc->table_size)
            CHECK_EQ_INT(nghttp2_hd_inflate_change_table_size(inf, hc->table_size), 0);
        const uint8_t *in = hc->wire;
        size_t left = hc->wire_len, got = 0;
        bool ok = true;
        for (;;) {
            nghttp2_nv nv;
            int flags = 0;
            ssize_t n = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, left, 1);
            if (n < 0) {
                ok = false;
                fprintf(stderr, "%s: case %zu: inflate error %zd (%s)\n", file, i, n,
                        nghttp2_strerror((int)n));
                break;
            }
            in += n;
            left -= (size_t)n;
            if (flags & NGHTTP2_HD_INFLATE_EMIT) {
                if (got >= hc->nf || !field_eq(&hc->f[got], &nv)) {
                    ok = false;
                    fprintf(stderr, "%s: case %zu: field %zu decoded as %.*s: %.*s\n", file, i, got,
                            (int)nv.namelen, (const char *)nv.name, (int)nv.valuelen,
                            (const char *)nv.value);
                    break;
                }
                got++;
            }
            if (flags & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(inf);
                break;
            }
            if (n == 0 && left == 0) {
                ok = false;
                fprintf(stderr, "%s: case %zu: block ended without FINAL\n", file, i);
                break;
            }
        }
        CHECK(ok);
        if (ok)
            CHECK_EQ_U64(got, hc->nf);
        total_fields += got;
    }
    nghttp2_hd_inflate_del(inf);
}

/* ---- 2. the reference server ---------------------------------------------------------------- */

struct replay {
    int status[2048]; /* per request index: response status, -code for RST_STREAM, 0 none */
    int goaway;       /* -1 none */
    nghttp2_hd_inflater *inf;
    uint8_t out[1 << 20];
    size_t out_len;
};

static struct replay rp;

static void put_frame_header(uint8_t *p, size_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
    p[0] = (uint8_t)(len >> 16), p[1] = (uint8_t)(len >> 8), p[2] = (uint8_t)len;
    p[3] = type, p[4] = flags;
    p[5] = (uint8_t)(sid >> 24), p[6] = (uint8_t)(sid >> 16), p[7] = (uint8_t)(sid >> 8);
    p[8] = (uint8_t)sid;
}

/* Collects the server's output and parses the frames it holds (whole frames only). */
static void drain(struct h2b_conn *c)
{
    for (;;) {
        const struct iovec *iov;
        int cnt = h2b_conn_output(c, &iov);
        if (cnt <= 0)
            break;
        size_t total = 0;
        for (int i = 0; i < cnt; i++) {
            if (rp.out_len + iov[i].iov_len <= sizeof rp.out) {
                memcpy(rp.out + rp.out_len, iov[i].iov_base, iov[i].iov_len);
                rp.out_len += iov[i].iov_len;
            }
            total += iov[i].iov_len;
        }
        h2b_conn_sent(c, total);
    }
    size_t off = 0;
    while (rp.out_len - off >= 9) {
        const uint8_t *p = rp.out + off;
        size_t len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
        if (rp.out_len - off < 9 + len)
            break;
        uint32_t sid =
            ((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]) & 0x7fffffff;
        size_t idx = sid ? (sid - 1) / 2 : 0;
        const uint8_t *pl = p + 9;
        if (p[3] == NGHTTP2_HEADERS && sid && idx < 2048) {
            const uint8_t *in = pl;
            size_t left = len;
            for (;;) { /* h2ref sends neither padding nor priority */
                nghttp2_nv nv;
                int flags = 0;
                ssize_t n = nghttp2_hd_inflate_hd2(rp.inf, &nv, &flags, in, left, 1);
                if (n < 0)
                    break;
                in += n;
                left -= (size_t)n;
                if ((flags & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 7 &&
                    memcmp(nv.name, ":status", 7) == 0 && nv.valuelen == 3 && !rp.status[idx])
                    rp.status[idx] =
                        (nv.value[0] - '0') * 100 + (nv.value[1] - '0') * 10 + (nv.value[2] - '0');
                if (flags & NGHTTP2_HD_INFLATE_FINAL) {
                    nghttp2_hd_inflate_end_headers(rp.inf);
                    break;
                }
                if (n == 0 && left == 0)
                    break;
            }
        } else if (p[3] == NGHTTP2_RST_STREAM && len == 4 && sid && idx < 2048 &&
                   !rp.status[idx]) { /* the first reset is h2ref's own */
            rp.status[idx] = -(int)((uint32_t)pl[0] << 24 | (uint32_t)pl[1] << 16 |
                                    (uint32_t)pl[2] << 8 | pl[3]);
        } else if (p[3] == NGHTTP2_GOAWAY && len >= 8) {
            rp.goaway =
                (int)((uint32_t)pl[4] << 24 | (uint32_t)pl[5] << 16 | (uint32_t)pl[6] << 8 | pl[7]);
        }
        off += 9 + len;
    }
    memmove(rp.out, rp.out + off, rp.out_len - off);
    rp.out_len -= off;
}

/* Replays the story's requests on one h2ref connection with the given header-list budget;
 * checks every answer. Returns how many requests were refused by the budget. */
static uint64_t replay_story(const char *file, uint32_t budget)
{
    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    cfg.max_header_list = budget;
    cfg.flood_burst = 1000000; /* refusals are charged: this test is not about floods */
    uint32_t max_ts = 4096;
    for (size_t i = 0; i < ncases; i++)
        if (cases[i].table_size > max_ts)
            max_ts = cases[i].table_size;
    cfg.header_table_size = max_ts;
    struct h2b_conn_ctx *ctx = NULL;
    struct h2b_conn *c = NULL;
    CHECK_EQ_INT(h2b_conn_ctx_new(&ctx, &cfg), H2B_OK);
    if (!ctx)
        return 0;
    CHECK_EQ_INT(h2b_conn_new(&c, ctx, NULL), H2B_OK);
    memset(&rp, 0, offsetof(struct replay, out));
    rp.goaway = -1;
    rp.out_len = 0;
    CHECK_EQ_INT(nghttp2_hd_inflate_new(&rp.inf), 0);
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    uint8_t hdr[9];
    CHECK_EQ_INT(h2b_conn_recv(c, (const uint8_t *)preface, sizeof preface - 1), H2B_OK);
    put_frame_header(hdr, 0, NGHTTP2_SETTINGS, 0, 0);
    CHECK_EQ_INT(h2b_conn_recv(c, hdr, 9), H2B_OK);
    drain(c);

    uint64_t refused = 0;
    size_t nreq = 0;
    for (size_t i = 0; i < ncases && nreq < 2048; i++, nreq++) {
        struct hcase *hc = &cases[i];
        put_frame_header(hdr, hc->wire_len, NGHTTP2_HEADERS,
                         NGHTTP2_FLAG_END_STREAM | NGHTTP2_FLAG_END_HEADERS,
                         (uint32_t)(2 * nreq + 1));
        if (h2b_conn_recv(c, hdr, 9) != H2B_OK ||
            h2b_conn_recv(c, hc->wire, hc->wire_len) != H2B_OK) {
            fprintf(stderr, "%s: request %zu: h2ref refused the bytes (goaway %d)\n", file, i,
                    rp.goaway);
            CHECK(false);
            break;
        }
        drain(c);
        int got = rp.status[nreq];
        bool by_budget;
        int want = predict(hc, budget, &by_budget);
        refused += by_budget;
        total_malformed += want == -NGHTTP2_PROTOCOL_ERROR;
        if (want ? got != want : got <= 0)
            fprintf(stderr,
                    "%s: request %zu (header list %" PRIu64 ", budget %u): got %d, "
                    "expected %d (negative: RST_STREAM code)\n",
                    file, i, list_size(hc), budget, got, want);
        CHECK(want ? got == want : got > 0);
    }
    CHECK_EQ_INT(rp.goaway, -1);
    CHECK(!h2b_conn_fatal(c));
    total_requests += nreq;
    nghttp2_hd_inflate_del(rp.inf);
    h2b_conn_del(c);
    h2b_conn_ctx_del(ctx);
    return refused;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_story(const char *file)
{
    json_error_t err;
    json_t *root = json_load_file(file, 0, &err);
    if (!root) {
        fprintf(stderr, "%s:%d:%d: %s\n", file, err.line, err.column, err.text);
        CHECK(root != NULL);
        return;
    }
    json_t *arr = json_object_get(root, "cases");
    CHECK(json_is_array(arr) && json_array_size(arr) > 0 && json_array_size(arr) <= 2048);
    if (!json_is_array(arr) || json_array_size(arr) > 2048 ||
        !(cases = calloc(json_array_size(arr) + 1, sizeof *cases))) {
        json_decref(root);
        return;
    }
    ncases = 0;
    bool requests = true;
    for (size_t i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
        if (!load_case(file, json_array_get(arr, i), i, &cases[ncases])) {
            CHECK(false);
            break;
        }
        requests = requests && is_request(&cases[ncases]);
        ncases++;
    }
    total_cases += ncases;
    inflate_story(file);
    if (requests && ncases == json_array_size(arr)) {
        /* Once with the default 64 KiB budget (no request is that large), once with the
         * median of what h2ref counts for the story's requests as the budget: about half are
         * refused by the budget, the others answered or reset as malformed. */
        CHECK_EQ_U64(replay_story(file, 64 * 1024), 0);
        static uint64_t sizes[2048];
        for (size_t i = 0; i < ncases; i++)
            sizes[i] = list_size(&cases[i]);
        qsort(sizes, ncases, sizeof sizes[0], cmp_u64);
        uint32_t median = (uint32_t)sizes[ncases / 2];
        total_refused += replay_story(file, median);
    }
    free(cases);
    cases = NULL;
    json_decref(root);
}

int main(void)
{
    static const char *const sets[] = {"nghttp2", "nghttp2-change-table-size", "go-hpack",
                                       "python-hpack"};
    size_t stories = 0;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", H2B_TEST_DATA, sets[s]);
        DIR *d = opendir(dir);
        CHECK(d != NULL);
        if (!d)
            continue;
        char *names[64] = {0};
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 64)
            if (strncmp(e->d_name, "story_", 6) == 0)
                names[n++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n, sizeof names[0], cmp_str);
        CHECK(n >= 20);
        for (size_t i = 0; i < n; i++) {
            char file[1024];
            snprintf(file, sizeof file, "%s/%s", dir, names[i]);
            run_story(file);
            stories++;
            free(names[i]);
        }
    }
    printf("hpack corpus: %zu stories, %" PRIu64 " blocks, %" PRIu64 " fields decoded and "
           "compared; %" PRIu64 " requests replayed into h2ref: %" PRIu64
           " refused by the header budget and %" PRIu64 " as malformed, as predicted\n",
           stories, total_cases, total_fields, total_requests, total_refused, total_malformed);
    CHECK(stories >= 80);
    CHECK(total_cases >= 1300);
    CHECK(total_refused > 0);
    return test_report();
}
