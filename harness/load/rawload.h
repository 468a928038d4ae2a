/*
 * rawload.h - the raw TCP engine behind `h2bench load --raw REQ:RESP` (internal to
 * h2bench::load): REQ bytes out, RESP bytes back, per request, one request in flight per
 * connection, against the kernel's floor (`h2bench floor-serve`).
 *
 * load.c sets a worker up with h2b__load_worker_init() as for h2, then h2b__raw_worker_init()
 * adds the raw connections, and runs h2b__raw_worker_main() as the thread body.
 */
#ifndef H2B_LOAD_RAWLOAD_H
#define H2B_LOAD_RAWLOAD_H

#include "load/engine.h"

/* Adds the worker's raw connections. H2B_OK or H2B_ERR_NOMEM; free with h2b__raw_worker_free. */
int h2b__raw_worker_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests);

/* Thread body: runs the worker's raw loop to the end; w->rc holds the outcome. */
void *h2b__raw_worker_main(void *arg);

/* Frees what h2b__raw_worker_init added. Accepts a worker without raw state. */
void h2b__raw_worker_free(struct h2b__load_worker *w);

#endif
