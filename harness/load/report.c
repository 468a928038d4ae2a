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
#include "load/engine.h"
#include "core/env.h"
#include "core/error.h"
#include "load/load.h"
#include "load/slo.h"
#include "core/results.h"
#include "core/version.h"

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

/* --grpc: "grpc-status codes: 0 OK 998, 4 DEADLINE_EXCEEDED 2", and the length and content
 * checks. */
static void grpc_text(FILE *f, const struct h2b_load_config *cfg, const struct h2b_load_stats *s)
{
    fprintf(f, "grpc-status codes:");
    const char *sep = " ";
    for (unsigned i = 0; i < H2B_LOAD_GRPC_COUNTS; i++)
        if (s->grpc_status[i]) {
            if (i < H2B_LOAD_GRPC_OTHER)
                fprintf(f, "%s%u %s %" PRIu64, sep, i, h2b_load_grpc_code_name(i),
                        s->grpc_status[i]);
            else
                fprintf(f, "%s%s %" PRIu64, sep, h2b_load_grpc_code_name(i), s->grpc_status[i]);
            sep = ", ";
        }
    fprintf(f, "%s; %s %u message(s) per call", *sep == ' ' ? " none" : "", cfg->grpc_method,
            cfg->grpc_messages);
    if (cfg->grpc_expect >= 0)
        fprintf(f, "; response length checked (%" PRId64 " bytes): %" PRIu64 " mismatched",
                cfg->grpc_expect, s->grpc_mismatch);
    if (cfg->grpc_reply.unit)
        fprintf(f, "; content checked: %" PRIu64 " mismatched", s->grpc_wrong);
    fprintf(f, "\n");
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
    if (h->total == 0) { /* no request ended: no percentile, never a "0us" */
        fprintf(f, "%s: n/a (0 requests, %s)\n", label, what);
        return;
    }
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

/* --conn-stages: the connections open at each interval's end (the first CONN_ROW_MAX). */
#define CONN_ROW_MAX 30
static void conn_ramp_row(FILE *f, const struct h2b_load_config *cfg,
                          const struct h2b_load_result *res)
{
    fprintf(f, "connection ramp: %s; open at each %.3gs interval's end:", cfg->conn_shape_text,
            (double)cfg->interval_ns / 1e9);
    for (size_t i = 0; i < res->nintervals && i < CONN_ROW_MAX; i++)
        fprintf(f, " %.0f", res->intervals[i].connections);
    if (res->nintervals > CONN_ROW_MAX)
        fprintf(f, " ... (%zu intervals; --interval-json has them all)", res->nintervals);
    fprintf(f, "\n");
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
    bool open_loop = cfg->rate > 0 || cfg->rps > 0 || cfg->nscript > 0;
    percentiles(f, "latency", s->latency,
                open_loop ? "from intended send time, failed included"
                          : "from submission, failed included");
    percentiles(f, "service", s->service, "from HEADERS sent: the actual-send-time view");
    percentiles(f, "ttfb", s->ttfb, "per request, from HEADERS sent");
    fprintf(f, "goodput: %.2f req/s (%s); status:", secs > 0 ? (double)s->succeeded / secs : 0,
            cfg->grpc_method ? "grpc-status 0" : "2xx/3xx");
    int shown = 0;
    for (int code = 0; code < H2B_LOAD_STATUS_MAX; code++)
        if (s->status[code]) {
            fprintf(f, " %d x%" PRIu64, code, s->status[code]);
            shown++;
        }
    if (s->status_other)
        fprintf(f, " other x%" PRIu64, s->status_other);
    fprintf(f, "%s\n", shown || s->status_other ? "" : " none");
    if (cfg->grpc_method)
        grpc_text(f, cfg, s);
    fprintf(f,
            "errors: %" PRIu64 " reset, %" PRIu64 " timed out, %" PRIu64 " protocol error, %" PRIu64
            " connection lost or not sent (%" PRIu64 " not sent); %" PRIu64
            " unfinished at the end\n",
            s->resets, s->timeouts, s->protocol_errors,
            s->errored - s->resets - s->timeouts - s->protocol_errors, s->not_sent, s->unfinished);
    char server_max[64];
    if (strcmp(res->alpn, "http/1.1") == 0) /* no SETTINGS in HTTP/1.1 */
        snprintf(server_max, sizeof(server_max), "HTTP/1.1: one request at a time per connection");
    else if (s->conns_ok == 0)
        snprintf(server_max, sizeof(server_max), "none: no SETTINGS received");
    else if (s->server_max_streams == UINT32_MAX)
        snprintf(server_max, sizeof(server_max), "not advertised, unlimited");
    else
        snprintf(server_max, sizeof(server_max), "%u", s->server_max_streams);
    fprintf(f,
            "connections: %u, %" PRIu64 " up, %" PRIu64 " failed, %" PRIu64
            " reconnects; streams per connection: requested %u, effective %u (%s%s); %s\n",
            cfg->connections, s->conns_ok, s->conns_failed, s->reconnects, cfg->streams,
            s->streams_effective,
            strcmp(res->alpn, "http/1.1") == 0 ? "" : "server SETTINGS_MAX_CONCURRENT_STREAMS ",
            server_max, res->alpn);
    if (cfg->conn_shape.nseg)
        conn_ramp_row(f, cfg, res);
    if (strcmp(res->engine, "fast") == 0 || strcmp(res->engine, "nghttp2") == 0)
        fprintf(f, "engine: %s; %" PRIu64 " connection(s) ended for HTTP/2 protocol errors\n",
                res->engine, s->conn_errors);
    if (s->tls->total) {
        fmt_ns(b1, sizeof(b1), h2b_hist_percentile(s->connect, 50));
        fmt_ns(b2, sizeof(b2), h2b_hist_percentile(s->tls, 50));
        fmt_ns(b3, sizeof(b3), s->tls->max);
        fprintf(
            f, "tls: handshake p50 %s, max %s (%" PRIu64 " handshakes); connect incl. TLS p50 %s\n",
            b2, b3, s->tls->total, b1);
    }
    if (s->tls_version)
        fprintf(f,
                "tls: %s %s; %.2f records per response (%" PRIu64
                " application data records, %" PRIu64 " responses, warm-up included)\n",
                h2b__load_tls_name(s->tls_version), s->tls_cipher ? s->tls_cipher : "?",
                s->tls_responses ? (double)s->tls_records / (double)s->tls_responses : 0.0,
                s->tls_records, s->tls_responses);
    if (cfg->rps > 0 || cfg->nscript > 0) {
        char target[96];
        if (cfg->rps > 0)
            snprintf(target, sizeof(target), "target %.2f req/s (--rps %.2f per client x %u)",
                     cfg->rps * cfg->connections, cfg->rps, cfg->connections);
        else
            snprintf(target, sizeof(target), "timing script of %zu lines per client", cfg->nscript);
        fprintf(f,
                "rate: %s, achieved %.2f req/s; %" PRIu64
                " intended but never sent (backlog at the end)\n",
                target, secs > 0 ? (double)s->started / secs : 0.0, s->unsent);
    } else if (open_loop) {
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

void h2b_load_latency_of(struct h2b_results_latency *l, const struct h2b_hist *h)
{
    if (h->total == 0)
        return;
    l->base.present = true;
    l->min = (double)h->min;
    l->p50 = (double)h2b_hist_percentile(h, 50);
    l->p90 = (double)h2b_hist_percentile(h, 90);
    l->p99 = (double)h2b_hist_percentile(h, 99);
    l->p999 = (double)h2b_hist_percentile(h, 99.9);
    l->p9999 = (double)h2b_hist_percentile(h, 99.99);
    l->max = (double)h->max;
    l->mean = h2b_hist_mean(h);
    l->count = (double)h->total;
}

static int hist_text(char **member, const struct h2b_hist *h)
{
    char *enc;
    if (h2b_hist_encode(h, &enc) != H2B_OK)
        return H2B_ERR_NOMEM;
    int rv = h2b_model_set_string(member, enc);
    free(enc);
    return rv;
}

static int config_of(struct h2b_results_load_config *c, const struct h2b_load_config *cfg)
{
    int bad = !(c->uris = json_array());
    c->base.present = c->options.base.present = true;
    for (size_t i = 0; !bad && i < cfg->nuris; i++) {
        const struct h2b_load_uri *u = &cfg->uris[i];
        size_t n = strlen(u->scheme) + strlen(u->authority) + strlen(u->path) + 4;
        char *s = malloc(n);
        if (!s)
            return H2B_ERR_NOMEM;
        snprintf(s, n, "%s://%s%s", u->scheme, u->authority, u->path);
        bad |= json_array_append_new(c->uris, json_string(s));
        free(s);
    }
    c->headers.v = malloc(1);
    bad |= !c->headers.v;
    for (size_t i = 0; !bad && i < cfg->nheaders; i++) {
        struct h2b_results_header *h;
        bad |= h2b_model_array_push(&h2b_results_header_model, &c->headers, (void **)&h) != 0;
        if (!bad) {
            bad |= h2b_model_set_string(&h->name, cfg->headers[i].name);
            bad |= h2b_model_set_string(&h->value, cfg->headers[i].value);
        }
    }
    struct h2b_results_load_options *o = &c->options;
    o->requests = (double)cfg->requests;
    o->connections = cfg->connections;
    o->streams = cfg->streams;
    o->threads = cfg->threads;
    o->duration_s = (double)cfg->duration_ns / 1e9;
    o->warm_up_s = (double)cfg->warmup_ns / 1e9;
    o->coalesce_s = (double)cfg->coalesce_ns / 1e9;
    bad |= h2b_model_set_string(&o->io, cfg->io == H2B_LOAD_IO_URING ? "uring" : "epoll");
    bad |= h2b_model_set_string(&o->data, cfg->data_path);
    o->connection_active_timeout_s = (double)cfg->conn_active_timeout_ns / 1e9;
    o->connection_inactivity_timeout_s = (double)cfg->conn_inactivity_timeout_ns / 1e9;
    o->timeout_s = (double)cfg->timeout_ns / 1e9;
    o->window_bits = cfg->window_bits;
    o->connection_window_bits = cfg->conn_window_bits;
    o->header_table_size = cfg->header_table_size;
    o->rate = cfg->rate;
    bad |= h2b_model_set_string(&o->arrival, h2b_arrival_kind_name(cfg->arrival));
    o->seed = (double)cfg->seed;
    bad |= h2b_model_set_string(&o->cpus, cfg->cpus_text);
    o->fail_on_error = cfg->fail_on_error;
    o->encoder_header_table_size = cfg->encoder_table_size;
    o->max_frame_size = cfg->max_frame_size;
    o->rps = cfg->rps;
    o->connection_rate = cfg->conn_rate;
    o->rate_period_s = (double)cfg->rate_period_ns / 1e9;
    bad |= h2b_model_set_string(&o->timing_script_file, cfg->script_path);
    bad |= h2b_model_set_string(&o->base_uri, cfg->base_uri);
    bad |= h2b_model_set_string(&o->connect_to, cfg->connect_host);
    bad |= h2b_model_set_string(&o->log_file, cfg->log_path);
    o->ktls = cfg->ktls;
    return bad ? H2B_ERR_NOMEM : H2B_OK;
}

/* --grpc's JSON object: the calls and their statuses (the model's "grpc"). */
static int grpc_json(struct h2b_results_grpc *g, const struct h2b_load_config *cfg,
                     const struct h2b_load_stats *s)
{
    g->base.present = true;
    int bad = h2b_model_set_string(&g->method, cfg->grpc_method);
    g->messages = cfg->grpc_messages;
    if (cfg->grpc_data_path)
        bad |= h2b_model_set_string(&g->data, cfg->grpc_data_path);
    else
        g->size = (double)cfg->grpc_size;
    if (cfg->grpc_expect >= 0)
        g->expect_bytes = (double)cfg->grpc_expect;
    g->length_mismatches = (double)s->grpc_mismatch;
    if (cfg->grpc_reply.unit)
        g->content_mismatches = (double)s->grpc_wrong;
    json_t *codes = json_object();
    bad |= !codes;
    for (unsigned i = 0; !bad && i < H2B_LOAD_GRPC_COUNTS; i++) {
        char k[8];
        if (i < H2B_LOAD_GRPC_OTHER)
            snprintf(k, sizeof k, "%u", i);
        if (s->grpc_status[i])
            bad |=
                json_object_set_new(codes, i < H2B_LOAD_GRPC_OTHER ? k : h2b_load_grpc_code_name(i),
                                    json_integer((json_int_t)s->grpc_status[i]));
    }
    g->status_codes = codes;
    return bad;
}

int h2b_load_report_json(const struct h2b_load_config *cfg, const struct h2b_load_result *res,
                         json_t **out)
{
    const struct h2b_load_stats *s = &res->s;
    double secs = (double)res->measure_ns / 1e9;
    const struct h2b_load_uri *u = &cfg->uris[0];
    char target[1024];
    snprintf(target, sizeof(target), "%s://%s%s", u->scheme, u->authority, u->path);
    struct h2b_results_load l;
    struct h2b_results_cell *c = &l.cell;
    h2b_results_load_init(&l);
    json_t *codes = json_object();
    int bad = !codes;
    for (int code = 0; !bad && code < H2B_LOAD_STATUS_MAX; code++) {
        char k[8];
        snprintf(k, sizeof(k), "%d", code);
        if (s->status[code])
            bad |= json_object_set_new(codes, k, json_integer((json_int_t)s->status[code]));
    }
    if (!bad && s->status_other)
        bad |= json_object_set_new(codes, "other", json_integer((json_int_t)s->status_other));
    l.status_codes = codes;
    l.histograms.base.present = true;
    bad |= hist_text(&l.histograms.latency, s->latency);
    bad |= hist_text(&l.histograms.service, s->service);
    bad |= hist_text(&l.histograms.ttfb, s->ttfb);
    bad |= hist_text(&l.histograms.connect, s->connect);
    bad |= hist_text(&l.histograms.tls_handshake, s->tls);
    if (h2b_env_collect(&l.env) != H2B_OK)
        l.env = json_null();
    uint64_t ended = s->done + s->errored;
    double cpu = (double)(res->cpu_user_ns + res->cpu_sys_ns) / 1e9;
    /* the matrix-cell fields of DESIGN.md */
    bad |= h2b_model_set_string(&l.schema, H2B_RESULTS_LOAD_SCHEMA);
    bad |= h2b_model_set_string(&c->target, target);
    bad |= h2b_model_set_string(&c->client, "h2bench");
    c->connections = cfg->connections;
    c->streams_requested = cfg->streams;
    c->streams_effective = s->conns_ok ? s->streams_effective : NAN;
    c->repeat = 0;
    c->requests = (double)ended;
    c->succeeded = (double)s->succeeded;
    c->failed = (double)s->failed;
    c->errors = (double)s->errored;
    c->duration_s = secs;
    c->req_per_s = secs > 0 ? (double)s->done / secs : 0;
    c->bytes_per_s = secs > 0 ? (double)s->bytes_total / secs : 0;
    h2b_load_latency_of(&c->latency_ns, s->latency);
    c->client_cpu_s = cpu;
    if (s->tls_version) {
        bad |= h2b_model_set_string(&c->tls_version, h2b__load_tls_name(s->tls_version));
        bad |= h2b_model_set_string(&c->tls_cipher, s->tls_cipher);
        c->tls_records_per_response =
            s->tls_responses ? (double)s->tls_records / (double)s->tls_responses : NAN;
    }
    bad |= h2b_model_set_string(
        &c->note, s->conns_ok ? "server_cpu_s, server_rss_kib: not measured by h2bench load "
                                "(the server is not its child)"
                              : "server_cpu_s, server_rss_kib: not measured by h2bench load; "
                                "streams_effective: no connection received the server's "
                                "SETTINGS");
    if (s->tls_version && !s->tls_responses)
        bad |= h2b_model_note_add(&c->note,
                                  H2B_MODEL_KEY(h2b_results_cell_model, struct h2b_results_cell,
                                                tls_records_per_response),
                                  "no whole response arrived over TLS");
    /* what h2bench load adds */
    l.goodput_per_s = secs > 0 ? (double)s->succeeded / secs : 0;
    l.wall_s = (double)res->wall_ns / 1e9;
    l.started = (double)s->started;
    l.done = (double)s->done;
    l.timeouts = (double)s->timeouts;
    l.resets = (double)s->resets;
    l.protocol_errors = (double)s->protocol_errors;
    l.not_sent = (double)s->not_sent;
    l.unfinished = (double)s->unfinished;
    l.unsent = (double)s->unsent;
    l.interrupted = res->interrupted;
    l.ended_early = res->ended_early;
    if (res->ended_early)
        bad |= h2b_model_set_string(&l.ended_early_reason, res->ended_early_reason);
    l.traffic.base.present = true;
    l.traffic.total = (double)s->bytes_total;
    l.traffic.headers = (double)s->bytes_headers;
    l.traffic.headers_decompressed = (double)s->bytes_headers_decomp;
    l.traffic.data = (double)s->bytes_data;
    l.traffic.sent = (double)s->bytes_sent;
    h2b_load_latency_of(&l.service_ns, s->service);
    h2b_load_latency_of(&l.ttfb_ns, s->ttfb);
    h2b_load_latency_of(&l.connect_ns, s->connect);
    h2b_load_latency_of(&l.tls_handshake_ns, s->tls);
    l.client_cpu_user_s = (double)res->cpu_user_ns / 1e9;
    l.client_cpu_sys_s = (double)res->cpu_sys_ns / 1e9;
    bad |= h2b_model_set_string(&l.protocol, res->alpn);
    bad |= h2b_model_set_string(&l.engine, res->engine);
    bad |= h2b_model_set_string(&l.io, res->io[0] ? res->io : NULL);
    bad |= h2b_model_set_string(&l.io_fallback, res->io_fallback[0] ? res->io_fallback : NULL);
    l.connection_errors = (double)s->conn_errors;
    l.server_max_concurrent_streams = s->conns_ok ? s->server_max_streams : NAN;
    l.connections_up = (double)s->conns_ok;
    l.connections_failed = (double)s->conns_failed;
    l.reconnects = (double)s->reconnects;
    if (cfg->rate > 0) {
        l.open_loop.base.present = true;
        l.open_loop.target_per_s = cfg->rate;
        bad |= h2b_model_set_string(&l.open_loop.arrival, h2b_arrival_kind_name(cfg->arrival));
        l.open_loop.seed = (double)cfg->seed;
        l.open_loop.achieved_per_s = secs > 0 ? (double)s->started / secs : 0.0;
        l.open_loop.max_release_lag_ns = (double)s->sched_lag_max_ns;
    }
    for (size_t i = 0; cfg->slo && i < cfg->slo->verdicts.n && !bad; i++) {
        void *e;
        bad |= h2b_model_array_push(&h2b_results_slo_model, &l.cell.slo, &e) != H2B_OK ||
               h2b_model_copy(&h2b_results_slo_model, e,
                              h2b_model_array_at(&h2b_results_slo_model, &cfg->slo->verdicts, i)) !=
                   H2B_OK;
    }
    bad |= config_of(&l.config, cfg) != H2B_OK;
    if (cfg->grpc_method)
        bad |= grpc_json(&l.grpc, cfg, s);
    l.tool.base.present = true;
    bad |= h2b_model_set_string(&l.tool.name, "h2bench");
    bad |= h2b_model_set_string(&l.tool.version, h2b_version());
    bad |= h2b_model_set_string(&l.tool.git_commit, h2b_version_git_commit());
    json_t *o = NULL;
    if (!bad && h2b_results_load_to_json(&l, &o) != H2B_OK)
        bad = 1;
    h2b_results_load_free(&l);
    if (bad)
        return H2B_ERR_NOMEM;
    *out = o;
    return H2B_OK;
}
