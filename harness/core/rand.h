/*
 * rand.h - the one small pseudo-random generator (xorshift64, Marsaglia 2003).
 *
 * For jitter and resampling where the sequence must be cheap and reproducible from a seed (the
 * micro runner's epoch sizes, the A/B bootstrap), not for anything that must be unpredictable.
 * The state must not be 0. Not thread-safe: one state per user.
 */
#ifndef H2B_CORE_RAND_H
#define H2B_CORE_RAND_H

#include <stdint.h>

/* Advances *s and returns the new state (never 0 when *s was not 0). */
static inline uint64_t h2b_rand_xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#endif
