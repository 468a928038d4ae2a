/*
 * h2_fast.h - the reference server's own-framing HTTP/2 engine (`h2bench serve --engine fast`,
 * the default): h2b_h2_fast_engine, a struct h2b_engine (engine.h) whose frames are read and
 * written by our code (h2_fast.c), with libnghttp2 used only for HPACK decoding. The connection
 * core (conn.h) runs it when the configuration asks for H2B_ENGINE_FAST.
 */
#ifndef H2B_H2REF_H2_FAST_H
#define H2B_H2REF_H2_FAST_H

#include "h2ref/engine.h"

extern const struct h2b_engine h2b_h2_fast_engine;

#endif
