/*
 * h2_nghttp2.h - the reference server's HTTP/2 engine over a libnghttp2 session (`h2bench serve
 * --engine nghttp2`): h2b_h2_nghttp2_engine, a struct h2b_engine (engine.h) the connection core
 * (conn.h) runs when the configuration asks for H2B_ENGINE_NGHTTP2.
 */
#ifndef H2B_H2REF_H2_NGHTTP2_H
#define H2B_H2REF_H2_NGHTTP2_H

#include "h2ref/engine.h"

extern const struct h2b_engine h2b_h2_nghttp2_engine;

#endif
