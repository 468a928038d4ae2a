/*
 * report.c - the results as text (h2load 1.52's block, byte for byte in layout, then our lines)
 * and as a JSON matrix cell.
 *
 * The h2load block keeps its lines, column widths and number formats (durations as "99us",
 * "1.21ms", "3.00s"; sizes as "323.21KB") so scripts that parse h2load keep working. Two rows
 * carry better numbers under the old labels, and the extra lines say so: "time for request" is
 * every ended request (h2load drops errored ones) and "time to 1st byte" is per request (h2load's
 * is per connection and includes the handshake).
 */
#include "load.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* h2load's util::dtos: two decimals, rounded. */
static void dtos(char *buf, size_t n, double v)
{
    long long m = llround(100.0 * v);
    snprintf(buf, n, "%lld.%02lld", m / 100, m % 100);
}

/* h2load's util::format_duration: "NNus" below 1 ms, else two decimals with ms or s. */
static void fmt_duration(char *buf, size_t n, double secs)
{
    char d[32];
    if (secs >= 1.0) {
        dtos(d, sizeof(d), secs);
        snprintf(buf, n, "%ss", d);
    } else if (secs >= 0.001) {
        dtos(d, sizeof(d), secs * 1000.0);
        snprintf(buf, n, "%sms", d);
    } else {
        snprintf(buf, n, "%lldus", (long long)(secs * 1000000.0));
    }
}

static void fmt_ns(char *buf, size_t n, uint64_t ns)
{
    fmt_duration(buf, n, (double)ns / 1e9);
}

/* h2load's util::utos_funit: powers of 1024 with G, M, K. */
static void fmt_size(char *buf, size_t n, double v)
{
    char d[32];
    if (v >= 1073741824.0) {
        dtos(d, sizeof(d), v / 1073741824.0);
        snprintf(buf, n, "%sG", d);
    } else if (v >= 1048576.0) {
        dtos(d, sizeof(d), v / 1048576.0);
        snprintf(buf, n, "%sM", d);
    } else if (v >= 1024.0) {
        dtos(d, sizeof(d), v / 1024.0);
        snprintf(buf, n, "%sK", d);
    } else {
        snprintf(buf, n, "%llu", (unsigned long long)v);
    }
}

struct within {
    const struct h2b_hist *h;
    double lo, hi;
    uint64_t count;
};

/* A bin counts as within mean +/- sd when its midpoint is: the same midpoints the mean and the
 * standard deviation come from. */
static int count_within(uint64_t value, uint64_t count, void *arg)
{
    struct within *w = arg;
    double mid = ((double)h2b_hist_lowest_equivalent(w->h, value) + (double)value) / 2.0;
    if (mid >= w->lo - 0.5 && mid <= w->hi + 0.5)
        w->count += count;
    return 0;
}

static void hist_row(FILE *f, const char *label, const struct h2b_hist *h)
{
    char mn[64], mx[64], me[64], sd[64], pct[64];
    double mean = 0, stddev = 0, within = 0;
    if (h->total > 0) {
        mean = h2b_hist_mean(h);
        stddev = h2b_hist_stddev(h);
        struct within w = {h, mean - stddev, mean + stddev, 0};
        h2b_hist_foreach(h, count_within, &w);
        within = 100.0 * (double)w.count / (double)h->total;
    }
    fmt_ns(mn, sizeof(mn), h->total ? h->min : 0);
    fmt_ns(mx, sizeof(mx), h->max);
    fmt_duration(me, sizeof(me), mean / 1e9);
    fmt_duration(sd, sizeof(sd), stddev / 1e9);
    dtos(pct, sizeof(pct), within);
    fprintf(f, "%s: %10s  %10s  %10s  %10s%9s%%\n", label, mn, mx, me, sd, pct);
}

static void rps_row(FILE *f, const double *v, size_t n)
{
    double mn = 0, mx = 0, mean = 0, sd = 0, within = 0;
    if (n > 0) {
        mn = mx = v[0];
        for (size_t i = 0; i < n; i++) {
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
            mean += v[i];
        }
        mean /= (double)n;
        for (size_t i = 0; i < n; i++)
            sd += (v[i] - mean) * (v[i] - mean);
        sd = sqrt(sd / (double)n);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            k += fabs(v[i] - mean) <= sd;
        within = 100.0 * (double)k / (double)n;
    }
    char pct[32];
    dtos(pct, sizeof(pct), within);
    fprintf(f, "req/s           : %10.2f  %10.2f  %10.2f  %10.2f%9s%%\n", mn, mx, mean, sd, pct);
}

static void percentiles(FILE *f, const char *label, const struct h2b_hist *h, const char *what)
{
    static const double ps[] = {50, 90, 99, 99.9, 99.99};
    static const char *const names[] = {"p50", "p90", "p99", "p99.9", "p99.99"};
    fprintf(f, "%s:", label);
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        char b[64];
        fmt_ns(b, sizeof(b), h2b_hist_percentile(h, ps[i]));
        fprintf(f, " %s %s,", names[i], b);
    }
    char b[64];
    fmt_ns(b, sizeof(b), h->max);
    fprintf(f, " max %s (%" PRIu64 " requests, %s)\n", b, h->total, what);
}

void h2b_load_report_text(FILE *f, const struct h2b_load_config *cfg,
                          const struct h2b_load_result *res)
{
    const struct h2b_load_stats *s = &res->s;
    double secs = (double)res->measure_ns / 1e9;
    uint64_t ended = s->done + s->errored;
    char b1[64], b2[64], b3[64], b4[64];

    fmt_ns(b1, sizeof(b1), res->wall_ns);
    fmt_size(b2, sizeof(b2), secs > 0 ? (double)s->bytes_total / secs : 0);
    fprintf(f, "\nfinished in %s, %.2f req/s, %sB/s\n", b1, secs > 0 ? (double)s->done / secs : 0.0,
            b2);
    uint64_t total = cfg->duration_ns || cfg->rate > 0 ? s->started + s->not_sent : cfg->requests;
    fprintf(f,
            "requests: %" PRIu64 " total, %" PRIu64 " started, %" PRIu64 " done, %" PRIu64
            " succeeded, %" PRIu64 " failed, %" PRIu64 " errored, %" PRIu64 " timeout\n",
            total, s->started, ended, s->succeeded, s->failed, s->errored, s->timeouts);
    uint64_t cls[6] = {0};
    for (int code = 100; code < H2B_LOAD_STATUS_MAX; code++)
        cls[code / 100] += s->status[code];
    fprintf(f, "status codes: %" PRIu64 " 2xx, %" PRIu64 " 3xx, %" PRIu64 " 4xx, %" PRIu64 " 5xx\n",
            cls[2], cls[3], cls[4], cls[5]);
    double savings =
        s->bytes_headers_decomp
            ? 100.0 * (1.0 - (double)s->bytes_headers / (double)s->bytes_headers_decomp)
            : 0.0;
    fmt_size(b1, sizeof(b1), (double)s->bytes_total);
    fmt_size(b2, sizeof(b2), (double)s->bytes_headers);
    fmt_size(b3, sizeof(b3), (double)s->bytes_data);
    dtos(b4, sizeof(b4), savings);
    fprintf(f,
            "traffic: %sB (%" PRIu64 ") total, %sB (%" PRIu64
            ") headers (space savings %s%%), %sB (%" PRIu64 ") data\n",
            b1, s->bytes_total, b2, s->bytes_headers, b4, b3, s->bytes_data);
    fprintf(f, "                     min         max         mean         sd        +/- sd\n");
    hist_row(f, "time for request", s->latency);
    hist_row(f, "time for connect", s->connect);
    hist_row(f, "time to 1st byte", s->ttfb);
    rps_row(f, res->conn_rps, res->nconn_rps);

    /* h2bench's lines */
    bool open_loop = cfg->rate > 0;
    percentiles(f, "latency", s->latency,
                open_loop ? "from intended send time, failed included"
                          : "from submission, failed included");
    percentiles(f, "service", s->service, "from HEADERS sent: the actual-send-time view");
    percentiles(f, "ttfb", s->ttfb, "per request, from HEADERS sent");
    fprintf(f,
            "goodput: %.2f req/s (2xx/3xx); status:", secs > 0 ? (double)s->succeeded / secs : 0);
    int shown = 0;
    for (int code = 0; code < H2B_LOAD_STATUS_MAX; code++)
        if (s->status[code]) {
            fprintf(f, " %d x%" PRIu64, code, s->status[code]);
            shown++;
        }
    if (s->status_other)
        fprintf(f, " other x%" PRIu64, s->status_other);
    fprintf(f, "%s\n", shown || s->status_other ? "" : " none");
    fprintf(
        f,
        "errors: %" PRIu64 " reset, %" PRIu64 " timed out, %" PRIu64 " connection lost or not sent"
        " (%" PRIu64 " not sent); %" PRIu64 " unfinished at the end\n",
        s->resets, s->timeouts, s->errored - s->resets - s->timeouts, s->not_sent, s->unfinished);
    fprintf(f,
            "connections: %u, %" PRIu64 " up, %" PRIu64 " failed, %" PRIu64
            " reconnects; streams per connection: requested %u, effective %u (server "
            "SETTINGS_MAX_CONCURRENT_STREAMS %u); %s\n",
            cfg->connections, s->conns_ok, s->conns_failed, s->reconnects, cfg->streams,
            s->streams_effective, s->server_max_streams, res->alpn);
    if (open_loop) {
        fmt_ns(b1, sizeof(b1), s->sched_lag_max_ns);
        fprintf(f,
                "rate: target %.2f req/s (%s), achieved %.2f req/s; %" PRIu64
                " intended but never sent (backlog at the end); max release lag %s\n",
                cfg->rate, h2b_arrival_kind_name(cfg->arrival),
                secs > 0 ? (double)s->started / secs : 0.0, s->unsent, b1);
    }
    double cpu = (double)(res->cpu_user_ns + res->cpu_sys_ns) / 1e9;
    fprintf(f, "client cpu: %.3fs user, %.3fs sys, %.2fus per request%s\n",
            (double)res->cpu_user_ns / 1e9, (double)res->cpu_sys_ns / 1e9,
            ended ? cpu * 1e6 / (double)ended : 0.0,
            res->interrupted ? "; interrupted: partial results" : "");
}
