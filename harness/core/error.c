/*
 * error.c - descriptions of the error codes.
 *
 * A switch rather than a table indexed by -code keeps unknown values safe without bounds checks.
 */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *h2b_strerror(int code)
{
    switch (code) {
    case H2B_OK:
        return "success";
    case H2B_ERR_INVAL:
        return "invalid argument";
    case H2B_ERR_NOMEM:
        return "out of memory";
    case H2B_ERR_IO:
        return "input/output error";
    case H2B_ERR_PARSE:
        return "malformed input";
    case H2B_ERR_RANGE:
        return "value out of range";
    case H2B_ERR_UNSUPPORTED:
        return "not supported here";
    case H2B_ERR_SYS:
        return "system call failed";
    case H2B_ERR_TIMEOUT:
        return "timed out";
    case H2B_ERR_PROTO:
        return "protocol error";
    case H2B_ERR_CLOSED:
        return "connection closed";
    case H2B_ERR_NOTFOUND:
        return "not found";
    case H2B_ERR_EXISTS:
        return "already exists";
    case H2B_ERR_INTERRUPTED:
        return "interrupted";
    }
    return "unknown error";
}

int h2b_exit_code(int rv)
{
    if (rv > 0)
        return H2B_EXIT_FAIL;
    switch (rv) {
    case H2B_OK:
        return H2B_EXIT_OK;
    case H2B_ERR_INVAL:
    case H2B_ERR_PARSE:
    case H2B_ERR_RANGE:
    case H2B_ERR_NOTFOUND:
        return H2B_EXIT_USAGE;
    default:
        return H2B_EXIT_RUNTIME;
    }
}

void h2b_reason(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

void h2b_progress(h2b_progress_fn fn, void *arg, const char *fmt, ...)
{
    if (!fn)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fn(arg, line);
}
