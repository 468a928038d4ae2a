/*
 * h3quic.h - the QUIC and HTTP/3 plumbing the HTTP/3 server (servers/h3/h3server.c) and the load
 * generator's HTTP/3 engine (harness/load/h3load.c) share: ngtcp2 0.12 + GnuTLS, nghttp3 0.8.
 *
 * struct h2b_h3quic is the first member of each side's connection struct; ngtcp2's and
 * nghttp3's user_data point at that struct, so the shared callbacks below cast user_data to
 * struct h2b_h3quic. Single-threaded: a connection is used by the thread that owns it.
 */
#ifndef H2B_CORE_H3QUIC_H
#define H2B_CORE_H3QUIC_H

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_h3quic {
    ngtcp2_crypto_conn_ref ref; /* GnuTLS session pointer -> this */
    ngtcp2_conn *q;
    nghttp3_conn *h; /* NULL until the 1-RTT keys exist */
    gnutls_session_t tls;
    ngtcp2_connection_close_error err; /* what CONNECTION_CLOSE will carry */
};

/* Prepares b (no library objects yet): the conn_ref and a NO_ERROR close reason. */
void h2b_h3quic_init(struct h2b_h3quic *b);

/* Deletes what b holds (nghttp3, ngtcp2, GnuTLS); b can be initialised again. */
void h2b_h3quic_free(struct h2b_h3quic *b);

/* Sets the QUIC callbacks both sides use the same way: the crypto helpers, stream data to
 * nghttp3 (consumed bytes credited back), ACKs, stream close, reset and STOP_SENDING, flow-control
 * unblocking, random bytes. The caller adds its own (handshake, connection IDs, keys, streams). */
void h2b_h3quic_callbacks(ngtcp2_callbacks *cb);

/* Sets nghttp3's stop_sending, reset_stream and deferred_consume callbacks. */
void h2b_h3quic_http_callbacks(nghttp3_callbacks *cb);

/* GnuTLS session for b->q: TLS 1.3, ALPN h3, cred; sni for a client ("localhost" for an IP),
 * NULL for a server. Returns 0 or -1. */
int h2b_h3quic_tls(struct h2b_h3quic *b, bool server, gnutls_certificate_credentials_t cred,
                   const char *sni);

/* Opens the control and the two QPACK streams and binds them to b->h. Returns 0 or -1. */
int h2b_h3quic_bind_streams(struct h2b_h3quic *b);

/* Credits n consumed bytes of stream id to the peer (stream and connection windows). */
void h2b_h3quic_consume(struct h2b_h3quic *b, int64_t id, uint64_t n);

/* The close reason for an ngtcp2 error (TLS alert for NGTCP2_ERR_CRYPTO), unless one is set. */
void h2b_h3quic_liberr(struct h2b_h3quic *b, int liberr);

/* The close reason for an nghttp3 error (an HTTP/3 application error code). */
void h2b_h3quic_app_error(struct h2b_h3quic *b, int liberr);

/* Packets one turn may write (the send quantum, 1..max_pkts) and their size cap (<= cap). */
size_t h2b_h3quic_quantum(struct h2b_h3quic *b, size_t cap, size_t max_pkts, size_t *maxpay);

/* Writes the next packet (HTTP/3 stream data first, then whatever QUIC needs) into buf.
 * Returns its length, 0 when there is nothing to send (congestion, pacing or idle), or -1 on a
 * fatal error (b->err set). path receives the packet's path. */
ngtcp2_ssize h2b_h3quic_write_pkt(struct h2b_h3quic *b, ngtcp2_path *path, uint8_t *buf, size_t len,
                                  uint64_t now);

/* Writes CONNECTION_CLOSE with b->err into buf: its length, or 0 when the connection is already
 * closing or draining (or the write failed). */
ngtcp2_ssize h2b_h3quic_write_close(struct h2b_h3quic *b, uint8_t *buf, size_t len, uint64_t now);

#endif
