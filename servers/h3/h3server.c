/*
 * h3server.c - the HTTP/3 listener: one thread, one UDP socket, every QUIC connection on it.
 *
 * Approach:
 * - QUIC is ngtcp2 0.12 with its GnuTLS crypto helpers, HTTP/3 and QPACK are nghttp3 0.8 (the
 *   versions Debian 12 ships). The loop is epoll on the UDP socket and an eventfd (stop): read a
 *   batch of datagrams with recvmmsg, route each by its destination connection ID through an
 *   open-addressing table, run due timers (ngtcp2's expiry, /delay responses), then write every
 *   connection that was touched, at most one send quantum per turn, so one bulk transfer cannot
 *   starve the others. A connection's packets of one size leave in one sendmsg with UDP GSO
 *   (UDP_SEGMENT): measured on a 1 GiB GET, half the server CPU and about twice the throughput
 *   of one sendto per packet (docs/protocols.md).
 * - New connections: ngtcp2_accept validates the Initial; with retry on (the default) a client
 *   without a token gets a Retry carrying an encrypted token bound to its address, and only an
 *   Initial with a valid token creates state. A flood of spoofed Initials therefore costs one
 *   stateless Retry each and no memory. Over max_connections a client gets a stateless
 *   CONNECTION_CLOSE(CONNECTION_REFUSED).
 * - Flow control: request bodies are credited back to the peer as soon as they are read, except
 *   on /echo, whose bytes are credited only when the peer acknowledges them in the response:
 *   each /echo stream holds at most stream_window bytes, and the window never grows
 *   (max_stream_window = initial window), so that bound is exact. The ring is counted whole
 *   when the /echo starts, against echo_conn_max and the server-wide memory budget (one count
 *   with the HTTP/2 workers); past either the request is answered 503 and its body dropped.
 *   Rejected: a ring allocated on first data and not counted (issue 29: 256 rings per
 *   connection, 16 MiB per connection once the connection window filled, with no server-wide
 *   bound); RESET_STREAM(H3_REQUEST_REJECTED) instead of 503 (equally allowed, but a 503 is
 *   what the client's tools report plainly, and the body is read anyway).
 * - Bodies are never copied: /bytes/N points nghttp3 at a static pattern (byte i = i & 0xff),
 *   /echo at a per-stream ring that is freed with the stream.
 * - Garbage (not a QUIC header, unknown connection ID in a short header, bad token) is counted
 *   and dropped; a connection error sends CONNECTION_CLOSE and frees the connection at once.
 * Rejected: one socket per worker thread with SO_REUSEPORT (a 4-tuple hash splits QUIC's
 * connections unevenly and breaks on migration without a BPF steering program); a closing
 * period that keeps state after an error (it buys retransmitted CONNECTION_CLOSEs and costs
 * memory an attacker controls).
 */
#include "h3/h3server.h"

#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/heap.h"
#include "core/list.h"
#include "core/json.h"
#include "core/h3quic.h"
#include "core/h3tls.h"
#include "h2ref/handlers.h" /* the routes and their responses, shared with h2ref */
#include "h2ref/stats.h"    /* h2ref's counters, not core's stats.h */

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SCID_LEN 18
#define RX_BATCH 32
#define RX_DGRAM 4096 /* larger datagrams are truncated and dropped */
#define RX_PER_TURN 256
#define TX_MAX_PKTS 64 /* per connection per turn */
#define MAX_CIDS 16    /* connection IDs one connection is reachable by */
#define DATA_MAX 16384
#define STATS_CAP 4096
#define SOCKBUF (4 * 1024 * 1024)
#define GSO_MAX_BYTES 61440 /* one UDP GSO send stays under the 64 KiB datagram limit */

enum body { B_NONE, B_MEM, B_PATTERN, B_RING };

enum counter {
    C_CONNS_OPEN,
    C_CONNS_TOTAL,
    C_HANDSHAKES,
    C_STREAMS_TOTAL,
    C_REQUESTS,
    C_DGRAMS_IN,
    C_DGRAMS_OUT,
    C_BYTES_IN,
    C_BYTES_OUT,
    C_RETRY_SENT,
    C_TOKEN_BAD,
    C_REFUSED,
    C_GARBAGE,
    C_UNKNOWN_CID,
    C_VN_SENT,
    C_IDLE_CLOSED,
    C_CONN_ERRORS,
    C_SEND_DROPS,
    C_GUARD_MEMORY,
    C_COUNT
};

static const char *const counter_names[C_COUNT] = {
    "conns_open",    "conns_total",   "handshakes", "streams_total", "requests",
    "datagrams_in",  "datagrams_out", "bytes_in",   "bytes_out",     "retry_sent",
    "token_invalid", "refused",       "garbage",    "unknown_cid",   "vn_sent",
    "idle_closed",   "conn_errors",   "send_drops", "guard_memory",
};

struct cidkey {
    uint8_t len;
    uint8_t data[NGTCP2_MAX_CIDLEN];
};

struct h3conn;

struct cidslot {
    struct cidkey k;
    struct h3conn *c; /* NULL: empty */
};

struct h3stream {
    struct h2b_list link;       /* the connection's streams */
    struct h2b_heap_node dnode; /* in the server's /delay heap, keyed by the deadline (ns) */
    struct h3conn *c;
    int64_t id;
    uint8_t route, method, body; /* enum h2b_route, enum h2b_method, enum body */
    bool responded, eof_in, blocked, delayed;
    uint64_t arg, len, off, rx, deadline;
    const uint8_t *mem;
    uint8_t *ring; /* /echo: stream_window bytes; offsets below grow monotonically */
    uint64_t r_acked, r_sent, r_tail;
    char *heap; /* /stats body */
    char status[4], cl[24], text[H2B_TEXT_MAX];
};

struct h3conn {
    struct h2b_h3quic b; /* first: ngtcp2's and nghttp3's user_data is the h3conn */
    struct h2b_h3_server *s;
    struct sockaddr_storage remote;
    socklen_t remotelen;
    struct cidkey cids[MAX_CIDS];
    unsigned ncids;
    struct h2b_list link;    /* all connections */
    struct h2b_list tlink;   /* the touched list, while linked (touched this turn) */
    struct h2b_list streams; /* of h3stream.link */
    uint32_t nstreams;
    uint64_t echo_bytes; /* /echo rings this connection holds (cfg.echo_conn_max) */
    bool dead, shut;
};

struct h2b_h3_server {
    struct h2b_h3_server_config cfg;
    int fd, evfd, epfd;
    pthread_t thread;
    bool started;
    gnutls_certificate_credentials_t cred;
    uint8_t secret[32];
    uint64_t seed;
    struct sockaddr_storage local;
    socklen_t locallen;
    struct cidslot *map;
    size_t mapmask;
    size_t mapn;           /* slots in use */
    struct h2b_list conns; /* of h3conn.link */
    uint32_t nconns;
    struct h2b_list touched; /* of h3conn.tlink, newest first */
    struct h2b_heap delays;  /* /delay streams by deadline (core/heap.h, as the HTTP/2 engines) */
    _Atomic uint64_t *used;  /* /echo ring bytes held against cfg.memory_budget: the count shared
                              * with the HTTP/2 workers, or &own_used */
    _Atomic uint64_t own_used;
    bool blocked; /* the socket said EAGAIN: wait for EPOLLOUT */
    bool draining;
    uint64_t drain_deadline;
    uint64_t now;
    uint64_t last_trim;
    char date[40];
    time_t date_sec;
    uint64_t c[C_COUNT];
    uint8_t *rxbuf;
    uint8_t tx[NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE > 1500 ? NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE : 1500];
    bool no_gso; /* UDP_SEGMENT failed once: plain sendto */
    uint8_t txb[GSO_MAX_BYTES + 1500 +
                NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE]; /* one GSO batch of a connection's packets */
};

_Static_assert(DATA_MAX <= H2B_PATTERN_STEP, "a vector's pattern run is in the array");

/* ---- connection ID table (linear probing, backward-shift deletion) ---- */

static size_t cid_hash(const struct h2b_h3_server *s, const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ s->seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return (size_t)(h ^ (h >> 29));
}

static bool cid_eq(const struct cidkey *k, const uint8_t *p, size_t n)
{
    return k->len == n && memcmp(k->data, p, n) == 0;
}

static struct h3conn *cid_find(const struct h2b_h3_server *s, const uint8_t *p, size_t n)
{
    for (size_t i = cid_hash(s, p, n) & s->mapmask;; i = (i + 1) & s->mapmask) {
        const struct cidslot *e = &s->map[i];
        if (!e->c)
            return NULL;
        if (cid_eq(&e->k, p, n))
            return e->c;
    }
}

static bool cid_add(struct h3conn *c, const uint8_t *p, size_t n)
{
    struct h2b_h3_server *s = c->s;
    if (c->ncids == MAX_CIDS || n > NGTCP2_MAX_CIDLEN || s->mapn >= (s->mapmask + 1) / 4 * 3 ||
        cid_find(s, p, n))
        return false; /* the table never fills: probing always ends at an empty slot */
    size_t i = cid_hash(s, p, n) & s->mapmask;
    while (s->map[i].c)
        i = (i + 1) & s->mapmask;
    s->map[i].c = c;
    s->map[i].k.len = (uint8_t)n;
    memcpy(s->map[i].k.data, p, n);
    s->mapn++;
    c->cids[c->ncids].len = (uint8_t)n;
    memcpy(c->cids[c->ncids].data, p, n);
    c->ncids++;
    return true;
}

static void cid_remove_slot(struct h2b_h3_server *s, size_t i)
{
    s->map[i].c = NULL;
    s->mapn--;
    for (size_t j = (i + 1) & s->mapmask; s->map[j].c; j = (j + 1) & s->mapmask) {
        size_t home = cid_hash(s, s->map[j].k.data, s->map[j].k.len) & s->mapmask;
        /* move j back into the hole i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            s->map[i] = s->map[j];
            s->map[j].c = NULL;
            i = j;
        }
    }
}

static void cid_del(struct h3conn *c, const uint8_t *p, size_t n)
{
    struct h2b_h3_server *s = c->s;
    for (size_t i = cid_hash(s, p, n) & s->mapmask; s->map[i].c; i = (i + 1) & s->mapmask) {
        if (s->map[i].c == c && cid_eq(&s->map[i].k, p, n)) {
            cid_remove_slot(s, i);
            break;
        }
    }
    for (unsigned k = 0; k < c->ncids; k++) {
        if (cid_eq(&c->cids[k], p, n)) {
            c->cids[k] = c->cids[--c->ncids];
            break;
        }
    }
}

/* ---- small helpers ---- */

static void touch(struct h3conn *c)
{
    if (!h2b_list_linked(&c->tlink) && !c->dead)
        h2b_list_insert_head(&c->s->touched, &c->tlink);
}

static void update_date(struct h2b_h3_server *s)
{
    time_t t = time(NULL);
    if (t == s->date_sec)
        return;
    s->date_sec = t;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(s->date, sizeof s->date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static bool is_upload(const struct h3stream *st)
{
    return h2b_method_upload(st->method);
}

/* ---- streams ---- */

/* Gives st its /echo ring (stream_window bytes), counted against the connection's echo_conn_max
 * and the server-wide memory budget; false (no ring, nothing counted) past either or without
 * memory. The whole ring is counted at once: the peer can fill it before the first byte is
 * acknowledged, so a budget that counted only what is written would refuse late. The HTTP/2
 * workers add to the shared count in 1 MiB steps (h2ref/wmem.h) and one ring is 256 KiB, so an
 * atomic add per /echo stream costs as little here. */
static bool ring_take(struct h3stream *st)
{
    struct h3conn *c = st->c;
    struct h2b_h3_server *s = c->s;
    uint64_t cap = s->cfg.stream_window;
    if (c->echo_bytes + cap > s->cfg.echo_conn_max)
        return false;
    uint64_t was = atomic_fetch_add_explicit(s->used, cap, memory_order_relaxed);
    if ((s->cfg.memory_budget && was + cap > s->cfg.memory_budget) || !(st->ring = malloc(cap))) {
        atomic_fetch_sub_explicit(s->used, cap, memory_order_relaxed);
        return false;
    }
    c->echo_bytes += cap;
    return true;
}

static void ring_give(struct h3stream *st)
{
    if (!st->ring)
        return;
    struct h2b_h3_server *s = st->c->s;
    uint64_t cap = s->cfg.stream_window;
    free(st->ring);
    st->ring = NULL;
    st->c->echo_bytes -= cap;
    atomic_fetch_sub_explicit(s->used, cap, memory_order_relaxed);
}

static void delay_unlink(struct h2b_h3_server *s, struct h3stream *st)
{
    if (!st->delayed)
        return;
    h2b_heap_remove(&s->delays, &st->dnode);
    st->delayed = false;
}

/* O(log n) whatever the deadlines: a sorted list walked from its head cost O(n) per insert,
 * quadratic for a burst of /delay requests (issue 29: 16000 in flight took 4.75 times the
 * server CPU of 8000). False without memory. */
static bool delay_insert(struct h2b_h3_server *s, struct h3stream *st)
{
    if (h2b_heap_push(&s->delays, &st->dnode, st->deadline) != H2B_OK)
        return false;
    st->delayed = true;
    return true;
}

static void stream_free(struct h3stream *st)
{
    struct h3conn *c = st->c;
    delay_unlink(c->s, st);
    h2b_list_unlink(&st->link);
    c->nstreams--;
    ring_give(st);
    free(st->heap);
    free(st);
}

static nghttp3_ssize read_body(nghttp3_conn *h, int64_t id, nghttp3_vec *vec, size_t veccnt,
                               uint32_t *flags, void *ud, void *sud)
{
    (void)h, (void)id, (void)ud;
    struct h3stream *st = sud;
    if (!st || veccnt == 0)
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    size_t n = 0;
    switch (st->body) {
    case B_MEM:
        if (st->off < st->len) {
            vec[n].base = (uint8_t *)(uintptr_t)(st->mem + st->off);
            vec[n++].len = (size_t)(st->len - st->off);
            st->off = st->len;
        }
        *flags |= NGHTTP3_DATA_FLAG_EOF;
        return (nghttp3_ssize)n;
    case B_PATTERN:
        while (n < veccnt && n < 4 && st->off < st->len) {
            uint64_t rem = st->len - st->off;
            size_t k = rem < DATA_MAX ? (size_t)rem : DATA_MAX;
            vec[n].base = (uint8_t *)(uintptr_t)h2b_pattern_at(st->off);
            vec[n++].len = k;
            st->off += k;
        }
        if (st->off == st->len)
            *flags |= NGHTTP3_DATA_FLAG_EOF;
        return (nghttp3_ssize)n;
    case B_RING: {
        uint64_t cap = st->c->s->cfg.stream_window;
        while (n < veccnt && n < 2 && st->r_sent < st->r_tail) {
            size_t at = (size_t)(st->r_sent % cap);
            uint64_t k = st->r_tail - st->r_sent;
            if (k > cap - at)
                k = cap - at;
            vec[n].base = st->ring + at;
            vec[n++].len = (size_t)k;
            st->r_sent += k;
        }
        if (st->eof_in && st->r_sent == st->r_tail) {
            *flags |= NGHTTP3_DATA_FLAG_EOF;
            return (nghttp3_ssize)n;
        }
        if (n == 0) {
            st->blocked = true;
            return NGHTTP3_ERR_WOULDBLOCK;
        }
        return (nghttp3_ssize)n;
    }
    default:
        *flags |= NGHTTP3_DATA_FLAG_EOF;
        return 0;
    }
}

#define NV(n, v, vl, f)                                                                            \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), (f)                                   \
    }
#define NOCOPY (NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE)

static int stats_json(struct h2b_h3_server *s, char *buf, size_t cap)
{
    size_t off = 0;
    int n = snprintf(buf, cap, "{\"protocol\":\"h3\"");
    if (n < 0 || (size_t)n >= cap)
        return H2B_ERR_RANGE;
    off = (size_t)n;
    for (int i = 0; i < C_COUNT; i++) {
        n = snprintf(buf + off, cap - off, ",\"%s\":%llu", counter_names[i],
                     (unsigned long long)s->c[i]);
        if (n < 0 || (size_t)n >= cap - off)
            return H2B_ERR_RANGE;
        off += (size_t)n;
    }
    n = snprintf(buf + off, cap - off, ",\"rss_kib\":%llu}\n",
                 (unsigned long long)h2b_stats_rss_kib());
    if (n < 0 || (size_t)n >= cap - off)
        return H2B_ERR_RANGE;
    return (int)(off + (size_t)n);
}

/* Submits st's response: what to answer is handlers.c's (as for h2ref); the body vectors, the
 * /delay list and the /stats text are this server's. */
static void respond(struct h3stream *st)
{
    struct h3conn *c = st->c;
    struct h2b_h3_server *s = c->s;
    struct h2b_request rq = {
        .route = st->route, .method = st->method, .arg = st->arg, .rx = st->rx};
    struct h2b_response rs;
    h2b_handle(&rq, st->text, &rs);
    if (rs.body == H2B_BODY_DELAY) {
        if (!st->delayed && st->deadline == 0) {
            st->deadline = s->now + st->arg * H2B_NS_PER_MS;
            if (delay_insert(s, st))
                return;
            h2b_response_status(&rs, 503); /* no memory for the timer: answered now */
        } else {
            rq.route = st->route = H2B_ROUTE_HELLO; /* the delay is over */
            h2b_handle(&rq, st->text, &rs);
        }
    } else if (rs.body == H2B_BODY_ECHO && !st->eof_in && !ring_take(st)) {
        s->c[C_GUARD_MEMORY]++;
        h2b_response_status(&rs, 503); /* over a memory budget: nothing echoed, body dropped */
    } else if (rs.body == H2B_BODY_STATS) {
        st->heap = malloc(STATS_CAP);
        int n = st->heap ? stats_json(s, st->heap, STATS_CAP) : H2B_ERR_NOMEM;
        if (n < 0) {
            h2b_response_status(&rs, 500);
        } else {
            rs.mem = (const uint8_t *)st->heap;
            rs.len = (uint64_t)n;
        }
    }
    switch (rs.body) {
    case H2B_BODY_MEM:
    case H2B_BODY_STATS:
        st->body = B_MEM;
        break;
    case H2B_BODY_PATTERN:
        st->body = B_PATTERN;
        break;
    case H2B_BODY_ECHO:
        st->body = B_RING;
        break;
    default:
        st->body = B_NONE;
        break;
    }
    if (rs.headers_only)
        st->body = B_NONE;
    st->mem = rs.mem;
    st->len = rs.len;
    st->off = 0;
    h2b_status_digits(st->status, rs.status);
    update_date(s);
    nghttp3_nv nva[5] = {
        NV(":status", st->status, 3, NOCOPY),
        NV("server", h2b_server_name, H2B_SERVER_NAME_LEN, NOCOPY),
        NV("date", s->date, strlen(s->date), NGHTTP3_NV_FLAG_NO_COPY_NAME),
        NV("content-type", rs.ct, rs.ct_len, NOCOPY),
        NV("content-length", st->cl, 0, NOCOPY),
    };
    size_t nnv = 4;
    if (rs.has_cl) {
        nva[4].valuelen = h2b_fmt_u64(st->cl, st->len);
        nnv = 5;
    }
    bool body = st->body != B_NONE && (st->len > 0 || st->body == B_RING);
    nghttp3_data_reader dr = {.read_data = read_body};
    st->responded = true;
    int rv = nghttp3_conn_submit_response(c->b.h, st->id, nva, nnv, body ? &dr : NULL);
    if (rv != 0) {
        h2b_h3quic_app_error(&c->b, rv);
        return;
    }
    s->c[C_REQUESTS]++;
    touch(c);
}

/* ---- nghttp3 callbacks ---- */

static int h_acked(nghttp3_conn *h, int64_t id, uint64_t n, void *ud, void *sud)
{
    (void)h;
    struct h3conn *c = ud;
    struct h3stream *st = sud;
    if (st && st->body == B_RING) {
        st->r_acked += n;
        h2b_h3quic_consume(&c->b, id,
                           n); /* the echoed bytes left the ring: the peer may send as many again */
    }
    return 0;
}

static int h_stream_close(nghttp3_conn *h, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h, (void)code;
    struct h3conn *c = ud;
    if (sud)
        stream_free(sud);
    if (ngtcp2_is_bidi_stream(id))
        ngtcp2_conn_extend_max_streams_bidi(c->b.q, 1);
    return 0;
}

static int h_recv_data(nghttp3_conn *h, int64_t id, const uint8_t *data, size_t n, void *ud,
                       void *sud)
{
    struct h3conn *c = ud;
    struct h3stream *st = sud;
    if (!st) {
        h2b_h3quic_consume(&c->b, id, n);
        return 0;
    }
    st->rx += n;
    if (!st->ring) { /* not an /echo upload, or one refused its ring (503) */
        h2b_h3quic_consume(&c->b, id, n);
        return 0;
    }
    uint64_t cap = c->s->cfg.stream_window;
    if (st->r_tail - st->r_acked + n > cap)
        return NGHTTP3_ERR_CALLBACK_FAILURE; /* cannot happen: the window is the ring */
    while (n > 0) {
        size_t at = (size_t)(st->r_tail % cap);
        size_t k = n < cap - at ? n : (size_t)(cap - at);
        memcpy(st->ring + at, data, k);
        st->r_tail += k;
        data += k;
        n -= k;
    }
    if (st->blocked) {
        st->blocked = false;
        nghttp3_conn_resume_stream(h, id);
        touch(c);
    }
    return 0;
}

static int h_begin_headers(nghttp3_conn *h, int64_t id, void *ud, void *sud)
{
    struct h3conn *c = ud;
    if (sud)
        return 0; /* trailers or a second header block: the stream exists */
    struct h3stream *st = calloc(1, sizeof *st);
    if (!st)
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    st->c = c;
    st->id = id;
    h2b_list_insert_head(&c->streams, &st->link);
    c->nstreams++;
    c->s->c[C_STREAMS_TOTAL]++;
    nghttp3_conn_set_stream_user_data(h, id, st);
    return 0;
}

static int h_recv_header(nghttp3_conn *h, int64_t id, int32_t token, nghttp3_rcbuf *name,
                         nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
    (void)h, (void)id, (void)name, (void)flags;
    struct h3conn *c = ud;
    struct h3stream *st = sud;
    if (!st)
        return 0;
    nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
    switch (token) {
    case NGHTTP3_QPACK_TOKEN__PATH:
        st->route = (uint8_t)h2b_route_parse(v.base, v.len, c->s->cfg.max_body, &st->arg);
        break;
    case NGHTTP3_QPACK_TOKEN__METHOD:
        st->method = (uint8_t)h2b_method_parse(v.base, v.len);
        break;
    default:
        break;
    }
    return 0;
}

static int h_end_headers(nghttp3_conn *h, int64_t id, int fin, void *ud, void *sud)
{
    (void)h, (void)id, (void)ud;
    struct h3stream *st = sud;
    if (!st || st->responded)
        return 0;
    if (st->route == H2B_ROUTE_NONE)
        st->route = H2B_ROUTE_BAD;
    if (fin)
        st->eof_in = true;
    if (fin || (st->route == H2B_ROUTE_ECHO && is_upload(st)))
        respond(st); /* /echo streams its body back while it arrives */
    return 0;
}

static int h_end_stream(nghttp3_conn *h, int64_t id, void *ud, void *sud)
{
    struct h3stream *st = sud;
    (void)ud;
    if (!st)
        return 0;
    st->eof_in = true;
    if (!st->responded) {
        respond(st);
    } else if (st->body == B_RING && st->blocked) {
        st->blocked = false;
        nghttp3_conn_resume_stream(h, id);
        touch(st->c);
    }
    return 0;
}

static int setup_http(struct h3conn *c)
{
    if (c->b.h)
        return 0;
    nghttp3_callbacks cb = {
        .acked_stream_data = h_acked,
        .stream_close = h_stream_close,
        .recv_data = h_recv_data,
        .begin_headers = h_begin_headers,
        .recv_header = h_recv_header,
        .end_headers = h_end_headers,
        .end_stream = h_end_stream,
    };
    h2b_h3quic_http_callbacks(&cb);
    nghttp3_settings set;
    nghttp3_settings_default(&set);
    set.qpack_max_dtable_capacity = 4096;
    set.qpack_blocked_streams = 100;
    set.max_field_section_size = 64 * 1024;
    if (nghttp3_conn_server_new(&c->b.h, &cb, &set, NULL, c) != 0)
        return -1;
    nghttp3_conn_set_max_client_streams_bidi(c->b.h, c->s->cfg.max_streams);
    if (h2b_h3quic_bind_streams(&c->b) != 0)
        return -1;
    if (c->s->draining) {
        nghttp3_conn_shutdown(c->b.h);
        c->shut = true;
    }
    return 0;
}

/* ---- ngtcp2 callbacks ---- */

static int q_new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t n, void *ud)
{
    (void)q;
    struct h3conn *c = ud;
    for (int tries = 0; tries < 4; tries++) {
        if (gnutls_rnd(GNUTLS_RND_NONCE, cid->data, n) != 0)
            return NGTCP2_ERR_CALLBACK_FAILURE;
        cid->datalen = n;
        if (cid_add(c, cid->data, n))
            break;
        if (c->ncids == MAX_CIDS)
            return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    if (ngtcp2_crypto_generate_stateless_reset_token(token, c->s->secret, sizeof c->s->secret,
                                                     cid) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_remove_cid(ngtcp2_conn *q, const ngtcp2_cid *cid, void *ud)
{
    (void)q;
    cid_del(ud, cid->data, cid->datalen);
    return 0;
}

static int q_extend_remote_bidi(ngtcp2_conn *q, uint64_t max, void *ud)
{
    (void)q;
    struct h3conn *c = ud;
    if (c->b.h)
        nghttp3_conn_set_max_client_streams_bidi(c->b.h, max);
    return 0;
}

static int q_tx_key(ngtcp2_conn *q, ngtcp2_crypto_level level, void *ud)
{
    (void)q;
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION)
        return 0;
    return setup_http(ud) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_handshake_completed(ngtcp2_conn *q, void *ud)
{
    (void)q;
    struct h3conn *c = ud;
    c->s->c[C_HANDSHAKES]++;
    return 0;
}

/* ---- sending ---- */

static bool send_batch(struct h2b_h3_server *s, const struct sockaddr *to, socklen_t tolen,
                       const uint8_t *data, size_t n, size_t seg);

/* Sends one datagram. Returns false when the socket buffer is full (the datagram is dropped:
 * QUIC's loss recovery resends what it carried) or on another error. */
static bool send_dgram(struct h2b_h3_server *s, const struct sockaddr *to, socklen_t tolen,
                       const uint8_t *data, size_t n)
{
    return send_batch(s, to, tolen, data, n, n);
}

/* Sends n bytes of packets of seg bytes each (the last may be shorter) in one sendmsg with UDP
 * GSO (the kernel cuts them into datagrams). Without GSO support (the first EIO/EINVAL turns it
 * off) each packet is its own sendto. Returns false when the socket is full: the batch is
 * dropped and QUIC's loss recovery resends it. */
static bool send_batch(struct h2b_h3_server *s, const struct sockaddr *to, socklen_t tolen,
                       const uint8_t *data, size_t n, size_t seg)
{
    size_t npkts = (n + seg - 1) / seg;
    ssize_t r;
    if (npkts > 1 && !s->no_gso) {
        struct iovec iov = {.iov_base = (void *)(uintptr_t)data, .iov_len = n};
        union {
            char buf[CMSG_SPACE(sizeof(uint16_t))];
            struct cmsghdr align;
        } ctl;
        memset(&ctl, 0, sizeof ctl);
        struct msghdr mh = {.msg_name = (void *)(uintptr_t)to,
                            .msg_namelen = tolen,
                            .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = ctl.buf,
                            .msg_controllen = sizeof ctl.buf};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t gso = (uint16_t)seg;
        memcpy(CMSG_DATA(cm), &gso, sizeof gso);
        do {
            r = sendmsg(s->fd, &mh, MSG_DONTWAIT);
        } while (r < 0 && errno == EINTR);
        if (r < 0 && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT)) {
            s->no_gso = true; /* this kernel or device cannot: one sendto per packet from now */
            r = 0;
        } else {
            goto done;
        }
    }
    for (size_t off = 0; off < n; off += seg) {
        size_t k = n - off < seg ? n - off : seg;
        do {
            r = sendto(s->fd, data + off, k, MSG_DONTWAIT, to, tolen);
        } while (r < 0 && errno == EINTR);
        if (r < 0)
            break;
    }
done:
    if (r < 0) {
        s->c[C_SEND_DROPS]++;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!s->blocked) {
                s->blocked = true;
                struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = s->fd};
                epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->fd, &ev);
            }
        }
        return false;
    }
    s->c[C_DGRAMS_OUT] += npkts;
    s->c[C_BYTES_OUT] += n;
    return true;
}

/* Sends CONNECTION_CLOSE (unless the connection is already closing or draining) and marks the
 * connection dead; it is freed at the end of the turn. */
static void conn_close(struct h3conn *c)
{
    struct h2b_h3_server *s = c->s;
    if (c->dead)
        return;
    size_t cap = ngtcp2_conn_get_max_tx_udp_payload_size(c->b.q);
    ngtcp2_ssize n =
        h2b_h3quic_write_close(&c->b, s->tx, cap < sizeof s->tx ? cap : sizeof s->tx, s->now);
    if (n > 0)
        send_dgram(s, (const struct sockaddr *)&c->remote, c->remotelen, s->tx, (size_t)n);
    c->dead = true;
}

static void conn_fail_liberr(struct h3conn *c, int rv)
{
    h2b_h3quic_liberr(&c->b, rv);
    c->s->c[C_CONN_ERRORS]++;
    conn_close(c);
}

/* Writes what the connection has, up to one send quantum, as GSO batches of equal-size packets.
 * Returns true when it stopped early (quantum used up, or the socket was full) and should be
 * written again. */
static bool conn_write(struct h3conn *c)
{
    struct h2b_h3_server *s = c->s;
    if (c->dead || ngtcp2_conn_is_in_closing_period(c->b.q) ||
        ngtcp2_conn_is_in_draining_period(c->b.q))
        return false;
    size_t maxpay;
    size_t quantum = h2b_h3quic_quantum(&c->b, sizeof s->tx, TX_MAX_PKTS, &maxpay);
    size_t per_batch = s->no_gso ? 1 : GSO_MAX_BYTES / maxpay;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    size_t off = 0, seg = 0, inbatch = 0;
    bool more = true;
    for (size_t npkts = 0; npkts < quantum; npkts++) {
        ngtcp2_ssize n = h2b_h3quic_write_pkt(&c->b, &ps.path, s->txb + off, maxpay, s->now);
        if (n < 0) {
            conn_fail_liberr(c, 0); /* the reason is set */
            return false;
        }
        if (n == 0) {
            more = false;
            break;
        }
        if (inbatch > 0 && (size_t)n > seg) {
            /* larger than the batch's segments: send the batch, start a new one with it */
            if (!send_batch(s, (const struct sockaddr *)ps.path.remote.addr, ps.path.remote.addrlen,
                            s->txb, off, seg))
                goto blocked;
            memmove(s->txb, s->txb + off, (size_t)n);
            off = inbatch = 0;
        }
        if (inbatch == 0)
            seg = (size_t)n;
        off += (size_t)n;
        inbatch++;
        if ((size_t)n < seg || inbatch >= per_batch) {
            if (!send_batch(s, (const struct sockaddr *)ps.path.remote.addr, ps.path.remote.addrlen,
                            s->txb, off, seg))
                goto blocked;
            off = inbatch = 0;
        }
    }
    if (inbatch > 0 && !send_batch(s, (const struct sockaddr *)ps.path.remote.addr,
                                   ps.path.remote.addrlen, s->txb, off, seg))
        goto blocked;
    if (more)
        ngtcp2_conn_update_pkt_tx_time(c->b.q, s->now);
    return more;
blocked:
    ngtcp2_conn_update_pkt_tx_time(c->b.q, s->now);
    return true;
}

/* ---- connections ---- */

static void conn_free(struct h3conn *c)
{
    struct h2b_h3_server *s = c->s;
    while (c->ncids > 0)
        cid_del(c, c->cids[c->ncids - 1].data, c->cids[c->ncids - 1].len);
    h2b_h3quic_free(&c->b); /* nghttp3_conn_del calls no callbacks: our streams go below */
    for (struct h3stream *st; (st = H2B_LIST_FIRST(&c->streams, struct h3stream, link)) != NULL;)
        stream_free(st);
    if (h2b_list_linked(&c->tlink))
        h2b_list_unlink(&c->tlink);
    if (h2b_list_linked(&c->link))
        h2b_list_unlink(&c->link);
    s->nconns--;
    s->c[C_CONNS_OPEN]--;
    free(c);
}

static struct h3conn *conn_new(struct h2b_h3_server *s, const ngtcp2_pkt_hd *hd,
                               const ngtcp2_cid *ocid, const struct sockaddr *from,
                               socklen_t fromlen)
{
    ngtcp2_callbacks cb = {
        .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
        .handshake_completed = q_handshake_completed,
        .get_new_connection_id = q_new_cid,
        .remove_connection_id = q_remove_cid,
        .extend_max_remote_streams_bidi = q_extend_remote_bidi,
        .recv_tx_key = q_tx_key,
    };
    h2b_h3quic_callbacks(&cb);
    const struct h2b_h3_server_config *cfg = &s->cfg;
    struct h3conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    h2b_h3quic_init(&c->b);
    c->s = s;
    h2b_list_init(&c->streams);
    memcpy(&c->remote, from, fromlen);
    c->remotelen = fromlen;
    ngtcp2_cid scid;
    scid.datalen = SCID_LEN;
    gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);

    ngtcp2_settings set;
    ngtcp2_settings_default(&set);
    set.initial_ts = s->now;
    set.max_stream_window = cfg->stream_window; /* the window never grows: /echo's bound */
    set.max_window = cfg->conn_window;
    set.handshake_timeout = cfg->handshake_timeout_ns;
    if (ocid) {
        set.token.base = hd->token.base;
        set.token.len = hd->token.len;
    }
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_stream_data_bidi_local = cfg->stream_window;
    p.initial_max_stream_data_bidi_remote = cfg->stream_window;
    p.initial_max_stream_data_uni = 64 * 1024;
    p.initial_max_data = cfg->conn_window;
    p.initial_max_streams_bidi = cfg->max_streams;
    p.initial_max_streams_uni = 3;
    p.max_idle_timeout = cfg->idle_timeout_ns;
    p.active_connection_id_limit = 7;
    p.stateless_reset_token_present = 1;
    if (ocid) {
        p.original_dcid = *ocid;
        p.retry_scid = hd->dcid;
        p.retry_scid_present = 1;
    } else {
        p.original_dcid = hd->dcid;
    }
    if (ngtcp2_crypto_generate_stateless_reset_token(p.stateless_reset_token, s->secret,
                                                     sizeof s->secret, &scid) != 0)
        goto out_free;
    ngtcp2_path path = {
        {(struct sockaddr *)&s->local, s->locallen},
        {(struct sockaddr *)(uintptr_t)from, fromlen},
        NULL,
    };
    if (ngtcp2_conn_server_new(&c->b.q, &hd->scid, &scid, &path, hd->version, &cb, &set, &p, NULL,
                               c) != 0)
        goto out_free;
    if (h2b_h3quic_tls(&c->b, true, s->cred, NULL) != 0)
        goto out_free;
    h2b_list_insert_head(&s->conns, &c->link);
    s->nconns++;
    s->c[C_CONNS_OPEN]++;
    s->c[C_CONNS_TOTAL]++;
    if (!cid_add(c, scid.data, scid.datalen) || !cid_add(c, hd->dcid.data, hd->dcid.datalen)) {
        conn_free(c);
        return NULL;
    }
    return c;
out_free:
    h2b_h3quic_free(&c->b);
    free(c);
    return NULL;
}

static void send_retry(struct h2b_h3_server *s, const ngtcp2_pkt_hd *hd,
                       const struct sockaddr *from, socklen_t fromlen, size_t inlen)
{
    ngtcp2_cid scid;
    scid.datalen = SCID_LEN;
    gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);
    uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
    ngtcp2_ssize tl = ngtcp2_crypto_generate_retry_token(
        token, s->secret, sizeof s->secret, hd->version, from, fromlen, &scid, &hd->dcid, s->now);
    if (tl < 0)
        return;
    /* never answer with more bytes than we got (amplification) */
    size_t cap = inlen < NGTCP2_MAX_UDP_PAYLOAD_SIZE ? inlen : NGTCP2_MAX_UDP_PAYLOAD_SIZE;
    ngtcp2_ssize n = ngtcp2_crypto_write_retry(s->tx, cap, hd->version, &hd->scid, &scid, &hd->dcid,
                                               token, (size_t)tl);
    if (n > 0 && send_dgram(s, from, fromlen, s->tx, (size_t)n))
        s->c[C_RETRY_SENT]++;
}

static void send_stateless_close(struct h2b_h3_server *s, const ngtcp2_pkt_hd *hd,
                                 const struct sockaddr *from, socklen_t fromlen, uint64_t code)
{
    ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(
        s->tx, NGTCP2_MAX_UDP_PAYLOAD_SIZE, hd->version, &hd->scid, &hd->dcid, code, NULL, 0);
    if (n > 0)
        send_dgram(s, from, fromlen, s->tx, (size_t)n);
}

static void send_vn(struct h2b_h3_server *s, const ngtcp2_version_cid *vc,
                    const struct sockaddr *from, socklen_t fromlen, size_t inlen)
{
    uint32_t sv[2] = {0x1a2a3a4aU, NGTCP2_PROTO_VER_V1};
    uint8_t r;
    gnutls_rnd(GNUTLS_RND_NONCE, &r, 1);
    if (inlen < NGTCP2_MAX_UDP_PAYLOAD_SIZE)
        return; /* a client's first Initial is padded to 1200 bytes: smaller is not one */
    ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(
        s->tx, sizeof s->tx, r, vc->scid, vc->scidlen, vc->dcid, vc->dcidlen, sv, 2);
    if (n > 0 && send_dgram(s, from, fromlen, s->tx, (size_t)n))
        s->c[C_VN_SENT]++;
}

/* A datagram for no known connection: maybe a new one. */
static void accept_dgram(struct h2b_h3_server *s, uint8_t *data, size_t n,
                         const struct sockaddr *from, socklen_t fromlen)
{
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, data, n) != 0) {
        s->c[C_UNKNOWN_CID]++;
        return;
    }
    if (s->draining || s->nconns >= s->cfg.max_connections) {
        s->c[C_REFUSED]++;
        send_stateless_close(s, &hd, from, fromlen, NGTCP2_CONNECTION_REFUSED);
        return;
    }
    ngtcp2_cid ocid;
    const ngtcp2_cid *pocid = NULL;
    if (hd.token.len > 0 && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
        if (ngtcp2_crypto_verify_retry_token(&ocid, hd.token.base, hd.token.len, s->secret,
                                             sizeof s->secret, hd.version, from, fromlen, &hd.dcid,
                                             10 * NGTCP2_SECONDS, s->now) != 0) {
            s->c[C_TOKEN_BAD]++;
            send_stateless_close(s, &hd, from, fromlen, NGTCP2_INVALID_TOKEN);
            return;
        }
        pocid = &ocid;
    } else if (s->cfg.retry) {
        send_retry(s, &hd, from, fromlen, n);
        return;
    } else {
        hd.token.base = NULL;
        hd.token.len = 0;
    }
    struct h3conn *c = conn_new(s, &hd, pocid, from, fromlen);
    if (!c)
        return;
    ngtcp2_path path = {
        {(struct sockaddr *)&s->local, s->locallen},
        {(struct sockaddr *)(uintptr_t)from, fromlen},
        NULL,
    };
    ngtcp2_pkt_info pi = {0};
    int rv = ngtcp2_conn_read_pkt(c->b.q, &path, &pi, data, n, s->now);
    if (rv != 0) {
        if (rv == NGTCP2_ERR_DROP_CONN || rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_RETRY) {
            c->dead = true;
            s->c[C_CONN_ERRORS]++;
        } else {
            conn_fail_liberr(c, rv);
        }
        conn_free(c);
        return;
    }
    touch(c);
}

static void on_dgram(struct h2b_h3_server *s, uint8_t *data, size_t n, const struct sockaddr *from,
                     socklen_t fromlen)
{
    s->c[C_DGRAMS_IN]++;
    s->c[C_BYTES_IN] += n;
    ngtcp2_version_cid vc;
    int rv = ngtcp2_pkt_decode_version_cid(&vc, data, n, SCID_LEN);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        send_vn(s, &vc, from, fromlen, n);
        return;
    }
    if (rv != 0) {
        s->c[C_GARBAGE]++;
        return;
    }
    struct h3conn *c = cid_find(s, vc.dcid, vc.dcidlen);
    if (!c) {
        accept_dgram(s, data, n, from, fromlen);
        return;
    }
    if (c->dead)
        return;
    if (ngtcp2_conn_is_in_closing_period(c->b.q) || ngtcp2_conn_is_in_draining_period(c->b.q))
        return;
    ngtcp2_path path = {
        {(struct sockaddr *)&s->local, s->locallen},
        {(struct sockaddr *)(uintptr_t)from, fromlen},
        NULL,
    };
    ngtcp2_pkt_info pi = {0};
    rv = ngtcp2_conn_read_pkt(c->b.q, &path, &pi, data, n, s->now);
    if (rv != 0) {
        if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_DROP_CONN) {
            c->dead = true; /* the peer closed, or the packet says drop us */
            return;
        }
        conn_fail_liberr(c, rv);
        return;
    }
    memcpy(&c->remote, from, fromlen);
    c->remotelen = fromlen;
    touch(c);
}

static void read_socket(struct h2b_h3_server *s)
{
    struct mmsghdr msgs[RX_BATCH];
    struct iovec iov[RX_BATCH];
    struct sockaddr_storage from[RX_BATCH];
    for (int total = 0; total < RX_PER_TURN;) {
        for (int i = 0; i < RX_BATCH; i++) {
            iov[i].iov_base = s->rxbuf + (size_t)i * RX_DGRAM;
            iov[i].iov_len = RX_DGRAM;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &from[i];
            msgs[i].msg_hdr.msg_namelen = sizeof from[i];
        }
        int n = recvmmsg(s->fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        s->now = h2b_clock_now_ns();
        for (int i = 0; i < n; i++) {
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                s->c[C_GARBAGE]++;
                continue;
            }
            on_dgram(s, iov[i].iov_base, msgs[i].msg_len, (const struct sockaddr *)&from[i],
                     msgs[i].msg_hdr.msg_namelen);
        }
        total += n;
        if (n < RX_BATCH)
            return;
    }
}

static void run_timers(struct h2b_h3_server *s)
{
    struct h2b_heap_node *top;
    while ((top = h2b_heap_top(&s->delays)) != NULL && top->key <= s->now) {
        struct h3stream *st =
            (struct h3stream *)(void *)((char *)top - offsetof(struct h3stream, dnode));
        delay_unlink(s, st);
        respond(st);
    }
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        struct h3conn *c = H2B_LIST_ENTRY(pos, struct h3conn, link);
        if (c->dead || ngtcp2_conn_get_expiry(c->b.q) > s->now)
            continue;
        int rv = ngtcp2_conn_handle_expiry(c->b.q, s->now);
        if (rv == NGTCP2_ERR_IDLE_CLOSE) {
            s->c[C_IDLE_CLOSED]++;
            c->dead = true; /* silent: the idle timeout is the peer's too */
        } else if (rv != 0) {
            conn_fail_liberr(c, rv);
        } else {
            touch(c);
        }
    }
}

static bool flush_touched(struct h2b_h3_server *s)
{
    struct h2b_list list;
    h2b_list_take(&list, &s->touched);
    bool again = false;
    for (struct h3conn *c; (c = H2B_LIST_FIRST(&list, struct h3conn, tlink)) != NULL;) {
        h2b_list_unlink(&c->tlink);
        if (s->blocked) {
            touch(c);
            continue;
        }
        if (conn_write(c)) {
            touch(c);
            again = true;
        }
    }
    return again && !s->blocked;
}

static void reap(struct h2b_h3_server *s)
{
    bool freed = false;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        struct h3conn *c = H2B_LIST_ENTRY(pos, struct h3conn, link);
        if (c->dead) {
            conn_free(c); /* out of the touched list too */
            freed = true;
        }
    }
    /* ngtcp2, nghttp3 and GnuTLS hold ~190 KB per connection in many small blocks; when the
     * last connection is gone, give the freed heap back (at most once a second) so that RSS
     * follows the connection count instead of its peak. */
    if (freed && s->nconns == 0 && s->now - s->last_trim >= H2B_NS_PER_SEC) {
        malloc_trim(0);
        s->last_trim = s->now;
    }
}

static uint64_t next_deadline(struct h2b_h3_server *s)
{
    uint64_t d = s->now + 100 * H2B_NS_PER_MS;
    const struct h2b_heap_node *top = h2b_heap_top(&s->delays);
    if (top && top->key < d)
        d = top->key;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        struct h3conn *c = H2B_LIST_ENTRY(pos, struct h3conn, link);
        uint64_t e = ngtcp2_conn_get_expiry(c->b.q);
        if (e < d)
            d = e;
    }
    if (s->draining && s->drain_deadline < d)
        d = s->drain_deadline;
    return d;
}

static void begin_drain(struct h2b_h3_server *s)
{
    s->draining = true;
    s->drain_deadline = s->now + s->cfg.drain_ns;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        struct h3conn *c = H2B_LIST_ENTRY(pos, struct h3conn, link);
        if (c->b.h && !c->shut) {
            nghttp3_conn_shutdown(c->b.h);
            c->shut = true;
            touch(c);
        }
    }
}

static bool drained(const struct h2b_h3_server *s)
{
    if (s->now >= s->drain_deadline)
        return true;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        const struct h3conn *c = H2B_LIST_ENTRY(pos, const struct h3conn, link);
        if (!c->dead && c->nstreams > 0)
            return false;
    }
    return true;
}

static void *server_main(void *arg)
{
    struct h2b_h3_server *s = arg;
    pthread_setname_np(pthread_self(), "h2b-h3");
    if (s->cfg.cpu >= 0)
        h2b_cpu_pin_self_to(s->cfg.cpu);
    struct epoll_event evs[4];
    s->now = h2b_clock_now_ns();
    for (;;) {
        bool again = flush_touched(s);
        reap(s);
        if (s->draining && drained(s))
            break;
        uint64_t d = again ? s->now : next_deadline(s);
        s->now = h2b_clock_now_ns();
        /* ns resolution: ngtcp2's pacing asks for sub-millisecond waits at high rates */
        uint64_t ns = d > s->now ? d - s->now : 0;
        struct timespec ts = {.tv_sec = (time_t)(ns / H2B_NS_PER_SEC),
                              .tv_nsec = (long)(ns % H2B_NS_PER_SEC)};
        int n = epoll_pwait2(s->epfd, evs, 4, &ts, NULL);
        s->now = h2b_clock_now_ns();
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == s->evfd) {
                uint64_t v;
                if (read(s->evfd, &v, sizeof v) == (ssize_t)sizeof v && !s->draining)
                    begin_drain(s);
            } else {
                if ((evs[i].events & EPOLLOUT) && s->blocked) {
                    s->blocked = false;
                    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->fd};
                    epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->fd, &ev);
                }
                if (evs[i].events & EPOLLIN)
                    read_socket(s);
            }
        }
        run_timers(s);
    }
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &s->conns)
    {
        struct h3conn *c = H2B_LIST_ENTRY(pos, struct h3conn, link);
        if (c->dead)
            continue;
        ngtcp2_connection_close_error_set_application_error(&c->b.err, NGHTTP3_H3_NO_ERROR, NULL,
                                                            0);
        conn_close(c);
    }
    reap(s);
    return NULL;
}

/* ---- set-up ---- */

void h2b_h3_server_config_defaults(struct h2b_h3_server_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = "127.0.0.1";
    cfg->max_connections = 4096;
    cfg->max_streams = 256;
    cfg->stream_window = 256 * 1024;
    cfg->conn_window = 16 * 1024 * 1024;
    cfg->idle_timeout_ns = 60 * H2B_NS_PER_SEC;
    cfg->handshake_timeout_ns = 10 * H2B_NS_PER_SEC;
    cfg->max_body = 1ULL << 30;
    cfg->drain_ns = 3 * H2B_NS_PER_SEC;
    cfg->echo_conn_max = 4u << 20;
    cfg->memory_budget = 1ull << 30;
    cfg->retry = true;
    cfg->cpu = -1;
}

static void bufsize(int fd, int opt_force, int opt)
{
    int v = SOCKBUF;
    if (setsockopt(fd, SOL_SOCKET, opt_force, &v, sizeof v) != 0)
        setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

/* Binds the UDP socket to host:port. With port 0 a TCP socket is bound first to learn a port
 * the kernel considers free, so that the TCP listener can take the same number. */
static int bind_udp(struct h2b_h3_server *s, uint16_t *port, struct h2b_diag *diag)
{
    char portstr[8];
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai;
    for (int attempt = 0; attempt < 32; attempt++) {
        uint16_t want = s->cfg.port;
        int probe = -1;
        snprintf(portstr, sizeof portstr, "%u", (unsigned)want);
        int rv = getaddrinfo(s->cfg.host, portstr, &hints, &ai);
        if (rv != 0) {
            h2b_diag_at(diag, NULL, 0, 0, "cannot resolve %s: %s", s->cfg.host, gai_strerror(rv));
            return H2B_ERR_INVAL;
        }
        if (want == 0) {
            probe = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            int one = 1;
            if (probe >= 0)
                setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (probe < 0 || bind(probe, ai->ai_addr, ai->ai_addrlen) != 0) {
                h2b_diag_at(diag, NULL, 0, 0, "cannot bind TCP %s: %s", s->cfg.host,
                            strerror(errno));
                if (probe >= 0)
                    close(probe);
                freeaddrinfo(ai);
                return H2B_ERR_SYS;
            }
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            getsockname(probe, (struct sockaddr *)&ss, &sl);
            want = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                  : ((struct sockaddr_in *)&ss)->sin_port);
            if (ai->ai_family == AF_INET6)
                ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons(want);
            else
                ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons(want);
        }
        int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            if (probe >= 0)
                close(probe);
            freeaddrinfo(ai);
            bufsize(fd, SO_RCVBUFFORCE, SO_RCVBUF);
            bufsize(fd, SO_SNDBUFFORCE, SO_SNDBUF);
            s->fd = fd;
            s->locallen = sizeof s->local;
            getsockname(fd, (struct sockaddr *)&s->local, &s->locallen);
            *port = want;
            return H2B_OK;
        }
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (probe >= 0)
            close(probe);
        freeaddrinfo(ai);
        if (s->cfg.port != 0 || e != EADDRINUSE) {
            h2b_diag_at(diag, NULL, 0, 0, "cannot bind UDP %s:%u: %s", s->cfg.host, (unsigned)want,
                        strerror(e));
            return H2B_ERR_SYS;
        }
    }
    h2b_diag_at(diag, NULL, 0, 0, "no port free for both TCP and UDP on %s", s->cfg.host);
    return H2B_ERR_SYS;
}

static void server_free(struct h2b_h3_server *s)
{
    for (struct h3conn *c; (c = H2B_LIST_FIRST(&s->conns, struct h3conn, link)) != NULL;)
        conn_free(c);
    if (s->cred)
        gnutls_certificate_free_credentials(s->cred);
    if (s->fd >= 0)
        close(s->fd);
    if (s->evfd >= 0)
        close(s->evfd);
    if (s->epfd >= 0)
        close(s->epfd);
    free(s->map);
    h2b_heap_free(&s->delays);
    free(s->rxbuf);
    free(s);
}

int h2b_h3_server_start(struct h2b_h3_server **out, const struct h2b_h3_server_config *cfg,
                        uint16_t *port, struct h2b_diag *diag)
{
    struct h2b_h3_server *s = calloc(1, sizeof *s);
    if (!s)
        return H2B_ERR_NOMEM;
    s->cfg = *cfg;
    s->fd = s->evfd = s->epfd = -1;
    h2b_list_init(&s->conns);
    h2b_list_init(&s->touched);
    atomic_init(&s->own_used, 0);
    s->used = cfg->memory_used ? cfg->memory_used : &s->own_used;
    size_t slots = 64;
    /* a connection is reachable by its first SCID, the client's DCID and the CIDs it issued
     * (ngtcp2 0.12 issues at most 7 more): 9 per connection, at most 3/4 full */
    while (slots * 3 < (size_t)cfg->max_connections * 9 * 4)
        slots <<= 1;
    s->map = calloc(slots, sizeof *s->map);
    s->mapmask = slots - 1;
    s->rxbuf = malloc((size_t)RX_BATCH * RX_DGRAM);
    if (!s->map || !s->rxbuf) {
        server_free(s);
        return H2B_ERR_NOMEM;
    }
    gnutls_rnd(GNUTLS_RND_RANDOM, s->secret, sizeof s->secret);
    gnutls_rnd(GNUTLS_RND_NONCE, &s->seed, sizeof s->seed);
    int rc = h2b_h3tls_server_cred(&s->cred, cfg->cert_file, cfg->key_file, diag);
    if (rc != H2B_OK) {
        server_free(s);
        return rc;
    }
    if ((rc = bind_udp(s, port, diag)) != H2B_OK) {
        server_free(s);
        return rc;
    }
    s->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->fd};
    struct epoll_event ev2 = {.events = EPOLLIN, .data.fd = s->evfd};
    if (s->evfd < 0 || s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->fd, &ev) != 0 ||
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd, &ev2) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "epoll/eventfd: %s", strerror(errno));
        server_free(s);
        return H2B_ERR_SYS;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&s->thread, NULL, server_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot start the HTTP/3 thread");
        server_free(s);
        return H2B_ERR_SYS;
    }
    s->started = true;
    *out = s;
    return H2B_OK;
}

void h2b_h3_server_stop(struct h2b_h3_server *s)
{
    if (!s)
        return;
    if (s->started) {
        uint64_t one = 1;
        ssize_t w = write(s->evfd, &one, sizeof one);
        (void)w;
        pthread_join(s->thread, NULL);
    }
    server_free(s);
}
