/*
 * uring.c - the load client's io_uring backend (load --io uring): one ring per worker, the same
 * engines and the same turn as the epoll loop in worker.c (uring.h is the seam). It follows the
 * server's backend (servers/h2ref/io_uring.c) where the two meet:
 *   - one io_uring_submit_and_wait_timeout per loop turn submits everything the last turn queued
 *     and waits for the next completion or the turn's deadline (the timeout is the ring's own);
 *   - cleartext receives are multishot into a provided-buffer ring (BUF_COUNT x BUF_SIZE per
 *     worker); each completion is handed to the engine (on_input, which copies what it keeps)
 *     and its buffer goes straight back. -ENOBUFS (the ring ran dry) waits for the end of the
 *     batch, when every buffer is back; any other end of a multishot re-arms at once;
 *   - sends: at most one in flight per connection, from its send buffer. The engines' output
 *     buffers move and grow between turns (h2fast.c compacts, nghttp2's wbuf is reallocated), so
 *     the bytes are copied into a buffer the kernel may read until the send completes; while one
 *     is in flight, more bytes are appended behind it up to the buffer's size (no realloc then);
 *   - connects, TLS handshakes and TLS connections are readiness-based: a oneshot POLL_ADD per
 *     wait (level-triggered like the epoll set: a ready socket completes it at once), re-armed
 *     after the engine has handled its events, updated in place when the engine's interest
 *     changes (IORING_POLL_UPDATE_EVENTS);
 *   - a full submission queue is submitted and the SQE retried, never dropped; the completion
 *     queue is 16 times the submission queue and the kernel keeps what does not fit
 *     (IORING_FEAT_NODROP).
 * A connection closed with operations in flight has them cancelled; its socket, state and send
 * buffer go at its last completion, or when the ring is torn down. The socket stays open until
 * then: an SQE queued for it and not yet submitted (a send, a re-armed receive) must not meet its
 * descriptor's number reused by the connection that replaces it. Allocation: per worker at
 * set-up and per connect (the state and its send buffer), none per request.
 *
 * Rejected: sending from the engines' buffers without the copy (they move between turns; the
 * copy is of request bytes, tens per request), IORING_OP_CONNECT (a poll for EPOLLOUT serves the
 * engines' set-up as it is), SQPOLL (a kernel thread spinning per worker on a shared machine),
 * IORING_SETUP_SINGLE_ISSUER (the ring is made by the thread that sets the worker up).
 */
#include "load/uring.h"

#include "core/clock.h"
#include "core/error.h"
#include "load/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef H2B_HAVE_URING

#include "core/list.h"
#include "core/uring.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#define SQ_ENTRIES 256
#define CQ_ENTRIES (SQ_ENTRIES * 16)
#define BUF_COUNT 256 /* provided receive buffers per worker (a power of 2) */
#define BUF_SIZE (16 * 1024)
#define BUF_GROUP 0
#define CQE_BATCH 256
#define CQE_ROUNDS 16         /* batches per turn: the worker's deadlines run in between */
#define OUT_START (16 * 1024) /* a connection's send buffer at its connect */
#define OUT_MAX (256 * 1024)  /* what it grows to while no send is in flight */
#define POLL_FAILED (EPOLLERR | EPOLLIN) /* a failed poll: the engine's read or set-up sees why */

/* What a completion is for: the low bits of its user_data (uio is malloc'ed, so at least
 * 8-aligned). 0: a cancel's or a poll update's own completion, ignored. */
enum { OP_RECV = 1, OP_SEND = 2, OP_POLL = 3, OP_MASK = 7 };

struct h2b__load_uio {
    struct h2b__load_ring *r;
    struct h2b__load_worker *w;
    void *conn; /* the engine's connection: on_input's and on_event's argument */
    int fd;
    uint32_t want;  /* poll mode: the events the engine waits for */
    uint32_t armed; /* the mask of the poll in flight */
    bool stream;    /* cleartext and set up: multishot receive, sends through out */
    bool recv_armed, send_busy, poll_armed, closed, buried, starved;
    bool want_out; /* stream: EPOLLOUT watched: on_event at each drain of the send buffer */
    bool failed;   /* a send failed: the engine has been told (on_input H2B__LOAD_EIO) */
    uint8_t *out;  /* the send buffer: out[0..olen), the first inflight bytes in the kernel */
    size_t olen, ocap;
    struct h2b_list link;  /* the ring's grave, then its zombies, once closed */
    struct h2b_list slink; /* the ring's starved list (ENOBUFS) */
};

struct h2b__load_ring {
    struct h2b_uring io;     /* the ring and BUF_COUNT x BUF_SIZE receive buffers (core/uring.h) */
    struct h2b_list starved; /* receives that ended on ENOBUFS, of uio.slink */
    struct h2b_list grave;   /* closed since the last bury, of uio.link */
    struct h2b_list zombies; /* closed, waiting for their last completion, of uio.link */
};

/* The next SQE; a full queue is submitted first (never dropped). */
static struct io_uring_sqe *get_sqe(struct h2b__load_ring *r)
{
    return h2b_uring_sqe(&r->io);
}

static uint64_t tag(const struct h2b__load_uio *u, unsigned op)
{
    return (uint64_t)(uintptr_t)u | op;
}

static bool busy(const struct h2b__load_uio *u)
{
    return u->recv_armed || u->send_busy || u->poll_armed;
}

static void uio_free(struct h2b__load_uio *u)
{
    close(u->fd);
    free(u->out);
    free(u);
}

static void cancel(struct h2b__load_uio *u, unsigned op)
{
    struct io_uring_sqe *sqe = get_sqe(u->r);
    io_uring_prep_cancel64(sqe, tag(u, op), 0);
    io_uring_sqe_set_data64(sqe, 0);
}

static void arm_recv(struct h2b__load_uio *u)
{
    struct io_uring_sqe *sqe = get_sqe(u->r);
    io_uring_prep_recv_multishot(sqe, u->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
    io_uring_sqe_set_data64(sqe, tag(u, OP_RECV));
    u->recv_armed = true;
}

static void arm_poll(struct h2b__load_uio *u)
{
    struct io_uring_sqe *sqe = get_sqe(u->r);
    io_uring_prep_poll_add(sqe, u->fd, u->want);
    io_uring_sqe_set_data64(sqe, tag(u, OP_POLL));
    u->poll_armed = true;
    u->armed = u->want;
}

static void arm_send(struct h2b__load_uio *u)
{
    struct io_uring_sqe *sqe = get_sqe(u->r);
    io_uring_prep_send(sqe, u->fd, u->out, u->olen, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, tag(u, OP_SEND));
    u->send_busy = true;
}

/* Gives buffer bid back to the kernel. */
static void input(struct h2b__load_uio *u, const uint8_t *p, ssize_t n)
{
    u->w->eng->on_input(u->conn, p, n);
}

static void on_recv(struct h2b__load_uio *u, const struct io_uring_cqe *cqe)
{
    struct h2b__load_ring *r = u->r;
    bool more = cqe->flags & IORING_CQE_F_MORE;
    if (!more)
        u->recv_armed = false;
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        if (cqe->res > 0 && !u->closed)
            input(u, h2b_uring_buf(&r->io, bid), cqe->res);
        h2b_uring_buf_return(&r->io, bid);
    }
    if (u->closed)
        return;
    if (cqe->res == 0) { /* the server's FIN */
        input(u, NULL, H2B__LOAD_EOF);
        return;
    }
    if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -EINTR && cqe->res != -EAGAIN &&
        cqe->res != -ECANCELED) {
        input(u, NULL, H2B__LOAD_EIO); /* ECONNRESET and such */
        return;
    }
    if (more || u->recv_armed)
        return;
    if (cqe->res == -ENOBUFS) { /* re-armed once the batch gave its buffers back */
        if (!u->starved) {
            u->starved = true;
            h2b_list_insert_tail(&r->starved, &u->slink);
        }
        return;
    }
    arm_recv(u);
}

static void on_send(struct h2b__load_uio *u, int res)
{
    u->send_busy = false;
    if (u->closed)
        return;
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
        u->failed = true;
        input(u, NULL, H2B__LOAD_EIO);
        return;
    }
    if (res > 0) { /* what was appended behind the send moves up */
        u->olen -= (size_t)res;
        memmove(u->out, u->out + res, u->olen);
    }
    if (u->olen > 0) {
        arm_send(u);
    } else if (u->want_out) { /* level-triggered, as epoll's EPOLLOUT: until unwatched */
        u->w->eng->on_event(u->conn, EPOLLOUT);
    }
}

static void on_poll(struct h2b__load_uio *u, int res)
{
    u->poll_armed = false;
    if (u->closed || u->stream || res == -ECANCELED)
        return; /* a streaming connection reads through its receive, never on readiness */
    uint32_t ev = res > 0 ? (uint32_t)res : res < 0 ? POLL_FAILED : 0;
    if (ev)
        u->w->eng->on_event(u->conn, ev);
    if (!u->closed && !u->stream && u->want && !u->poll_armed)
        arm_poll(u); /* level-triggered, as the epoll set is */
}

static void on_cqe(const struct io_uring_cqe *cqe)
{
    uint64_t data = io_uring_cqe_get_data64(cqe);
    unsigned op = (unsigned)(data & OP_MASK);
    struct h2b__load_uio *u = (struct h2b__load_uio *)(uintptr_t)(data & ~(uint64_t)OP_MASK);
    if (op == OP_RECV)
        on_recv(u, cqe);
    else if (op == OP_SEND)
        on_send(u, cqe->res);
    else if (op == OP_POLL)
        on_poll(u, cqe->res);
    else
        return; /* a cancel's or a poll update's own completion */
    if (u->closed && u->buried && !busy(u)) {
        h2b_list_unlink(&u->link);
        uio_free(u);
    }
}

/* Frees the connections closed since the last call; those with operations in flight wait for
 * their last completion (on_cqe) among the zombies. */
static void bury(struct h2b__load_ring *r)
{
    for (struct h2b__load_uio *u; (u = H2B_LIST_POP(&r->grave, struct h2b__load_uio, link));) {
        if (busy(u)) {
            u->buried = true;
            h2b_list_insert_tail(&r->zombies, &u->link);
        } else {
            uio_free(u);
        }
    }
}

/* Re-arms the receives that ended on ENOBUFS (every buffer is back after a batch). */
static void starved_rearm(struct h2b__load_ring *r)
{
    for (struct h2b__load_uio *u; (u = H2B_LIST_POP(&r->starved, struct h2b__load_uio, slink));) {
        u->starved = false;
        if (!u->closed && !u->recv_armed)
            arm_recv(u);
    }
}

int h2b__load_ring_wait(struct h2b__load_worker *w, uint64_t ns)
{
    struct h2b__load_ring *r = w->ring;
    bury(r);
    struct __kernel_timespec ts = {.tv_sec = (long long)(ns / H2B_NS_PER_SEC),
                                   .tv_nsec = (long long)(ns % H2B_NS_PER_SEC)};
    int rc = h2b_uring_wait(&r->io, &ts);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY && rc != -EAGAIN)
        return rc;
    return (int)io_uring_cq_ready(&r->io.ring);
}

int h2b__load_ring_peek(struct h2b__load_worker *w)
{
    struct h2b__load_ring *r = w->ring;
    bury(r);
    int rc = io_uring_submit_and_get_events(&r->io.ring);
    if (rc < 0 && rc != -EINTR && rc != -EBUSY && rc != -EAGAIN)
        return rc;
    /* Connections with input, as epoll's events count them: a send's own completion is no news
     * from the server (one comes at once for every connection the last turn wrote to, and counted,
     * it made every nap look worth it and none back off), and a connection's receives that come
     * one after another count once. */
    int n = 0;
    uintptr_t last = 0;
    unsigned head;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&r->io.ring, head, cqe)
    {
        uint64_t data = io_uring_cqe_get_data64(cqe);
        unsigned op = (unsigned)(data & OP_MASK);
        uintptr_t conn = (uintptr_t)(data & ~(uint64_t)OP_MASK);
        if ((op == OP_RECV || op == OP_POLL) && conn != last) {
            n++;
            last = conn;
        }
    }
    return n;
}

void h2b__load_ring_dispatch(struct h2b__load_worker *w)
{
    struct h2b__load_ring *r = w->ring;
    struct io_uring_cqe *cqes[CQE_BATCH];
    struct io_uring_cqe batch[CQE_BATCH];
    for (int round = 0; round < CQE_ROUNDS; round++) {
        /* copied out and consumed first: the handlers' submissions never meet a CQ ring full
         * of completions this loop still holds */
        unsigned got = io_uring_peek_batch_cqe(&r->io.ring, cqes, CQE_BATCH);
        for (unsigned i = 0; i < got; i++)
            batch[i] = *cqes[i];
        io_uring_cq_advance(&r->io.ring, got);
        for (unsigned i = 0; i < got; i++)
            on_cqe(&batch[i]);
        if (got < CQE_BATCH)
            break;
    }
    starved_rearm(r);
    bury(r);
}

int h2b__load_uio_open(struct h2b__load_worker *w, void *conn, int fd, struct h2b__load_uio **out)
{
    struct h2b__load_uio *u = calloc(1, sizeof *u);
    if (!u)
        return H2B_ERR_NOMEM;
    u->out = malloc(OUT_START);
    if (!u->out) {
        free(u);
        return H2B_ERR_NOMEM;
    }
    u->ocap = OUT_START;
    u->r = w->ring;
    u->w = w;
    u->conn = conn;
    u->fd = fd;
    u->want = EPOLLOUT;
    arm_poll(u);
    *out = u;
    return H2B_OK;
}

void h2b__load_uio_watch(struct h2b__load_uio *u, uint32_t events)
{
    if (u->stream) { /* a take of 0 bytes, after which the engine watches, means a busy send */
        u->want_out = events & EPOLLOUT;
        return;
    }
    u->want = events;
    if (!u->poll_armed) {
        if (events)
            arm_poll(u);
    } else if (events != u->armed) {
        struct io_uring_sqe *sqe = get_sqe(u->r);
        io_uring_prep_poll_update(sqe, tag(u, OP_POLL), tag(u, OP_POLL), events,
                                  IORING_POLL_UPDATE_EVENTS);
        io_uring_sqe_set_data64(sqe, 0); /* -ENOENT if it completed meanwhile: re-armed then */
        u->armed = events;
    }
}

void h2b__load_uio_stream(struct h2b__load_uio *u)
{
    u->stream = true;
    u->want = 0;
    if (u->poll_armed)
        cancel(u, OP_POLL);
    if (!u->recv_armed)
        arm_recv(u);
}

ssize_t h2b__load_uio_send(struct h2b__load_uio *u, const uint8_t *p, size_t len)
{
    if (u->failed)
        return H2B__LOAD_EIO;
    if (!u->send_busy && len * 2 > u->ocap && u->ocap < OUT_MAX) {
        /* nothing in flight (olen is 0): the buffer may move. Twice the write, so that the
         * engine's next one fits behind the send (nghttp2's engine writes 32 KiB at a time) */
        size_t cap = len * 2 < OUT_MAX ? len * 2 : OUT_MAX;
        uint8_t *nb = realloc(u->out, cap);
        if (nb) {
            u->out = nb;
            u->ocap = cap;
        }
    }
    size_t n = u->ocap - u->olen < len ? u->ocap - u->olen : len;
    if (n == 0)
        return 0;
    memcpy(u->out + u->olen, p, n);
    u->olen += n;
    if (!u->send_busy)
        arm_send(u);
    return (ssize_t)n;
}

void h2b__load_uio_close(struct h2b__load_uio **up)
{
    struct h2b__load_uio *u = *up;
    if (!u)
        return;
    *up = NULL;
    u->closed = true;
    if (u->starved) {
        h2b_list_unlink(&u->slink);
        u->starved = false;
    }
    if (u->recv_armed)
        cancel(u, OP_RECV);
    if (u->send_busy)
        cancel(u, OP_SEND); /* the send buffer stays until its completion */
    if (u->poll_armed)
        cancel(u, OP_POLL);
    h2b_list_insert_tail(&u->r->grave, &u->link);
}

int h2b__load_ring_new(struct h2b__load_worker *w, char *why, size_t cap)
{
    struct h2b__load_ring *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, cap, "out of memory");
        return H2B_ERR_NOMEM;
    }
    h2b_list_init(&r->starved);
    h2b_list_init(&r->grave);
    h2b_list_init(&r->zombies);
    int rc = h2b_uring_open(&r->io, SQ_ENTRIES, CQ_ENTRIES, BUF_COUNT, BUF_SIZE, BUF_GROUP, true,
                            why, cap);
    if (rc != H2B_OK) {
        free(r);
        return rc;
    }
    w->ring = r;
    return H2B_OK;
}

int h2b__load_ring_start(struct h2b__load_worker *w)
{
    return h2b_uring_start(&w->ring->io);
}

void h2b__load_ring_del(struct h2b__load_worker *w)
{
    struct h2b__load_ring *r = w->ring;
    if (!r)
        return;
    h2b_uring_close(&r->io); /* cancels and waits for what is in flight */
    bury(r);
    for (struct h2b__load_uio *u; (u = H2B_LIST_POP(&r->zombies, struct h2b__load_uio, link));)
        uio_free(u);
    free(r);
    w->ring = NULL;
}

#else /* built without liburing: load --io uring falls back to epoll */

int h2b__load_ring_new(struct h2b__load_worker *w, char *why, size_t cap)
{
    (void)w;
    snprintf(why, cap, "this build has no liburing (install liburing-dev and reconfigure)");
    return H2B_ERR_UNSUPPORTED;
}

int h2b__load_ring_start(struct h2b__load_worker *w)
{
    (void)w;
    return H2B_ERR_UNSUPPORTED;
}

void h2b__load_ring_del(struct h2b__load_worker *w)
{
    (void)w;
}

int h2b__load_ring_wait(struct h2b__load_worker *w, uint64_t ns)
{
    (void)w;
    (void)ns;
    return -ENOSYS; /* never called: w->ring is never set */
}

int h2b__load_ring_peek(struct h2b__load_worker *w)
{
    (void)w;
    return -ENOSYS;
}

void h2b__load_ring_dispatch(struct h2b__load_worker *w)
{
    (void)w;
}

int h2b__load_uio_open(struct h2b__load_worker *w, void *conn, int fd, struct h2b__load_uio **out)
{
    (void)w;
    (void)conn;
    (void)fd;
    (void)out;
    return H2B_ERR_UNSUPPORTED;
}

void h2b__load_uio_watch(struct h2b__load_uio *u, uint32_t events)
{
    (void)u;
    (void)events;
}

void h2b__load_uio_stream(struct h2b__load_uio *u)
{
    (void)u;
}

ssize_t h2b__load_uio_send(struct h2b__load_uio *u, const uint8_t *p, size_t len)
{
    (void)u;
    (void)p;
    (void)len;
    return H2B__LOAD_EIO;
}

void h2b__load_uio_close(struct h2b__load_uio **u)
{
    *u = NULL;
}

#endif
