/*
 * report_int.h - internals shared by the report's source files (report.c orchestrates, md.c
 * writes the markdown, plots.c writes the chart data and scripts, profiles.c the Profiles
 * section, emit.c the chart primitives they share, groups.c the queries over a results file,
 * fmt.c the path helper, summary.c the --summary's Mermaid charts; numbers are core/fmt.h's, the
 * A/B verdict gates/ab.h's, laid out by gates/abtable.c). Calls run one way: report.c -> md.c,
 * plots.c -> profiles.c -> emit.c, groups.c, fmt.c; md.c -> profiles.c; nothing calls back up.
 */
#ifndef H2B_REPORT_REPORT_INT_H
#define H2B_REPORT_REPORT_INT_H

#include "report/groups.h"
#include "report/rdata.h"
#include "report/report.h"
#include "core/buf.h"
#include "core/fmt.h"

#include "gates/ceilings.h"
#include "gates/ab.h"
#include "gates/gate.h"
#include "gates/histset.h"

struct h2b_chart_var;

#include <stdbool.h>
#include <stddef.h>

#define H2B__REPORT_MAX_CHARTS 32
#define H2B__REPORT_MAX_OVER_TIME 8 /* shaped cells drawn over time (the first ones) */
#define H2B__MAX_RUNS 64            /* results files a history covers */
#define H2B__HISTORY_LAST 20        /* the History's change-point table covers the last runs */

enum h2b__chart_kind {
    H2B__CHART_MICRO,
    H2B__CHART_RPS,
    H2B__CHART_LATENCY,
    H2B__CHART_HISTORY,
    H2B__CHART_DSO,      /* profiles.c: the DSO split of every profiled cell */
    H2B__CHART_CAPACITY, /* latency against offered rate of the find_max cells, per target */
    H2B__CHART_OVER_TIME /* latency and rate against time of a shaped cell, one per cell */
};

struct h2b__chart {
    enum h2b__chart_kind kind;
    char name[64]; /* file stem */
    char alt[192]; /* alt text and caption */
};

struct h2b__report {
    const struct h2b_report_options *opt;
    struct h2b_rdata_results **runs; /* n_runs, oldest first */
    size_t n_runs;
    const struct h2b_rdata_results *head; /* runs[n_runs - 1] */
    struct h2b_rdata_results *base;       /* --compare, or NULL */
    struct h2b_ceilings *ceil;            /* --ceilings, or NULL */
    struct h2b_gate_report *gate;         /* the gate's verdict on head with --ceilings */
    struct h2b_ab_report *compare;        /* base against head with --compare */
    struct h2b_histset *hist; /* the runs' series and change points (gates/histset.h), NULL
                                 with fewer than two runs */
    const char **targets;     /* head's targets in order of first appearance */
    size_t n_targets;
    struct h2b__cellkey *keys; /* head's cells, sorted by connections then streams */
    size_t n_keys;
    struct h2b__chart charts[H2B__REPORT_MAX_CHARTS];
    size_t n_charts;
    bool charts_rendered; /* false: gnuplot missing, charts_note says why */
    bool summary;         /* rendering the --summary copy: charts as Mermaid blocks (summary.c) */
    char charts_note[512];
    /* profiles.c */
    bool profile_diff;         /* the A/B differential flame graph was drawn */
    size_t profile_diff_cell;  /* of head's cells: the most-regressed profiled one */
    double profile_diff_ratio; /* its req/s, head / base */
    char profile_note[1024];   /* what could not be drawn, and why */
};

/* Writes the chart data and scripts into dir and records them in rep->charts. */
int h2b__report_plots(struct h2b__report *rep, const char *dir);

/* Whether cell i of r is measured and has intervals to draw over time (plots.c). */
bool h2b__report_over_time(const struct h2b_rdata_results *r, size_t i);

/* The Profiles section (profiles.c): flame graphs and the DSO chart into dir (during the chart
 * stage), then the markdown. */
int h2b__report_plot_profiles(struct h2b__report *rep, const char *dir);
void h2b__report_profiles_md(const struct h2b__report *rep, struct h2b_buf *o);

/* Shared by the section writers: a data-file string field, a chart's NAME.dat and NAME.gp
 * recorded in rep, a rendered chart's image link (all emit.c), a name as a markdown code span
 * (profiles.c). */
void h2b__report_dat_quoted(struct h2b_buf *b, const char *s);
int h2b__report_emit(struct h2b__report *rep, const char *dir, enum h2b__chart_kind kind,
                     const char *name, const char *tmpl, const char *title, struct h2b_buf *data,
                     const struct h2b_chart_var *vars, size_t nvars);
void h2b__report_chart(const struct h2b__report *rep, struct h2b_buf *o, enum h2b__chart_kind kind);
/* The --summary form of a chart (summary.c): a Mermaid xychart-beta block drawn from the
 * results, or the name of its PNG where Mermaid cannot draw it. */
void h2b__report_mermaid(const struct h2b__report *rep, struct h2b_buf *o,
                         enum h2b__chart_kind kind);
void h2b__report_md_code(struct h2b_buf *o, const char *s);

/* The run (0-based index into rep->runs) a point of rep->hist came from, or rep->n_runs. */
size_t h2b__report_history_run(const struct h2b__report *rep, const struct h2b_histset_point *p);

/* Renders REPORT.md into out. */
int h2b__report_markdown(const struct h2b__report *rep, struct h2b_buf *out);

/* The last component of a path (a pointer into it). */
const char *h2b__basename(const char *path);

#endif
