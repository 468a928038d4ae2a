/*
 * ctimer.h - an HTTP/2 connection's idle and slow-client timer, one copy for both engines
 * (h2_nghttp2.c, h2_fast.c).
 *
 * Policy: an idle connection (preface and a first frame in, no stream open, nothing unsent, no
 * GOAWAY queued, no frame half read) is due idle_timeout_ns after its last application
 * progress; a busy one slow_timeout_ns after the later of its last progress and the moment it
 * became busy. Only application progress (requests, request bodies, response frames) moves
 * `last`, so a peer that only pings, or toggles between busy and idle, cannot keep a connection
 * alive. When the timer comes up (h2b_ctimer_due):
 *   idle                                   -> GOAWAY(NO_ERROR)           (counted guard_idle)
 *   busy, with /delay responses pending    -> waiting on us: progress
 *   busy, no preface yet or GOAWAY queued  -> closed at once             (counted guard_slow,
 *                                                                         unless GOAWAY queued)
 *   busy otherwise                         -> GOAWAY(ENHANCE_YOUR_CALM)  (counted guard_slow),
 *                                             which gets its own slow period
 * The engine says what "busy" means for it and carries out the verdict (each writes its GOAWAY
 * its own way).
 *
 * Mechanism: one node per connection in the worker's min-heap (harness/core/heap.h), keyed by
 * a deadline that may be early: a deadline that moves later stays at its old key and is
 * corrected when it comes up (progress costs no heap work); one that moves earlier is re-keyed
 * at once. Static inline: the retime runs after every read and write of a connection.
 * One owner thread, as the connection. Rejected: a function-pointer interface carrying out the
 * verdict in here (the four actions are two lines each per engine, and callbacks would hide
 * them); h1.c's timer, whose policy differs (a head's own deadline, /delay in the same node):
 * it shares only h2b_ctimer_arm.
 */
#ifndef H2B_H2REF_CTIMER_H
#define H2B_H2REF_CTIMER_H

#include "core/heap.h"
#include "h2ref/conn.h"
#include "h2ref/stats.h"

#include <stdbool.h>
#include <stdint.h>

struct h2b_ctimer {
    struct h2b_heap_node node; /* in the worker's timer heap */
    uint64_t last;             /* last application progress, monotonic ns */
    uint64_t busy_since;       /* when the connection last became busy */
    bool was_busy;
    bool progress; /* application progress since the timer was last touched; PINGs and the
                    * like are not */
};

/* What a due timer asks of its engine. */
enum h2b_ctimer_due {
    H2B_CTIMER_EARLY, /* the key was early (progress since): re-keyed, nothing to do */
    H2B_CTIMER_IDLE,  /* send GOAWAY(NO_ERROR), then retime (now busy) */
    H2B_CTIMER_WAIT,  /* /delay responses pending: progress noted, retime */
    H2B_CTIMER_CUT,   /* close now: the node is out of the heap */
    H2B_CTIMER_SLOW,  /* send GOAWAY(ENHANCE_YOUR_CALM) */
};

/* A fresh connection at now (ns): progress now, busy from now. */
static inline void h2b_ctimer_init(struct h2b_ctimer *t, uint64_t now)
{
    t->last = t->busy_since = now;
}

/* Queues node at deadline d, or moves it earlier; a later d is left for when the old key comes
 * up. Room in heap must have been reserved for the node (h2b_heap_reserve). */
static inline void h2b_ctimer_arm(struct h2b_heap *heap, struct h2b_heap_node *node, uint64_t d)
{
    if (!h2b_heap_contains(node))
        (void)h2b_heap_push(heap, node, d); /* cannot fail: room reserved */
    else if (d < node->key)
        h2b_heap_rekey(heap, node, d);
}

/* When the timer is due (monotonic ns), from its state at the last retime. */
static inline uint64_t h2b_ctimer_deadline(const struct h2b_ctimer *t,
                                           const struct h2b_conn_config *cfg)
{
    if (t->was_busy)
        return (t->last > t->busy_since ? t->last : t->busy_since) + cfg->slow_timeout_ns;
    return t->last + cfg->idle_timeout_ns;
}

/* Brings t up to date with its connection's state at now (ns) and arms it; a fatal
 * connection's timer leaves the heap. */
static inline void h2b_ctimer_retime(struct h2b_ctimer *t, struct h2b_heap *heap, uint64_t now,
                                     bool fatal, bool busy, const struct h2b_conn_config *cfg)
{
    if (fatal) {
        h2b_heap_remove(heap, &t->node);
        return;
    }
    if (busy && !t->was_busy)
        t->busy_since = now;
    t->was_busy = busy;
    if (t->progress) {
        t->progress = false;
        t->last = now;
    }
    h2b_ctimer_arm(heap, &t->node, h2b_ctimer_deadline(t, cfg));
}

/* t's node came up in heap at now, and the engine has just retimed it. delayed: /delay
 * responses are pending; started: the preface and a first frame arrived; terminated: a GOAWAY
 * is queued. Counts idle and slow timeouts in stats. Then the engine acts, and calls
 * h2b_ctimer_settle. */
static inline enum h2b_ctimer_due h2b_ctimer_due(struct h2b_ctimer *t, struct h2b_heap *heap,
                                                 uint64_t now, const struct h2b_conn_config *cfg,
                                                 struct h2b_stats *stats, bool delayed,
                                                 bool started, bool terminated)
{
    uint64_t d = h2b_ctimer_deadline(t, cfg);
    if (d > now) {
        h2b_heap_rekey(heap, &t->node, d);
        return H2B_CTIMER_EARLY;
    }
    if (!t->was_busy) {
        h2b_stats_add(stats, H2B_STAT_GUARD_IDLE, 1);
        return H2B_CTIMER_IDLE;
    }
    if (delayed) {
        t->progress = true;
        return H2B_CTIMER_WAIT;
    }
    if (!started || terminated) {
        if (!terminated)
            h2b_stats_add(stats, H2B_STAT_GUARD_SLOW, 1);
        h2b_heap_remove(heap, &t->node);
        return H2B_CTIMER_CUT;
    }
    h2b_stats_add(stats, H2B_STAT_GUARD_SLOW, 1);
    t->busy_since = now; /* the GOAWAY gets its own slow-client period */
    return H2B_CTIMER_SLOW;
}

/* After the engine acted on a verdict other than EARLY: the node (if still queued) at its
 * deadline. */
static inline void h2b_ctimer_settle(struct h2b_ctimer *t, struct h2b_heap *heap,
                                     const struct h2b_conn_config *cfg)
{
    if (h2b_heap_contains(&t->node))
        h2b_heap_rekey(heap, &t->node, h2b_ctimer_deadline(t, cfg));
}

/* The earlier of two heaps' tops (monotonic ns), UINT64_MAX when both are empty. */
static inline uint64_t h2b_ctimer_next(const struct h2b_heap *a, const struct h2b_heap *b)
{
    const struct h2b_heap_node *ta = h2b_heap_top(a), *tb = h2b_heap_top(b);
    uint64_t d = ta ? ta->key : UINT64_MAX;
    return tb && tb->key < d ? tb->key : d;
}

#endif
