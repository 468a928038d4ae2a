/*
 * guard.h - the two HTTP/2 engines' per-connection guards, one copy: the flood budget and the
 * window of recent client stream ids (h2_nghttp2.c, h2_fast.c).
 *
 * Flood budget: a token bucket. Each suspicious frame (empty DATA, PRIORITY, PING, SETTINGS,
 * tiny WINDOW_UPDATE, unknown types, frames on closed streams, resets) is charged; tokens
 * refill at rate per second up to burst. Spent means the connection is ended with
 * ENHANCE_YOUR_CALM by its engine. Doubles: a refill after a few microseconds adds a
 * fraction of a token, which integer tokens would round away at every frame.
 *
 * Stream-id window: the highest client stream id opened, and for the H2B_SIDWIN ids (odd ids:
 * 2k+1 is bit k) below it whether each was opened and whether we reset it. It tells a frame on
 * a stream we reset (ignored, RFC 9113 5.4.2) from one on a stream otherwise closed
 * (STREAM_CLOSED) and from a lower id never opened (PROTOCOL_ERROR), without per-stream state
 * after a stream closes; ids below the window count as closed.
 *
 * Both are static inline: they run on every request (sidwin_open) or suspicious frame, and the
 * engines embed the structs in their connections. One owner thread, as the connection.
 * Rejected: a set of closed ids (grows with the connection's age); nghttp2's retained closed
 * streams (memory per stream, and the own-framing engine has no session).
 */
#ifndef H2B_H2REF_GUARD_H
#define H2B_H2REF_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct h2b_flood {
    double tokens;
    uint64_t at; /* last refill, monotonic ns */
};

/* A full bucket at now (ns). */
static inline void h2b_flood_init(struct h2b_flood *f, uint32_t burst, uint64_t now)
{
    f->tokens = burst;
    f->at = now;
}

/* Charges n tokens at now (ns), after the refill at rate tokens per second up to burst.
 * Returns true when the budget is spent (the tokens stay at 0). */
static inline bool h2b_flood_charge(struct h2b_flood *f, double n, uint64_t now, uint32_t rate,
                                    uint32_t burst)
{
    if (now > f->at) {
        f->tokens += (double)(now - f->at) * rate / 1e9;
        if (f->tokens > burst)
            f->tokens = burst;
        f->at = now;
    }
    f->tokens -= n;
    if (f->tokens < 0) {
        f->tokens = 0;
        return true;
    }
    return false;
}

/* SETTINGS: at most this many entries in one frame, more is ENHANCE_YOUR_CALM (nghttp2's
 * default max_settings; h2_nghttp2.c's session has it, h2_fast.c checks it); each entry costs a
 * token, so a flood of full frames is cut as soon as one of many empty ones would be. */
#define H2B_SETTINGS_MAX_ENTRIES 32

/* Tokens a SETTINGS frame (not an ACK) with len payload bytes costs: one per entry, at least 1. */
static inline double h2b_settings_cost(uint32_t len)
{
    return len / 6 > 1 ? (double)(len / 6) : 1.0;
}

#define H2B_SIDWIN 256 /* client stream ids remembered below the highest */

struct h2b_sidwin {
    uint32_t max_id; /* the highest client stream id opened, 0: none yet */
    uint64_t opened[H2B_SIDWIN / 64];
    uint64_t reset[H2B_SIDWIN / 64];
};

/* Bit k of a window map: client stream id 2k+1. */
static inline bool h2b_sidwin_bit(const uint64_t *map, uint32_t k)
{
    return (map[(k % H2B_SIDWIN) / 64] >> (k % 64)) & 1;
}

/* id (at most max_id) is recent enough that the window knows it. */
static inline bool h2b_sidwin_in(const struct h2b_sidwin *w, uint32_t id)
{
    return id <= w->max_id && w->max_id / 2 - id / 2 < H2B_SIDWIN;
}

/* A client HEADERS opens id (odd, above max_id): the ids that leave the window are forgotten. */
static inline void h2b_sidwin_open(struct h2b_sidwin *w, uint32_t id)
{
    uint32_t k = id / 2, old = w->max_id / 2;
    if (w->max_id == 0 || k - old >= H2B_SIDWIN) {
        memset(w->opened, 0, sizeof w->opened);
        memset(w->reset, 0, sizeof w->reset);
    } else {
        for (uint32_t j = old + 1; j <= k; j++) {
            w->opened[(j % H2B_SIDWIN) / 64] &= ~((uint64_t)1 << (j % 64));
            w->reset[(j % H2B_SIDWIN) / 64] &= ~((uint64_t)1 << (j % 64));
        }
    }
    w->max_id = id;
    w->opened[(k % H2B_SIDWIN) / 64] |= (uint64_t)1 << (k % 64);
}

/* We reset client stream id: remembered while it is in the window (other ids: no-op). */
static inline void h2b_sidwin_mark_reset(struct h2b_sidwin *w, uint32_t id)
{
    if ((id & 1) && h2b_sidwin_in(w, id))
        w->reset[(id / 2 % H2B_SIDWIN) / 64] |= (uint64_t)1 << (id / 2 % 64);
}

/* id is in the window and we reset it. */
static inline bool h2b_sidwin_was_reset(const struct h2b_sidwin *w, uint32_t id)
{
    return h2b_sidwin_in(w, id) && h2b_sidwin_bit(w->reset, id / 2);
}

/* id is in the window and was never opened (a lower id the client skipped). */
static inline bool h2b_sidwin_skipped(const struct h2b_sidwin *w, uint32_t id)
{
    return h2b_sidwin_in(w, id) && !h2b_sidwin_bit(w->opened, id / 2);
}

#endif
