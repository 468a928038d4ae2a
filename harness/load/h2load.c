/*
 * h2load.c - the HTTP/2 client connection (h2conn.h) for both framings, and the fast engine
 * (h2b__h2_fast_engine, h2fast.c's framing, called directly). h2nghttp2.c's engine
 * (h2b__h2_engine) frames with nghttp2's session behind struct h2b__h2_session and shares
 * everything else here: set-up, slots, pacing, reads and writes, the close, the timeouts.
 *
 * Each loop turn of the runtime (worker.c): read every ready connection into one shared
 * buffer and feed it to the framing (stream closes submit the next request in closed-loop mode),
 * then flush every connection that has output with one write each (the engine's flush hook).
 * Batching writes per turn is most of what makes this cheaper than h2load, which writes from inside
 * its callbacks; reads are level-triggered and stop at a short read, so there is no read() that
 * only returns EAGAIN. On --io uring (uring.h) a cleartext connection's input comes as bytes
 * from the ring's receive completions (on_input: conn_stream_input, the same conn_input a read
 * feeds) and conn_write's bytes go to its send buffer; TLS reads and writes as on epoll.
 *
 * Time: one clock read after epoll returns and one after each read(); every callback of that
 * batch shares it. Per request state lives in a fixed slot array per connection (sized to the
 * effective stream count once the server's SETTINGS arrive), so the request count never grows
 * memory. Slots are stream user data; a free list links the idle ones.
 *
 * Failure policy: a connection that dies records its in-flight requests as errored (their
 * latency up to now is kept). It reconnects if it had received responses since its last connect;
 * otherwise it is dead and, in -n mode, the requests it still owed count as errored (not sent).
 * A run against a dead or silent server therefore ends within --timeout/-N/-T, never hangs; so
 * does one against a server that allows 0 streams (given up after one --timeout) or whose
 * session nghttp2 ends by itself (closed at once: see session_over).
 *
 * HTTP checks: nghttp2's are off (h2nghttp2.c), so those that decide h2load's counts are made
 * once for both HTTP/2 engines, by h2conn.h's inline hooks: a :status that is not three digits, a
 * body that does not match its content-length, and the field rules of nghttp2's HTTP messaging
 * (field_ok: pseudo-headers in trailers or after regular fields, unknown or repeated
 * pseudo-headers, uppercase names, connection-specific fields) make the request a protocol error
 * (failed and errored, as h2load counts them).
 */
#include "load/h2conn.h"

#include "core/clock.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define RBUF_SIZE (64 * 1024)
#define READ_TURN (8 * RBUF_SIZE)
#define WBUF_FILL (32 * 1024) /* stop pulling frames from nghttp2 beyond this */

static void report_ready(struct h2b__load_worker *w)
{
    h2b__load_report_app(w, w->sh->ssl_ctx ? "h2" : "h2c");
}

static void watch(struct h2b__load_conn *c, uint32_t events)
{
    h2b__load_tcp_watch(c->w, c->fd, c->uio, c, events);
}

static void want_out(struct h2b__load_conn *c, bool on)
{
    if (c->want_out != on) {
        c->want_out = on;
        watch(c, EPOLLIN | (on ? EPOLLOUT : 0));
    }
}

static void slot_release(struct h2b__load_conn *c, struct slot *s)
{
    h2b__load_req_end(c->w, &s->req); /* first: s is still at hand (one instruction less) */
    s->stream_id = 0;
    s->next_free = c->free_head;
    c->free_head = (uint32_t)(s - c->slots);
    if (--c->inflight == 0)
        c->w->busy_conns--;
}

/* ---- submitting ----------------------------------------------------------------------- */

/* Submits one request on c (which has a free slot). Returns false if the session refused. */
static bool submit(struct h2b__load_conn *c, uint64_t t_intended)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    uint32_t i = c->free_head;
    struct slot *s = &c->slots[i];
    uint32_t u = h2b__load_next_uri(&c->life, sh->cfg);
    int32_t id;
    if (c->fast)
        id = h2b_h2f_submit(c->fast, i, u);
    else
        id = c->hw->ng->submit(c, s, u);
    if (id < 0) {
        c->draining = true; /* stream ids exhausted or session closing: reconnect */
        return false;
    }
    c->free_head = s->next_free;
    c->by_id[((uint32_t)id >> 1) & c->id_mask] = s;
    /* fast: the HEADERS frame is in the output buffer, written before this loop turn ends */
    h2b__load_req_begin(w, &s->req, t_intended, c->fast ? w->now : 0);
    s->t_first = 0;
    s->body_off = 0;
    s->content_length = -1;
    s->body_recv = 0;
    s->block = 0;
    s->grpc_hdr = H2B_LOAD_GRPC_NONE;
    s->stream_id = id;
    if (c->inflight++ == 0)
        w->busy_conns++;
    mark_dirty(c);
    return true;
}

/* Closed loop: keep m_eff requests in flight while the budget lasts. */
static uint64_t due_time(const struct h2b__load_conn *c)
{
    const struct h2b__load_shared *sh = c->w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    if (cfg->nscript) {
        /* the script in order; under -D it starts over, each round at the last line's offset */
        uint64_t round = c->paced_n / cfg->nscript;
        return c->t_pace0 + round * cfg->script_ns[cfg->nscript - 1] +
               cfg->script_ns[c->paced_n % cfg->nscript];
    }
    return c->t_pace0 + (uint64_t)((double)c->paced_n * 1e9 / cfg->rps);
}

/* --rps / --timing-script-file: release what is due on c, each with its intended time as the
 * latency origin (a request that waits for a free stream keeps it: no coordinated omission). */
static void pace(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    while (c->state == CONN_READY && !c->draining && c->inflight < c->m_eff && c->life.budget > 0 &&
           h2b__load_running(w)) {
        uint64_t t = due_time(c);
        if (t > w->now || (sh->t_end && t >= sh->t_end))
            break;
        if (sh->cfg->nscript)
            c->life.uri_next = (uint32_t)(c->paced_n % sh->cfg->nscript);
        if (!submit(c, t))
            break;
        c->paced_n++;
        h2b__load_spend(&c->life);
    }
    if (c->state == CONN_READY && c->life.budget > 0 && c->inflight < c->m_eff) {
        uint64_t t = due_time(c);
        if (t < w->next_pace)
            w->next_pace = t;
    }
}

static void fill(struct h2b__load_conn *c)
{
    if (c->w->sh->paced) {
        pace(c);
        return;
    }
    if (c->w->sh->rate_mode)
        return; /* --total-rps: release() decides when requests go out */
    while (c->state == CONN_READY && !c->draining && c->inflight < c->m_eff && c->life.budget > 0 &&
           h2b__load_running(c->w)) {
        if (!submit(c, c->w->now))
            break;
        h2b__load_spend(&c->life);
    }
}

/* s's stream ended (error_code 0: normally). Frees the slot and tops the connection up. */
void h2b__h2_stream_close(struct h2b__load_conn *c, struct slot *s, uint32_t error_code)
{
    if (!s->req.recorded) {
        enum h2b__load_outcome how = OUT_RESPONSE;
        if (error_code != NGHTTP2_NO_ERROR)
            how = OUT_RESET; /* RST_STREAM, REFUSED_STREAM after GOAWAY, or a stream error */
        else if (s->req.status == 0 || !body_complete(c, s))
            how = OUT_PROTOCOL; /* no final :status, or a body shorter than content-length */
        else if (c->w->sh->grpc)
            grpc_end(c, s);
        finish_request(c, s, how);
        if (s->req.status)
            c->life.responses++;
    }
    slot_release(c, s);
    fill(c);
}

void h2b__h2_settings(struct h2b__load_conn *c, uint32_t server_max)
{
    struct h2b__load_worker *w = c->w;
    uint32_t m = w->sh->cfg->streams;
    if (server_max < m)
        m = server_max;
    if (server_max < w->stats.server_max_streams)
        w->stats.server_max_streams = server_max;
    /* Slots are stream user data, so they can only move while no stream is open: at the first
     * SETTINGS, or when a later one raises the limit of an idle connection (a server that
     * started at 0 streams). */
    bool regrow = c->state == CONN_READY && c->inflight == 0 && c->nslots < m;
    if (c->state == CONN_SETTINGS || regrow) {
        if (c->nslots < m || !c->by_id) {
            uint32_t n = 4;
            while (n < 4 * (uint64_t)m && n < (1U << 20))
                n *= 2;
            struct slot *ns = realloc(c->slots, (size_t)(m ? m : 1) * sizeof(*ns));
            struct slot **nb = ns ? calloc(n, sizeof(*nb)) : NULL;
            if (!nb) {
                if (ns)
                    c->slots = ns;
                c->broken = true;
                return;
            }
            c->slots = ns;
            if (c->fast && h2b_h2f_slots(c->fast, m) != H2B_OK) {
                free(nb);
                c->broken = true;
                return;
            }
            c->nslots = m;
            free(c->by_id);
            c->by_id = nb;
            c->id_mask = n - 1;
        }
        memset(c->slots, 0, (size_t)c->nslots * sizeof(*c->slots));
        c->free_head = c->nslots ? 0 : NO_SLOT;
        for (uint32_t i = 0; i < c->nslots; i++)
            c->slots[i].next_free = i + 1 < c->nslots ? i + 1 : NO_SLOT;
        if (c->state == CONN_SETTINGS) {
            w->stats.conns_ok++;
            report_ready(w);
            if (c->t_pace0 == 0) {
                c->t_pace0 = w->now;
                w->next_pace = w->now;
            }
        }
        c->state = CONN_READY;
        c->m_eff = m;
        w->all_busy = false;
    } else {
        /* a later SETTINGS may lower (or raise, up to the slots we have) the limit */
        c->m_eff = m < c->nslots ? m : c->nslots;
    }
    if (c->m_eff == 0)
        c->t_blocked = w->now; /* check_timeouts gives up on it after the request timeout */
    if (c->m_eff < w->stats.streams_effective)
        w->stats.streams_effective = c->m_eff;
}

static const char *const frame_names[] = {"DATA",          "HEADERS",      "PRIORITY", "RST_STREAM",
                                          "SETTINGS",      "PUSH_PROMISE", "PING",     "GOAWAY",
                                          "WINDOW_UPDATE", "CONTINUATION"};

/* -v: one line per frame, nghttp's shape ("[  0.012] recv SETTINGS frame <length=6, ...>") */
void h2b__h2_verbose_frame(const struct h2b__load_conn *c, const char *dir,
                           const nghttp2_frame_hd *hd)
{
    const struct h2b__load_worker *w = c->w;
    FILE *f = w->sh->cfg->trace;
    if (!f)
        return;
    double t = (double)(h2b_clock_now_ns() - w->sh->t0) / 1e9;
    if (hd->type < sizeof(frame_names) / sizeof(frame_names[0]))
        fprintf(f, "[%3d.%03d] [conn %u] %s %s frame <length=%zu, flags=0x%02x, stream_id=%d>\n",
                (int)t, (int)((t - (int)t) * 1000), c->life.index, dir, frame_names[hd->type],
                hd->length, hd->flags, hd->stream_id);
    else
        fprintf(f,
                "[%3d.%03d] [conn %u] %s frame of type %u <length=%zu, flags=0x%02x, "
                "stream_id=%d>\n",
                (int)t, (int)((t - (int)t) * 1000), c->life.index, dir, hd->type, hd->length,
                hd->flags, hd->stream_id);
}

/* ---- h2fast.c's callbacks (--engine fast): the same hooks, the slot given by index ------ */

static struct slot *fast_slot(struct h2b__load_conn *c, uint32_t slot)
{
    return slot == H2B_H2F_NO_SLOT || slot >= c->nslots ? NULL : &c->slots[slot];
}

static void fast_begin_headers(void *u, uint32_t slot)
{
    struct h2b__load_conn *c = u;
    hook_begin_headers(c, fast_slot(c, slot));
}

static int fast_header(void *u, uint32_t slot, const uint8_t *name, size_t namelen,
                       const uint8_t *value, size_t valuelen)
{
    struct h2b__load_conn *c = u;
    return hook_header(c, fast_slot(c, slot), name, namelen, value, valuelen);
}

static void fast_header_bytes(void *u, size_t n)
{
    struct h2b__load_conn *c = u;
    if (h2b__load_measuring(c->w))
        c->w->stats.bytes_headers += n;
}

static int fast_data(void *u, uint32_t slot, const uint8_t *p, size_t n)
{
    struct h2b__load_conn *c = u;
    return hook_data(c, fast_slot(c, slot), p, n);
}

static void fast_settings(void *u)
{
    struct h2b__load_conn *c = u;
    h2b__h2_settings(c, c->fast->peer_max_streams);
}

static void fast_goaway(void *u)
{
    struct h2b__load_conn *c = u;
    c->draining = true;
}

static void fast_stream_close(void *u, uint32_t slot, uint32_t code)
{
    struct h2b__load_conn *c = u;
    struct slot *s = fast_slot(c, slot);
    if (s && s->stream_id != 0) {
        mark_dirty(c); /* RST_STREAM, WINDOW_UPDATE or the next request may be queued */
        h2b__h2_stream_close(c, s, code);
    }
}

static void fast_frame(void *u, bool sent, uint8_t type, uint8_t flags, uint32_t length,
                       int32_t sid)
{
    struct h2b__load_conn *c = u;
    nghttp2_frame_hd hd = {.length = length, .stream_id = sid, .type = type, .flags = flags};
    h2b__h2_verbose_frame(c, sent ? "send" : "recv", &hd);
}

/* -v adds the frame hook; without it h2fast.c skips the call (one list for both) */
#define FAST_CB                                                                                    \
    .begin_headers = fast_begin_headers, .header = fast_header, .header_bytes = fast_header_bytes, \
    .data = fast_data, .settings = fast_settings, .goaway = fast_goaway,                           \
    .stream_close = fast_stream_close
static const struct h2b_h2f_cb fast_cb = {FAST_CB};
static const struct h2b_h2f_cb fast_cb_verbose = {FAST_CB, .frame = fast_frame};
#undef FAST_CB

/* ---- connection life ------------------------------------------------------------------ */

static void conn_start(struct h2b__load_conn *c);

/* The session, TLS and socket of c go (the slots and buffers stay for a reconnect). */
static void conn_teardown(struct h2b__load_conn *c)
{
    if (c->session)
        c->hw->ng->del(c);
    h2b__load_tcp_close(&c->fd, &c->ssl, &c->uio);
    c->woff = c->wlen = 0;
}

static void slot_release_at(void *c, uint32_t k)
{
    struct h2b__load_conn *h = c;
    slot_release(h, &h->slots[k]);
}

/* Tears c down. Unrecorded in-flight requests are errored (timeouts if timed_out). Then the
 * connection reconnects, finishes or dies (see the file comment). */
static void conn_close(struct h2b__load_conn *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    bool was_open = c->state >= CONN_CONNECTING && c->state <= CONN_READY;
    if (!was_open)
        return;
    bool reached_h2 = c->state == CONN_READY;
    struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
    h2b__load_abandon(w, &c->life, &slots, timed_out, slot_release_at);
    conn_teardown(c);
    c->want_out = false;
    c->broken = false;
    c->timed_out = false;
    c->draining = false;
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached_h2);
    c->state = (enum conn_state)h2b__load_state_after(next, CONN_READY);
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

static void conn_fail(struct h2b__load_conn *c)
{
    conn_close(c, false);
}

/* nghttp2 has ended the session by itself (it sent GOAWAY for a protocol error, e.g. a
 * PUSH_PROMISE we disabled, or the server's GOAWAY left no stream): nothing more can be read
 * or sent, so the connection must go, with whatever it still had in flight. */
static bool session_over(const struct h2b__load_conn *c)
{
    if (c->fast)
        return c->fast->dead;
    return c->session && c->hw->ng->over(c);
}

static void session_start(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b_load_config *cfg = w->sh->cfg;
    if (c->fast) {
        struct h2b_h2f_settings st = {
            .initial_window = (1U << cfg->window_bits) - 1,
            .conn_window = (1U << cfg->conn_window_bits) - 1,
            .header_table = cfg->header_table_size,
            .encoder_table = cfg->encoder_table_size,
            .max_frame = cfg->max_frame_size,
        };
        if (h2b_h2f_start(c->fast, &st) != H2B_OK) {
            conn_fail(c);
            return;
        }
    } else if (c->hw->ng->start(c) != 0) {
        conn_fail(c);
        return;
    }
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    if (c->ssl)
        h2b_hist_record(w->stats.tls, w->now - c->t_tcp);
    c->life.responses = 0;
    c->state = CONN_SETTINGS;
    c->life.last_read = w->now;
    h2b__load_tcp_ready(w, c->fd, c->ssl, c->uio, c);
    mark_dirty(c);
}

/* The connect completed or the TLS handshake moved on; over TLS the server must choose h2. */
static void setup(struct h2b__load_conn *c)
{
    uint32_t ev;
    int rv = h2b__load_tcp_setup(c->w, c->fd, &c->ssl, &c->t_tcp, "h2", false, &ev);
    if (rv < 0) {
        conn_fail(c);
    } else if (rv == 0) {
        if (c->ssl)
            h2b__load_report_tls(c->w, c->ssl);
        session_start(c);
    } else {
        c->state = CONN_HANDSHAKE;
        watch(c, ev);
    }
}

static void conn_start(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    h2b__load_life_connect(&c->life, w);
    c->state = CONN_CONNECTING; /* so that conn_close counts a failure */
    int rv = h2b__load_tcp_open(w, c, &c->fd, &c->uio);
    if (rv < 0)
        conn_fail(c);
    else if (rv == 0)
        setup(c);
}

/* ---- I/O ------------------------------------------------------------------------------ */

/* Writes up to len bytes and counts them: the bytes taken (0: the socket is full), or -1 when
 * the connection failed (it is closed). */
static ssize_t conn_write(struct h2b__load_conn *c, const uint8_t *buf, size_t len)
{
    ssize_t n = h2b__load_conn_send(c->fd, c->ssl, c->uio, buf, len);
    if (n < 0) {
        conn_fail(c);
        return -1;
    }
    if (h2b__load_measuring(c->w))
        c->w->stats.bytes_sent += (uint64_t)n;
    return n;
}

static void conn_flush(struct h2b__load_conn *c);

/* n bytes of input at p (n > 0), or the end (H2B__LOAD_EOF, H2B__LOAD_EIO), handed to the
 * framing. Returns false when c was closed (or must stop reading). */
static bool conn_input(struct h2b__load_conn *c, const uint8_t *p, ssize_t n)
{
    struct h2b__load_worker *w = c->w;
    w->now = h2b_clock_now_ns();
    if (n < 0) {
        conn_fail(c);
        return false;
    }
    if (h2b__load_measuring(w))
        w->stats.bytes_total += (uint64_t)n;
    c->life.last_read = w->now;
    if (c->fast) {
        if (h2b_h2f_recv(c->fast, p, (size_t)n) < 0) {
            /* a connection error: GOAWAY(code) goes out (best effort), then the end */
            if (c->fast->error != 0 && !c->fast->nomem)
                w->stats.conn_errors++;
            conn_flush(c);
            if (c->state >= CONN_SETTINGS && c->state <= CONN_READY)
                conn_fail(c);
            return false;
        }
        if (c->broken) {
            conn_close(c, c->timed_out);
            return false;
        }
        return true;
    }
    ssize_t rv = c->hw->ng->recv(c, p, (size_t)n);
    if (rv < 0 || c->broken) {
        conn_close(c, c->timed_out);
        return false;
    }
    if (session_over(c)) {
        conn_fail(c);
        return false;
    }
    return true;
}

static void conn_read(struct h2b__load_conn *c)
{
    /* a turn reads at most READ_TURN bytes: eight full reads in cleartext, 32 TLS records */
    for (size_t total = 0; total < READ_TURN;) {
        ssize_t n = h2b__load_tcp_recv(c->fd, c->ssl, c->hw->rbuf, RBUF_SIZE);
        if (n == 0)
            break;
        if (!conn_input(c, c->hw->rbuf, n))
            return;
        total += (size_t)n;
        /* TLS may hold bytes that epoll cannot see; a plain short read is the end */
        if (h2b__load_tcp_drained(c->ssl, n, RBUF_SIZE))
            break;
    }
    if (c->fast ? h2b_h2f_want_write(c->fast) : c->hw->ng->want_write(c))
        mark_dirty(c);
}

/* Sends what nghttp2 has queued: pull frames into wbuf up to WBUF_FILL, write once, repeat
 * while the socket takes everything. */
static void conn_flush(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    if (c->fast) {
        /* everything of this turn is in one buffer: one write */
        struct h2b_h2f *f = c->fast;
        if (f->olen > f->ooff) {
            ssize_t n = conn_write(c, f->out + f->ooff, f->olen - f->ooff);
            if (n < 0)
                return;
            f->ooff += (size_t)n;
        }
        want_out(c, f->olen > f->ooff);
        if (f->dead)
            return; /* conn_read ends it */
        if (c->state == CONN_READY && c->inflight == 0 &&
            (c->life.budget == 0 || c->draining || !h2b__load_running(w)) && f->olen == f->ooff)
            conn_close(c, false);
        return;
    }
    for (;;) {
        if (c->wlen == c->woff) {
            c->woff = c->wlen = 0;
            while (c->wlen < WBUF_FILL) {
                const uint8_t *data;
                ssize_t n = c->hw->ng->send(c, &data);
                if (n < 0) {
                    conn_fail(c);
                    return;
                }
                if (n == 0)
                    break;
                if (c->wlen + (size_t)n > c->wcap) {
                    size_t cap = c->wcap * 2;
                    while (cap < c->wlen + (size_t)n)
                        cap *= 2;
                    uint8_t *nb = realloc(c->wbuf, cap);
                    if (!nb) {
                        conn_fail(c);
                        return;
                    }
                    c->wbuf = nb;
                    c->wcap = cap;
                }
                memcpy(c->wbuf + c->wlen, data, (size_t)n);
                c->wlen += (size_t)n;
            }
            if (c->wlen == 0) {
                want_out(c, false);
                break;
            }
        }
        ssize_t n = conn_write(c, c->wbuf + c->woff, c->wlen - c->woff);
        if (n < 0)
            return;
        c->woff += (size_t)n;
        if (c->woff < c->wlen) {
            want_out(c, true);
            break;
        }
    }
    if (session_over(c))
        conn_fail(c);
    else if (c->state == CONN_READY && c->inflight == 0 &&
             (c->life.budget == 0 || c->draining || !h2b__load_running(w)) &&
             !c->hw->ng->want_write(c))
        conn_close(c, false);
}

/* After input or an EPOLLOUT on a connection with a session: the next requests, then a flush. */
static void conn_progress(struct h2b__load_conn *c)
{
    fill(c);
    if (c->inflight == 0)
        mark_dirty(c); /* conn_flush closes a connection that has finished its work */
    /* Send the next requests now rather than after the whole batch: the server gets work
     * while we read the other connections (same number of writes; the end-of-turn pass
     * finds nothing left). */
    if (c->dirty)
        conn_flush(c);
}

static void conn_event(struct h2b__load_conn *c, uint32_t events)
{
    switch (c->state) {
    case CONN_CONNECTING:
    case CONN_HANDSHAKE:
        c->w->now = h2b_clock_now_ns(); /* connect times are per connection, not per batch */
        setup(c);
        return;
    case CONN_SETTINGS:
    case CONN_READY:
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            conn_read(c);
        if (c->state < CONN_SETTINGS || c->state > CONN_READY)
            return;
        if (events & EPOLLOUT)
            mark_dirty(c);
        conn_progress(c);
        return;
    default:
        return;
    }
}

/* io_uring: input of a streaming connection (the engine's on_input) */
static void conn_stream_input(struct h2b__load_conn *c, const uint8_t *p, ssize_t n)
{
    if (c->state < CONN_SETTINGS || c->state > CONN_READY || !conn_input(c, p, n))
        return;
    if (c->fast ? h2b_h2f_want_write(c->fast) : c->hw->ng->want_write(c))
        mark_dirty(c);
    conn_progress(c);
}

/* ---- timers --------------------------------------------------------------------------- */

/* --timeout: the request in slot k is counted; its stream is reset */
static void cancel_slot(void *c, uint32_t k)
{
    struct h2b__load_conn *h = c;
    if (h->fast)
        h2b_h2f_reset(h->fast, k, NGHTTP2_CANCEL); /* closes the stream: slot free */
    else
        h->hw->ng->cancel(h, h->slots[k].stream_id);
    mark_dirty(h);
}

void h2b__h2_timeouts(struct h2b__load_worker *w)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    uint64_t now = w->now;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_conn *c = &((struct h2w *)w->es)->conns[i];
        if (h2b__load_conn_expired(w, &c->life, h2b__load_phase_of(c->state, CONN_READY),
                                   c->inflight > 0)) {
            conn_close(c, true);
            continue;
        }
        if (c->state != CONN_READY)
            continue;
        if (c->m_eff == 0 && c->inflight == 0 && c->life.budget > 0) {
            /* the server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0) and has not
             * raised the limit within a request timeout: what this connection owes cannot be
             * sent */
            uint64_t limit = cfg->timeout_ns ? cfg->timeout_ns : cfg->conn_inactivity_timeout_ns;
            if (limit && now - c->t_blocked >= limit)
                conn_close(c, true);
            continue;
        }
        if (c->inflight == 0)
            continue;
        struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
        if (h2b__load_time_out(w, &c->life, &slots, cancel_slot))
            conn_close(c, true);
    }
}

/* ---- the engine's hooks (worker.h) ------------------------------------------------- */

static struct h2b__load_conn *conn_at(const struct h2b__load_worker *w, uint32_t i)
{
    return &((struct h2w *)w->es)->conns[i];
}

void h2b__h2_start(struct h2b__load_worker *w, uint32_t i)
{
    conn_start(conn_at(w, i));
}

void h2b__h2_on_event(void *c, uint32_t events)
{
    conn_event(c, events);
}

void h2b__h2_on_input(void *c, const uint8_t *p, ssize_t n)
{
    conn_stream_input(c, p, n);
}

/* Pop, never index: a flush can put connections (itself included: a stream closed by our
 * RST_STREAM submits the next request) back on the list, and "on the list iff c->dirty" is
 * what bounds it by nconns. */
bool h2b__h2_flush(struct h2b__load_worker *w)
{
    struct h2w *hw = w->es;
    while (hw->ndirty > 0) {
        struct h2b__load_conn *c = hw->dirty[--hw->ndirty];
        c->dirty = false;
        if (c->state >= CONN_SETTINGS && c->state <= CONN_READY)
            conn_flush(c);
    }
    return false;
}

enum h2b__load_phase h2b__h2_phase(const struct h2b__load_worker *w, uint32_t i)
{
    return h2b__load_phase_of(conn_at(w, i)->state, CONN_READY);
}

bool h2b__h2_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h2b__load_conn *c = conn_at(w, i);
    return c->state == CONN_READY && !c->draining && c->inflight < c->m_eff;
}

bool h2b__h2_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    return submit(conn_at(w, i), t);
}

/* after the release: --rps/--timing-script-file pacing */
void h2b__h2_pace(struct h2b__load_worker *w)
{
    if (!w->sh->paced || w->now < w->next_pace)
        return;
    w->next_pace = UINT64_MAX;
    for (uint32_t i = 0; i < w->nconns; i++)
        pace(conn_at(w, i));
}

uint64_t h2b__h2_deadline(const struct h2b__load_worker *w)
{
    return w->sh->paced ? w->next_pace : UINT64_MAX;
}

struct h2b__load_life *h2b__h2_life(const struct h2b__load_worker *w, uint32_t i)
{
    return &conn_at(w, i)->life;
}

const struct h2b__load_life *h2b__h2_stop(struct h2b__load_worker *w, uint32_t i)
{
    const struct h2b__load_shared *sh = w->sh;
    struct h2b__load_conn *c = conn_at(w, i);
    uint64_t stop_at = sh->t_end && sh->t_end < w->now ? sh->t_end : w->now;
    /* paced: due before the end but never sent (the backlog a stall left) */
    while (sh->paced && c->t_pace0 && c->life.budget > 0 && due_time(c) < stop_at) {
        if (due_time(c) >= sh->t_measure)
            w->stats.unsent++;
        c->paced_n++;
        h2b__load_spend(&c->life);
    }
    if (c->state >= CONN_CONNECTING && c->state <= CONN_READY) {
        c->life.budget = 0; /* no reconnect, nothing owed */
        conn_close(c, false);
    }
    return &c->life;
}

/* --engine fast: each URI's header list, for the per-connection encoder in h2fast.c */
static int build_reqs(struct h2w *hw, const struct h2b__load_shared *sh)
{
    size_t n = sh->cfg->nuris;
    if (n > UINT32_MAX || !(hw->reqs = calloc(n, sizeof(*hw->reqs))))
        return H2B_ERR_NOMEM;
    for (size_t u = 0; u < n; u++) {
        hw->reqs[u].nva = sh->proto->nva[u];
        hw->reqs[u].nvlen = sh->proto->nvlen[u];
    }
    return H2B_OK;
}

void h2b__h2_free(struct h2b__load_worker *w)
{
    struct h2w *hw = w->es;
    if (!hw)
        return;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_conn *c = &hw->conns[i];
        conn_teardown(c);
        if (c->fast) {
            h2b_h2f_free(c->fast);
            free(c->fast);
        }
        free(c->slots);
        free(c->by_id);
        free(c->wbuf);
    }
    h2b_pool_free(&hw->pool); /* after every session of this worker is deleted */
    free(hw->reqs);
    free(hw->dirty);
    free(hw->rbuf);
    free(hw);
    w->es = NULL;
}

int h2b__h2_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests,
                 const struct h2b__h2_session *ng)
{
    bool fast = ng == NULL;
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    struct h2w *hw = calloc(1, sizeof *hw + (size_t)w->nconns * sizeof hw->conns[0]);
    if (!hw)
        return H2B_ERR_NOMEM;
    w->es = hw;
    hw->ng = ng;
    h2b_pool_init(&hw->pool);
    hw->mem = h2b_pool_nghttp2_mem(&hw->pool);
    for (uint32_t i = 0; i < w->nconns; i++) { /* first: engine_free closes them */
        struct h2b__load_conn *c = &hw->conns[i];
        c->w = w;
        c->hw = hw;
        c->fd = -1;
        c->free_head = NO_SLOT;
        h2b__load_life_init(&c->life, w, first_conn, i, requests);
    }
    hw->dirty = calloc(w->nconns ? w->nconns : 1, sizeof(*hw->dirty));
    hw->rbuf = malloc(RBUF_SIZE);
    if (!hw->dirty || !hw->rbuf || (fast && build_reqs(hw, sh) != H2B_OK))
        return H2B_ERR_NOMEM;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_conn *c = &hw->conns[i];
        c->wcap = 4096; /* grows while a burst needs it */
        c->wbuf = malloc(c->wcap);
        if (!c->wbuf)
            return H2B_ERR_NOMEM;
        if (fast) {
            c->fast = malloc(sizeof(*c->fast));
            if (!c->fast)
                return H2B_ERR_NOMEM;
            if (h2b_h2f_init(c->fast, cfg->verbose ? &fast_cb_verbose : &fast_cb, c, &hw->mem,
                             hw->reqs, (uint32_t)cfg->nuris, cfg->body, cfg->body_len) != H2B_OK) {
                free(c->fast);
                c->fast = NULL;
                return H2B_ERR_NOMEM;
            }
        }
    }
    return H2B_OK;
}

static int init_fast(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    return h2b__h2_init(w, first_conn, requests, NULL);
}

const struct h2b__load_engine h2b__h2_fast_engine = {H2B__H2_HOOKS, .init = init_fast,
                                                     .free = h2b__h2_free};
