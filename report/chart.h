/*
 * chart.h - gnuplot scripts from the embedded templates in report/templates/, and running
 * gnuplot on them.
 *
 * A chart is a script (head.gp + a chart template + tail.gp, placeholders {{KEY}} filled in)
 * and a data file beside it; the script writes NAME.png and NAME.svg in its own directory.
 */
#ifndef H2B_REPORT_CHART_H
#define H2B_REPORT_CHART_H

#include "core/json.h"

#include <stddef.h>

struct h2b_buf;

struct h2b_chart_template {
    const char *name; /* file stem in report/templates/ */
    const char *text;
};

/* Generated from the .gp files in report/templates/ by report/embed.cmake; ends with {NULL, NULL}.
 */
extern const struct h2b_chart_template h2b__chart_templates[];

/* The embedded template called name, or NULL. */
const char *h2b_chart_template(const char *name);

/* One {{KEY}} -> value substitution. */
struct h2b_chart_var {
    const char *key;
    const char *value;
};

/* Appends tmpl to out with every {{KEY}} replaced by its value. Returns H2B_OK, or
 * H2B_ERR_NOTFOUND when tmpl names a key that vars lacks (a template bug caught by the tests),
 * or the buffer's error. */
int h2b_chart_expand(const char *tmpl, const struct h2b_chart_var *vars, size_t nvars,
                     struct h2b_buf *out);

/* Appends s to out as one gnuplot single-quoted string literal: the only way any text from a
 * results or scenario file enters a gnuplot script. Inside single quotes gnuplot expands
 * neither backquotes (command substitution) nor @macros nor backslash escapes; a ' is doubled,
 * backquotes are dropped and control characters become spaces (a newline would end the
 * command). */
void h2b_chart_quote(struct h2b_buf *out, const char *s);

/* Appends the whole script for chart name from template tmpl (head + tmpl + tail). vars must
 * define every key the three use (TITLE, NAME, TEMPLATE, WIDTH, HEIGHT are filled in here;
 * TITLE as a quoted literal, h2b_chart_quote). name and tmpl are the program's own file stems. */
int h2b_chart_script(const char *name, const char *tmpl, const char *title,
                     const struct h2b_chart_var *vars, size_t nvars, struct h2b_buf *out);

/* Runs `gnuplot SCRIPT...` with dir as working directory, stdout and stderr into dir/log_name.
 * gnuplot names the binary (looked up in PATH when it has no slash). Returns H2B_OK;
 * H2B_ERR_NOTFOUND when the binary does not exist; H2B_ERR_SYS when it could not be started or
 * exited non-zero (diag then holds the end of its output). */
int h2b_chart_run_gnuplot(const char *gnuplot, const char *dir, const char *const *scripts,
                          size_t nscripts, const char *log_name, struct h2b_diag *diag);

#endif
