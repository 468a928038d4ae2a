/*
 * floor.c - the kernel's floor (floor.h): one thread, one epoll loop, raw TCP.
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
 * Why a subcommand of its own (`h2bench floor-serve`) and not a mode of `serve`: the reference
 * server's options (streams, windows, TLS, engines, threads) mean nothing here, and the floor
 * must not share a line of the HTTP/2 server's code path, or it would not be a floor. Why one
 * thread: the cells it stands beside pin the server to one CPU (the scenario's server_cpus).
 */
#include "floor/floor.h"

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

#define RX_SIZE (64 * 1024)
#define EVENTS 256

struct fconn {
    int fd;
    uint32_t got;         /* bytes of the request being read */
    uint32_t owed;        /* whole requests not answered yet */
    uint32_t sent;        /* bytes of the answer being written */
    uint32_t events;      /* what epoll watches */
    struct h2b_list link; /* the open ones, closed at the stop */
};

struct floor {
    const struct h2b_floor_config *cfg;
    int ep, lfd, sfd;
    uint8_t *resp;
    uint8_t rx[RX_SIZE];
    uint32_t open;
    struct h2b_list conns;
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

static void on_accept(struct floor *f)
{
    for (;;) {
        int fd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of descriptors: the rest wait in the backlog */
        struct fconn *c = NULL;
        if (f->open >= f->cfg->max_connections || !(c = calloc(1, sizeof *c))) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->events = EPOLLIN;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(f->ep, EPOLL_CTL_ADD, fd, &e) != 0) {
            close(fd);
            free(c);
            continue;
        }
        f->open++;
        h2b_list_insert_head(&f->conns, &c->link);
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
    fprintf(f->cfg->ready, "listening on http://%s%s%s:%u\n", v6 ? "[" : "", host, v6 ? "]" : "",
            port);
    fflush(f->cfg->ready);
}

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
    f->lfd = f->sfd = -1;
    h2b_list_init(&f->conns);
    int rc = H2B_ERR_SYS;
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    if ((f->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (f->sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        h2b_diag_at(diag, NULL, 0, 0, "epoll or signalfd: %s", strerror(errno));
        goto out;
    }
    if ((rc = listen_on(f, diag)) != H2B_OK)
        goto out;
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = &f->lfd};
    struct epoll_event se = {.events = EPOLLIN, .data.ptr = &f->sfd};
    if (epoll_ctl(f->ep, EPOLL_CTL_ADD, f->lfd, &le) != 0 ||
        epoll_ctl(f->ep, EPOLL_CTL_ADD, f->sfd, &se) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "epoll_ctl: %s", strerror(errno));
        rc = H2B_ERR_SYS;
        goto out;
    }
    if (cfg->ready)
        announce(f);
    rc = H2B_OK;
    for (bool stop = false; !stop;) {
        struct epoll_event ev[EVENTS];
        int n = epoll_wait(f->ep, ev, EVENTS, -1);
        if (n < 0 && errno != EINTR) {
            h2b_diag_at(diag, NULL, 0, 0, "epoll_wait: %s", strerror(errno));
            rc = H2B_ERR_SYS;
            break;
        }
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == &f->sfd) {
                stop = true;
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
out:
    for (struct fconn *c; (c = H2B_LIST_FIRST(&f->conns, struct fconn, link)) != NULL;)
        conn_close(f, c);
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
