/*
 * io.h - the I/O backend seam of the server: what server.c (sockets, threads, the epoll loop)
 * shares with io_uring.c (the io_uring loop). Internal to servers/h2ref.
 *
 * Both backends drive the same connections (struct sconn) through the same connection core
 * (conn.h): bytes in with h2b_conn_recv, iovecs out with h2b_conn_output/h2b_conn_sent. What
 * differs is who moves the bytes: epoll reports readiness and server.c calls recv/send, io_uring
 * completes receives into a provided-buffer ring and sends submitted once per loop turn. The epoll
 * loop stays in server.c, unchanged: its hot path is gated to the instruction, and a vtable call
 * per read and write would add to it. A backend is chosen per server (serve --io).
 */
#ifndef H2B_H2REF_IO_H
#define H2B_H2REF_IO_H

#include "core/list.h"
#include "h2ref/conn.h"
#include "h2ref/server.h"
#include "h2ref/stats.h"
#include "h2ref/tls.h"

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define H2B_IP_BUCKETS 1024

/* Open connections of one source address (--max-connections-per-ip). */
struct ipent {
    struct h2b_list link; /* its bucket */
    uint8_t addr[16];
    uint8_t len; /* 4 or 16 */
    uint32_t n;
};

/* A connection on its way from the accepting thread to a worker. */
struct handoff {
    int fd;
    struct ipent *ip;
};

struct worker;
struct h2b__uconn;
struct h2b__uring;

struct sconn {
    struct h2b_list link;  /* worker's connections; once closed, the grave */
    struct h2b_list rlink; /* more-to-read list, or linger list */
    struct worker *w;
    struct h2b_conn *conn;
    SSL *ssl;
    struct ipent *ip;     /* source address count, or NULL without a per-address limit */
    struct h2b__uconn *u; /* io_uring state (allocated at adopt), NULL on epoll */
    int fd;
    bool in_rlist, lingering, handshaking, write_blocked, closed;
    bool rdhup; /* EPOLLRDHUP seen: the peer's FIN is queued behind the data, read until it */
    bool eof;   /* read() returned 0 */
    uint64_t linger_until;
};

struct server;

struct worker {
    struct server *srv;
    int idx;
    int cpu;
    pthread_t th;
    int ep;
    int evfd;
    struct h2b_conn_ctx *ctx;
    pthread_mutex_t lock;
    struct handoff *queue;
    size_t qlen, qcap;
    atomic_bool stop;
    uint8_t *rbuf;
    struct h2b_list conns;
    size_t nconns;
    struct h2b_list more, linger; /* of sconn.rlink */
    struct h2b_list grave;        /* closed this turn, freed at its end */
    bool draining;
    bool no_pwait2;        /* epoll_pwait2 is missing: millisecond epoll_wait instead */
    int lfd;               /* the listener, when this worker accepts itself (one worker) */
    uint64_t listen_pause; /* accept paused (EMFILE) until then; 0: accepting */
    uint64_t drain_until;
    struct h2b__uring *ring;     /* the io_uring backend's state, NULL on epoll */
    struct h2b_tls_pool tls_out; /* TLS connections' write buffers (tls.h) */
};

struct server {
    struct h2b_server_config cfg;
    SSL_CTX *ssl;
    int docroot_fd;
    int nworkers;
    struct worker *w;
    atomic_uint nconns;
    _Atomic uint64_t mem_used;          /* buffers held by all workers (--memory-budget) */
    struct h2b_files files;             /* open docroot files (handlers.h's budgets) */
    struct h2b_stats stats;             /* written by the accepting thread only */
    pthread_mutex_t ip_lock;            /* the accepting thread counts up, workers count down */
    struct h2b_list ip[H2B_IP_BUCKETS]; /* of ipent, by a hash of the address */
    const struct h2b__core *core;       /* server.c's operations, for io_uring.c */
    enum h2b_io io;                     /* the backend running (after any fallback) */
    char io_fallback[128];              /* why uring fell back to epoll; "" when it did not */
};

/* ---- server.c's operations, for the io_uring loop ----
 * The connection core and the worker's turn, which both loops share, stay in server.c (the epoll
 * loop calls them directly: its hot path is gated to the instruction). io_uring.c reaches them
 * only through this table (struct server's core), so it uses none of server.c's names: server.c
 * starts the backend and the backend calls back, and the two files do not use each other's names
 * in a circle (scripts/name-deps.py). The indirect calls cost the uring loop a few instructions
 * per completion. */
struct h2b__core {
    /* A worker thread's start, either loop: its name, its CPU, its allocation counting. */
    void (*thread_start)(struct worker *w);
    /* Closes sc (idempotent): unlinks it, releases its counts; on io_uring the connection core,
     * the socket and sc itself go once its last operation has completed (h2b__uring_release). */
    void (*conn_close)(struct sconn *sc);
    /* Handles readiness events (EPOLLIN, EPOLLOUT, ...) on sc the way the epoll loop does: TLS
     * handshakes, reads and writes, and lingering reads. */
    void (*conn_event)(struct sconn *sc, uint32_t events);
    /* Flushes sc's output with the synchronous write path (TLS). */
    void (*conn_flush)(struct sconn *sc);
    /* The session is over: close now if it failed, otherwise half-close and linger. */
    void (*conn_finish)(struct sconn *sc);
    /* Adopts the connections queued for w by the accepting thread (the eventfd was read). */
    void (*adopt_queued)(struct worker *w);
    /* Admits one accepted fd: the connection limits, then to direct (or round-robin to a worker
     * through *rr). Closes fd when a limit refuses it. ss: the peer's address (NULL: look it up
     * when a per-address limit needs it). */
    void (*accepted)(struct server *srv, int fd, const struct sockaddr_storage *ss, unsigned *rr,
                     struct worker *direct);
    /* How long to sleep: until the next timer, 0 with work pending, NULL for ever. */
    struct timespec *(*timeout)(struct worker *w, uint64_t now, struct timespec *ts);
    /* The end of one io_uring loop turn: more-to-read, dirty connections (h2b__uring_flush),
     * lingering, drain. Returns true when the worker is done. */
    bool (*turn_end)(struct worker *w, uint64_t now);
    /* Frees what is left at the worker's exit (every connection closed, the grave buried). */
    void (*close_all)(struct worker *w);
};

/* ---- io_uring.c ---- */

/* Sets up w's ring (its size, the provided-buffer ring). Returns H2B_OK, or an error with a
 * one-line reason in why[0..cap) (io_uring refused, missing, or built without liburing); w is
 * then left on epoll. H2B_URING_FAIL=1 in the environment forces the failure (tests). */
int h2b__uring_init(struct worker *w, char *why, size_t cap);

/* Flushes sc's output: a send through the ring (one in flight), or TLS's synchronous path. */
void h2b__uring_flush(struct sconn *sc);

/* Starts (on) or stops w's multishot accept on its listener w->lfd. */
void h2b__uring_listen(struct worker *w, bool on);

/* Frees w's ring (NULL: nothing) and the connections still waiting for their operations. */
void h2b__uring_free(struct worker *w);

/* The worker loop on io_uring (pthread start routine; arg: the struct worker). */
void *h2b__uring_worker_main(void *arg);

/* Arms sc's operations (multishot receive, or multishot poll for TLS). H2B_OK or
 * H2B_ERR_NOMEM. */
int h2b__uring_adopt(struct sconn *sc);

/* sc was closed: cancels its operations and puts it in the ring's grave; the connection core,
 * the socket and sc are freed at the turn's end or at its last completion (or by
 * h2b__uring_free). */
void h2b__uring_release(struct sconn *sc);

#endif
