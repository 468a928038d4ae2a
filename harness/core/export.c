/*
 * export.c - BMF, github-action-benchmark and Google Benchmark JSON exports of h2bench
 * documents (see export.h).
 *
 * Approach: one pass over a document builds a list of series (a benchmark or a matrix cell key)
 * each holding named metrics with a value and optional bounds; the two writers only format that
 * list. So both formats always carry the same numbers, and a new metric is added in one place.
 * Repeats of a cell are folded into one series (median, min, max): trackers chart one line per
 * name, and BMF rejects duplicate names.
 *
 * Input goes through the results model (results.h): no results key is spelt here.
 *
 * Google Benchmark JSON (h2b_export_gbench) is built from the same list: its rows need the
 * values behind the median (a row per fork or repeat, so compare.py's U test has samples), so
 * a series keeps its micro forks and a metric its repeats. A cell's time is ns per request
 * (1e9 / req/s): Google Benchmark compares times, and a slower server is a longer time.
 *
 * Rejected: exporting from the runner's in-memory structs (`micro --format gbench` does that,
 * because it has each fork's CPU time and iterations, which results files do not keep); a
 * file-based exporter serves micro, run and load alike, and a results file written yesterday
 * can be exported today.
 */
#include "core/export.h"
#include "core/error.h"
#include "core/results.h"
#include "core/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 256
#define MAX_METRICS 24
#define MAX_REPEATS 64

enum direction { SMALLER, BIGGER };

struct metric {
    char slug[64];    /* BMF measure: "latency" (arrays, not pointers: series move on realloc) */
    char label[64];   /* GAB name suffix: "ns/op" */
    const char *unit; /* GAB unit (a string literal) */
    enum direction dir;
    double v[MAX_REPEATS];
    size_t n;
    double lo, hi; /* bounds from forks (micro); NAN: from the repeats, or none */
};

struct series {
    char name[NAME_MAX_LEN];
    struct metric m[MAX_METRICS];
    size_t nm;
    char extra[128];
    bool cell;                                          /* a matrix cell (else a micro benchmark) */
    double fork_ns[MAX_REPEATS], fork_p99[MAX_REPEATS]; /* micro: per fork, for gbench's rows */
    size_t n_fork_ns, n_fork_p99;
};

struct list {
    struct series *s;
    size_t n, cap;
};

static struct series *series_get(struct list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->s[i].name, name) == 0)
            return &l->s[i];
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct series *s = realloc(l->s, cap * sizeof(*s));
        if (!s)
            return NULL;
        l->s = s;
        l->cap = cap;
    }
    struct series *s = &l->s[l->n++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    return s;
}

static struct metric *metric_get(struct series *s, const char *slug, const char *label,
                                 const char *unit, enum direction dir)
{
    for (size_t i = 0; i < s->nm; i++) {
        if (strcmp(s->m[i].slug, slug) == 0)
            return &s->m[i];
    }
    if (s->nm == MAX_METRICS)
        return NULL;
    struct metric *m = &s->m[s->nm++];
    memset(m, 0, sizeof(*m));
    snprintf(m->slug, sizeof(m->slug), "%s", slug);
    snprintf(m->label, sizeof(m->label), "%s", label);
    m->unit = unit;
    m->dir = dir;
    m->lo = m->hi = NAN;
    return m;
}

/* Adds a value (skipped when v is NAN: null means not measured). */
static void add(struct series *s, const char *slug, const char *label, const char *unit,
                enum direction dir, double v)
{
    if (isnan(v))
        return;
    struct metric *m = metric_get(s, slug, label, unit, dir);
    if (m && m->n < MAX_REPEATS)
        m->v[m->n++] = v;
}

/* Bounds of a micro metric from its per-fork values. */
static void bounds(struct series *s, const char *slug, const struct h2b_model_nums *forks)
{
    struct metric *m = NULL;
    for (size_t i = 0; i < s->nm; i++) {
        if (strcmp(s->m[i].slug, slug) == 0)
            m = &s->m[i];
    }
    if (!m || forks->n < 2)
        return;
    for (size_t i = 0; i < forks->n; i++) {
        double x = forks->v[i];
        if (i == 0 || x < m->lo)
            m->lo = x;
        if (i == 0 || x > m->hi)
            m->hi = x;
    }
}

static int add_micro(struct list *l, const struct h2b_results_micro *e)
{
    if (!e->name || e->error)
        return H2B_OK; /* a failed benchmark has no numbers to track */
    struct series *s = series_get(l, e->name);
    if (!s)
        return H2B_ERR_NOMEM;
    add(s, "latency", "ns/op", "ns/op", SMALLER, e->ns_per_op);
    bounds(s, "latency", &e->fork_ns_per_op);
    add(s, "p99-latency", "p99", "ns", SMALLER, e->p99_ns);
    bounds(s, "p99-latency", &e->fork_p99_ns);
    add(s, "bytes-per-op", "B/op", "B/op", SMALLER, e->bytes_per_op);
    add(s, "allocs-per-op", "allocs/op", "allocs/op", SMALLER, e->allocs_per_op);
    add(s, "instructions", "instructions/op", "instructions/op", SMALLER, e->instructions_per_op);
    if (e->ns_per_op > 0)
        add(s, "throughput", "ops/s", "ops/s", BIGGER, 1e9 / e->ns_per_op);
    if (!isnan(e->forks))
        snprintf(s->extra, sizeof(s->extra), "forks: %.0f", e->forks);
    for (size_t i = 0; i < e->fork_ns_per_op.n && s->n_fork_ns < MAX_REPEATS; i++)
        s->fork_ns[s->n_fork_ns++] = e->fork_ns_per_op.v[i];
    for (size_t i = 0; i < e->fork_p99_ns.n && s->n_fork_p99 < MAX_REPEATS; i++)
        s->fork_p99[s->n_fork_p99++] = e->fork_p99_ns.v[i];
    return H2B_OK;
}

static int add_cell(struct list *l, const struct h2b_results_cell *c)
{
    /* A failed or skipped cell's numbers, when it has any, are those of a partial run: not
     * tracked, as a failed micro benchmark's are not. */
    if (!h2b_results_cell_ok(c))
        return H2B_OK;
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof(name), "%s %s c=%.0f s=%.0f", c->target ? c->target : "?",
             c->client ? c->client : "?", c->connections, c->streams_requested);
    struct series *s = series_get(l, name);
    if (!s)
        return H2B_ERR_NOMEM;
    s->cell = true;
    add(s, "throughput", "req/s", "req/s", BIGGER, c->req_per_s);
    add(s, "p50-latency", "p50", "ns", SMALLER, c->latency_ns.p50);
    add(s, "p99-latency", "p99", "ns", SMALLER, c->latency_ns.p99);
    const struct h2b_results_budgets *b = &c->budgets;
    const struct {
        const char *slug, *label, *unit;
        double v;
    } budgets[] = {
        {"allocs-per-request", "allocs/request", "allocs/request", b->allocs_per_request},
        {"bytes-per-request", "B/request", "B/request", b->bytes_per_request},
        {"reads-per-request", "reads/request", "reads/request", b->reads_per_request},
        {"writes-per-request", "writes/request", "writes/request", b->writes_per_request},
        {"instructions-per-request", "instructions/request", "instructions/request",
         !isnan(b->instructions_per_request) ? b->instructions_per_request
                                             : c->server_instructions_per_request},
        {"rss-per-connection-kib", "RSS KiB/connection", "KiB", b->rss_per_connection_kib},
    };
    for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++)
        add(s, budgets[i].slug, budgets[i].label, budgets[i].unit, SMALLER, budgets[i].v);
    return H2B_OK;
}

static int collect(const json_t *doc, struct list *l)
{
    if (!json_is_object(doc))
        return H2B_ERR_INVAL;
    const json_t *micro = json_object_get(doc, "micro"), *matrix = json_object_get(doc, "matrix");
    struct h2b_diag d;
    char path[64];
    int rv = H2B_OK;
    if (json_is_array(micro) || json_is_array(matrix)) {
        for (size_t i = 0; rv == H2B_OK && i < json_array_size(micro); i++) {
            struct h2b_results_micro e;
            h2b_json_path_index(path, sizeof(path), "micro", i);
            rv = h2b_results_micro_from_json(json_array_get(micro, i), NULL, path, 0, &e, &d);
            if (rv == H2B_OK)
                rv = add_micro(l, &e);
            h2b_results_micro_free(&e);
        }
        for (size_t i = 0; rv == H2B_OK && i < json_array_size(matrix); i++) {
            struct h2b_results_cell c;
            h2b_json_path_index(path, sizeof(path), "matrix", i);
            rv = h2b_results_cell_from_json(json_array_get(matrix, i), NULL, path, 0, &c, &d);
            if (rv == H2B_OK)
                rv = add_cell(l, &c);
            h2b_results_cell_free(&c);
        }
        return rv == H2B_ERR_PARSE ? H2B_ERR_INVAL : rv;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!schema || strcmp(schema, H2B_RESULTS_LOAD_SCHEMA) != 0)
        return H2B_ERR_INVAL;
    struct h2b_results_load ld;
    rv = h2b_results_load_from_json(doc, NULL, &ld, &d);
    if (rv == H2B_OK)
        rv = add_cell(l, &ld.cell);
    h2b_results_load_free(&ld);
    return rv == H2B_ERR_PARSE ? H2B_ERR_INVAL : rv;
}

/* Folds the repeats: median; bounds min/max over repeats unless fork bounds are set. */
static void fold(struct metric *m, double *value, double *lo, double *hi)
{
    double v[MAX_REPEATS];
    *value = h2b_stats_median_of(m->v, m->n, v); /* v: the repeats, sorted */
    if (!isnan(m->lo)) {
        *lo = m->lo < *value ? m->lo : *value; /* a tracker wants lo <= value <= hi */
        *hi = m->hi > *value ? m->hi : *value;
    } else if (m->n >= 2) {
        *lo = v[0];
        *hi = v[m->n - 1];
    } else {
        *lo = *hi = NAN;
    }
}

int h2b_export_bmf(const json_t *doc, json_t **out)
{
    struct list l = {0};
    int rv = collect(doc, &l);
    json_t *root = rv == H2B_OK ? json_object() : NULL;
    if (rv == H2B_OK && !root)
        rv = H2B_ERR_NOMEM;
    for (size_t i = 0; i < l.n && rv == H2B_OK; i++) {
        json_t *bench = json_object();
        if (!bench || json_object_set_new(root, l.s[i].name, bench) != 0) {
            rv = H2B_ERR_NOMEM;
            break;
        }
        for (size_t k = 0; k < l.s[i].nm; k++) {
            struct metric *m = &l.s[i].m[k];
            double v, lo, hi;
            fold(m, &v, &lo, &hi);
            json_t *o = isnan(lo) ? json_pack("{s:f}", "value", v)
                                  : json_pack("{s:f, s:f, s:f}", "value", v, "lower_value", lo,
                                              "upper_value", hi);
            if (!o || json_object_set_new(bench, m->slug, o) != 0)
                rv = H2B_ERR_NOMEM;
        }
    }
    free(l.s);
    if (rv != H2B_OK) {
        json_decref(root);
        return rv;
    }
    *out = root;
    return H2B_OK;
}

int h2b_export_gab(const json_t *doc, bool bigger, json_t **out)
{
    struct list l = {0};
    int rv = collect(doc, &l);
    json_t *arr = rv == H2B_OK ? json_array() : NULL;
    if (rv == H2B_OK && !arr)
        rv = H2B_ERR_NOMEM;
    for (size_t i = 0; i < l.n && rv == H2B_OK; i++) {
        for (size_t k = 0; k < l.s[i].nm && rv == H2B_OK; k++) {
            struct metric *m = &l.s[i].m[k];
            if ((m->dir == BIGGER) != bigger)
                continue;
            double v, lo, hi;
            fold(m, &v, &lo, &hi);
            char name[NAME_MAX_LEN + 80], range[64], extra[192];
            snprintf(name, sizeof(name), "%s - %s", l.s[i].name, m->label);
            json_t *o = json_pack("{s:s, s:s, s:f}", "name", name, "unit", m->unit, "value", v);
            if (!o) {
                rv = H2B_ERR_NOMEM;
                break;
            }
            if (!isnan(lo)) {
                double half = (hi - lo) / 2;
                snprintf(range, sizeof(range), "± %.6g", half);
                json_object_set_new(o, "range", json_string(range));
            }
            if (m->n > 1)
                snprintf(extra, sizeof(extra), "%s%smedian of %zu repeats", l.s[i].extra,
                         l.s[i].extra[0] ? "\n" : "", m->n);
            else
                snprintf(extra, sizeof(extra), "%s", l.s[i].extra);
            if (extra[0])
                json_object_set_new(o, "extra", json_string(extra));
            if (json_array_append_new(arr, o) != 0)
                rv = H2B_ERR_NOMEM;
        }
    }
    free(l.s);
    if (rv != H2B_OK) {
        json_decref(arr);
        return rv;
    }
    *out = arr;
    return H2B_OK;
}

/* ---- Google Benchmark JSON ---------------------------------------------------------------- */

static const struct metric *metric_find(const struct series *s, const char *slug)
{
    for (size_t i = 0; i < s->nm; i++) {
        if (strcmp(s->m[i].slug, slug) == 0)
            return &s->m[i];
    }
    return NULL;
}

/* The fields every row of a family has. */
static json_t *gb_row(const char *name, const char *run_name, size_t family, const char *run_type,
                      size_t reps, double ns)
{
    return json_pack("{s:s, s:I, s:i, s:s, s:s, s:I, s:i, s:i, s:f, s:f, s:s}", "name", name,
                     "family_index", (json_int_t)family, "per_family_instance_index", 0, "run_name",
                     run_name, "run_type", run_type, "repetitions", (json_int_t)reps, "threads", 1,
                     "iterations", 1, "real_time", ns, "cpu_time", ns, "time_unit", "ns");
}

/* Mean, median and sample standard deviation of v[0..n), n >= 1, into out[0..3). */
static void aggregates(const double *v, size_t n, double out[3])
{
    double tmp[MAX_REPEATS], var;
    h2b_stats_mean_var(v, n, &out[0], &var);
    out[1] = h2b_stats_median_of(v, n, tmp);
    out[2] = sqrt(var);
}

/* One benchmark family as Google Benchmark writes repetitions: a row per value (fork or
 * repeat), then, with two or more, its mean, median and stddev rows. rate, when not NULL,
 * gives each row an items_per_second counter (rate[i] for row i; the aggregates get its
 * aggregate). Extra counters (B/op ...) go on every row. */
static int gb_family(json_t *list, const char *name, size_t family, const double *ns,
                     const double *rate, size_t n, const json_t *counters)
{
    for (size_t i = 0; i < n; i++) {
        json_t *row = gb_row(name, name, family, "iteration", n, ns[i]);
        if (!row || json_object_set_new(row, "repetition_index", json_integer((json_int_t)i)) ||
            (rate && json_object_set_new(row, "items_per_second", json_real(rate[i]))) ||
            (counters && json_object_update(row, (json_t *)counters)) ||
            json_array_append_new(list, row)) {
            json_decref(row);
            return H2B_ERR_NOMEM;
        }
    }
    if (n < 2)
        return H2B_OK;
    const char *agg[] = {"mean", "median", "stddev"};
    double t[3], r[3] = {NAN, NAN, NAN};
    aggregates(ns, n, t);
    if (rate)
        aggregates(rate, n, r);
    for (int k = 0; k < 3; k++) {
        char aname[NAME_MAX_LEN + 16];
        snprintf(aname, sizeof(aname), "%s_%s", name, agg[k]);
        json_t *row = gb_row(aname, name, family, "aggregate", n, t[k]);
        if (!row || json_object_set_new(row, "aggregate_name", json_string(agg[k])) ||
            json_object_set_new(row, "aggregate_unit", json_string("time")) ||
            (rate && json_object_set_new(row, "items_per_second", json_real(r[k]))) ||
            json_array_append_new(list, row)) {
            json_decref(row);
            return H2B_ERR_NOMEM;
        }
    }
    return H2B_OK;
}

/* A micro benchmark: NAME (ns/op per fork) and NAME/p99 (p99 ns per fork), the exact counts as
 * counters on NAME's rows. */
static int gb_micro(json_t *list, const struct series *s, size_t *family)
{
    const struct metric *lat = metric_find(s, "latency"), *p99 = metric_find(s, "p99-latency");
    json_t *counters = json_object();
    if (!counters)
        return H2B_ERR_NOMEM;
#define MKEY(member) H2B_MODEL_KEY(h2b_results_micro_model, struct h2b_results_micro, member)
    const char *counted[][2] = {{"bytes-per-op", MKEY(bytes_per_op)},
                                {"allocs-per-op", MKEY(allocs_per_op)},
                                {"instructions", MKEY(instructions_per_op)}};
#undef MKEY
    int rv = H2B_OK;
    for (size_t i = 0; i < 3 && rv == H2B_OK; i++) {
        const struct metric *m = metric_find(s, counted[i][0]);
        if (m && m->n > 0 && json_object_set_new(counters, counted[i][1], json_real(m->v[0])))
            rv = H2B_ERR_NOMEM;
    }
    if (rv == H2B_OK && lat && lat->n > 0)
        rv = s->n_fork_ns
                 ? gb_family(list, s->name, (*family)++, s->fork_ns, NULL, s->n_fork_ns, counters)
                 : gb_family(list, s->name, (*family)++, lat->v, NULL, 1, counters);
    if (rv == H2B_OK && p99 && p99->n > 0) {
        char name[NAME_MAX_LEN + 8];
        snprintf(name, sizeof(name), "%s/p99", s->name);
        rv = s->n_fork_p99
                 ? gb_family(list, name, (*family)++, s->fork_p99, NULL, s->n_fork_p99, NULL)
                 : gb_family(list, name, (*family)++, p99->v, NULL, 1, NULL);
    }
    json_decref(counters);
    return rv;
}

/* A matrix cell: NAME (ns per request = 1 / req/s, one row per repeat, items_per_second the
 * req/s) and NAME/p99 (p99 latency per repeat). */
static int gb_cell(json_t *list, const struct series *s, size_t *family)
{
    const struct metric *rps = metric_find(s, "throughput"), *p99 = metric_find(s, "p99-latency");
    int rv = H2B_OK;
    if (rps && rps->n > 0) {
        double ns[MAX_REPEATS], rate[MAX_REPEATS];
        size_t n = 0;
        for (size_t i = 0; i < rps->n; i++) {
            if (rps->v[i] > 0) {
                rate[n] = rps->v[i];
                ns[n++] = 1e9 / rps->v[i];
            }
        }
        if (n > 0)
            rv = gb_family(list, s->name, (*family)++, ns, rate, n, NULL);
    }
    if (rv == H2B_OK && p99 && p99->n > 0) {
        char name[NAME_MAX_LEN + 8];
        snprintf(name, sizeof(name), "%s/p99", s->name);
        rv = gb_family(list, name, (*family)++, p99->v, NULL, p99->n, NULL);
    }
    return rv;
}

int h2b_export_gbench(const json_t *doc, json_t **out)
{
    struct list l = {0};
    int rv = collect(doc, &l);
    json_t *root = NULL, *list = NULL;
    if (rv == H2B_OK) {
        const json_t *created = json_object_get(doc, "created");
        root = json_pack("{s:{s:s, s:s, s:s, s:i, s:i, s:[], s:[], s:s, s:i}}", "context", "date",
                         json_is_string(created) ? json_string_value(created) : "", "host_name", "",
                         "executable", "h2bench export", "num_cpus", 0, "mhz_per_cpu", 0, "caches",
                         "load_avg", "library_build_type", "release", "json_schema_version", 1);
        list = json_array();
        if (!root || !list || json_object_set(root, "benchmarks", list))
            rv = H2B_ERR_NOMEM;
    }
    size_t family = 0;
    for (size_t i = 0; i < l.n && rv == H2B_OK; i++)
        rv = l.s[i].cell ? gb_cell(list, &l.s[i], &family) : gb_micro(list, &l.s[i], &family);
    json_decref(list);
    free(l.s);
    if (rv != H2B_OK) {
        json_decref(root);
        return rv;
    }
    *out = root;
    return H2B_OK;
}
