/*
 * h3quic.c - QUIC/HTTP/3 plumbing shared by the HTTP/3 server and client (see h3quic.h).
 *
 * Approach: the two sides differ in how they accept or start connections, route requests and
 * account responses; how stream bytes move between ngtcp2 and nghttp3, how a packet is
 * written and how errors become CONNECTION_CLOSE reasons is the same, and lives here once.
 * Rejected: a callback table per side for these (they had nothing side-specific in them).
 */
#include "core/h3quic.h"

#include "core/h3tls.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <string.h>

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct h2b_h3quic *)ref->user_data)->q;
}

void h2b_h3quic_init(struct h2b_h3quic *b)
{
    memset(b, 0, sizeof *b);
    b->ref.get_conn = get_conn;
    b->ref.user_data = b;
    ngtcp2_connection_close_error_default(&b->err);
}

void h2b_h3quic_free(struct h2b_h3quic *b)
{
    if (b->h)
        nghttp3_conn_del(b->h);
    if (b->q)
        ngtcp2_conn_del(b->q);
    if (b->tls)
        gnutls_deinit(b->tls);
    b->h = NULL;
    b->q = NULL;
    b->tls = NULL;
}

void h2b_h3quic_consume(struct h2b_h3quic *b, int64_t id, uint64_t n)
{
    if (n == 0)
        return;
    ngtcp2_conn_extend_max_stream_offset(b->q, id, n);
    ngtcp2_conn_extend_max_offset(b->q, n);
}

void h2b_h3quic_liberr(struct h2b_h3quic *b, int liberr)
{
    if (b->err.error_code != 0 || liberr == 0)
        return;
    if (liberr == NGTCP2_ERR_CRYPTO)
        ngtcp2_connection_close_error_set_transport_error_tls_alert(
            &b->err, ngtcp2_conn_get_tls_alert(b->q), NULL, 0);
    else
        ngtcp2_connection_close_error_set_transport_error_liberr(&b->err, liberr, NULL, 0);
}

void h2b_h3quic_app_error(struct h2b_h3quic *b, int liberr)
{
    ngtcp2_connection_close_error_set_application_error(
        &b->err, nghttp3_err_infer_quic_app_error_code(liberr), NULL, 0);
}

/* ---- QUIC callbacks ---- */

static void q_rand(uint8_t *dest, size_t n, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    gnutls_rnd(GNUTLS_RND_NONCE, dest, n);
}

static int q_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t offset,
                              const uint8_t *data, size_t n, void *ud, void *sud)
{
    (void)q, (void)offset, (void)sud;
    struct h2b_h3quic *b = ud;
    if (!b->h)
        return 0;
    nghttp3_ssize r =
        nghttp3_conn_read_stream(b->h, id, data, n, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (r < 0) {
        h2b_h3quic_app_error(b, (int)r);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    /* framing bytes: body bytes are credited by the side's recv_data callback */
    h2b_h3quic_consume(b, id, (uint64_t)r);
    return 0;
}

static int q_acked(ngtcp2_conn *q, int64_t id, uint64_t offset, uint64_t n, void *ud, void *sud)
{
    (void)q, (void)offset, (void)sud;
    struct h2b_h3quic *b = ud;
    if (b->h && nghttp3_conn_add_ack_offset(b->h, id, n) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t code, void *ud,
                          void *sud)
{
    (void)sud;
    struct h2b_h3quic *b = ud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) || code == 0)
        code = NGHTTP3_H3_NO_ERROR;
    if (!b->h)
        return 0;
    int rv = nghttp3_conn_close_stream(b->h, id, code);
    if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND) {
        /* a peer's request stream nghttp3 never saw: its slot is free again */
        if (ngtcp2_is_bidi_stream(id) && !ngtcp2_conn_is_local_stream(q, id))
            ngtcp2_conn_extend_max_streams_bidi(q, 1);
    } else if (rv != 0) {
        h2b_h3quic_app_error(b, rv);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int q_stream_reset(ngtcp2_conn *q, int64_t id, uint64_t final_size, uint64_t code, void *ud,
                          void *sud)
{
    (void)q, (void)final_size, (void)code, (void)sud;
    struct h2b_h3quic *b = ud;
    if (b->h && nghttp3_conn_shutdown_stream_read(b->h, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stop_sending(ngtcp2_conn *q, int64_t id, uint64_t code, void *ud, void *sud)
{
    return q_stream_reset(q, id, 0, code, ud, sud);
}

static int q_extend_stream_data(ngtcp2_conn *q, int64_t id, uint64_t max, void *ud, void *sud)
{
    (void)q, (void)max, (void)sud;
    struct h2b_h3quic *b = ud;
    if (b->h && nghttp3_conn_unblock_stream(b->h, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

void h2b_h3quic_callbacks(ngtcp2_callbacks *cb)
{
    cb->recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    cb->encrypt = ngtcp2_crypto_encrypt_cb;
    cb->decrypt = ngtcp2_crypto_decrypt_cb;
    cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb->recv_stream_data = q_recv_stream_data;
    cb->acked_stream_data_offset = q_acked;
    cb->stream_close = q_stream_close;
    cb->rand = q_rand;
    cb->update_key = ngtcp2_crypto_update_key_cb;
    cb->stream_reset = q_stream_reset;
    cb->extend_max_stream_data = q_extend_stream_data;
    cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb->stream_stop_sending = q_stop_sending;
    cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
}

/* ---- HTTP/3 callbacks ---- */

static int h_deferred_consume(nghttp3_conn *h, int64_t id, size_t n, void *ud, void *sud)
{
    (void)h, (void)sud;
    h2b_h3quic_consume(ud, id, n);
    return 0;
}

static int h_stop_sending(nghttp3_conn *h, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h, (void)sud;
    struct h2b_h3quic *b = ud;
    ngtcp2_conn_shutdown_stream_read(b->q, id, code);
    return 0;
}

static int h_reset_stream(nghttp3_conn *h, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h, (void)sud;
    struct h2b_h3quic *b = ud;
    ngtcp2_conn_shutdown_stream_write(b->q, id, code);
    return 0;
}

void h2b_h3quic_http_callbacks(nghttp3_callbacks *cb)
{
    cb->deferred_consume = h_deferred_consume;
    cb->stop_sending = h_stop_sending;
    cb->reset_stream = h_reset_stream;
}

int h2b_h3quic_bind_streams(struct h2b_h3quic *b)
{
    int64_t ctrl, enc, dec;
    if (ngtcp2_conn_get_max_local_streams_uni(b->q) < 3 ||
        ngtcp2_conn_open_uni_stream(b->q, &ctrl, NULL) != 0 ||
        nghttp3_conn_bind_control_stream(b->h, ctrl) != 0 ||
        ngtcp2_conn_open_uni_stream(b->q, &enc, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(b->q, &dec, NULL) != 0 ||
        nghttp3_conn_bind_qpack_streams(b->h, enc, dec) != 0)
        return -1;
    return 0;
}

int h2b_h3quic_tls(struct h2b_h3quic *b, bool server, gnutls_certificate_credentials_t cred,
                   const char *sni)
{
    unsigned flags = server ? GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET : GNUTLS_CLIENT;
    if (gnutls_init(&b->tls, flags | GNUTLS_NO_END_OF_EARLY_DATA) != 0)
        return -1;
    int rv = server ? ngtcp2_crypto_gnutls_configure_server_session(b->tls)
                    : ngtcp2_crypto_gnutls_configure_client_session(b->tls);
    if (rv != 0 || gnutls_priority_set_direct(b->tls, h2b_h3tls_priority, NULL) != 0 ||
        gnutls_credentials_set(b->tls, GNUTLS_CRD_CERTIFICATE, cred) != 0)
        return -1;
    gnutls_session_set_ptr(b->tls, &b->ref);
    static const char h3[] = "h3";
    gnutls_datum_t alpn = {.data = (unsigned char *)(uintptr_t)h3, .size = 2};
    if (gnutls_alpn_set_protocols(b->tls, &alpn, 1,
                                  GNUTLS_ALPN_MANDATORY |
                                      (server ? GNUTLS_ALPN_SERVER_PRECEDENCE : 0)) != 0)
        return -1;
    if (sni && gnutls_server_name_set(b->tls, GNUTLS_NAME_DNS, sni, strlen(sni)) != 0)
        return -1;
    ngtcp2_conn_set_tls_native_handle(b->q, b->tls);
    return 0;
}

size_t h2b_h3quic_quantum(struct h2b_h3quic *b, size_t cap, size_t max_pkts, size_t *maxpay)
{
    size_t m = ngtcp2_conn_get_max_tx_udp_payload_size(b->q);
    if (m > cap)
        m = cap;
    *maxpay = m;
    size_t n = ngtcp2_conn_get_send_quantum(b->q) / m;
    return n < 1 ? 1 : n > max_pkts ? max_pkts : n;
}

ngtcp2_ssize h2b_h3quic_write_pkt(struct h2b_h3quic *b, ngtcp2_path *path, uint8_t *buf, size_t len,
                                  uint64_t now)
{
    for (;;) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nv = 0;
        if (b->h && ngtcp2_conn_get_max_data_left(b->q)) {
            nv = nghttp3_conn_writev_stream(b->h, &sid, &fin, vec, 16);
            if (nv < 0) {
                h2b_h3quic_app_error(b, (int)nv);
                return -1;
            }
        }
        ngtcp2_ssize ndatalen = -1;
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(b->q, path, &pi, buf, len, &ndatalen, flags, sid,
                                                   (const ngtcp2_vec *)vec, (size_t)nv, now);
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(b->h, sid);
            continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(b->h, sid);
            continue;
        }
        if (n < 0 && n != NGTCP2_ERR_WRITE_MORE) {
            h2b_h3quic_liberr(b, (int)n);
            return -1;
        }
        if (ndatalen >= 0 && sid >= 0) {
            int rv = nghttp3_conn_add_write_offset(b->h, sid, (size_t)ndatalen);
            if (rv != 0) {
                h2b_h3quic_app_error(b, rv);
                return -1;
            }
        }
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue; /* the packet has room for more stream data */
        if (n == 0)
            ngtcp2_conn_update_pkt_tx_time(b->q, now);
        return n;
    }
}

ngtcp2_ssize h2b_h3quic_write_close(struct h2b_h3quic *b, uint8_t *buf, size_t len, uint64_t now)
{
    if (!b->q || ngtcp2_conn_is_in_closing_period(b->q) || ngtcp2_conn_is_in_draining_period(b->q))
        return 0;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi;
    ngtcp2_ssize n =
        ngtcp2_conn_write_connection_close(b->q, &ps.path, &pi, buf, len, &b->err, now);
    return n > 0 ? n : 0;
}
