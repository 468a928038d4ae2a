/*
 * budget.c - per-request budgets of a target: the phase driver and the measurement passes.
 *
 * Passes, each on a fresh instance of the target (its own directory under the run's):
 *  1. counts: started with LD_PRELOAD=h2bench-budget.so and H2B_BUDGET_PAGE naming a page
 *     file (budget_page.h). First the RSS measurement (a warm-up connection of 1,000
 *     requests, then R connections with one request each, VmRSS before and after), then per
 *     point: open the connections, N1 requests, settled snapshot, N2 requests, settled
 *     snapshot, close. "Settled" means the counters stood still for 100 ms: the target
 *     finished what the last response set off (frees, the read that returns EAGAIN) before we
 *     read.
 *  2. instructions: started under valgrind --tool=callgrind --instr-atstart=no; per point the
 *     N1 phase and one more N2 phase run uninstrumented (nghttpd's first N2 after a 500-request
 *     warm-up still cost 0.4 % more than the next two, which agreed within 0.01 %), then twice:
 * instrumentation on, N2 requests, a pause for the tail, instrumentation off and a dump (vgdb
 * monitor commands; the pause lasts until the target is back in its event wait); each dump's
 * "totals:" line is that run's instruction count. The two must agree within 0.5 %; otherwise the
 * metric is null with both numbers. h2ref's two runs differ by 0.02 % at most (glibc's free
 * lists: 4106.1 and 4106.8 per request at 10 x 10), but a server that allocates per request
 * moves more (the test's own server, 10 allocations a request, broke 0.1 % in a clean CI run),
 * and this check only says whether the measurement is valid: how much a gate tolerates is the
 * ceiling's own `tolerance` (gates/budgets-ceilings.json: 0.1 %). RSS is measured on the preload
 * pass's fresh process before any point ran, so memory the points freed into malloc's free lists
 * cannot hide what new connections cost.
 *
 * The driver: one thread, one epoll loop, nghttp2 client sessions writing through mem_send
 * into one buffer per connection, in lockstep rounds (each connection sends `streams`
 * requests, the next round waits for every response). A phase ends with nothing in flight, so
 * a snapshot is taken with the target idle. A request is the matrix's GET, or its gRPC call
 * (struct h2b_budget_request): the body built once by the runner, sent from an offset kept in
 * the stream's user data beside the marks of what the response said, so the driver holds no
 * state per stream; a call counts only with grpc-status 0.
 *
 * Held rounds. Lockstep alone does not fix what the target sees with several connections: the
 * driver writes them one after the other and the target's epoll wakes for the first, then for
 * some of the rest, as the timing falls, so its wake-ups and instructions per request followed
 * the machine's speed and load (10 x 1: 4694 to 4737 per request, 0.9 %, between runs of one
 * build; 1 x 1 and 1 x 10, one write per round, were steady). So with more than one connection
 * the driver waits until every thread of the target has slept for 1 ms without running
 * (/proc/PID/task/TID/stat and schedstat: back in its event wait), stops the target's process
 * group (SIGSTOP), writes the round on every connection, and continues it (SIGCONT): one wait
 * then finds every connection ready, in every run, and the stop costs the same interrupted wait
 * every round. Measured: 10 x 1 gave 4726.9 to 4727.0 in 4 runs (0.001 %), 10 x 10 4109.8 to
 * 4110.3. Rejected: one connection at a time (also deterministic, but a 10 x 1 cell would then
 * measure what 1 x 1 measures, with idle connections around; the held round keeps the batch of
 * ten ready connections that the cell exists to show). Data written to a stopped target on
 * loopback is in its socket when write() returns (the receive path runs in the writer's softirq),
 * so nothing arrives after the continue.
 *
 * io_uring targets (the ready lines say "io: uring"): their one-connection rounds are held too,
 * since a send's completion is an event of its own and whether the next request met it in one
 * wait followed the timing (h2ref --io uring at 1 x 1: 4942 to 5475 instructions per request
 * between runs; held, 5474.4 to 5475.4 in 3 runs). Their reads and writes are null: liburing
 * makes the system calls itself, not through libc, so the preload sees none (the strace counts of
 * scripts/bench/syscalls-per-request.sh give them by kind). Under valgrind h2bench's own rings
 * wait in poll(2) (core/uring.h, h2b_uring_wait), so the instruction counts include that wait.
 *
 * Other CPUs: under valgrind, glibc's ifunc resolvers see valgrind's synthesized CPU, not the
 * host's (GenuineIntel family 6 model 0x3c on this AMD EPYC; only a few bits such as ERMS pass
 * through), so memcpy and friends are the same variants on Intel and AMD hosts of one
 * valgrind CPU class, and the counts do not depend on the vendor.
 *
 * Rejected: h2load or `h2bench load` for the phases (they open fresh connections per run, so
 * connection set-up would not cancel, and they cannot pause between phases with the target
 * idle); /proc/PID/io syscr/syscw (file and pipe I/O mixed in, no allocation counts); perf
 * stat (this machine has no counters; where counters exist the matrix cells already carry
 * server_instructions_per_request); measuring budgets during the timed cells (the preload's
 * atomics and valgrind would distort the times).
 */
#include "run/budget.h"

#include "core/budget_page.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/proc.h"
#include "core/results.h"
#include "core/url.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTBUF 65536
#define SETTLE_STABLE_NS (100 * H2B_NS_PER_MS)
#define SETTLE_MAX_NS (3 * H2B_NS_PER_SEC)
#define PHASE_TIMEOUT_NS (120 * H2B_NS_PER_SEC)
#define VALGRIND_PHASE_TIMEOUT_NS (600 * H2B_NS_PER_SEC)
#define TAIL_NS (300 * H2B_NS_PER_MS)
#define TAIL_MAX_NS (5 * H2B_NS_PER_SEC)
#define INSTR_TOLERANCE 0.005
#define RSS_WARMUP_REQUESTS 1000

/* Reasons are cut to their buffer (core/error.h). */
#define say h2b_reason

/* ---- the driver ---- */

struct bconn {
    struct h2b_budget_client *owner;
    int fd;
    nghttp2_session *sess;
    uint64_t left;     /* requests still to submit in this phase */
    uint32_t inflight; /* submitted, not closed */
    uint32_t max_inflight;
    bool dead;
    bool want_out; /* EPOLLOUT registered */
    uint8_t out[OUTBUF];
    size_t out_len;
};

struct h2b_budget_client {
    int ep;
    pid_t hold;       /* the target, stopped while a round is written (0: never) */
    bool hold_single; /* ... with one connection too */
    struct bconn *conns;
    uint32_t n;
    char authority[H2B_URL_AUTHORITY_MAX + 1];
    char path[1024];
    bool grpc;           /* the request: a gRPC call (struct h2b_budget_request) */
    const uint8_t *body; /* its body, the caller's */
    size_t body_len;
    uint64_t done, bad; /* this phase: complete responses, non-2xx or reset */
    char bad_why[128];
};

static nghttp2_session_callbacks *client_callbacks(void);

/* A stream's user data: what its response said (MARK_*), and the request body bytes sent so far
 * above the mark bits (a gRPC call's body, data_read). */
#define MARK_2XX 1u
#define MARK_NOT_2XX 2u
#define MARK_GRPC_OK 4u  /* grpc-status: 0 */
#define MARK_GRPC_BAD 8u /* any other grpc-status */
#define MARK_BITS 4

static uintptr_t stream_word(nghttp2_session *s, int32_t sid)
{
    return (uintptr_t)nghttp2_session_get_stream_user_data(s, sid);
}

static void stream_mark(nghttp2_session *s, int32_t sid, uintptr_t mark)
{
    nghttp2_session_set_stream_user_data(s, sid, (void *)(stream_word(s, sid) | mark));
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *arg)
{
    (void)flags;
    (void)arg;
    if (f->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        bool ok = valuelen == 3 && value[0] == '2';
        stream_mark(s, f->hd.stream_id, ok ? MARK_2XX : MARK_NOT_2XX);
    } else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        /* in the trailers, or in a trailers-only response's one block */
        bool ok = valuelen == 1 && value[0] == '0';
        stream_mark(s, f->hd.stream_id, ok ? MARK_GRPC_OK : MARK_GRPC_BAD);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t sid, uint32_t code, void *arg)
{
    struct bconn *c = arg;
    uintptr_t mark = stream_word(s, sid);
    bool grpc_ok = !c->owner->grpc || (mark & (MARK_GRPC_OK | MARK_GRPC_BAD)) == MARK_GRPC_OK;
    c->inflight--;
    if (code == NGHTTP2_NO_ERROR && (mark & (MARK_2XX | MARK_NOT_2XX)) == MARK_2XX && grpc_ok) {
        c->owner->done++;
    } else {
        c->owner->bad++;
        say(c->owner->bad_why, sizeof(c->owner->bad_why), "%s",
            mark & MARK_NOT_2XX ? "a response was not 2xx"
            : code != NGHTTP2_NO_ERROR || !(mark & MARK_2XX)
                ? "a stream was reset or ended without a response"
            : mark & MARK_GRPC_BAD ? "a gRPC call ended with a grpc-status other than 0"
                                   : "a gRPC call ended without grpc-status");
    }
    return 0;
}

/* A gRPC call's request body: the client's body from the offset kept in the stream's word. */
static ssize_t data_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *arg)
{
    (void)src;
    const struct bconn *c = arg;
    uintptr_t word = stream_word(s, sid);
    size_t off = (size_t)(word >> MARK_BITS);
    size_t n = c->owner->body_len - off < length ? c->owner->body_len - off : length;
    memcpy(buf, c->owner->body + off, n);
    off += n;
    nghttp2_session_set_stream_user_data(
        s, sid, (void *)(((uintptr_t)off << MARK_BITS) | (word & ((1u << MARK_BITS) - 1))));
    if (off == c->owner->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static nghttp2_session_callbacks *client_callbacks(void)
{
    static nghttp2_session_callbacks *cbs;
    if (!cbs && nghttp2_session_callbacks_new(&cbs) == 0) {
        nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    }
    return cbs;
}

static void conn_watch(struct h2b_budget_client *cl, struct bconn *c, bool out)
{
    if (c->want_out == out)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(cl->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = out;
}

/* Submits what the phase allows, gathers nghttp2's output, writes it (once, unless partial). */
static void conn_pump(struct h2b_budget_client *cl, struct bconn *c)
{
    if (c->dead)
        return;
    while (c->left > 0 && c->inflight < c->max_inflight) {
        const nghttp2_nv nv[] = {
            {(uint8_t *)":method", (uint8_t *)(cl->grpc ? "POST" : "GET"), 7, cl->grpc ? 4 : 3,
             NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":authority", (uint8_t *)cl->authority, 10, strlen(cl->authority),
             NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":path", (uint8_t *)cl->path, 5, strlen(cl->path), NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"user-agent", (uint8_t *)"h2bench-budget", 10, 14, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
             NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, NGHTTP2_NV_FLAG_NONE},
        };
        /* a gRPC call: the body from data_read, whose offset starts at 0 in the stream word */
        const nghttp2_data_provider body = {.source.ptr = NULL, .read_callback = data_read};
        if (nghttp2_submit_request(c->sess, NULL, nv, cl->grpc ? 7 : 5, cl->grpc ? &body : NULL,
                                   NULL) < 0) {
            c->dead = true;
            return;
        }
        c->left--;
        c->inflight++;
    }
    for (;;) {
        const uint8_t *data;
        ssize_t n;
        while (c->out_len < OUTBUF / 2 && (n = nghttp2_session_mem_send(c->sess, &data)) > 0) {
            if ((size_t)n > OUTBUF - c->out_len) {
                c->dead = true; /* our requests are small; a huge frame is a bug */
                return;
            }
            memcpy(c->out + c->out_len, data, (size_t)n);
            c->out_len += (size_t)n;
        }
        if (c->out_len == 0) {
            conn_watch(cl, c, false);
            return;
        }
        ssize_t w = write(c->fd, c->out, c->out_len);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            conn_watch(cl, c, true);
            return;
        }
        if (w <= 0) {
            c->dead = true;
            return;
        }
        memmove(c->out, c->out + w, c->out_len - (size_t)w);
        c->out_len -= (size_t)w;
    }
}

static void conn_input(struct h2b_budget_client *cl, struct bconn *c)
{
    uint8_t buf[16384];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0 || nghttp2_session_mem_recv(c->sess, buf, (size_t)n) < 0) {
            c->dead = true;
            return;
        }
    }
    conn_pump(cl, c);
}

int h2b_budget_client_open(struct h2b_budget_client **out, const char *base_url,
                           const struct h2b_budget_request *req, uint32_t n, uint64_t timeout_ns,
                           struct h2b_diag *diag)
{
    struct h2b_url u;
    struct h2b_diag d = {0};
    (void)timeout_ns; /* connects on loopback complete or fail at once */
    if (h2b_url_parse(base_url, H2B_URL_ORIGIN, &u, &d) != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", base_url, d.message);
        return H2B_ERR_INVAL;
    }
    if (u.tls) {
        h2b_diag_at(diag, NULL, 0, 0, "budgets need an h2c (http://) target, not %s", base_url);
        return H2B_ERR_UNSUPPORTED;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(u.host, u.port_str, &hints, &ai) != 0 || !ai) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot resolve %s", u.host);
        return H2B_ERR_NOTFOUND;
    }
    struct h2b_budget_client *cl = calloc(1, sizeof(*cl));
    int rc = H2B_ERR_NOMEM;
    if (!cl || !(cl->conns = calloc(n, sizeof(*cl->conns))) || !client_callbacks())
        goto fail;
    say(cl->authority, sizeof(cl->authority), "%s", u.authority);
    say(cl->path, sizeof(cl->path), "%s", req->path);
    cl->grpc = req->grpc;
    cl->body = req->body;
    cl->body_len = req->body_len;
    if ((cl->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        rc = H2B_ERR_SYS;
        h2b_diag_at(diag, NULL, 0, 0, "epoll_create1: %s", strerror(errno));
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct bconn *c = &cl->conns[i];
        c->owner = cl;
        c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0 || connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            rc = H2B_ERR_SYS;
            h2b_diag_at(diag, NULL, 0, 0, "connection %u of %u to %s: %s", i + 1, n, cl->authority,
                        strerror(errno));
            if (c->fd >= 0)
                close(c->fd);
            c->fd = -1;
            cl->n = i;
            goto fail;
        }
        cl->n = i + 1;
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
        if (nghttp2_session_client_new(&c->sess, client_callbacks(), c) != 0)
            goto fail;
        /* Windows so large that no WINDOW_UPDATE is ever due during a phase: one sent between
         * rounds would reach the server alone or with the next requests, depending on timing,
         * and its read count would vary from run to run. */
        nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1u << 30)}};
        nghttp2_submit_settings(c->sess, NGHTTP2_FLAG_NONE, iv, 1);
        nghttp2_session_set_local_window_size(c->sess, NGHTTP2_FLAG_NONE, 0, (1 << 30));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(cl->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
            rc = H2B_ERR_SYS;
            goto fail;
        }
        conn_pump(cl, c);
    }
    freeaddrinfo(ai);
    *out = cl;
    return H2B_OK;
fail:
    freeaddrinfo(ai);
    if (rc == H2B_ERR_NOMEM)
        h2b_diag_at(diag, NULL, 0, 0, "out of memory");
    h2b_budget_client_del(cl);
    return rc;
}

/* Waits until no connection has a request in flight. */
static int wait_round(struct h2b_budget_client *cl, uint64_t deadline, uint64_t want,
                      struct h2b_diag *diag)
{
    for (;;) {
        bool busy = false;
        for (uint32_t i = 0; i < cl->n; i++) {
            if (cl->conns[i].dead) {
                h2b_diag_at(diag, NULL, 0, 0, "connection %u closed or failed during the phase",
                            i + 1);
                return H2B_ERR_CLOSED;
            }
            busy = busy || cl->conns[i].inflight > 0;
        }
        if (!busy)
            return H2B_OK;
        uint64_t now = h2b_clock_now_ns();
        if (now >= deadline) {
            h2b_diag_at(diag, NULL, 0, 0,
                        "%" PRIu64 " of %" PRIu64 " responses before the deadline", cl->done, want);
            return H2B_ERR_TIMEOUT;
        }
        struct epoll_event evs[64];
        int ms = (int)((deadline - now) / H2B_NS_PER_MS) + 1;
        int k = epoll_wait(cl->ep, evs, 64, ms > 1000 ? 1000 : ms);
        for (int e = 0; e < k; e++) {
            struct bconn *c = evs[e].data.ptr;
            if (evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                conn_input(cl, c);
            else
                conn_pump(cl, c);
        }
    }
}

/* ---- holding the target while a round is written ---- */

#define HOLD_IDLE_GAP_NS (1 * H2B_NS_PER_MS)
#define HOLD_MAX_NS (2 * H2B_NS_PER_SEC)

/* wait_idle: true once every thread of the target has slept through HOLD_IDLE_GAP_NS without
 * running (it is back in its event wait, with nothing left to do); false when the target cannot
 * be seen or is still busy at `end`.
 * hold_stop: waits for that, then stops the target's process group and waits until every thread
 * is stopped. False (the round then runs unheld) when the target cannot be seen or does not
 * settle within HOLD_MAX_NS. */
static bool wait_idle(pid_t pid, uint64_t end)
{
    uint64_t prev = UINT64_MAX;
    struct h2b_proc_threads t;
    for (;;) {
        if (h2b_proc_threads_look(pid, &t) != H2B_OK)
            return false;
        bool asleep = t.sleeping == t.threads;
        if (asleep && t.run_ns == prev)
            return true;
        prev = asleep ? t.run_ns : UINT64_MAX;
        if (h2b_clock_now_ns() > end)
            return false;
        h2b_clock_sleep_ns(HOLD_IDLE_GAP_NS);
    }
}

static bool hold_stop(pid_t pid)
{
    uint64_t end = h2b_clock_now_ns() + HOLD_MAX_NS;
    struct h2b_proc_threads t;
    if (!wait_idle(pid, end) || kill(-pid, SIGSTOP) != 0)
        return false;
    while (h2b_proc_threads_look(pid, &t) == H2B_OK && t.stopped < t.threads) {
        if (h2b_clock_now_ns() > end)
            break;
        h2b_clock_sleep_ns(20 * H2B_NS_PER_US);
    }
    return true; /* stopped or not, it must be continued */
}

void h2b_budget_client_hold(struct h2b_budget_client *cl, pid_t target, bool single)
{
    cl->hold = target;
    cl->hold_single = single;
}

/* Rounds in lockstep: every connection sends `streams` requests in one write, and the next
 * round starts when every response of this one is in. With several connections and a held
 * target (h2b_budget_client_hold) the target is stopped while the round is written: when it
 * continues, one event wait finds every connection ready, where otherwise it would wake for
 * the first, then for some of the rest, as the timing falls. The server then sees the same
 * batches in every run, so its reads, writes and instructions per request repeat exactly; a
 * free-running closed loop would batch by timing. */
int h2b_budget_client_phase(struct h2b_budget_client *cl, uint64_t per_conn, uint32_t streams,
                            uint64_t timeout_ns, uint64_t *done, struct h2b_diag *diag)
{
    uint64_t want = per_conn * cl->n;
    uint64_t deadline = h2b_clock_now_ns() + timeout_ns;
    uint32_t s = streams ? streams : 1;
    int rc = H2B_OK;
    cl->done = cl->bad = 0;
    for (uint64_t sent = 0; sent < per_conn && rc == H2B_OK;) {
        uint64_t round = per_conn - sent < s ? per_conn - sent : s;
        bool held = cl->hold > 0 && (cl->n > 1 || cl->hold_single) && hold_stop(cl->hold);
        for (uint32_t i = 0; i < cl->n; i++) {
            cl->conns[i].left = round;
            cl->conns[i].max_inflight = (uint32_t)round;
            conn_pump(cl, &cl->conns[i]);
        }
        if (held)
            kill(-cl->hold, SIGCONT);
        sent += round;
        rc = wait_round(cl, deadline, want, diag);
    }
    if (rc == H2B_OK && cl->bad) {
        h2b_diag_at(diag, NULL, 0, 0, "%" PRIu64 " of %" PRIu64 " requests failed: %s", cl->bad,
                    want, cl->bad_why);
        rc = H2B_ERR_PROTO;
    }
    *done = cl->done;
    return rc;
}

void h2b_budget_client_del(struct h2b_budget_client *cl)
{
    if (!cl)
        return;
    for (uint32_t i = 0; i < cl->n; i++) {
        nghttp2_session_del(cl->conns[i].sess);
        if (cl->conns[i].fd >= 0)
            close(cl->conns[i].fd);
    }
    if (cl->ep > 0)
        close(cl->ep);
    free(cl->conns);
    free(cl);
}

/* ---- values ---- */

void h2b_budget_values_null(struct h2b_budget_values *v, const char *reason)
{
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
        if (!v->have[m] && !v->why[m][0])
            say(v->why[m], sizeof(v->why[m]), "%s", reason);
    }
}

static void set_null(struct h2b_budget_values *v, enum h2b_budget_metric m, const char *reason)
{
    v->have[m] = false;
    say(v->why[m], sizeof(v->why[m]), "%s", reason);
}

static void set_value(struct h2b_budget_values *v, enum h2b_budget_metric m, double x)
{
    v->have[m] = true;
    v->v[m] = x;
    v->why[m][0] = '\0';
}

int h2b_budget_values_model(const struct h2b_budget_values *v, struct h2b_results_budgets *b)
{
    h2b_model_init(&h2b_results_budgets_model, b);
    b->base.present = true;
    int rc = H2B_OK;
    for (int m = 0; m < H2B_BUDGET_NMETRICS && rc == H2B_OK; m++) {
        h2b_results_budget_set(b, m, v->have[m] ? v->v[m] : NAN);
        if (!v->have[m])
            rc = h2b_model_note_add(&b->note, h2b_budget_metrics[m].key,
                                    v->why[m][0] ? v->why[m] : "not measured");
    }
    b->warmup_requests = (double)v->warmup_requests;
    b->measured_requests = (double)v->requests;
    if (rc == H2B_OK)
        rc = h2b_model_set_string(&b->instructions_source, "callgrind");
    if (rc == H2B_OK && v->alloc_source[0])
        rc = h2b_model_set_string(&b->alloc_source, v->alloc_source);
    if (rc == H2B_OK && v->instr_runs[0] > 0)
        rc = h2b_model_set_nums(&b->instructions_runs, v->instr_runs, 2);
    return rc;
}

bool h2b_budget_find_preload(const char *self, char *buf, size_t size)
{
    const char *env = getenv("H2B_BUDGET_PRELOAD");
    buf[0] = '\0';
    if (env && *env) {
        if (access(env, R_OK) != 0)
            return false;
        say(buf, size, "%s", env);
        return true;
    }
    char dir[4096];
    say(dir, sizeof(dir), "%s", self ? self : "");
    char *slash = strrchr(dir, '/');
    if (!slash)
        say(dir, sizeof(dir), ".");
    else
        *slash = '\0';
    static const char *const rel[] = {
        "../lib/h2bench-budget.so", "../lib/h2bench/h2bench-budget.so",
        "../lib64/h2bench/h2bench-budget.so", "../lib/x86_64-linux-gnu/h2bench/h2bench-budget.so"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        say(buf, size, "%s/%s", dir, rel[i]);
        char *real = realpath(buf, NULL);
        if (real && access(real, R_OK) == 0) {
            say(buf, size, "%s", real);
            free(real);
            return true;
        }
        free(real);
    }
    buf[0] = '\0';
    return false;
}

/* ---- the passes ---- */

static int start_instance(const struct h2b_budget_job *job, const char *sub,
                          const char *const *extra_env, const char *const *wrapper, double scale,
                          struct h2b_target **out, char *dir, size_t dir_size,
                          struct h2b_diag *diag)
{
    struct h2b_target_env env = job->env;
    say(dir, dir_size, "%s/%s", job->env.dir, sub);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot create %s", dir);
        return H2B_ERR_IO;
    }
    env.dir = dir;
    env.extra_env = extra_env;
    env.wrapper = wrapper;
    env.timeout_scale = scale;
    struct h2b_diag inner = {0};
    int rc = h2b_target_start(out, job->spec, &env, &inner);
    if (rc)
        h2b_diag_at(diag, NULL, 0, 0, "the target did not start for this pass: %s", inner.message);
    return rc;
}

static uint64_t per_conn(uint64_t total, uint32_t conns)
{
    uint64_t k = (total + conns - 1) / conns;
    return k ? k : 1;
}

/* Whether t's ready lines said "io: uring" (its send completions are events of their own; its
 * system calls are liburing's, not libc's). */
static bool on_uring(const struct h2b_target *t)
{
    const char *fell = NULL, *io = h2b_target_io(t, &fell);
    return io && strcmp(io, "uring") == 0;
}

/* The point's connections to t, its rounds held (h2b_budget_client_hold). */
static int open_held(struct h2b_budget_client **cl, const struct h2b_budget_job *job,
                     const struct h2b_target *t, uint32_t n, uint64_t timeout_ns,
                     struct h2b_diag *diag)
{
    int rc = h2b_budget_client_open(cl, h2b_target_url(t), &job->req, n, timeout_ns, diag);
    if (rc == H2B_OK)
        h2b_budget_client_hold(*cl, h2b_target_pid(t), on_uring(t));
    return rc;
}

/* RSS per connection on a fresh process: a warm-up connection of RSS_WARMUP_REQUESTS requests,
 * then R connections x 1 request. */
static void measure_rss(const struct h2b_budget_job *job, struct h2b_target *t,
                        const struct h2b_budget_reader *page, struct h2b_budget_values *v, size_t n)
{
    uint32_t r = job->budgets->rss_connections;
    struct h2b_diag why = {0};
    double kib = 0;
    bool ok = false;
    struct h2b_budget_client *cl = NULL;
    uint64_t done, rss0 = 0, rss1 = 0;
    struct h2b_budget_counts snap;
    if (r == 0) {
        h2b_diag_at(&why, NULL, 0, 0, "budgets.rss_connections is 0");
        goto out;
    }
    /* The warm-up's requests touch what the worker keeps for every connection in turn, so
     * that it is not charged to the connections: io_uring's provided receive buffers go round
     * one per receive (h2ref --io uring, 128 of 8 KiB: with a warm-up of 10 requests the 1,000
     * connections touched them, 0.6-0.9 KiB more per connection). */
    if (h2b_budget_client_open(&cl, h2b_target_url(t), &job->req, 1, PHASE_TIMEOUT_NS, &why) ||
        h2b_budget_client_phase(cl, RSS_WARMUP_REQUESTS, 1, PHASE_TIMEOUT_NS, &done, &why))
        goto out;
    h2b_budget_client_del(cl);
    cl = NULL;
    h2b_budget_page_settle(page, SETTLE_STABLE_NS, SETTLE_MAX_NS, &snap);
    if (h2b_target_rss_kib(t, &rss0) != H2B_OK) {
        h2b_diag_at(&why, NULL, 0, 0, "cannot read the target's VmRSS");
        goto out;
    }
    if (h2b_budget_client_open(&cl, h2b_target_url(t), &job->req, r, PHASE_TIMEOUT_NS, &why) ||
        h2b_budget_client_phase(cl, 1, 1, PHASE_TIMEOUT_NS, &done, &why))
        goto out;
    h2b_budget_page_settle(page, SETTLE_STABLE_NS, SETTLE_MAX_NS, &snap);
    if (h2b_target_rss_kib(t, &rss1) != H2B_OK) {
        h2b_diag_at(&why, NULL, 0, 0, "cannot read the target's VmRSS");
        goto out;
    }
    kib = ((double)rss1 - (double)rss0) / (double)r;
    ok = true;
out:
    h2b_budget_client_del(cl);
    for (size_t i = 0; i < n; i++) {
        if (ok)
            set_value(&v[i], H2B_BUDGET_RSS_PER_CONN, kib);
        else
            set_null(&v[i], H2B_BUDGET_RSS_PER_CONN, why.message);
    }
}

static void counts_pass(const struct h2b_budget_job *job, struct h2b_budget_values *v, size_t n,
                        FILE *progress)
{
    char dir[600], page_path[700], env_preload[800], env_page[800];
    struct h2b_diag why = {0};
    struct h2b_budget_reader *page = NULL;
    struct h2b_target *t = NULL;
    static const enum h2b_budget_metric counted[] = {H2B_BUDGET_ALLOCS, H2B_BUDGET_BYTES,
                                                     H2B_BUDGET_READS, H2B_BUDGET_WRITES,
                                                     H2B_BUDGET_WRITES_PER_READ};
    if (!job->preload) {
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < sizeof(counted) / sizeof(counted[0]); k++)
                set_null(&v[i], counted[k],
                         "h2bench-budget.so not found (build it, or set H2B_BUDGET_PRELOAD)");
        h2b_diag_at(&why, NULL, 0, 0, "h2bench-budget.so not found");
        /* RSS needs no preload: measure it on a plain instance. */
    }
    say(dir, sizeof(dir), "%s/counts", job->env.dir);
    mkdir(dir, 0755);
    say(page_path, sizeof(page_path), "%s/budget.page", dir);
    if (h2b_budget_page_create(page_path, &page) != H2B_OK) {
        for (size_t i = 0; i < n; i++)
            h2b_budget_values_null(&v[i], "cannot create the budget page file");
        return;
    }
    say(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", job->preload ? job->preload : "");
    say(env_page, sizeof(env_page), "%s=%s", H2B_BUDGET_ENV, page_path);
    const char *extra[] = {env_preload, env_page, NULL};
    if (progress)
        fprintf(progress, "budgets %s: counting pass (preload)\n", job->spec->name);
    if (start_instance(job, "counts", job->preload ? extra : NULL, NULL, 1, &t, dir, sizeof(dir),
                       &why)) {
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < sizeof(counted) / sizeof(counted[0]); k++)
                set_null(&v[i], counted[k], why.message);
        for (size_t i = 0; i < n; i++)
            set_null(&v[i], H2B_BUDGET_RSS_PER_CONN, why.message);
        h2b_budget_page_del(page);
        return;
    }
    measure_rss(job, t, page, v, n);

    /* Who counts: read after start-up, when every constructor has run. */
    uint32_t alloc_src = 0, io_src = 0;
    int32_t pid = 0;
    struct h2b_diag alloc = {0};
    char io_why[256] = "";
    h2b_budget_page_status(page, &alloc_src, &io_src, &pid, &alloc);
    if (job->preload && pid == 0) {
        const char *prog = h2b_target_program(t);
        if (h2b_budget_is_static_elf(prog))
            h2b_diag_at(
                &alloc, NULL, 0, 0,
                "%s is statically linked: no dynamic loader, so LD_PRELOAD is never honoured",
                prog);
        else
            h2b_diag_at(
                &alloc, NULL, 0, 0,
                "the preload never loaded into %s (setuid, or LD_PRELOAD dropped on the way)",
                prog);
        say(io_why, sizeof(io_why), "%s", alloc.message);
    } else if (job->preload && io_src == 0) {
        say(io_why, sizeof(io_why), "the preload did not attach to the budget page");
    } else if (job->preload && on_uring(t)) {
        say(io_why, sizeof(io_why),
            "the target moves its bytes through io_uring, whose system calls liburing makes "
            "itself, not through libc, so the preload cannot count them "
            "(scripts/bench/syscalls-per-request.sh counts them with strace)");
    }
    for (size_t i = 0; i < n && job->preload; i++) {
        struct h2b_budget_values *p = &v[i];
        say(p->alloc_source, sizeof(p->alloc_source), "%s",
            alloc_src == H2B_BUDGET_ALLOC_PRELOAD      ? "preload"
            : alloc_src == H2B_BUDGET_ALLOC_INTERPOSER ? "interposer"
                                                       : "");
        struct h2b_budget_client *cl = NULL;
        struct h2b_budget_counts s1, s2;
        uint64_t n1 = per_conn(job->budgets->warmup_requests, p->connections);
        uint64_t n2 = per_conn(job->budgets->requests, p->connections);
        uint64_t done1 = 0, done2 = 0;
        struct h2b_diag pwhy = {0};
        if (progress)
            fprintf(progress, "budgets %s %ux%u: %" PRIu64 " + %" PRIu64 " requests\n",
                    job->spec->name, p->connections, p->streams, n1 * p->connections,
                    n2 * p->connections);
        struct h2b_diag alive = {0};
        if (!h2b_target_alive(t, &alive)) {
            h2b_diag_at(&pwhy, NULL, 0, 0, "target not running: %s", alive.message);
        } else if (open_held(&cl, job, t, p->connections, PHASE_TIMEOUT_NS, &pwhy) == H2B_OK &&
                   h2b_budget_client_phase(cl, n1, p->streams, PHASE_TIMEOUT_NS, &done1, &pwhy) ==
                       H2B_OK) {
            bool st1 = h2b_budget_page_settle(page, SETTLE_STABLE_NS, SETTLE_MAX_NS, &s1);
            if (h2b_budget_client_phase(cl, n2, p->streams, PHASE_TIMEOUT_NS, &done2, &pwhy) ==
                H2B_OK) {
                bool st2 = h2b_budget_page_settle(page, SETTLE_STABLE_NS, SETTLE_MAX_NS, &s2);
                if (!st1 || !st2)
                    h2b_diag_at(&pwhy, NULL, 0, 0,
                                "the target's counters never stood still for 100 ms between phases "
                                "(it works while idle), so the phase difference is not exact");
            }
        }
        h2b_budget_client_del(cl);
        p->warmup_requests = n1 * p->connections;
        p->requests = done2;
        if (pwhy.message[0]) {
            for (size_t k = 0; k < sizeof(counted) / sizeof(counted[0]); k++)
                set_null(p, counted[k], pwhy.message);
            continue;
        }
        double d = (double)done2;
        if (alloc_src != H2B_BUDGET_ALLOC_NONE) {
            set_value(p, H2B_BUDGET_ALLOCS, (double)(s2.allocs - s1.allocs) / d);
            set_value(p, H2B_BUDGET_BYTES, (double)(s2.bytes - s1.bytes) / d);
        } else {
            set_null(p, H2B_BUDGET_ALLOCS, alloc.message);
            set_null(p, H2B_BUDGET_BYTES, alloc.message);
        }
        if (io_src && !io_why[0]) {
            uint64_t dr = s2.reads_data - s1.reads_data;
            set_value(p, H2B_BUDGET_READS, (double)(s2.reads - s1.reads) / d);
            set_value(p, H2B_BUDGET_WRITES, (double)(s2.writes - s1.writes) / d);
            if (dr)
                set_value(p, H2B_BUDGET_WRITES_PER_READ, (double)(s2.writes - s1.writes) / dr);
            else
                set_null(p, H2B_BUDGET_WRITES_PER_READ, "no read returned data");
        } else {
            set_null(p, H2B_BUDGET_READS, io_why);
            set_null(p, H2B_BUDGET_WRITES, io_why);
            set_null(p, H2B_BUDGET_WRITES_PER_READ, io_why);
        }
    }
    h2b_target_del(t);
    h2b_budget_page_del(page);
}

/* Runs argv to completion (short tools: vgdb); true on exit status 0. */
static bool run_tool(char *const argv[], const char *log)
{
    struct h2b_proc *p = NULL;
    struct h2b_proc_opts o = {
        .out = H2B_PROC_FILE, .out_path = log, .err_to_out = true, .kill_on_parent_exit = true};
    int status = 0;
    if (h2b_proc_spawn(&p, argv, &o) != H2B_OK)
        return false;
    int rc = h2b_proc_wait(p, 60 * H2B_NS_PER_SEC, &status);
    h2b_proc_del(p);
    return rc == H2B_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The pause before instrumentation goes on or off: until the target is back in its event wait
 * with nothing left to do (the frees and the EAGAIN read the last response set off), or
 * TAIL_NS when its threads cannot be seen or are still busy after TAIL_MAX_NS. */
static void wait_tail(pid_t pid)
{
    if (!wait_idle(pid, h2b_clock_now_ns() + TAIL_MAX_NS))
        h2b_clock_sleep_ns(TAIL_NS);
}

/* The "totals:" line of a callgrind dump. */
static bool read_totals(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool ok = false;
    if (!f)
        return false;
    while (!ok && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "totals:", 7) == 0)
            ok = sscanf(line + 7, "%" SCNu64, out) == 1;
    }
    fclose(f);
    return ok;
}

static bool have_program(const char *name)
{
    char buf[4096];
    return h2b_find_program(name, buf, sizeof(buf)) == H2B_OK;
}

static void instructions_pass(const struct h2b_budget_job *job, struct h2b_budget_values *v,
                              size_t n, FILE *progress)
{
    char dir[600], out_opt[800], pid[32], tool_log[700], dump[800];
    struct h2b_diag why = {0};
    struct h2b_target *t = NULL;
    if (!job->budgets->instructions) {
        for (size_t i = 0; i < n; i++)
            set_null(&v[i], H2B_BUDGET_INSTRUCTIONS, "budgets.instructions is false");
        return;
    }
    if (!have_program("valgrind") || !have_program("vgdb")) {
        for (size_t i = 0; i < n; i++)
            set_null(&v[i], H2B_BUDGET_INSTRUCTIONS,
                     "valgrind/vgdb not installed (apt-get install valgrind)");
        return;
    }
    say(dir, sizeof(dir), "%s/instructions", job->env.dir);
    say(out_opt, sizeof(out_opt), "--callgrind-out-file=%s/callgrind.out", dir);
    say(tool_log, sizeof(tool_log), "%s/vgdb.log", dir);
    const char *wrapper[] = {"valgrind", "--tool=callgrind", "--instr-atstart=no", out_opt, NULL};
    if (progress)
        fprintf(progress, "budgets %s: instruction pass (callgrind)\n", job->spec->name);
    if (start_instance(job, "instructions", NULL, wrapper, 10, &t, dir, sizeof(dir), &why)) {
        for (size_t i = 0; i < n; i++)
            set_null(&v[i], H2B_BUDGET_INSTRUCTIONS, why.message);
        return;
    }
    pid_t tpid = h2b_target_pid(t);
    say(pid, sizeof(pid), "--pid=%d", (int)tpid);
    /* vgdb itself, not callgrind_control (a Perl script that lists the gdbservers and then runs
     * vgdb once per command: 0.26 s a call here). --max-invoke-ms=1: the target sits blocked in
     * its event wait, and vgdb would otherwise wait 100 ms before it wakes the gdbserver with
     * ptrace, as callgrind_control's vgdb does; the wake is the same either way. Off and dump
     * go in one call. */
    char *on[] = {"vgdb", pid, "--max-invoke-ms=1", "instrumentation", "on", NULL};
    char *offdump[] = {"vgdb", pid, "--max-invoke-ms=1", "instrumentation", "off", "-c",
                       "dump", NULL};
    unsigned dumps = 0;
    for (size_t i = 0; i < n; i++) {
        struct h2b_budget_values *p = &v[i];
        struct h2b_budget_client *cl = NULL;
        uint64_t n1 = per_conn(job->budgets->warmup_requests, p->connections);
        uint64_t n2 = per_conn(job->budgets->requests, p->connections);
        uint64_t done = 0, instr[2] = {0, 0}, got[2] = {0, 0};
        struct h2b_diag pwhy = {0};
        if (open_held(&cl, job, t, p->connections, VALGRIND_PHASE_TIMEOUT_NS, &pwhy) != H2B_OK ||
            h2b_budget_client_phase(cl, n1, p->streams, VALGRIND_PHASE_TIMEOUT_NS, &done, &pwhy) !=
                H2B_OK ||
            h2b_budget_client_phase(cl, n2, p->streams, VALGRIND_PHASE_TIMEOUT_NS, &done, &pwhy) !=
                H2B_OK)
            goto point_done;
        for (int run = 0; run < 2; run++) {
            wait_tail(tpid);
            if (!run_tool(on, tool_log)) {
                h2b_diag_at(&pwhy, NULL, 0, 0, "vgdb instrumentation on failed (see %s)", tool_log);
                goto point_done;
            }
            int rc = h2b_budget_client_phase(cl, n2, p->streams, VALGRIND_PHASE_TIMEOUT_NS,
                                             &got[run], &pwhy);
            wait_tail(tpid);
            bool dump_ok = run_tool(offdump, tool_log);
            dumps += dump_ok;
            if (rc != H2B_OK)
                goto point_done;
            say(dump, sizeof(dump), "%s/callgrind.out.%u", dir, dumps);
            if (!dump_ok || !read_totals(dump, &instr[run])) {
                h2b_diag_at(&pwhy, NULL, 0, 0, "no callgrind totals in %s (see %s)", dump,
                            tool_log);
                goto point_done;
            }
        }
    point_done:
        h2b_budget_client_del(cl);
        if (pwhy.message[0]) {
            set_null(p, H2B_BUDGET_INSTRUCTIONS, pwhy.message);
            continue;
        }
        double a = (double)instr[0] / (double)got[0], b = (double)instr[1] / (double)got[1];
        p->instr_runs[0] = a;
        p->instr_runs[1] = b;
        double spread = fabs(a - b) / (a > b ? a : b);
        if (spread > INSTR_TOLERANCE) {
            char w[256];
            say(w, sizeof(w),
                "two callgrind runs disagree by %.3f %% (%.1f vs %.1f per request), more than "
                "%.1f %%",
                spread * 100, a, b, INSTR_TOLERANCE * 100);
            set_null(p, H2B_BUDGET_INSTRUCTIONS, w);
        } else {
            set_value(p, H2B_BUDGET_INSTRUCTIONS, (a + b) / 2);
        }
    }
    h2b_target_del(t);
}

void h2b_budget_measure(const struct h2b_budget_job *job, struct h2b_budget_values *points,
                        size_t n, FILE *progress)
{
    for (size_t i = 0; i < n; i++) {
        memset(points[i].have, 0, sizeof(points[i].have));
        for (int m = 0; m < H2B_BUDGET_NMETRICS; m++)
            points[i].why[m][0] = '\0';
    }
    if (job->spec->kind == H2B_TARGET_URL) {
        for (size_t i = 0; i < n; i++)
            h2b_budget_values_null(&points[i],
                                   "url target: not started by the runner, so it cannot be "
                                   "preloaded or run under callgrind");
        return;
    }
#ifdef H2B_SANITIZED
    if (job->spec->kind == H2B_TARGET_BUNDLED) {
        /* h2bench serve is this executable: its sanitizer owns malloc, refuses a preload that
         * does not come first, and does not run under valgrind. RSS is still measured. */
        static const char why[] = "this h2bench is built with sanitizers: their runtime owns "
                                  "malloc, refuses LD_PRELOAD and valgrind (use a Release build)";
        struct h2b_budget_job plain = *job;
        plain.preload = NULL;
        counts_pass(&plain, points, n, progress);
        for (size_t i = 0; i < n; i++)
            for (int m = 0; m < H2B_BUDGET_NMETRICS; m++)
                if (m != H2B_BUDGET_RSS_PER_CONN)
                    set_null(&points[i], (enum h2b_budget_metric)m, why);
        return;
    }
#endif
    counts_pass(job, points, n, progress);
    instructions_pass(job, points, n, progress);
}
