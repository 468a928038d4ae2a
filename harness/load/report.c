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
#include "env.h"
#include "error.h"
#include "load.h"
#include "version.h"

#include <inttypes.h>
#include <stdlib.h>
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

/* A bin counts as within mean +/- sd when its range overlaps that interval (the histogram knows
 * values only to a bin). */
static int count_within(uint64_t value, uint64_t count, void *arg)
{
    struct within *w = arg;
    double lo = (double)h2b_hist_lowest_equivalent(w->h, value);
    if ((double)value >= w->lo && lo <= w->hi)
        w->count += count;
    return 0;
}

static void hist_row(FILE *f, const char *label, const struct h2b_hist *h)
{
    char mn[64], mx[64], me[64], sd[64], pct[64];
    double mean = 0, stddev = 0, within = 0;
    if (h->total > 0) {
        /* bin midpoints can put the mean of a narrow distribution outside [min, max] */
        mean = fmin(fmax(h2b_hist_mean(h), (double)h->min), (double)h->max);
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
    /* h2load's "done": requests that were started and ended (not the never-sent ones) */
    uint64_t ended = s->done + s->errored - s->not_sent;
    char b1[64], b2[64], b3[64], b4[64];

    fmt_ns(b1, sizeof(b1), res->wall_ns);
    fmt_size(b2, sizeof(b2), secs > 0 ? (double)s->bytes_total / secs : 0);
    fprintf(f, "\nfinished in %s, %.2f req/s, %sB/s\n", b1, secs > 0 ? (double)s->done / secs : 0.0,
            b2);
    uint64_t total = cfg->duration_ns ? s->started + s->not_sent : cfg->requests;
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
    fprintf(f,
            "errors: %" PRIu64 " reset, %" PRIu64 " timed out, %" PRIu64 " protocol error, %" PRIu64
            " connection lost or not sent (%" PRIu64 " not sent); %" PRIu64
            " unfinished at the end\n",
            s->resets, s->timeouts, s->protocol_errors,
            s->errored - s->resets - s->timeouts - s->protocol_errors, s->not_sent, s->unfinished);
    char server_max[48];
    if (s->conns_ok == 0)
        snprintf(server_max, sizeof(server_max), "none: no SETTINGS received");
    else if (s->server_max_streams == UINT32_MAX)
        snprintf(server_max, sizeof(server_max), "not advertised, unlimited");
    else
        snprintf(server_max, sizeof(server_max), "%u", s->server_max_streams);
    fprintf(f,
            "connections: %u, %" PRIu64 " up, %" PRIu64 " failed, %" PRIu64
            " reconnects; streams per connection: requested %u, effective %u (server "
            "SETTINGS_MAX_CONCURRENT_STREAMS %s); %s\n",
            cfg->connections, s->conns_ok, s->conns_failed, s->reconnects, cfg->streams,
            s->streams_effective, server_max, res->alpn);
    if (s->tls->total) {
        fmt_ns(b1, sizeof(b1), h2b_hist_percentile(s->connect, 50));
        fmt_ns(b2, sizeof(b2), h2b_hist_percentile(s->tls, 50));
        fmt_ns(b3, sizeof(b3), s->tls->max);
        fprintf(
            f, "tls: handshake p50 %s, max %s (%" PRIu64 " handshakes); connect incl. TLS p50 %s\n",
            b2, b3, s->tls->total, b1);
    }
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

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *latency_obj(const struct h2b_hist *h)
{
    if (h->total == 0)
        return json_null();
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I}", "min", (json_int_t)h->min,
                     "p50", (json_int_t)h2b_hist_percentile(h, 50), "p90",
                     (json_int_t)h2b_hist_percentile(h, 90), "p99",
                     (json_int_t)h2b_hist_percentile(h, 99), "p999",
                     (json_int_t)h2b_hist_percentile(h, 99.9), "p9999",
                     (json_int_t)h2b_hist_percentile(h, 99.99), "max", (json_int_t)h->max, "mean",
                     h2b_hist_mean(h), "count", (json_int_t)h->total);
}

static int set_new(json_t *obj, const char *key, json_t *value)
{
    return value ? json_object_set_new(obj, key, value) : -1;
}

static int add_hist(json_t *obj, const char *key, const struct h2b_hist *h)
{
    char *enc;
    if (h2b_hist_encode(h, &enc) != H2B_OK)
        return -1;
    int rv = set_new(obj, key, json_string(enc));
    free(enc);
    return rv;
}

static json_t *config_obj(const struct h2b_load_config *cfg)
{
    json_t *c = json_object(), *uris = json_array(), *headers = json_array();
    if (!c || !uris || !headers) {
        json_decref(c);
        json_decref(uris);
        json_decref(headers);
        return NULL;
    }
    int bad = 0;
    for (size_t i = 0; i < cfg->nuris; i++) {
        const struct h2b_load_uri *u = &cfg->uris[i];
        size_t n = strlen(u->scheme) + strlen(u->authority) + strlen(u->path) + 4;
        char *s = malloc(n);
        if (!s) {
            bad = 1;
            continue;
        }
        snprintf(s, n, "%s://%s%s", u->scheme, u->authority, u->path);
        bad |= json_array_append_new(uris, json_string(s));
        free(s);
    }
    for (size_t i = 0; i < cfg->nheaders; i++)
        bad |= json_array_append_new(headers, json_pack("{s:s, s:s}", "name", cfg->headers[i].name,
                                                        "value", cfg->headers[i].value));
    bad |= json_object_set_new(c, "uris", uris);
    bad |= json_object_set_new(c, "headers", headers);
    bad |= set_new(
        c, "options",
        json_pack(
            "{s:I, s:I, s:I, s:I, s:f, s:f, s:o, s:f, s:f, s:f, s:i, s:i, s:I, s:f, s:s, "
            "s:I, s:o, s:b, s:I, s:I}",
            "requests", (json_int_t)cfg->requests, "connections", (json_int_t)cfg->connections,
            "streams", (json_int_t)cfg->streams, "threads", (json_int_t)cfg->threads, "duration_s",
            (double)cfg->duration_ns / 1e9, "warm_up_s", (double)cfg->warmup_ns / 1e9, "data",
            cfg->data_path ? json_string(cfg->data_path) : json_null(),
            "connection_active_timeout_s", (double)cfg->conn_active_timeout_ns / 1e9,
            "connection_inactivity_timeout_s", (double)cfg->conn_inactivity_timeout_ns / 1e9,
            "timeout_s", (double)cfg->timeout_ns / 1e9, "window_bits", cfg->window_bits,
            "connection_window_bits", cfg->conn_window_bits, "header_table_size",
            (json_int_t)cfg->header_table_size, "rate", cfg->rate, "arrival",
            h2b_arrival_kind_name(cfg->arrival), "seed", (json_int_t)cfg->seed, "cpus",
            cfg->cpus_text ? json_string(cfg->cpus_text) : json_null(), "fail_on_error",
            cfg->fail_on_error, "encoder_header_table_size", (json_int_t)cfg->encoder_table_size,
            "max_frame_size", (json_int_t)cfg->max_frame_size));
    if (bad) {
        json_decref(c);
        return NULL;
    }
    return c;
}

int h2b_load_report_json(const struct h2b_load_config *cfg, const struct h2b_load_result *res,
                         json_t **out)
{
    const struct h2b_load_stats *s = &res->s;
    double secs = (double)res->measure_ns / 1e9;
    const struct h2b_load_uri *u = &cfg->uris[0];
    char target[1024];
    snprintf(target, sizeof(target), "%s://%s%s", u->scheme, u->authority, u->path);
    json_t *o = json_object(), *codes = json_object(), *hists = json_object(), *env = NULL;
    int bad = !o || !codes || !hists;
    for (int code = 0; !bad && code < H2B_LOAD_STATUS_MAX; code++) {
        char k[8];
        snprintf(k, sizeof(k), "%d", code);
        if (s->status[code])
            bad |= json_object_set_new(codes, k, json_integer((json_int_t)s->status[code]));
    }
    if (!bad && s->status_other)
        bad |= json_object_set_new(codes, "other", json_integer((json_int_t)s->status_other));
    bad |= add_hist(hists, "latency", s->latency);
    bad |= add_hist(hists, "service", s->service);
    bad |= add_hist(hists, "ttfb", s->ttfb);
    bad |= add_hist(hists, "connect", s->connect);
    bad |= add_hist(hists, "tls_handshake", s->tls);
    if (h2b_env_collect(&env) != H2B_OK)
        env = json_null();
    if (bad) {
        json_decref(o);
        json_decref(codes);
        json_decref(hists);
        json_decref(env);
        return H2B_ERR_NOMEM;
    }
    uint64_t ended = s->done + s->errored;
    double cpu = (double)(res->cpu_user_ns + res->cpu_sys_ns) / 1e9;
    /* the matrix-cell fields of DESIGN.md first, in its order */
    bad |= set_new(o, "schema", json_string("h2bench.load/1"));
    bad |= set_new(o, "target", json_string(target));
    bad |= set_new(o, "client", json_string("h2bench"));
    bad |= set_new(o, "connections", json_integer(cfg->connections));
    bad |= set_new(o, "streams_requested", json_integer(cfg->streams));
    bad |= set_new(o, "streams_effective",
                   s->conns_ok ? json_integer(s->streams_effective) : json_null());
    bad |= set_new(o, "repeat", json_integer(0));
    bad |= set_new(o, "requests", json_integer((json_int_t)ended));
    bad |= set_new(o, "succeeded", json_integer((json_int_t)s->succeeded));
    bad |= set_new(o, "failed", json_integer((json_int_t)s->failed));
    bad |= set_new(o, "errors", json_integer((json_int_t)s->errored));
    bad |= set_new(o, "duration_s", json_real(secs));
    bad |= set_new(o, "req_per_s", json_real(secs > 0 ? (double)s->done / secs : 0));
    bad |= set_new(o, "bytes_per_s", json_real(secs > 0 ? (double)s->bytes_total / secs : 0));
    bad |= set_new(o, "latency_ns", latency_obj(s->latency));
    bad |= set_new(o, "client_cpu_s", json_real(cpu));
    bad |= set_new(o, "server_cpu_s", json_null());
    bad |= set_new(o, "server_rss_kib", json_null());
    bad |= set_new(o, "note",
                   json_string(s->conns_ok
                                   ? "server_cpu_s, server_rss_kib: not measured by h2bench load "
                                     "(the server is not its child)"
                                   : "server_cpu_s, server_rss_kib: not measured by h2bench load; "
                                     "streams_effective: no connection received the server's "
                                     "SETTINGS"));
    /* what h2bench load adds */
    bad |= set_new(o, "goodput_per_s", json_real(secs > 0 ? (double)s->succeeded / secs : 0));
    bad |= set_new(o, "wall_s", json_real((double)res->wall_ns / 1e9));
    bad |= set_new(o, "started", json_integer((json_int_t)s->started));
    bad |= set_new(o, "done", json_integer((json_int_t)s->done));
    bad |= set_new(o, "timeouts", json_integer((json_int_t)s->timeouts));
    bad |= set_new(o, "resets", json_integer((json_int_t)s->resets));
    bad |= set_new(o, "protocol_errors", json_integer((json_int_t)s->protocol_errors));
    bad |= set_new(o, "not_sent", json_integer((json_int_t)s->not_sent));
    bad |= set_new(o, "unfinished", json_integer((json_int_t)s->unfinished));
    bad |= set_new(o, "unsent", json_integer((json_int_t)s->unsent));
    bad |= set_new(o, "interrupted", json_boolean(res->interrupted));
    bad |= set_new(o, "status_codes", codes);
    bad |= set_new(o, "traffic",
                   json_pack("{s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)s->bytes_total,
                             "headers", (json_int_t)s->bytes_headers, "headers_decompressed",
                             (json_int_t)s->bytes_headers_decomp, "data", (json_int_t)s->bytes_data,
                             "sent", (json_int_t)s->bytes_sent));
    bad |= set_new(o, "service_ns", latency_obj(s->service));
    bad |= set_new(o, "ttfb_ns", latency_obj(s->ttfb));
    bad |= set_new(o, "connect_ns", latency_obj(s->connect));
    bad |= set_new(o, "tls_handshake_ns", latency_obj(s->tls));
    bad |= set_new(o, "client_cpu_user_s", json_real((double)res->cpu_user_ns / 1e9));
    bad |= set_new(o, "client_cpu_sys_s", json_real((double)res->cpu_sys_ns / 1e9));
    bad |= set_new(o, "protocol", json_string(res->alpn));
    bad |= set_new(o, "server_max_concurrent_streams",
                   s->conns_ok ? json_integer(s->server_max_streams) : json_null());
    bad |= set_new(o, "connections_up", json_integer((json_int_t)s->conns_ok));
    bad |= set_new(o, "connections_failed", json_integer((json_int_t)s->conns_failed));
    bad |= set_new(o, "reconnects", json_integer((json_int_t)s->reconnects));
    if (cfg->rate > 0)
        bad |= set_new(o, "open_loop",
                       json_pack("{s:f, s:s, s:I, s:f, s:I}", "target_per_s", cfg->rate, "arrival",
                                 h2b_arrival_kind_name(cfg->arrival), "seed", (json_int_t)cfg->seed,
                                 "achieved_per_s", secs > 0 ? (double)s->started / secs : 0.0,
                                 "max_release_lag_ns", (json_int_t)s->sched_lag_max_ns));
    else
        bad |= set_new(o, "open_loop", json_null());
    bad |= set_new(o, "config", config_obj(cfg));
    bad |= set_new(o, "histograms", hists);
    bad |= set_new(o, "tool",
                   json_pack("{s:s, s:s, s:s}", "name", "h2bench", "version", h2b_version(),
                             "git_commit", h2b_version_git_commit()));
    bad |= set_new(o, "env", env);
    if (bad) {
        json_decref(o);
        return H2B_ERR_NOMEM;
    }
    *out = o;
    return H2B_OK;
}
