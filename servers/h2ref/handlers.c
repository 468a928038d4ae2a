/*
 * handlers.c - the reference server's route table, its responses and its static files, shared
 * by every engine (own-framing HTTP/2 in h2_fast.c, HTTP/2 over nghttp2 in h2_nghttp2.c, HTTP/1.1
 * in h1.c, HTTP/3).
 *
 * Approach:
 * - A request is three small facts an engine collects while decoding: the route (parsed from
 *   :path or the request target once, without copying it), the method, and the count of body
 *   bytes. h2b_handle() turns them into a response description: status, content-type,
 *   content-length, and a body *source* (static memory, the pattern, the echo of the request
 *   body, the engine's /stats, a file). The engine keeps what is its own: the framing, the
 *   header encoding, buffers and flow control, the /delay timer and the /stats rendering
 *   (its counters and buffers), so nothing here depends on nghttp2, nghttp3 or a socket.
 * - The pattern of /bytes is one constant array built by the preprocessor: no initialisation
 *   order, no lock, shared by every engine and thread.
 * - Static files: a request path names a file only if every '/'-separated segment, after
 *   percent-decoding, is non-empty, not "." or "..", and holds no NUL and no '/' (so
 *   "//etc/passwd", "/a/../b", "/%2e%2e/x" and "/a%2fb" are all refused before any system
 *   call). The open cannot leave the docroot either: openat2(RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS) where the kernel has it (Linux 5.6+), else a walk that opens one
 *   segment at a time with O_NOFOLLOW, so no symlink is ever followed.
 * - Descriptors: a file is opened only when its request is complete (the engines keep the :path
 *   until then), and open files are counted per connection and server-wide (struct h2b_files),
 *   so clients that open streams and never finish them, or finish them and never read, cannot
 *   take the descriptors accept() needs; over a budget the answer is 503.
 * - Injected regressions (h2b_inject_*: slower, one more allocation, more instructions per
 *   response) are read and applied here, so an engine only tests one flag per response.
 * Rejected: a callback interface (the handler calling the engine to emit headers and body):
 * the engines produce bodies in very different ways (nghttp2 data providers, iovec runs,
 * nghttp3 vectors), and a description they read costs no indirect calls on the hot path.
 * realpath() and a prefix compare for the docroot (racy against renames, and it follows
 * symlinks by design).
 */
#include "h2ref/handlers.h"
#include "h2ref/grpc.h"
#include "core/cli.h"
#include "core/cpu.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char h2b_server_name[] = "h2bench";

/* 256 + 16384 bytes, byte i = i & 0xff: P256 is one period, written out by the preprocessor. */
#define P4(i) (i), (i) + 1, (i) + 2, (i) + 3
#define P16(i) P4(i), P4((i) + 4), P4((i) + 8), P4((i) + 12)
#define P64(i) P16(i), P16((i) + 16), P16((i) + 32), P16((i) + 48)
#define P256 P64(0), P64(64), P64(128), P64(192)
#define P1K P256, P256, P256, P256
#define P4K P1K, P1K, P1K, P1K
const uint8_t h2b_pattern[256 + H2B_PATTERN_STEP] = {P256, P4K, P4K, P4K, P4K};

_Static_assert(sizeof h2b_server_name - 1 == H2B_SERVER_NAME_LEN, "server name length");

static const char hello_body[] = "Hello, World!";
static const char notfound_body[] = "Not Found\n";
static const char ct_text[] = "text/plain";
static const char ct_octet[] = "application/octet-stream";
static const char ct_json[] = "application/json";
static const char ct_grpc[] = "application/grpc";

/* A docroot file's content-type by its extension (case-insensitive), the common web types;
 * anything else is application/octet-stream. Index 0 is the default. id tells the three types
 * the routes send (enum h2b_ct) from the rest, which share their lengths (image/jpeg and
 * text/plain, application/wasm and application/json): an engine indexes by id, never by the
 * string or its length. */
#define FT(ext, ct, id)                                                                            \
    {                                                                                              \
        ext, ct, sizeof ct - 1, id                                                                 \
    }
static const struct {
    const char *ext, *ct;
    uint8_t ct_len, id;
} file_types[] = {
    FT("", ct_octet, H2B_CT_OCTET),
    FT("txt", ct_text, H2B_CT_TEXT),
    FT("html", "text/html", H2B_CT_OTHER),
    FT("htm", "text/html", H2B_CT_OTHER),
    FT("css", "text/css", H2B_CT_OTHER),
    FT("js", "text/javascript", H2B_CT_OTHER),
    FT("mjs", "text/javascript", H2B_CT_OTHER),
    FT("json", ct_json, H2B_CT_JSON),
    FT("xml", "application/xml", H2B_CT_OTHER),
    FT("svg", "image/svg+xml", H2B_CT_OTHER),
    FT("png", "image/png", H2B_CT_OTHER),
    FT("jpg", "image/jpeg", H2B_CT_OTHER),
    FT("jpeg", "image/jpeg", H2B_CT_OTHER),
    FT("gif", "image/gif", H2B_CT_OTHER),
    FT("webp", "image/webp", H2B_CT_OTHER),
    FT("ico", "image/x-icon", H2B_CT_OTHER),
    FT("wasm", "application/wasm", H2B_CT_OTHER),
    FT("pdf", "application/pdf", H2B_CT_OTHER),
    FT("csv", "text/csv", H2B_CT_OTHER),
    FT("md", "text/markdown", H2B_CT_OTHER),
};
#undef FT

static uint8_t file_type_of(const char *path, size_t n)
{
    size_t dot = n;
    while (dot > 0 && path[dot - 1] != '.' && path[dot - 1] != '/')
        dot--;
    if (dot == 0 || path[dot - 1] != '.' || n - dot > 4)
        return 0;
    for (uint8_t i = 1; i < sizeof file_types / sizeof file_types[0]; i++) {
        const char *e = file_types[i].ext;
        size_t k = 0;
        while (dot + k < n && e[k] && (path[dot + k] | 0x20) == e[k])
            k++;
        if (dot + k == n && !e[k])
            return i;
    }
    return 0;
}

/* ---- the route table ---- */

static bool prefix(const uint8_t *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n >= l && memcmp(p, lit, l) == 0; /* inlined: lit is a literal */
}

/* The target p[0..n) is the path lit, with or without a query string. */
static bool is_path(const uint8_t *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return prefix(p, n, lit) && (n == l || p[l] == '?');
}

bool h2b_parse_digits(const uint8_t *p, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0 || n > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* A route's number: h2b_parse_digits up to the end or a query string. */
static bool parse_arg(const uint8_t *p, size_t n, uint64_t max, uint64_t *out)
{
    const uint8_t *q = memchr(p, '?', n);
    return h2b_parse_digits(p, q ? (size_t)(q - p) : n, max, out);
}

/* The gRPC method p[0..n) is name (a literal): its route, and *arg = method. Compared by a
 * memcmp of the literal's constant length, which the compiler inlines: libc's memcmp, for a
 * length known only at run time, takes more or fewer instructions by where its operands sit (its
 * page-crossing checks), so a change that only moved a literal moved the budgets' instruction
 * counts (8 per gRPC call). */
#define GRPC_METHOD(p, n, name, method, arg)                                                       \
    do {                                                                                           \
        if ((n) == sizeof(name) - 1 && memcmp((p), (name), sizeof(name) - 1) == 0) {               \
            *(arg) = (method);                                                                     \
            return H2B_ROUTE_GRPC;                                                                 \
        }                                                                                          \
    } while (0)

/* A method of h2bench.Echo (p[0..n): what follows "/h2bench.Echo/"). No match: NOTFOUND, which
 * an application/grpc request gets as UNIMPLEMENTED (grpc.c). */
static enum h2b_route echo_route(const uint8_t *p, size_t n, uint64_t *arg)
{
    GRPC_METHOD(p, n, "Unary", H2B_GRPC_UNARY, arg);
    GRPC_METHOD(p, n, "ServerStream", H2B_GRPC_SERVER_STREAM, arg);
    GRPC_METHOD(p, n, "ClientStream", H2B_GRPC_CLIENT_STREAM, arg);
    GRPC_METHOD(p, n, "Bidi", H2B_GRPC_BIDI, arg);
    return H2B_ROUTE_NOTFOUND;
}

/* A method of grpc.health.v1.Health. */
static enum h2b_route health_route(const uint8_t *p, size_t n, uint64_t *arg)
{
    GRPC_METHOD(p, n, "Check", H2B_GRPC_HEALTH, arg);
    return H2B_ROUTE_NOTFOUND;
}

enum h2b_route h2b_route_parse(const uint8_t *p, size_t n, uint64_t max_body, uint64_t *arg)
{
    /* The table, keyed by the first character after '/': one or two compares for a path, and no
     * scan for the query string unless an argument is parsed. No route names a '?', so a path
     * that matches before its query string is the path without it. */
    if (n == 0 || p[0] != '/')
        return H2B_ROUTE_NOTFOUND;
    switch (n == 1 ? '?' : p[1]) {
    case '?':
        return H2B_ROUTE_HELLO; /* "/" */
    case 'h':
        if (is_path(p, n, "/hello"))
            return H2B_ROUTE_HELLO;
        if (prefix(p, n, "/h2bench.Echo/"))
            return echo_route(p + 14, n - 14, arg);
        break;
    case 'g':
        if (prefix(p, n, "/grpc.health.v1.Health/"))
            return health_route(p + 23, n - 23, arg);
        break;
    case 'b':
        if (prefix(p, n, "/bytes/"))
            return parse_arg(p + 7, n - 7, max_body, arg) ? H2B_ROUTE_BYTES : H2B_ROUTE_BAD;
        break;
    case 's':
        if (is_path(p, n, "/sink"))
            return H2B_ROUTE_SINK;
        if (prefix(p, n, "/status/")) {
            bool three = n == 11 || (n > 11 && p[11] == '?');
            return three && parse_arg(p + 8, 3, 599, arg) && *arg >= 200 ? H2B_ROUTE_STATUS
                                                                         : H2B_ROUTE_BAD;
        }
        if (is_path(p, n, "/stats"))
            return H2B_ROUTE_STATS;
        break;
    case 'e':
        if (is_path(p, n, "/echo"))
            return H2B_ROUTE_ECHO;
        break;
    case 'd':
        if (prefix(p, n, "/delay/"))
            return parse_arg(p + 7, n - 7, H2B_MAX_DELAY_MS, arg) ? H2B_ROUTE_DELAY : H2B_ROUTE_BAD;
        break;
    default:
        break;
    }
    return H2B_ROUTE_NOTFOUND;
}

enum h2b_method h2b_method_parse(const uint8_t *p, size_t n)
{
    if (n == 3 && memcmp(p, "GET", 3) == 0)
        return H2B_METHOD_GET;
    if (n == 4 && memcmp(p, "HEAD", 4) == 0)
        return H2B_METHOD_HEAD;
    if (n == 4 && memcmp(p, "POST", 4) == 0)
        return H2B_METHOD_POST;
    if (n == 3 && memcmp(p, "PUT", 3) == 0)
        return H2B_METHOD_PUT;
    return H2B_METHOD_OTHER;
}

/* ---- responses ---- */

/* id names ct (enum h2b_ct), the identity an engine indexes by. */
static void set_ct(struct h2b_response *rs, uint8_t id, const char *ct, size_t len)
{
    rs->ct_id = id;
    rs->ct = ct;
    rs->ct_len = len;
}

/* (static: with -fPIC an exported function is not inlined into its neighbours) */
static void empty_response(struct h2b_response *rs, unsigned status)
{
    rs->status = status;
    rs->body = H2B_BODY_NONE;
    rs->has_cl = true;
    set_ct(rs, H2B_CT_TEXT, ct_text, sizeof ct_text - 1);
    rs->mem = NULL;
    rs->len = 0;
}

void h2b_response_status(struct h2b_response *rs, unsigned status)
{
    empty_response(rs, status);
}

static void set_mem(struct h2b_response *rs, const void *p, size_t n)
{
    rs->body = H2B_BODY_MEM;
    rs->mem = p;
    rs->len = n;
}

/* A request to a gRPC method's path, or an application/grpc one to a path no route has: a gRPC
 * call (200, application/grpc, no content-length; grpc.c has the rest); as grpc-go, another
 * content-type is 415 and another method 405. Out of line: h2b_handle's other routes keep
 * their registers. */
static __attribute__((noinline)) void grpc_response(const struct h2b_request *rq,
                                                    struct h2b_response *rs)
{
    if (rq->route == H2B_ROUTE_GRPC && !(rq->grpc & H2B_GRPC_RQ_CT)) {
        rs->status = 415;
        return;
    }
    if (rq->route == H2B_ROUTE_GRPC && rq->method != H2B_METHOD_POST) {
        rs->status = 405;
        return;
    }
    if (!h2b_grpc_is_call(rq)) { /* an unknown path, not a gRPC call */
        rs->status = 404;
        set_mem(rs, notfound_body, sizeof notfound_body - 1);
        return;
    }
    rs->body = H2B_BODY_GRPC;
    set_ct(rs, H2B_CT_GRPC, ct_grpc, sizeof ct_grpc - 1);
    rs->has_cl = false;
    rs->headers_only = false;
}

void h2b_handle(const struct h2b_request *rq, char *text, struct h2b_response *rs)
{
    empty_response(rs, 200);
    rs->headers_only = rq->method == H2B_METHOD_HEAD;
    switch (rq->route) {
    case H2B_ROUTE_HELLO:
        set_mem(rs, hello_body, sizeof hello_body - 1);
        break;
    case H2B_ROUTE_BYTES:
        rs->body = H2B_BODY_PATTERN;
        rs->len = rq->arg;
        set_ct(rs, H2B_CT_OCTET, ct_octet, sizeof ct_octet - 1);
        break;
    case H2B_ROUTE_SINK: {
        if (!h2b_method_upload(rq->method)) {
            rs->status = 405;
            break;
        }
        size_t tl = h2b_fmt_u64(text, rq->rx);
        text[tl] = '\n';
        text[tl + 1] = '\0';
        set_mem(rs, text, tl + 1);
        break;
    }
    case H2B_ROUTE_ECHO:
        if (!h2b_method_upload(rq->method)) {
            rs->status = 405;
            break;
        }
        rs->body = H2B_BODY_ECHO;
        set_ct(rs, H2B_CT_OCTET, ct_octet, sizeof ct_octet - 1);
        rs->has_cl = false;
        break;
    case H2B_ROUTE_STATUS:
        rs->status = (unsigned)rq->arg;
        rs->has_cl = rs->status != 204 && rs->status != 304;
        break;
    case H2B_ROUTE_DELAY:
        rs->body = H2B_BODY_DELAY;
        break;
    case H2B_ROUTE_STATS:
        rs->body = H2B_BODY_STATS;
        set_ct(rs, H2B_CT_JSON, ct_json, sizeof ct_json - 1);
        break;
    case H2B_ROUTE_FILE:
        rs->body = H2B_BODY_FILE;
        rs->len = rq->file_len;
        /* file_type_of's index: always in the table */
        set_ct(rs, file_types[rq->file_type].id, file_types[rq->file_type].ct,
               file_types[rq->file_type].ct_len);
        break;
    case H2B_ROUTE_BAD:
        rs->status = 400;
        break;
    case H2B_ROUTE_GRPC:
        grpc_response(rq, rs);
        break;
    default:
        if (rq->grpc & H2B_GRPC_RQ_CT) { /* perhaps a call to a method not served */
            grpc_response(rq, rs);
            break;
        }
        rs->status = 404;
        set_mem(rs, notfound_body, sizeof notfound_body - 1);
        break;
    }
}

__attribute__((noinline)) void h2b_inject_slow_respond(void)
{
    volatile uint32_t x = 1;
    for (int i = 0; i < 4000; i++)
        x = x * 1664525u + 1013904223u;
}

/* The injections, read from the environment once (pthread_once: every server thread creates
 * its engine context and asks). */
static pthread_once_t inject_once = PTHREAD_ONCE_INIT;
static bool inject_slow, inject_alloc;
static uint64_t inject_instr;

static bool inject_names_h2ref(const char *var)
{
    const char *v = getenv(var);
    return v && strcmp(v, "h2ref") == 0;
}

static void inject_read(void)
{
    inject_slow = inject_names_h2ref("H2B_INJECT_SLOW");
    inject_alloc = inject_names_h2ref("H2B_INJECT_ALLOC");
    const char *count = getenv("H2B_INJECT_INSTR_COUNT");
    uint64_t c = 0;
    if (inject_names_h2ref("H2B_INJECT_INSTR") && count &&
        h2b_cli_parse_u64(count, 1, 1000000000, &c) == H2B_OK)
        inject_instr = c;
}

bool h2b_inject_wanted(void)
{
    pthread_once(&inject_once, inject_read);
    return inject_slow || inject_alloc || inject_instr;
}

void h2b_inject_respond(void)
{
    if (inject_slow)
        h2b_inject_slow_respond();
    if (inject_alloc) {
        void *volatile p = malloc(16);
        free(p);
    }
    if (inject_instr)
        h2b_cpu_burn_instructions(inject_instr);
}

/* ---- static files under --docroot ---- */

static int hexval(uint8_t ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Decodes the request path p[0..n) (it starts with '/') into out as "seg/seg/seg",
 * NUL-terminated. False for an empty, "." or ".." segment, a decoded NUL or '/', a malformed
 * escape, or a result that does not fit in cap bytes. */
static bool docroot_path(const uint8_t *p, size_t n, char *out, size_t cap)
{
    if (n < 2 || p[0] != '/' || cap == 0)
        return false;
    size_t o = 0, seg = 0, i = 1; /* seg: where the current segment starts in out */
    for (;;) {
        if (i == n || p[i] == '/') {
            size_t len = o - seg;
            if (len == 0 || (len == 1 && out[seg] == '.') ||
                (len == 2 && out[seg] == '.' && out[seg + 1] == '.'))
                return false;
            if (i == n)
                break;
            if (o + 1 >= cap)
                return false;
            out[o++] = '/';
            seg = o;
            i++;
            continue;
        }
        uint8_t ch = p[i];
        if (ch == '%') {
            int hi = n - i >= 3 ? hexval(p[i + 1]) : -1;
            int lo = n - i >= 3 ? hexval(p[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            ch = (uint8_t)(hi * 16 + lo);
            if (ch == '/')
                return false;
            i += 3;
        } else {
            i++;
        }
        if (ch == '\0' || o + 1 >= cap)
            return false;
        out[o++] = (char)ch;
    }
    out[o] = '\0';
    return true;
}

/* Opens path ("seg/seg", already checked by docroot_path) beneath dfd without following any
 * symlink; path is modified (its '/' become NUL) on the walk. Returns the fd or -1. */
static int docroot_openat(int dfd, char *path, bool walk)
{
    const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
#ifdef SYS_openat2
    if (!walk) {
        struct open_how how = {.flags = (uint64_t)flags,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
        long fd = syscall(SYS_openat2, dfd, path, &how, sizeof how);
        /* ENOSYS: kernel before 5.6; EPERM: a seccomp filter that does not know it. */
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return (int)fd;
    }
#else
    (void)walk;
#endif
    int cur = dfd;
    char *s = path;
    for (;;) {
        char *slash = strchr(s, '/');
        if (slash)
            *slash = '\0';
        int fd = openat(cur, s, slash ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : flags);
        if (cur != dfd)
            close(cur);
        if (fd < 0 || !slash)
            return fd;
        cur = fd;
        s = slash + 1;
    }
}

int h2b_docroot_open(int dfd, bool walk, const uint8_t *p, size_t n, uint64_t *len)
{
    const uint8_t *q = memchr(p, '?', n);
    if (q)
        n = (size_t)(q - p);
    char path[256];
    if (dfd < 0 || !docroot_path(p, n, path, sizeof path))
        return -1;
    int fd = docroot_openat(dfd, path, walk);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -1;
    }
    *len = (uint64_t)sb.st_size;
    return fd;
}

void h2b__docroot_keep(char **fpath, uint16_t *fpath_len, const uint8_t *p, size_t n,
                       struct h2b_freelist *paths)
{
    const uint8_t *q = memchr(p, '?', n);
    size_t k = q ? (size_t)(q - p) : n;
    char path[256];
    if (*fpath || k > H2B_FPATH_MAX || !docroot_path(p, k, path, sizeof path))
        return; /* cannot name a file: 404 with nothing kept */
    bool fresh;
    char *c = h2b_freelist_get(paths, &fresh);
    if (!c)
        return;
    memcpy(c, p, k);
    *fpath = c;
    *fpath_len = (uint16_t)k;
}

static bool files_acquire(struct h2b_files *f)
{
    if (!f)
        return true;
    uint32_t cur = atomic_load_explicit(&f->open, memory_order_relaxed);
    do {
        if (cur >= f->max)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&f->open, &cur, cur + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

static void files_release(struct h2b_files *f)
{
    if (f)
        atomic_fetch_sub_explicit(&f->open, 1, memory_order_relaxed);
}

bool h2b__docroot_take(struct h2b_request *rq, int *fd, char **fpath, uint16_t fpath_len,
                       uint32_t *conn_open, const struct h2b_conn_config *cfg,
                       struct h2b_freelist *paths)
{
    char *p = *fpath;
    if (!p)
        return false;
    *fpath = NULL;
    bool refused = false;
    if (*conn_open >= H2B_FILES_PER_CONN || !files_acquire(cfg->files)) {
        rq->route = H2B_ROUTE_STATUS;
        rq->arg = 503;
        refused = true;
    } else {
        int f = h2b_docroot_open(cfg->docroot_fd, cfg->docroot_walk, (const uint8_t *)p, fpath_len,
                                 &rq->file_len);
        if (f >= 0) {
            *fd = f;
            rq->route = H2B_ROUTE_FILE;
            rq->file_type = file_type_of(p, fpath_len);
            (*conn_open)++;
        } else {
            files_release(cfg->files);
        }
    }
    h2b_freelist_put(paths, p);
    return refused;
}

void h2b__docroot_close(int *fd, char **fpath, uint32_t *conn_open,
                        const struct h2b_conn_config *cfg, struct h2b_freelist *paths)
{
    if (*fpath)
        h2b_freelist_put(paths, *fpath);
    *fpath = NULL;
    if (*fd < 0)
        return;
    close(*fd);
    *fd = -1;
    (*conn_open)--;
    files_release(cfg->files);
}
