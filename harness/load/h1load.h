/*
 * h1load.h - the HTTP/1.1 engine behind `h2bench load --h1` (internal to h2bench::load): its
 * engine table is engine.h's h2b__h1_engine; load.c also asks it which protocol a server picks
 * from --npn-list before the run.
 */
#ifndef H2B_LOAD_H1LOAD_H
#define H2B_LOAD_H1LOAD_H

#include "load/engine.h"

/* One TLS handshake offering the run's ALPN list (sh->ssl_ctx): writes the protocol the server
 * chose into out ("" for none). Returns H2B_OK or H2B_ERR_IO (no connection or handshake). */
int h2b__h1_probe_alpn(const struct h2b__load_shared *sh, char *out, size_t cap);

#endif
