/*
 * emit.c - a chart's files and its place in the markdown: NAME.dat and NAME.gp written and the
 * chart recorded (h2b__report_emit), the markdown image reference of a recorded chart
 * (h2b__report_chart), and the one quoting of strings in data files.
 *
 * Approach: the primitives every chart producer shares (plots.c for the suite, matrix, latency
 * and history charts, profiles.c for the DSO split) and md.c's placing of them. They lived in
 * plots.c and md.c, so profiles.c, which both of those call, called back into them (a circle in
 * report/); here they depend only on chart.c and the report's state.
 */
#include "report/chart.h"
#include "core/error.h"
#include "report/report_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A string field of a data file (read by gnuplot's data parser, never executed): double quotes,
 * without the characters that would end the field or the line. Scripts use h2b_chart_quote. */
void h2b__report_dat_quoted(struct h2b_buf *b, const char *s)
{
    h2b_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
            h2b_buf_append(b, s, 1);
    }
    h2b_buf_puts(b, "\"");
}

static int save(const char *dir, const char *name, const char *ext, struct h2b_buf *b)
{
    if (h2b_buf_error(b))
        return h2b_buf_error(b);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return H2B_ERR_IO;
    size_t n = b->len;
    bool ok = fwrite(h2b_buf_str(b), 1, n, f) == n;
    if (fclose(f) != 0 || !ok)
        return H2B_ERR_IO;
    return H2B_OK;
}

static struct h2b__chart *add_chart(struct h2b__report *rep, enum h2b__chart_kind kind,
                                    const char *name, const char *alt)
{
    if (rep->n_charts == H2B__REPORT_MAX_CHARTS)
        return NULL;
    struct h2b__chart *c = &rep->charts[rep->n_charts++];
    c->kind = kind;
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->alt, sizeof(c->alt), "%s", alt);
    return c;
}

/* Writes NAME.dat and NAME.gp and records the chart. */
int h2b__report_emit(struct h2b__report *rep, const char *dir, enum h2b__chart_kind kind,
                     const char *name, const char *tmpl, const char *title, struct h2b_buf *data,
                     const struct h2b_chart_var *vars, size_t nvars)
{
    struct h2b_buf script;
    h2b_buf_init(&script);
    int rc = h2b_chart_script(name, tmpl, title, vars, nvars, &script);
    if (rc == H2B_OK)
        rc = save(dir, name, "dat", data);
    if (rc == H2B_OK)
        rc = save(dir, name, "gp", &script);
    if (rc == H2B_OK && add_chart(rep, kind, name, title) == NULL)
        rc = H2B_ERR_RANGE;
    h2b_buf_free(&script);
    return rc;
}

void h2b__report_chart(const struct h2b__report *rep, struct h2b_buf *o, enum h2b__chart_kind kind)
{
    if (rep->summary) {
        h2b__report_mermaid(rep, o, kind); /* no PNG beside a step summary */
        return;
    }
    if (!rep->charts_rendered)
        return;
    for (size_t i = 0; i < rep->n_charts; i++) {
        const struct h2b__chart *c = &rep->charts[i];
        if (c->kind != kind)
            continue;
        /* the alt text may carry a target's name from the results file */
        h2b_buf_puts(o, "\n![");
        h2b_buf_md(o, c->alt);
        h2b_buf_printf(o, "](%s.png) ([SVG](%s.svg))\n", c->name, c->name);
    }
}
