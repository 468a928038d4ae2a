/*
 * diag.h - a diagnostic: which file, where in it (line and column) and what is wrong, as every
 * reader of a user's file and every command reports a problem ("x.json:12:20: ...").
 */
#ifndef H2B_CORE_DIAG_H
#define H2B_CORE_DIAG_H

#include <stdarg.h>
#include <stdio.h>

/* A diagnostic: where (line and column 1-based; 0 when unknown) and what. */
struct h2b_diag {
    char file[512];
    int line, column;
    char message[512];
};

/* Where a library hands each problem it finds when it reports every one, not only the first
 * (a ceilings file's): the CLI prints them, a library caller keeps the first. May be NULL. */
typedef void (*h2b_diag_fn)(void *arg, const struct h2b_diag *d);

/* Fills d with an explicit position (line 0: none). */
void h2b_diag_at(struct h2b_diag *d, const char *file, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Passes a callee's diagnostic on as *out: in's position and message, with file where in names
 * none and the words of rc (h2b_strerror) where it has no message. in and out may be the same. */
void h2b_diag_pass(struct h2b_diag *out, const struct h2b_diag *in, const char *file, int rc);

/* Writes "file:line:column: message\n" ("file: message" without a line, "message" without a
 * file) to f. */
void h2b_diag_print(const struct h2b_diag *d, FILE *f);

/* h2b_diag_at with a va_list and a prefix ("<prefix>: <fmt...>"; none when NULL or ""). */
__attribute__((format(printf, 6, 0))) void h2b_diag_vat(struct h2b_diag *d, const char *file,
                                                        int line, int column, const char *prefix,
                                                        const char *fmt, va_list ap);

#endif
