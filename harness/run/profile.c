/*
 * profile.c - the runner's side of --perf-record: which cells, when to start and stop perf, where
 * the artefacts go, and what the results cell says.
 *
 * Approach: the filter is parsed with the --filter parser and matched on the expanded cells up
 * front, so a filter that names no cell is an input error before anything runs. Recording starts
 * from the runner's poll loop once the cell's warm-up has passed (perf attaches to the running
 * target with -p; starting the server under perf would profile its start-up and every other
 * cell) and stops when the client has finished; perf's own `sleep` bound ends it anyway if the
 * runner stalls. Each profile is folded and drawn right after its cell, so the perf text never
 * piles up, and only the folded stacks and the SVG are kept.
 *
 * Rejected: one recording across the whole run (cells would blur into one profile); recording
 * every cell by default (perf costs the target CPU time; profiles are asked for).
 */
#include "run/profile.h"

#include "core/clock.h"
#include "core/error.h"
#include "prof/prof.h"
#include "core/results.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SIDE_SERVER = 0, SIDE_CLIENT = 1, NSIDES = 2 };

struct cell_prof {
    bool wanted;
    struct h2b_results_profile side[NSIDES]; /* summary + artefacts; not present: see reason */
    char reason[NSIDES][300];
};

struct h2b_run_prof {
    struct cell_prof *cells;
    size_t ncells;
    bool client;
    char dir[4096]; /* the artefact directory */
    char rel[1024]; /* its name relative to the results file's directory */
    bool checked, available;
    char unavailable[300];
    /* the cell being recorded */
    bool active;
    size_t cur;
    uint64_t start_ns;
    double max_s;
    char title[256];
    int pid[NSIDES];
    char exe[NSIDES][1024];
    char stem[NSIDES][300];
    struct h2b_prof_rec *rec[NSIDES];
    bool started;
    uint64_t rec_start_ns;
};

static const char *const side_names[NSIDES] = {"server", "client"};

int h2b_run_prof_new(struct h2b_run_prof **out, const struct h2b_scenario *s, const char *filter,
                     bool client, const struct h2b_cell *cells, size_t ncells,
                     const char *results_path, struct h2b_diag *d)
{
    struct h2b_cell_filter *filters = NULL;
    size_t nfilters = 0;
    int rc = h2b_expand_parse_filter(s, filter, &filters, &nfilters, d);
    if (rc)
        return rc;
    struct h2b_run_prof *p = calloc(1, sizeof(*p));
    if (!p || !(p->cells = calloc(ncells ? ncells : 1, sizeof(*p->cells)))) {
        free(p);
        free(filters);
        return H2B_ERR_NOMEM;
    }
    size_t wanted = 0;
    for (size_t i = 0; i < ncells; i++) {
        for (int side = 0; side < NSIDES; side++)
            h2b_model_init(&h2b_results_profile_model, &p->cells[i].side[side]);
        p->cells[i].wanted = h2b_expand_cell_matches(&cells[i], filters, nfilters);
        wanted += p->cells[i].wanted;
    }
    free(filters);
    p->ncells = ncells;
    p->client = client;
    if (wanted == 0) {
        h2b_diag_at(d, NULL, 0, 0, "'%s' matches none of the %zu cells of this run", filter,
                    ncells);
        h2b_run_prof_del(p);
        return H2B_ERR_NOTFOUND;
    }
    if (!results_path) { /* a dry run: the filter is checked, nothing is created */
        *out = p;
        return H2B_OK;
    }
    /* RESULTS-STEM.profiles beside the results file */
    const char *slash = strrchr(results_path, '/');
    const char *base = slash ? slash + 1 : results_path;
    size_t stem = strlen(base);
    if (stem > 5 && strcmp(base + stem - 5, ".json") == 0)
        stem -= 5;
    snprintf(p->rel, sizeof(p->rel), "%.*s.profiles", (int)(stem < 900 ? stem : 900), base);
    snprintf(p->dir, sizeof(p->dir), "%.*s%s", slash ? (int)(slash + 1 - results_path) : 0,
             results_path, p->rel);
    if (mkdir(p->dir, 0755) != 0 && errno != EEXIST) {
        h2b_diag_at(d, NULL, 0, 0, "cannot create %s: %s", p->dir, strerror(errno));
        h2b_run_prof_del(p);
        return H2B_ERR_IO;
    }
    *out = p;
    return H2B_OK;
}

static void stop_recordings(struct h2b_run_prof *p)
{
    for (int s = 0; s < NSIDES; s++) {
        h2b_prof_rec_cancel(p->rec[s]);
        p->rec[s] = NULL;
    }
    p->active = false;
}

void h2b_run_prof_del(struct h2b_run_prof *p)
{
    if (!p)
        return;
    stop_recordings(p);
    for (size_t i = 0; i < p->ncells; i++)
        for (int s = 0; s < NSIDES; s++)
            h2b_model_free(&h2b_results_profile_model, &p->cells[i].side[s]);
    free(p->cells);
    free(p);
}

/* A file-name-safe copy of a target name. */
static void safe_name(char *buf, size_t size, const char *name)
{
    size_t n = 0;
    for (; name[n] && n + 1 < size; n++) {
        char ch = name[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
        buf[n] = ok ? ch : '_';
    }
    buf[n] = '\0';
}

void h2b_run_prof_begin(struct h2b_run_prof *p, size_t i, const struct h2b_cell *c,
                        const char *target_name, int target_pid, int client_pid, double delay_s,
                        double max_s)
{
    if (!p || i >= p->ncells || !p->cells[i].wanted)
        return;
    stop_recordings(p);
    struct cell_prof *cp = &p->cells[i];
    for (int s = 0; s < NSIDES; s++) {
        h2b_model_free(&h2b_results_profile_model, &cp->side[s]);
        cp->reason[s][0] = '\0';
    }
    if (!p->checked) {
        struct h2b_diag d = {0};
        p->available = h2b_prof_available(NULL, &d);
        h2b_reason(p->unavailable, sizeof(p->unavailable), "%s", d.message);
        p->checked = true;
    }
    char safe[128];
    safe_name(safe, sizeof(safe), target_name);
    snprintf(p->title, sizeof(p->title), "%s %ux%u, cell %zu", target_name, c->connections,
             c->streams_requested, i);
    p->pid[SIDE_SERVER] = target_pid;
    p->pid[SIDE_CLIENT] = p->client ? client_pid : 0;
    for (int s = 0; s < NSIDES; s++) {
        snprintf(p->stem[s], sizeof(p->stem[s]), "cell-%zu-%s-%s", i, safe, side_names[s]);
        p->exe[s][0] = '\0';
        if (p->pid[s] > 0) {
            char link[64];
            snprintf(link, sizeof(link), "/proc/%d/exe", p->pid[s]);
            ssize_t n = readlink(link, p->exe[s], sizeof(p->exe[s]) - 1);
            p->exe[s][n > 0 ? n : 0] = '\0';
        }
    }
    if (!p->available)
        h2b_reason(cp->reason[SIDE_SERVER], sizeof(cp->reason[0]), "profile: %s", p->unavailable);
    else if (target_pid <= 0)
        h2b_reason(cp->reason[SIDE_SERVER], sizeof(cp->reason[0]),
                   "profile: the target is a URL, no process of ours to record");
    if (p->client && !p->available)
        h2b_reason(cp->reason[SIDE_CLIENT], sizeof(cp->reason[0]), "client profile: %s",
                   p->unavailable);
    p->active = p->available;
    p->cur = i;
    p->started = false;
    p->start_ns = h2b_clock_now_ns() + (uint64_t)(delay_s * 1e9);
    p->max_s = max_s > 0 ? max_s : 10;
}

void h2b_run_prof_tick(struct h2b_run_prof *p)
{
    if (!p || !p->active || p->started || h2b_clock_now_ns() < p->start_ns)
        return;
    p->started = true;
    p->rec_start_ns = h2b_clock_now_ns();
    struct cell_prof *cp = &p->cells[p->cur];
    for (int s = 0; s < NSIDES; s++) {
        if (p->pid[s] <= 0)
            continue;
        struct h2b_diag d = {0};
        struct h2b_prof_rec_opts o = {
            .pid = p->pid[s], .max_s = p->max_s, .dir = p->dir, .name = p->stem[s]};
        if (h2b_prof_rec_start(&p->rec[s], &o, &d) != H2B_OK)
            h2b_reason(cp->reason[s], sizeof(cp->reason[s]), "%sprofile: %s",
                       s == SIDE_CLIENT ? "client " : "", d.message);
    }
}

/* Folds, draws and summarises one finished recording into the cell. */
static void finish_side(struct h2b_run_prof *p, int s, double recorded_s)
{
    struct cell_prof *cp = &p->cells[p->cur];
    const char *who = s == SIDE_CLIENT ? "client " : "";
    struct h2b_diag d = {0};
    struct h2b_prof *prof = NULL;
    int rc = h2b_prof_rec_stop(p->rec[s], p->exe[s], &prof, &d);
    p->rec[s] = NULL;
    char path[4600], folded[1400], svg[1400], title[400];
    snprintf(path, sizeof(path), "%s/%s.perf.txt", p->dir, p->stem[s]);
    unlink(path);
    snprintf(path, sizeof(path), "%s/%s.perf.err", p->dir, p->stem[s]);
    unlink(path);
    if (rc) {
        h2b_reason(cp->reason[s], sizeof(cp->reason[s]), "%sprofile: %s", who, d.message);
        return;
    }
    snprintf(folded, sizeof(folded), "%s/%s.folded", p->rel, p->stem[s]);
    snprintf(svg, sizeof(svg), "%s/%s.svg", p->rel, p->stem[s]);
    snprintf(title, sizeof(title), "%s: %s %s", p->title, side_names[s], p->exe[s]);
    snprintf(path, sizeof(path), "%s/%s.folded", p->dir, p->stem[s]);
    rc = h2b_prof_write_folded(prof, path, &d);
    if (rc == H2B_OK) {
        snprintf(path, sizeof(path), "%s/%s.svg", p->dir, p->stem[s]);
        rc = h2b_prof_flame_svg(prof, title, path, &d);
    }
    struct h2b_results_profile *sum = &cp->side[s];
    if (rc == H2B_OK && (rc = h2b_prof_summary(prof, 12, sum)) == H2B_OK) {
        const char *slash = strrchr(p->exe[s], '/');
        sum->recorded_s = recorded_s;
        if ((rc = h2b_model_set_string(&sum->exe, slash ? slash + 1 : p->exe[s])) ||
            (rc = h2b_model_set_string(&sum->folded, folded)) ||
            (rc = h2b_model_set_string(&sum->svg, svg))) {
            h2b_model_free(&h2b_results_profile_model, sum);
            h2b_reason(cp->reason[s], sizeof(cp->reason[s]), "%sprofile: %s", who,
                       h2b_strerror(rc));
        }
    } else {
        h2b_reason(cp->reason[s], sizeof(cp->reason[s]), "%sprofile: %s", who,
                   d.message[0] ? d.message : h2b_strerror(rc));
    }
    h2b_prof_del(prof);
}

void h2b_run_prof_end(struct h2b_run_prof *p)
{
    if (!p || !p->active)
        return;
    struct cell_prof *cp = &p->cells[p->cur];
    if (!p->started) {
        for (int s = 0; s < NSIDES; s++)
            if (p->pid[s] > 0 && !cp->reason[s][0])
                h2b_reason(cp->reason[s], sizeof(cp->reason[s]),
                           "%sprofile: the cell ended before its warm-up did",
                           s == SIDE_CLIENT ? "client " : "");
        p->active = false;
        return;
    }
    double recorded_s = (double)(h2b_clock_now_ns() - p->rec_start_ns) / 1e9;
    for (int s = 0; s < NSIDES; s++)
        if (p->rec[s])
            finish_side(p, s, recorded_s);
    p->active = false;
}

int h2b_run_prof_cell(const struct h2b_run_prof *p, size_t i, struct h2b_results_cell_profile *out)
{
    h2b_model_init(&h2b_results_cell_profile_model, out);
    if (!p || i >= p->ncells || !p->cells[i].wanted)
        return H2B_OK;
    const struct h2b_model *m = &h2b_results_profile_model;
    const struct cell_prof *cp = &p->cells[i];
    int rc = H2B_OK;
    out->base.present = true;
    if (cp->side[SIDE_SERVER].base.present)
        rc = h2b_model_copy(m, &out->server, &cp->side[SIDE_SERVER]);
    if (rc == H2B_OK && p->client && cp->side[SIDE_CLIENT].base.present)
        rc = h2b_model_copy(m, &out->client, &cp->side[SIDE_CLIENT]);
    if (rc)
        h2b_model_free(&h2b_results_cell_profile_model, out);
    return rc;
}

void h2b_run_prof_reason(const struct h2b_run_prof *p, size_t i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!p || i >= p->ncells || !p->cells[i].wanted)
        return;
    const struct cell_prof *cp = &p->cells[i];
    snprintf(buf, size, "%s%s%s", cp->reason[0], cp->reason[0][0] && cp->reason[1][0] ? "; " : "",
             cp->reason[1]);
}
