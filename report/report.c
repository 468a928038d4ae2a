/*
 * report.c - h2b_report_write: load, render, and commit the report atomically.
 *
 * Order matters for "a failing run leaves nothing half-written": every input is loaded and
 * validated before the output directory is touched; charts and REPORT.md are produced in a
 * fresh temporary directory inside the output directory (same filesystem, so rename() is
 * atomic); only when everything succeeded are the files renamed into place, REPORT.md last, and
 * the temporary directory removed. On any failure the temporary directory is deleted.
 *
 * Rejected: writing each file with its own temp+rename as it is produced. A gnuplot failure on
 * the third chart would then leave two new charts beside an old REPORT.md.
 */
#include "report/chart.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hist.h"
#include "report/report_int.h"
#include "core/stats.h"
#include "gates/evaluate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_file(const char *path, const char *text, struct h2b_diag *diag)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", path, strerror(errno));
        return H2B_ERR_IO;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    if (fclose(f) != 0 || !ok) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: write failed: %s", path, strerror(errno));
        return H2B_ERR_IO;
    }
    return H2B_OK;
}

/* Renames every file of tmp into dir, REPORT.md last. */
static int commit(const char *tmp, const char *dir, struct h2b_diag *diag)
{
    DIR *d = opendir(tmp);
    if (d == NULL) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", tmp, strerror(errno));
        return H2B_ERR_IO;
    }
    struct dirent *e;
    int rc = H2B_OK;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "REPORT.md") == 0 ||
            strcmp(e->d_name, "gnuplot.log") == 0)
            continue;
        char from[4096], to[4096];
        snprintf(from, sizeof(from), "%s/%s", tmp, e->d_name);
        snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
        if (rename(from, to) != 0) {
            h2b_diag_at(diag, NULL, 0, 0, "rename %s -> %s: %s", from, to, strerror(errno));
            rc = H2B_ERR_IO;
            break;
        }
    }
    closedir(d);
    if (rc)
        return rc;
    char from[4096], to[4096];
    snprintf(from, sizeof(from), "%s/REPORT.md", tmp);
    snprintf(to, sizeof(to), "%s/REPORT.md", dir);
    if (rename(from, to) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "rename %s -> %s: %s", from, to, strerror(errno));
        return H2B_ERR_IO;
    }
    return H2B_OK;
}

/* Keeps the first problem a ceilings loader reports (it reports every one). */
static void first_diag(void *arg, const struct h2b_diag *d)
{
    struct h2b_diag *first = arg;
    if (!first->message[0])
        *first = *d;
}

/* The gate's verdict on the head run (gates/evaluate.h: benchmarks, cells and SLOs, as
 * `h2bench gate` gives it, without confirmation re-runs: a report measures nothing), judged on
 * the document the report renders, not on a second reading of the file. */
static int gate_head(struct h2b__report *rep, struct h2b_diag *diag)
{
    const char *head = rep->head->path;
    const struct h2b_results_doc *doc = rep->head->model;
    struct h2b_diag first = {0}, d = {0};
    struct h2b_gate_options gopt = {.strict = false, .confirm = 0};
    struct h2b_gate_eval ev;
    int rc = h2b_gate_evaluate_docs(rep->opt->ceilings, &doc, &head, 1, &gopt, first_diag, &first,
                                    &ev, &d);
    rep->ceil = ev.ceilings;
    rep->gate = ev.report;
    if (rc == H2B_OK)
        return H2B_OK;
    if (first.message[0])
        h2b_diag_pass(diag, &first, rep->opt->ceilings, rc);
    else if (d.message[0])
        h2b_diag_pass(diag, &d, head, rc);
    else
        h2b_diag_at(diag, NULL, 0, 0, "checking ceilings: %s", h2b_strerror(rc));
    return rc == H2B_ERR_IO ? H2B_ERR_NOTFOUND : rc;
}

/* The History's change points: the runs' series as `h2bench history` reads them, detected with
 * its defaults. */
static int history(struct h2b__report *rep, struct h2b_diag *diag)
{
    rep->hist = calloc(1, sizeof(*rep->hist));
    if (!rep->hist)
        return H2B_ERR_NOMEM;
    h2b_histset_init(rep->hist);
    int rc = H2B_OK;
    for (size_t i = 0; i < rep->n_runs && rc == H2B_OK; i++)
        rc = h2b_histset_add_file(rep->hist, rep->runs[i]->path, diag);
    if (rc == H2B_OK) {
        struct h2b_history_opts o;
        h2b_history_opts_default(&o);
        h2b_histset_sort(rep->hist);
        rc = h2b_histset_detect(rep->hist, &o);
    }
    return rc;
}

static int load_all(struct h2b__report *rep, struct h2b_diag *diag)
{
    const struct h2b_report_options *o = rep->opt;
    rep->runs = calloc(o->n_results, sizeof(*rep->runs));
    if (rep->runs == NULL)
        return H2B_ERR_NOMEM;
    int rc;
    for (size_t i = 0; i < o->n_results; i++) {
        if ((rc = h2b_rdata_results_load(o->results[i], &rep->runs[i], diag)))
            return rc;
        rep->n_runs = i + 1;
    }
    rep->head = rep->runs[rep->n_runs - 1];
    if (o->compare && (rc = h2b_rdata_results_load(o->compare, &rep->base, diag)))
        return rc;
    if (o->ceilings && (rc = gate_head(rep, diag)))
        return rc;
    if (o->compare) {
        /* `h2bench compare`'s verdict, on the documents already read */
        const struct h2b_ab_options ab = {.threshold = 0.10, .confidence = 0.99};
        rc = h2b_ab_judge_docs(rep->base->model, rep->base->path, rep->head->model, rep->head->path,
                               &ab, &rep->compare);
        if (rc) {
            h2b_diag_at(diag, NULL, 0, 0, "comparing with %s: %s", o->compare, h2b_strerror(rc));
            return rc;
        }
        rep->compare->command = "compare";
    }
    if (rep->n_runs >= 2 && (rc = history(rep, diag)))
        return rc;
    return h2b__report_index(rep->head, &rep->targets, &rep->n_targets, &rep->keys, &rep->n_keys);
}

static void unload_all(struct h2b__report *rep)
{
    for (size_t i = 0; i < rep->n_runs; i++)
        h2b_rdata_results_del(rep->runs[i]);
    free(rep->runs);
    h2b_rdata_results_del(rep->base);
    h2b_ceilings_del(rep->ceil);
    h2b_gate_report_del(rep->gate);
    h2b_ab_report_del(rep->compare);
    if (rep->hist)
        h2b_histset_free(rep->hist);
    free(rep->hist);
    free(rep->targets);
    free(rep->keys);
}

static int render_charts(struct h2b__report *rep, const char *tmp, struct h2b_diag *diag)
{
    int rc = h2b__report_plots(rep, tmp);
    if (rc) {
        h2b_diag_at(diag, NULL, 0, 0, "writing chart scripts into %s: %s", tmp, h2b_strerror(rc));
        return rc;
    }
    if (rep->n_charts == 0) {
        rep->charts_rendered = true;
        return H2B_OK;
    }
    const char *gnuplot = rep->opt->gnuplot;
    if (gnuplot == NULL)
        gnuplot = getenv("H2B_GNUPLOT");
    if (gnuplot == NULL || gnuplot[0] == '\0')
        gnuplot = "gnuplot";
    char scripts[H2B__REPORT_MAX_CHARTS][80];
    const char *argv[H2B__REPORT_MAX_CHARTS];
    for (size_t i = 0; i < rep->n_charts; i++) {
        snprintf(scripts[i], sizeof(scripts[i]), "%s.gp", rep->charts[i].name);
        argv[i] = scripts[i];
    }
    struct h2b_diag cd = {0};
    rc = h2b_chart_run_gnuplot(gnuplot, tmp, argv, rep->n_charts, "gnuplot.log", &cd);
    if (rc == H2B_ERR_NOTFOUND) {
        rep->charts_rendered = false;
        snprintf(rep->charts_note, sizeof(rep->charts_note),
                 "gnuplot was not found (`%s`; install gnuplot-nox, or set H2B_GNUPLOT to its "
                 "path)",
                 h2b__basename(gnuplot));
        return H2B_OK;
    }
    if (rc) {
        h2b_diag_at(diag, NULL, 0, 0, "rendering charts: %s", cd.message);
        return rc;
    }
    rep->charts_rendered = true;
    return H2B_OK;
}

int h2b_report_write(const struct h2b_report_options *opt, char **markdown, struct h2b_diag *diag)
{
    if (opt == NULL || opt->n_results == 0 || opt->results == NULL || opt->out_dir == NULL) {
        h2b_diag_at(diag, NULL, 0, 0, "no results files or no output directory");
        return H2B_ERR_INVAL;
    }
    struct h2b__report rep = {.opt = opt};
    struct h2b_buf md;
    h2b_buf_init(&md);
    char tmp[4096] = "";
    int rc = load_all(&rep, diag);
    if (rc)
        goto out_unload;

    if (h2b_fs_mkdir_p(opt->out_dir, 0777) != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", opt->out_dir, strerror(errno));
        rc = H2B_ERR_IO;
        goto out_unload;
    }
    snprintf(tmp, sizeof(tmp), "%s/.report-tmp.XXXXXX", opt->out_dir);
    if (mkdtemp(tmp) == NULL) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: cannot create a temporary directory: %s", opt->out_dir,
                    strerror(errno));
        tmp[0] = '\0';
        rc = H2B_ERR_IO;
        goto out_unload;
    }
    if ((rc = render_charts(&rep, tmp, diag)))
        goto out_remove;
    if ((rc = h2b__report_markdown(&rep, &md))) {
        h2b_diag_at(diag, NULL, 0, 0, "rendering the markdown: %s", h2b_strerror(rc));
        goto out_remove;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/REPORT.md", tmp);
    if ((rc = write_file(path, h2b_buf_str(&md), diag)))
        goto out_remove;
    if ((rc = commit(tmp, opt->out_dir, diag)))
        goto out_remove;
    if (markdown) {
        /* the --summary copy: the same markdown with the charts drawn inline (summary.c) */
        h2b_buf_free(&md);
        h2b_buf_init(&md);
        rep.summary = true;
        if ((rc = h2b__report_markdown(&rep, &md))) {
            h2b_diag_at(diag, NULL, 0, 0, "rendering the summary: %s", h2b_strerror(rc));
            goto out_remove;
        }
        *markdown = h2b_buf_take(&md);
        if (*markdown == NULL) {
            h2b_diag_at(diag, NULL, 0, 0, "out of memory");
            rc = H2B_ERR_NOMEM;
        }
    }

out_remove:
    h2b_fs_remove_tree(tmp);
out_unload:
    h2b_buf_free(&md);
    unload_all(&rep);
    return rc;
}
