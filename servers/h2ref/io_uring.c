/*
 * io_uring.c - the server's io_uring backend (serve --io uring): one ring per worker, the same
 * connections and connection core as the epoll loop in server.c (io.h is the seam).
 *
 * One io_uring_submit_and_wait_timeout per loop turn submits everything the last turn queued and
 * waits for the next completion or timer (the timeout is the ring's own: no timer fd, no timeout
 * SQE). The completions of a turn are handled in batches:
 *   - cleartext receives are multishot into a provided-buffer ring (one per worker, BUF_COUNT x
 * BUF_SIZE: 128 x 8 KiB): each completion hands its buffer to h2b_conn_recv (the core copies what
 * it keeps) and goes straight back to the buffer ring. -ENOBUFS (the ring ran dry) and any other
 * end of a multishot (no IORING_CQE_F_MORE) re-arm the receive, after this batch returned its
 * buffers;
 *   - sends: at most one in flight per connection (ordering). One iovec goes in the SQE itself;
 *     several are copied with their msghdr into the worker's stage, which only has to hold them
 *     until they are submitted (IORING_FEAT_SUBMIT_STABLE), so no connection keeps 64 iovecs of
 *     its own (RSS per connection 4.08 -> 3.04-3.14 KiB in the budgets). The bytes they reference
 *     stay put until h2b_conn_sent; a short send reports what went and submits the rest with
 *     whatever was queued meanwhile;
 *   - TLS connections stay readiness-based: a multishot IORING_OP_POLL_ADD (edge-triggered) feeds
 *     the same handler as epoll's events, with the synchronous SSL_read/SSL_write path;
 *   - the listener (one worker) takes a multishot accept; the accepting thread's handoff wake is
 *     a read of the worker's eventfd through the ring.
 * A full submission queue is submitted and the SQE retried, never dropped; the completion queue
 * is 16 times the submission queue (IORING_SETUP_CQSIZE) and the kernel must keep what does not
 * fit (IORING_FEAT_NODROP; peeking flushes it).
 *
 * A connection closed with operations in flight has them cancelled; its connection core (which
 * owns the bytes a send reads), socket and struct are freed at its last completion, or when the
 * ring is torn down. Every allocation is per worker or per connection, at adopt: none per request.
 *
 * IORING_SETUP_COOP_TASKRUN: completions are run when the worker enters the kernel (it does every
 * turn), not pushed to it by interrupting it; without it, `perf record` of a worker at 10x1 showed
 * 57 % of its samples in native_queued_spin_lock_slowpath, and server CPU per request was 1.0 to
 * 1.7 times epoll's; with it 0.7 to 1.06 times (docs/measurements/2026-12-05-uring-vs-epoll.md).
 *
 * Rejected: registered files and fixed buffers for sends (the response bytes live in the core's
 * pooled blocks and static bodies, not in a registered region), SQPOLL (a kernel thread spinning
 * per worker on a shared machine), IORING_SETUP_SINGLE_ISSUER (the ring is created by the thread
 * that decides on the fallback and run by the worker).
 */
#include "h2ref/io.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef H2B_HAVE_URING

#include "core/clock.h"
#include "h2ref/outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include "core/uring.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#define SQ_ENTRIES 256
#define STAGE_SIZE (32 * 1024) /* h2b__uring.stage: 30 sends of H2B_OUT_IOV_MAX iovecs at least */
#define CQ_ENTRIES (SQ_ENTRIES * 16)
#define BUF_COUNT 128 /* provided receive buffers per worker (a power of 2) */
#define BUF_SIZE (8 * 1024)
#define HOLD_MAX 8 /* held input that pauses a connection's receive (epoll's 64 KiB read turn) */
#define BUF_GROUP 0
#define CQE_BATCH 256
#define CQE_ROUNDS 16 /* batches per turn: timers and dirty connections run in between */

/* What a completion is for: the low bits of its user_data (sconn and worker are malloc'ed, so
 * at least 8-aligned). 0: a cancel's own completion, ignored. */
enum { OP_RECV = 1, OP_SEND = 2, OP_POLL = 3, OP_ACCEPT = 4, OP_WAKE = 5, OP_MASK = 7 };

struct h2b__uconn {
    struct sconn *owner;
    struct h2b_list zlink;        /* the ring's zombies, once buried with ops in flight */
    struct h2b_list slink;        /* the ring's starved list (ENOBUFS) */
    struct h2b_list hlink;        /* the ring's holders, while input is held */
    uint64_t send_turn;           /* the loop turn that queued the send in flight */
    unsigned hhead, htail, nheld; /* held input: a FIFO of buffer ids (h2b__uring.next) */
    bool recv_armed, send_busy, poll_armed, buried;
    bool paused;  /* receive cancelled while input is held; re-armed once it is all in */
    bool starved; /* on the starved list */
};

struct h2b__uring {
    struct h2b_uring io; /* the ring and BUF_COUNT x BUF_SIZE receive buffers (core/uring.h) */
    size_t staged;       /* bytes of stage in use */
    /* the msghdr and iovecs of the sends queued since the last submit (the core's array may
     * change before then; once submitted the kernel has its own copy: IORING_FEAT_SUBMIT_STABLE) */
    _Alignas(struct msghdr) uint8_t stage[STAGE_SIZE];
    uint64_t wake; /* the eventfd's counter, read through the ring */
    unsigned held; /* buffers held by connections */
    uint64_t turn; /* loop turns: SQEs queued in turn T go to the kernel as turn T + 1 begins */
    uint16_t next[BUF_COUNT]; /* held input: the next buffer of the same connection */
    uint32_t len[BUF_COUNT];  /* held input: the bytes in the buffer */
    struct h2b_list starved;  /* connections whose receive ended on ENOBUFS, of uconn.slink */
    struct h2b_list holders;  /* connections holding input, of uconn.hlink */
    bool accept_want, accept_armed;
    struct h2b_list grave;   /* closed this turn, of sconn.link: freed at its end (bury) */
    struct h2b_list zombies; /* closed connections waiting for their last completion */
};

/* server.c's operations (io.h): the connection core and the worker's turn */
static inline const struct h2b__core *ops(const struct worker *w)
{
    return w->srv->core;
}

/* The next SQE; a full queue is submitted first (never dropped). */
static struct io_uring_sqe *get_sqe(struct h2b__uring *r)
{
    return h2b_uring_sqe(&r->io);
}

static void set_data(struct io_uring_sqe *sqe, const void *p, unsigned op)
{
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)p | op);
}

static bool busy(const struct h2b__uconn *u)
{
    return u->recv_armed || u->send_busy || u->poll_armed;
}

/* Frees a closed connection whose operations have all completed. */
static void final_free(struct sconn *sc)
{
    h2b_conn_del(sc->conn);
    close(sc->fd);
    free(sc->u);
    free(sc);
}

static void arm_recv(struct sconn *sc)
{
    struct io_uring_sqe *sqe = get_sqe(sc->w->ring);
    io_uring_prep_recv_multishot(sqe, sc->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
    set_data(sqe, sc, OP_RECV);
    sc->u->recv_armed = true;
}

static void arm_poll(struct sconn *sc)
{
    struct io_uring_sqe *sqe = get_sqe(sc->w->ring);
    io_uring_prep_poll_multishot(sqe, sc->fd, POLLIN | POLLOUT | POLLRDHUP); /* edge-triggered */
    set_data(sqe, sc, OP_POLL);
    sc->u->poll_armed = true;
}

static void arm_wake(struct worker *w)
{
    struct io_uring_sqe *sqe = get_sqe(w->ring);
    io_uring_prep_read(sqe, w->evfd, &w->ring->wake, sizeof w->ring->wake, 0);
    set_data(sqe, w, OP_WAKE);
}

static void arm_accept(struct worker *w)
{
    struct io_uring_sqe *sqe = get_sqe(w->ring);
    io_uring_prep_multishot_accept(sqe, w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    set_data(sqe, w, OP_ACCEPT);
    w->ring->accept_armed = true;
}

static void cancel(struct h2b__uring *r, const void *p, unsigned op)
{
    struct io_uring_sqe *sqe = get_sqe(r);
    io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)p | op, 0);
    io_uring_sqe_set_data64(sqe, 0);
}

/* Room in r->stage for a msghdr and cnt iovecs. A full stage is submitted first: what it held
 * is then the kernel's (every SQE queued is consumed; -EBUSY flushes the overflowed
 * completions first, as h2b_uring_sqe does). */
static struct msghdr *stage(struct h2b__uring *r, size_t cnt)
{
    size_t need = sizeof(struct msghdr) + cnt * sizeof(struct iovec);
    if (r->staged + need > STAGE_SIZE) {
        while (io_uring_sq_ready(&r->io.ring) > 0) {
            if (io_uring_submit(&r->io.ring) == -EBUSY)
                io_uring_get_events(&r->io.ring);
        }
        r->staged = 0;
    }
    struct msghdr *mh = (struct msghdr *)(r->stage + r->staged);
    r->staged += need;
    return mh;
}

/* Output of a cleartext connection: one send in flight, the rest waits for its completion.
 * TLS goes through server.c's synchronous SSL_write path. */
static void uflush(struct sconn *sc)
{
    if (sc->ssl) {
        ops(sc->w)->conn_flush(sc);
        return;
    }
    struct h2b__uconn *u = sc->u;
    if (sc->closed || sc->lingering || u->send_busy)
        return;
    const struct iovec *iov;
    int cnt = h2b_conn_output(sc->conn, &iov);
    if (cnt < 0) {
        ops(sc->w)->conn_close(sc);
        return;
    }
    if (cnt == 0) {
        if (h2b_conn_done(sc->conn))
            ops(sc->w)->conn_finish(sc);
        return;
    }
    struct io_uring_sqe *sqe;
    if (cnt == 1) { /* the SQE holds the address and length */
        sqe = get_sqe(sc->w->ring);
        io_uring_prep_send(sqe, sc->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
    } else {
        struct msghdr *mh = stage(sc->w->ring, (size_t)cnt);
        struct iovec *copy = (struct iovec *)(mh + 1);
        memcpy(copy, iov, (size_t)cnt * sizeof *iov);
        *mh = (struct msghdr){.msg_iov = copy, .msg_iovlen = (size_t)cnt};
        sqe = get_sqe(sc->w->ring);
        io_uring_prep_sendmsg(sqe, sc->fd, mh, MSG_NOSIGNAL);
    }
    set_data(sqe, sc, OP_SEND);
    u->send_busy = true;
    u->send_turn = sc->w->ring->turn;
}

/* Gives buffer bid back to the kernel. */
static void buf_return(struct h2b__uring *r, unsigned bid)
{
    h2b_uring_buf_return(&r->io, bid);
}

/* Hands one received buffer to the core (unless sc is closed) and gives it back. */
static void feed(struct sconn *sc, unsigned bid, uint32_t len)
{
    struct h2b__uring *r = sc->w->ring;
    if (!sc->closed && !sc->lingering &&
        h2b_conn_recv(sc->conn, h2b_uring_buf(&r->io, bid), len) != H2B_OK)
        ops(sc->w)->conn_close(sc);
    buf_return(r, bid);
}

/* Takes the oldest held buffer of sc; false when none is held. */
static bool hold_pop(struct sconn *sc, unsigned *bid, uint32_t *len)
{
    struct h2b__uconn *u = sc->u;
    struct h2b__uring *r = sc->w->ring;
    if (u->nheld == 0)
        return false;
    *bid = u->hhead;
    *len = r->len[u->hhead];
    u->hhead = r->next[u->hhead];
    if (--u->nheld == 0)
        h2b_list_unlink(&u->hlink);
    r->held--;
    return true;
}

/* Gives every held buffer of sc back without reading it (sc is closed). */
static void hold_drop(struct sconn *sc)
{
    unsigned bid;
    uint32_t len;
    while (hold_pop(sc, &bid, &len))
        buf_return(sc->w->ring, bid);
}

/* Feeds sc's held input while no send is in flight, HOLD_MAX buffers (epoll's read turn) before
 * each flush; re-arms a paused receive once nothing is held. */
static void feed_held(struct sconn *sc)
{
    struct h2b__uconn *u = sc->u;
    while (u->nheld > 0 && !u->send_busy && !sc->closed) {
        unsigned bid;
        uint32_t len;
        for (int i = 0; i < HOLD_MAX && hold_pop(sc, &bid, &len); i++)
            feed(sc, bid, len);
        uflush(sc);
    }
    if (sc->closed) {
        hold_drop(sc);
        return;
    }
    if (u->nheld == 0 && u->paused && !u->recv_armed && !sc->eof && !sc->lingering) {
        u->paused = false;
        arm_recv(sc);
    }
}

/* The turn's end: a connection whose send has been in the kernel a whole turn waits for a full
 * socket (a peer that does not read): its held input goes in, as epoll's reads would have put it,
 * and its receive resumes, so the engine's guards see what the peer sends and the buffers go
 * back to the ring instead of waiting for the slow-client timeout. */
static void holders_turn(struct h2b__uring *r)
{
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &r->holders)
    {
        struct h2b__uconn *u = H2B_LIST_ENTRY(pos, struct h2b__uconn, hlink);
        struct sconn *sc = u->owner;
        if (u->send_busy && r->turn <= u->send_turn + 1)
            continue; /* its send has not had its chance yet */
        unsigned bid;
        uint32_t len;
        while (hold_pop(sc, &bid, &len))
            feed(sc, bid, len);
        if (sc->closed)
            continue;
        if (u->paused && !u->recv_armed && !sc->eof && !sc->lingering) {
            u->paused = false;
            arm_recv(sc);
        }
        uflush(sc);
    }
}

/* Input of a cleartext connection. While its send has not yet had its chance (queued this turn,
 * or handed to the kernel as this turn began and the completion not seen yet) the input is held:
 * the epoll loop's synchronous send drains output between two reads, and the engines'
 * backpressure (HTTP/1.1's /echo, the output queue guards) counts on output that can drain before
 * more input comes. HOLD_MAX held pauses the receive (cancelled at once, re-armed once all is in;
 * what the kernel had completed by then is held too, bounded by the buffer ring: the other
 * connections meet ENOBUFS and wait on the starved list for a turn or two). A send still in
 * flight a turn later waits for a full socket: the input goes in, as epoll's next read would, and
 * a client that sends on without reading meets the engine's guards. */
static void on_data(struct sconn *sc, unsigned bid, uint32_t len)
{
    struct h2b__uconn *u = sc->u;
    struct h2b__uring *r = sc->w->ring;
    if (u->send_busy && r->turn <= u->send_turn + 1) {
        r->len[bid] = len;
        if (u->nheld++ == 0) {
            u->hhead = bid;
            h2b_list_insert_tail(&r->holders, &u->hlink);
        } else
            r->next[u->htail] = (uint16_t)bid;
        u->htail = bid;
        r->held++;
        if (u->nheld >= HOLD_MAX && u->recv_armed && !u->paused) {
            u->paused = true;
            cancel(r, sc, OP_RECV);
            io_uring_submit(&r->io.ring); /* now: the kernel fills buffers as fast as data comes */
        }
        return;
    }
    unsigned hb;
    uint32_t hl;
    while (hold_pop(sc, &hb, &hl)) /* the older input first */
        feed(sc, hb, hl);
    feed(sc, bid, len);
    if (sc->closed)
        hold_drop(sc);
    uflush(sc);
}

static void on_recv(struct worker *w, struct sconn *sc, const struct io_uring_cqe *cqe)
{
    struct h2b__uring *r = w->ring;
    struct h2b__uconn *u = sc->u;
    bool more = cqe->flags & IORING_CQE_F_MORE;
    if (!more)
        u->recv_armed = false;
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        if (cqe->res > 0 && !sc->closed && !sc->lingering)
            on_data(sc, bid, (uint32_t)cqe->res);
        else
            buf_return(r, bid);
    }
    if (sc->closed)
        return;
    if (cqe->res == 0) { /* the peer's FIN: the responses due still go out, then close */
        if (sc->lingering) {
            ops(sc->w)->conn_close(sc);
            return;
        }
        unsigned hb;
        uint32_t hl;
        while (hold_pop(sc, &hb, &hl)) /* the input before the FIN first */
            feed(sc, hb, hl);
        if (sc->closed) {
            hold_drop(sc);
            return;
        }
        sc->eof = true;
        h2b_conn_input_closed(sc->conn);
        uflush(sc);
        return;
    }
    if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -EINTR && cqe->res != -EAGAIN &&
        cqe->res != -ECANCELED) {
        ops(sc->w)->conn_close(sc); /* ECONNRESET and such */
        return;
    }
    if (more || u->recv_armed || sc->closed)
        return;
    if (u->paused && u->nheld == 0) /* the held input went in before this end arrived */
        u->paused = false;
    if (u->paused)
        return;                 /* feed_held re-arms */
    if (cqe->res == -ENOBUFS) { /* re-armed once buffers are back (starved_rearm) */
        if (!u->starved) {
            u->starved = true;
            h2b_list_insert_tail(&r->starved, &u->slink);
        }
        return;
    }
    arm_recv(sc);
}

/* Re-arms the receives that ended on ENOBUFS, once the kernel has buffers again. */
static void starved_rearm(struct h2b__uring *r)
{
    if (r->held >= BUF_COUNT)
        return;
    for (struct h2b__uconn *u; (u = H2B_LIST_POP(&r->starved, struct h2b__uconn, slink)) != NULL;) {
        u->starved = false;
        if (!u->owner->closed && !u->recv_armed && !u->paused)
            arm_recv(u->owner);
    }
}

static void on_send(struct sconn *sc, int res)
{
    sc->u->send_busy = false;
    if (sc->closed)
        return;
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
        ops(sc->w)->conn_close(sc);
        return;
    }
    if (res > 0)
        h2b_conn_sent(sc->conn, (size_t)res);
    uflush(sc);    /* the rest of a short send, and what was queued meanwhile */
    feed_held(sc); /* the input that waited for it */
}

static void on_accept(struct worker *w, const struct io_uring_cqe *cqe, uint64_t now)
{
    struct h2b__uring *r = w->ring;
    if (!(cqe->flags & IORING_CQE_F_MORE))
        r->accept_armed = false;
    if (cqe->res >= 0) {
        if (r->accept_want)
            ops(w)->accepted(w->srv, cqe->res, NULL, NULL, w);
        else
            close(cqe->res);
    } else if (cqe->res != -ECANCELED && cqe->res != -EINTR && cqe->res != -EAGAIN &&
               cqe->res != -ECONNABORTED) {
        h2b__uring_listen(w, false); /* EMFILE and such: pause 100 ms, no spinning */
        w->listen_pause = now + 100 * H2B_NS_PER_MS;
    }
    if (!r->accept_armed && r->accept_want)
        arm_accept(w);
}

static void on_cqe(struct worker *w, const struct io_uring_cqe *cqe, uint64_t now)
{
    uint64_t data = io_uring_cqe_get_data64(cqe);
    unsigned op = (unsigned)(data & OP_MASK);
    void *p = (void *)(uintptr_t)(data & ~(uint64_t)OP_MASK);
    if (op == OP_WAKE) {
        ops(w)->adopt_queued(w);
        arm_wake(w);
        return;
    }
    if (op == OP_ACCEPT) {
        on_accept(w, cqe, now);
        return;
    }
    if (op != OP_RECV && op != OP_SEND && op != OP_POLL)
        return; /* a cancel's own completion */
    struct sconn *sc = p;
    if (op == OP_RECV) {
        on_recv(w, sc, cqe);
    } else if (op == OP_SEND) {
        on_send(sc, cqe->res);
    } else {
        if (!(cqe->flags & IORING_CQE_F_MORE))
            sc->u->poll_armed = false;
        if (!sc->closed && cqe->res > 0)
            ops(sc->w)->conn_event(sc, (uint32_t)cqe->res);
        if (!sc->closed && !sc->u->poll_armed)
            arm_poll(sc);
    }
    if (sc->closed && sc->u->buried && !busy(sc->u)) {
        h2b_list_unlink(&sc->u->zlink);
        final_free(sc);
    }
}

/* Frees the connections closed this turn; those with operations in flight wait for the last
 * completion (on_cqe) among the zombies. */
static void bury(struct h2b__uring *r)
{
    for (struct sconn *sc; (sc = H2B_LIST_POP(&r->grave, struct sconn, link)) != NULL;) {
        if (busy(sc->u)) {
            sc->u->buried = true;
            h2b_list_insert_tail(&r->zombies, &sc->u->zlink);
        } else {
            final_free(sc);
        }
    }
}

void *h2b__uring_worker_main(void *arg)
{
    struct worker *w = arg;
    struct h2b__uring *r = w->ring;
    ops(w)->thread_start(w);
    if (h2b_uring_start(&r->io) != H2B_OK) { /* enabling a ring made for this thread */
        fprintf(stderr, "h2bench serve: worker %d: enabling its io_uring: %s\n", w->idx,
                strerror(errno));
        abort();
    }
    arm_wake(w);
    for (;;) {
        struct timespec ts;
        const struct timespec *tmo = ops(w)->timeout(w, h2b_clock_now_ns(), &ts);
        if (!h2b_list_empty(&r->holders)) { /* held input: its send gets one turn (holders_turn) */
            ts = (struct timespec){0};
            tmo = &ts;
        }
        if (tmo) {
            struct __kernel_timespec kts = {.tv_sec = tmo->tv_sec, .tv_nsec = tmo->tv_nsec};
            h2b_uring_wait(&r->io, &kts);
        } else {
            h2b_uring_wait(&r->io, NULL);
        }
        r->turn++;
        if (io_uring_sq_ready(&r->io.ring) == 0)
            r->staged = 0; /* all submitted: the kernel has copied what the stage held */
        uint64_t now = h2b_clock_now_ns();
        h2b_conn_ctx_tick(w->ctx, now);
        struct io_uring_cqe *cqes[CQE_BATCH];
        struct io_uring_cqe batch[CQE_BATCH];
        for (int round = 0; round < CQE_ROUNDS; round++) {
            /* copied out and consumed first: the handlers' submissions never meet a CQ ring
             * full of completions this loop still holds */
            unsigned got = io_uring_peek_batch_cqe(&r->io.ring, cqes, CQE_BATCH);
            for (unsigned i = 0; i < got; i++)
                batch[i] = *cqes[i];
            io_uring_cq_advance(&r->io.ring, got);
            for (unsigned i = 0; i < got; i++)
                on_cqe(w, &batch[i], now);
            if (got < CQE_BATCH)
                break;
        }
        holders_turn(r);
        starved_rearm(r);
        if (w->listen_pause && now >= w->listen_pause && !w->draining) {
            h2b__uring_listen(w, true); /* the pause after EMFILE is over */
            w->listen_pause = 0;
        }
        bool done = ops(w)->turn_end(w, now);
        if (w->draining && r->accept_want)
            h2b__uring_listen(w, false);
        bury(r);
        if (done)
            break;
    }
    ops(w)->close_all(w);
    bury(r);
    io_uring_submit(&r->io.ring); /* the cancels; the rest completes in h2b__uring_free */
    return NULL;
}

void h2b__uring_listen(struct worker *w, bool on)
{
    struct h2b__uring *r = w->ring;
    r->accept_want = on;
    if (on && !r->accept_armed)
        arm_accept(w);
    else if (!on && r->accept_armed)
        cancel(r, w, OP_ACCEPT);
}

int h2b__uring_adopt(struct sconn *sc)
{
    sc->u = calloc(1, sizeof *sc->u);
    if (!sc->u)
        return H2B_ERR_NOMEM;
    sc->u->owner = sc;
    if (sc->ssl)
        arm_poll(sc);
    else
        arm_recv(sc);
    return H2B_OK;
}

void h2b__uring_release(struct sconn *sc)
{
    struct h2b__uconn *u = sc->u;
    struct h2b__uring *r = sc->w->ring;
    hold_drop(sc);
    if (u->starved) {
        h2b_list_unlink(&u->slink);
        u->starved = false;
    }
    h2b_list_insert_head(&r->grave, &sc->link);
    if (u->recv_armed)
        cancel(r, sc, OP_RECV);
    if (u->send_busy)
        cancel(r, sc, OP_SEND); /* the core holds the bytes it reads: freed after its CQE */
    if (u->poll_armed)
        cancel(r, sc, OP_POLL);
}

int h2b__uring_init(struct worker *w, char *why, size_t cap)
{
    struct h2b__uring *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, cap, "out of memory");
        return H2B_ERR_NOMEM;
    }
    h2b_list_init(&r->zombies);
    h2b_list_init(&r->grave);
    h2b_list_init(&r->starved);
    h2b_list_init(&r->holders);
    /* the worker thread's own ring, enabled there (h2b__uring_worker_main): its completions'
     * work runs when the loop asks for events, not at every return from the kernel */
    int rc = h2b_uring_open(&r->io, SQ_ENTRIES, CQ_ENTRIES, BUF_COUNT, BUF_SIZE, BUF_GROUP, true,
                            why, cap);
    if (rc != H2B_OK) {
        free(r);
        return rc;
    }
    /* The wake read goes through the ring, which waits only on a blocking file (a non-blocking
     * one completes with -EAGAIN); writers never block on an eventfd short of 2^64 - 2. */
    int fl = fcntl(w->evfd, F_GETFL);
    if (fl < 0 || fcntl(w->evfd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        snprintf(why, cap, "fcntl on the wake eventfd: %s", strerror(errno));
        h2b_uring_close(&r->io);
        free(r);
        return H2B_ERR_UNSUPPORTED;
    }
    w->ring = r;
    return H2B_OK;
}

void h2b__uring_free(struct worker *w)
{
    struct h2b__uring *r = w->ring;
    if (!r)
        return;
    h2b_uring_close(&r->io); /* cancels and waits for what is in flight */
    for (struct h2b__uconn *u; (u = H2B_LIST_POP(&r->zombies, struct h2b__uconn, zlink)) != NULL;) {
        final_free(u->owner);
    }
    free(r);
    w->ring = NULL;
    int fl = fcntl(w->evfd, F_GETFL);
    if (fl >= 0)
        fcntl(w->evfd, F_SETFL, fl | O_NONBLOCK);
}

void h2b__uring_flush(struct sconn *sc)
{
    uflush(sc);
}

#else /* built without liburing: serve --io uring falls back to epoll */

void h2b__uring_flush(struct sconn *sc)
{
    (void)sc;
}

int h2b__uring_init(struct worker *w, char *why, size_t cap)
{
    (void)w;
    snprintf(why, cap, "this build has no liburing (install liburing-dev and reconfigure)");
    return H2B_ERR_UNSUPPORTED;
}

void h2b__uring_free(struct worker *w)
{
    (void)w;
}

void *h2b__uring_worker_main(void *arg)
{
    (void)arg;
    return NULL; /* never started: h2b__uring_init always fails */
}

void h2b__uring_listen(struct worker *w, bool on)
{
    (void)w;
    (void)on;
}

int h2b__uring_adopt(struct sconn *sc)
{
    (void)sc;
    return H2B_ERR_UNSUPPORTED;
}

void h2b__uring_release(struct sconn *sc)
{
    (void)sc;
}

#endif
