/*
 * h3load.c - the HTTP/3 engine of `h2bench load --h3`: one worker's QUIC connections (ngtcp2
 * 0.12 with GnuTLS, nghttp3 0.8) in one epoll loop.
 *
 * The run around it is load.c's: the same shared state, threads, progress hand-off and merge,
 * and the same struct h2b_load_stats, so histograms, text, JSON and progress are those of h2.
 * Outcomes go through h2b__load_record() (worker.c), which is what the h2 engine counts with.
 *
 * Approach: each connection has its own connected UDP socket (the kernel demultiplexes by
 * 4-tuple, so no connection-ID table is needed on this side). A loop turn waits in epoll, reads
 * every readable socket (datagrams straight into ngtcp2_conn_read_pkt), runs due QUIC timers
 * and, in --total-rps mode, releases due arrivals, then writes every connection that was touched,
 * up to one send quantum each. Requests are slots in a fixed array per connection (sized to the
 * effective stream count at handshake), linked as nghttp3 stream user data: the request count
 * never grows memory. Closed loop: a closed stream submits the next request at once.
 * Latency runs from the intended time (--rate) or submission to the stream's close, as in h2.
 *
 * Failure policy (as h2load.c): a connection that dies errors its in-flight requests; it
 * reconnects if it got responses since its last handshake, otherwise in -n mode its remaining
 * requests count as errored (not sent).
 * Rejected: one UDP socket per worker with a connection-ID table (needed only for servers);
 * reusing h2load.c's connection struct (TCP/TLS/nghttp2 state throughout).
 */
#include "load/engine.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/h3quic.h"
#include "core/h3tls.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define RX_SIZE 65536
#define TX_MAX_PKTS 64
#define NO_SLOT UINT32_MAX

enum h3state { S_IDLE, S_HANDSHAKE, S_READY, S_DONE, S_DEAD };

struct h3slot {
    struct h2b__load_req req; /* first: the slot is what h2b__load_abandon walks */
    int64_t stream_id;        /* -1: free */
    uint32_t next_free;
    bool complete, first;
};

struct h3c {
    struct h2b_h3quic b; /* first: ngtcp2's and nghttp3's user_data is the h3c */
    struct h2b__load_worker *w;
    struct h3w *hw;
    enum h3state state;
    int fd;
    struct sockaddr_storage local;
    socklen_t locallen;
    struct h2b__load_life life;
    uint32_t m_eff, inflight, nslots, free_head;
    struct h3slot *slots;
    struct h3c *tnext;
    bool touched, broken, draining;
};

struct h3w {
    struct h3c *touched;
    gnutls_certificate_credentials_t cred;
    nghttp3_nv *nv; /* every URI's request header list, one after the other */
    size_t *nv_off; /* URI u's is nv[nv_off[u] .. nv_off[u + 1]) */
    uint8_t rx[RX_SIZE];
    uint8_t tx[1500];
    struct h3c conns[]; /* w->nconns */
};

/* ---- helpers ---- */

static struct h3w *hw_of(const struct h2b__load_worker *w)
{
    return w->es;
}

static void touch(struct h3c *c)
{
    if (!c->touched) {
        c->touched = true;
        c->tnext = c->hw->touched;
        c->hw->touched = c;
    }
}

static void slot_release(struct h3c *c, struct h3slot *s)
{
    s->stream_id = -1;
    s->next_free = c->free_head;
    c->free_head = (uint32_t)(s - c->slots);
    c->inflight--;
    h2b__load_req_end(c->w, &s->req);
}

static void finish(struct h3c *c, struct h3slot *s, enum h2b__load_outcome how)
{
    h2b__load_finish(c->w, &c->life, &s->req, how);
}

/* ---- nghttp3 (HTTP/3) ---- */

static nghttp3_ssize body_read(nghttp3_conn *h, int64_t id, nghttp3_vec *vec, size_t veccnt,
                               uint32_t *flags, void *ud, void *sud)
{
    (void)h, (void)id, (void)sud, (void)veccnt;
    struct h3c *c = ud;
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    vec[0].base = cfg->body; /* lives for the whole run: no need to wait for ACKs */
    vec[0].len = cfg->body_len;
    *flags |= NGHTTP3_DATA_FLAG_EOF;
    return cfg->body_len ? 1 : 0;
}

static int h_recv_header(nghttp3_conn *h, int64_t id, int32_t token, nghttp3_rcbuf *name,
                         nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
    (void)h, (void)id, (void)flags;
    struct h3c *c = ud;
    struct h3slot *s = sud;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    c->w->stats.bytes_headers_decomp += n.len + v.len;
    if (s && token == NGHTTP3_QPACK_TOKEN__STATUS && v.len == 3 && s->req.status == 0) {
        unsigned st = (unsigned)(v.base[0] - '0') * 100 + (unsigned)(v.base[1] - '0') * 10 +
                      (unsigned)(v.base[2] - '0');
        if (st >= 200 && st <= 999)
            s->req.status = (uint16_t)st;
    }
    return 0;
}

static int h_begin_headers(nghttp3_conn *h, int64_t id, void *ud, void *sud)
{
    (void)h, (void)id;
    struct h3c *c = ud;
    struct h3slot *s = sud;
    if (s && !s->first) {
        s->first = true;
        if (s->req.measured && s->req.t_sent)
            h2b_hist_record(c->w->stats.ttfb, c->w->now - s->req.t_sent);
    }
    return 0;
}

static int h_recv_data(nghttp3_conn *h, int64_t id, const uint8_t *data, size_t n, void *ud,
                       void *sud)
{
    (void)h, (void)data, (void)sud;
    struct h3c *c = ud;
    c->w->stats.bytes_data += n;
    h2b_h3quic_consume(&c->b, id, n);
    return 0;
}

static int h_end_stream(nghttp3_conn *h, int64_t id, void *ud, void *sud)
{
    (void)h, (void)id, (void)ud;
    struct h3slot *s = sud;
    if (s)
        s->complete = true;
    return 0;
}

static void fill(struct h3c *c);

static int h_stream_close(nghttp3_conn *h, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h, (void)id;
    struct h3c *c = ud;
    struct h3slot *s = sud;
    if (!s || s->stream_id != id)
        return 0;
    if (!s->req.recorded) {
        bool ok = s->complete && code == NGHTTP3_H3_NO_ERROR;
        finish(c, s, ok ? H2B__LOAD_RESPONSE : H2B__LOAD_RESET);
        if (s->req.status)
            c->life.responses++;
    }
    slot_release(c, s);
    fill(c);
    return 0;
}

static int h_shutdown(nghttp3_conn *h, int64_t id, void *ud)
{
    (void)h, (void)id;
    struct h3c *c = ud;
    c->draining = true; /* GOAWAY: finish what is in flight, then reconnect if owed more */
    return 0;
}

static int setup_http(struct h3c *c)
{
    if (c->b.h)
        return 0;
    nghttp3_callbacks cb = {
        .stream_close = h_stream_close,
        .recv_data = h_recv_data,
        .begin_headers = h_begin_headers,
        .recv_header = h_recv_header,
        .end_stream = h_end_stream,
        .shutdown = h_shutdown,
    };
    h2b_h3quic_http_callbacks(&cb);
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    nghttp3_settings set;
    nghttp3_settings_default(&set);
    set.qpack_max_dtable_capacity = cfg->header_table_size;
    set.qpack_encoder_max_dtable_capacity = cfg->encoder_table_size;
    set.qpack_blocked_streams = 100;
    if (nghttp3_conn_client_new(&c->b.h, &cb, &set, NULL, c) != 0)
        return -1;
    return h2b_h3quic_bind_streams(&c->b);
}

/* Submits one request on c (which has a free slot). Returns false if QUIC or HTTP/3 refused. */
static bool submit(struct h3c *c, uint64_t t_intended)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    struct h3w *hw = c->hw;
    int64_t id;
    if (c->free_head == NO_SLOT || ngtcp2_conn_open_bidi_stream(c->b.q, &id, NULL) != 0)
        return false;
    struct h3slot *s = &c->slots[c->free_head];
    uint32_t u = h2b__load_next_uri(&c->life, sh->cfg);
    nghttp3_data_reader dr = {.read_data = body_read};
    if (nghttp3_conn_submit_request(c->b.h, id, hw->nv + hw->nv_off[u],
                                    hw->nv_off[u + 1] - hw->nv_off[u], sh->cfg->body ? &dr : NULL,
                                    s) != 0) {
        ngtcp2_conn_shutdown_stream(c->b.q, id, NGHTTP3_H3_INTERNAL_ERROR);
        c->draining = true;
        return false;
    }
    c->free_head = s->next_free;
    /* t_sent: QUIC sends it this turn (no per-frame send callback in nghttp3) */
    h2b__load_req_begin(w, &s->req, t_intended, w->now);
    s->stream_id = id;
    s->complete = s->first = false;
    c->inflight++;
    touch(c);
    return true;
}

static void fill(struct h3c *c)
{
    struct h2b__load_worker *w = c->w;
    if (w->sh->rate_mode)
        return;
    while (c->state == S_READY && !c->draining && c->inflight < c->m_eff && c->life.budget > 0 &&
           h2b__load_running(w)) {
        if (!submit(c, w->now))
            break;
        h2b__load_spend(&c->life);
    }
}

/* ---- ngtcp2 (QUIC) ---- */

static int q_new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t n, void *ud)
{
    (void)q, (void)ud;
    if (gnutls_rnd(GNUTLS_RND_NONCE, cid->data, n) != 0 ||
        gnutls_rnd(GNUTLS_RND_NONCE, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = n;
    return 0;
}

static int q_extend_local_bidi(ngtcp2_conn *q, uint64_t max, void *ud)
{
    (void)q, (void)max;
    struct h3c *c = ud;
    if (c->state == S_READY) {
        fill(c);
        c->w->all_busy = false;
    }
    return 0;
}

static int q_rx_key(ngtcp2_conn *q, ngtcp2_crypto_level level, void *ud)
{
    (void)q;
    if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION)
        return 0;
    return setup_http(ud) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_handshake_completed(ngtcp2_conn *q, void *ud)
{
    struct h3c *c = ud;
    struct h2b__load_worker *w = c->w;
    gnutls_datum_t alpn;
    if (gnutls_alpn_get_selected_protocol(c->b.tls, &alpn) != 0 || alpn.size != 2 ||
        memcmp(alpn.data, "h3", 2) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE; /* the server does not speak HTTP/3 */
    w->now = h2b_clock_now_ns();
    uint64_t server_max = ngtcp2_conn_get_streams_bidi_left(q);
    uint32_t m = w->sh->cfg->streams;
    if (server_max < m)
        m = (uint32_t)server_max;
    if (server_max < w->stats.server_max_streams)
        w->stats.server_max_streams = (uint32_t)server_max;
    if (m == 0)
        m = 1;
    if (c->nslots < m) {
        struct h3slot *ns = realloc(c->slots, (size_t)m * sizeof *ns);
        if (!ns)
            return NGTCP2_ERR_CALLBACK_FAILURE;
        c->slots = ns;
        c->nslots = m;
    }
    for (uint32_t i = 0; i < c->nslots; i++) {
        memset(&c->slots[i], 0, sizeof c->slots[i]);
        c->slots[i].stream_id = -1;
        c->slots[i].next_free = i + 1 < c->nslots ? i + 1 : NO_SLOT;
    }
    c->free_head = 0;
    c->m_eff = m;
    if (m < w->stats.streams_effective)
        w->stats.streams_effective = m;
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    w->stats.conns_ok++;
    h2b__load_report_app(w, "h3");
    c->life.responses = 0;
    c->state = S_READY;
    c->life.last_read = w->now;
    w->all_busy = false;
    fill(c);
    return 0;
}

/* ---- connections ---- */

static void conn_start(struct h3c *c);

static void conn_teardown(struct h3c *c)
{
    h2b_h3quic_free(&c->b);
    if (c->fd >= 0) {
        close(c->fd); /* also leaves the epoll set */
        c->fd = -1;
    }
}

/* At the end: teardown and the slots kept over reconnects */
static void conn_free(struct h3c *c)
{
    conn_teardown(c);
    free(c->slots);
}

/* Sends CONNECTION_CLOSE (best effort) unless the connection is closing or draining already. */
static void send_close(struct h3c *c)
{
    ngtcp2_ssize n = h2b_h3quic_write_close(&c->b, c->hw->tx, sizeof c->hw->tx, c->w->now);
    if (n > 0 && send(c->fd, c->hw->tx, (size_t)n, MSG_DONTWAIT) > 0)
        c->w->stats.bytes_sent += (uint64_t)n;
}

static void slot_release_at(void *c, uint32_t k)
{
    struct h3c *h = c;
    slot_release(h, &h->slots[k]);
}

/* Tears c down: unrecorded in-flight requests are errored (timeouts if timed_out), then it
 * reconnects, finishes or dies (see the file comment). */
static void conn_close(struct h3c *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    if (c->state != S_HANDSHAKE && c->state != S_READY)
        return;
    bool reached = c->state == S_READY;
    struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
    h2b__load_abandon(w, &c->life, &slots, timed_out, slot_release_at);
    send_close(c);
    conn_teardown(c);
    c->broken = c->draining = false;
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached);
    c->state = (enum h3state)h2b__load_state_after(next, S_READY);
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

static void conn_fail(struct h3c *c, int liberr)
{
    if (c->b.q)
        h2b_h3quic_liberr(&c->b, liberr);
    conn_close(c, false);
}

static void conn_start(struct h3c *c)
{
    ngtcp2_callbacks cb = {
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .handshake_completed = q_handshake_completed,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .extend_max_local_streams_bidi = q_extend_local_bidi,
        .get_new_connection_id = q_new_cid,
        .recv_rx_key = q_rx_key,
    };
    h2b_h3quic_callbacks(&cb);
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    h2b__load_life_connect(&c->life, w);
    c->state = S_HANDSHAKE; /* so that conn_close counts a failure */
    h2b_h3quic_init(&c->b);
    c->fd = socket(sh->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (const struct sockaddr *)&sh->addr, sh->addrlen) != 0) {
        conn_fail(c, 0);
        return;
    }
    int sz = 4 * 1024 * 1024;
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) != 0)
        setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    c->locallen = sizeof c->local;
    getsockname(c->fd, (struct sockaddr *)&c->local, &c->locallen);
    ngtcp2_path path = {
        {(struct sockaddr *)&c->local, c->locallen},
        {(struct sockaddr *)(uintptr_t)&sh->addr, sh->addrlen},
        NULL,
    };
    ngtcp2_cid dcid, scid;
    dcid.datalen = 18;
    scid.datalen = 8;
    gnutls_rnd(GNUTLS_RND_NONCE, dcid.data, dcid.datalen);
    gnutls_rnd(GNUTLS_RND_NONCE, scid.data, scid.datalen);
    ngtcp2_settings set;
    ngtcp2_settings_default(&set);
    set.initial_ts = w->now;
    uint64_t sw = (1ULL << cfg->window_bits) - 1, cw = (1ULL << cfg->conn_window_bits) - 1;
    set.max_stream_window = sw;
    set.max_window = cw;
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_streams_uni = 3;
    p.initial_max_stream_data_bidi_local = sw < (1ULL << 20) ? sw : (1ULL << 20);
    p.initial_max_stream_data_uni = 256 * 1024;
    p.initial_max_data = cw < (16ULL << 20) ? cw : (16ULL << 20);
    p.max_idle_timeout = 30 * NGTCP2_SECONDS;
    /* A benchmark talks to test servers with self-signed certificates: no verification, as in
     * h2load and the h2 engine. SNI only for names, as TLS requires. */
    const char *host = cfg->uris[0].host;
    bool numeric = strchr(host, ':') || strspn(host, "0123456789.") == strlen(host);
    if (ngtcp2_conn_client_new(&c->b.q, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &set, &p,
                               NULL, c) != 0 ||
        h2b_h3quic_tls(&c->b, false, c->hw->cred, numeric ? "localhost" : host) != 0) {
        conn_fail(c, 0);
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        conn_fail(c, 0);
        return;
    }
    c->life.last_read = w->now;
    touch(c);
}

/* Writes what c has, up to one send quantum. Returns true if it should write again. */
static bool conn_write(struct h3c *c)
{
    struct h2b__load_worker *w = c->w;
    struct h3w *hw = c->hw;
    if (c->state != S_HANDSHAKE && c->state != S_READY)
        return false;
    size_t maxpay;
    size_t quantum = h2b_h3quic_quantum(&c->b, sizeof hw->tx, TX_MAX_PKTS, &maxpay);
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    for (size_t npkts = 0; npkts < quantum; npkts++) {
        ngtcp2_ssize n = h2b_h3quic_write_pkt(&c->b, &ps.path, hw->tx, maxpay, w->now);
        if (n < 0) {
            conn_fail(c, 0); /* the reason is set */
            return false;
        }
        if (n == 0)
            return false;
        if (send(c->fd, hw->tx, (size_t)n, MSG_DONTWAIT) < 0) {
            /* a full socket buffer drops the datagram: QUIC recovers it as a loss */
            ngtcp2_conn_update_pkt_tx_time(c->b.q, w->now);
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS;
        }
        w->stats.bytes_sent += (uint64_t)n;
    }
    ngtcp2_conn_update_pkt_tx_time(c->b.q, w->now);
    return true;
}

static void conn_read(struct h3c *c)
{
    struct h2b__load_worker *w = c->w;
    struct h3w *hw = c->hw;
    for (int i = 0; i < 64 && (c->state == S_HANDSHAKE || c->state == S_READY); i++) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n =
            recvfrom(c->fd, hw->rx, sizeof hw->rx, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            conn_fail(c, 0); /* ECONNREFUSED: nobody listens on that UDP port */
            return;
        }
        w->now = h2b_clock_now_ns();
        w->stats.bytes_total += (uint64_t)n;
        c->life.last_read = w->now;
        ngtcp2_path path = {
            {(struct sockaddr *)&c->local, c->locallen},
            {(struct sockaddr *)&from, fl},
            NULL,
        };
        ngtcp2_pkt_info pi = {0};
        int rv = ngtcp2_conn_read_pkt(c->b.q, &path, &pi, hw->rx, (size_t)n, w->now);
        if (rv != 0) {
            conn_fail(c, rv == NGTCP2_ERR_DRAINING ? 0 : rv);
            return;
        }
    }
    touch(c);
}

/* Closes connections that finished their work or whose server sent GOAWAY and nothing is in
 * flight; a GOAWAYed connection that still owes requests reconnects. */
static void maybe_finish(struct h3c *c)
{
    struct h2b__load_worker *w = c->w;
    if (c->state != S_READY || c->inflight > 0)
        return;
    if (c->life.budget == 0 || !h2b__load_running(w) || c->draining) {
        ngtcp2_connection_close_error_set_application_error(&c->b.err, NGHTTP3_H3_NO_ERROR, NULL,
                                                            0);
        if (c->draining && c->life.budget > 0 && h2b__load_running(w))
            c->life.responses = c->life.responses ? c->life.responses : 1; /* GOAWAY: reconnect */
        conn_close(c, false);
    }
}

/* ---- the loop ---- */

static void run_expiry(struct h2b__load_worker *w)
{
    struct h3w *hw = hw_of(w);
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h3c *c = &hw->conns[i];
        if ((c->state != S_HANDSHAKE && c->state != S_READY) ||
            ngtcp2_conn_get_expiry(c->b.q) > w->now)
            continue;
        int rv = ngtcp2_conn_handle_expiry(c->b.q, w->now);
        if (rv != 0) {
            /* idle or handshake timeout, or too many retransmissions */
            conn_close(c, rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT);
            continue;
        }
        touch(c);
    }
}

static void conn_read_any(void *c, uint32_t events)
{
    (void)events;
    conn_read(c);
}

static enum h2b__load_phase conn_phase(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h3w *hw = w->es;
    return h2b__load_phase_of(hw->conns[i].state, S_READY);
}

/* --timeout: the request in slot k is counted; its stream is reset */
static void cancel_slot(void *c, uint32_t k)
{
    struct h3c *h = c;
    ngtcp2_conn_shutdown_stream(h->b.q, h->slots[k].stream_id, NGHTTP3_H3_REQUEST_CANCELLED);
    touch(h);
}

static void check_timeouts(struct h2b__load_worker *w)
{
    struct h3w *hw = hw_of(w);
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h3c *c = &hw->conns[i];
        struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
        enum h2b__load_phase ph = conn_phase(w, i);
        if (h2b__load_conn_expired(w, &c->life, ph, c->inflight > 0) ||
            (ph == H2B__LOAD_READY && c->inflight > 0 &&
             h2b__load_time_out(w, &c->life, &slots, cancel_slot)))
            conn_close(c, true);
    }
}

/* --total-rps: worker.c's h2b__load_release over QUIC connections */

static bool rate_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h3w *hw = w->es;
    const struct h3c *c = &hw->conns[i];
    return c->state == S_READY && !c->draining && c->inflight < c->m_eff &&
           ngtcp2_conn_get_streams_bidi_left(c->b.q) > 0;
}

static bool rate_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    return submit(&hw_of(w)->conns[i], t);
}

/* the earliest QUIC expiry (loss detection, ACK delay, idle) of a live connection */
static uint64_t deadline(const struct h2b__load_worker *w)
{
    const struct h3w *hw = w->es;
    uint64_t until = UINT64_MAX;
    for (uint32_t i = 0; i < w->nconns; i++) {
        const struct h3c *c = &hw->conns[i];
        if (c->state == S_HANDSHAKE || c->state == S_READY) {
            uint64_t e = ngtcp2_conn_get_expiry(c->b.q);
            if (e < until)
                until = e;
        }
    }
    return until;
}

static struct h2b__load_life *life(const struct h2b__load_worker *w, uint32_t i)
{
    return &hw_of(w)->conns[i].life;
}

static const struct h2b__load_life *stop(struct h2b__load_worker *w, uint32_t i)
{
    struct h3c *c = &hw_of(w)->conns[i];
    if (c->state == S_HANDSHAKE || c->state == S_READY) {
        c->life.budget = 0;
        ngtcp2_connection_close_error_set_application_error(&c->b.err, NGHTTP3_H3_NO_ERROR, NULL,
                                                            0);
        conn_close(c, false);
    }
    return &c->life;
}

/* Writes every connection that was touched; true: one still has more to send at once. */
static bool flush_touched(struct h2b__load_worker *w)
{
    struct h3w *hw = hw_of(w);
    struct h3c *list = hw->touched;
    bool again = false;
    hw->touched = NULL;
    for (struct h3c *c = list, *next; c; c = next) {
        next = c->tnext;
        c->touched = false;
        fill(c);
        if (conn_write(c)) {
            touch(c);
            again = true;
        }
        maybe_finish(c);
    }
    return again;
}

static void start(struct h2b__load_worker *w, uint32_t i)
{
    conn_start(&hw_of(w)->conns[i]);
}

static int engine_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    struct h3w *hw = calloc(1, sizeof *hw + (size_t)w->nconns * sizeof hw->conns[0]);
    if (!hw)
        return H2B_ERR_NOMEM;
    w->es = hw;
    for (uint32_t i = 0; i < w->nconns; i++) { /* first: h2b__h3_worker_free closes them */
        struct h3c *c = &hw->conns[i];
        c->w = w;
        c->hw = hw;
        c->fd = -1;
        c->free_head = NO_SLOT;
        h2b__load_life_init(&c->life, w, first_conn, i, requests);
    }
    if (gnutls_certificate_allocate_credentials(&hw->cred) != 0 ||
        !(hw->nv_off = calloc(cfg->nuris + 1, sizeof *hw->nv_off)))
        return H2B_ERR_NOMEM;
    /* the h2 request headers, as nghttp3 name/value pairs (they point into cfg) */
    for (size_t u = 0; u < cfg->nuris; u++)
        hw->nv_off[u + 1] = hw->nv_off[u] + sh->proto->nvlen[u];
    if (!(hw->nv = calloc(hw->nv_off[cfg->nuris] ? hw->nv_off[cfg->nuris] : 1, sizeof *hw->nv)))
        return H2B_ERR_NOMEM;
    for (size_t u = 0; u < cfg->nuris; u++) {
        for (size_t k = 0; k < sh->proto->nvlen[u]; k++) {
            const nghttp2_nv *src = &sh->proto->nva[u][k];
            hw->nv[hw->nv_off[u] + k] =
                (nghttp3_nv){src->name, src->value, src->namelen, src->valuelen,
                             NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE};
        }
    }
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    struct h3w *hw = w->es;
    if (!hw)
        return;
    free(hw->nv); /* nghttp3 keeps copies of the lists it was given */
    free(hw->nv_off);
    for (uint32_t i = 0; i < w->nconns; i++)
        conn_free(&hw->conns[i]); /* their TLS sessions before the credentials they use */
    if (hw->cred)
        gnutls_certificate_free_credentials(hw->cred);
    free(hw);
    w->es = NULL;
}

const struct h2b__load_engine h2b__h3_engine = {
    .tag = "h3load",
    .init = engine_init,
    .free = engine_free,
    .start = start,
    .on_event = conn_read_any,
    .flush = flush_touched,
    .after_events = run_expiry,
    .rate = {conn_phase, rate_can_take, rate_submit},
    .timeouts = check_timeouts,
    .deadline = deadline,
    .stop = stop,
    .life = life,
};
