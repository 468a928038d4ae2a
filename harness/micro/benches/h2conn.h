/*
 * h2conn.h - an in-memory HTTP/2 server connection for the component suite: a real
 * nghttp2_session_server fed with canned client bytes, its output drained and discarded.
 *
 * No sockets: a benchmark feeds deterministic byte transcripts (built once with the helpers
 * below) and drains what the session writes, so every operation is the server-side work of
 * receiving frames and producing the response, nothing else. Per-stream application state comes
 * from a fixed pool (no malloc per request in our code; nghttp2's own allocations are what the
 * allocation pass counts).
 */
#ifndef H2B_MICRO_BENCHES_H2CONN_H
#define H2B_MICRO_BENCHES_H2CONN_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

#define H2C_POOL 1024

/* What a stream's response body is. */
enum h2c_body { H2C_BODY_FIXED, H2C_BODY_DEFERRED };

struct h2c_stream {
    int32_t id;
    uint64_t body_left;    /* bytes of response body still to send */
    uint64_t request_body; /* request DATA bytes received */
    struct h2c_stream *next_free;
};

struct h2c_conn {
    nghttp2_session *session;
    struct h2c_stream pool[H2C_POOL];
    struct h2c_stream *free_list;
    uint64_t response_body; /* body length of each response (H2C_BODY_FIXED) */
    enum h2c_body body_mode;
    uint64_t out_bytes;     /* everything the session wrote */
    uint64_t requests;      /* requests complete (END_STREAM received) */
    uint64_t closed;        /* streams closed */
    int32_t next_stream_id; /* next client stream id to use */
};

/* Creates the session and completes the connection preface exchange (client preface and
 * SETTINGS with the given initial stream window, a connection WINDOW_UPDATE so the connection
 * window is about 1 GiB, SETTINGS ACK). Returns 0 or -1. */
int h2c_open(struct h2c_conn *c, uint32_t initial_window, uint64_t response_body,
             enum h2c_body mode);
void h2c_close(struct h2c_conn *c);

/* Feeds len bytes; returns 0, or -1 if the session rejected them. */
int h2c_feed(struct h2c_conn *c, const uint8_t *p, size_t len);
/* Drains everything the session wants to send; returns 0 or -1. */
int h2c_drain(struct h2c_conn *c);

/* Makes the deferred body of stream id resumable with len more bytes. Returns 0 or -1. */
int h2c_push_body(struct h2c_conn *c, int32_t id, uint64_t len);

/* --- canned client bytes ------------------------------------------------------------------ */

/* Writes a 9-byte frame header at out. */
void h2c_frame_header(uint8_t *out, uint32_t len, uint8_t type, uint8_t flags, int32_t stream);
/* Patches the stream id of the frame header at frame. */
void h2c_set_stream(uint8_t *frame, int32_t stream);
/* A WINDOW_UPDATE frame (13 bytes) at out. */
void h2c_window_update(uint8_t *out, int32_t stream, uint32_t increment);

/* HPACK, stateless representations only (static table index or literal without indexing), so
 * a canned header block decodes the same way every time. Each returns the bytes written, or 0
 * if out is too small. */
size_t h2c_hpack_indexed(uint8_t *out, size_t size, unsigned index);
size_t h2c_hpack_literal(uint8_t *out, size_t size, unsigned name_index, const char *value);

/* A GET (or POST with content-length when post_len > 0) request HEADERS frame for path on
 * stream 1, END_STREAM set for GET. Returns the frame length or 0. */
size_t h2c_request_headers(uint8_t *out, size_t size, const char *method, const char *path,
                           uint64_t post_len);

#endif
