/*
 * worker.c - the load runtime: one worker thread's loop over its share of the connections,
 * whatever protocol they speak (worker.h's struct h2b__load_engine drives them).
 *
 * Each loop turn: the engine flushes what its connections have queued, then the worker waits
 * (epoll_pwait2, ns timeout; --coalesce may nap first; with --io uring one submit-and-wait on
 * the worker's ring, uring.c, whose completions go to the engine's on_input and on_event) until
 * the earliest of its deadlines (the timeout tick, -D's end, the next --total-rps arrival, the
 * -r ramp's next batch, the engine's own), hands each event to the engine, releases due
 * arrivals in --total-rps mode (to the next connection, round-robin, that can take one), checks
 * timeouts at a coarse tick and answers the progress and interval hand-offs. The loop ends when
 * the run is over or every connection is.
 *
 * What every engine counts the same way lives here too: a request's outcome (latency from its
 * intended time, service from its send, status, --log-file row, progress line), a connection's
 * share of -n and its URI rotation, the reconnect-or-die decision after a close, --timeout over
 * the requests in flight, and a connection's rate over its active time.
 *
 * Time: one clock read after epoll returns; every event of that batch shares it (engines read
 * the clock again after a read). Nothing here allocates after the worker is set up.
 *
 * Rejected: one loop per engine (the four engines had four copies of the ramp, the turn, the
 * end of the run and the engine-specific state in this struct); a protocol's names here (this
 * file includes no protocol header: tcp.c, h2load.c, h1load.c, rawload.c and h3load.c do).
 */
#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "load/uring.h"
#include "load/worker.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_WAIT_NS (100 * H2B_NS_PER_MS)   /* stop flag and progress are noticed this fast */
#define LOGBUF_SIZE (64 * 1024)             /* --log-file rows per write(2) */
#define NAP_BACKOFF_MAX 1024                /* turns without a nap after naps that found nothing */
#define NAP_START_NS (20 * 1000)            /* --coalesce: the first nap */
#define NAP_MIN_NS (5 * 1000)               /* --coalesce: the shortest nap */
#define CONN_FOLLOW_NS (10 * H2B_NS_PER_MS) /* --conn-stages: the longest wait between looks */

/* ---- small helpers ---------------------------------------------------------------------- */

static void record_latency(struct h2b__load_worker *w, uint64_t ns)
{
    h2b_hist_record(w->stats.latency, ns);
    if (w->sh->progress)
        h2b_hist_record(w->ival[w->ival_active], ns);
}

static void log_flush(struct h2b__load_worker *w)
{
    size_t off = 0;
    while (off < w->loglen) {
        ssize_t n = write(w->sh->cfg->log_fd, w->logbuf + off, w->loglen - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* a full disk loses rows, never the run */
        off += (size_t)n;
    }
    w->loglen = 0;
}

/* One --log-file row, h2load's: start of the request (HEADERS sent) in us since the epoch,
 * status (-1 if the request failed without a response), duration in us (sent -> closed). */
static void log_row(struct h2b__load_worker *w, uint64_t t_sent, int status)
{
    if (w->loglen + 64 > LOGBUF_SIZE)
        log_flush(w);
    uint64_t start = w->sh->wall0_us + (t_sent - w->sh->t0) / 1000;
    uint64_t dur = w->now > t_sent ? (w->now - t_sent) / 1000 : 0;
    int n = snprintf(w->logbuf + w->loglen, LOGBUF_SIZE - w->loglen, "%llu\t%d\t%llu\n",
                     (unsigned long long)start, status, (unsigned long long)dur);
    if (n > 0)
        w->loglen += (size_t)n;
}

/* ---- h2load's live lines (worker 0 only, as in h2load; the -D phase lines per worker) ---- */

void h2b__load_info(const struct h2b__load_worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(w->sh->info, fmt, ap);
    va_end(ap);
    fflush(w->sh->info);
}

void h2b__load_report_app(struct h2b__load_worker *w, const char *proto)
{
    if (!w->sh->info || w->id != 0 || w->app_reported)
        return;
    w->app_reported = true;
    h2b__load_info(w, "Application protocol: %s\n", proto);
}
/* -D phase changes, checked once per loop turn */
static void report_phase(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!sh->info || !sh->cfg->duration_ns)
        return;
    if (w->phase == 1 && w->now >= sh->t_measure) {
        w->phase = 2;
        h2b__load_info(
            w,
            "Warm-up phase is over for thread #%d.\nMain benchmark duration is started for "
            "thread #%d.\n",
            w->id, w->id);
    }
}

/* h2load's "progress: N% done", every tenth of worker 0's requests (count mode only) */
static void report_progress(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    w->ended++;
    if (w->id != 0 || !sh->info || sh->cfg->duration_ns || w->todo == 0 || sh->cfg->conn_rate)
        return;
    uint64_t every = w->todo / 10 ? w->todo / 10 : 1;
    if (w->ended % every == 0)
        h2b__load_info(w, "progress: %" PRIu64 "%% done\n", w->ended * 100 / w->todo);
}

/* ---- request outcomes ----------------------------------------------------------------- */

#define OUT_RESPONSE H2B__LOAD_RESPONSE
#define OUT_RESET H2B__LOAD_RESET
#define OUT_PROTOCOL H2B__LOAD_PROTOCOL
#define OUT_ERROR H2B__LOAD_ERROR
#define OUT_TIMEOUT H2B__LOAD_TIMEOUT

bool h2b__load_record(struct h2b__load_worker *w, const struct h2b__load_req *r,
                      enum h2b__load_outcome how)
{
    struct h2b_load_stats *st = &w->stats;
    if (how == OUT_RESPONSE && w->sh->tls)
        st->tls_responses++; /* the divisor of tls_records, warm-up included like them */
    if (!r->measured)
        return false;
    uint64_t t_intended = r->t_intended, t_sent = r->t_sent;
    uint16_t status = r->status;
    uint64_t now = w->now;
    uint64_t latency = now > t_intended ? now - t_intended : 0;
    bool ok = how == OUT_RESPONSE && status >= 200 && status < 400;
    if (w->sh->grpc && how == OUT_RESPONSE && status != 0) {
        /* a call succeeds only on grpc-status 0 (and the length and bytes its echo must have) */
        st->grpc_status[r->grpc == H2B_LOAD_GRPC_NONE ? H2B_LOAD_GRPC_MISSING : r->grpc]++;
        st->grpc_mismatch += r->grpc_mismatch;
        st->grpc_wrong += r->grpc_wrong;
        ok = ok && r->grpc == 0 && !r->grpc_mismatch && !r->grpc_wrong;
    }
    record_latency(w, latency);
    if (w->islot)
        h2b__load_ival_note(w, latency, ok);
    if (t_sent)
        h2b_hist_record(st->service, now > t_sent ? now - t_sent : 0);
    report_progress(w);
    if (w->logbuf) /* h2load's row: from the send (the intended time if never sent) */
        log_row(w, t_sent ? t_sent : (t_intended > w->sh->t0 ? t_intended : w->sh->t0),
                how == OUT_RESPONSE && status != 0 && (ok || !w->sh->grpc) ? (int)status : -1);
    if (status != 0) {
        /* counted whatever happens to the rest of the response, as h2load does */
        if (status < H2B_LOAD_STATUS_MAX)
            st->status[status]++;
        else
            st->status_other++;
    }
    if (how == OUT_RESPONSE && status != 0) {
        st->done++;
        if (ok)
            st->succeeded++;
        else
            st->failed++;
        return true;
    }
    st->errored++;
    st->failed++;
    if (how == OUT_RESET)
        st->resets++;
    else if (how == OUT_PROTOCOL)
        st->protocol_errors++;
    else if (how == OUT_TIMEOUT)
        st->timeouts++;
    return true;
}

/* ---- what every engine's connections and requests share (worker.h) ------------------- */

/* A connection's share of -n: its slice of requests over nconns (remainders first), -n per
 * client with --timing-script-file (h2load's way), unbounded under --total-rps or -D. */
static uint64_t budget_of(const struct h2b__load_shared *sh, uint64_t requests, uint32_t nconns,
                          uint32_t i)
{
    const struct h2b_load_config *cfg = sh->cfg;
    if (cfg->nscript && !cfg->duration_ns)
        return cfg->requests / cfg->connections; /* -n per client, as in h2load */
    if (sh->rate_mode || cfg->duration_ns)
        return UINT64_MAX;
    return requests / nconns + (i < requests % nconns ? 1 : 0);
}

void h2b__load_life_init(struct h2b__load_life *l, const struct h2b__load_worker *w,
                         uint32_t first_conn, uint32_t i, uint64_t requests)
{
    memset(l, 0, sizeof *l);
    l->index = first_conn + i;
    l->uri_next = (uint32_t)(l->index % w->sh->cfg->nuris);
    l->budget = budget_of(w->sh, requests, w->nconns, i);
}

void h2b__load_life_connect(struct h2b__load_life *l, struct h2b__load_worker *w)
{
    w->conns_open++;
    l->t_connect = w->now;
    if (l->t_first_start == 0)
        l->t_first_start = w->now;
}

void h2b__load_abandon(struct h2b__load_worker *w, struct h2b__load_life *l,
                       const struct h2b__load_slots *s, bool timed_out,
                       void (*release)(void *conn, uint32_t k))
{
    for (uint32_t k = 0; k < s->n; k++) {
        struct h2b__load_req *r = (struct h2b__load_req *)((char *)s->slots + k * s->size);
        if (!r->busy)
            continue;
        if (!r->recorded) {
            if (h2b__load_running(w))
                h2b__load_finish(w, l, r, timed_out ? OUT_TIMEOUT : OUT_ERROR);
            else if (r->measured)
                w->stats.unfinished++;
        }
        release(s->conn, k);
    }
}

bool h2b__load_time_out(struct h2b__load_worker *w, struct h2b__load_life *l,
                        const struct h2b__load_slots *s, void (*cancel)(void *conn, uint32_t k))
{
    uint64_t limit = w->sh->cfg->timeout_ns, now = w->now;
    if (!limit)
        return false;
    for (uint32_t k = 0; k < s->n; k++) {
        struct h2b__load_req *r = (struct h2b__load_req *)((char *)s->slots + k * s->size);
        if (!r->busy || r->recorded || now - r->t_submit < limit)
            continue;
        /* silent for a whole timeout: the server is gone, not slow; give up on the connection
         * instead of timing its requests out one by one */
        if (now - l->last_read >= limit)
            return true;
        h2b__load_finish(w, l, r, OUT_TIMEOUT);
        cancel(s->conn, k);
    }
    return false;
}

bool h2b__load_conn_expired(const struct h2b__load_worker *w, const struct h2b__load_life *l,
                            enum h2b__load_phase phase, bool busy)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    uint64_t now = w->now;
    bool ready = phase == H2B__LOAD_READY;
    if (!ready && phase != H2B__LOAD_OPENING)
        return false;
    if (cfg->conn_active_timeout_ns && now - l->t_connect >= cfg->conn_active_timeout_ns)
        return true;
    if (!ready) {
        uint64_t limit = cfg->timeout_ns ? cfg->timeout_ns : cfg->conn_inactivity_timeout_ns;
        return limit && now - l->t_connect >= limit;
    }
    return cfg->conn_inactivity_timeout_ns && busy &&
           now - l->last_read >= cfg->conn_inactivity_timeout_ns;
}

double h2b__load_conn_rps(const struct h2b__load_worker *w, const struct h2b__load_life *l)
{
    const struct h2b__load_shared *sh = w->sh;
    /* its active time inside the measurement: the warm-up is not part of it */
    uint64_t end = l->t_last_end ? l->t_last_end : w->now;
    if (sh->t_end && end > sh->t_end)
        end = sh->t_end;
    uint64_t begin = l->t_first_start > sh->t_measure ? l->t_first_start : sh->t_measure;
    double secs = l->t_first_start && end > begin ? (double)(end - begin) / 1e9 : 0;
    return secs > 0 ? (double)l->completed / secs : 0;
}

void h2b__load_drain(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!sh->rate_mode || !w->sched_started)
        return;
    uint64_t end = sh->t_end && sh->t_end < w->now ? sh->t_end : w->now;
    while (w->sched_left > 0 && h2b_arrival_peek(&w->sched) < end) {
        uint64_t t = h2b_arrival_peek(&w->sched);
        if (t >= sh->t_measure) {
            w->stats.unsent++;
            /* an unsent arrival is late by at least end - t: the worst lag covers the backlog
             * too (the oldest one comes first), so unsent <= rate x lag + 1 */
            if (end - t > w->stats.sched_lag_max_ns)
                w->stats.sched_lag_max_ns = end - t;
        }
        h2b_arrival_pop(&w->sched);
        if (w->sched_left != UINT64_MAX)
            w->sched_left--;
    }
}

/* A worker thread's start: names the thread ("h2b-TAG-ID"), pins it (--cpus), sets a 1 us
 * timer slack where the worker times its sleeps (--total-rps, --coalesce naps), reads the clock
 * and schedules the first tick. */
static void thread_start(struct h2b__load_worker *w, const char *tag)
{
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    char name[16];
    snprintf(name, sizeof(name), "h2b-%s-%d", tag, w->id);
    pthread_setname_np(pthread_self(), name);
    if (cfg->pin)
        h2b_cpu_pin_self_to(h2b_cpu_nth(&cfg->cpus, w->id));
    /* ~20 us wake-ups instead of ~75 us (for an engine that naps) */
    if (sh->rate_mode || (cfg->coalesce_ns && w->eng->naps))
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    w->now = h2b_clock_now_ns();
    w->next_tick = w->now + w->tick_ns;
}

/* Its end: the --log-file rows left, a last progress snapshot, and it is finished. */
static void thread_end(struct h2b__load_worker *w)
{
    if (w->logbuf)
        log_flush(w);
    if (w->sh->progress)
        h2b__load_snapshot(w);
    atomic_store_explicit(&w->finished, 1, memory_order_release);
}
void h2b__load_release(struct h2b__load_worker *w, const struct h2b__load_rate *r)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!w->sched_started) {
        for (uint32_t i = 0; i < w->nconns; i++)
            if (r->phase(w, i) < H2B__LOAD_READY)
                return;
        const struct h2b_load_config *cfg = sh->cfg;
        uint64_t seed = cfg->seed + (uint64_t)w->id * 0x9e3779b97f4a7c15ULL;
        if (cfg->shape.nseg) {
            /* one stream for the run, from its start: worker i takes arrivals i, i + t, ...
             * (under MPI the job's stream, over every rank's workers) */
            double stride = cfg->job_workers ? cfg->job_workers : cfg->threads;
            h2b_arrival_init_shaped(&w->sched, cfg->arrival, &cfg->shape, stride,
                                    (double)cfg->job_worker_base + w->id, sh->t0, seed);
        } else {
            uint64_t start = w->now + (uint64_t)((double)w->id * 1e9 / cfg->rate);
            h2b_arrival_init(&w->sched, cfg->arrival, cfg->rate / cfg->threads, start, seed);
        }
        w->sched_started = true;
    }
    while (w->sched_left > 0 && !w->all_busy && h2b_arrival_peek(&w->sched) <= w->now) {
        if (sh->t_end && h2b_arrival_peek(&w->sched) >= sh->t_end)
            break;
        uint32_t i = UINT32_MAX;
        for (uint32_t k = 0; k < w->nconns && i == UINT32_MAX; k++) {
            if (r->can_take(w, w->rr))
                i = w->rr;
            w->rr = w->rr + 1 == w->nconns ? 0 : w->rr + 1;
        }
        if (i == UINT32_MAX) {
            w->all_busy = true;
            break;
        }
        uint64_t t = h2b_arrival_peek(&w->sched);
        if (!r->submit(w, i, t))
            continue;
        h2b_arrival_pop(&w->sched);
        if (w->sched_left != UINT64_MAX)
            w->sched_left--;
        if (t >= sh->t_measure && w->now - t > w->stats.sched_lag_max_ns)
            w->stats.sched_lag_max_ns = w->now - t;
    }
}

/* ---- connection ramps (-r, --conn-stages) and pacing ---------------------------------- */

/* --conn-stages: the worker's connections follow its share of the shape (h2b_shape_share), the
 * lowest-numbered ones doing requests. One above the share winds down (budget 0: it submits
 * nothing more and closes, finished, once its requests have ended, each counted as usual); one
 * below it starts, or restarts once it has finished winding down; one still opening above it
 * winds down once it is up (until then conn_waiting makes every turn look again). A dead one (it
 * failed without a response) stays dead, as in any closed-loop run. */
static void conn_follow(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b__load_engine *e = w->eng;
    uint32_t want =
        h2b_shape_share(&sh->cfg->conn_shape, w->now - sh->t0, sh->cfg->threads, (uint32_t)w->id);
    if (want > w->nconns)
        want = w->nconns;
    if (want == w->conn_want && !w->conn_waiting)
        return;
    w->conn_want = want;
    w->conn_waiting = false;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_life *l = e->life(w, i);
        enum h2b__load_phase p = e->rate.phase(w, i);
        if (i >= want) {
            if (p == H2B__LOAD_READY)
                l->budget = 0;
            else if (p == H2B__LOAD_OPENING)
                w->conn_waiting = true; /* winds down once it is up */
        } else if (p == H2B__LOAD_IDLE || (p == H2B__LOAD_OVER && l->budget == 0)) {
            l->budget = UINT64_MAX;
            e->start(w, i);
        } else if (p != H2B__LOAD_OVER && l->budget == 0) {
            w->conn_waiting = true; /* restarts once it has closed */
        }
    }
}

/* Starts the next -r batch (all connections at once without -r, or for an engine that does not
 * ramp). */
static void ramp(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    if (sh->cfg->conn_shape.nseg) {
        w->ramp_started = w->nconns; /* conn_follow starts them, every turn */
        if (sh->info && sh->cfg->duration_ns && w->phase == 0) {
            w->phase = 1;
            h2b__load_info(w, "Warm-up started for thread #%d.\n", w->id);
        }
        conn_follow(w);
        return;
    }
    if (!w->eng->ramp) {
        while (w->ramp_started < w->nconns)
            w->eng->start(w, w->ramp_started++);
        return;
    }
    uint32_t n = w->ramp_batch ? w->ramp_batch : w->nconns;
    if (sh->info && sh->cfg->duration_ns && w->phase == 0) {
        w->phase = 1; /* h2load says so when its first client connects */
        h2b__load_info(w, "Warm-up started for thread #%d.\n", w->id);
    }
    for (uint32_t k = 0; k < n && w->ramp_started < w->nconns; k++) {
        w->eng->start(w, w->ramp_started++);
        /* h2load's -r and -D progress: every tenth of this worker's clients started */
        uint32_t every = w->nconns / 10 ? w->nconns / 10 : 1;
        if ((w->ramp_batch || sh->cfg->duration_ns) && w->id == 0 && sh->info &&
            w->ramp_started % every == 0)
            h2b__load_info(w, "progress: %u%% of clients started\n",
                           w->ramp_started * 100 / w->nconns);
    }
    w->next_ramp = w->now + w->sh->cfg->rate_period_ns;
}

/* ---- the loop ------------------------------------------------------------------------- */

void h2b__load_snapshot(struct h2b__load_worker *w)
{
    unsigned req = atomic_load_explicit(&w->snap_req, memory_order_acquire);
    if (req == w->snap_seen)
        return;
    w->snap_seen = req;
    w->ival_retired = w->ival_active;
    w->ival_active ^= 1;
    w->snap.ended = w->stats.done + w->stats.errored - w->stats.not_sent;
    w->snap.errors = w->stats.failed;
    w->snap.inflight = w->inflight;
    atomic_store_explicit(&w->snap_ack, req, memory_order_release);
}

/* Sleeps in epoll for at most ns: epoll_pwait2 (ns timeout), or epoll_wait rounded up to a
 * millisecond where the kernel or valgrind lacks it (ENOSYS, remembered per worker). On io_uring
 * one submit-and-wait; the count is then of completions, which h2b__load_turn dispatches. */
static int sleep_wait(struct h2b__load_worker *w, struct epoll_event *events, int max, uint64_t ns)
{
    if (w->ring)
        return h2b__load_ring_wait(w, ns);
    int n = -1;
    if (!w->no_pwait2) {
        struct timespec ts = {.tv_sec = (time_t)(ns / H2B_NS_PER_SEC),
                              .tv_nsec = (long)(ns % H2B_NS_PER_SEC)};
        n = epoll_pwait2(w->epfd, events, max, &ts, NULL);
        if (n < 0 && errno == ENOSYS)
            w->no_pwait2 = true; /* valgrind 3.19, kernels before 5.11 */
    }
    if (w->no_pwait2) {
        uint64_t ms = (ns + H2B_NS_PER_MS - 1) / H2B_NS_PER_MS;
        n = epoll_wait(w->epfd, events, max, ms > 1000 ? 1000 : (int)ms);
    }
    return n;
}

/* Waits at most ns for events. In the closed loop with requests in flight, a turn that finds
 * nothing ready first naps for --coalesce (a timer sleep, not on the epoll set) and then looks
 * again: a server that writes while we nap does not have to wake us (on a VM whose idle vCPU
 * halts, waking a sleeper is an IPI: several microseconds of the server's CPU per wake-up, 6-11 %
 * of nghttpd's throughput at -c 10 -m 10), and one wake-up collects several connections'
 * responses. The nap's length adapts between NAP_MIN_NS and --coalesce: a nap after which more
 * than half of the connections with requests in flight are ready was long enough for the server
 * to run short of work (it halves), a shorter haul lengthens it by half. A nap that finds fewer
 * than two connections ready (the server is slower than the nap, or there is one connection:
 * -c 1 -m 1, where the nap's three syscalls only replace one sleep), or a shortest nap that
 * still finds more than half ready (too few requests in flight for any nap to pay: the sleep
 * itself lasts tens of microseconds on a VM) makes the next ones wait: 1,
 * 2, 4, ... up to NAP_BACKOFF_MAX turns sleep in epoll before the next try; one that finds two
 * or more resets that. */
/* What is ready now, without sleeping: epoll_wait with no timeout, or on io_uring the submission
 * of what is queued and the completions ready (one system call either way). */
static int ready_now(struct h2b__load_worker *w, struct epoll_event *events, int max)
{
    return w->ring ? h2b__load_ring_peek(w) : epoll_wait(w->epfd, events, max, 0);
}

static int wait_events(struct h2b__load_worker *w, struct epoll_event *events, int max, uint64_t ns)
{
    const struct h2b__load_shared *sh = w->sh;
    uint64_t nap_max = sh->cfg->coalesce_ns;
    if (nap_max == 0 || w->inflight == 0 || sh->rate_mode || sh->paced || !w->eng->naps)
        return sleep_wait(w, events, max, ns);
    if (w->nap_ns == 0 || w->nap_ns > nap_max)
        w->nap_ns = nap_max < NAP_START_NS ? nap_max : NAP_START_NS;
    uint64_t nap = w->nap_ns;
    if (ns <= nap)
        return sleep_wait(w, events, max, ns);
    if (w->nap_skip > 0) {
        w->nap_skip--;
        return sleep_wait(w, events, max, ns);
    }
    int n = ready_now(w, events, max);
    if (n != 0)
        return n; /* ready already: no nap */
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)nap};
    nanosleep(&ts, NULL);
    n = ready_now(w, events, max);
    bool drained = (uint64_t)n * 2 > w->busy_conns;
    if (n >= 2 && !(drained && nap <= NAP_MIN_NS)) {
        w->nap_backoff = 0; /* it collected several connections' events: nap again */
        if (drained)
            w->nap_ns = nap / 2 < NAP_MIN_NS ? NAP_MIN_NS : nap / 2;
        else
            w->nap_ns = nap + nap / 2 > nap_max ? nap_max : nap + nap / 2;
        return n;
    }
    /* nothing yet, or one connection's events (a plain sleep would have done as well, and
     * cheaper: one syscall instead of three), or even the shortest nap let the server run dry
     * (few requests in flight: -c 10 -m 1) */
    w->nap_backoff = w->nap_backoff ? w->nap_backoff * 2 : 1;
    if (w->nap_backoff > NAP_BACKOFF_MAX)
        w->nap_backoff = NAP_BACKOFF_MAX;
    w->nap_skip = w->nap_backoff;
    return n != 0 ? n : sleep_wait(w, events, max, ns - nap);
}

bool h2b__load_turn(struct h2b__load_worker *w, uint64_t ns)
{
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b__load_engine *t = w->eng;
    struct epoll_event events[256];
    int n = wait_events(w, events, 256, ns);
    if (n < 0 && (w->ring || errno != EINTR)) { /* the ring's errors are -errno, EINTR not one */
        w->rc = H2B_ERR_SYS;
        return false;
    }
    /* the connections open as the interval being filled ends: the last turn's before its end */
    if (w->islot && h2b__load_running(w) && w->now < w->i_end)
        w->islot[w->iseq % w->nislot].conns = w->conns_open;
    w->now = h2b_clock_now_ns();
    if (w->ring) /* --io uring: the engine hears from the completions (uring.c) */
        h2b__load_ring_dispatch(w);
    else
        for (int i = 0; i < n; i++)
            t->on_event(events[i].data.ptr, events[i].events);
    if (atomic_load_explicit(sh->stop, memory_order_relaxed))
        w->interrupted = true;
    if (t->after_events)
        t->after_events(w);
    if (sh->rate_mode && !w->interrupted && (sh->t_end == 0 || w->now < sh->t_end))
        h2b__load_release(w, &t->rate);
    if (t->after_release)
        t->after_release(w);
    if (w->ramp_started < w->nconns && w->now >= w->next_ramp)
        ramp(w);
    if (sh->cfg->conn_shape.nseg && h2b__load_running(w))
        conn_follow(w);
    if (w->now >= w->next_tick) {
        t->timeouts(w);
        w->next_tick = w->now + w->tick_ns;
    }
    if (w->islot && w->now >= w->i_end)
        h2b__load_ival_roll(w); /* an interval with nothing ended in it is one all the same */
    if (sh->progress)
        h2b__load_snapshot(w);
    return true;
}

bool h2b__load_worker_done(const struct h2b__load_worker *w, h2b__load_phase_fn phase)
{
    if (!h2b__load_running(w))
        return true;
    if (w->sh->rate_mode && w->sched_left == 0 && w->inflight == 0)
        return true;
    bool parks = w->sh->cfg->conn_shape.nseg > 0; /* a finished one may restart */
    for (uint32_t i = 0; i < w->nconns; i++)
        if (phase(w, i) != H2B__LOAD_OVER || (parks && w->eng->life(w, i)->budget == 0))
            return false;
    return true;
}

uint64_t h2b__load_wait_ns(const struct h2b__load_worker *w, uint64_t until)
{
    const struct h2b__load_shared *sh = w->sh;
    if (w->now + MAX_WAIT_NS < until)
        until = w->now + MAX_WAIT_NS;
    if (w->next_tick < until)
        until = w->next_tick;
    if (sh->t_end && sh->t_end < until)
        until = sh->t_end;
    if (sh->rate_mode && w->sched_started && w->sched_left > 0 && !w->all_busy &&
        h2b_arrival_peek(&w->sched) < until)
        until = h2b_arrival_peek(&w->sched);
    return until > w->now ? until - w->now : 0;
}

enum h2b__load_next h2b__load_closed(struct h2b__load_worker *w, struct h2b__load_life *l,
                                     bool reached)
{
    l->t_last_end = w->now;
    w->conns_open--;
    if (!reached)
        w->stats.conns_failed++;
    if (l->budget > 0 && h2b__load_running(w) && l->responses > 0) {
        l->responses = 0; /* one more try: it must get a response to earn the next */
        w->stats.reconnects++;
        return H2B__LOAD_RECONNECT;
    }
    enum h2b__load_next next = l->budget == 0 ? H2B__LOAD_FINISHED : H2B__LOAD_DEAD;
    if (l->budget != UINT64_MAX && l->budget > 0 && h2b__load_running(w)) {
        /* -n mode: what this connection still owed can never be sent */
        w->stats.not_sent += l->budget;
        w->stats.errored += l->budget;
        w->stats.failed += l->budget;
        l->budget = 0;
    }
    return next;
}

/* the engine's own deadlines: --rps/--timing-script-file pacing and the -r ramp */
/* The engine's deadline and the -r ramp's next batch */
static uint64_t wait_ns(const struct h2b__load_worker *w)
{
    uint64_t until = w->eng->deadline ? w->eng->deadline(w) : UINT64_MAX;
    if (w->ramp_started < w->nconns && w->next_ramp < until)
        until = w->next_ramp;
    if (w->sh->cfg->conn_shape.nseg && w->now + CONN_FOLLOW_NS < until)
        until = w->now + CONN_FOLLOW_NS; /* the shape's next step is noticed this fast */
    return h2b__load_wait_ns(w, until);
}

void *h2b__load_worker_main(void *arg)
{
    struct h2b__load_worker *w = arg;
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    const struct h2b__load_engine *eng = w->eng;
    thread_start(w, eng->tag);
    if (w->ring && h2b__load_ring_start(w) != H2B_OK) {
        w->rc = H2B_ERR_SYS;
        thread_end(w);
        return NULL;
    }
    ramp(w);
    while (!h2b__load_worker_done(w, eng->rate.phase)) {
        bool again = eng->flush && eng->flush(w);
        if (h2b__load_worker_done(w, eng->rate.phase))
            break;
        if (!h2b__load_turn(w, again ? 0 : wait_ns(w)))
            break;
        report_phase(w);
    }
    w->now = h2b_clock_now_ns();
    bool said_over = sh->info && cfg->duration_ns && w->phase >= 1;
    if (said_over)
        h2b__load_info(w, "Main benchmark duration is over for thread #%d. Stopping all clients.\n",
                       w->id);
    h2b__load_drain(w);
    for (uint32_t i = 0; i < w->nconns; i++)
        w->conn_rps[i] = h2b__load_conn_rps(w, eng->stop(w, i));
    if (said_over)
        h2b__load_info(w, "Stopped all clients for thread #%d\n", w->id);
    thread_end(w);
    return NULL;
}

int h2b__load_worker_init(struct h2b__load_worker *w, int id, const struct h2b__load_shared *sh,
                          uint32_t nconns, uint32_t first_conn, uint64_t requests)
{
    const struct h2b_load_config *cfg = sh->cfg;
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->sh = sh;
    w->eng = sh->engine;
    w->nconns = nconns;
    w->epfd = -1;
    int rv = h2b_load_stats_init(&w->stats);
    if (rv != H2B_OK)
        return rv;
    w->conn_rps = calloc(nconns, sizeof(*w->conn_rps));
    if (!w->conn_rps)
        goto out_nomem;
    if (cfg->log_fd >= 0 && !(w->logbuf = malloc(LOGBUF_SIZE)))
        goto out_nomem;
    if (cfg->conn_rate) /* h2load: the rate is spread over the threads, remainders first */
        w->ramp_batch =
            cfg->conn_rate / cfg->threads + ((uint32_t)id < cfg->conn_rate % cfg->threads ? 1 : 0);
    w->next_pace = UINT64_MAX;
    w->todo = requests;
    if (sh->progress) {
        if (h2b_hist_new_default(&w->ival[0]) != H2B_OK ||
            h2b_hist_new_default(&w->ival[1]) != H2B_OK)
            goto out_nomem;
    }
    if (sh->i_len && h2b__load_ival_init(w) != H2B_OK)
        goto out_nomem;
    w->sched_left = sh->rate_mode && !cfg->duration_ns ? requests : UINT64_MAX;
    uint64_t smallest = UINT64_MAX;
    if (cfg->timeout_ns)
        smallest = cfg->timeout_ns;
    if (cfg->conn_inactivity_timeout_ns && cfg->conn_inactivity_timeout_ns < smallest)
        smallest = cfg->conn_inactivity_timeout_ns;
    if (cfg->conn_active_timeout_ns && cfg->conn_active_timeout_ns < smallest)
        smallest = cfg->conn_active_timeout_ns;
    w->tick_ns = smallest / 20;
    if (w->tick_ns < 5 * H2B_NS_PER_MS)
        w->tick_ns = 5 * H2B_NS_PER_MS;
    if (w->tick_ns > MAX_WAIT_NS)
        w->tick_ns = MAX_WAIT_NS;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0) {
        h2b__load_worker_free(w);
        return H2B_ERR_SYS;
    }
    /* -n is split as h2load splits it: per worker, then per connection, remainders first */
    if ((rv = w->eng->init(w, first_conn, requests)) != H2B_OK) {
        h2b__load_worker_free(w);
        return rv;
    }
    return H2B_OK;
out_nomem:
    h2b__load_worker_free(w);
    return H2B_ERR_NOMEM;
}

void h2b__load_worker_free(struct h2b__load_worker *w)
{
    if (w->eng)
        w->eng->free(w); /* its sockets leave the epoll set (or the ring) before it closes */
    h2b__load_ring_del(w);
    free(w->conn_rps);
    free(w->logbuf);
    h2b_hist_del(w->ival[0]);
    h2b_hist_del(w->ival[1]);
    h2b__load_ival_free(w);
    h2b_load_stats_free(&w->stats);
    if (w->epfd >= 0)
        close(w->epfd);
    w->conn_rps = NULL;
    w->logbuf = NULL;
    w->epfd = -1;
    w->eng = NULL;
}
