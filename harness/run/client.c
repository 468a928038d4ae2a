/*
 * client.c - client command lines and the parsers for what clients print.
 *
 * h2load 1.52 prints min/max/mean/sd of request time but no percentiles, so with the h2load
 * client the percentiles are null with a note unless the scenario asks for its --log-file
 * (client.latency_log), which costs h2load one write per request but gives every sample; we
 * fold those into the core histogram. The text parser keys on line prefixes, not positions, so
 * the "progress" and "spawning thread" chatter around the block does not matter.
 *
 * A shaped cell's --interval-json is read with load's own interval parser (the one `h2bench
 * merge` uses), so the two cannot disagree about a line, and cut to what a cell keeps; its
 * boundaries come from the shape parsed as the client parses it (load/shape.h).
 */
#include "run/client.h"

#include "core/array.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/results.h"
#include "load/load.h"
#include "load/shape.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "460.28ms" -> ns; units us, ms, s (h2load's util::format_duration). */
static int parse_time_ns(const char *s, char **end, double *out)
{
    double v = strtod(s, end);
    if (*end == s)
        return H2B_ERR_PARSE;
    if (strncmp(*end, "us", 2) == 0) {
        v *= 1e3;
        *end += 2;
    } else if (strncmp(*end, "ms", 2) == 0) {
        v *= 1e6;
        *end += 2;
    } else if (**end == 's') {
        v *= 1e9;
        *end += 1;
    } else {
        return H2B_ERR_PARSE;
    }
    *out = v;
    return H2B_OK;
}

static const char *find_line(const char *text, const char *prefix)
{
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, prefix, len) == 0)
            return p + len;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

/* Reads "N word" pairs of the requests line: "200 total, 200 started, ..." */
static int field_before(const char *line, const char *word, uint64_t *out)
{
    char key[32];
    snprintf(key, sizeof(key), " %s", word);
    const char *end = strchr(line, '\n');
    const char *hit = strstr(line, key);
    if (!hit || (end && hit > end))
        return H2B_ERR_PARSE;
    const char *num = hit;
    while (num > line && num[-1] >= '0' && num[-1] <= '9')
        num--;
    if (num == hit)
        return H2B_ERR_PARSE;
    *out = strtoull(num, NULL, 10);
    return H2B_OK;
}

int h2b_client_parse_h2load(const char *text, struct h2b_cell_metrics *m)
{
    memset(m, 0, sizeof(*m));
    const char *fin = find_line(text, "finished in ");
    const char *req = find_line(text, "requests: ");
    if (!fin || !req)
        return H2B_ERR_PARSE;
    char *end;
    double dur_ns;
    if (parse_time_ns(fin, &end, &dur_ns) || strncmp(end, ", ", 2) != 0)
        return H2B_ERR_PARSE;
    m->duration_s = dur_ns / 1e9;
    const char *rps = end + 2;
    m->req_per_s = strtod(rps, &end);
    if (end == rps || strncmp(end, " req/s", 6) != 0)
        return H2B_ERR_PARSE;

    uint64_t done = 0, errored = 0;
    if (field_before(req, "total", &m->requests) || field_before(req, "done", &done) ||
        field_before(req, "succeeded", &m->succeeded) || field_before(req, "failed", &m->failed) ||
        field_before(req, "errored", &errored))
        return H2B_ERR_PARSE;
    m->errors = errored;
    (void)done;

    /* traffic: 8.01MB (8401310) total, ... - the exact byte count is in parentheses. */
    const char *traffic = find_line(text, "traffic: ");
    if (traffic) {
        const char *paren = strchr(traffic, '(');
        const char *eol = strchr(traffic, '\n');
        if (paren && (!eol || paren < eol) && m->duration_s > 0)
            m->bytes_per_s = strtod(paren + 1, NULL) / m->duration_s;
    }

    const char *lat = find_line(text, "time for request:");
    if (lat) {
        double v[3];
        const char *p = lat;
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++) {
            while (*p == ' ')
                p++;
            ok = parse_time_ns(p, &end, &v[i]) == H2B_OK;
            p = end;
        }
        if (ok && m->succeeded > 0) {
            m->have_latency = true;
            m->lat_min_ns = (uint64_t)v[0];
            m->lat_max_ns = (uint64_t)v[1];
            m->lat_mean_ns = v[2];
        }
    }
    /* "TLS Protocol: TLSv1.3" and "Cipher: TLS_AES_128_GCM_SHA256" after the first handshake */
    m->tls_records_per_response = NAN;
    const char *tp = find_line(text, "TLS Protocol: "), *ci = find_line(text, "Cipher: ");
    if (tp && ci) {
        tp += strlen("TLS Protocol: ");
        ci += strlen("Cipher: ");
        snprintf(m->tls_version, sizeof(m->tls_version), "%.*s", (int)strcspn(tp, "\r\n"), tp);
        snprintf(m->tls_cipher, sizeof(m->tls_cipher), "%.*s", (int)strcspn(ci, "\r\n"), ci);
    }
    snprintf(m->note, sizeof(m->note), "%s",
             m->tls_version[0] ? "h2load 1.52 prints no latency percentiles (client.latency_log "
                                 "gives them); tls_records_per_response: h2load counts no TLS "
                                 "records"
                               : "h2load 1.52 prints no latency percentiles (client.latency_log "
                                 "gives them)");
    return H2B_OK;
}

int h2b_client_read_h2load_log(const char *path, struct h2b_cell_metrics *m)
{
    struct h2b_hist *h = NULL;
    int rc = h2b_hist_new_default(&h);
    if (rc)
        return rc;
    FILE *f = fopen(path, "r");
    if (!f) {
        h2b_hist_del(h);
        return H2B_ERR_IO;
    }
    char line[256];
    rc = H2B_OK;
    while (fgets(line, sizeof(line), f)) {
        char *end;
        errno = 0;
        (void)strtoull(line, &end, 10);
        if (*end != '\t') {
            rc = H2B_ERR_PARSE;
            break;
        }
        long status = strtol(end + 1, &end, 10);
        if (*end != '\t') {
            rc = H2B_ERR_PARSE;
            break;
        }
        uint64_t us = strtoull(end + 1, &end, 10);
        if (*end != '\n' && *end != '\0') {
            rc = H2B_ERR_PARSE;
            break;
        }
        /* status -1: the request failed before a response; it has no meaningful duration. */
        if (status > 0)
            h2b_hist_record(h, us * 1000);
    }
    fclose(f);
    if (rc == H2B_OK && h->total > 0) {
        m->have_latency = true;
        m->have_percentiles = true;
        m->lat_min_ns = h->min;
        m->lat_p50_ns = h2b_hist_percentile(h, 50);
        m->lat_p90_ns = h2b_hist_percentile(h, 90);
        m->lat_p99_ns = h2b_hist_percentile(h, 99);
        m->lat_p999_ns = h2b_hist_percentile(h, 99.9);
        m->lat_max_ns = h->max;
        m->lat_mean_ns = h2b_hist_mean(h);
        free(m->histogram);
        m->histogram = NULL;
        rc = h2b_hist_encode(h, &m->histogram);
        snprintf(m->note, sizeof(m->note),
                 "latency from h2load --log-file (microsecond resolution, successful requests)");
    }
    h2b_hist_del(h);
    return rc;
}

/* The latency summary of a load document (or a search step) into m. */
static void latency_of(struct h2b_cell_metrics *m, const struct h2b_results_latency *lat)
{
    if (lat->base.present && !isnan(lat->min) && !isnan(lat->max)) {
        m->have_latency = true;
        m->lat_min_ns = (uint64_t)lat->min;
        m->lat_max_ns = (uint64_t)lat->max;
        m->lat_mean_ns = isnan(lat->mean) ? 0 : lat->mean;
        m->have_percentiles =
            !isnan(lat->p50) && !isnan(lat->p90) && !isnan(lat->p99) && !isnan(lat->p999);
        if (m->have_percentiles) {
            m->lat_p50_ns = (uint64_t)lat->p50;
            m->lat_p90_ns = (uint64_t)lat->p90;
            m->lat_p99_ns = (uint64_t)lat->p99;
            m->lat_p999_ns = (uint64_t)lat->p999;
        }
    }
}

int h2b_client_from_json(const json_t *obj, struct h2b_cell_metrics *m)
{
    struct h2b_results_load l;
    struct h2b_diag d;
    memset(m, 0, sizeof(*m));
    int rc = h2b_results_load_from_json(obj, NULL, &l, &d);
    if (rc != H2B_OK)
        return rc == H2B_ERR_NOMEM ? rc : H2B_ERR_PARSE;
    const struct h2b_results_cell *c = &l.cell;
    const struct h2b_results_latency *lat = &c->latency_ns;
    rc = H2B_ERR_PARSE;
    if (isnan(c->requests) || isnan(c->succeeded) || isnan(c->failed) || isnan(c->errors) ||
        isnan(c->duration_s) || isnan(c->req_per_s))
        goto out;
    m->requests = (uint64_t)c->requests;
    m->succeeded = (uint64_t)c->succeeded;
    m->failed = (uint64_t)c->failed;
    m->errors = (uint64_t)c->errors;
    m->duration_s = c->duration_s;
    m->req_per_s = c->req_per_s;
    m->bytes_per_s = isnan(c->bytes_per_s) ? 0 : c->bytes_per_s;
    if (c->streams_effective <= UINT32_MAX)
        m->client_streams = (uint32_t)c->streams_effective; /* NAN compares false: 0 */
    m->tls_records_per_response = c->tls_records_per_response;
    if (c->tls_version)
        snprintf(m->tls_version, sizeof(m->tls_version), "%s", c->tls_version);
    if (c->tls_cipher)
        snprintf(m->tls_cipher, sizeof(m->tls_cipher), "%s", c->tls_cipher);
    latency_of(m, lat);
    /* h2bench load keeps its encoded histograms apart; "latency" is the one the percentiles
     * above come from. */
    rc = H2B_OK;
    if (l.histograms.latency && !(m->histogram = strdup(l.histograms.latency)))
        rc = H2B_ERR_NOMEM;
    m->slo = l.cell.slo; /* the verdicts move to m */
    l.cell.slo = (struct h2b_model_array){0};
out:
    h2b_results_load_free(&l);
    return rc;
}

int h2b_client_from_search_json(const json_t *obj, struct h2b_cell_metrics *m)
{
    struct h2b_diag d;
    memset(m, 0, sizeof(*m));
    int rc = h2b_model_from_json(&h2b_results_search_model, obj, NULL, "", 0, &m->search, &d);
    if (rc != H2B_OK)
        return rc == H2B_ERR_NOMEM ? rc : H2B_ERR_PARSE;
    m->search.base.present = true;
    const struct h2b_results_search_step *st =
        m->search.last_pass.base.present ? &m->search.last_pass : &m->search.first_fail;
    if (!st->base.present || isnan(st->ended) || isnan(st->errors) || st->errors > st->ended) {
        h2b_client_metrics_free(m);
        return H2B_ERR_PARSE;
    }
    m->requests = (uint64_t)st->ended;
    m->succeeded = (uint64_t)(st->ended - st->errors);
    m->failed = m->errors = (uint64_t)st->errors;
    m->duration_s = isnan(m->search.step_s) ? 0 : m->search.step_s;
    m->req_per_s = isnan(st->achieved_per_s) ? 0 : st->achieved_per_s;
    const struct h2b_results_latency *lat = &st->latency_ns;
    latency_of(m, lat);
    snprintf(m->note, sizeof(m->note),
             "find_max cell: requests, req_per_s and latency_ns are the %s step's (%.1f req/s "
             "offered), bytes_per_s is not measured per step",
             st == &m->search.last_pass ? "last passing" : "first failing (none passed)",
             st->rate_per_s);
    return H2B_OK;
}

int h2b_client_read_intervals(const char *path, struct h2b_cell_metrics *m, struct h2b_diag *d)
{
    struct h2b_results_interval *rows = NULL;
    size_t n = 0;
    int rc = h2b_load_intervals_read(path, &rows, &n, d);
    if (rc != H2B_OK)
        return rc;
    if (n > H2B_RESULTS_MAX_INTERVALS) {
        h2b_diag_at(d, path, 0, 0, "%zu intervals: a cell keeps at most %d", n,
                    H2B_RESULTS_MAX_INTERVALS);
        h2b_load_intervals_free(rows, n);
        return H2B_ERR_PARSE;
    }
    struct h2b_model_array out = {0};
    for (size_t i = 0; i < n && rc == H2B_OK; i++) {
        struct h2b_results_cell_interval *e;
        rc = h2b_model_array_push(&h2b_results_cell_interval_model, &out, (void **)&e);
        if (rc != H2B_OK)
            break;
        const struct h2b_results_interval *r = &rows[i];
        e->start_s = r->start_s;
        e->end_s = r->end_s;
        e->offered_per_s = r->offered_per_s;
        e->achieved_per_s = r->achieved_per_s;
        e->errors = r->errors;
        /* percentiles of an interval in which nothing ended are null */
        bool lat = r->latency_ns.base.present && r->ended > 0;
        e->p50_ns = lat ? r->latency_ns.p50 : NAN;
        e->p99_ns = lat ? r->latency_ns.p99 : NAN;
    }
    h2b_load_intervals_free(rows, n);
    if (rc != H2B_OK) {
        h2b_model_array_free(&h2b_results_cell_interval_model, &out);
        h2b_diag_at(d, NULL, 0, 0, "out of memory");
        return rc;
    }
    h2b_model_array_free(&h2b_results_cell_interval_model, &m->intervals);
    m->intervals = out;
    return H2B_OK;
}

int h2b_client_shape_bounds(const struct h2b_matrix_spec *m, double duration_s,
                            struct h2b_model_nums *out)
{
    struct h2b_shape shape = {0};
    struct h2b_diag d;
    double warmup_s = 0;
    int rc = H2B_ERR_INVAL;
    if (m->stages) {
        rc = h2b_shape_parse_stages(&shape, m->stages, m->rate, &d);
    } else if (m->step) {
        double rate, step;
        uint64_t dur_ns;
        warmup_s = m->warmup_s > 0 ? m->warmup_s : 0;
        rc = h2b_shape_parse_step(m->step, &rate, &step, &dur_ns, &d);
        if (rc == H2B_OK)
            rc = h2b_shape_steps(&shape, rate, step, dur_ns,
                                 (uint64_t)((warmup_s + duration_s) * 1e9 + 0.5));
    }
    if (rc != H2B_OK)
        return rc == H2B_ERR_NOMEM ? rc : H2B_ERR_INVAL;
    double *v = shape.nseg ? malloc(shape.nseg * sizeof(*v)) : NULL;
    size_t n = 0;
    if (shape.nseg && !v) {
        h2b_shape_free(&shape);
        return H2B_ERR_NOMEM;
    }
    /* a boundary is where a segment ends inside the measurement (not at its end) */
    double end_s = m->stages ? (double)shape.total_ns / 1e9 : duration_s;
    for (size_t i = 0; i < shape.nseg; i++) {
        double t = (double)(shape.seg[i].start_ns + shape.seg[i].len_ns) / 1e9 - warmup_s;
        if (t > 0 && t < end_s - 1e-9 && (n == 0 || t > v[n - 1]))
            v[n++] = t;
    }
    h2b_shape_free(&shape);
    rc = h2b_model_set_nums(out, v, n);
    free(v);
    return rc;
}

int h2b_client_parse_perf_stat(const char *text, uint64_t *instructions)
{
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (*line == '#' || *line == '\n')
            continue;
        const char *event = strchr(line, ',');
        const char *eol = strchr(line, '\n');
        if (!event || (eol && event > eol))
            continue;
        event = strchr(event + 1, ',');
        if (!event || (eol && event > eol) || strncmp(event + 1, "instructions", 12) != 0)
            continue;
        if (line[0] == '<')
            return H2B_ERR_UNSUPPORTED;
        char *end;
        uint64_t v = strtoull(line, &end, 10);
        if (end == line || *end != ',')
            return H2B_ERR_PARSE;
        *instructions = v;
        return H2B_OK;
    }
    return H2B_ERR_PARSE;
}

void h2b_client_metrics_free(struct h2b_cell_metrics *m)
{
    free(m->histogram);
    m->histogram = NULL;
    h2b_model_array_free(&h2b_results_slo_model, &m->slo);
    h2b_model_free(&h2b_results_search_model, &m->search); /* a zeroed one owns nothing */
    memset(&m->search, 0, sizeof(m->search));
    h2b_model_array_free(&h2b_results_cell_interval_model, &m->intervals);
    free(m->shape_bounds_s.v);
    m->shape_bounds_s = (struct h2b_model_nums){0};
}

void h2b_client_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

struct argv_builder {
    char **v;
    size_t n, cap;
    int rc;
};

static void add(struct argv_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct argv_builder *b, const char *fmt, ...)
{
    if (b->rc)
        return;
    if (b->n + 2 > b->cap) {
        char **v = h2b_array_grow(b->v, &b->cap, b->n + 2, sizeof(*v), 32);
        if (!v) {
            b->rc = H2B_ERR_NOMEM;
            return;
        }
        b->v = v;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s) {
        b->rc = H2B_ERR_NOMEM;
        return;
    }
    b->v[b->n++] = s;
    b->v[b->n] = NULL;
}

int h2b_client_argv(const struct h2b_scenario *s, const struct h2b_cell *cell,
                    const struct h2b_client_call *call, char ***argv)
{
    const struct h2b_matrix_spec *m = &s->matrix;
    const struct h2b_client_spec *cl = &s->client;
    struct argv_builder b = {0};
    bool h2load = cl->kind == H2B_CLIENT_H2LOAD;
    if (cl->mpi.np) {
        /* One MPI job: the launcher, its ranks, then h2bench load --mpi with job totals. */
        if (cl->mpi.mpirun) {
            for (size_t i = 0; i < cl->mpi.nmpirun; i++)
                add(&b, "%s", cl->mpi.mpirun[i]);
        } else {
            add(&b, "mpirun");
            add(&b, "--bind-to"); /* keep the client's CPU list: no binding of Open MPI's own */
            add(&b, "none");
            if (geteuid() == 0)
                add(&b, "--allow-run-as-root");
        }
        add(&b, "-np");
        add(&b, "%u", cl->mpi.np);
        if (cl->mpi.hostfile) {
            add(&b, "--hostfile");
            add(&b, "%s", cl->mpi.hostfile);
        }
    }
    add(&b, "%s", call->program);
    if (!h2load)
        add(&b, "load");
    if (cl->mpi.np)
        add(&b, "--mpi");
    if (cell->protocol == H2B_PROTO_H1)
        add(&b, "--h1");
    else if (cell->protocol == H2B_PROTO_H3)
        add(&b, "--h3");
    const struct h2b_target_spec *t = cell->target < s->ntargets ? &s->targets[cell->target] : NULL;
    if (t && t->kind == H2B_TARGET_FLOOR)
        add(&b, "--raw=%u:%u", t->floor_request, t->floor_response); /* no HTTP: raw TCP */
    add(&b, "-c");
    add(&b, "%u", cell->connections);
    add(&b, "-m");
    add(&b, "%u", cell->streams_effective);
    uint32_t threads = cl->threads < cell->connections ? cl->threads : cell->connections;
    if (cl->mpi.np && threads < cl->mpi.np)
        threads = cl->mpi.np; /* -t is the job's total: at least one per rank */
    add(&b, "-t");
    add(&b, "%u", threads);
    if (m->find_max.enabled) {
        /* the search sets each step's rate and length: no -D, -n or --total-rps */
        add(&b, "--find-max");
        add(&b, "--slo=%s", m->slo);
        const struct h2b_find_max_spec *f = &m->find_max;
        if (!isnan(f->step_s))
            add(&b, "--find-max-step=%.0fms", f->step_s * 1000);
        if (!isnan(f->warmup_s))
            add(&b, "--find-max-warm-up=%.0fms", f->warmup_s * 1000);
        if (!isnan(f->start))
            add(&b, "--find-max-start=%.17g", f->start);
        if (!isnan(f->limit))
            add(&b, "--find-max-limit=%.17g", f->limit);
        if (!isnan(f->precision_pct))
            add(&b, "--find-max-precision=%.17g", f->precision_pct);
        if (f->retries >= 0)
            add(&b, "--find-max-retries=%d", f->retries);
    } else if (m->stages) {
        /* the stages set the run's length */
    } else if (m->duration_s > 0) {
        add(&b, "-D");
        add(&b, "%.0fms", (call->duration_s > 0 ? call->duration_s : m->duration_s) * 1000);
        if (m->warmup_s > 0)
            add(&b, "--warm-up-time=%.0fms", m->warmup_s * 1000);
    } else {
        add(&b, "-n");
        add(&b, "%llu", (unsigned long long)m->requests);
    }
    const char *slo = h2b_expand_cell_slo(s, cell);
    if (!m->find_max.enabled && slo) {
        add(&b, "--slo=%s", slo);
        if (m->slo_window_s > 0)
            add(&b, "--slo-window=%.0fms", m->slo_window_s * 1000);
    }
    if (m->stages)
        add(&b, "--stages=%s", m->stages);
    else if (m->step)
        add(&b, "--step=%s", m->step);
    if (m->rate > 0 && !m->find_max.enabled) {
        /* open loop at a fixed offered load: h2bench's total rate (CO-free); h2load only has a
         * per-client rate (--rps), so the total is split over the connections */
        add(&b, "%s", h2load ? "--rps" : "--total-rps");
        add(&b, "%.6g", h2load ? m->rate / cell->connections : m->rate);
    }
    if (cell->frame_size) {
        add(&b, "-f");
        add(&b, "%u", cell->frame_size);
    }
    if (cell->window_bits) {
        add(&b, "-w");
        add(&b, "%u", cell->window_bits);
        add(&b, "-W");
        add(&b, "%u", cell->window_bits);
    }
    if (m->grpc_method) {
        add(&b, "--grpc=%s", m->grpc_method);
        add(&b, "--grpc-size=%llu", (unsigned long long)m->grpc_size);
        add(&b, "--grpc-messages=%u", m->grpc_messages);
    }
    if (call->body_file) {
        add(&b, "-d");
        add(&b, "%s", call->body_file);
    }
    if (h2load && call->log_file)
        add(&b, "--log-file=%s", call->log_file);
    if (!h2load && call->json_out) {
        add(&b, "--json");
        add(&b, "%s", call->json_out);
    }
    if (!h2load && call->interval_json)
        add(&b, "--interval-json=%s", call->interval_json);
    for (size_t i = 0; i < cl->nargs; i++)
        add(&b, "%s", cl->args[i]);
    add(&b, "%s", call->url);
    if (b.rc) {
        h2b_client_argv_free(b.v);
        return b.rc;
    }
    *argv = b.v;
    return H2B_OK;
}

void h2b_client_mpirun_message(const char *text, char *buf, size_t size)
{
    /* h2bench's own last word wins ("h2bench load: 1 of 2 ranks failed"). Otherwise Open MPI
     * frames its errors between lines of dashes: the first framed block says what went wrong
     * ("Open RTE was unable to open the hostfile: …"), the rest is follow-up. */
    buf[0] = '\0';
    const char *own = NULL;
    for (const char *p = text; p && *p;) {
        if (strncmp(p, "h2bench ", 8) == 0)
            own = p;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (own) {
        snprintf(buf, size, "%.*s", (int)strcspn(own, "\n"), own);
        return;
    }
    size_t off = 0;
    bool in_block = false, done = false;
    for (const char *p = text; p && *p && !done;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        bool dashes = len >= 10 && strspn(p, "-") >= 10;
        if (dashes) {
            if (in_block && off > 0)
                done = true;
            in_block = !in_block;
        } else if (in_block || !strstr(text, "-----")) {
            size_t lead = strspn(p, " \t");
            if (len > lead && off + 1 < size) {
                int n = snprintf(buf + off, size - off, "%s%.*s", off ? " " : "", (int)(len - lead),
                                 p + lead);
                off = n > 0 && (size_t)n < size - off ? off + (size_t)n : size - 1;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
}
