/*
 * floor.c - the kernel's floor (floor.h): one thread, one loop, raw TCP, on epoll (the default)
 * or io_uring (--io uring).
 *
 * A request is any request_bytes bytes; each whole one is answered with response_bytes bytes
 * in one write (from one buffer of zeros made at start). Nothing is parsed and nothing is
 * copied per connection: what a connection holds is three counters, so a client that sends
 * garbage gets garbage-sized answers and one that never reads costs no memory: once
 * H2B_FLOOR_OWED_MAX answers are owed (its socket buffer is full) the connection is not read
 * until they drain, and a read never takes more than those answers' worth. The loop never
 * blocks (non-blocking sockets, EPOLLOUT while an answer is partly written). SIGTERM and
 * SIGINT come in through a signalfd in the same loop: the server closes every connection (a
 * list of the open ones) and returns.
 *
 * The io_uring loop (the ring and its provided buffers from core/uring.h, the floor's own sizes)
 * does the same with one io_uring_submit_and_wait per turn: a multishot accept; a multishot
 * receive per connection into the provided-buffer ring, each buffer given back as soon as its
 * bytes are counted (nothing is read out of it); an answer as one send from the buffer of zeros,
 * at most one in flight per connection (the rest of a short send goes next); the signalfd as a
 * poll through the ring. The bound is the same: with H2B_FLOOR_OWED_MAX answers owed the receive
 * is cancelled and re-armed once they drain (what completed before the cancel still counts: a
 * turn's worth of the buffer ring, never memory). A receive that ends (ENOBUFS, a cancel) is
 * re-armed while the connection wants input; a full submission queue is submitted and the SQE
 * retried (h2b_uring_sqe). A closed connection's socket and struct are freed after its last
 * completion and after the turn that submitted its cancels, so no cancel meets a new connection
 * at the same address (and one that did would only re-arm: a cancelled receive or send of an
 * open connection is retried). The ring refused (h2b_uring_open's reason), the epoll loop runs.
 *
 * Why a subcommand of its own (`h2bench floor-serve`) and not a mode of `serve`: the reference
 * server's options (streams, windows, TLS, engines, threads) mean nothing here, and the floor
 * must not share a line of the HTTP/2 server's code path, or it would not be a floor (the ring
 * set-up in harness/core is not the server's path). Why one thread: the cells it stands beside
 * pin the server to one CPU (the scenario's server_cpus).
 */
#include "floor/floor.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/list.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef H2B_HAVE_URING
#include "core/uring.h"

#include <poll.h>
#endif

#define RX_SIZE (64 * 1024)
#define EVENTS 256

struct fconn {
    int fd;
    uint32_t got;         /* bytes of the request being read */
    uint32_t owed;        /* whole requests not answered yet */
    uint32_t sent;        /* bytes of the answer being written */
    uint32_t events;      /* what epoll watches */
    struct h2b_list link; /* the open ones, closed at the stop (io_uring: and the closed ones
                           * waiting for their last completion) */
    bool recv_armed;      /* io_uring: a multishot receive is in the kernel */
    bool recv_cancel;     /* io_uring: its cancel is queued (the owed answers are at the bound) */
    bool send_busy;       /* io_uring: an answer's send is in the kernel */
    bool closed;          /* io_uring: closed, freed after its last completion */
};

struct floor {
    const struct h2b_floor_config *cfg;
    int ep, lfd, sfd;
    uint8_t *resp;
    uint8_t rx[RX_SIZE];
    uint32_t open;
    struct h2b_list conns;
    char io_fallback[160]; /* --io uring: why the ring was refused (epoll runs) */
};

static void conn_close(struct floor *f, struct fconn *c)
{
    close(c->fd); /* leaves the epoll set */
    h2b_list_unlink(&c->link);
    free(c);
    f->open--;
}

static void set_events(struct floor *f, struct fconn *c, uint32_t ev)
{
    if (c->events == ev)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(f->ep, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->events = ev;
}

/* Writes what c owes; false when the connection failed (closed). */
static bool conn_write(struct floor *f, struct fconn *c)
{
    uint32_t size = f->cfg->response_bytes;
    while (c->owed > 0) {
        ssize_t n = send(c->fd, f->resp + c->sent, size - c->sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            conn_close(f, c);
            return false;
        }
        c->sent += (uint32_t)n;
        if (c->sent == size) {
            c->sent = 0;
            c->owed--;
        }
    }
    uint32_t ev = (c->owed < H2B_FLOOR_OWED_MAX ? EPOLLIN : 0) | (c->owed > 0 ? EPOLLOUT : 0);
    set_events(f, c, ev);
    return true;
}

/* Reads whole requests (at most the answers c may still owe); false when c is closed. */
static bool conn_read(struct floor *f, struct fconn *c)
{
    uint32_t size = f->cfg->request_bytes;
    for (int i = 0; i < 16 && c->owed < H2B_FLOOR_OWED_MAX; i++) {
        uint64_t room = (uint64_t)(H2B_FLOOR_OWED_MAX - c->owed) * size - c->got;
        size_t want = room < RX_SIZE ? (size_t)room : RX_SIZE;
        ssize_t n = recv(c->fd, f->rx, want, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            conn_close(f, c);
            return false;
        }
        if (n < 0)
            break;
        uint64_t all = (uint64_t)c->got + (uint64_t)n;
        c->owed += (uint32_t)(all / size);
        c->got = (uint32_t)(all % size);
        if ((size_t)n < want)
            break;
    }
    return true;
}

/* A connection for the accepted socket fd (both loops), counted open and listed; NULL, fd
 * closed, past max_connections or out of memory. */
static struct fconn *conn_new(struct floor *f, int fd)
{
    struct fconn *c = NULL;
    if (f->open >= f->cfg->max_connections || !(c = calloc(1, sizeof *c))) {
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    f->open++;
    h2b_list_insert_head(&f->conns, &c->link);
    return c;
}

static void on_accept(struct floor *f)
{
    for (;;) {
        int fd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of descriptors: the rest wait in the backlog */
        struct fconn *c = conn_new(f, fd);
        if (!c)
            continue;
        c->events = EPOLLIN;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(f->ep, EPOLL_CTL_ADD, fd, &e) != 0)
            conn_close(f, c);
    }
}

static int listen_on(struct floor *f, struct h2b_diag *diag)
{
    const struct h2b_floor_config *cfg = f->cfg;
    char port[8];
    snprintf(port, sizeof port, "%u", cfg->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int gai = getaddrinfo(cfg->host, port, &hints, &ai);
    if (gai != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot resolve %s: %s", cfg->host, gai_strerror(gai));
        return H2B_ERR_INVAL;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 4096) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot listen on %s:%s: %s", cfg->host, port,
                    strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return H2B_ERR_SYS;
    }
    freeaddrinfo(ai);
    f->lfd = fd;
    return H2B_OK;
}

static void announce(const struct floor *f)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (getsockname(f->lfd, (struct sockaddr *)&a, &len) == 0) {
        if (a.ss_family == AF_INET6) {
            const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&a;
            inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
            port = ntohs(s->sin6_port);
        } else {
            const struct sockaddr_in *s = (const struct sockaddr_in *)&a;
            inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
            port = ntohs(s->sin_port);
        }
    }
    bool v6 = a.ss_family == AF_INET6;
    if (f->cfg->uring) { /* asked for: say what runs, before the line waited for (as serve) */
        if (f->io_fallback[0])
            fprintf(f->cfg->ready, "io: epoll (io_uring unavailable: %s)\n", f->io_fallback);
        else
            fprintf(f->cfg->ready, "io: uring\n");
    }
    fprintf(f->cfg->ready, "listening on http://%s%s%s:%u\n", v6 ? "[" : "", host, v6 ? "]" : "",
            port);
    fflush(f->cfg->ready);
}

/* The epoll loop, until the signalfd fires; H2B_OK, or H2B_ERR_SYS with diag set. */
static int epoll_loop(struct floor *f, struct h2b_diag *diag)
{
    if ((f->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        h2b_diag_at(diag, NULL, 0, 0, "epoll_create1: %s", strerror(errno));
        return H2B_ERR_SYS;
    }
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = &f->lfd};
    struct epoll_event se = {.events = EPOLLIN, .data.ptr = &f->sfd};
    if (epoll_ctl(f->ep, EPOLL_CTL_ADD, f->lfd, &le) != 0 ||
        epoll_ctl(f->ep, EPOLL_CTL_ADD, f->sfd, &se) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "epoll_ctl: %s", strerror(errno));
        return H2B_ERR_SYS;
    }
    if (f->cfg->ready)
        announce(f);
    for (;;) {
        struct epoll_event ev[EVENTS];
        int n = epoll_wait(f->ep, ev, EVENTS, -1);
        if (n < 0 && errno != EINTR) {
            h2b_diag_at(diag, NULL, 0, 0, "epoll_wait: %s", strerror(errno));
            return H2B_ERR_SYS;
        }
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == &f->sfd) {
                return H2B_OK;
            } else if (ev[i].data.ptr == &f->lfd) {
                on_accept(f);
            } else {
                struct fconn *c = ev[i].data.ptr;
                if ((ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !conn_read(f, c))
                    continue;
                conn_write(f, c);
            }
        }
    }
}

#ifdef H2B_HAVE_URING

#define U_SQ_ENTRIES 256
#define U_CQ_ENTRIES (U_SQ_ENTRIES * 16)
#define U_BUF_COUNT 64 /* provided receive buffers (a power of 2): 1 MiB in all */
#define U_BUF_SIZE (16 * 1024)
#define U_BUF_GROUP 0
#define U_CQE_BATCH 256
#define U_ACCEPT_PAUSE_NS (100 * H2B_NS_PER_MS) /* after EMFILE and such: no spinning */

/* What a completion is for: the low bits of its user_data (a connection is malloc'ed, so at
 * least 8-aligned). 0: a cancel's own completion, ignored. */
enum { U_OP_RECV = 1, U_OP_SEND = 2, U_OP_ACCEPT = 3, U_OP_SIGNAL = 4, U_OP_MASK = 7 };

struct uloop {
    struct floor *f;
    struct h2b_uring io;
    struct h2b_list grave; /* closed with nothing in flight: freed after the next submit */
    bool accept_armed, stop;
    uint64_t accept_resume; /* h2b_clock_now_ns after a refused accept; 0: accepting */
};

static void u_set_data(struct io_uring_sqe *sqe, const void *p, unsigned op)
{
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)p | op);
}

static void u_cancel(struct uloop *u, const void *p, unsigned op)
{
    struct io_uring_sqe *sqe = h2b_uring_sqe(&u->io);
    io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)p | op, 0);
    io_uring_sqe_set_data64(sqe, 0);
}

static void u_arm_accept(struct uloop *u)
{
    struct io_uring_sqe *sqe = h2b_uring_sqe(&u->io);
    io_uring_prep_multishot_accept(sqe, u->f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    u_set_data(sqe, u, U_OP_ACCEPT);
    u->accept_armed = true;
}

/* Closes c: its operations are cancelled; it is freed once they have completed (u_settle). */
static void u_close(struct uloop *u, struct fconn *c)
{
    if (c->closed)
        return;
    c->closed = true;
    u->f->open--;
    if (c->recv_armed && !c->recv_cancel)
        u_cancel(u, c, U_OP_RECV);
    if (c->send_busy)
        u_cancel(u, c, U_OP_SEND);
}

/* What c does next: a closed one with nothing in flight goes to the grave; an open one sends
 * the next answer owed (one send in flight), and receives while fewer than H2B_FLOOR_OWED_MAX
 * answers are owed (the receive cancelled at the bound, re-armed below it). */
static void u_settle(struct uloop *u, struct fconn *c)
{
    if (c->closed) {
        if (!c->recv_armed && !c->send_busy) {
            h2b_list_unlink(&c->link);
            h2b_list_insert_tail(&u->grave, &c->link);
        }
        return;
    }
    uint32_t size = u->f->cfg->response_bytes;
    if (c->owed > 0 && !c->send_busy) {
        struct io_uring_sqe *sqe = h2b_uring_sqe(&u->io);
        io_uring_prep_send(sqe, c->fd, u->f->resp + c->sent, size - c->sent, MSG_NOSIGNAL);
        u_set_data(sqe, c, U_OP_SEND);
        c->send_busy = true;
    }
    if (c->owed < H2B_FLOOR_OWED_MAX && !c->recv_armed) {
        struct io_uring_sqe *sqe = h2b_uring_sqe(&u->io);
        io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = U_BUF_GROUP;
        u_set_data(sqe, c, U_OP_RECV);
        c->recv_armed = true;
    } else if (c->owed >= H2B_FLOOR_OWED_MAX && c->recv_armed && !c->recv_cancel) {
        u_cancel(u, c, U_OP_RECV);
        c->recv_cancel = true;
    }
}

static void u_on_recv(struct uloop *u, struct fconn *c, const struct io_uring_cqe *cqe)
{
    if (cqe->flags & IORING_CQE_F_BUFFER) /* counted, never read: straight back to the ring */
        h2b_uring_buf_return(&u->io, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
    if (!(cqe->flags & IORING_CQE_F_MORE))
        c->recv_armed = c->recv_cancel = false;
    if (c->closed)
        return;
    if (cqe->res > 0) {
        uint64_t all = (uint64_t)c->got + (uint64_t)cqe->res;
        uint32_t size = u->f->cfg->request_bytes;
        c->owed += (uint32_t)(all / size);
        c->got = (uint32_t)(all % size);
    } else if (cqe->res == 0 || (cqe->res != -ENOBUFS && cqe->res != -ECANCELED &&
                                 cqe->res != -EINTR && cqe->res != -EAGAIN)) {
        u_close(u, c); /* the peer's FIN, as epoll's read of 0; ECONNRESET and such */
    }
}

static void u_on_send(struct uloop *u, struct fconn *c, int res)
{
    c->send_busy = false;
    if (c->closed)
        return;
    if (res < 0 && res != -ECANCELED && res != -EINTR && res != -EAGAIN) {
        u_close(u, c);
        return;
    }
    if (res > 0) {
        c->sent += (uint32_t)res;
        if (c->sent == u->f->cfg->response_bytes) {
            c->sent = 0;
            c->owed--;
        }
    }
}

static void u_on_accept(struct uloop *u, int res, unsigned flags)
{
    if (!(flags & IORING_CQE_F_MORE))
        u->accept_armed = false;
    if (res < 0) {
        if (res != -ECANCELED && res != -EINTR && res != -EAGAIN && res != -ECONNABORTED &&
            !u->accept_armed) /* EMFILE and such: the rest wait in the backlog a while */
            u->accept_resume = h2b_clock_now_ns() + U_ACCEPT_PAUSE_NS;
        return;
    }
    struct fconn *c = conn_new(u->f, res);
    if (c)
        u_settle(u, c);
}

static void u_on_cqe(struct uloop *u, const struct io_uring_cqe *cqe)
{
    uint64_t data = io_uring_cqe_get_data64(cqe);
    unsigned op = (unsigned)(data & U_OP_MASK);
    void *p = (void *)(uintptr_t)(data & ~(uint64_t)U_OP_MASK);
    if (op == U_OP_SIGNAL) {
        u->stop = true;
    } else if (op == U_OP_ACCEPT) {
        u_on_accept(u, cqe->res, cqe->flags);
    } else if (op == U_OP_RECV || op == U_OP_SEND) {
        struct fconn *c = p;
        if (op == U_OP_RECV)
            u_on_recv(u, c, cqe);
        else
            u_on_send(u, c, cqe->res);
        u_settle(u, c);
    }
}

/* The io_uring loop on the ring u->io (opened), until the signalfd fires. */
static int uring_loop(struct uloop *u, struct h2b_diag *diag)
{
    struct floor *f = u->f;
    h2b_list_init(&u->grave);
    struct io_uring_sqe *sqe = h2b_uring_sqe(&u->io);
    io_uring_prep_poll_add(sqe, f->sfd, POLLIN);
    u_set_data(sqe, u, U_OP_SIGNAL);
    u_arm_accept(u);
    if (f->cfg->ready)
        announce(f);
    int rc = H2B_OK;
    while (!u->stop) {
        int w;
        if (u->accept_resume != 0) { /* wake for the end of the accept pause */
            struct __kernel_timespec kts = {.tv_nsec = U_ACCEPT_PAUSE_NS};
            w = h2b_uring_wait(&u->io, &kts);
        } else {
            w = h2b_uring_wait(&u->io, NULL);
        }
        if (w < 0 && w != -EINTR && w != -ETIME && w != -EBUSY) {
            h2b_diag_at(diag, NULL, 0, 0, "io_uring_submit_and_wait: %s", strerror(-w));
            rc = H2B_ERR_SYS;
            break;
        }
        /* the cancels of the connections in the grave have been submitted: none can meet a
         * new connection at the same address any more */
        for (struct fconn *c; (c = H2B_LIST_POP(&u->grave, struct fconn, link)) != NULL;) {
            close(c->fd);
            free(c);
        }
        for (;;) {
            /* copied out and consumed first: the handlers' submissions never meet a CQ ring
             * full of completions this loop still holds */
            struct io_uring_cqe *cqes[U_CQE_BATCH];
            struct io_uring_cqe batch[U_CQE_BATCH];
            unsigned got = io_uring_peek_batch_cqe(&u->io.ring, cqes, U_CQE_BATCH);
            for (unsigned i = 0; i < got; i++)
                batch[i] = *cqes[i];
            io_uring_cq_advance(&u->io.ring, got);
            for (unsigned i = 0; i < got; i++)
                u_on_cqe(u, &batch[i]);
            if (got < U_CQE_BATCH)
                break;
        }
        if (!u->accept_armed && h2b_clock_now_ns() >= u->accept_resume) {
            u->accept_resume = 0;
            u_arm_accept(u);
        }
    }
    h2b_uring_close(&u->io); /* cancels and waits for what is in flight: then all is freed */
    for (struct fconn *c; (c = H2B_LIST_POP(&u->grave, struct fconn, link)) != NULL;) {
        close(c->fd);
        free(c);
    }
    return rc;
}

/* Runs the io_uring loop; H2B_ERR_UNSUPPORTED with f->io_fallback set when the ring is refused
 * (nothing started: the epoll loop runs). */
static int try_uring(struct floor *f, struct h2b_diag *diag)
{
    struct uloop *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(f->io_fallback, sizeof f->io_fallback, "out of memory");
        return H2B_ERR_UNSUPPORTED;
    }
    u->f = f;
    /* the ring is this thread's alone (opened and run here): the one-thread set-up of
     * core/uring.h, its completions' work done when the loop asks for them */
    int rc = h2b_uring_open(&u->io, U_SQ_ENTRIES, U_CQ_ENTRIES, U_BUF_COUNT, U_BUF_SIZE,
                            U_BUF_GROUP, true, f->io_fallback, sizeof f->io_fallback);
    if (rc == H2B_OK && h2b_uring_start(&u->io) != H2B_OK) {
        snprintf(f->io_fallback, sizeof f->io_fallback, "enabling the ring: %s", strerror(errno));
        h2b_uring_close(&u->io);
        rc = H2B_ERR_UNSUPPORTED;
    } else if (rc == H2B_OK) {
        rc = uring_loop(u, diag);
    } else {
        rc = H2B_ERR_UNSUPPORTED;
    }
    free(u);
    return rc;
}

#else /* built without liburing: --io uring falls back to epoll */

static int try_uring(struct floor *f, struct h2b_diag *diag)
{
    (void)diag;
    snprintf(f->io_fallback, sizeof f->io_fallback,
             "this build has no liburing (install liburing-dev and reconfigure)");
    return H2B_ERR_UNSUPPORTED;
}

#endif

int h2b_floor_serve(const struct h2b_floor_config *cfg, struct h2b_diag *diag)
{
    if (cfg->request_bytes == 0 || cfg->request_bytes > H2B_FLOOR_MSG_MAX ||
        cfg->response_bytes == 0 || cfg->response_bytes > H2B_FLOOR_MSG_MAX) {
        h2b_diag_at(diag, NULL, 0, 0, "request and response sizes must be 1..%u bytes",
                    H2B_FLOOR_MSG_MAX);
        return H2B_ERR_INVAL;
    }
    struct floor *f = calloc(1, sizeof *f);
    if (!f || !(f->resp = calloc(1, cfg->response_bytes))) {
        free(f);
        h2b_diag_at(diag, NULL, 0, 0, "out of memory");
        return H2B_ERR_NOMEM;
    }
    f->cfg = cfg;
    f->ep = f->lfd = f->sfd = -1;
    h2b_list_init(&f->conns);
    int rc = H2B_ERR_SYS;
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    if ((f->sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        h2b_diag_at(diag, NULL, 0, 0, "signalfd: %s", strerror(errno));
        goto out;
    }
    if ((rc = listen_on(f, diag)) != H2B_OK)
        goto out;
    if (cfg->uring) {
        rc = try_uring(f, diag);
        if (rc != H2B_ERR_UNSUPPORTED)
            goto out;
        if (cfg->notice)
            fprintf(cfg->notice, "h2bench floor-serve: --io uring: %s; using epoll\n",
                    f->io_fallback);
    }
    rc = epoll_loop(f, diag);
out:
    for (struct fconn *c; (c = H2B_LIST_FIRST(&f->conns, struct fconn, link)) != NULL;) {
        close(c->fd);
        h2b_list_unlink(&c->link);
        free(c);
    }
    if (f->lfd >= 0)
        close(f->lfd);
    if (f->sfd >= 0)
        close(f->sfd);
    if (f->ep >= 0)
        close(f->ep);
    free(f->resp);
    free(f);
    return rc;
}
