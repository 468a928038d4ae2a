/*
 * rdata.c - load and validate results and ceilings files for the report.
 *
 * jansson parses; this file checks the fields the report reads, with messages that name the
 * file, the place and the field path (micro[3].p99_ns: expected a number or null), and converts
 * them into flat structs so the renderer never touches JSON. Validation is strict about types
 * and lenient about extra fields: DESIGN.md lets producers add fields freely.
 *
 * Rejected: rendering straight from the JSON tree. Every table would then repeat the type checks
 * and a malformed file would be found half-way through writing a report.
 */
#include "rdata.h"
#include "error.h"
#include "hist.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULTS_SCHEMA "h2bench.result/1"
#define CEILINGS_SCHEMA "h2bench.ceilings/1"

struct ctx {
    const char *file;
    char *err;
    size_t errlen;
};

static int fail(const struct ctx *c, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(const struct ctx *c, const char *where, const char *fmt, ...)
{
    if (c->errlen == 0)
        return H2B_ERR_PARSE;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s%s%s", c->file, where ? where : "", where ? ": " : "", msg);
    return H2B_ERR_PARSE;
}

/* objpath.key into where (a message may show a truncated path; it is never parsed). */
static void join(char *where, size_t n, const char *objpath, const char *key)
{
    int k = snprintf(where, n, "%s%s%s", objpath, objpath[0] ? "." : "", key);
    if (k < 0 || (size_t)k >= n)
        where[n - 1] = '\0';
}

static int load_doc(const struct ctx *c, json_t **out)
{
    json_error_t je;
    json_t *doc = json_load_file(c->file, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL) {
        if (je.line < 0) {
            snprintf(c->err, c->errlen, "%s: %s", c->file, je.text);
            return H2B_ERR_NOTFOUND;
        }
        snprintf(c->err, c->errlen, "%s:%d:%d: %s", c->file, je.line, je.column, je.text);
        return H2B_ERR_PARSE;
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        return fail(c, NULL, "expected a JSON object at the top level");
    }
    *out = doc;
    return H2B_OK;
}

static int check_schema(const struct ctx *c, json_t *doc, const char *schema)
{
    json_t *s = json_object_get(doc, "schema");
    if (!json_is_string(s))
        return fail(c, "schema", "expected the string \"%s\"", schema);
    if (strcmp(json_string_value(s), schema) != 0)
        return fail(c, "schema", "expected \"%s\", found \"%s\"", schema, json_string_value(s));
    return H2B_OK;
}

/* A string field: required, or optional (NULL when absent or null). */
static int get_str(const struct ctx *c, json_t *obj, const char *objpath, const char *key,
                   bool required, const char **out)
{
    char where[256];
    join(where, sizeof(where), objpath, key);
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return fail(c, where, "missing; expected a string");
        *out = NULL;
        return H2B_OK;
    }
    if (!json_is_string(v))
        return fail(c, where, "expected a string");
    *out = json_string_value(v);
    return H2B_OK;
}

/* A number field; null and absent become NAN unless required. */
static int get_num(const struct ctx *c, json_t *obj, const char *objpath, const char *key,
                   bool required, double *out)
{
    char where[256];
    join(where, sizeof(where), objpath, key);
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return fail(c, where, "missing; expected a number");
        *out = NAN;
        return H2B_OK;
    }
    if (!json_is_number(v))
        return fail(c, where, "expected a number or null");
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0)
        return fail(c, where, "expected a non-negative number");
    *out = d;
    return H2B_OK;
}

/* An integer field >= min; def when absent and not required. */
static int get_int(const struct ctx *c, json_t *obj, const char *objpath, const char *key,
                   bool required, long min, long def, long *out)
{
    char where[256];
    join(where, sizeof(where), objpath, key);
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required)
            return fail(c, where, "missing; expected an integer >= %ld", min);
        *out = def;
        return H2B_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min)
        return fail(c, where, "expected an integer >= %ld", min);
    *out = (long)json_integer_value(v);
    return H2B_OK;
}

static int get_obj(const struct ctx *c, json_t *obj, const char *key, json_t **out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_object(v))
        return fail(c, key, "%s; expected an object", v ? "wrong type" : "missing");
    *out = v;
    return H2B_OK;
}

static int get_hist(const struct ctx *c, json_t *obj, const char *objpath, struct h2b_hist **out)
{
    json_t *v = json_object_get(obj, "histogram");
    if (v == NULL || json_is_null(v))
        return H2B_OK;
    char where[256];
    join(where, sizeof(where), objpath, "histogram");
    if (!json_is_string(v))
        return fail(c, where, "expected an encoded histogram string (h2bh1:...)");
    int rc = h2b_hist_decode(json_string_value(v), out);
    if (rc == H2B_ERR_NOMEM)
        return rc;
    if (rc != H2B_OK)
        return fail(c, where, "not a valid encoded histogram (%s)", h2b_strerror(rc));
    return H2B_OK;
}

static int load_micro(const struct ctx *c, json_t *e, size_t i, struct h2b_rdata_micro *m)
{
    char p[64];
    snprintf(p, sizeof(p), "micro[%zu]", i);
    if (!json_is_object(e))
        return fail(c, p, "expected an object");
    int rc;
    if ((rc = get_str(c, e, p, "name", true, &m->name)) ||
        (rc = get_num(c, e, p, "ns_per_op", true, &m->ns_per_op)) ||
        (rc = get_num(c, e, p, "bytes_per_op", false, &m->bytes_per_op)) ||
        (rc = get_num(c, e, p, "allocs_per_op", false, &m->allocs_per_op)) ||
        (rc = get_num(c, e, p, "p50_ns", false, &m->p50_ns)) ||
        (rc = get_num(c, e, p, "p99_ns", false, &m->p99_ns)) ||
        (rc = get_num(c, e, p, "p999_ns", false, &m->p999_ns)) ||
        (rc = get_num(c, e, p, "instructions_per_op", false, &m->instructions_per_op)) ||
        (rc = get_int(c, e, p, "forks", false, 1, 0, &m->forks)) ||
        (rc = get_str(c, e, p, "note", false, &m->note)))
        return rc;
    json_t *forks = json_object_get(e, "p99_ns_forks");
    if (forks && !json_is_null(forks)) {
        char where[96];
        snprintf(where, sizeof(where), "%s.p99_ns_forks", p);
        if (!json_is_array(forks))
            return fail(c, where, "expected an array of numbers");
        size_t n = json_array_size(forks);
        m->p99_forks = calloc(n ? n : 1, sizeof(double));
        if (m->p99_forks == NULL)
            return H2B_ERR_NOMEM;
        for (size_t k = 0; k < n; k++) {
            json_t *v = json_array_get(forks, k);
            if (!json_is_number(v) || json_number_value(v) < 0) {
                snprintf(where, sizeof(where), "%s.p99_ns_forks[%zu]", p, k);
                return fail(c, where, "expected a non-negative number");
            }
            m->p99_forks[k] = json_number_value(v);
        }
        m->n_p99_forks = n;
    }
    return get_hist(c, e, p, &m->hist);
}

static int load_cell(const struct ctx *c, json_t *e, size_t i, struct h2b_rdata_cell *m)
{
    static const char *const lat_keys[H2B_LAT_N] = {"min", "p50", "p90", "p99", "p999", "max"};
    char p[64];
    snprintf(p, sizeof(p), "matrix[%zu]", i);
    if (!json_is_object(e))
        return fail(c, p, "expected an object");
    /* "failed" is overloaded by the contract: a count of failed requests in a measured cell,
     * true in a cell that could not be measured (then "reason" says why). */
    json_t *failed = json_object_get(e, "failed");
    if (failed && !json_is_boolean(failed) && !json_is_null(failed) && !json_is_number(failed)) {
        char where[96];
        snprintf(where, sizeof(where), "%s.failed", p);
        return fail(c, where, "expected a count of failed requests, or true for a failed cell");
    }
    m->failed = json_is_true(failed);
    bool need = !m->failed; /* a failed cell may lack its measurements */
    int rc;
    if ((rc = get_str(c, e, p, "target", true, &m->target)) ||
        (rc = get_str(c, e, p, "client", false, &m->client)) ||
        (rc = get_int(c, e, p, "connections", true, 1, 0, &m->connections)) ||
        (rc = get_int(c, e, p, "streams_requested", true, 1, 0, &m->streams_requested)) ||
        (rc = get_int(c, e, p, "streams_effective", true, 1, 0, &m->streams_effective)) ||
        (rc = get_int(c, e, p, "repeat", false, 0, 0, &m->repeat)) ||
        (rc = get_num(c, e, p, "requests", false, &m->requests)) ||
        (rc = get_num(c, e, p, "succeeded", false, &m->succeeded)) ||

        (rc = get_num(c, e, p, "errors", false, &m->errors)) ||
        (rc = get_num(c, e, p, "duration_s", false, &m->duration_s)) ||
        (rc = get_num(c, e, p, "req_per_s", need, &m->req_per_s)) ||
        (rc = get_num(c, e, p, "bytes_per_s", false, &m->bytes_per_s)) ||
        (rc = get_num(c, e, p, "client_cpu_s", false, &m->client_cpu_s)) ||
        (rc = get_num(c, e, p, "server_cpu_s", false, &m->server_cpu_s)) ||
        (rc = get_num(c, e, p, "server_rss_kib", false, &m->server_rss_kib)) ||
        (rc = get_str(c, e, p, "reason", false, &m->reason)) ||
        (rc = get_str(c, e, p, "note", false, &m->note)))
        return rc;
    m->failed_requests = json_is_number(failed) ? json_number_value(failed) : NAN;
    if (m->failed_requests < 0) {
        char where[96];
        snprintf(where, sizeof(where), "%s.failed", p);
        return fail(c, where, "expected a non-negative count");
    }
    if (m->failed && m->reason == NULL) {
        char where[96];
        snprintf(where, sizeof(where), "%s.reason", p);
        return fail(c, where, "missing; a failed cell must say why");
    }
    json_t *lat = json_object_get(e, "latency_ns");
    char lp[96];
    snprintf(lp, sizeof(lp), "%s.latency_ns", p);
    if (lat == NULL || json_is_null(lat)) {
        if (need)
            return fail(c, lp, "missing; expected an object");
        for (int k = 0; k < H2B_LAT_N; k++)
            m->latency_ns[k] = NAN;
    } else {
        if (!json_is_object(lat))
            return fail(c, lp, "expected an object");
        for (int k = 0; k < H2B_LAT_N; k++) {
            if ((rc = get_num(c, lat, lp, lat_keys[k], false, &m->latency_ns[k])))
                return rc;
        }
    }
    return get_hist(c, e, p, &m->hist);
}

static void results_free(struct h2b_rdata_results *r)
{
    for (size_t i = 0; i < r->n_micro; i++) {
        free(r->micro[i].p99_forks);
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

int h2b_rdata_results_load(const char *path, struct h2b_rdata_results **out, char *err,
                           size_t errlen)
{
    struct ctx c = {path, err, errlen};
    json_t *doc = NULL;
    int rc = load_doc(&c, &doc);
    if (rc)
        return rc;
    struct h2b_rdata_results *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        json_decref(doc);
        return H2B_ERR_NOMEM;
    }
    r->doc = doc;
    r->path = strdup(path);
    if (r->path == NULL) {
        rc = H2B_ERR_NOMEM;
        goto out_free;
    }
    json_t *tool = NULL, *scenario = NULL, *env = NULL;
    if ((rc = check_schema(&c, doc, RESULTS_SCHEMA)) ||
        (rc = get_str(&c, doc, "", "created", true, &r->created)) ||
        (rc = get_obj(&c, doc, "tool", &tool)) ||
        (rc = get_str(&c, tool, "tool", "name", true, &r->tool_name)) ||
        (rc = get_str(&c, tool, "tool", "version", true, &r->tool_version)) ||
        (rc = get_str(&c, tool, "tool", "git_commit", false, &r->git_commit)) ||
        (rc = get_obj(&c, doc, "scenario", &scenario)) ||
        (rc = get_str(&c, scenario, "scenario", "name", true, &r->scenario_name)) ||
        (rc = get_str(&c, scenario, "scenario", "file", false, &r->scenario_file)) ||
        (rc = get_str(&c, scenario, "scenario", "sha256", false, &r->scenario_sha256)) ||
        (rc = get_obj(&c, doc, "env", &env)))
        goto out_free;
    r->env = env;
    json_t *micro = json_object_get(doc, "micro"), *matrix = json_object_get(doc, "matrix");
    if (micro && !json_is_array(micro)) {
        rc = fail(&c, "micro", "expected an array");
        goto out_free;
    }
    if (matrix && !json_is_array(matrix)) {
        rc = fail(&c, "matrix", "expected an array");
        goto out_free;
    }
    if (micro == NULL && matrix == NULL) {
        rc = fail(&c, NULL, "neither \"micro\" nor \"matrix\": nothing to report");
        goto out_free;
    }
    size_t nm = json_array_size(micro), nc = json_array_size(matrix);
    r->micro = calloc(nm ? nm : 1, sizeof(*r->micro));
    r->cells = calloc(nc ? nc : 1, sizeof(*r->cells));
    if (r->micro == NULL || r->cells == NULL) {
        rc = H2B_ERR_NOMEM;
        goto out_free;
    }
    for (size_t i = 0; i < nm; i++) {
        r->n_micro = i + 1; /* so that a failure frees what this entry allocated */
        if ((rc = load_micro(&c, json_array_get(micro, i), i, &r->micro[i])))
            goto out_free;
    }
    for (size_t i = 0; i < nc; i++) {
        r->n_cells = i + 1;
        if ((rc = load_cell(&c, json_array_get(matrix, i), i, &r->cells[i])))
            goto out_free;
    }
    *out = r;
    return H2B_OK;

out_free:
    results_free(r);
    return rc;
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

void h2b_rdata_ceilings_del(struct h2b_rdata_ceilings *c)
{
    if (c == NULL)
        return;
    free(c->items);
    json_decref(c->doc);
    free(c->path);
    free(c);
}

int h2b_rdata_ceilings_load(const char *path, struct h2b_rdata_ceilings **out, char *err,
                            size_t errlen)
{
    struct ctx c = {path, err, errlen};
    json_t *doc = NULL;
    int rc = load_doc(&c, &doc);
    if (rc)
        return rc;
    struct h2b_rdata_ceilings *ce = calloc(1, sizeof(*ce));
    if (ce == NULL) {
        json_decref(doc);
        return H2B_ERR_NOMEM;
    }
    ce->doc = doc;
    ce->path = strdup(path);
    json_t *benches = NULL;
    if (ce->path == NULL) {
        rc = H2B_ERR_NOMEM;
        goto out_free;
    }
    if ((rc = check_schema(&c, doc, CEILINGS_SCHEMA)) ||
        (rc = get_obj(&c, doc, "benchmarks", &benches)))
        goto out_free;
    size_t total = 0;
    const char *name;
    json_t *metrics;
    json_object_foreach(benches, name, metrics)
    {
        if (!json_is_object(metrics)) {
            char where[256];
            join(where, sizeof(where), "benchmarks", name);
            rc = fail(&c, where, "expected an object of ceilings");
            goto out_free;
        }
        total += json_object_size(metrics);
    }
    ce->items = calloc(total ? total : 1, sizeof(*ce->items));
    if (ce->items == NULL) {
        rc = H2B_ERR_NOMEM;
        goto out_free;
    }
    json_object_foreach(benches, name, metrics)
    {
        const char *metric;
        json_t *lim;
        json_object_foreach(metrics, metric, lim)
        {
            char where[256];
            char bench[256];
            join(bench, sizeof(bench), "benchmarks", name);
            join(where, sizeof(where), bench, metric);
            struct h2b_rdata_ceiling *it = &ce->items[ce->n_items];
            if (!json_is_object(lim)) {
                rc = fail(&c, where, "expected {\"max\": N, \"why\": \"...\"}");
                goto out_free;
            }
            if ((rc = get_num(&c, lim, where, "max", true, &it->max)) ||
                (rc = get_str(&c, lim, where, "why", true, &it->why)))
                goto out_free;
            it->bench = name;
            it->metric = metric;
            ce->n_items++;
        }
    }
    *out = ce;
    return H2B_OK;

out_free:
    h2b_rdata_ceilings_del(ce);
    return rc;
}
