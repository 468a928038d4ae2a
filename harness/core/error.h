/*
 * error.h - the one error enum of h2bench.
 *
 * Every action returns int: H2B_OK (0) or a negative H2B_ERR_* code. Predicates return bool.
 * Codes are negative so that functions that return a count can share the return channel.
 */
#ifndef H2B_CORE_ERROR_H
#define H2B_CORE_ERROR_H

#include <stddef.h>

enum h2b_error {
    H2B_OK = 0,
    H2B_ERR_INVAL = -1,       /* an argument or option is invalid */
    H2B_ERR_NOMEM = -2,       /* an allocation failed */
    H2B_ERR_IO = -3,          /* a read, write, open or rename failed (see errno) */
    H2B_ERR_PARSE = -4,       /* input is malformed (a file, an encoding, a number) */
    H2B_ERR_RANGE = -5,       /* a value is out of the allowed range */
    H2B_ERR_UNSUPPORTED = -6, /* not available on this machine or in this build */
    H2B_ERR_SYS = -7,         /* a system call failed (see errno) */
    H2B_ERR_TIMEOUT = -8,     /* a deadline passed */
    H2B_ERR_PROTO = -9,       /* the peer broke the protocol */
    H2B_ERR_CLOSED = -10,     /* the peer closed the connection */
    H2B_ERR_NOTFOUND = -11,   /* a named thing does not exist */
    H2B_ERR_EXISTS = -12,     /* a thing that must be new already exists */
    H2B_ERR_INTERRUPTED = -13 /* stopped by a signal or a request to stop */
};

/* Returns a static, human-readable description of code (never NULL; unknown codes included). */
const char *h2b_strerror(int code);

/* The process exit statuses of every h2bench command (DESIGN.md). */
enum h2b_exit { H2B_EXIT_OK = 0, H2B_EXIT_FAIL = 1, H2B_EXIT_USAGE = 2, H2B_EXIT_RUNTIME = 3 };

/* The one mapping of a code to an exit status, for apps/: H2B_OK 0; a positive value (a check
 * failed) 1; the input codes (INVAL, PARSE, RANGE, NOTFOUND: a bad flag, a malformed or
 * unreadable input file) 2; everything else (NOMEM, IO: an output could not be written, EXISTS:
 * another process holds it, SYS, UNSUPPORTED, TIMEOUT, PROTO, CLOSED, INTERRUPTED) 3. Engines
 * report an input file they cannot read as H2B_ERR_NOTFOUND, so that IO always means "could not
 * write or run". */
int h2b_exit_code(int rv);

/* Formats a reason (a human-readable "why", for a note or a failed cell) into buf: reasons
 * quote logs, paths and other tools' messages, so a long one is cut to size - 1 bytes, which is
 * not an error (vsnprintf: the compiler cannot prove every quoted text fits, and it need not). */
void h2b_reason(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* How an engine reports progress: one line at a time to a callback the CLI sets (libraries do
 * not print). */
typedef void (*h2b_progress_fn)(void *arg, const char *line);

/* Formats a progress line (cut at 1 KiB, as h2b_reason cuts) and passes it to fn(arg, line);
 * does nothing when fn is NULL. */
void h2b_progress(h2b_progress_fn fn, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
