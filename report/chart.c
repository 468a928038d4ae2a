/*
 * chart.c - fill gnuplot templates and run gnuplot.
 *
 * The templates are embedded at build time (embed.cmake), so an installed h2bench needs no data
 * directory, yet the scripts a report leaves beside its charts are plain gnuplot a user can
 * edit and re-run. Substitution is literal {{KEY}} replacement: gnuplot's own @macro and
 * $variable syntax stays untouched, and a key the caller forgot is an error instead of an empty
 * string in a plot command.
 *
 * gnuplot runs once for all charts (one process, each script starts with `reset`), through
 * core/proc.h's spawner, which tells a missing binary (H2B_ERR_NOTFOUND) from a failing one.
 */
#include "report/chart.h"
#include "core/error.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *h2b_chart_template(const char *name)
{
    for (const struct h2b_chart_template *t = h2b__chart_templates; t->name; t++) {
        if (strcmp(t->name, name) == 0)
            return t->text;
    }
    return NULL;
}

int h2b_chart_expand(const char *tmpl, const struct h2b_chart_var *vars, size_t nvars,
                     struct h2b_buf *out)
{
    const char *p = tmpl;
    for (;;) {
        const char *open = strstr(p, "{{");
        if (open == NULL)
            break;
        const char *close = strstr(open + 2, "}}");
        if (close == NULL)
            break;
        h2b_buf_append(out, p, (size_t)(open - p));
        size_t klen = (size_t)(close - open - 2);
        const char *value = NULL;
        for (size_t i = 0; i < nvars; i++) {
            if (strlen(vars[i].key) == klen && memcmp(vars[i].key, open + 2, klen) == 0) {
                value = vars[i].value;
                break;
            }
        }
        if (value == NULL)
            return H2B_ERR_NOTFOUND;
        h2b_buf_puts(out, value);
        p = close + 2;
    }
    h2b_buf_puts(out, p);
    return h2b_buf_error(out);
}

void h2b_chart_quote(struct h2b_buf *out, const char *s)
{
    h2b_buf_puts(out, "'");
    for (const char *p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '\'')
            h2b_buf_puts(out, "''");
        else if (ch == '`')
            continue; /* inert between single quotes; dropped so no copy of it can ever run */
        else if (ch < 0x20 || ch == 0x7f)
            h2b_buf_puts(out, " "); /* a newline would end the command */
        else
            h2b_buf_append(out, p, 1);
    }
    h2b_buf_puts(out, "'");
}

#define MAX_VARS 24

int h2b_chart_script(const char *name, const char *tmpl, const char *title,
                     const struct h2b_chart_var *vars, size_t nvars, struct h2b_buf *out)
{
    const char *head = h2b_chart_template("head"), *tail = h2b_chart_template("tail");
    const char *body = h2b_chart_template(tmpl);
    if (head == NULL || tail == NULL || body == NULL || nvars > MAX_VARS - 5)
        return H2B_ERR_NOTFOUND;
    struct h2b_buf qtitle;
    h2b_buf_init(&qtitle);
    h2b_chart_quote(&qtitle, title);
    struct h2b_chart_var all[MAX_VARS] = {
        {"NAME", name},   {"TEMPLATE", tmpl}, {"TITLE", h2b_buf_str(&qtitle)},
        {"WIDTH", "960"}, {"HEIGHT", "560"},
    };
    memcpy(all + 5, vars, nvars * sizeof(*vars));
    int rc = h2b_buf_error(&qtitle);
    if (rc || (rc = h2b_chart_expand(head, all, nvars + 5, out)) ||
        (rc = h2b_chart_expand(body, all, nvars + 5, out)) ||
        (rc = h2b_chart_expand(tail, all, nvars + 5, out))) {
        h2b_buf_free(&qtitle);
        return rc;
    }
    h2b_buf_free(&qtitle);
    return H2B_OK;
}

int h2b_chart_run_gnuplot(const char *gnuplot, const char *dir, const char *const *scripts,
                          size_t nscripts, const char *log_name, struct h2b_diag *diag)
{
    if (nscripts > 32)
        return H2B_ERR_INVAL;
    char log_path[4096];
    snprintf(log_path, sizeof(log_path), "%s/%s", dir, log_name);
    char *argv[32 + 2];
    argv[0] = (char *)gnuplot;
    for (size_t i = 0; i < nscripts; i++)
        argv[i + 1] = (char *)scripts[i];
    argv[nscripts + 1] = NULL;

    /* the log is opened before the child changes directory, so dir may be relative */
    struct h2b_proc_opts po = {
        .out = H2B_PROC_FILE, .out_path = log_path, .err_to_out = true, .cwd = dir};
    struct h2b_proc *p;
    int rc = h2b_proc_spawn(&p, argv, &po);
    if (rc == H2B_ERR_NOTFOUND) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: not found", gnuplot);
        return rc;
    }
    if (rc != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: cannot start: %s", gnuplot,
                    rc == H2B_ERR_IO ? "cannot create its log" : strerror(errno));
        return H2B_ERR_SYS;
    }
    int status = 0;
    rc = h2b_proc_wait(p, UINT64_MAX, &status);
    h2b_proc_del(p);
    if (rc != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: waitpid: %s", gnuplot, strerror(errno));
        return H2B_ERR_SYS;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return H2B_OK;
    /* gnuplot's error is the last thing it prints (the line, a caret, the message): its last
     * 320 bytes, so that the message's end still fits the diagnostic after the words before */
    char tail[321];
    h2b_fs_tail(log_path, tail, sizeof(tail));
    if (WIFEXITED(status))
        h2b_diag_at(diag, NULL, 0, 0, "%s exited with status %d: %s", gnuplot, WEXITSTATUS(status),
                    tail);
    else
        h2b_diag_at(diag, NULL, 0, 0, "%s killed by signal %d: %s", gnuplot, WTERMSIG(status),
                    tail);
    return H2B_ERR_SYS;
}
