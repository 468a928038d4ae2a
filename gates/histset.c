/*
 * histset.c - series of runs for `h2bench history` and `gate --history` (see histset.h).
 *
 * Approach: every input becomes store lines (struct h2b_results_hline: series, fingerprint,
 * direction, commit, time, value) before it becomes a point, so a results file and a line of the
 * store take the same path into a series. The metrics of a run are the exports' (h2b_export_gab,
 * both directions): a metric the exports track is tracked here, named the same way, and no
 * results key is spelt in this file. Each series is then sorted and handed to the detector.
 *
 * Rejected: refusing a set that mixes fingerprints. Runs from a laptop and from CI in one
 * directory are normal; separate series say what happened without losing either.
 */
#include "gates/histset.h"
#include "core/error.h"
#include "core/export.h"
#include "core/fs.h"
#include "core/results.h"
#include "gates/ceilings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_SERIES 100000
#define MAX_POINTS 1000000
#define STORE_MAX (256u << 20)

void h2b_histset_init(struct h2b_histset *h)
{
    memset(h, 0, sizeof(*h));
}

static void series_free(struct h2b_histset_series *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->p[i].commit);
        free(s->p[i].created);
    }
    free(s->p);
    free(s->name);
    free(s->fingerprint);
    free(s->cps);
}

void h2b_histset_free(struct h2b_histset *h)
{
    for (size_t i = 0; i < h->n; i++)
        series_free(&h->s[i]);
    free(h->s);
    h2b_histset_init(h);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Adds one line's point to its series. */
static int add_line(struct h2b_histset *h, const struct h2b_results_hline *l)
{
    struct h2b_histset_series *s = NULL;
    for (size_t i = h->n; i-- > 0;) {
        if (strcmp(h->s[i].name, l->series) == 0 &&
            strcmp(h->s[i].fingerprint, l->fingerprint) == 0 &&
            h->s[i].bigger == (l->bigger == 1)) {
            s = &h->s[i];
            break;
        }
    }
    if (!s) {
        if (h->n == MAX_SERIES)
            return H2B_ERR_RANGE;
        if (h->n == h->cap) {
            size_t cap = h->cap ? 2 * h->cap : 32;
            struct h2b_histset_series *v = realloc(h->s, cap * sizeof(*v));
            if (!v)
                return H2B_ERR_NOMEM;
            h->s = v;
            h->cap = cap;
        }
        s = &h->s[h->n];
        memset(s, 0, sizeof(*s));
        s->name = dup_or_empty(l->series);
        s->fingerprint = dup_or_empty(l->fingerprint);
        s->bigger = l->bigger == 1;
        if (!s->name || !s->fingerprint) {
            series_free(s);
            return H2B_ERR_NOMEM;
        }
        h->n++;
        h->hint = h->n;
    }
    if (s->n == MAX_POINTS)
        return H2B_ERR_RANGE;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct h2b_histset_point *v = realloc(s->p, cap * sizeof(*v));
        if (!v)
            return H2B_ERR_NOMEM;
        s->p = v;
        s->cap = cap;
    }
    struct h2b_histset_point *p = &s->p[s->n];
    p->commit = dup_or_empty(l->commit);
    p->created = dup_or_empty(l->created);
    p->value = l->value;
    if (!p->commit || !p->created) {
        free(p->commit);
        free(p->created);
        return H2B_ERR_NOMEM;
    }
    s->n++;
    return H2B_OK;
}

/* "cpu_model, N cpus, kernel, compiler, build_type, nghttp2 V": the fields that decide
 * whether two measurements are comparable (gates/ceilings.h). */
static int fingerprint_text(const struct h2b_results_env *env, char **out)
{
    struct h2b_fingerprint fp; /* a view of env: nothing to free */
    h2b_fingerprint_view(env, &fp);
    struct h2b_buf b;
    h2b_buf_init(&b);
    if (!fp.set)
        h2b_buf_puts(&b, "unknown machine");
    else
        h2b_buf_printf(&b, "%s, %d cpus, %s, %s, %s, nghttp2 %s", fp.cpu_model ? fp.cpu_model : "?",
                       fp.cpus, fp.kernel ? fp.kernel : "?", fp.compiler ? fp.compiler : "?",
                       fp.build_type ? fp.build_type : "?", fp.nghttp2 ? fp.nghttp2 : "?");
    return h2b_buf_finish(&b, out);
}

/* The run of one document as store lines, handed to each(arg, line). */
struct run {
    const char *commit, *created;
    char *fingerprint;
};

static int run_lines(const json_t *doc, const struct run *r,
                     int (*each)(void *arg, const struct h2b_results_hline *l), void *arg)
{
    int rv = H2B_OK;
    for (int bigger = 0; bigger < 2 && rv == H2B_OK; bigger++) {
        json_t *arr = NULL;
        rv = h2b_export_gab(doc, bigger, &arr);
        if (rv != H2B_OK)
            return rv;
        size_t i;
        json_t *e;
        json_array_foreach(arr, i, e)
        {
            const char *name = json_string_value(json_object_get(e, "name"));
            json_t *v = json_object_get(e, "value");
            if (!name || !json_is_number(v) || !(json_number_value(v) >= 0))
                continue;
            struct h2b_results_hline l;
            h2b_model_init(&h2b_results_hline_model, &l);
            l.series = (char *)name;
            l.fingerprint = r->fingerprint;
            l.bigger = bigger;
            l.commit = (char *)r->commit;
            l.created = (char *)r->created;
            l.value = json_number_value(v);
            rv = each(arg, &l);
            if (rv != H2B_OK)
                break;
        }
        json_decref(arr);
    }
    return rv;
}

/* Reads a results or load document and calls each(arg, line) for its metrics. */
static int file_lines(const char *path, int (*each)(void *arg, const struct h2b_results_hline *l),
                      void *arg, struct h2b_diag *d)
{
    json_t *doc = NULL;
    char *text = NULL;
    int rv = h2b_json_load(path, &doc, &text, d);
    if (rv != H2B_OK)
        return rv == H2B_ERR_IO ? H2B_ERR_IO : rv;
    struct h2b_json_src src = {.file = path, .text = text};
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    struct run r = {0};
    struct h2b_results_doc rd;
    struct h2b_results_load ld;
    h2b_model_init(&h2b_results_doc_model, &rd);
    h2b_results_load_init(&ld);
    char when[32] = "";
    struct h2b_results_env lenv; /* a load document's, decoded */
    h2b_model_init(&h2b_results_env_model, &lenv);
    const struct h2b_results_env *env = &lenv;
    if (schema && strcmp(schema, H2B_RESULTS_SCHEMA) == 0) {
        rv = h2b_model_from_json(&h2b_results_doc_model, doc, &src, "", H2B_MODEL_CONTRACT, &rd, d);
        if (rv != H2B_OK)
            goto out;
        r.commit = rd.tool.git_commit;
        r.created = rd.created;
        env = &rd.env;
    } else if (schema && strcmp(schema, H2B_RESULTS_LOAD_SCHEMA) == 0) {
        rv = h2b_results_load_from_json(doc, &src, &ld, d);
        if (rv != H2B_OK)
            goto out;
        if ((rv = h2b_results_load_env(&ld, &src, &lenv, d)) != H2B_OK)
            goto out;
        r.commit = ld.tool.git_commit;
        /* a load document carries no time of its own: the file's */
        struct stat st;
        struct tm tm;
        if (stat(path, &st) == 0 && gmtime_r(&st.st_mtime, &tm))
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        r.created = when;
    } else {
        h2b_diag_set(d, path, text, "schema", "expected \"%s\" or \"%s\"", H2B_RESULTS_SCHEMA,
                     H2B_RESULTS_LOAD_SCHEMA);
        rv = H2B_ERR_PARSE;
        goto out;
    }
    if (!r.commit)
        r.commit = "unknown";
    if (!r.created)
        r.created = "";
    rv = fingerprint_text(env, &r.fingerprint);
    if (rv == H2B_OK)
        rv = run_lines(doc, &r, each, arg);
    if (rv == H2B_ERR_INVAL) {
        h2b_diag_at(d, path, 0, 0, "no micro entries, matrix cells or load numbers");
        rv = H2B_ERR_PARSE;
    }
out:
    free(r.fingerprint);
    h2b_model_free(&h2b_results_doc_model, &rd);
    h2b_results_load_free(&ld);
    h2b_model_free(&h2b_results_env_model, &lenv);
    json_decref(doc);
    free(text);
    return rv;
}

static int add_each(void *arg, const struct h2b_results_hline *l)
{
    return add_line(arg, l);
}

int h2b_histset_add_file(struct h2b_histset *h, const char *path, struct h2b_diag *d)
{
    return file_lines(path, add_each, h, d);
}

/* Reads a whole file (up to STORE_MAX): *text owns it. A missing file is empty when missing_ok. */
static int read_text(const char *path, bool missing_ok, char **text, size_t *len,
                     struct h2b_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (missing_ok && errno == ENOENT) {
            *text = strdup("");
            *len = 0;
            return *text ? H2B_OK : H2B_ERR_NOMEM;
        }
        h2b_diag_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_IO;
    }
    int rv = h2b_fd_read_all(fd, STORE_MAX, 0, text, len);
    close(fd);
    if (rv != H2B_OK)
        h2b_diag_at(d, path, 0, 0, "cannot read: %s", h2b_strerror(rv));
    return rv == H2B_ERR_NOMEM ? rv : rv != H2B_OK ? H2B_ERR_IO : H2B_OK;
}

/* Calls each(arg, line) for every good line of the store text; bad ones go to report. */
static int store_lines(const char *path, const char *text, size_t len,
                       int (*each)(void *arg, const struct h2b_results_hline *l), void *arg,
                       h2b_diag_fn report, void *rarg, size_t *bad)
{
    size_t lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        const char *line = text + at;
        size_t n = end - at;
        at = end + 1;
        if (n == 0)
            continue;
        json_error_t err;
        json_t *obj = json_loadb(line, n, JSON_REJECT_DUPLICATES, &err);
        struct h2b_diag d;
        if (!obj) {
            h2b_diag_at(&d, path, (int)lineno, err.column > 0 ? err.column : 1,
                        "not a JSON object: %s", err.text);
            goto bad;
        }
        char *one = strndup(line, n);
        if (!one) {
            json_decref(obj);
            return H2B_ERR_NOMEM;
        }
        struct h2b_json_src src = {.file = path, .text = one};
        struct h2b_results_hline l;
        int rv = h2b_model_from_json(&h2b_results_hline_model, obj, &src, "", H2B_MODEL_CONTRACT,
                                     &l, &d);
        json_decref(obj);
        free(one);
        if (rv == H2B_ERR_NOMEM)
            return rv;
        if (rv != H2B_OK) {
            d.line = (int)lineno; /* the decoder saw one line: its line 1 is this one */
            goto bad;
        }
        rv = each(arg, &l);
        h2b_model_free(&h2b_results_hline_model, &l);
        if (rv != H2B_OK)
            return rv;
        continue;
    bad:
        (*bad)++;
        if (report)
            report(rarg, &d);
    }
    return H2B_OK;
}

int h2b_histset_read_store(struct h2b_histset *h, const char *path, h2b_diag_fn report, void *arg,
                           size_t *bad, struct h2b_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    int rv = read_text(path, false, &text, &len, d);
    if (rv != H2B_OK)
        return rv;
    rv = store_lines(path, text, len, add_each, h, report, arg, bad);
    free(text);
    return rv;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int h2b_histset_add_path(struct h2b_histset *h, const char *path, h2b_diag_fn report, void *arg,
                         size_t *bad, struct h2b_diag *d)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        h2b_diag_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (ends_with(path, ".jsonl"))
            return h2b_histset_read_store(h, path, report, arg, bad, d);
        return h2b_histset_add_file(h, path, d);
    }
    DIR *dir = opendir(path);
    if (!dir) {
        h2b_diag_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_IO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rv = H2B_OK;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.' ||
            !(ends_with(e->d_name, ".json") || ends_with(e->d_name, ".jsonl")))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **v = realloc(names, cap * sizeof(*v));
            if (!v) {
                rv = H2B_ERR_NOMEM;
                break;
            }
            names = v;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) {
            rv = H2B_ERR_NOMEM;
            break;
        }
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (rv == H2B_OK && n)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = h2b_histset_add_path(h, names[i], report, arg, bad, d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rv;
}

static const char *metric_of(const char *name)
{
    const char *m = NULL;
    for (const char *p = strstr(name, " - "); p; p = strstr(p + 1, " - "))
        m = p + 3;
    return m ? m : "";
}

void h2b_histset_select(struct h2b_histset *h, const char *filter, const char *metric)
{
    size_t k = 0;
    for (size_t i = 0; i < h->n; i++) {
        struct h2b_histset_series *s = &h->s[i];
        bool keep = (!filter || strstr(s->name, filter)) &&
                    (!metric || strcmp(metric_of(s->name), metric) == 0);
        if (keep)
            h->s[k++] = *s;
        else
            series_free(s);
    }
    h->n = k;
}

static int cmp_point(const void *a, const void *b)
{
    const struct h2b_histset_point *x = a, *y = b;
    int c = strcmp(x->created, y->created);
    if (c == 0)
        c = strcmp(x->commit, y->commit);
    if (c == 0)
        c = x->value < y->value ? -1 : x->value > y->value;
    return c;
}

static int cmp_series(const void *a, const void *b)
{
    const struct h2b_histset_series *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c == 0)
        c = strcmp(x->fingerprint, y->fingerprint);
    return c ? c : (int)x->bigger - (int)y->bigger;
}

void h2b_histset_sort(struct h2b_histset *h)
{
    for (size_t i = 0; i < h->n; i++) {
        if (h->s[i].n > 1)
            qsort(h->s[i].p, h->s[i].n, sizeof(*h->s[i].p), cmp_point);
    }
    if (h->n > 1)
        qsort(h->s, h->n, sizeof(*h->s), cmp_series);
}

static int values(const struct h2b_histset_series *s, double **out)
{
    *out = malloc((s->n ? s->n : 1) * sizeof(**out));
    if (!*out)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < s->n; i++)
        (*out)[i] = s->p[i].value;
    return H2B_OK;
}

int h2b_histset_detect(struct h2b_histset *h, const struct h2b_history_opts *o)
{
    for (size_t i = 0; i < h->n; i++) {
        struct h2b_histset_series *s = &h->s[i];
        free(s->cps);
        s->cps = NULL;
        s->ncps = 0;
        double *x;
        int rv = values(s, &x);
        if (rv != H2B_OK)
            return rv;
        /* the detector is quadratic in a segment's length: a longer history is read whole but
         * tested over its last H2B_HISTSET_MAX_TESTED runs */
        size_t from = s->n > H2B_HISTSET_MAX_TESTED ? s->n - H2B_HISTSET_MAX_TESTED : 0;
        rv = h2b_history_detect(x + from, s->n - from, o, &s->cps, &s->ncps);
        for (size_t k = 0; rv == H2B_OK && k < s->ncps; k++)
            s->cps[k].index += from;
        free(x);
        s->too_short = rv == H2B_ERR_RANGE;
        if (rv != H2B_OK && rv != H2B_ERR_RANGE)
            return rv;
    }
    return H2B_OK;
}

/* Fingerprints are long: the views number them from 1 in order of first appearance. Returns
 * the number of each series (caller frees), NULL on allocation failure. */
static size_t *fp_numbers(const struct h2b_histset *h, size_t *count)
{
    size_t *num = calloc(h->n + 1, sizeof(*num));
    size_t *first = calloc(h->n + 1, sizeof(*first)); /* series index of each number's first */
    *count = 0;
    if (!num || !first) {
        free(num);
        free(first);
        return NULL;
    }
    for (size_t i = 0; i < h->n; i++) {
        size_t f = 0;
        while (f < *count && strcmp(h->s[first[f]].fingerprint, h->s[i].fingerprint) != 0)
            f++;
        if (f == *count)
            first[(*count)++] = i;
        num[i] = f + 1;
    }
    free(first);
    return num;
}

static void short_commit(char *buf, size_t size, const char *c)
{
    snprintf(buf, size, "%.10s", c);
}

static void change_text(char *buf, size_t size, const struct h2b_history_cp *cp)
{
    if (isnan(cp->change))
        snprintf(buf, size, "from 0");
    else
        snprintf(buf, size, "%+.1f %%", 100 * cp->change);
}

static bool worse(const struct h2b_histset_series *s, const struct h2b_history_cp *cp)
{
    return s->bigger ? cp->after < cp->before : cp->after > cp->before;
}

/* The fingerprints, numbered: "  N  text" lines (text) or a numbered markdown list (md). */
static void fingerprint_list(const struct h2b_histset *h, const size_t *num, bool md,
                             struct h2b_buf *out)
{
    size_t next = 1;
    for (size_t i = 0; i < h->n; i++) {
        if (num[i] != next)
            continue;
        next++;
        h2b_buf_printf(out, md ? "%zu. " : "  %zu  ", num[i]);
        if (md)
            h2b_buf_md(out, h->s[i].fingerprint);
        else
            h2b_buf_term(out, h->s[i].fingerprint);
        h2b_buf_puts(out, "\n");
    }
}

void h2b_histset_render_text(const struct h2b_histset *h, const struct h2b_history_opts *o,
                             struct h2b_buf *out)
{
    size_t nfp = 0, *num = fp_numbers(h, &nfp);
    if (!num) {
        out->err = H2B_ERR_NOMEM;
        return;
    }
    h2b_buf_printf(out,
                   "%zu series; change points at p <= %g moving the median >= %g %%, %zu "
                   "runs a side at least\n\n",
                   h->n, o->p_value, 100 * o->min_change, o->min_points);
    h2b_buf_printf(out, "%-56s %3s %5s %5s %-10s %12s %12s %8s %9s %s\n", "series", "fp", "runs",
                   "index", "commit", "before", "after", "change", "p", "");
    for (size_t i = 0; i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        struct h2b_buf name;
        h2b_buf_init(&name);
        h2b_buf_term(&name, s->name);
        const char *nm = name.data ? name.data : "";
        if (s->too_short || s->ncps == 0) {
            h2b_buf_printf(out, "%-56s %3zu %5zu %5s %-10s %12s %12s %8s %9s %s\n", nm, num[i],
                           s->n, "-", "-", "-", "-", "-", "-",
                           s->too_short ? "too short to test" : "no change");
        }
        for (size_t k = 0; k < s->ncps; k++) {
            const struct h2b_history_cp *cp = &s->cps[k];
            char commit[16], change[32];
            struct h2b_buf c;
            h2b_buf_init(&c);
            short_commit(commit, sizeof(commit), s->p[cp->index].commit);
            h2b_buf_term(&c, commit);
            change_text(change, sizeof(change), cp);
            h2b_buf_printf(out, "%-56s %3zu %5zu %5zu %-10s %12.6g %12.6g %8s %9.2g %s\n", nm,
                           num[i], s->n, cp->index, c.data ? c.data : "", cp->before, cp->after,
                           change, cp->p, worse(s, cp) ? "worse" : "better");
            h2b_buf_free(&c);
        }
        h2b_buf_free(&name);
    }
    h2b_buf_puts(out, "\nfingerprints:\n");
    fingerprint_list(h, num, false, out);
    free(num);
}

void h2b_histset_render_md(const struct h2b_histset *h, const struct h2b_history_opts *o,
                           struct h2b_buf *out)
{
    size_t nfp = 0, *num = fp_numbers(h, &nfp);
    if (!num) {
        out->err = H2B_ERR_NOMEM;
        return;
    }
    h2b_buf_printf(out, "%zu series; change points at p ≤ %g moving the median ≥ %g %%.\n\n", h->n,
                   o->p_value, 100 * o->min_change);
    h2b_buf_puts(out, "| Series | Fingerprint | Runs | Index | Commit | Before | After | Change | "
                      "p |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        if (s->too_short || s->ncps == 0) {
            h2b_buf_puts(out, "| ");
            h2b_buf_md(out, s->name);
            h2b_buf_printf(out, " | %zu | %zu | — | %s | | | | |\n", num[i], s->n,
                           s->too_short ? "too short to test" : "no change");
        }
        for (size_t k = 0; k < s->ncps; k++) {
            const struct h2b_history_cp *cp = &s->cps[k];
            char commit[16], change[32];
            short_commit(commit, sizeof(commit), s->p[cp->index].commit);
            change_text(change, sizeof(change), cp);
            h2b_buf_puts(out, "| ");
            h2b_buf_md(out, s->name);
            h2b_buf_printf(out, " | %zu | %zu | %zu | ", num[i], s->n, cp->index);
            h2b_buf_md_code(out, commit);
            h2b_buf_printf(out, " | %.6g | %.6g | %s %s | %.2g |\n", cp->before, cp->after, change,
                           worse(s, cp) ? "worse" : "better", cp->p);
        }
    }
    h2b_buf_puts(out, "\nFingerprints:\n\n");
    fingerprint_list(h, num, true, out);
    free(num);
}

static int set_new(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int h2b_histset_to_json(const struct h2b_histset *h, const struct h2b_history_opts *o, json_t **out)
{
    json_t *root = json_object(), *opts = json_object(), *arr = json_array();
    int rv = root && opts && arr ? H2B_OK : H2B_ERR_NOMEM;
    if (rv == H2B_OK)
        rv = set_new(root, "schema", json_string("h2bench.history/1"));
    if (rv == H2B_OK) {
        rv = set_new(opts, "p_value", json_real(o->p_value));
        if (rv == H2B_OK)
            rv = set_new(opts, "min_change", json_real(o->min_change));
        if (rv == H2B_OK)
            rv = set_new(opts, "min_points", json_integer((json_int_t)o->min_points));
        if (rv == H2B_OK)
            rv = set_new(root, "options", opts);
        opts = NULL;
    }
    for (size_t i = 0; rv == H2B_OK && i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        json_t *so = json_object(), *cps = json_array();
        rv = so && cps ? H2B_OK : H2B_ERR_NOMEM;
        if (rv == H2B_OK)
            rv = set_new(so, "series", json_string(s->name));
        if (rv == H2B_OK)
            rv = set_new(so, "fingerprint", json_string(s->fingerprint));
        if (rv == H2B_OK)
            rv = set_new(so, "bigger", json_boolean(s->bigger));
        if (rv == H2B_OK)
            rv = set_new(so, "runs", json_integer((json_int_t)s->n));
        if (rv == H2B_OK)
            rv = set_new(so, "too_short", json_boolean(s->too_short));
        for (size_t k = 0; rv == H2B_OK && k < s->ncps; k++) {
            const struct h2b_history_cp *cp = &s->cps[k];
            json_t *c = json_object();
            rv = c ? H2B_OK : H2B_ERR_NOMEM;
            if (rv == H2B_OK)
                rv = set_new(c, "index", json_integer((json_int_t)cp->index));
            if (rv == H2B_OK)
                rv = set_new(c, "commit", json_string(s->p[cp->index].commit));
            if (rv == H2B_OK)
                rv = set_new(c, "created", json_string(s->p[cp->index].created));
            if (rv == H2B_OK)
                rv = set_new(c, "before", num(cp->before));
            if (rv == H2B_OK)
                rv = set_new(c, "after", num(cp->after));
            if (rv == H2B_OK)
                rv = set_new(c, "change", num(cp->change));
            if (rv == H2B_OK)
                rv = set_new(c, "p_value", num(cp->p));
            if (rv == H2B_OK)
                rv = set_new(c, "worse", json_boolean(worse(s, cp)));
            if (rv == H2B_OK && json_array_append_new(cps, c) != 0)
                rv = H2B_ERR_NOMEM;
            else if (rv != H2B_OK)
                json_decref(c);
        }
        if (rv == H2B_OK)
            rv = set_new(so, "change_points", cps);
        else
            json_decref(cps);
        if (rv == H2B_OK && json_array_append_new(arr, so) != 0)
            rv = H2B_ERR_NOMEM;
        else if (rv != H2B_OK)
            json_decref(so);
    }
    if (rv == H2B_OK)
        rv = set_new(root, "series", arr);
    else
        json_decref(arr);
    json_decref(opts);
    if (rv != H2B_OK) {
        json_decref(root);
        return rv;
    }
    *out = root;
    return H2B_OK;
}

/* ------------------------------------------------------------------ the store */

struct appender {
    const char *existing; /* the store's text, to skip runs already in it */
    size_t existing_len;
    struct h2b_buf *out;
    size_t added, skipped;
};

/* Whether the store already holds this exact line (a run appended twice is the same lines). */
static bool line_in(const struct appender *a, const char *encoded)
{
    size_t n = strlen(encoded);
    for (const char *p = a->existing; p && (p = strstr(p, encoded)) != NULL; p++) {
        bool starts = p == a->existing || p[-1] == '\n';
        bool ends = p[n] == '\n' || p[n] == '\0';
        if (starts && ends)
            return true;
    }
    return false;
}

static int append_each(void *arg, const struct h2b_results_hline *l)
{
    struct appender *a = arg;
    json_t *o = NULL;
    int rv = h2b_model_to_json(&h2b_results_hline_model, l, &o);
    if (rv != H2B_OK)
        return rv;
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!text)
        return H2B_ERR_NOMEM;
    if (line_in(a, text)) {
        a->skipped++;
    } else {
        h2b_buf_puts(a->out, text);
        h2b_buf_puts(a->out, "\n");
        a->added++;
    }
    free(text);
    return h2b_buf_error(a->out);
}

static bool branch_ok(const char *b)
{
    if (!b[0] || b[0] == '.' || strlen(b) > 200)
        return false;
    for (const char *p = b; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int h2b_histset_append(const char *dir, const char *branch, const char *const *paths, size_t n,
                       size_t *added, size_t *skipped, struct h2b_diag *d)
{
    *added = *skipped = 0;
    if (!branch_ok(branch)) {
        h2b_diag_at(d, NULL, 0, 0,
                    "branch '%.200s': expected letters, digits, '.', '_' or '-', not starting "
                    "with '.'",
                    branch);
        return H2B_ERR_INVAL;
    }
    if (h2b_fs_mkdir_p(dir, 0755) != 0) {
        h2b_diag_at(d, dir, 0, 0, "cannot create the store directory: %s", strerror(errno));
        return H2B_ERR_IO;
    }
    size_t plen = strlen(dir) + strlen(branch) + 8;
    char *path = malloc(plen);
    if (!path)
        return H2B_ERR_NOMEM;
    snprintf(path, plen, "%s/%s.jsonl", dir, branch);
    char *text = NULL;
    size_t len = 0;
    struct h2b_buf out;
    h2b_buf_init(&out);
    /* two appends at once would each rewrite the file from what they read: one would be lost */
    int lock = -1;
    int rv = h2b_file_lock(path, &lock, d);
    if (rv != H2B_OK) {
        lock = -1;
        goto done;
    }
    rv = read_text(path, true, &text, &len, d);
    if (rv != H2B_OK)
        goto done;
    h2b_buf_append(&out, text, len);
    if (len && text[len - 1] != '\n')
        h2b_buf_puts(&out, "\n"); /* a torn last line stays its own (corrupt) line */
    struct appender a = {.existing = text, .existing_len = len, .out = &out};
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = file_lines(paths[i], append_each, &a, d);
    *added = a.added;
    *skipped = a.skipped;
    if (rv == H2B_OK && (rv = h2b_buf_error(&out)) == H2B_OK && a.added)
        rv = h2b_file_write_atomic(path, out.data, out.len, d);
done:
    if (lock >= 0)
        h2b_file_unlock(path, lock);
    h2b_buf_free(&out);
    free(text);
    free(path);
    return rv;
}

/* ------------------------------------------------------------------ the gate */

int h2b_histset_gate(const struct h2b_histset *h, const struct h2b_history_opts *o,
                     h2b_histset_fail_fn fail, void *arg, size_t *checked, size_t *failed)
{
    *checked = *failed = 0;
    const char *newest = NULL;
    for (size_t i = 0; i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        if (s->n && (!newest || strcmp(s->p[s->n - 1].created, newest) > 0))
            newest = s->p[s->n - 1].created;
    }
    for (size_t i = 0; i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        if (!s->n || strcmp(s->p[s->n - 1].created, newest) != 0)
            continue;
        (*checked)++;
        double *x;
        int rv = values(s, &x);
        if (rv != H2B_OK)
            return rv;
        bool opened = false;
        struct h2b_history_cp cp;
        rv = h2b_history_newest(x, s->n, o, &opened, &cp);
        free(x);
        if (rv != H2B_OK)
            return rv;
        if (opened && worse(s, &cp)) {
            (*failed)++;
            fail(arg, s, &cp);
        }
    }
    return H2B_OK;
}
