/*
 * worker.h - the load runtime (worker.c): one worker thread's loop, its connections' share of
 * the work, pacing, counting and timeouts, and the client engine interface (struct
 * h2b__load_engine) through which it drives connections of one protocol.
 *
 * Not installed, not for users of the library: the public surface is load.h. It names no
 * protocol: what the engines share of theirs (TCP, TLS, request header lists) is engine.h's.
 */
#ifndef H2B_LOAD_WORKER_H
#define H2B_LOAD_WORKER_H

#include "load/arrival.h"
#include "load/load.h"
#include "core/diag.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>

struct h2b__load_proto; /* what the engines share of the protocols (engine.h) */
struct ssl_ctx_st;      /* OpenSSL's SSL_CTX */
struct h2b__load_engine;
struct h2b__load_ring; /* load --io uring (uring.h) */

/* Read-only during the run; every worker points at the same one. */
struct h2b__load_shared {
    const struct h2b_load_config *cfg;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    struct ssl_ctx_st *ssl_ctx;            /* TLS (tcp.c); NULL for cleartext */
    bool tls;                              /* ssl_ctx is set */
    const struct h2b__load_proto *proto;   /* the request header lists (engine.h) */
    const struct h2b__load_engine *engine; /* every worker's connections */
    uint64_t t0;                           /* run start (CLOCK_MONOTONIC ns) */
    uint64_t t_measure; /* requests intended before this are warm-up: not measured */
    uint64_t t_end;     /* -D: end of the measurement; 0 in count mode */
    bool rate_mode;
    bool paced;        /* --rps or --timing-script-file: per-connection schedules */
    uint64_t wall0_us; /* CLOCK_REALTIME at t0, microseconds (--log-file) */
    FILE *info;        /* h2load's live lines (protocol, TLS, progress, phases); NULL = none */
    bool method_head; /* -H ':method: HEAD': responses carry no body whatever content-length says */
    bool grpc;        /* --grpc: a response succeeds only with grpc-status 0 (grpc.h) */
    bool progress;    /* keep interval histograms for the progress line */
    atomic_int *stop; /* set by h2b_load_stop() */
    /* per-interval results (interval.c): interval k is [i_origin + k i_len, + i_len); i_len 0:
     * off; i_last: the last interval's index (-D), UINT64_MAX: open-ended (count mode) */
    uint64_t i_origin, i_len, i_last;
};

struct h2b__load_conn;

/* One interval's counts and latencies as one worker saw them (interval.c). Between its
 * publication (ipub) and its consumption (icon) it belongs to the aggregator, else to the
 * worker. */
struct h2b__load_islot {
    uint64_t first, last; /* interval indexes it covers (first < last: the ring was full) */
    uint64_t ended, succeeded, errors;
    uint32_t conns; /* the worker's connections open when it was handed over */
    struct h2b_hist *latency;
};

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
    struct h2b__load_ring *ring; /* --io uring: the ring in place of epfd (uring.h); NULL: epoll */
    uint64_t now;
    const struct h2b__load_engine *eng; /* sh->engine */
    void *es;                           /* the engine's state for this worker (eng->init) */
    uint32_t nconns;
    uint64_t inflight;
    bool all_busy;         /* --rate: no connection had a free stream at the last release */
    uint32_t rr;           /* --rate: round-robin cursor over conns */
    uint32_t ramp_started; /* -r: connections started so far */
    uint32_t ramp_batch;   /* -r: this worker's share of the rate (per period) */
    uint64_t next_ramp;
    uint32_t conns_open; /* connections connecting or up (h2b__load_life_connect .. _closed) */
    uint32_t conn_want;  /* --conn-stages: this worker's share of the shape, as last applied */
    bool conn_waiting;   /* --conn-stages: a wanted connection is still winding down */
    uint64_t next_pace;  /* paced: earliest due time of a connection with a free stream */
    char *logbuf;        /* --log-file rows waiting for one write(2) */
    uint64_t todo;       /* -n: this worker's requests (h2load's progress is per 10% of them) */
    uint64_t ended;      /* measured requests ended so far */
    int phase;           /* -D: 0 before the first connection, 1 warm-up, 2 main, 3 over */
    bool app_reported;   /* "Application protocol:" printed (worker 0) */
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
    uint32_t busy_conns;  /* connections with requests in flight (engines that nap) */
    /* per-interval hand-off (interval.c): the worker fills islot[iseq % nislot] and publishes
     * it at the interval's end (ipub = iseq, release); the aggregator merges the published
     * ones and hands them back (icon); ipassed: every interval before it is published */
    struct h2b__load_islot *islot; /* NULL: intervals off */
    uint32_t nislot;
    uint64_t iseq;
    uint64_t i_end; /* when the interval being filled ends (absolute ns) */
    _Atomic uint64_t ipub, icon, ipassed;
};

/* How a request ended (every engine counts them the same way). */
enum h2b__load_outcome {
    H2B__LOAD_RESPONSE, /* a whole response (any status) */
    H2B__LOAD_RESET,    /* the server reset the stream */
    H2B__LOAD_PROTOCOL, /* the response broke the protocol */
    H2B__LOAD_ERROR,    /* the connection died */
    H2B__LOAD_TIMEOUT   /* --timeout, -N or -T */
};

/* One request, as every engine keeps it: the head of h2load.c's and h3load.c's stream slots and
 * the one request of a serial connection. The functions below count it; the engine adds what
 * its protocol needs beside it (stream id, body offsets). */
struct h2b__load_req {
    uint64_t t_intended; /* latency origin: schedule (--rate) or submission (closed loop) */
    uint64_t t_submit;   /* --timeout runs from here */
    uint64_t t_sent;     /* the request went to the socket; 0 until then */
    uint16_t status;     /* the final status; 0 until one came */
    uint8_t grpc;        /* --grpc: the call's grpc-status index (grpc.h), H2B_LOAD_GRPC_NONE */
    bool grpc_mismatch;  /* --grpc: status 0 with a response of another length than expected */
    bool grpc_wrong;     /* --grpc: response bytes other than the echo's (grpc.h's reply) */
    bool measured;       /* intended after warm-up */
    bool recorded;       /* already counted (timed out or broken before its stream closed) */
    bool busy;           /* in flight: between h2b__load_req_begin and h2b__load_req_end */
};

/* What every engine keeps of a connection over its reconnects: its share of -n, its URI
 * rotation, its responses and active time. The engine's connection struct holds one. */
struct h2b__load_life {
    uint64_t budget;        /* -n mode: requests still to submit (UINT64_MAX: unbounded) */
    uint64_t responses;     /* responses since the last connect (a reconnect must earn them) */
    uint64_t completed;     /* measured requests ended on it, all connects */
    uint64_t t_connect;     /* start of the current connect */
    uint64_t t_first_start; /* first connect: start of its active time */
    uint64_t t_last_end;    /* end of its active time (its last close) */
    uint64_t last_read;     /* -N and --timeout's silence: the last bytes from the server */
    uint32_t index;         /* global connection number: URI rotation starts here */
    uint32_t uri_next;      /* the URI of its next request */
};

/* Connection i of worker w (first_conn: its first connection's global number): the URI rotation
 * and its share of -n (h2b__load_budget). */
void h2b__load_life_init(struct h2b__load_life *l, const struct h2b__load_worker *w,
                         uint32_t first_conn, uint32_t i, uint64_t requests);

/* A connect starts (t_connect; the first one starts the active time); w counts it open until
 * h2b__load_closed. */
void h2b__load_life_connect(struct h2b__load_life *l, struct h2b__load_worker *w);

/* h2load's "Application protocol: PROTO" line on the info stream, once, by worker 0 at its first
 * connection that is up (every engine: h2, h2c, http/1.1, h3). */
void h2b__load_report_app(struct h2b__load_worker *w, const char *proto);

/* One line (or more) on the info stream (sh->info, which must be set), flushed. */
void h2b__load_info(const struct h2b__load_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Past the warm-up: only then do bytes count (requests carry their own "measured" flag). */
static inline bool h2b__load_measuring(const struct h2b__load_worker *w)
{
    return w->now >= w->sh->t_measure;
}

/* The URI of the connection's next request (they rotate from its index). */
static inline uint32_t h2b__load_next_uri(struct h2b__load_life *l,
                                          const struct h2b_load_config *cfg)
{
    uint32_t u = l->uri_next;
    l->uri_next = u + 1 == cfg->nuris ? 0 : u + 1;
    return u;
}

/* One request of the budget is submitted (-n mode; unbounded budgets stay so). */
static inline void h2b__load_spend(struct h2b__load_life *l)
{
    if (l->budget != UINT64_MAX)
        l->budget--;
}

/* A request intended at t_intended starts now (w->now); t_sent as the engine knows it (0: not
 * yet). Counts it as started when it is measured; w->inflight counts it until _end. */
static inline void h2b__load_req_begin(struct h2b__load_worker *w, struct h2b__load_req *r,
                                       uint64_t t_intended, uint64_t t_sent);

/* The request has left its slot (counted or not): the worker may release arrivals again. */
static inline void h2b__load_req_end(struct h2b__load_worker *w, struct h2b__load_req *r);

/* Counts one ended request in w->stats and its histograms: latency from t_intended, service from
 * t_sent (0: never sent), status for responses. Returns r->measured (false: warm-up, nothing
 * counted). */
bool h2b__load_record(struct h2b__load_worker *w, const struct h2b__load_req *r,
                      enum h2b__load_outcome how);

/* Counts r (h2b__load_record) once: marks it recorded; a measured one adds to l->completed. */
static inline void h2b__load_finish(struct h2b__load_worker *w, struct h2b__load_life *l,
                                    struct h2b__load_req *r, enum h2b__load_outcome how)
{
    r->recorded = true;
    if (h2b__load_record(w, r, how))
        l->completed++;
}

/* A connection's requests: n slots of size bytes at slots, each beginning with its struct
 * h2b__load_req (h1load.c: one). conn is the engine's connection, handed to the hooks. */
struct h2b__load_slots {
    void *slots;
    size_t size;
    uint32_t n;
    void *conn;
};

/* The connection is torn down: every request in flight that is not counted yet is counted as
 * an error (a timeout if timed_out) while the run lasts, as unfinished after its end; then
 * release(conn, k) frees slot k. */
void h2b__load_abandon(struct h2b__load_worker *w, struct h2b__load_life *l,
                       const struct h2b__load_slots *s, bool timed_out,
                       void (*release)(void *conn, uint32_t k));

/* --timeout over the requests in flight (call on the tick): each one submitted a whole timeout
 * ago and not counted yet is counted as timed out, then cancel(conn, k) resets its stream.
 * Returns true, before counting any, when the connection has been silent for a whole timeout:
 * the server is gone, not slow, and the caller closes the connection instead. */
bool h2b__load_time_out(struct h2b__load_worker *w, struct h2b__load_life *l,
                        const struct h2b__load_slots *s, void (*cancel)(void *conn, uint32_t k));

static inline void h2b__load_req_begin(struct h2b__load_worker *w, struct h2b__load_req *r,
                                       uint64_t t_intended, uint64_t t_sent)
{
    r->t_intended = t_intended;
    r->t_submit = w->now;
    r->t_sent = t_sent;
    r->status = 0;
    r->grpc = H2B_LOAD_GRPC_NONE;
    r->grpc_mismatch = false;
    r->grpc_wrong = false;
    r->recorded = false;
    r->busy = true;
    r->measured = t_intended >= w->sh->t_measure;
    if (r->measured)
        w->stats.started++;
    w->inflight++;
}

static inline void h2b__load_req_end(struct h2b__load_worker *w, struct h2b__load_req *r)
{
    r->busy = false;
    w->inflight--;
    w->all_busy = false;
}

/* Where an engine's connection stands, as the code every engine shares sees it. */
enum h2b__load_phase {
    H2B__LOAD_IDLE,    /* not started yet (-r ramp) */
    H2B__LOAD_OPENING, /* connect, TLS or QUIC handshake, HTTP/2 SETTINGS */
    H2B__LOAD_READY,   /* requests may flow */
    H2B__LOAD_OVER     /* finished or dead */
};

/* Every engine's own states run: idle (0), the set-up states, ready, then finished and dead. */
static inline enum h2b__load_phase h2b__load_phase_of(int state, int ready)
{
    return state == 0       ? H2B__LOAD_IDLE
           : state < ready  ? H2B__LOAD_OPENING
           : state == ready ? H2B__LOAD_READY
                            : H2B__LOAD_OVER;
}

/* The engine's connection i of w, for the loop's end and the release. */
typedef enum h2b__load_phase (*h2b__load_phase_fn)(const struct h2b__load_worker *w, uint32_t i);

/* The open loop's release (--total-rps), one for every engine: once all of the worker's
 * connections are up or failed, the arrival schedule starts (worker i phase-shifted by i/R, so
 * the merged constant stream is evenly interleaved, and connection set-up is not charged to the
 * first requests); then every arrival whose intended time has come goes to the next connection,
 * round-robin from w->rr, that can take a request. An arrival that finds none stays in the
 * schedule with its intended time (w->all_busy until a stream frees). The engine says what its
 * connection i is: */
struct h2b__load_rate {
    h2b__load_phase_fn phase;                                       /* settled: ready or over */
    bool (*can_take)(const struct h2b__load_worker *w, uint32_t i); /* a request may go now */
    /* sends the arrival intended at t on it; false: refused (the arrival stays scheduled) */
    bool (*submit)(struct h2b__load_worker *w, uint32_t i, uint64_t t);
};
void h2b__load_release(struct h2b__load_worker *w, const struct h2b__load_rate *r);

/* A client engine: one protocol's connections, as the runtime drives them. A worker runs one
 * engine (sh->engine) over its nconns connections, numbered 0..nconns-1; the engine keeps its
 * state in w->es. Hooks marked "may be NULL" are skipped when they are. */
struct h2b__load_engine {
    const char *tag; /* the thread's name: "h2b-TAG-ID" */
    bool ramp;       /* -r starts its connections in batches (and -D says so on the info stream) */
    bool naps;       /* --coalesce may nap before a wait (w->busy_conns counts its busy ones) */
    /* Sets up w->es for w's connections (first_conn: the first one's global number; requests:
     * w's share of -n). H2B_OK, H2B_ERR_NOMEM or H2B_ERR_INVAL; free undoes a failed init. */
    int (*init)(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests);
    void (*free)(struct h2b__load_worker *w);              /* accepts w->es NULL */
    void (*start)(struct h2b__load_worker *w, uint32_t i); /* connect i (the ramp) */
    /* Epoll reported events on a connection (data.ptr, as the engine registered it); on
     * io_uring a poll did (connects, TLS), or a streaming connection's send buffer drained
     * (EPOLLOUT). */
    void (*on_event)(void *conn, uint32_t events);
    /* io_uring: bytes p[0..n) arrived on a streaming connection (uring.h), or its end: n is
     * H2B__LOAD_EOF (the server closed it) or H2B__LOAD_EIO (it failed). NULL: the engine runs on
     * epoll only (--io uring falls back, and says so). */
    void (*on_input)(void *conn, const uint8_t *p, ssize_t n);
    /* Before each wait: sends what the connections have queued. True: there is more to do at
     * once (the wait does not sleep). May be NULL. */
    bool (*flush)(struct h2b__load_worker *w);
    void (*after_events)(struct h2b__load_worker *w); /* after a turn's events; may be NULL */
    struct h2b__load_rate rate; /* the open loop's release; phase is also the loop's end */
    void (*after_release)(struct h2b__load_worker *w); /* paced releases; may be NULL */
    void (*timeouts)(struct h2b__load_worker *w);      /* on the tick */
    /* The engine's own next deadline (absolute ns; UINT64_MAX: none). May be NULL. */
    uint64_t (*deadline)(const struct h2b__load_worker *w);
    /* The run is over: connection i closes if it is open (nothing owed, no reconnect); returns
     * its life, for its rate. */
    const struct h2b__load_life *(*stop)(struct h2b__load_worker *w, uint32_t i);
    /* Connection i's life, which the --conn-stages ramp steers through its budget: 0 winds the
     * connection down (no new request; it closes, finished, once its requests have ended), a
     * finished one restarts with start(). */
    struct h2b__load_life *(*life)(const struct h2b__load_worker *w, uint32_t i);
};

/* One turn of a worker's loop, the same for every engine (the runtime's loop, w->eng's hooks): wait
 * at most ns for events and hand each to on_event; then the stop flag, after_events, the open-loop
 * release (--total-rps, while the run lasts: h2b__load_release with rate), after_release, the
 * timeout tick (every w->tick_ns) and the progress hand-off. Hooks may be NULL. Returns false when
 * epoll failed (w->rc is set). The wait is epoll_pwait2 (ns timeout), or epoll_wait rounded up to a
 * millisecond where the kernel or valgrind lacks it (ENOSYS, remembered per worker). */
bool h2b__load_turn(struct h2b__load_worker *w, uint64_t ns);

/* The worker's run is still on: not interrupted (h2b_load_stop) and, under -D, before its end. */
static inline bool h2b__load_running(const struct h2b__load_worker *w)
{
    return !w->interrupted && (w->sh->t_end == 0 || w->now < w->sh->t_end);
}

/* The loop's end, the same for every engine: the run is over, or every connection is over
 * (finished or dead), or under --total-rps every arrival has been handed out and answered. */
bool h2b__load_worker_done(const struct h2b__load_worker *w, h2b__load_phase_fn phase);

/* How long a loop turn may sleep, in ns from w->now: until the earliest of MAX_WAIT (the stop
 * flag and progress are noticed this fast), the next timeout tick, -D's end, the next
 * --total-rps arrival and until (the engine's own deadline, UINT64_MAX for none). */
uint64_t h2b__load_wait_ns(const struct h2b__load_worker *w, uint64_t until);

/* What a torn-down connection does next, decided the same way by every engine: it reconnects if
 * it owes requests and got responses since its last connect (one more try), else it has finished
 * (nothing owed) or is dead; in -n mode what a dead one still owed is counted as not sent
 * (errored, failed) and its budget becomes 0. reached: it had got as far as sending requests
 * (else it counts as a failed connection). Ends its active time (t_last_end); resets its
 * responses on a reconnect. */
enum h2b__load_next { H2B__LOAD_RECONNECT, H2B__LOAD_FINISHED, H2B__LOAD_DEAD };
enum h2b__load_next h2b__load_closed(struct h2b__load_worker *w, struct h2b__load_life *l,
                                     bool reached);

/* The engine's state after h2b__load_closed said next: idle (0) for a reconnect, else the one
 * after ready (finished) or the one after that (dead): every engine's states run so (see
 * h2b__load_phase_of). */
static inline int h2b__load_state_after(enum h2b__load_next next, int ready)
{
    return next == H2B__LOAD_RECONNECT ? 0 : next == H2B__LOAD_FINISHED ? ready + 1 : ready + 2;
}

/* Per-interval results (interval.c). _init sets up w's ring (sh->i_len > 0); _free accepts a
 * worker without one. H2B_OK or H2B_ERR_NOMEM. */
int h2b__load_ival_init(struct h2b__load_worker *w);
void h2b__load_ival_free(struct h2b__load_worker *w);

/* The interval being filled has ended (w->now >= w->i_end): publish it, start the next. */
void h2b__load_ival_roll(struct h2b__load_worker *w);

/* One measured request ended at w->now with latency ns; ok: 2xx/3xx. */
static inline void h2b__load_ival_note(struct h2b__load_worker *w, uint64_t ns, bool ok)
{
    if (w->now >= w->i_end)
        h2b__load_ival_roll(w);
    struct h2b__load_islot *s = &w->islot[w->iseq % w->nislot];
    s->ended++;
    if (ok)
        s->succeeded++;
    else
        s->errors++;
    h2b_hist_record(s->latency, ns);
}

/* The aggregator (interval.c), on the thread that runs the load: merges the workers' published
 * intervals bin for bin and emits each interval once every worker is past it. */
struct h2b__load_iagg;
int h2b__load_iagg_new(struct h2b__load_iagg **out, const struct h2b__load_shared *sh,
                       uint32_t nworkers);
void h2b__load_iagg_del(struct h2b__load_iagg *a);
/* Collects what the workers published and emits the intervals they all passed. final: every
 * worker has finished (joined) and t_stop is the run's end: everything left is emitted. */
int h2b__load_iagg_poll(struct h2b__load_iagg *a, struct h2b__load_worker *w, bool final,
                        uint64_t t_stop);
/* Hands the emitted rows to res (res->intervals); a is left empty. */
void h2b__load_iagg_take(struct h2b__load_iagg *a, struct h2b_load_result *res);

/* Answers a pending progress snapshot request (call once per loop turn). */
void h2b__load_snapshot(struct h2b__load_worker *w);

/* The connection deadlines every engine checks on its tick, for a connection that is opening or
 * ready: -T (a connection's life since connect), a connect or handshake that hangs until it is
 * ready (bounded by --timeout, else -N) and -N while requests are in flight (busy). True: close
 * the connection (it may reconnect). */
bool h2b__load_conn_expired(const struct h2b__load_worker *w, const struct h2b__load_life *l,
                            enum h2b__load_phase phase, bool busy);

/* The connection's requests per second over its active time inside the measurement (from its
 * first connect, or the end of the warm-up, to its last close, or -D's end). */
double h2b__load_conn_rps(const struct h2b__load_worker *w, const struct h2b__load_life *l);

/* --total-rps at the end of the run: arrivals intended before the end and never handed out
 * (the backlog a stall left behind) count as unsent, and the oldest one's lateness at the end
 * counts in the worst release lag (a stall just before the end released nothing to measure). */
void h2b__load_drain(struct h2b__load_worker *w);

/* Sets up a worker for conns connections of sh->engine (first_conn is its global index, for URI
 * rotation; requests its share of -n). Returns H2B_OK, H2B_ERR_NOMEM, H2B_ERR_SYS or the engine's
 * error; h2b__load_worker_free undoes it (also after a failure). */
int h2b__load_worker_init(struct h2b__load_worker *w, int id, const struct h2b__load_shared *sh,
                          uint32_t nconns, uint32_t first_conn, uint64_t requests);
void h2b__load_worker_free(struct h2b__load_worker *w);

/* Thread body: runs the worker's loop to the end; w->rc holds the outcome. */
void *h2b__load_worker_main(void *arg);

/* Sets err (may be NULL) to the message, without a position, and returns code. */
__attribute__((format(printf, 3, 4))) static inline int
h2b__load_errf(struct h2b_diag *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h2b_diag_vat(err, NULL, 0, 0, NULL, fmt, ap);
    va_end(ap);
    return code;
}

#endif
