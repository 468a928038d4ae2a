/*
 * floor.h - the kernel's floor: a raw-TCP request/response server (`h2bench floor-serve`).
 *
 * It reads request-sized messages and answers each with one response-sized write, so that a
 * client sending the bytes an HTTP/2 request takes and reading the bytes its response takes
 * makes the kernel do the same TCP work as against an HTTP/2 server, with no HTTP/2 at all.
 * What a matrix cell measures against it is the most any server could reach on that machine
 * with those connections (docs/scenarios.md, the floor target).
 */
#ifndef H2B_FLOOR_H
#define H2B_FLOOR_H

#include "core/diag.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define H2B_FLOOR_MSG_MAX (1U << 20) /* the largest request or response size */
#define H2B_FLOOR_OWED_MAX 64        /* answers owed before a connection stops being read */

struct h2b_floor_config {
    const char *host;         /* address to bind */
    uint16_t port;            /* 0: ephemeral */
    uint32_t request_bytes;   /* a request is this many bytes (any content) */
    uint32_t response_bytes;  /* each is answered with this many bytes */
    uint32_t max_connections; /* open at once; more are closed at accept */
    bool uring;               /* --io uring: the io_uring loop, or epoll when it is refused */
    FILE *ready;              /* "listening on http://HOST:PORT\n" goes here once bound */
    FILE *notice;             /* --io uring's fallback to epoll is said here, one line (or NULL) */
};

/* Runs the server until SIGTERM or SIGINT (blocked and taken by a signalfd on this thread).
 * With uring set and the ring refused (H2B_URING_FAIL=1, io_uring_disabled, a build without
 * liburing, an old kernel) it runs on epoll after one line on notice; either way, when uring was
 * asked for, the ready stream gets "io: uring" or "io: epoll (io_uring unavailable: WHY)" before
 * the listening line, as `h2bench serve --io uring` prints. Returns H2B_OK after a clean stop,
 * or a negative error with diag set (bind, epoll). */
int h2b_floor_serve(const struct h2b_floor_config *cfg, struct h2b_diag *diag);

#endif
