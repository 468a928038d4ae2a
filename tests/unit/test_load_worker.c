/*
 * test_load_worker.c - the load runtime (harness/load/worker.c) through its engine interface,
 * driven by a scripted fake engine whose connections are socketpairs: a request is one byte
 * (its slot) written into the peer end, and the kernel hands it straight back as the
 * connection's response, so the runtime's epoll loop, slots, counting, closed loop, open-loop
 * pacing, -r ramp, --timeout and end of run run for real with no protocol and no server.
 *
 * Every assertion is a count or a lower bound on elapsed time that the runtime guarantees
 * (it never releases an arrival or a ramp batch before its time), so the test holds on a slow
 * or busy machine.
 */
#include "core/clock.h"
#include "core/error.h"
#include "load/worker.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 8
#define MAX_SLOTS 4

enum fstate { F_IDLE, F_READY, F_DONE, F_DEAD }; /* idle 0, ready, finished, dead: worker.h */

struct fconn {
    struct h2b__load_worker *w;
    enum fstate state;
    int fd[2]; /* fd[0]: ours, in the worker's epoll; fd[1]: the "server", which echoes */
    struct h2b__load_life life;
    struct h2b__load_req req[MAX_SLOTS];
    uint32_t inflight;
    unsigned starts;
};

/* What the engine does and what it saw */
static struct {
    bool silent; /* requests are never answered */
    uint32_t m;  /* requests in flight per connection */
    unsigned flushes, timeouts_calls, stops;
    unsigned early;                       /* --total-rps: arrivals handed over before their time */
    uint64_t first_release, last_release; /* --total-rps: when the first and last went out */
    struct fconn c[MAX_CONNS];
} fk;

static struct fconn *conn_at(const struct h2b__load_worker *w, uint32_t i)
{
    (void)w;
    return &fk.c[i];
}

static void conn_close(struct fconn *c, bool timed_out);

static void release_slot(void *conn, uint32_t k)
{
    struct fconn *c = conn;
    h2b__load_req_end(c->w, &c->req[k]);
    c->inflight--;
}

static bool submit(struct fconn *c, uint64_t t)
{
    uint32_t k = 0;
    while (k < MAX_SLOTS && c->req[k].busy)
        k++;
    if (k == MAX_SLOTS)
        return false;
    h2b__load_req_begin(c->w, &c->req[k], t, c->w->now);
    c->inflight++;
    uint8_t b = (uint8_t)k;
    if (!fk.silent && write(c->fd[1], &b, 1) != 1)
        return false;
    return true;
}

static void fill(struct fconn *c)
{
    struct h2b__load_worker *w = c->w;
    if (w->sh->rate_mode)
        return;
    while (c->state == F_READY && c->inflight < fk.m && c->life.budget > 0 &&
           h2b__load_running(w) && submit(c, w->now))
        h2b__load_spend(&c->life);
    if (c->state == F_READY && c->inflight == 0 && c->life.budget == 0)
        conn_close(c, false);
}

static void conn_close(struct fconn *c, bool timed_out)
{
    if (c->state != F_READY)
        return;
    struct h2b__load_slots s = {c->req, sizeof c->req[0], MAX_SLOTS, c};
    h2b__load_abandon(c->w, &c->life, &s, timed_out, release_slot);
    close(c->fd[0]);
    close(c->fd[1]);
    c->fd[0] = c->fd[1] = -1;
    enum h2b__load_next next = h2b__load_closed(c->w, &c->life, true);
    c->state = (enum fstate)h2b__load_state_after(next, F_READY);
}

static void start(struct h2b__load_worker *w, uint32_t i)
{
    struct fconn *c = conn_at(w, i);
    c->starts++;
    h2b__load_life_connect(&c->life, w);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, c->fd) != 0) {
        c->state = F_DEAD;
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd[0], &ev);
    c->state = F_READY;
    c->life.last_read = w->now;
    w->stats.conns_ok++;
    fill(c);
}

static void on_event(void *conn, uint32_t events)
{
    (void)events;
    struct fconn *c = conn;
    struct h2b__load_worker *w = c->w;
    uint8_t buf[64];
    ssize_t n = read(c->fd[0], buf, sizeof buf);
    c->life.last_read = w->now;
    for (ssize_t i = 0; i < n; i++) {
        struct h2b__load_req *r = &c->req[buf[i]];
        r->status = 200;
        h2b__load_req_end(w, r);
        c->inflight--;
        h2b__load_finish(w, &c->life, r, H2B__LOAD_RESPONSE);
        c->life.responses++;
    }
    fill(c);
}

static bool flush(struct h2b__load_worker *w)
{
    (void)w;
    fk.flushes++;
    return false;
}

static enum h2b__load_phase phase(const struct h2b__load_worker *w, uint32_t i)
{
    return h2b__load_phase_of(conn_at(w, i)->state, F_READY);
}

static bool can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct fconn *c = conn_at(w, i);
    return c->state == F_READY && c->inflight < fk.m;
}

static bool rate_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    if (t > w->now)
        fk.early++;
    if (fk.first_release == 0)
        fk.first_release = w->now;
    fk.last_release = w->now;
    return submit(conn_at(w, i), t);
}

static void cancel(void *conn, uint32_t k)
{
    release_slot(conn, k);
}

static void timeouts(struct h2b__load_worker *w)
{
    fk.timeouts_calls++;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct fconn *c = conn_at(w, i);
        struct h2b__load_slots s = {c->req, sizeof c->req[0], MAX_SLOTS, c};
        if (c->state == F_READY && h2b__load_time_out(w, &c->life, &s, cancel))
            conn_close(c, true);
    }
}

static const struct h2b__load_life *stop(struct h2b__load_worker *w, uint32_t i)
{
    struct fconn *c = conn_at(w, i);
    fk.stops++;
    c->life.budget = 0;
    conn_close(c, false);
    return &c->life;
}

static int init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    for (uint32_t i = 0; i < w->nconns; i++) {
        memset(&fk.c[i], 0, sizeof fk.c[i]);
        fk.c[i].w = w;
        fk.c[i].fd[0] = fk.c[i].fd[1] = -1;
        h2b__load_life_init(&fk.c[i].life, w, first_conn, i, requests);
    }
    w->es = &fk;
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    for (uint32_t i = 0; w->es && i < w->nconns; i++)
        for (int k = 0; k < 2; k++)
            if (fk.c[i].fd[k] >= 0)
                close(fk.c[i].fd[k]);
    w->es = NULL;
}

static const struct h2b__load_engine fake = {
    .tag = "fake",
    .ramp = true,
    .init = init,
    .free = engine_free,
    .start = start,
    .on_event = on_event,
    .flush = flush,
    .rate = {phase, can_take, rate_submit},
    .timeouts = timeouts,
    .stop = stop,
};

/* One worker over nconns of the fake's connections, run to its end on this thread. */
struct run {
    struct h2b_load_config cfg;
    struct h2b__load_shared sh;
    struct h2b__load_worker w;
    atomic_int stop;
    uint64_t elapsed;
};

static void setup(struct run *r, uint32_t nconns, uint64_t requests, uint32_t m)
{
    memset(r, 0, sizeof *r);
    h2b_load_config_init(&r->cfg);
    char *argv[] = {"load", "http://127.0.0.1:1/x", NULL};
    CHECK_EQ_INT(h2b_load_config_parse(&r->cfg, 2, argv, NULL), H2B_OK);
    r->cfg.connections = nconns;
    r->cfg.requests = requests;
    r->cfg.coalesce_ns = 0;
    memset(&fk, 0, sizeof fk);
    fk.m = m;
}

static void run(struct run *r)
{
    const struct h2b_load_config *cfg = &r->cfg;
    r->sh.cfg = cfg;
    r->sh.engine = &fake;
    r->sh.stop = &r->stop;
    r->sh.rate_mode = cfg->rate > 0;
    r->sh.t0 = h2b_clock_now_ns();
    CHECK_EQ_INT(h2b__load_worker_init(&r->w, 0, &r->sh, cfg->connections, 0, cfg->requests),
                 H2B_OK);
    h2b__load_worker_main(&r->w);
    r->elapsed = h2b_clock_now_ns() - r->sh.t0;
    CHECK_EQ_INT(r->w.rc, H2B_OK);
    CHECK_EQ_U64(r->w.inflight, 0);
    CHECK_EQ_INT(atomic_load(&r->w.finished), 1);
    CHECK_EQ_INT((int)fk.stops, (int)cfg->connections); /* stop: once per connection */
}

static void done(struct run *r)
{
    h2b__load_worker_free(&r->w);
    CHECK(r->w.es == NULL); /* the engine's free ran */
    h2b_load_config_free(&r->cfg);
}

/* Closed loop: -n split over the connections (remainders first), m in flight each, every
 * request counted once, every connection finished. */
static void closed_loop(void)
{
    struct run r;
    setup(&r, 3, 100, 3);
    CHECK_EQ_U64(fk.c[0].life.budget, 0); /* not set up yet */
    run(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    CHECK_EQ_U64(st->started, 100);
    CHECK_EQ_U64(st->done, 100);
    CHECK_EQ_U64(st->succeeded, 100);
    CHECK_EQ_U64(st->status[200], 100);
    CHECK_EQ_U64(st->failed + st->errored + st->timeouts + st->not_sent, 0);
    CHECK_EQ_U64(st->conns_ok, 3);
    CHECK_EQ_U64(st->latency->total, 100);
    CHECK_EQ_U64(st->service->total, 100);
    CHECK_EQ_U64(fk.c[0].life.completed, 34); /* 100 over 3: 34, 33, 33 */
    CHECK_EQ_U64(fk.c[1].life.completed, 33);
    CHECK_EQ_U64(fk.c[2].life.completed, 33);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(fk.c[i].state, F_DONE);
        CHECK_EQ_INT((int)fk.c[i].starts, 1);
        CHECK(r.w.conn_rps[i] > 0);
    }
    CHECK(fk.flushes > 0); /* the engine's flush runs before each wait */
    done(&r);
}

/* --total-rps: arrivals go out no earlier than intended (50 at 1000/s: the last one 49 ms after
 * the first), round-robin over the connections that can take one, each counted. */
static void open_loop(void)
{
    struct run r;
    setup(&r, 2, 50, 1);
    r.cfg.rate = 1000;
    run(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    CHECK_EQ_U64(st->started, 50);
    CHECK_EQ_U64(st->done, 50);
    CHECK_EQ_U64(st->unsent, 0);
    CHECK_EQ_U64(r.w.sched_left, 0);
    CHECK_EQ_INT((int)fk.early, 0);
    CHECK(fk.last_release - fk.first_release >= 49 * H2B_NS_PER_MS);
    CHECK_EQ_U64(fk.c[0].life.completed + fk.c[1].life.completed, 50);
    CHECK(fk.c[0].life.completed >= 1 && fk.c[1].life.completed >= 1);
    done(&r);
}

/* -r: one connection per period; connection i starts no earlier than i periods in. */
static void ramp(void)
{
    struct run r;
    setup(&r, 3, 30, 2);
    r.cfg.conn_rate = 1;
    r.cfg.rate_period_ns = 20 * H2B_NS_PER_MS;
    run(&r);
    CHECK_EQ_U64(r.w.stats.done, 30);
    CHECK(fk.c[1].life.t_first_start - fk.c[0].life.t_first_start >= 20 * H2B_NS_PER_MS);
    CHECK(fk.c[2].life.t_first_start - fk.c[1].life.t_first_start >= 20 * H2B_NS_PER_MS);
    done(&r);
}

/* --timeout against a server that never answers: a connection silent for a whole timeout is
 * given up (its requests time out), it got no response so it does not reconnect, and what it
 * still owed in -n mode is errored as not sent. */
static void timeouts_silent(void)
{
    struct run r;
    setup(&r, 1, 5, 2);
    r.cfg.timeout_ns = 50 * H2B_NS_PER_MS;
    fk.silent = true;
    run(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    CHECK_EQ_U64(st->started, 2);
    CHECK_EQ_U64(st->timeouts, 2);
    CHECK_EQ_U64(st->not_sent, 3);
    CHECK_EQ_U64(st->errored, 5);
    CHECK_EQ_U64(st->failed, 5);
    CHECK_EQ_U64(st->done, 0);
    CHECK_EQ_U64(st->reconnects, 0);
    CHECK_EQ_INT(fk.c[0].state, F_DEAD);
    CHECK(fk.timeouts_calls > 0);
    CHECK(r.elapsed >= 50 * H2B_NS_PER_MS);
    done(&r);
}

/* h2b_load_stop before the run: the worker notices at its first turn and ends; what is in
 * flight then is unfinished, not errored. */
static void interrupted(void)
{
    struct run r;
    setup(&r, 1, 1000, 2);
    fk.silent = true;
    atomic_store(&r.stop, 1);
    run(&r);
    CHECK(r.w.interrupted);
    CHECK_EQ_U64(r.w.stats.started, 2);
    CHECK_EQ_U64(r.w.stats.unfinished, 2);
    CHECK_EQ_U64(r.w.stats.errored, 0);
    done(&r);
}

int main(void)
{
    closed_loop();
    open_loop();
    ramp();
    timeouts_silent();
    interrupted();
    return test_report();
}
