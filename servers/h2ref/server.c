/*
 * server.c - sockets, threads and epoll around the socket-free connection logic of conn.c.
 *
 * Threads: the calling thread owns the listener and a signalfd; it accepts and hands each
 * connection to the next worker (round-robin queue + eventfd). SO_REUSEPORT was rejected as the
 * default: the kernel's 4-tuple hash can put both of h2load's two connections on one worker.
 *
 * Each worker: one epoll instance, edge-triggered, each fd registered once with
 * EPOLLIN|EPOLLOUT|EPOLLRDHUP (no epoll_ctl in steady state). A read turn is bounded (64 KiB of
 * plaintext); a connection that may hold more goes on the more-to-read list, served before the
 * next epoll_wait with a zero timeout. That bound is what lets nghttp2's flood counters work
 * (its outbound ACK queue is checked between reads). Output is gathered by conn.c and written
 * with one send/sendmsg (or a few SSL_writes) per flush, never one syscall per frame; a flush is
 * capped at 1 MiB per turn for fairness, the rest resumes through the dirty list.
 *
 * Cleartext sockets are read with recv and written with send (one iovec, the usual flush of a
 * small response) or sendmsg: the socket calls skip the VFS layer read/write/writev go through,
 * -25, -67 and -24 ns a call on loopback TCP here (tight loop, 30 alternating blocks of 20,000),
 * ~0.1 us of a one-stream request's ~4 us. TCP_NODELAY is set once on the listener (accepted
 * sockets inherit it), not per connection. Measured and not kept (issue 17): reading on to
 * EAGAIN after a short read (one more read per request, +9 % CPU per request at 10 x 1),
 * SO_BUSY_POLL (loopback has no NAPI context to poll: no change), reno instead of the system's
 * bbr on the server's sockets (no change on the server's side; a congestion control is the
 * operator's choice). EPOLLOUT stays in the one registration: no epoll_ctl per request.
 *
 * Closing: after a GOAWAY, shutdown(SHUT_WR) and read-and-discard for up to 2 s, so the peer
 * sees the GOAWAY instead of a TCP reset for its unread input. Connections closed while events
 * for them are still in the batch are freed at the end of the loop turn.
 */
#include "h2ref/server.h"

#include "core/alloc.h"
#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/list.h"
#include "h2ref/io.h"
#include "h2ref/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define RBUF_SIZE (64 * 1024)
#define FLUSH_BUDGET (1024 * 1024)
/* the most one TLS record takes in the write BIO: a full plaintext, the AEAD's overhead, the
 * header */
#define TLS_RECORD_MAX (SSL3_RT_MAX_PLAIN_LENGTH + SSL3_RT_MAX_ENCRYPTED_OVERHEAD + 5)
#define LINGER_NS (2 * H2B_NS_PER_SEC)
#define MAX_EVENTS 256
#define ACCEPT_BURST 256

/* ---- connections per source address ---- */

/* The source address as bytes: IPv4 (also v4-mapped IPv6) as 4, IPv6 as 16; 0 otherwise. */
static uint8_t addr_key(const struct sockaddr_storage *ss, uint8_t out[16])
{
    if (ss->ss_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
        return 4;
    }
    if (ss->ss_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a, mapped, 12) == 0) {
            memcpy(out, a + 12, 4);
            return 4;
        }
        memcpy(out, a, 16);
        return 16;
    }
    return 0;
}

/* The bucket of the address key[0..len). */
static struct h2b_list *ip_bucket(struct server *srv, const uint8_t *key, uint8_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (uint8_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 16777619u;
    return &srv->ip[h % H2B_IP_BUCKETS];
}

/* Counts one more connection from ss; false when its address is at the limit (or no memory).
 * *out gets the entry to release with ip_release (NULL without a limit). */
static bool ip_acquire(struct server *srv, const struct sockaddr_storage *ss, struct ipent **out)
{
    *out = NULL;
    uint32_t limit = srv->cfg.max_connections_per_ip;
    uint8_t key[16];
    uint8_t len = limit ? addr_key(ss, key) : 0;
    if (len == 0)
        return true;
    struct h2b_list *bucket = ip_bucket(srv, key, len);
    bool ok = false;
    pthread_mutex_lock(&srv->ip_lock);
    struct ipent *e = NULL;
    struct h2b_list *pos;
    H2B_LIST_FOREACH(pos, bucket)
    {
        struct ipent *x = H2B_LIST_ENTRY(pos, struct ipent, link);
        if (x->len == len && memcmp(x->addr, key, len) == 0) {
            e = x;
            break;
        }
    }
    if (!e && (e = calloc(1, sizeof *e)) != NULL) {
        memcpy(e->addr, key, len);
        e->len = len;
        h2b_list_insert_head(bucket, &e->link);
    }
    if (e && e->n < limit) {
        e->n++;
        *out = e;
        ok = true;
    }
    pthread_mutex_unlock(&srv->ip_lock);
    return ok;
}

/* Counts a connection of e's address as closed (e may be NULL); an entry at 0 is freed. */
static void ip_release(struct server *srv, struct ipent *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&srv->ip_lock);
    if (--e->n == 0) {
        h2b_list_unlink(&e->link);
        free(e);
    }
    pthread_mutex_unlock(&srv->ip_lock);
}

void h2b_server_config_defaults(struct h2b_server_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    h2b_conn_config_defaults(&cfg->conn);
    cfg->host = "127.0.0.1";
    cfg->max_connections = 4096;
    cfg->drain_ns = 3 * H2B_NS_PER_SEC;
}

/* ---- /stats: the sum of every worker ---- */

static int stats_json(void *arg, char *buf, size_t cap)
{
    struct server *srv = arg;
    struct h2b_stats sum;
    memset(&sum, 0, sizeof sum);
    h2b_stats_accumulate(&sum, &srv->stats);
    for (int i = 0; i < srv->nworkers; i++)
        h2b_stats_accumulate(&sum, h2b_conn_ctx_stats(srv->w[i].ctx));
    int len = h2b_stats_json(&sum, h2b_alloc_counting_available(), buf, cap);
    if (len < 0)
        return len;
    return h2b_stats_json_io(buf, cap, len, srv->io == H2B_IO_URING ? "uring" : "epoll",
                             srv->io_fallback);
}

/* ---- connection life ---- */

static void conn_close(struct sconn *sc)
{
    if (sc->closed)
        return;
    struct worker *w = sc->w;
    sc->closed = true;
    if (sc->in_rlist || sc->lingering) /* on the more-to-read or the linger list */
        h2b_list_unlink(&sc->rlink);
    sc->in_rlist = false;
    h2b_list_unlink(&sc->link);
    w->nconns--;
    if (!sc->u) {
        h2b_conn_del(sc->conn);
        sc->conn = NULL;
    }
    SSL_free(sc->ssl);
    sc->ssl = NULL;
    /* release the slots before close(): a client that saw the close may connect again at once */
    ip_release(w->srv, sc->ip);
    sc->ip = NULL;
    atomic_fetch_sub(&w->srv->nconns, 1);
    if (sc->u) { /* io_uring: the core, the socket and sc wait for the last completion */
        h2b__uring_release(sc);
        return;
    }
    close(sc->fd);
    h2b_list_insert_head(&w->grave, &sc->link);
}

/* The session is over: close now if it failed, otherwise half-close and linger. */
static void conn_finish(struct sconn *sc)
{
    struct worker *w = sc->w;
    if (h2b_conn_fatal(sc->conn) || w->draining || sc->eof) { /* eof: nothing left to drain */
        conn_close(sc);
        return;
    }
    h2b_conn_del(sc->conn);
    sc->conn = NULL;
    if (sc->in_rlist) {
        h2b_list_unlink(&sc->rlink);
        sc->in_rlist = false;
    }
    if (sc->ssl) {
        SSL_shutdown(sc->ssl);
        h2b_tls_out_push(sc->ssl); /* close_notify; on a full socket the close goes without it */
    }
    shutdown(sc->fd, SHUT_WR);
    sc->lingering = true;
    sc->linger_until = h2b_clock_now_ns() + LINGER_NS;
    h2b_list_insert_tail(&w->linger, &sc->rlink);
}

/* Writes iovecs as TLS records until done or the socket is full. With partial writes on,
 * SSL_write returns after each record. The records gather in the connection's write BIO
 * (tls.h), sent when less than a record's room is left, and at the end of the flush
 * (conn_flush): one send(2) per H2B_TLS_OUT_SIZE, not one per record. A full socket is
 * "blocked" (*blocked), with the bytes taken so far returned (they are OpenSSL's, or wait in
 * the BIO). */
static ssize_t tls_write(struct sconn *sc, const struct iovec *iov, int cnt, bool *blocked)
{
    size_t total = 0;
    for (int i = 0; i < cnt; i++) {
        size_t done = 0;
        while (done < iov[i].iov_len) {
            if (h2b_tls_out_room(sc->ssl) < TLS_RECORD_MAX) {
                int p = h2b_tls_out_push(sc->ssl);
                if (p <= 0) {
                    *blocked = p == 0;
                    return p == 0 ? (ssize_t)(total + done) : -1;
                }
            }
            ERR_clear_error();
            int r = SSL_write(sc->ssl, (const uint8_t *)iov[i].iov_base + done,
                              (int)(iov[i].iov_len - done));
            if (r <= 0) {
                int e = SSL_get_error(sc->ssl, r);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
                    *blocked = true;
                    return (ssize_t)(total + done);
                }
                errno = EIO;
                return -1;
            }
            done += (size_t)r;
        }
        total += done;
    }
    return (ssize_t)total;
}

/* One cleartext flush: send for a single iovec, sendmsg for more (the file header says why). */
static ssize_t sock_write(int fd, const struct iovec *iov, int cnt)
{
    if (cnt == 1)
        return send(fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
    struct msghdr mh = {.msg_iov = (struct iovec *)(uintptr_t)iov, .msg_iovlen = (size_t)cnt};
    return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

/* The flush's loop: output to the socket (through TLS when tls) until it is drained, the socket
 * is full or the turn's budget is spent. false: the connection was closed. Inlined into both
 * callers with tls constant, so the cleartext path tests nothing of TLS. */
static inline __attribute__((always_inline)) bool flush_loop(struct sconn *sc, bool tls)
{
    size_t budget = FLUSH_BUDGET;
    while (!sc->write_blocked) {
        const struct iovec *iov;
        int cnt = h2b_conn_output(sc->conn, &iov);
        if (cnt < 0) {
            conn_close(sc);
            return false;
        }
        if (cnt == 0)
            break;
        size_t want = 0;
        for (int i = 0; i < cnt; i++)
            want += iov[i].iov_len;
        bool blocked = false;
        ssize_t wr = tls ? tls_write(sc, iov, cnt, &blocked) : sock_write(sc->fd, iov, cnt);
        if (wr < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                sc->write_blocked = true;
                break;
            }
            if (errno == EINTR)
                continue;
            conn_close(sc);
            return false;
        }
        h2b_conn_sent(sc->conn, (size_t)wr);
        if (blocked || (size_t)wr < want) {
            sc->write_blocked = true; /* the socket is full: wait for the EPOLLOUT edge */
            break;
        }
        if ((size_t)wr >= budget) {
            h2b_conn_mark_dirty(sc->conn);
            break;
        }
        budget -= (size_t)wr;
    }
    return true;
}

/* Sends what the write BIO holds (tls.h); false: the connection was closed. */
static bool tls_push(struct sconn *sc)
{
    int p = h2b_tls_out_push(sc->ssl);
    if (p < 0) {
        conn_close(sc);
        return false;
    }
    sc->write_blocked = p == 0;
    return true;
}

/* A TLS connection's flush: records written earlier first, then the loop, then the flush's
 * records in one send; the session is done once its last records left the BIO too. */
static void tls_flush(struct sconn *sc)
{
    if (h2b_tls_out_pending(sc->ssl) > 0 && !tls_push(sc))
        return;
    if (!flush_loop(sc, true))
        return;
    if (!sc->write_blocked && h2b_tls_out_pending(sc->ssl) > 0 && !tls_push(sc))
        return;
    if (h2b_conn_done(sc->conn) && h2b_tls_out_pending(sc->ssl) == 0)
        conn_finish(sc);
}

static void conn_flush(struct sconn *sc)
{
    if (sc->closed || sc->lingering || sc->handshaking)
        return;
    if (sc->ssl) {
        tls_flush(sc);
        return;
    }
    if (flush_loop(sc, false) && h2b_conn_done(sc->conn))
        conn_finish(sc);
}

static void more_to_read(struct sconn *sc)
{
    if (!sc->in_rlist) {
        sc->in_rlist = true;
        h2b_list_insert_tail(&sc->w->more, &sc->rlink);
    }
}

static void linger_read(struct sconn *sc)
{
    for (int i = 0; i < 16; i++) {
        ssize_t n = recv(sc->fd, sc->w->rbuf, RBUF_SIZE, 0);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        conn_close(sc);
        return;
    }
}

/* One bounded read turn. A short read means the socket is drained (edge-triggered epoll
 * reports what arrives later) unless EPOLLRDHUP said a FIN is queued: then read on to the
 * 0, or a FIN that arrived with the last bytes is never seen and the socket sits in
 * CLOSE-WAIT. After the FIN the responses already due still go out, then the socket closes. */
static void plain_read(struct sconn *sc)
{
    struct worker *w = sc->w;
    size_t total = 0;
    while (!sc->eof) {
        ssize_t n = recv(sc->fd, w->rbuf, RBUF_SIZE, 0);
        if (n > 0) {
            if (h2b_conn_recv(sc->conn, w->rbuf, (size_t)n) != H2B_OK) {
                conn_close(sc);
                return;
            }
            total += (size_t)n;
            if (total >= RBUF_SIZE) {
                more_to_read(sc);
                break;
            }
            if (!sc->rdhup)
                break;
        } else if (n == 0) {
            sc->eof = true;
            h2b_conn_input_closed(sc->conn);
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            conn_close(sc);
            return;
        }
    }
    conn_flush(sc);
}

static void tls_read(struct sconn *sc)
{
    struct worker *w = sc->w;
    size_t total = 0;
    for (;;) {
        ERR_clear_error();
        int r = SSL_read(sc->ssl, w->rbuf, RBUF_SIZE);
        if (r > 0) {
            if (h2b_conn_recv(sc->conn, w->rbuf, (size_t)r) != H2B_OK) {
                conn_close(sc);
                return;
            }
            total += (size_t)r;
            if (total >= RBUF_SIZE) {
                more_to_read(sc); /* bounded turn; decrypted bytes may wait inside OpenSSL */
                break;
            }
            continue;
        }
        int e = SSL_get_error(sc->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            break;
        conn_close(sc); /* close_notify, EOF or a TLS error */
        return;
    }
    conn_flush(sc);
}

static void tls_handshake(struct sconn *sc)
{
    ERR_clear_error();
    int r = SSL_do_handshake(sc->ssl);
    if (r != 1) {
        int e = SSL_get_error(sc->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            conn_close(sc);
        return;
    }
    const unsigned char *alpn = NULL;
    unsigned alpnlen = 0;
    SSL_get0_alpn_selected(sc->ssl, &alpn, &alpnlen);
    bool h1 = alpnlen == 8 && memcmp(alpn, "http/1.1", 8) == 0;
    if (!h1 && (alpnlen != 2 || memcmp(alpn, "h2", 2) != 0)) {
        conn_close(sc);
        return;
    }
    if (h1 && h2b_conn_set_proto(sc->conn, H2B_PROTO_H1) != H2B_OK) {
        conn_close(sc);
        return;
    }
    sc->handshaking = false;
    tls_read(sc);
}

static void conn_readable(struct sconn *sc)
{
    if (sc->closed)
        return;
    if (sc->lingering)
        linger_read(sc);
    else if (sc->handshaking)
        tls_handshake(sc);
    else if (sc->ssl)
        tls_read(sc);
    else
        plain_read(sc);
}

/* Readiness events on sc (both loops: epoll's, and io_uring's for TLS connections). */
static inline __attribute__((always_inline)) void conn_event(struct sconn *sc, uint32_t e)
{
    /* EPOLLOUT is in nearly every event mask (the socket is writable); only a
     * connection that was blocked or is handshaking has something to resume. */
    if ((e & EPOLLOUT) && (sc->write_blocked || sc->handshaking)) {
        sc->write_blocked = false;
        if (sc->handshaking)
            tls_handshake(sc);
        else
            conn_flush(sc);
    }
    if (e & (EPOLLRDHUP | EPOLLHUP))
        sc->rdhup = true;
    if (e & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
        conn_readable(sc);
}

static void conn_adopt(struct worker *w, int fd, struct ipent *ip)
{
    struct server *srv = w->srv;
    struct sconn *sc = calloc(1, sizeof *sc);
    if (!sc)
        goto out_fd;
    sc->w = w;
    sc->fd = fd;
    sc->ip = ip; /* TCP_NODELAY: inherited from the listener */
    if (srv->ssl) {
        sc->ssl = SSL_new(srv->ssl);
        if (!sc->ssl || !h2b_tls_out_attach(sc->ssl, fd, &w->tls_out))
            goto out_sc;
        SSL_set_accept_state(sc->ssl);
        sc->handshaking = true;
    }
    if (h2b_conn_new(&sc->conn, w->ctx, sc) != H2B_OK)
        goto out_sc;
    /* cleartext: the h2c preface or an HTTP/1.1 request, told apart by the first bytes */
    if (!srv->ssl && h2b_conn_set_proto(sc->conn, H2B_PROTO_DETECT) != H2B_OK)
        goto out_conn;
    if (w->ring) {
        if (h2b__uring_adopt(sc) != H2B_OK)
            goto out_conn;
    } else {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                 .data.ptr = sc};
        if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            goto out_conn;
    }
    h2b_list_insert_head(&w->conns, &sc->link);
    w->nconns++;
    if (w->draining)
        conn_close(sc);
    return;
out_conn:
    h2b_conn_del(sc->conn);
out_sc:
    SSL_free(sc->ssl);
    free(sc);
out_fd:
    close(fd);
    ip_release(srv, ip);
    atomic_fetch_sub(&srv->nconns, 1);
}

static void worker_wake(struct worker *w)
{
    uint64_t one = 1;
    ssize_t r = write(w->evfd, &one, sizeof one);
    (void)r; /* a full counter still wakes the worker */
}

/* Adopts what the accepting thread queued (the eventfd was read). */
static inline __attribute__((always_inline)) void adopt_queued(struct worker *w)
{
    struct handoff hs[64];
    for (;;) {
        size_t n = 0;
        pthread_mutex_lock(&w->lock);
        while (n < 64 && w->qlen > 0)
            hs[n++] = w->queue[--w->qlen];
        pthread_mutex_unlock(&w->lock);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            conn_adopt(w, hs[i].fd, hs[i].ip);
    }
}

static void worker_adopt_queue(struct worker *w)
{
    uint64_t v;
    ssize_t r = read(w->evfd, &v, sizeof v);
    (void)r;
    adopt_queued(w);
}

/* epoll data of a listener registered in a worker's own loop. */
static char listener_tag;

static bool accept_burst(struct server *srv, int lfd, unsigned *rr, struct worker *direct);

static void listener_watch(struct worker *w, bool on)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listener_tag};
    epoll_ctl(w->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->lfd, &ev);
}

/* How long epoll may sleep: until the next timer, 0 with work pending, NULL for ever. ns
 * precision (epoll_pwait2) so that /delay/MS answers on time, not on a millisecond boundary. */
static struct timespec *worker_timeout(struct worker *w, uint64_t now, struct timespec *ts)
{
    uint64_t d = h2b_conn_ctx_next_deadline(w->ctx);
    if (!h2b_list_empty(&w->more) || h2b_conn_ctx_has_dirty(w->ctx))
        d = now;
    const struct sconn *first = H2B_LIST_FIRST(&w->linger, struct sconn, rlink);
    if (first && first->linger_until < d)
        d = first->linger_until;
    if (w->draining && w->drain_until < d)
        d = w->drain_until;
    if (w->listen_pause && w->listen_pause < d)
        d = w->listen_pause;
    if (d == UINT64_MAX)
        return NULL;
    uint64_t wait = d > now ? d - now : 0;
    ts->tv_sec = (time_t)(wait / H2B_NS_PER_SEC);
    ts->tv_nsec = (long)(wait % H2B_NS_PER_SEC);
    return ts;
}

static inline __attribute__((always_inline)) void worker_start_drain(struct worker *w, uint64_t now)
{
    if (w->lfd >= 0 && !w->listen_pause)
        listener_watch(w, false);
    w->draining = true;
    w->drain_until = now + w->srv->cfg.drain_ns;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &w->conns)
    {
        struct sconn *sc = H2B_LIST_ENTRY(pos, struct sconn, link);
        if (sc->handshaking || sc->lingering)
            conn_close(sc);
        else
            h2b_conn_shutdown(sc->conn);
    }
}

/* One bounded turn for each connection that may hold more input (those that still do go on the
 * list again, for the next turn). */
static inline __attribute__((always_inline)) void more_turn(struct worker *w)
{
    struct h2b_list turn;
    h2b_list_take(&turn, &w->more);
    for (struct sconn *sc; (sc = H2B_LIST_POP(&turn, struct sconn, rlink)) != NULL;) {
        sc->in_rlist = false;
        conn_readable(sc);
    }
}

/* Frees the connections closed this turn. */
static void bury(struct worker *w)
{
    for (struct sconn *sc; (sc = H2B_LIST_POP(&w->grave, struct sconn, link)) != NULL;) {
        free(sc);
    }
}

/* The end of a loop turn (both loops; inlined, uring a constant: the epoll loop pays nothing).
 * Returns true when the worker is done. */
static inline __attribute__((always_inline)) bool turn_end(struct worker *w, uint64_t now,
                                                           bool uring)
{
    if (!h2b_list_empty(&w->more))
        more_turn(w);
    struct h2b_conn *c;
    while ((c = h2b_conn_ctx_pop_dirty(w->ctx)) != NULL) {
        struct sconn *sc = h2b_conn_user(c);
        if (h2b_conn_fatal(c))
            conn_close(sc);
        else if (uring)
            h2b__uring_flush(sc);
        else
            conn_flush(sc);
    }
    for (struct sconn *sc;
         (sc = H2B_LIST_FIRST(&w->linger, struct sconn, rlink)) != NULL && sc->linger_until <= now;)
        conn_close(sc);
    if (w->listen_pause && now >= w->listen_pause && !w->draining) {
        listener_watch(w, true);
        w->listen_pause = 0;
    }
    if (atomic_load_explicit(&w->stop, memory_order_acquire) && !w->draining)
        worker_start_drain(w, now);
    bury(w);
    return w->draining && (w->nconns == 0 || now >= w->drain_until);
}

static void close_all(struct worker *w)
{
    for (struct sconn *sc; (sc = H2B_LIST_FIRST(&w->conns, struct sconn, link)) != NULL;)
        conn_close(sc);
    bury(w);
}

static void worker_thread_start(struct worker *w)
{
    char name[16];
    snprintf(name, sizeof name, "h2b-w%d", w->idx);
    pthread_setname_np(pthread_self(), name);
    if (w->cpu >= 0)
        h2b_cpu_pin_self_to(w->cpu);
    /* Count this thread's allocations for /stats (a no-op without the interposer). */
    h2b_alloc_reset();
    h2b_alloc_arm();
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    worker_thread_start(w);
    struct epoll_event evs[MAX_EVENTS];
    for (;;) {
        struct timespec ts;
        const struct timespec *tmo = worker_timeout(w, h2b_clock_now_ns(), &ts);
        int n = -1;
        if (!w->no_pwait2) {
            n = epoll_pwait2(w->ep, evs, MAX_EVENTS, tmo, NULL);
            w->no_pwait2 = n < 0 && errno != EINTR; /* ENOSYS: old kernels, valgrind */
        }
        if (w->no_pwait2) {
            long ms = -1;
            if (tmo) {
                uint64_t ns = (uint64_t)tmo->tv_sec * H2B_NS_PER_SEC + (uint64_t)tmo->tv_nsec;
                ns = (ns + H2B_NS_PER_MS - 1) / H2B_NS_PER_MS;
                ms = ns > 60000 ? 60000 : (long)ns;
            }
            n = epoll_wait(w->ep, evs, MAX_EVENTS, (int)ms);
        }
        uint64_t now = h2b_clock_now_ns();
        h2b_conn_ctx_tick(w->ctx, now);
        for (int i = 0; i < n; i++) {
            struct sconn *sc = evs[i].data.ptr;
            if (!sc) {
                worker_adopt_queue(w);
                continue;
            }
            if (sc == (void *)&listener_tag) {
                if (!accept_burst(w->srv, w->lfd, NULL, w)) {
                    listener_watch(w, false); /* EMFILE and such: pause 100 ms, no spinning */
                    w->listen_pause = now + 100 * H2B_NS_PER_MS;
                }
                continue;
            }
            if (sc->closed)
                continue;
            conn_event(sc, evs[i].events);
        }
        if (turn_end(w, now, false))
            break;
    }
    close_all(w);
    return NULL;
}

/* ---- setup ---- */

static int listen_on(const struct h2b_server_config *cfg, int *out, struct h2b_diag *d)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char port[8];
    snprintf(port, sizeof port, "%u", cfg->port);
    int rc = getaddrinfo(cfg->host, port, &hints, &res);
    if (rc != 0) {
        h2b_diag_at(d, NULL, 0, 0, "cannot resolve --host %s: %s", cfg->host, gai_strerror(rc));
        return H2B_ERR_INVAL;
    }
    int fd = -1;
    int saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        /* accepted sockets inherit TCP_NODELAY: no setsockopt per connection */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 4096) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        h2b_diag_at(d, NULL, 0, 0, "cannot listen on %s:%u: %s", cfg->host, cfg->port,
                    strerror(saved));
        return H2B_ERR_SYS;
    }
    *out = fd;
    return H2B_OK;
}

static void print_ready(const struct server *srv, int lfd)
{
    const struct h2b_server_config *cfg = &srv->cfg;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    unsigned port = cfg->port;
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    bool v6 = strchr(cfg->host, ':') != NULL;
    FILE *f = cfg->ready;
    if (!f)
        return;
    if (cfg->io == H2B_IO_URING) { /* asked for: say what runs, before the line waited for */
        if (srv->io == H2B_IO_URING)
            fprintf(f, "io: uring\n");
        else
            fprintf(f, "io: epoll (io_uring unavailable: %s)\n", srv->io_fallback);
    }
    fprintf(f, "listening on %s://%s%s%s:%u\n", cfg->tls ? "https" : "http", v6 ? "[" : "",
            cfg->host, v6 ? "]" : "", port);
    fflush(f);
}

#define FILES_DEFAULT 1024

/* Raises the descriptor limit to max_connections + 128 (listeners, epoll, eventfds, TLS) plus
 * the docroot file budget, and returns that budget: what is left beside the connections (at
 * least 16), capped by the configured or default maximum. */
static uint32_t raise_nofile(uint32_t max_connections, uint32_t max_files)
{
    uint32_t files = max_files ? max_files : FILES_DEFAULT;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 16;
    rlim_t base = (rlim_t)max_connections + 128;
    rlim_t want = base + files;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t left = rl.rlim_cur > base ? rl.rlim_cur - base : 0;
    if (left < files)
        files = left > 16 ? (uint32_t)left : 16;
    return files;
}

static int worker_init(struct server *srv, struct worker *w, int idx)
{
    w->srv = srv;
    w->idx = idx;
    w->cpu = srv->cfg.pin ? h2b_cpu_nth(&srv->cfg.cpus, idx) : -1;
    w->ep = epoll_create1(EPOLL_CLOEXEC);
    w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->rbuf = malloc(RBUF_SIZE);
    h2b_list_init(&w->conns);
    h2b_list_init(&w->more);
    h2b_list_init(&w->linger);
    h2b_list_init(&w->grave);
    pthread_mutex_init(&w->lock, NULL);
    atomic_init(&w->stop, false);
    if (w->ep < 0 || w->evfd < 0 || !w->rbuf)
        return H2B_ERR_SYS;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->evfd, &ev) != 0)
        return H2B_ERR_SYS;
    struct h2b_conn_config cc = srv->cfg.conn;
    cc.docroot_fd = srv->docroot_fd;
    cc.memory_used = srv->cfg.conn.memory_used ? srv->cfg.conn.memory_used : &srv->mem_used;
    cc.files = &srv->files;
    cc.copy_bodies = srv->cfg.tls;
    int rc = h2b_conn_ctx_new(&w->ctx, &cc);
    if (rc != H2B_OK)
        return rc;
    h2b_conn_ctx_set_stats_fn(w->ctx, stats_json, srv);
    h2b_tls_pool_init(&w->tls_out, cc.memory_used);
    return H2B_OK;
}

static void worker_free(struct worker *w)
{
    h2b__uring_free(w); /* before the context: connections waiting for completions go first */
    h2b_conn_ctx_del(w->ctx);
    if (w->ep >= 0)
        close(w->ep);
    if (w->evfd >= 0)
        close(w->evfd);
    for (size_t i = 0; i < w->qlen; i++) {
        close(w->queue[i].fd);
        ip_release(w->srv, w->queue[i].ip);
    }
    free(w->queue);
    free(w->rbuf);
    h2b_tls_pool_free(&w->tls_out);
    pthread_mutex_destroy(&w->lock);
}

static bool worker_push(struct worker *w, int fd, struct ipent *ip)
{
    pthread_mutex_lock(&w->lock);
    if (w->qlen == w->qcap) {
        size_t cap = w->qcap ? w->qcap * 2 : 64;
        struct handoff *q = realloc(w->queue, cap * sizeof *q);
        if (!q) {
            pthread_mutex_unlock(&w->lock);
            return false;
        }
        w->queue = q;
        w->qcap = cap;
    }
    bool was_empty = w->qlen == 0;
    w->queue[w->qlen++] = (struct handoff){fd, ip};
    pthread_mutex_unlock(&w->lock);
    if (was_empty)
        worker_wake(w);
    return true;
}

/* Admits the accepted fd from ss: the connection limits, then to direct or round-robin through
 * the workers' queues (*rr). */
static void admit(struct server *srv, int fd, const struct sockaddr_storage *ss, unsigned *rr,
                  struct worker *direct)
{
    if (atomic_load(&srv->nconns) >= srv->cfg.max_connections) {
        h2b_stats_add(&srv->stats, H2B_STAT_GUARD_MAXCONN, 1);
        close(fd);
        return;
    }
    struct ipent *ip;
    if (!ip_acquire(srv, ss, &ip)) {
        h2b_stats_add(&srv->stats, H2B_STAT_GUARD_MAXCONN_IP, 1);
        close(fd);
        return;
    }
    atomic_fetch_add(&srv->nconns, 1);
    if (direct) {
        conn_adopt(direct, fd, ip);
        return;
    }
    struct worker *w = &srv->w[(*rr)++ % (unsigned)srv->nworkers];
    if (!worker_push(w, fd, ip)) {
        close(fd);
        ip_release(srv, ip);
        atomic_fetch_sub(&srv->nconns, 1);
    }
}

/* Accepts until EAGAIN (bounded); returns false when accept should pause (EMFILE and such).
 * Connections go to direct when given (a single worker accepting in its own loop), otherwise
 * round-robin through the workers' queues. */
static __attribute__((noinline)) bool accept_burst(struct server *srv, int lfd, unsigned *rr,
                                                   struct worker *direct)
{
    for (int i = 0; i < ACCEPT_BURST; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK;
        }
        admit(srv, fd, &ss, rr, direct);
    }
    return true;
}

/* Puts every worker on io_uring, or all of them on epoll with the reason in srv->io_fallback
 * (and one line on cfg.notice) when a ring cannot be set up. */
static void use_uring(struct server *srv)
{
    for (int i = 0; i < srv->nworkers; i++) {
        if (h2b__uring_init(&srv->w[i], srv->io_fallback, sizeof srv->io_fallback) != H2B_OK) {
            for (int j = 0; j < i; j++)
                h2b__uring_free(&srv->w[j]);
            if (srv->cfg.notice)
                fprintf(srv->cfg.notice, "h2bench serve: --io uring: %s; using epoll\n",
                        srv->io_fallback);
            return;
        }
    }
    srv->io = H2B_IO_URING;
}

static const struct h2b__core core_ops; /* at the end of the file */

int h2b_server_run(const struct h2b_server_config *cfg, struct h2b_diag *d)
{
    int rc = H2B_OK;
    struct server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return H2B_ERR_NOMEM;
    srv->cfg = *cfg;
    srv->core = &core_ops;
    srv->docroot_fd = -1;
    pthread_mutex_init(&srv->ip_lock, NULL);
    for (int i = 0; i < H2B_IP_BUCKETS; i++)
        h2b_list_init(&srv->ip[i]);
    srv->nworkers = cfg->threads > 0 ? cfg->threads : h2b_cpu_online();
    int lfd = -1, sfd = -1, started = 0;
    if (cfg->docroot) {
        srv->docroot_fd = open(cfg->docroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (srv->docroot_fd < 0) {
            h2b_diag_at(d, NULL, 0, 0, "cannot open --docroot %s: %s", cfg->docroot,
                        strerror(errno));
            rc = H2B_ERR_IO;
            goto out;
        }
    }
    if (cfg->tls) {
        srv->ssl = h2b_tls_ctx_new(cfg->cert_file, cfg->key_file, d);
        if (!srv->ssl) {
            rc = H2B_ERR_IO;
            goto out;
        }
    }
    srv->files.max = raise_nofile(cfg->max_connections, cfg->max_open_files);
    signal(SIGPIPE, SIG_IGN);
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) {
        h2b_diag_at(d, NULL, 0, 0, "signalfd: %s", strerror(errno));
        rc = H2B_ERR_SYS;
        goto out_mask;
    }
    rc = listen_on(cfg, &lfd, d);
    if (rc != H2B_OK)
        goto out_mask;
    srv->w = calloc((size_t)srv->nworkers, sizeof *srv->w);
    if (!srv->w) {
        rc = H2B_ERR_NOMEM;
        goto out_mask;
    }
    for (int i = 0; i < srv->nworkers; i++)
        srv->w[i].ep = srv->w[i].evfd = srv->w[i].lfd = -1;
    for (int i = 0; i < srv->nworkers; i++) {
        rc = worker_init(srv, &srv->w[i], i);
        if (rc != H2B_OK) {
            h2b_diag_at(d, NULL, 0, 0, "cannot set up worker %d: %s", i, h2b_strerror(rc));
            goto out_workers;
        }
    }
    srv->io = H2B_IO_EPOLL;
    if (cfg->io == H2B_IO_URING)
        use_uring(srv);
    /* One worker accepts in its own loop: no handoff, no thread switch per connection. */
    bool direct = srv->nworkers == 1;
    if (direct) {
        srv->w[0].lfd = lfd;
        if (srv->w[0].ring)
            h2b__uring_listen(&srv->w[0], true);
        else
            listener_watch(&srv->w[0], true);
    }
    for (; started < srv->nworkers; started++) {
        void *(*loop)(void *) = srv->io == H2B_IO_URING ? h2b__uring_worker_main : worker_main;
        if (pthread_create(&srv->w[started].th, NULL, loop, &srv->w[started]) != 0) {
            h2b_diag_at(d, NULL, 0, 0, "cannot start worker threads");
            rc = H2B_ERR_SYS;
            goto out_stop;
        }
    }
    print_ready(srv, lfd);
    unsigned rr = 0;
    bool accepting = true;
    for (;;) {
        struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = lfd, .events = POLLIN}};
        int n = poll(pf, accepting && !direct ? 2 : 1, accepting ? -1 : 100);
        if (n < 0 && errno != EINTR) {
            rc = H2B_ERR_SYS;
            break;
        }
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                break;
        }
        if (!accepting) {
            accepting = true; /* 100 ms pause after EMFILE is over */
            continue;
        }
        if (!direct && (pf[1].revents & POLLIN))
            accepting = accept_burst(srv, lfd, &rr, NULL);
    }
out_stop:
    for (int i = 0; i < started; i++) {
        atomic_store_explicit(&srv->w[i].stop, true, memory_order_release);
        worker_wake(&srv->w[i]);
    }
    for (int i = 0; i < started; i++)
        pthread_join(srv->w[i].th, NULL);
out_workers:
    for (int i = 0; srv->w && i < srv->nworkers; i++)
        worker_free(&srv->w[i]);
    free(srv->w);
out_mask:
    if (lfd >= 0)
        close(lfd);
    if (sfd >= 0)
        close(sfd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
    if (srv->docroot_fd >= 0)
        close(srv->docroot_fd);
    SSL_CTX_free(srv->ssl);
    for (int i = 0; i < H2B_IP_BUCKETS; i++) { /* entries left by connections closed at exit */
        for (struct ipent *e; (e = H2B_LIST_FIRST(&srv->ip[i], struct ipent, link)) != NULL;) {
            h2b_list_unlink(&e->link);
            free(e);
        }
    }
    pthread_mutex_destroy(&srv->ip_lock);
    free(srv);
    return rc;
}

/* ---- the core's operations, for the io_uring loop (io.h's struct h2b__core) ---- */

static void core_conn_close(struct sconn *sc)
{
    conn_close(sc);
}

static void core_conn_event(struct sconn *sc, uint32_t events)
{
    conn_event(sc, events);
}

static void core_conn_flush(struct sconn *sc)
{
    conn_flush(sc);
}

static void core_conn_finish(struct sconn *sc)
{
    conn_finish(sc);
}

static void core_adopt_queued(struct worker *w)
{
    adopt_queued(w);
}

static void core_accepted(struct server *srv, int fd, const struct sockaddr_storage *ss,
                          unsigned *rr, struct worker *direct)
{
    struct sockaddr_storage peer = {0};
    socklen_t sl = sizeof peer;
    if (!ss) { /* a multishot accept gives no address; only the per-address limit needs it */
        if (srv->cfg.max_connections_per_ip && getpeername(fd, (struct sockaddr *)&peer, &sl) != 0)
            peer.ss_family = AF_UNSPEC;
        ss = &peer;
    }
    admit(srv, fd, ss, rr, direct);
}

static struct timespec *core_timeout(struct worker *w, uint64_t now, struct timespec *ts)
{
    return worker_timeout(w, now, ts);
}

static bool core_turn_end(struct worker *w, uint64_t now)
{
    return turn_end(w, now, true);
}

static void core_close_all(struct worker *w)
{
    close_all(w);
}

static const struct h2b__core core_ops = {
    .thread_start = worker_thread_start,
    .conn_close = core_conn_close,
    .conn_event = core_conn_event,
    .conn_flush = core_conn_flush,
    .conn_finish = core_conn_finish,
    .adopt_queued = core_adopt_queued,
    .accepted = core_accepted,
    .timeout = core_timeout,
    .turn_end = core_turn_end,
    .close_all = core_close_all,
};
