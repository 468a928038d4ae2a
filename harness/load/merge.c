/*
 * merge.c - `h2bench merge`: several `h2bench load --json` results of one distributed run (parts
 * that ran side by side, on one or several machines) merged into one result, exactly.
 *
 * Approach: every part is read through the results model (harness/core/results.c), so a bad
 * file is named with file:line:column. Counts add; rates add (the parts ran at the same time,
 * so the job's rate is the sum of theirs); durations take the longest; stream limits the
 * smallest; the five histograms are decoded from their exact encodings and merged bin for bin,
 * and every percentile is read from the merged histogram, never averaged. The configuration,
 * tool and environment are the first part's, with connections, threads and requests summed. The
 * engine is the parts' common one; parts of different engines merge with engine null and a note.
 *
 * Rejected: averaging the parts' percentiles (wrong for any tail), and re-running the report
 * from a reconstructed engine result (it would need the whole engine configuration, which a
 * results file only summarises).
 */
#include "core/array.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hist.h"
#include "core/json.h"
#include "load/load.h"
#include "core/results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static double add(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static double max_of(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

static double min_of(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a < b ? a : b;
}

/* The status codes' key, as the core model spells it (STYLE.md rule 16). */
static const char *codes_key(void)
{
    return H2B_MODEL_KEY(h2b_results_load_model, struct h2b_results_load, status_codes);
}

/* --grpc's counts by grpc-status: "grpc.status_codes" */
static const char *grpc_codes_key(void)
{
    return "grpc.status_codes";
}

static bool http_code(const char *k)
{
    return (strlen(k) == 3 && k[0] >= '1' && k[0] <= '9' && k[1] >= '0' && k[1] <= '9' &&
            k[2] >= '0' && k[2] <= '9') ||
           strcmp(k, "other") == 0;
}

/* A key of grpc.status_codes: 0..16 as the load client writes them, "other" or "missing". */
static bool grpc_code(const char *k)
{
    for (unsigned i = 0; i < H2B_LOAD_GRPC_COUNTS; i++) {
        char n[8];
        snprintf(n, sizeof n, "%u", i);
        if (strcmp(k, i < H2B_LOAD_GRPC_OTHER ? n : h2b_load_grpc_code_name(i)) == 0)
            return true;
    }
    return false;
}

/* status_codes of one part (or grpc.status_codes, grpc true): keys of three digits (or "other",
 * what the load client counts outside 100-599; grpc: 0..16, "other" or "missing"), values
 * non-negative integers. Anything else is an input error. */
static int check_codes(const json_t *codes, const struct h2b_json_src *src, bool grpc,
                       struct h2b_diag *d)
{
    const char *key = grpc ? grpc_codes_key() : codes_key();
    if (codes == NULL || json_is_null(codes))
        return H2B_OK;
    if (!json_is_object(codes)) {
        h2b_diag_set(d, src->file, src->text, key, "expected an object");
        return H2B_ERR_PARSE;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)codes, k, v)
    {
        if (grpc ? !grpc_code(k) : !http_code(k)) {
            h2b_diag_set(d, src->file, src->text, key,
                         grpc ? "expected grpc-status codes 0..16 (or \"other\", \"missing\") as "
                                "keys"
                              : "expected three-digit status codes (or \"other\") as keys");
            return H2B_ERR_PARSE;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            h2b_diag_set(d, src->file, src->text, key,
                         "expected a non-negative integer count for \"%s\"", k);
            return H2B_ERR_PARSE;
        }
    }
    return H2B_OK;
}

/* Adds the counts of src (checked) to *dst; a sum past 2^63-1 is an input error. */
static int add_codes(json_t **dst, const json_t *src, const struct h2b_json_src *file,
                     const char *key, struct h2b_diag *d)
{
    if (!json_is_object(src))
        return H2B_OK;
    if (!json_is_object(*dst)) {
        json_decref(*dst);
        if (!(*dst = json_object()))
            return H2B_ERR_NOMEM;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)src, k, v)
    {
        json_int_t a = json_integer_value(json_object_get(*dst, k)), b = json_integer_value(v);
        if (a > LLONG_MAX - b) {
            h2b_diag_set(d, file->file, file->text, key, "the merged count of \"%s\" passes 2^63-1",
                         k);
            return H2B_ERR_PARSE;
        }
        if (json_object_set_new(*dst, k, json_integer(a + b)) != 0)
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

/* --grpc results: the parts ran the same calls (the first part's method, messages and sizes
 * stay); their counts by status and their mismatches add. A part with gRPC calls beside one
 * without is an input error. */
static int merge_grpc(struct h2b_results_grpc *m, const struct h2b_results_grpc *p,
                      const struct h2b_json_src *src, struct h2b_diag *d)
{
    if (m->base.present != p->base.present) {
        h2b_diag_set(
            d, src->file, src->text, "grpc",
            "expected a gRPC run like the first part's (`h2bench load --grpc`), or no gRPC "
            "in either");
        return H2B_ERR_PARSE;
    }
    if (!p->base.present)
        return H2B_OK;
    m->length_mismatches = add(m->length_mismatches, p->length_mismatches);
    m->content_mismatches = add(m->content_mismatches, p->content_mismatches);
    return add_codes(&m->status_codes, p->status_codes, src, grpc_codes_key(), d);
}

/* Merges the encoded histogram src into *acc (decoded on first use). */
static int add_hist(struct h2b_hist **acc, const char *src, const char *file, const char *what,
                    struct h2b_diag *d)
{
    struct h2b_hist *h;
    if (!src || h2b_hist_decode(src, &h) != H2B_OK) {
        h2b_diag_at(d, file, 0, 0,
                    "histograms.%s: %s (an exact merge needs every part's histograms)", what,
                    src ? "not a valid h2bench histogram encoding" : "missing");
        return H2B_ERR_PARSE;
    }
    if (!*acc) {
        *acc = h;
        return H2B_OK;
    }
    int rv = h2b_hist_merge(*acc, h);
    h2b_hist_del(h);
    if (rv != H2B_OK)
        h2b_diag_at(d, file, 0, 0, "histograms.%s: configured unlike the first part's", what);
    return rv == H2B_OK ? H2B_OK : H2B_ERR_PARSE;
}

/* A name for a note: only the known ones (NULL-terminated) are copied (the file is not trusted). */
static const char *known_name(const char *e, const char *const *known)
{
    for (; e && *known; known++)
        if (strcmp(e, *known) == 0)
            return *known;
    return e ? "another" : "none named";
}

/* What every part ran (*member: the engine, the I/O backend), or null with a note under key
 * when they differ (or one part does not say): a merged result must not claim an engine or a
 * backend some of its requests did not run on. what names it in the note ("engines"). */
static int merge_same(char **member, const char *part, const char *const *known, const char *key,
                      const char *what, struct h2b_results_cell *cell, bool *mixed)
{
    if (*mixed || (*member && part && strcmp(*member, part) == 0))
        return H2B_OK;
    if (!*member && !part)
        return H2B_OK;
    char why[96];
    snprintf(why, sizeof(why), "the parts ran different %s (%s and %s)", what,
             known_name(*member, known), known_name(part, known));
    *mixed = true;
    int rv = h2b_model_set_string(member, NULL);
    return rv == H2B_OK ? h2b_model_note_add(&cell->note, key, why) : rv;
}

/* The engine and the I/O backend every part ran (merge_same), and the first fallback reason of
 * a part whose --io uring ran on epoll. */
static int merge_engine(struct h2b_results_load *m, const struct h2b_results_load *p, bool *mixed,
                        bool *mixed_io)
{
    static const char *const engines[] = {"fast", "nghttp2", "h1", "h3", NULL};
    static const char *const ios[] = {"epoll", "uring", NULL};
    int rv = merge_same(&m->engine, p->engine, engines, "engine", "engines", &m->cell, mixed);
    if (rv == H2B_OK)
        rv = merge_same(&m->io, p->io, ios, "io", "I/O backends", &m->cell, mixed_io);
    if (rv == H2B_OK && !m->io_fallback && p->io_fallback)
        rv = h2b_model_set_string(&m->io_fallback, p->io_fallback);
    return rv;
}

/* What is summed, kept at its extreme, or or-ed from part p into the merged m. */
static void add_part(struct h2b_results_load *m, const struct h2b_results_load *p)
{
    struct h2b_results_cell *c = &m->cell;
    const struct h2b_results_cell *pc = &p->cell;
    c->connections = add(c->connections, pc->connections);
    c->streams_requested = max_of(c->streams_requested, pc->streams_requested);
    c->streams_effective = min_of(c->streams_effective, pc->streams_effective);
    c->requests = add(c->requests, pc->requests);
    c->succeeded = add(c->succeeded, pc->succeeded);
    c->failed = add(c->failed, pc->failed);
    c->errors = add(c->errors, pc->errors);
    c->duration_s = max_of(c->duration_s, pc->duration_s);
    c->req_per_s = add(c->req_per_s, pc->req_per_s);
    c->bytes_per_s = add(c->bytes_per_s, pc->bytes_per_s);
    c->client_cpu_s = add(c->client_cpu_s, pc->client_cpu_s);
    m->goodput_per_s = add(m->goodput_per_s, p->goodput_per_s);
    m->wall_s = max_of(m->wall_s, p->wall_s);
    m->started = add(m->started, p->started);
    m->done = add(m->done, p->done);
    m->timeouts = add(m->timeouts, p->timeouts);
    m->resets = add(m->resets, p->resets);
    m->protocol_errors = add(m->protocol_errors, p->protocol_errors);
    m->not_sent = add(m->not_sent, p->not_sent);
    m->unfinished = add(m->unfinished, p->unfinished);
    m->unsent = add(m->unsent, p->unsent);
    m->interrupted = m->interrupted == 1 || p->interrupted == 1;
    m->ended_early = m->ended_early == 1 || p->ended_early == 1;
    m->traffic.total = add(m->traffic.total, p->traffic.total);
    m->traffic.headers = add(m->traffic.headers, p->traffic.headers);
    m->traffic.headers_decompressed =
        add(m->traffic.headers_decompressed, p->traffic.headers_decompressed);
    m->traffic.data = add(m->traffic.data, p->traffic.data);
    m->traffic.sent = add(m->traffic.sent, p->traffic.sent);
    m->client_cpu_user_s = add(m->client_cpu_user_s, p->client_cpu_user_s);
    m->client_cpu_sys_s = add(m->client_cpu_sys_s, p->client_cpu_sys_s);
    m->server_max_concurrent_streams =
        min_of(m->server_max_concurrent_streams, p->server_max_concurrent_streams);
    m->connections_up = add(m->connections_up, p->connections_up);
    m->connections_failed = add(m->connections_failed, p->connections_failed);
    m->reconnects = add(m->reconnects, p->reconnects);
    m->connection_errors = add(m->connection_errors, p->connection_errors);
    if (p->open_loop.base.present) {
        m->open_loop.base.present = true;
        m->open_loop.target_per_s = add(m->open_loop.target_per_s, p->open_loop.target_per_s);
        m->open_loop.achieved_per_s = add(m->open_loop.achieved_per_s, p->open_loop.achieved_per_s);
        m->open_loop.max_release_lag_ns =
            max_of(m->open_loop.max_release_lag_ns, p->open_loop.max_release_lag_ns);
    }
    struct h2b_results_load_options *o = &m->config.options;
    const struct h2b_results_load_options *po = &p->config.options;
    o->connections = add(o->connections, po->connections);
    o->threads = add(o->threads, po->threads);
    o->requests = add(o->requests, po->requests);
    o->rate = add(o->rate, po->rate);
}

int h2b_load_merge(json_t *const *docs, const struct h2b_json_src *srcs, size_t n, json_t **out,
                   struct h2b_diag *d)
{
#define HKEY(m) H2B_MODEL_KEY(h2b_results_histograms_model, struct h2b_results_histograms, m)
    const char *const names[] = {HKEY(latency), HKEY(service), HKEY(ttfb), HKEY(connect),
                                 HKEY(tls_handshake)};
#undef HKEY
    struct h2b_hist *acc[5] = {0};
    struct h2b_results_load m, p;
    h2b_results_load_init(&m);
    h2b_results_load_init(&p);
    int rv = H2B_OK;
    bool mixed = false, mixed_io = false;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        struct h2b_results_load *part = i == 0 ? &m : &p;
        if (i > 0) {
            h2b_results_load_free(&p);
            h2b_results_load_init(&p);
        }
        if ((rv = h2b_results_load_from_json(docs[i], &srcs[i], part, d)) != H2B_OK)
            break;
        if (!part->schema || strcmp(part->schema, H2B_RESULTS_LOAD_SCHEMA) != 0) {
            h2b_diag_set(d, srcs[i].file, srcs[i].text, "schema",
                         "expected \"%s\" (an `h2bench load --json` result)",
                         H2B_RESULTS_LOAD_SCHEMA);
            rv = H2B_ERR_PARSE;
            break;
        }
        if ((rv = check_codes(part->status_codes, &srcs[i], false, d)) != H2B_OK ||
            (rv = check_codes(part->grpc.status_codes, &srcs[i], true, d)) != H2B_OK)
            break;
        const struct h2b_results_histograms *hs = &part->histograms;
        const char *texts[5] = {hs->latency, hs->service, hs->ttfb, hs->connect, hs->tls_handshake};
        for (int k = 0; k < 5 && rv == H2B_OK; k++)
            rv = add_hist(&acc[k], texts[k], srcs[i].file, names[k], d);
        if (rv == H2B_OK && i > 0) {
            add_part(&m, &p);
            rv = add_codes(&m.status_codes, p.status_codes, &srcs[i], codes_key(), d);
            if (rv == H2B_OK)
                rv = merge_grpc(&m.grpc, &p.grpc, &srcs[i], d);
            if (rv == H2B_OK && p.ended_early == 1 && !m.ended_early_reason && p.ended_early_reason)
                rv = h2b_model_set_string(&m.ended_early_reason, p.ended_early_reason);
            if (rv == H2B_OK)
                rv = merge_engine(&m, &p, &mixed, &mixed_io);
        }
    }
    if (rv == H2B_OK) {
        /* every summary from the merged histograms */
        struct h2b_results_latency *lat[5] = {&m.cell.latency_ns, &m.service_ns, &m.ttfb_ns,
                                              &m.connect_ns, &m.tls_handshake_ns};
        char **text[5] = {&m.histograms.latency, &m.histograms.service, &m.histograms.ttfb,
                          &m.histograms.connect, &m.histograms.tls_handshake};
        for (int k = 0; k < 5 && rv == H2B_OK; k++) {
            h2b_model_init(&h2b_results_latency_model, lat[k]);
            h2b_load_latency_of(lat[k], acc[k]);
            char *enc = NULL;
            rv = h2b_hist_encode(acc[k], &enc) == H2B_OK ? h2b_model_set_string(text[k], enc)
                                                         : H2B_ERR_NOMEM;
            free(enc);
        }
        char why[96];
        snprintf(why, sizeof(why),
                 "merged from %zu load results (counts and rates add, durations the longest)", n);
        if (rv == H2B_OK && h2b_model_note_add(&m.cell.note, "merge", why) != H2B_OK)
            rv = H2B_ERR_NOMEM;
        if (rv == H2B_OK && h2b_results_load_to_json(&m, out) != H2B_OK)
            rv = H2B_ERR_NOMEM;
        if (rv == H2B_ERR_NOMEM)
            h2b_diag_at(d, NULL, 0, 0, "out of memory");
    }
    for (int k = 0; k < 5; k++)
        h2b_hist_del(acc[k]);
    h2b_results_load_free(&m);
    h2b_results_load_free(&p);
    return rv;
}

/* Per-interval results of the parts (--interval-json NDJSON, one file or one rank each), merged
 * interval by interval: the rows of one index are the same span of the run in every part, since
 * the parts start together (an MPI job's agreed instant). Counts add, the span is the widest,
 * offered requests add (each part's offered_per_s times its own length), and the percentiles
 * come from the histograms merged bin for bin, exactly as `h2bench merge` merges whole runs. */

void h2b_load_intervals_free(struct h2b_results_interval *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        h2b_model_free(&h2b_results_interval_model, &rows[i]);
    free(rows);
}

/* Line `line` (1-based) of file, as a diagnostic relative to the line's own text moved there. */
static void at_line(struct h2b_diag *d, const char *file, int line)
{
    if (d->line > 0)
        d->line += line - 1;
    else
        d->line = line, d->column = 1;
    snprintf(d->file, sizeof(d->file), "%s", file);
}

#define IKEY(m) H2B_MODEL_KEY(h2b_results_interval_model, struct h2b_results_interval, m)

static int parse_row(const char *file, const char *text, size_t len, int line,
                     struct h2b_results_interval *row, double prev, struct h2b_diag *d)
{
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        h2b_diag_at(d, file, line, je.column > 0 ? je.column : 1, "not JSON: %s", je.text);
        return H2B_ERR_PARSE;
    }
    char *copy = strndup(text, len); /* the model locates paths in NUL-terminated text */
    struct h2b_json_src src = {file, copy};
    int rv = copy ? h2b_model_from_json(&h2b_results_interval_model, v, &src, "", 0, row, d)
                  : H2B_ERR_NOMEM;
    if (rv == H2B_ERR_PARSE)
        at_line(d, file, line);
    const char *key = NULL, *why = NULL;
    if (rv == H2B_OK) {
        double i = row->index;
        if (!(i >= 0) || i != floor(i) || !(i > prev) || i > 1e15)
            key = IKEY(index),
            why = "expected an interval index above the previous line's (a non-negative integer)";
        else if (!row->latency_histogram)
            key = IKEY(latency_histogram),
            why = "missing (an exact merge needs every interval's latency histogram)";
        else if (!(row->end_s >= row->start_s))
            key = IKEY(end_s), why = "expected end_s >= start_s";
        else if (!(row->ended >= 0) || !(row->succeeded >= 0) || !(row->errors >= 0))
            key = IKEY(ended), why = "expected non-negative counts";
    }
    if (key) {
        h2b_diag_set(d, file, copy, key, "%s", why);
        at_line(d, file, line);
        rv = H2B_ERR_PARSE;
    }
    if (rv != H2B_OK)
        h2b_model_free(&h2b_results_interval_model, row);
    free(copy);
    json_decref(v);
    return rv;
}

int h2b_load_intervals_parse(const char *file, const char *text, size_t len,
                             struct h2b_results_interval **rows, size_t *nrows, struct h2b_diag *d)
{
    struct h2b_results_interval *v = NULL;
    size_t n = 0, cap = 0;
    int rv = H2B_OK, line = 0;
    double prev = -1;
    for (size_t off = 0; off < len && rv == H2B_OK;) {
        const char *nl = memchr(text + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - text) : len;
        line++;
        size_t a = off, b = end;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r'))
            a++;
        off = end + 1;
        if (a == b)
            continue; /* a blank line (the file's last newline) */
        if (n == cap) {
            struct h2b_results_interval *r = h2b_array_grow(v, &cap, n + 1, sizeof(*r), 64);
            if (!r) {
                rv = H2B_ERR_NOMEM;
                h2b_diag_at(d, NULL, 0, 0, "out of memory");
                break;
            }
            v = r;
        }
        h2b_model_init(&h2b_results_interval_model, &v[n]);
        rv = parse_row(file, text + a, b - a, line, &v[n], prev, d);
        if (rv == H2B_OK)
            prev = v[n++].index;
    }
    if (rv == H2B_OK && n == 0) {
        h2b_diag_at(d, file, line ? line : 1, 1,
                    "expected per-interval results (`h2bench load --interval-json`), found none");
        rv = H2B_ERR_PARSE;
    }
    if (rv != H2B_OK) {
        h2b_load_intervals_free(v, n);
        return rv;
    }
    *rows = v;
    *nrows = n;
    return H2B_OK;
}

/* Adds part row p into the merged row m (already holding the same index), with acc the merged
 * histogram. */
static int add_row(struct h2b_results_interval *m, struct h2b_hist *acc,
                   const struct h2b_results_interval *p, const char *file, struct h2b_diag *d)
{
    struct h2b_hist *h = NULL;
    if (h2b_hist_decode(p->latency_histogram, &h) != H2B_OK) {
        h2b_diag_at(d, file, 0, 0,
                    "interval %.0f: latency_histogram is not a valid h2bench histogram encoding",
                    p->index);
        return H2B_ERR_PARSE;
    }
    int rv = h2b_hist_merge(acc, h);
    h2b_hist_del(h);
    if (rv != H2B_OK) {
        h2b_diag_at(d, file, 0, 0, "interval %.0f: histogram configured unlike the first part's",
                    p->index);
        return H2B_ERR_PARSE;
    }
    double len = p->end_s - p->start_s;
    if (!isnan(p->offered_per_s) && len > 0)
        m->offered_per_s = add(m->offered_per_s, p->offered_per_s * len);
    m->start_s = min_of(m->start_s, p->start_s);
    m->end_s = max_of(m->end_s, p->end_s);
    m->ended = add(m->ended, p->ended);
    m->succeeded = add(m->succeeded, p->succeeded);
    m->errors = add(m->errors, p->errors);
    if (!isnan(p->coalesced) && p->coalesced > 0)
        m->coalesced = add(m->coalesced, p->coalesced);
    return H2B_OK;
}

int h2b_load_intervals_merge(struct h2b_results_interval *const *parts, const size_t *nparts,
                             const char *const *files, size_t n, struct h2b_results_interval **out,
                             size_t *nout, struct h2b_diag *d)
{
    size_t *at = calloc(n ? n : 1, sizeof(*at));
    size_t cap = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        cap += nparts[i];
    struct h2b_results_interval *rows = calloc(cap ? cap : 1, sizeof(*rows));
    struct h2b_hist *acc = NULL;
    int rv = at && rows && h2b_hist_new_default(&acc) == H2B_OK ? H2B_OK : H2B_ERR_NOMEM;
    while (rv == H2B_OK) {
        double next = INFINITY; /* the lowest index not merged yet */
        for (size_t i = 0; i < n; i++)
            if (at[i] < nparts[i] && parts[i][at[i]].index < next)
                next = parts[i][at[i]].index;
        if (isinf(next))
            break;
        struct h2b_results_interval *m = &rows[k++];
        h2b_model_init(&h2b_results_interval_model, m);
        m->base.present = true;
        m->index = next;
        h2b_hist_reset(acc);
        for (size_t i = 0; i < n && rv == H2B_OK; i++)
            if (at[i] < nparts[i] && parts[i][at[i]].index == next)
                rv = add_row(m, acc, &parts[i][at[i]++], files[i], d);
        if (rv != H2B_OK)
            break;
        double len = m->end_s - m->start_s;
        m->offered_per_s = len > 0 ? m->offered_per_s / len : NAN;
        m->achieved_per_s = len > 0 ? m->ended / len : NAN;
        h2b_load_latency_of(&m->latency_ns, acc);
        char *enc = NULL;
        rv = h2b_hist_encode(acc, &enc) == H2B_OK ? h2b_model_set_string(&m->latency_histogram, enc)
                                                  : H2B_ERR_NOMEM;
        free(enc);
    }
    if (rv == H2B_ERR_NOMEM)
        h2b_diag_at(d, NULL, 0, 0, "out of memory");
    h2b_hist_del(acc);
    free(at);
    if (rv != H2B_OK) {
        h2b_load_intervals_free(rows, k);
        return rv;
    }
    *out = rows;
    *nout = k;
    return H2B_OK;
}

int h2b_load_intervals_read(const char *path, struct h2b_results_interval **rows, size_t *nrows,
                            struct h2b_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        h2b_diag_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_PARSE;
    }
    struct stat st;
    const char *why = fstat(fd, &st) != 0   ? "cannot stat"
                      : S_ISDIR(st.st_mode) ? "is a directory, expected an NDJSON file"
                                            : NULL;
    if (why) {
        h2b_diag_at(d, path, 0, 0, "%s", why);
        close(fd);
        return H2B_ERR_PARSE;
    }
    char *text = NULL;
    size_t len = 0;
    int rv = h2b_fd_read_all(fd, H2B_JSON_MAX_FILE, 0, &text, &len);
    close(fd);
    if (rv != H2B_OK) {
        h2b_diag_at(d, path, 0, 0, "cannot read: %s",
                    rv == H2B_ERR_RANGE ? "file too large" : h2b_strerror(rv));
        return rv == H2B_ERR_NOMEM ? rv : H2B_ERR_PARSE;
    }
    rv = h2b_load_intervals_parse(path, text, len, rows, nrows, d);
    free(text);
    return rv;
}
