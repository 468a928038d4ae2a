/*
 * engine.h - internals shared by load.c (the run) and worker.c (one worker thread).
 *
 * Not installed, not for users of the library: the public surface is load.h.
 */
#ifndef H2B_LOAD_ENGINE_H
#define H2B_LOAD_ENGINE_H

#include "load/arrival.h"
#include "load/h2fast.h"
#include "load/load.h"
#include "core/pool_nghttp2.h" /* harness/core: the size-class pool as an nghttp2_mem */

#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* Read-only during the run; every worker points at the same one. */
struct h2b__load_shared {
    const struct h2b_load_config *cfg;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    SSL_CTX *ssl_ctx; /* NULL for h2c */
    nghttp2_session_callbacks *callbacks;
    nghttp2_option *option;
    nghttp2_nv **nva; /* per URI, names and values point into cfg (NO_COPY) */
    size_t *nvlen;
    bool fast;                /* --engine fast: h2fast.c frames, no nghttp2_session */
    struct h2b_h2f_req *reqs; /* fast: per URI, its header list for h2fast.c's encoder */
    uint64_t t0;              /* run start (CLOCK_MONOTONIC ns) */
    uint64_t t_measure;       /* requests intended before this are warm-up: not measured */
    uint64_t t_end;           /* -D: end of the measurement; 0 in count mode */
    bool rate_mode;
    bool paced;        /* --rps or --timing-script-file: per-connection schedules */
    uint64_t wall0_us; /* CLOCK_REALTIME at t0, microseconds (--log-file) */
    FILE *info;        /* h2load's live lines (protocol, TLS, progress, phases); NULL = none */
    bool method_head; /* -H ':method: HEAD': responses carry no body whatever content-length says */
    bool progress;    /* keep interval histograms for the progress line */
    atomic_int *stop; /* set by h2b_load_stop() */
    bool h1;          /* HTTP/1.1 (--h1, -p http/1.1, or the server chose it from --npn-list) */
};

struct h2b__load_conn;

/* Published on request by the progress line (see worker.c: snapshot). */
struct h2b__load_snapshot {
    uint64_t ended;  /* requests ended (done + errored), cumulative */
    uint64_t errors; /* failed, cumulative */
    uint64_t inflight;
};

struct h2b__load_worker {
    int id;
    pthread_t thread;
    const struct h2b__load_shared *sh;
    int epfd;
    uint64_t now;
    struct h2b__load_conn *conns;
    uint32_t nconns;
    struct h2b__load_conn **dirty; /* connections with bytes to send this loop turn */
    uint32_t ndirty;
    uint8_t *rbuf;
    struct h2b_pool pool; /* nghttp2's allocations for this worker's sessions */
    nghttp2_mem mem;
    uint64_t inflight;
    bool all_busy;         /* --rate: no connection had a free stream at the last release */
    uint32_t rr;           /* --rate: round-robin cursor over conns */
    uint32_t ramp_started; /* -r: connections started so far */
    uint32_t ramp_batch;   /* -r: this worker's share of the rate (per period) */
    uint64_t next_ramp;
    uint64_t next_pace; /* paced: earliest due time of a connection with a free stream */
    char *logbuf;       /* --log-file rows waiting for one write(2) */
    uint64_t todo;      /* -n: this worker's requests (h2load's progress is per 10% of them) */
    uint64_t ended;     /* measured requests ended so far */
    int phase;          /* -D: 0 before the first connection, 1 warm-up, 2 main, 3 over */
    bool app_reported;  /* "Application protocol:" printed (worker 0) */
    bool tls_reported;
    size_t loglen;
    struct h2b_arrival sched;
    bool sched_started;
    uint64_t sched_left; /* --rate with -n: arrivals still to hand out */
    uint64_t next_tick;  /* next scan for timeouts */
    uint64_t tick_ns;
    struct h2b_load_stats stats;
    double *conn_rps; /* per connection, filled when the worker ends */
    bool interrupted;
    /* progress hand-off: the aggregator bumps snap_req; the worker swaps interval histograms,
     * fills snap and stores snap_ack = snap_req (release). */
    struct h2b_hist *ival[2];
    int ival_active;
    int ival_retired; /* the one handed to the aggregator at the last snapshot */
    atomic_uint snap_req;
    atomic_uint snap_ack;
    unsigned snap_seen;
    struct h2b__load_snapshot snap;
    atomic_int finished;
    int rc;
    bool no_pwait2;       /* epoll_pwait2 is missing (ENOSYS): epoll_wait with ms timeouts */
    uint32_t nap_skip;    /* --coalesce: turns to sleep in epoll before the next nap */
    uint32_t nap_backoff; /* the last skip (doubles while naps find nothing) */
    uint64_t nap_ns;      /* --coalesce: the current nap (adapts up to coalesce_ns) */
    uint32_t busy_conns;  /* connections with requests in flight (HTTP/2 engines) */
    void *h3;             /* --h3: the HTTP/3 engine's state (h3load.c) */
    void *h1;             /* HTTP/1.1: the h1 engine's state (h1load.c) */
};

/* How a request ended (worker.c and h3load.c count them the same way). */
enum h2b__load_outcome {
    H2B__LOAD_RESPONSE, /* a whole response (any status) */
    H2B__LOAD_RESET,    /* the server reset the stream */
    H2B__LOAD_PROTOCOL, /* the response broke the protocol */
    H2B__LOAD_ERROR,    /* the connection died */
    H2B__LOAD_TIMEOUT   /* --timeout, -N or -T */
};

/* Counts one ended request in w->stats and its histograms: latency from t_intended, service from
 * t_sent (0: never sent), status for responses. Returns measured (false: warm-up, nothing
 * counted). */
bool h2b__load_record(struct h2b__load_worker *w, bool measured, uint64_t t_intended,
                      uint64_t t_sent, uint16_t status, enum h2b__load_outcome how);

/* One turn of a worker's loop, the same for every engine (worker.c runs both HTTP/2 engines
 * with it, h1load.c and h3load.c theirs): wait at most ns for events and hand each to
 * on_event; then the stop flag, after_events, the open-loop release (--total-rps, while the
 * run lasts: h2b__load_release with rate), after_release, the timeout tick (every w->tick_ns) and
 * the progress hand-off. Hooks may be NULL. Returns false when epoll failed (w->rc is set). The
 * wait is epoll_pwait2 (ns timeout), or epoll_wait rounded up to a millisecond where the kernel or
 * valgrind lacks it (ENOSYS, remembered per worker). */
/* The open loop's release (--total-rps), one for every engine: once all of the worker's
 * connections are up or failed, the arrival schedule starts (worker i phase-shifted by i/R, so
 * the merged constant stream is evenly interleaved, and connection set-up is not charged to the
 * first requests); then every arrival whose intended time has come goes to the next connection,
 * round-robin from w->rr, that can take a request. An arrival that finds none stays in the
 * schedule with its intended time (w->all_busy until a stream frees). The engine says what its
 * connection i is: */
struct h2b__load_rate {
    bool (*settled)(const struct h2b__load_worker *w, uint32_t i);  /* up, or failed for good */
    bool (*can_take)(const struct h2b__load_worker *w, uint32_t i); /* a request may go now */
    /* sends the arrival intended at t on it; false: refused (the arrival stays scheduled) */
    bool (*submit)(struct h2b__load_worker *w, uint32_t i, uint64_t t);
};
void h2b__load_release(struct h2b__load_worker *w, const struct h2b__load_rate *r);

struct h2b__load_turn {
    void (*on_event)(void *ptr, uint32_t events);
    void (*after_events)(struct h2b__load_worker *w);
    const struct h2b__load_rate *rate; /* h2b__load_release's hooks */
    void (*after_release)(struct h2b__load_worker *w);
    void (*timeouts)(struct h2b__load_worker *w);
};
bool h2b__load_turn(struct h2b__load_worker *w, uint64_t ns, const struct h2b__load_turn *t);

/* The worker's run is still on: not interrupted (h2b_load_stop) and, under -D, before its end. */
static inline bool h2b__load_running(const struct h2b__load_worker *w)
{
    return !w->interrupted && (w->sh->t_end == 0 || w->now < w->sh->t_end);
}

/* The loop's end, the same for every engine: the run is over, or no connection is alive
 * (alive(w, i): connection i is neither finished nor dead), or under --total-rps every
 * arrival has been handed out and answered. */
bool h2b__load_worker_done(const struct h2b__load_worker *w,
                           bool (*alive)(const struct h2b__load_worker *w, uint32_t i));

/* How long a loop turn may sleep, in ns from w->now: until the earliest of MAX_WAIT (the stop
 * flag and progress are noticed this fast), the next timeout tick, -D's end, the next
 * --total-rps arrival and until (the engine's own deadline, UINT64_MAX for none). */
uint64_t h2b__load_wait_ns(const struct h2b__load_worker *w, uint64_t until);

/* Opens a non-blocking TCP socket (TCP_NODELAY) to the target into *fd, starts connecting and
 * registers it with the worker's epoll for EPOLLOUT (data.ptr = ptr). Returns 0 connected at
 * once, 1 connecting, -1 failed (*fd, if opened, is the caller's to close). */
int h2b__load_tcp_open(struct h2b__load_worker *w, void *ptr, int *fd);

/* fd's non-blocking connect has completed (EPOLLOUT): 0 connected, HTTP may start; 1 TLS: *ssl
 * is set up for the handshake; -1 the connect failed or the TLS state could not be made. */
int h2b__load_tcp_connected(struct h2b__load_worker *w, int fd, SSL **ssl);

/* What a torn-down connection does next, decided the same way by every engine: it reconnects if
 * it owes requests and got responses since its last connect (one more try), else it has finished
 * (nothing owed) or is dead; in -n mode what a dead one still owed is counted as not sent
 * (errored, failed) and *budget becomes 0. reached: it had got as far as sending requests (else
 * it counts as a failed connection). Resets *responses on a reconnect. */
enum h2b__load_next { H2B__LOAD_RECONNECT, H2B__LOAD_FINISHED, H2B__LOAD_DEAD };
enum h2b__load_next h2b__load_closed(struct h2b__load_worker *w, bool reached, uint64_t *budget,
                                     uint64_t *responses);

/* Answers a pending progress snapshot request (call once per loop turn). */
void h2b__load_snapshot(struct h2b__load_worker *w);

/* A connection's share of -n: its slice of requests over nconns (remainders first), -n per
 * client with --timing-script-file (h2load's way), unbounded under --total-rps or -D. */
uint64_t h2b__load_budget(const struct h2b__load_shared *sh, uint64_t requests, uint32_t nconns,
                          uint32_t i);

/* The connection deadlines every engine checks on its tick: -T (a connection's life since
 * connect), a connect or handshake that hangs (bounded by --timeout, else -N) and -N while
 * requests are in flight (busy). True: close the connection (it may reconnect). */
bool h2b__load_conn_expired(const struct h2b_load_config *cfg, uint64_t now, uint64_t t_connect,
                            bool ready, uint64_t last_read, bool busy);

/* Sets up a worker for conns connections (first_conn is its global index, for URI rotation).
 * Returns H2B_OK, H2B_ERR_NOMEM or H2B_ERR_SYS. */
int h2b__load_worker_init(struct h2b__load_worker *w, int id, const struct h2b__load_shared *sh,
                          uint32_t nconns, uint32_t first_conn, uint64_t requests);
void h2b__load_worker_free(struct h2b__load_worker *w);

/* Thread body: runs the worker's loop to the end; w->rc holds the outcome. */
void *h2b__load_worker_main(void *arg);

/* Points ssl's record counting (the message callback every SSL_CTX of a run has, load.c) at
 * st: each application_data record it receives adds one to st->tls_records, and the first one
 * sets st->tls_version and st->tls_cipher. st belongs to the thread that drives ssl. */
SSL *h2b__load_tls_new(const struct h2b__load_shared *sh, int fd, struct h2b_load_stats *st);

/* "TLSv1.3", "TLSv1.2", ... for an OpenSSL protocol version ("unknown" otherwise). */
const char *h2b__load_tls_name(int version);

/* Formats a message into err (one line, truncated to errlen) and returns code. */
int h2b__load_errf(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Callbacks for every session (created once per run). */
int h2b__load_callbacks_new(nghttp2_session_callbacks **out);

#endif
