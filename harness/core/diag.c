/*
 * diag.c - the diagnostics type's helpers (diag.h): fill one from a position and a message, pass
 * a callee's on, print it as compilers do.
 *
 * Approach: a fixed-size struct filled with snprintf, so a diagnostic never allocates and can
 * be filled on any failure path, out of memory included. Rejected: a heap string per message
 * (an allocation failure would lose the message that explains it).
 */
#include "core/diag.h"
#include "core/error.h"

#include <stdio.h>

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

void h2b_diag_vat(struct h2b_diag *d, const char *file, int line, int column, const char *prefix,
                  const char *fmt, va_list ap)
{
    if (d == NULL)
        return;
    copy_str(d->file, sizeof(d->file), file);
    d->line = line;
    d->column = column;
    size_t n = 0;
    if (prefix && prefix[0]) {
        int w = snprintf(d->message, sizeof(d->message), "%s: ", prefix);
        n = w < 0 ? 0 : ((size_t)w < sizeof(d->message) ? (size_t)w : sizeof(d->message) - 1);
    }
    vsnprintf(d->message + n, sizeof(d->message) - n, fmt, ap);
}

void h2b_diag_at(struct h2b_diag *d, const char *file, int line, int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h2b_diag_vat(d, file, line, column, NULL, fmt, ap);
    va_end(ap);
}

void h2b_diag_pass(struct h2b_diag *out, const struct h2b_diag *in, const char *file, int rc)
{
    if (out != in)
        *out = *in;
    if (!out->file[0] && file)
        snprintf(out->file, sizeof(out->file), "%s", file);
    if (!out->message[0])
        snprintf(out->message, sizeof(out->message), "%s", h2b_strerror(rc));
}

void h2b_diag_print(const struct h2b_diag *d, FILE *f)
{
    if (d->file[0] && d->line > 0)
        fprintf(f, "%s:%d:%d: %s\n", d->file, d->line, d->column, d->message);
    else if (d->file[0])
        fprintf(f, "%s: %s\n", d->file, d->message);
    else
        fprintf(f, "%s\n", d->message);
}
