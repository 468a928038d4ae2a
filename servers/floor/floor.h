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
    FILE *ready;              /* "listening on http://HOST:PORT\n" goes here once bound */
};

/* Runs the server until SIGTERM or SIGINT (blocked and taken by a signalfd on this thread).
 * Returns H2B_OK after a clean stop, or a negative error with diag set (bind, epoll). */
int h2b_floor_serve(const struct h2b_floor_config *cfg, struct h2b_diag *diag);

#endif
