/*
 * stats.h - the reference server's counters and their /stats JSON.
 *
 * Each worker owns one struct h2b_stats and is its only writer; any thread may read it (the
 * /stats endpoint sums every worker's). Writes and reads are relaxed atomics on plain uint64_t:
 * a load, an add and a store, no lock prefix, so counting costs the hot path nothing and the
 * reader never sees a torn value. Counters are an array indexed by enum so that summing and
 * printing are one loop over a name table, not one line per field.
 */
#ifndef H2B_H2REF_STATS_H
#define H2B_H2REF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum h2b_stat {
    H2B_STAT_CONNS_OPEN,       /* connections currently open */
    H2B_STAT_CONNS_TOTAL,      /* connections accepted since start */
    H2B_STAT_STREAMS_OPEN,     /* request streams currently open */
    H2B_STAT_STREAMS_TOTAL,    /* request streams opened since start */
    H2B_STAT_REQUESTS,         /* responses submitted (one per answered request) */
    H2B_STAT_BYTES_IN,         /* bytes received (after TLS decryption) */
    H2B_STAT_BYTES_OUT,        /* bytes handed to the socket or TLS layer */
    H2B_STAT_RST_RECV,         /* streams the peer reset */
    H2B_STAT_RST_SENT,         /* RST_STREAM frames sent */
    H2B_STAT_GOAWAY_SENT,      /* GOAWAY frames sent */
    H2B_STAT_GUARD_HEADERS,    /* requests reset for exceeding the header list budget */
    H2B_STAT_GUARD_IDLE,       /* connections closed by the idle timeout */
    H2B_STAT_GUARD_SLOW,       /* connections closed by the slow-client timeout */
    H2B_STAT_GUARD_FLOOD,      /* connections closed for spending their flood budget */
    H2B_STAT_GUARD_OUTQ,       /* connections closed for an outbound queue over the cap */
    H2B_STAT_GUARD_MAXCONN,    /* connections refused by --max-connections */
    H2B_STAT_GUARD_MAXCONN_IP, /* connections refused by --max-connections-per-ip */
    H2B_STAT_GUARD_MEMORY,     /* streams refused or reset by the memory budget or echo caps */
    H2B_STAT_GUARD_FILES,      /* docroot requests answered 503 for the open-file budgets */
    H2B_STAT_ERR_PREFACE,      /* connections that did not start with the client preface */
    H2B_STAT_ERR_FLOODED,      /* nghttp2 ERR_FLOODED (too many queued PING/SETTINGS ACKs) */
    H2B_STAT_ERR_CONTINUATION, /* nghttp2 ERR_TOO_MANY_CONTINUATIONS */
    H2B_STAT_ERR_PROTOCOL,     /* other fatal session errors */
    H2B_STAT_NGHTTP2_ALLOCS,   /* allocation calls nghttp2 made (pooled nghttp2_mem) */
    H2B_STAT_THREAD_ALLOCS,    /* every allocation on the worker threads (interposer) */
    H2B_STAT_COUNT
};

#define H2B_STATS_MAX_STATUS 600

struct h2b_stats {
    uint64_t v[H2B_STAT_COUNT];
    uint64_t status[H2B_STATS_MAX_STATUS]; /* responses by status code */
};

/* Adds n to counter i. Only the owning thread may call it. */
static inline void h2b_stats_add(struct h2b_stats *s, enum h2b_stat i, uint64_t n)
{
    __atomic_store_n(&s->v[i], __atomic_load_n(&s->v[i], __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* Subtracts n from counter i (gauges). Only the owning thread may call it. */
static inline void h2b_stats_sub(struct h2b_stats *s, enum h2b_stat i, uint64_t n)
{
    __atomic_store_n(&s->v[i], __atomic_load_n(&s->v[i], __ATOMIC_RELAXED) - n, __ATOMIC_RELAXED);
}

/* Counts one response with status code (codes >= H2B_STATS_MAX_STATUS are not counted). */
static inline void h2b_stats_status(struct h2b_stats *s, unsigned code)
{
    if (code < H2B_STATS_MAX_STATUS)
        __atomic_store_n(&s->status[code], __atomic_load_n(&s->status[code], __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
}

/* Adds a consistent-enough copy of src (read with relaxed loads, any thread) into dst. */
void h2b_stats_accumulate(struct h2b_stats *dst, const struct h2b_stats *src);

/* The JSON name of counter i ("conns_open", ...). */
const char *h2b_stats_name(enum h2b_stat i);

/* Renders s as one JSON object into buf (NUL-terminated): every counter, "responses" by status
 * (non-zero codes only), "allocs_per_request" (every allocation on the worker threads per
 * response, or null when counting_available is false: the interposer is not linked or a
 * sanitizer owns malloc), "nghttp2_allocs_per_request" (always counted), and "rss_kib" of this
 * process. Returns the length written, or H2B_ERR_RANGE if cap is too small. */
int h2b_stats_json(const struct h2b_stats *s, bool counting_available, char *buf, size_t cap);

/* Adds the server's I/O backend to the JSON object h2b_stats_json wrote into buf[0..len):
 * "io" (io, e.g. "uring") and "io_fallback" (why io_uring was not used, or null). Returns the
 * new length, or H2B_ERR_RANGE when buf is too small or buf[0..len) is not such an object. */
int h2b_stats_json_io(char *buf, size_t cap, int len, const char *io, const char *fallback);

/* Resident set size of this process in KiB, or 0 if /proc is unreadable. */
uint64_t h2b_stats_rss_kib(void);

#endif
