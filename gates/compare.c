/*
 * compare.c - A/B comparison of two results files (see compare.h): the rows, their status and
 * their view for the one A/B table (abtable.c lays them out, as it does ab's).
 *
 * Statistics: Welch's t interval (unequal variances, Welch-Satterthwaite degrees of freedom) at
 * 99.9%, as JMH reports its score error. The Student t quantile is found by bisection on the CDF,
 * which is the regularised incomplete beta function evaluated by its continued fraction (Lentz's
 * method); double precision is ample for a quantile printed with three digits.
 *
 * Rejected: a rank test (Mann-Whitney). With the 3 forks of the CI profile its smallest possible
 * p-value is 0.1, so it could never call anything significant at a useful level; the t interval
 * at least states the uncertainty honestly, and says "n/a" where there is only one sample.
 */
#include "gates/compare.h"
#include "gates/abtable.h"
#include "core/buf.h"
#include "core/error.h"
#include "gates/gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- statistics */

/* Continued fraction of the incomplete beta function (Numerical-Recipes-style Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

/* Regularised incomplete beta I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double h2b_compare_t_cdf(double t, double df)
{
    double tail = 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1 - tail : tail;
}

double h2b_compare_t_quantile(double p, double df)
{
    if (p == 0.5)
        return 0;
    if (p < 0.5)
        return -h2b_compare_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (h2b_compare_t_cdf(hi, df) < p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (h2b_compare_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

void h2b_compare_mean_var(const double *v, size_t n, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : 0;
}

int h2b_compare_welch(const double *a, size_t na, const double *b, size_t nb, double conf,
                      double *lo, double *hi)
{
    if (na < 2 || nb < 2 || !(conf > 0 && conf < 1))
        return H2B_ERR_RANGE;
    double ma, va, mb, vb;
    h2b_compare_mean_var(a, na, &ma, &va);
    h2b_compare_mean_var(b, nb, &mb, &vb);
    double diff = mb - ma;
    double sa = va / (double)na, sb = vb / (double)nb;
    double se = sqrt(sa + sb);
    if (se == 0) {
        /* Identical samples on both sides: the difference is known exactly. */
        *lo = *hi = diff;
        return H2B_OK;
    }
    double df = (sa + sb) * (sa + sb) / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
    double t = h2b_compare_t_quantile(1 - (1 - conf) / 2, df);
    *lo = diff - t * se;
    *hi = diff + t * se;
    return H2B_OK;
}

/* ---------------------------------------------------------------- rows */

/* Samples of one metric of one item on one side. */
struct side {
    double *v;
    size_t n, cap;
};

static int push(struct side *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        double *g = realloc(s->v, cap * sizeof(*g));
        if (!g)
            return H2B_ERR_NOMEM;
        s->v = g;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return H2B_OK;
}

struct metric_def {
    const char *name, *unit;
    bool exact, higher_better;
};

static int add_row(struct h2b_compare_report *r, const char *kind, const char *item,
                   const struct metric_def *m, const struct side *a, const struct side *b)
{
    struct h2b_compare_row *rows = realloc(r->rows, (r->count + 1) * sizeof(*rows));
    if (!rows)
        return H2B_ERR_NOMEM;
    r->rows = rows;
    struct h2b_compare_row *row = &rows[r->count];
    memset(row, 0, sizeof(*row));
    row->item = strdup(item);
    if (!row->item)
        return H2B_ERR_NOMEM;
    r->count++;
    row->kind = kind;
    row->metric = m->name;
    row->unit = m->unit;
    row->exact = m->exact;
    row->higher_better = m->higher_better;
    row->n_a = a->n;
    row->n_b = b->n;
    double va, vb;
    h2b_compare_mean_var(a->v, a->n, &row->a, &va);
    h2b_compare_mean_var(b->v, b->n, &row->b, &vb);
    if (row->a != 0) {
        row->has_ratio = true;
        row->ratio = row->b / row->a;
    }
    if (m->exact) {
        row->sig = fabs(row->b - row->a) > 1e-9 ? H2B_COMPARE_SIG_YES : H2B_COMPARE_SIG_NO;
        row->has_ci = true;
        row->ci_lo = row->ci_hi = row->b - row->a;
    } else if (h2b_compare_welch(a->v, a->n, b->v, b->n, 0.999, &row->ci_lo, &row->ci_hi) ==
               H2B_OK) {
        row->has_ci = true;
        row->sig = row->ci_lo > 0 || row->ci_hi < 0 ? H2B_COMPARE_SIG_YES : H2B_COMPARE_SIG_NO;
    } else {
        row->sig = H2B_COMPARE_SIG_NA;
    }
    return H2B_OK;
}

void h2b_compare_report_del(struct h2b_compare_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++)
        free(r->rows[i].item);
    free(r->rows);
    free(r->path_a);
    free(r->path_b);
    free(r);
}

enum { MICRO_NS, MICRO_P99, MICRO_BYTES, MICRO_ALLOCS, MICRO_METRICS };
static const struct metric_def micro_defs[MICRO_METRICS] = {
    [MICRO_NS] = {"ns/op", "ns", false, false},
    [MICRO_P99] = {"p99", "ns", false, false},
    [MICRO_BYTES] = {"B/op", "B", true, false},
    [MICRO_ALLOCS] = {"allocs/op", "", true, false},
};

/* Samples of micro metric k: per-fork values where the file has them, else the one value; none
 * when the metric is null. */
static int micro_samples(const struct h2b_gate_obs *o, int k, struct side *s)
{
    const double *forks = k == MICRO_NS ? o->ns_forks : k == MICRO_P99 ? o->p99_forks : NULL;
    size_t n = k == MICRO_NS ? o->n_ns_forks : k == MICRO_P99 ? o->n_p99_forks : 0;
    for (size_t i = 0; i < n; i++) {
        if (push(s, forks[i]) != H2B_OK)
            return H2B_ERR_NOMEM;
    }
    if (n)
        return H2B_OK;
    int m = k == MICRO_P99     ? H2B_METRIC_P99_NS
            : k == MICRO_BYTES ? H2B_METRIC_BYTES_PER_OP
                               : H2B_METRIC_ALLOCS_PER_OP;
    double v = k == MICRO_NS ? o->ns_per_op : o->has[m] ? o->value[m] : NAN;
    return isnan(v) ? H2B_OK : push(s, v);
}

static const struct h2b_gate_obs *find_micro(const struct h2b_gate_set *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++) {
        if (strcmp(s->obs[i].name, name) == 0)
            return &s->obs[i];
    }
    return NULL;
}

enum { CELL_RPS, CELL_P50, CELL_P99, CELL_METRICS };
static const struct metric_def cell_defs[CELL_METRICS] = {
    [CELL_RPS] = {"req/s", "", false, true},
    [CELL_P50] = {"latency p50", "ns", false, false},
    [CELL_P99] = {"latency p99", "ns", false, false},
};

static bool same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Cells match on target, client, connections and streams_requested (repeats differ). */
static bool same_cell(const struct h2b_results_cell *x, const struct h2b_results_cell *y)
{
    return same_str(x->target, y->target) && same_str(x->client, y->client) &&
           x->connections == y->connections && x->streams_requested == y->streams_requested;
}

static double cell_value(const struct h2b_results_cell *c, int k)
{
    return k == CELL_RPS ? c->req_per_s : k == CELL_P50 ? c->latency_ns.p50 : c->latency_ns.p99;
}

/* Every repeat of cell key in d's matrix, as samples of metric k (null values skipped). */
static int cell_samples(const struct h2b_results_doc *d, const struct h2b_results_cell *key, int k,
                        struct side *s)
{
    for (size_t i = 0; i < d->matrix.n; i++) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(d, i);
        double v = cell_value(c, k);
        if (same_cell(c, key) && !isnan(v) && push(s, v) != H2B_OK)
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

/* True when d's matrix has a cell like key among its first `before` entries. */
static bool has_cell(const struct h2b_results_doc *d, const struct h2b_results_cell *key,
                     size_t before)
{
    for (size_t i = 0; i < before && i < d->matrix.n; i++) {
        if (same_cell(h2b_results_doc_cell(d, i), key))
            return true;
    }
    return false;
}

static int compare_micro(const struct h2b_gate_set *a, const struct h2b_gate_set *b,
                         struct h2b_compare_report *r, struct side *sa, struct side *sb)
{
    int rv = H2B_OK;
    for (size_t i = 0; i < a->count && rv == H2B_OK; i++) {
        const struct h2b_gate_obs *ma = &a->obs[i], *mb = find_micro(b, ma->name);
        if (find_micro(a, ma->name) != ma)
            continue; /* a repeated name: the first entry speaks for it */
        if (!mb) {
            r->only_a++;
            continue;
        }
        for (int k = 0; k < MICRO_METRICS && rv == H2B_OK; k++) {
            sa->n = sb->n = 0;
            rv = micro_samples(ma, k, sa);
            if (rv == H2B_OK)
                rv = micro_samples(mb, k, sb);
            if (rv == H2B_OK && sa->n && sb->n)
                rv = add_row(r, "micro", ma->name, &micro_defs[k], sa, sb);
        }
    }
    for (size_t i = 0; i < b->count; i++) {
        if (!find_micro(a, b->obs[i].name) && find_micro(b, b->obs[i].name) == &b->obs[i])
            r->only_b++;
    }
    return rv;
}

static int compare_matrix(const struct h2b_results_doc *ma, const struct h2b_results_doc *mb,
                          struct h2b_compare_report *r, struct side *sa, struct side *sb)
{
    int rv = H2B_OK;
    for (size_t i = 0; i < ma->matrix.n; i++) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(ma, i);
        if (has_cell(ma, c, i))
            continue; /* another repeat of a cell already compared */
        if (!has_cell(mb, c, mb->matrix.n)) {
            r->only_a++;
            continue;
        }
        char item[512];
        snprintf(item, sizeof(item), "%s %s c=%.0f s=%.0f", c->target, c->client, c->connections,
                 c->streams_requested);
        for (int k = 0; k < CELL_METRICS && rv == H2B_OK; k++) {
            sa->n = sb->n = 0;
            rv = cell_samples(ma, c, k, sa);
            if (rv == H2B_OK)
                rv = cell_samples(mb, c, k, sb);
            if (rv == H2B_OK && sa->n && sb->n)
                rv = add_row(r, "matrix", item, &cell_defs[k], sa, sb);
        }
        if (rv != H2B_OK)
            return rv;
    }
    for (size_t i = 0; i < mb->matrix.n; i++) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(mb, i);
        if (!has_cell(mb, c, i) && !has_cell(ma, c, ma->matrix.n))
            r->only_b++;
    }
    return rv;
}

int h2b_compare_files(const char *path_a, const char *path_b, struct h2b_compare_report **out,
                      struct h2b_diag *diag)
{
    struct h2b_results_doc *da = NULL, *db = NULL;
    struct h2b_gate_set *sa = NULL, *sb = NULL;
    struct h2b_compare_report *r = NULL;
    struct side xa = {0}, xb = {0};
    int rv = h2b_results_doc_load(path_a, &da, NULL, diag);
    if (rv == H2B_OK)
        rv = h2b_results_doc_load(path_b, &db, NULL, diag);
    if (rv == H2B_OK)
        rv = h2b_gate_set_new(&sa);
    if (rv == H2B_OK)
        rv = h2b_gate_set_new(&sb);
    if (rv == H2B_OK)
        rv = h2b_gate_set_add(sa, path_a, da);
    if (rv == H2B_OK)
        rv = h2b_gate_set_add(sb, path_b, db);
    if (rv != H2B_OK)
        goto out;
    r = calloc(1, sizeof(*r));
    if (!r || !(r->path_a = strdup(path_a)) || !(r->path_b = strdup(path_b))) {
        rv = H2B_ERR_NOMEM;
        goto out;
    }
    rv = compare_micro(sa, sb, r, &xa, &xb);
    if (rv == H2B_OK)
        rv = compare_matrix(da, db, r, &xa, &xb);
    if (rv == H2B_OK) {
        *out = r;
        r = NULL;
    }
out:
    free(xa.v);
    free(xb.v);
    h2b_compare_report_del(r);
    h2b_gate_set_del(sa);
    h2b_gate_set_del(sb);
    h2b_results_doc_del(da);
    h2b_results_doc_del(db);
    return rv;
}
/* ---------------------------------------------------------------- rendering */

enum h2b_verdict h2b_compare_row_status(const struct h2b_compare_row *row)
{
    if (row->sig == H2B_COMPARE_SIG_NA)
        return H2B_VERDICT_NA;
    if (row->sig == H2B_COMPARE_SIG_NO)
        return H2B_VERDICT_SAME;
    bool worse = row->higher_better ? row->b < row->a : row->b > row->a;
    if (row->exact)
        return worse ? H2B_VERDICT_MORE : H2B_VERDICT_LESS;
    return worse ? H2B_VERDICT_SLOWER : H2B_VERDICT_FASTER;
}

void h2b_compare_row_view(const struct h2b_compare_row *row, struct h2b_abtable_row *v, char *note,
                          size_t n)
{
    memset(v, 0, sizeof(*v));
    v->status = h2b_compare_row_status(row);
    v->bench = row->item;
    v->metric = row->metric;
    v->unit = strcmp(row->unit, "ns") == 0 ? H2B_ABTABLE_NS
              : row->higher_better         ? H2B_ABTABLE_RATE
                                           : H2B_ABTABLE_COUNT;
    v->base = row->a;
    v->head = row->b;
    v->note = note;
    bool micro = strcmp(row->kind, "micro") == 0;
    const char *samples = micro ? (row->n_a == 1 && row->n_b == 1 ? "fork" : "forks")
                                : (row->n_a == 1 && row->n_b == 1 ? "repeat" : "repeats");
    if (row->exact) {
        snprintf(note, n, "%s",
                 row->sig == H2B_COMPARE_SIG_YES ? "exact counts differ" : "exact counts, equal");
    } else if (row->has_ci) {
        v->interval = H2B_ABTABLE_DIFF;
        v->lo = row->ci_lo;
        v->hi = row->ci_hi;
        snprintf(note, n, "99.9%% CI of head − base, %zu+%zu %s", row->n_a, row->n_b, samples);
    } else {
        snprintf(note, n, "%zu+%zu %s: no interval, needs 2 a side", row->n_a, row->n_b, samples);
    }
}

/* The rows of one kind ("micro", "matrix", or NULL for all) as views; their notes in notes.
 * Returns how many, or (size_t)-1 when out of memory (nothing to free then). */
#define NOTE_LEN 96
static size_t views(const struct h2b_compare_report *r, const char *kind,
                    struct h2b_abtable_row **out, char (**notes)[NOTE_LEN])
{
    size_t cap = r->count ? r->count : 1, n = 0;
    *out = calloc(cap, sizeof(**out));
    *notes = calloc(cap, sizeof(**notes));
    if (!*out || !*notes) {
        free(*out);
        free(*notes);
        return (size_t)-1;
    }
    for (size_t i = 0; i < r->count; i++) {
        if (kind && strcmp(r->rows[i].kind, kind) != 0)
            continue;
        h2b_compare_row_view(&r->rows[i], &(*out)[n], (*notes)[n], NOTE_LEN);
        n++;
    }
    return n;
}

int h2b_compare_render_tables(struct h2b_buf *b, const struct h2b_compare_report *r)
{
    static const char *const kinds[][2] = {{"micro", "Component benchmarks"},
                                           {"matrix", "End-to-end cells"}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        struct h2b_abtable_row *v;
        char(*notes)[NOTE_LEN];
        size_t n = views(r, kinds[k][0], &v, &notes);
        if (n == (size_t)-1)
            return H2B_ERR_NOMEM;
        if (n) {
            h2b_buf_printf(b, "\n### %s\n\n", kinds[k][1]);
            h2b_abtable_md(b, v, n);
        }
        free(v);
        free(notes);
    }
    if (r->only_a || r->only_b)
        h2b_buf_printf(b, "\nOnly in base: %zu benchmarks or cells; only in head: %zu.\n",
                       r->only_a, r->only_b);
    return H2B_OK;
}

int h2b_compare_render_md(const struct h2b_compare_report *r, char **out)
{
    struct h2b_buf b = {0};
    size_t worse = 0, better = 0;
    for (size_t i = 0; i < r->count; i++) {
        enum h2b_verdict v = h2b_compare_row_status(&r->rows[i]);
        worse += v == H2B_VERDICT_SLOWER || v == H2B_VERDICT_MORE;
        better += v == H2B_VERDICT_FASTER || v == H2B_VERDICT_LESS;
    }
    h2b_buf_printf(&b,
                   "## h2bench compare: %zu significantly worse, %zu significantly better, "
                   "%zu rows\n\n",
                   worse, better, r->count);
    h2b_buf_puts(&b, "Base (A) ");
    h2b_buf_md_code(&b, r->path_a);
    h2b_buf_puts(&b, " against head (B) ");
    h2b_buf_md_code(&b, r->path_b);
    h2b_buf_printf(&b, ". %s\n", h2b_compare_legend);
    int rv = h2b_compare_render_tables(&b, r);
    if (rv != H2B_OK) {
        h2b_buf_free(&b);
        return rv;
    }
    return h2b_buf_finish(&b, out);
}

int h2b_compare_render_text(const struct h2b_compare_report *r, char **out)
{
    struct h2b_buf b = {0};
    struct h2b_abtable_row *v;
    char(*notes)[NOTE_LEN];
    size_t n = views(r, NULL, &v, &notes);
    if (n == (size_t)-1)
        return H2B_ERR_NOMEM;
    h2b_buf_puts(&b, "base (A): ");
    h2b_buf_term(&b, r->path_a);
    h2b_buf_puts(&b, "\nhead (B): ");
    h2b_buf_term(&b, r->path_b);
    h2b_buf_printf(&b, "\n%s\n\n", h2b_compare_legend);
    h2b_abtable_text(&b, v, n);
    free(v);
    free(notes);
    h2b_buf_printf(&b, "\n%zu rows; %zu benchmarks/cells only in A, %zu only in B\n", r->count,
                   r->only_a, r->only_b);
    return h2b_buf_finish(&b, out);
}

const char h2b_compare_legend[] =
    "Ratio is head / base; values are means over forks or repeats. A row is slower or faster "
    "(more or less, for exact counts) when the 99.9% Welch confidence interval of head − base "
    "excludes zero: significant, not yet a regression (what fails is h2bench ab's verdict, "
    "a threshold on the interval of the median ratio); with fewer than two values a side "
    "there is no interval (n/a). "
    "Allocation counts are exact, so any difference in them is real.";
