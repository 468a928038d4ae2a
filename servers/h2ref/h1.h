/*
 * h1.h - the reference server's HTTP/1.1 engine: h2b_h1_engine, a struct h2b_engine (engine.h)
 * the connection core (conn.h) runs when the first bytes of a cleartext connection are not the
 * HTTP/2 client preface, or when TLS negotiated ALPN "http/1.1"; the server loop does not know
 * which protocol a connection speaks.
 *
 * Its input_closed (conn.h's h2b_conn_input_closed): with no request in progress the connection
 * is done at once; a request already read is answered first (a /delay waits for its timer,
 * pipelined complete requests are answered in order), then it is done. A head or body left
 * incomplete can never complete, so it ends the connection once the output is out.
 */
#ifndef H2B_H2REF_H1_H
#define H2B_H2REF_H1_H

#include "h2ref/engine.h"

extern const struct h2b_engine h2b_h1_engine;

#endif
