/*
 * stats.c - summing and printing the server's counters.
 *
 * The JSON is written by hand into a caller buffer with snprintf: /stats must not allocate
 * (it is one of the server's routes and the server allocates nothing per request), and the
 * document is flat and small, so a JSON library would add nothing.
 */
#include "h2ref/stats.h"

#include "core/error.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static const char *const names[H2B_STAT_COUNT] = {
    [H2B_STAT_CONNS_OPEN] = "conns_open",
    [H2B_STAT_CONNS_TOTAL] = "conns_total",
    [H2B_STAT_STREAMS_OPEN] = "streams_open",
    [H2B_STAT_STREAMS_TOTAL] = "streams_total",
    [H2B_STAT_REQUESTS] = "requests",
    [H2B_STAT_BYTES_IN] = "bytes_in",
    [H2B_STAT_BYTES_OUT] = "bytes_out",
    [H2B_STAT_RST_RECV] = "rst_stream_received",
    [H2B_STAT_RST_SENT] = "rst_stream_sent",
    [H2B_STAT_GOAWAY_SENT] = "goaway_sent",
    [H2B_STAT_GUARD_HEADERS] = "guard_header_list",
    [H2B_STAT_GUARD_IDLE] = "guard_idle_timeout",
    [H2B_STAT_GUARD_SLOW] = "guard_slow_client",
    [H2B_STAT_GUARD_FLOOD] = "guard_flood",
    [H2B_STAT_GUARD_OUTQ] = "guard_outbound_queue",
    [H2B_STAT_GUARD_MAXCONN] = "guard_max_connections",
    [H2B_STAT_GUARD_MAXCONN_IP] = "guard_max_connections_per_ip",
    [H2B_STAT_GUARD_MEMORY] = "guard_memory",
    [H2B_STAT_GUARD_FILES] = "guard_open_files",
    [H2B_STAT_ERR_PREFACE] = "error_bad_preface",
    [H2B_STAT_ERR_FLOODED] = "error_nghttp2_flooded",
    [H2B_STAT_ERR_CONTINUATION] = "error_too_many_continuations",
    [H2B_STAT_ERR_PROTOCOL] = "error_session_fatal",
    [H2B_STAT_NGHTTP2_ALLOCS] = "nghttp2_allocs",
    [H2B_STAT_THREAD_ALLOCS] = "worker_allocs",
};

const char *h2b_stats_name(enum h2b_stat i)
{
    return (unsigned)i < H2B_STAT_COUNT ? names[i] : "?";
}

void h2b_stats_accumulate(struct h2b_stats *dst, const struct h2b_stats *src)
{
    for (int i = 0; i < H2B_STAT_COUNT; i++)
        dst->v[i] += __atomic_load_n(&src->v[i], __ATOMIC_RELAXED);
    for (int i = 0; i < H2B_STATS_MAX_STATUS; i++)
        dst->status[i] += __atomic_load_n(&src->status[i], __ATOMIC_RELAXED);
}

uint64_t h2b_stats_rss_kib(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "size resident shared ..." in pages */
    const char *p = buf;
    while (*p && *p != ' ')
        p++;
    uint64_t pages = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (uint64_t)(*p - '0');
    return pages * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* Appends formatted text at *len; returns 0 when it does not fit. */
__attribute__((format(printf, 4, 5))) static int put(char *buf, size_t cap, size_t *len,
                                                     const char *fmt, ...)
{
    if (*len >= cap)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return 0;
    *len += (size_t)n;
    return 1;
}

int h2b_stats_json(const struct h2b_stats *s, bool counting_available, char *buf, size_t cap)
{
    size_t len = 0;
    int ok = put(buf, cap, &len, "{");
    for (int i = 0; i < H2B_STAT_COUNT && ok; i++)
        ok = put(buf, cap, &len, "\"%s\":%llu,", names[i], (unsigned long long)s->v[i]);
    ok = ok && put(buf, cap, &len, "\"responses\":{");
    const char *sep = "";
    for (int i = 0; i < H2B_STATS_MAX_STATUS && ok; i++) {
        if (s->status[i] == 0)
            continue;
        ok = put(buf, cap, &len, "%s\"%d\":%llu", sep, i, (unsigned long long)s->status[i]);
        sep = ",";
    }
    ok = ok && put(buf, cap, &len, "},");
    uint64_t req = s->v[H2B_STAT_REQUESTS];
    double per_ng = req ? (double)s->v[H2B_STAT_NGHTTP2_ALLOCS] / (double)req : 0.0;
    ok = ok && put(buf, cap, &len, "\"nghttp2_allocs_per_request\":%.3f,", per_ng);
    if (counting_available) {
        double per = req ? (double)s->v[H2B_STAT_THREAD_ALLOCS] / (double)req : 0.0;
        ok = ok && put(buf, cap, &len,
                       "\"allocs_per_request\":%.3f,\"allocs_note\":\"every allocation on the "
                       "worker threads (malloc calls: ours, OpenSSL, nghttp2 beyond its pools; "
                       "sessions included) per response\",",
                       per);
    } else {
        ok = ok && put(buf, cap, &len,
                       "\"allocs_per_request\":null,\"allocs_note\":\"the counting allocator "
                       "is not active in this build (sanitizers own malloc)\",");
    }
    ok = ok && put(buf, cap, &len, "\"rss_kib\":%llu}\n", (unsigned long long)h2b_stats_rss_kib());
    return ok ? (int)len : H2B_ERR_RANGE;
}

int h2b_stats_json_io(char *buf, size_t cap, int len, const char *io, const char *fallback)
{
    if (len < 2 || (size_t)len > cap || buf[len - 2] != '}' || buf[len - 1] != '\n')
        return H2B_ERR_RANGE;
    size_t n = (size_t)len - 2; /* reopen the object */
    int ok = put(buf, cap, &n, ",\"io\":\"%s\",\"io_fallback\":", io);
    if (ok && fallback && fallback[0]) {
        ok = put(buf, cap, &n, "\"");
        for (const char *p = fallback; ok && *p; p++) /* JSON-safe: quotes, backslashes, controls */
            ok = put(buf, cap, &n, "%c",
                     (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? '?' : *p);
        ok = ok && put(buf, cap, &n, "\"");
    } else {
        ok = ok && put(buf, cap, &n, "null");
    }
    ok = ok && put(buf, cap, &n, "}\n");
    return ok ? (int)n : H2B_ERR_RANGE;
}
