/*
 * h2fast.h - the client side of HTTP/2 framing without an nghttp2_session: the codec behind
 * `h2bench load --engine fast` (see h2fast.c for the design).
 *
 * One struct h2b_h2f per connection. The caller (worker.c) owns requests in slots 0..n-1; the
 * codec keeps per-slot stream state and reports what the server sent through struct
 * h2b_h2f_cb, naming the slot. Output (preface, SETTINGS, requests, ACKs, WINDOW_UPDATE,
 * RST_STREAM, GOAWAY) is appended to one buffer the caller writes with one send per loop turn.
 */
#ifndef H2B_LOAD_H2FAST_H
#define H2B_LOAD_H2FAST_H

#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2B_H2F_NO_SLOT UINT32_MAX

struct h2b_h2f_cb {
    /* a response HEADERS frame starts on slot's stream */
    void (*begin_headers)(void *u, uint32_t slot);
    /* one response header field; slot is H2B_H2F_NO_SLOT for a stream no longer ours (still
     * decoded: HPACK state is per connection). Non-zero: the response is broken, the stream is
     * reset with PROTOCOL_ERROR (stream_close follows). */
    int (*header)(void *u, uint32_t slot, const uint8_t *name, size_t namelen, const uint8_t *value,
                  size_t valuelen);
    /* the header block fragment bytes of one HEADERS or CONTINUATION frame (no padding) of a
     * stream still ours once the fragment is decoded (not one we closed or just reset for a
     * broken field: nghttp2 reports neither, so h2load counts neither) */
    void (*header_bytes)(void *u, size_t n);
    /* DATA payload bytes p[0..n) (padding excluded; a frame may come in several pieces); slot
     * as for header. Non-zero: reset the stream. */
    int (*data)(void *u, uint32_t slot, const uint8_t *p, size_t n);
    /* the server's SETTINGS (not an ACK) were applied */
    void (*settings)(void *u);
    /* the server sent GOAWAY (streams above its last-stream-id are closed right after) */
    void (*goaway)(void *u);
    /* slot's stream ended: code 0 = the server ended it normally, else the RST_STREAM code
     * (REFUSED_STREAM for a stream above a GOAWAY's last-stream-id) */
    void (*stream_close)(void *u, uint32_t slot, uint32_t code);
    /* -v: a frame sent (sent = true) or received; may be NULL */
    void (*frame)(void *u, bool sent, uint8_t type, uint8_t flags, uint32_t length, int32_t sid);
};

struct h2b_h2f_settings {
    uint32_t initial_window; /* SETTINGS_INITIAL_WINDOW_SIZE we send */
    uint32_t conn_window;    /* connection receive window (WINDOW_UPDATE on stream 0) */
    uint32_t header_table;   /* SETTINGS_HEADER_TABLE_SIZE (our decoder) */
    uint32_t encoder_table;  /* our encoder's dynamic table limit (the server's bounds it too) */
    uint32_t max_frame;      /* SETTINGS_MAX_FRAME_SIZE we accept */
};

/* One distinct request's header list (the caller's, alive as long as the codec). */
struct h2b_h2f_req {
    const nghttp2_nv *nva;
    size_t nvlen;
};

/* A cached request header block: valid while gen is the codec's generation. */
struct h2b_h2f_hblk {
    uint64_t gen;
    uint32_t req, len;
    uint8_t *bytes; /* the entry's part of cbytes */
};

struct h2b_h2f_stream {
    int32_t sid;           /* 0: free */
    int32_t send_window;   /* peer's window for our DATA on this stream */
    uint32_t recv_unacked; /* DATA received since our last WINDOW_UPDATE for it */
    size_t body_off;       /* request body bytes sent */
    bool body_pending;     /* DATA still to send */
    bool got_headers;      /* a HEADERS frame arrived */
};

struct h2b_h2f {
    const struct h2b_h2f_cb *cb;
    void *u;
    nghttp2_mem *mem;
    nghttp2_hd_inflater *inf;
    nghttp2_hd_deflater *def; /* our requests' encoder, per connection */
    const struct h2b_h2f_req *reqs;
    uint32_t nreqs;
    struct h2b_h2f_hblk *cache; /* ncache entries, request index modulo ncache */
    uint8_t *cbytes;            /* entry k's block at k * cstride */
    uint8_t *scratch;           /* cstride bytes: a block deflated for sending */
    size_t cstride;
    uint32_t ncache;
    uint64_t gen;       /* bumped when the encoder's table changed (or may have) */
    uint64_t encodes;   /* deflates so far (cache misses), cumulative */
    bool table_pending; /* the server's HEADER_TABLE_SIZE changed: apply after our ACK */
    struct h2b_h2f_settings local;
    struct h2b_h2f_stream *st; /* index = caller's slot */
    uint32_t nst;
    uint32_t *map; /* (sid >> 1) & map_mask -> slot + 1 (0: none); a miss scans st */
    uint32_t map_mask;
    uint32_t nopen;
    uint32_t npending; /* streams with body_pending */
    uint8_t *out;
    size_t ocap, olen, ooff;
    uint32_t acks; /* ACKs queued since the output last drained (h2fast.c ack_flood) */
    /* the server's settings */
    uint32_t peer_max_streams, peer_window, peer_max_frame, peer_table;
    int64_t send_conn_window;
    uint32_t recv_conn_unacked;
    int32_t next_sid;
    bool got_settings, acked, goaway, dead, nomem;
    uint32_t error;       /* the code of the GOAWAY we sent (dead) */
    uint64_t conn_errors; /* connection errors we raised (GOAWAY with a code), cumulative */
    const uint8_t *body;
    size_t body_len;
    /* reader */
    uint8_t hb[9];
    uint8_t hn;
    bool in_payload;
    uint8_t ftype, fflags;
    int32_t fsid;
    uint32_t flen, foff, fbody_end;
    uint8_t pre[8];
    uint8_t pren, preneed;
    uint32_t fslot;  /* slot of the frame's stream, H2B_H2F_NO_SLOT if none */
    int32_t hdr_sid; /* header block in progress (CONTINUATION expected when hdr_cont) */
    bool hdr_cont, hdr_end_stream;
    uint32_t hdr_slot;
    /* the last response header block that left the decoder's table as it was, and its fields:
     * the same bytes again are answered from here without the decoder (h2fast.c); NULL: off */
    struct h2b_h2f_rblock *rblock;
    uint64_t rblock_hits; /* response blocks answered from it, cumulative */
};

/* Once per connection struct. reqs[0..nreqs-1] are the requests submit can send (nreqs > 0);
 * mem serves libnghttp2's HPACK allocations (NULL: malloc). The decoded-response cache is on;
 * h2b_h2f_rblock_off turns it off (tests compare the two). */
int h2b_h2f_init(struct h2b_h2f *f, const struct h2b_h2f_cb *cb, void *u, nghttp2_mem *mem,
                 const struct h2b_h2f_req *reqs, uint32_t nreqs, const uint8_t *body,
                 size_t body_len);
void h2b_h2f_free(struct h2b_h2f *f);
void h2b_h2f_rblock_off(struct h2b_h2f *f);

/* Per connect: forgets every stream and the reader, writes the preface, our SETTINGS and the
 * connection window's WINDOW_UPDATE. H2B_OK or H2B_ERR_NOMEM. */
int h2b_h2f_start(struct h2b_h2f *f, const struct h2b_h2f_settings *s);

/* Sizes the stream state for n slots (only while no stream is open). H2B_OK, H2B_ERR_NOMEM. */
int h2b_h2f_slots(struct h2b_h2f *f, uint32_t n);

/* Sends request req on slot (free): HEADERS (+ CONTINUATION) with its header block (cached, or
 * deflated when the encoder's table has changed), then the body as the server's windows allow.
 * Returns the stream id, or -1 (GOAWAY received, ids exhausted, dead, out of memory). */
int32_t h2b_h2f_submit(struct h2b_h2f *f, uint32_t slot, uint32_t req);

/* Resets slot's stream with code and closes it (stream_close is called). */
void h2b_h2f_reset(struct h2b_h2f *f, uint32_t slot, uint32_t code);

/* Feeds bytes from the server. Returns 0, or -1 when the connection is over (f->dead: a
 * GOAWAY with f->error is queued; out of memory sets f->nomem). */
int h2b_h2f_recv(struct h2b_h2f *f, const uint8_t *data, size_t len);

static inline bool h2b_h2f_want_write(const struct h2b_h2f *f)
{
    return f->olen > f->ooff;
}

#endif
