/*
 * h1load.h - the HTTP/1.1 engine behind `h2bench load --h1` (internal to h2bench::load).
 *
 * load.c sets a worker up with h2b__load_worker_init() as for h2, then h2b__h1_worker_init()
 * adds the HTTP/1.1 connections, and runs h2b__h1_worker_main() as the thread body. The
 * worker's stats, histograms, progress hand-off, epoll fd and schedule are the h2 worker's.
 */
#ifndef H2B_LOAD_H1LOAD_H
#define H2B_LOAD_H1LOAD_H

#include "load/engine.h"

/* Adds the HTTP/1.1 state to w (after h2b__load_worker_init). Returns H2B_OK, H2B_ERR_NOMEM or
 * H2B_ERR_INVAL (a header that cannot be written in HTTP/1.1); free with h2b__h1_worker_free. */
int h2b__h1_worker_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests);

/* Thread body: runs the worker's HTTP/1.1 connections to the end; w->rc holds the outcome. */
void *h2b__h1_worker_main(void *arg);

/* Frees what h2b__h1_worker_init added. Accepts a worker without HTTP/1.1 state. */
void h2b__h1_worker_free(struct h2b__load_worker *w);

/* One TLS handshake offering the run's ALPN list (sh->ssl_ctx): writes the protocol the server
 * chose into out ("" for none). Returns H2B_OK or H2B_ERR_IO (no connection or handshake). */
int h2b__h1_probe_alpn(const struct h2b__load_shared *sh, char *out, size_t cap);

#endif
