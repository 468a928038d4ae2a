/*
 * rdata.c - load results files for the report.
 *
 * The contract is checked by core: h2b_results_read validates h2bench.result/1 (types, required
 * identifiers, nullable metrics) with file:line:column diagnostics. This file reads what the
 * report needs into flat structs, and checks with the same located diagnostics the fields that
 * producers add beyond the contract: a cell's "status"/"reason", encoded histograms
 * ("histogram" in micro entries, "latency_histogram" or "histogram" in cells) and per-fork
 * values ("fork_p99_ns" and "fork_ns_per_op" as h2bench micro writes them, "p99_ns_forks").
 *
 * Rejected: rendering straight from the JSON tree. Every table would then repeat the type checks
 * and a malformed file would be found half-way through writing a report.
 */
#include "rdata.h"
#include "error.h"
#include "hist.h"
#include "json.h"
#include "results.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
    struct h2b_json_src src;
    struct h2b_diag diag;
};

/* diag as "file:line:column: message" (or "file: message" when it has no position). */
static void diag_to_err(const struct h2b_diag *d, char *err, size_t errlen)
{
    if (errlen == 0)
        return;
    if (d->line > 0)
        snprintf(err, errlen, "%s:%d:%d: %s", d->file, d->line, d->column, d->message);
    else
        snprintf(err, errlen, "%s: %s", d->file, d->message);
}

/* Loads path keeping its text for locating later diagnostics. An unreadable file is
 * H2B_ERR_NOTFOUND so the CLI can call it an input error. */
static int load(const char *path, json_t **doc, char **text, char *err, size_t errlen)
{
    struct h2b_diag d = {0};
    int rc = h2b_json_load(path, doc, text, &d);
    if (rc != H2B_OK) {
        if (d.file[0] == '\0')
            snprintf(d.file, sizeof(d.file), "%s", path);
        diag_to_err(&d, err, errlen);
        return rc == H2B_ERR_IO ? H2B_ERR_NOTFOUND : rc;
    }
    return H2B_OK;
}

/* A nullable non-negative number: NAN when absent or null. */
static int num(struct ctx *c, const json_t *obj, const char *path, const char *key, double *out)
{
    *out = NAN;
    int rc = h2b_json_get_double(&c->src, obj, path, key, H2B_JSON_OPTIONAL | H2B_JSON_NULLABLE, 0,
                                 DBL_MAX, out, &c->diag);
    return rc < 0 ? rc : H2B_OK;
}

static int str(struct ctx *c, const json_t *obj, const char *path, const char *key,
               const char **out)
{
    *out = NULL;
    int rc = h2b_json_get_string(&c->src, obj, path, key, H2B_JSON_OPTIONAL | H2B_JSON_NULLABLE,
                                 out, &c->diag);
    return rc < 0 ? rc : H2B_OK;
}

static int integer(struct ctx *c, const json_t *obj, const char *path, const char *key, long *out)
{
    uint64_t v = 0;
    int rc = h2b_json_get_u64(&c->src, obj, path, key, H2B_JSON_OPTIONAL | H2B_JSON_NULLABLE, 0,
                              INT32_MAX, &v, &c->diag);
    *out = (long)v;
    return rc < 0 ? rc : H2B_OK;
}

/* The first of keys present: an encoded histogram, decoded into *out. */
static int hist(struct ctx *c, const json_t *obj, const char *path, const char *const *keys,
                struct h2b_hist **out)
{
    for (; *keys; keys++) {
        const char *text;
        int rc = str(c, obj, path, *keys, &text);
        if (rc)
            return rc;
        if (text == NULL)
            continue;
        rc = h2b_hist_decode(text, out);
        if (rc == H2B_ERR_NOMEM)
            return rc;
        if (rc != H2B_OK) {
            char where[512];
            h2b_json_path_key(where, sizeof(where), path, *keys);
            h2b_diag_set(&c->diag, c->src.file, c->src.text, where,
                         "not a valid encoded histogram (%s)", h2b_strerror(rc));
            return H2B_ERR_PARSE;
        }
        return H2B_OK;
    }
    return H2B_OK;
}

/* The first of keys present: an array of non-negative numbers, copied into *out. */
static int samples(struct ctx *c, const json_t *obj, const char *path, const char *const *keys,
                   double **out, size_t *n)
{
    for (; *keys; keys++) {
        json_t *arr;
        int rc = h2b_json_get_array(&c->src, obj, path, *keys,
                                    H2B_JSON_OPTIONAL | H2B_JSON_NULLABLE, &arr, &c->diag);
        if (rc < 0)
            return rc;
        if (rc == H2B_JSON_ABSENT)
            continue;
        char where[512];
        h2b_json_path_key(where, sizeof(where), path, *keys);
        size_t len = json_array_size(arr);
        double *v = calloc(len ? len : 1, sizeof(*v));
        if (v == NULL)
            return H2B_ERR_NOMEM;
        for (size_t i = 0; i < len; i++) {
            char item[560];
            h2b_json_path_index(item, sizeof(item), where, i);
            rc = h2b_json_check_double(&c->src, json_array_get(arr, i), item, H2B_JSON_REQUIRED, 0,
                                       DBL_MAX, &v[i], &c->diag);
            if (rc < 0) {
                free(v);
                return rc;
            }
        }
        *out = v;
        *n = len;
        return H2B_OK;
    }
    return H2B_OK;
}

static int load_micro(struct ctx *c, const json_t *e, const char *p, struct h2b_rdata_micro *m)
{
    static const char *const p99_keys[] = {"fork_p99_ns", "p99_ns_forks", NULL};
    static const char *const ns_keys[] = {"fork_ns_per_op", NULL};
    static const char *const hist_keys[] = {"histogram", NULL};
    int rc;
    if ((rc = str(c, e, p, "name", &m->name)) || (rc = num(c, e, p, "ns_per_op", &m->ns_per_op)) ||
        (rc = num(c, e, p, "bytes_per_op", &m->bytes_per_op)) ||
        (rc = num(c, e, p, "allocs_per_op", &m->allocs_per_op)) ||
        (rc = num(c, e, p, "p50_ns", &m->p50_ns)) || (rc = num(c, e, p, "p99_ns", &m->p99_ns)) ||
        (rc = num(c, e, p, "p999_ns", &m->p999_ns)) ||
        (rc = num(c, e, p, "instructions_per_op", &m->instructions_per_op)) ||
        (rc = integer(c, e, p, "forks", &m->forks)) || (rc = str(c, e, p, "note", &m->note)) ||
        (rc = str(c, e, p, "error", &m->error)) ||
        (rc = samples(c, e, p, p99_keys, &m->p99_forks, &m->n_p99_forks)) ||
        (rc = samples(c, e, p, ns_keys, &m->ns_forks, &m->n_ns_forks)))
        return rc;
    return hist(c, e, p, hist_keys, &m->hist);
}

static int load_cell(struct ctx *c, const json_t *e, const char *p, struct h2b_rdata_cell *m)
{
    static const char *const lat_keys[H2B_LAT_N] = {"min", "p50", "p90", "p99", "p999", "max"};
    static const char *const hist_keys[] = {"latency_histogram", "histogram", NULL};
    const char *status;
    int rc;
    if ((rc = str(c, e, p, "target", &m->target)) || (rc = str(c, e, p, "client", &m->client)) ||
        (rc = integer(c, e, p, "connections", &m->connections)) ||
        (rc = integer(c, e, p, "streams_requested", &m->streams_requested)) ||
        (rc = integer(c, e, p, "streams_effective", &m->streams_effective)) ||
        (rc = integer(c, e, p, "repeat", &m->repeat)) ||
        (rc = num(c, e, p, "requests", &m->requests)) ||
        (rc = num(c, e, p, "succeeded", &m->succeeded)) ||
        (rc = num(c, e, p, "failed", &m->failed_requests)) ||
        (rc = num(c, e, p, "errors", &m->errors)) ||
        (rc = num(c, e, p, "duration_s", &m->duration_s)) ||
        (rc = num(c, e, p, "req_per_s", &m->req_per_s)) ||
        (rc = num(c, e, p, "bytes_per_s", &m->bytes_per_s)) ||
        (rc = num(c, e, p, "client_cpu_s", &m->client_cpu_s)) ||
        (rc = num(c, e, p, "server_cpu_s", &m->server_cpu_s)) ||
        (rc = num(c, e, p, "server_rss_kib", &m->server_rss_kib)) ||
        (rc = str(c, e, p, "status", &status)) || (rc = str(c, e, p, "reason", &m->reason)) ||
        (rc = str(c, e, p, "note", &m->note)))
        return rc;
    char where[512];
    h2b_json_path_key(where, sizeof(where), p, "status");
    if (status && strcmp(status, "ok") != 0 && strcmp(status, "failed") != 0) {
        h2b_diag_set(&c->diag, c->src.file, c->src.text, where,
                     "expected \"ok\" or \"failed\", got \"%s\"", status);
        return H2B_ERR_PARSE;
    }
    m->failed = status && strcmp(status, "failed") == 0;
    if (m->failed && m->reason == NULL) {
        h2b_diag_set(&c->diag, c->src.file, c->src.text, where,
                     "a failed cell must say why in \"reason\"");
        return H2B_ERR_PARSE;
    }
    json_t *lat = json_object_get(e, "latency_ns");
    h2b_json_path_key(where, sizeof(where), p, "latency_ns");
    for (int k = 0; k < H2B_LAT_N; k++) {
        m->latency_ns[k] = NAN;
        if (json_is_object(lat) && (rc = num(c, lat, where, lat_keys[k], &m->latency_ns[k])))
            return rc;
    }
    /* A measured cell without throughput is no measurement: say so rather than print n/a. */
    if (!m->failed && isnan(m->req_per_s)) {
        h2b_diag_set(&c->diag, c->src.file, c->src.text, p,
                     "req_per_s is null but the cell is not marked \"status\": \"failed\"");
        return H2B_ERR_PARSE;
    }
    return hist(c, e, p, hist_keys, &m->hist);
}

static void results_free(struct h2b_rdata_results *r)
{
    for (size_t i = 0; i < r->n_micro; i++) {
        free(r->micro[i].p99_forks);
        free(r->micro[i].ns_forks);
        h2b_hist_del(r->micro[i].hist);
    }
    for (size_t i = 0; i < r->n_cells; i++)
        h2b_hist_del(r->cells[i].hist);
    free(r->micro);
    free(r->cells);
    json_decref(r->doc);
    free(r->path);
    free(r);
}

void h2b_rdata_results_del(struct h2b_rdata_results *r)
{
    if (r)
        results_free(r);
}

static int convert(struct ctx *c, json_t *doc, struct h2b_rdata_results *r)
{
    json_t *tool = json_object_get(doc, "tool"), *scenario = json_object_get(doc, "scenario");
    int rc;
    if ((rc = str(c, doc, "", "created", &r->created)) ||
        (rc = str(c, tool, "tool", "name", &r->tool_name)) ||
        (rc = str(c, tool, "tool", "version", &r->tool_version)) ||
        (rc = str(c, tool, "tool", "git_commit", &r->git_commit)) ||
        (rc = str(c, scenario, "scenario", "name", &r->scenario_name)) ||
        (rc = str(c, scenario, "scenario", "file", &r->scenario_file)) ||
        (rc = str(c, scenario, "scenario", "sha256", &r->scenario_sha256)))
        return rc;
    r->env = json_object_get(doc, "env");
    json_t *micro = json_object_get(doc, "micro"), *matrix = json_object_get(doc, "matrix");
    size_t nm = json_array_size(micro), nc = json_array_size(matrix);
    r->micro = calloc(nm ? nm : 1, sizeof(*r->micro));
    r->cells = calloc(nc ? nc : 1, sizeof(*r->cells));
    if (r->micro == NULL || r->cells == NULL)
        return H2B_ERR_NOMEM;
    char p[64];
    for (size_t i = 0; i < nm; i++) {
        r->n_micro = i + 1; /* so that a failure frees what this entry allocated */
        h2b_json_path_index(p, sizeof(p), "micro", i);
        if ((rc = load_micro(c, json_array_get(micro, i), p, &r->micro[i])))
            return rc;
    }
    for (size_t i = 0; i < nc; i++) {
        r->n_cells = i + 1;
        h2b_json_path_index(p, sizeof(p), "matrix", i);
        if ((rc = load_cell(c, json_array_get(matrix, i), p, &r->cells[i])))
            return rc;
    }
    return H2B_OK;
}

int h2b_rdata_results_load(const char *path, struct h2b_rdata_results **out, char *err,
                           size_t errlen)
{
    json_t *doc = NULL;
    char *text = NULL;
    int rc = load(path, &doc, &text, err, errlen);
    if (rc)
        return rc;
    struct ctx c = {.src = {path, text}};
    struct h2b_rdata_results *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        json_decref(doc);
        free(text);
        return H2B_ERR_NOMEM;
    }
    r->doc = doc;
    r->path = strdup(path);
    if (r->path == NULL)
        rc = H2B_ERR_NOMEM;
    else if ((rc = h2b_results_validate(doc, &c.src, &c.diag)) == H2B_OK)
        rc = convert(&c, doc, r);
    free(text);
    if (rc) {
        if (rc == H2B_ERR_NOMEM)
            snprintf(err, errlen, "%s: out of memory", path);
        else
            diag_to_err(&c.diag, err, errlen);
        results_free(r);
        return rc;
    }
    *out = r;
    return H2B_OK;
}

const struct h2b_rdata_micro *h2b_rdata_micro_find(const struct h2b_rdata_results *r,
                                                   const char *name)
{
    for (size_t i = 0; i < r->n_micro; i++) {
        if (strcmp(r->micro[i].name, name) == 0)
            return &r->micro[i];
    }
    return NULL;
}
