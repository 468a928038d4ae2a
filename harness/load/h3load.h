/*
 * h3load.h - the HTTP/3 engine behind `h2bench load --h3` (internal to h2bench::load).
 *
 * load.c sets a worker up with h2b__load_worker_init() as for h2, then h2b__h3_worker_init()
 * adds the QUIC connections, and runs h2b__h3_worker_main() as the thread body. The worker's
 * stats, histograms, progress hand-off, epoll fd and schedule are the h2 worker's.
 */
#ifndef H2B_LOAD_H3LOAD_H
#define H2B_LOAD_H3LOAD_H

#include "load/engine.h"

/* Adds the HTTP/3 state to w (after h2b__load_worker_init). first_conn and requests as for
 * h2b__load_worker_init. Returns H2B_OK or H2B_ERR_NOMEM (free with h2b__h3_worker_free). */
int h2b__h3_worker_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests);

/* Thread body: runs the worker's QUIC connections to the end; w->rc holds the outcome. */
void *h2b__h3_worker_main(void *arg);

/* Frees what h2b__h3_worker_init added (before h2b__load_worker_free). Accepts a worker without
 * HTTP/3 state. */
void h2b__h3_worker_free(struct h2b__load_worker *w);

#endif
