/*
 * probe.c - readiness (libcurl) and SETTINGS discovery (libnghttp2) for targets.
 *
 * Readiness uses libcurl rather than our own client so that "ready" means "a stock HTTP/2
 * client gets an answer", independent of the code under test. SETTINGS discovery needs the raw
 * frame, which curl does not expose, so it is a small nghttp2 client session driven with
 * mem_send/mem_recv over a blocking socket whose every wait is bounded by the deadline (poll).
 * TLS (https://) goes through OpenSSL with ALPN "h2" and no certificate verification: the probe
 * asks what the server advertises, it does not vouch for who it is.
 */
#include "run/probe.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "core/url.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROBE_RETRY_NS (50 * H2B_NS_PER_MS)

int h2b_probe_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? H2B_OK : H2B_ERR_SYS;
}

void h2b_probe_global_cleanup(void)
{
    curl_global_cleanup();
}

static size_t discard_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
    (void)ptr;
    (void)arg;
    return size * nmemb;
}

int h2b_probe_ready(const char *base_url, const char *path, bool h1, uint64_t timeout_ns,
                    struct h2b_diag *diag)
{
    char url[1024];
    uint64_t deadline = h2b_clock_now_ns() + timeout_ns;
    struct h2b_url u;
    struct h2b_diag d = {0};
    if (h2b_url_parse(base_url, H2B_URL_ORIGIN, &u, &d) != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", base_url, d.message);
        return H2B_ERR_INVAL;
    }
    bool tls = u.tls;
    snprintf(url, sizeof(url), "%s%s", base_url, path);
    h2b_diag_at(diag, NULL, 0, 0, "no attempt made");
    CURL *curl = curl_easy_init();
    if (!curl) {
        h2b_diag_at(diag, NULL, 0, 0, "curl_easy_init failed");
        return H2B_ERR_NOMEM;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION,
                     h1    ? (long)CURL_HTTP_VERSION_1_1
                     : tls ? (long)CURL_HTTP_VERSION_2TLS
                           : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
    int rc = H2B_ERR_TIMEOUT;
    for (;;) {
        uint64_t now = h2b_clock_now_ns();
        if (now >= deadline)
            break;
        long left_ms = (long)((deadline - now) / H2B_NS_PER_MS) + 1;
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, left_ms);
        CURLcode cc = curl_easy_perform(curl);
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        if (cc == CURLE_OK && status > 0) {
            rc = H2B_OK;
            break;
        }
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", url, curl_easy_strerror(cc));
        h2b_clock_sleep_ns(PROBE_RETRY_NS);
    }
    curl_easy_cleanup(curl);
    return rc;
}

/* ---- SETTINGS discovery ---- */

/* Waits until fd is readable (events POLLIN) or writable; H2B_ERR_TIMEOUT at the deadline. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = h2b_clock_now_ns();
        if (now >= deadline)
            return H2B_ERR_TIMEOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)((deadline - now) / H2B_NS_PER_MS) + 1);
        if (n > 0)
            return H2B_OK;
        if (n < 0 && errno != EINTR)
            return H2B_ERR_SYS;
    }
}

static int connect_tcp(const struct h2b_url *u, uint64_t deadline, int *out, struct h2b_diag *diag)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(u->host, u->port_str, &hints, &res);
    if (gai != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", u->host, gai_strerror(gai));
        return H2B_ERR_SYS;
    }
    int rc = H2B_ERR_SYS;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
            int err = 0;
            socklen_t len = sizeof(err);
            rc = wait_fd(fd, POLLOUT, deadline);
            if (rc == H2B_OK && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && !err) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                *out = fd;
                freeaddrinfo(res);
                return H2B_OK;
            }
            h2b_diag_at(diag, NULL, 0, 0, "connect %s: %s", u->authority,
                        rc == H2B_ERR_TIMEOUT ? "timed out" : strerror(err ? err : errno));
            rc = rc == H2B_ERR_TIMEOUT ? rc : H2B_ERR_SYS;
        } else {
            h2b_diag_at(diag, NULL, 0, 0, "connect %s: %s", u->authority, strerror(errno));
        }
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

struct conn {
    int fd;
    SSL *ssl;
    uint64_t deadline;
};

/* Writes all of buf; H2B_OK or an error. */
static int conn_write(struct conn *c, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n;
        int rc;
        if (c->ssl) {
            int w = SSL_write(c->ssl, buf, (int)len);
            if (w > 0) {
                n = w;
            } else {
                int e = SSL_get_error(c->ssl, w);
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                    return H2B_ERR_CLOSED;
                if ((rc = wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, c->deadline)))
                    return rc;
                continue;
            }
        } else {
            n = send(c->fd, buf, len, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno != EAGAIN && errno != EINTR)
                    return H2B_ERR_CLOSED;
                if ((rc = wait_fd(c->fd, POLLOUT, c->deadline)))
                    return rc;
                continue;
            }
        }
        buf += n;
        len -= (size_t)n;
    }
    return H2B_OK;
}

/* Reads some bytes into buf; returns the count (> 0) or a negative error. */
static ssize_t conn_read(struct conn *c, uint8_t *buf, size_t size)
{
    for (;;) {
        int rc;
        if (c->ssl) {
            int r = SSL_read(c->ssl, buf, (int)size);
            if (r > 0)
                return r;
            int e = SSL_get_error(c->ssl, r);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return H2B_ERR_CLOSED;
            if ((rc = wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, c->deadline)))
                return rc;
        } else {
            ssize_t n = recv(c->fd, buf, size, 0);
            if (n > 0)
                return n;
            if (n == 0)
                return H2B_ERR_CLOSED;
            if (errno != EAGAIN && errno != EINTR)
                return H2B_ERR_CLOSED;
            if ((rc = wait_fd(c->fd, POLLIN, c->deadline)))
                return rc;
        }
    }
}

static int tls_handshake(struct conn *c, SSL_CTX *ctx, const char *host, struct h2b_diag *diag)
{
    static const unsigned char alpn[] = {2, 'h', '2'};
    c->ssl = SSL_new(ctx);
    if (!c->ssl)
        return H2B_ERR_NOMEM;
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, host);
    SSL_set_alpn_protos(c->ssl, alpn, sizeof(alpn));
    for (;;) {
        int r = SSL_connect(c->ssl);
        if (r == 1)
            break;
        int e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            h2b_diag_at(diag, NULL, 0, 0, "TLS handshake failed: %s",
                        ERR_reason_error_string(ERR_get_error()));
            return H2B_ERR_PROTO;
        }
        int rc = wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, c->deadline);
        if (rc) {
            h2b_diag_at(diag, NULL, 0, 0, "TLS handshake timed out");
            return rc;
        }
    }
    const unsigned char *proto = NULL;
    unsigned int plen = 0;
    SSL_get0_alpn_selected(c->ssl, &proto, &plen);
    if (plen != 2 || memcmp(proto, "h2", 2) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "server did not select ALPN h2");
        return H2B_ERR_PROTO;
    }
    return H2B_OK;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *arg)
{
    (void)session;
    bool *got = arg;
    if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK))
        *got = true;
    return 0;
}

/* Runs the handshake on an open connection until the server's SETTINGS arrived. */
static int exchange_settings(struct conn *c, uint32_t *out, struct h2b_diag *diag)
{
    nghttp2_session_callbacks *cbs = NULL;
    nghttp2_session *session = NULL;
    bool got = false;
    int rc = H2B_ERR_NOMEM;
    if (nghttp2_session_callbacks_new(&cbs) != 0)
        return H2B_ERR_NOMEM;
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    if (nghttp2_session_client_new(&session, cbs, &got) != 0)
        goto out_cbs;
    if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, NULL, 0) != 0)
        goto out_session;
    while (!got) {
        const uint8_t *data;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(session, &data)) > 0) {
            if ((rc = conn_write(c, data, (size_t)n))) {
                h2b_diag_at(diag, NULL, 0, 0, "sending the connection preface: %s",
                            h2b_strerror(rc));
                goto out_session;
            }
        }
        uint8_t buf[4096];
        n = conn_read(c, buf, sizeof(buf));
        if (n < 0) {
            rc = (int)n;
            h2b_diag_at(diag, NULL, 0, 0, "waiting for the server's SETTINGS: %s",
                        h2b_strerror(rc));
            goto out_session;
        }
        if (nghttp2_session_mem_recv(session, buf, (size_t)n) < 0) {
            rc = H2B_ERR_PROTO;
            h2b_diag_at(diag, NULL, 0, 0, "the server's first frames are not valid HTTP/2");
            goto out_session;
        }
    }
    uint32_t max =
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    /* nghttp2 reports "not sent" as its initial value, 2^31-1 or more: unlimited. */
    *out = max >= (1u << 31) - 1 ? H2B_PROBE_UNLIMITED : max;
    /* Leave politely: ACK their SETTINGS and say GOAWAY, so the server logs no error. */
    nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR);
    const uint8_t *data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(session, &data)) > 0 &&
           conn_write(c, data, (size_t)n) == H2B_OK)
        ;
    rc = H2B_OK;
out_session:
    nghttp2_session_del(session);
out_cbs:
    nghttp2_session_callbacks_del(cbs);
    return rc;
}

int h2b_probe_max_streams(const char *base_url, uint64_t timeout_ns, uint32_t *out,
                          struct h2b_diag *diag)
{
    struct h2b_url u;
    struct h2b_diag d = {0};
    struct conn c = {.fd = -1, .ssl = NULL, .deadline = h2b_clock_now_ns() + timeout_ns};
    SSL_CTX *ctx = NULL;
    int rc;
    if (h2b_url_parse(base_url, H2B_URL_ORIGIN, &u, &d) != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "%s: %s", base_url, d.message);
        return H2B_ERR_INVAL;
    }
    if ((rc = connect_tcp(&u, c.deadline, &c.fd, diag)))
        return rc;
    if (u.tls) {
        ctx = SSL_CTX_new(TLS_client_method());
        if (!ctx) {
            rc = H2B_ERR_NOMEM;
            goto out_close;
        }
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        /* SNI carries a name, never an address literal (RFC 6066) */
        if ((rc = tls_handshake(&c, ctx, u.ipv6 ? NULL : u.host, diag)))
            goto out_close;
    }
    rc = exchange_settings(&c, out, diag);
out_close:
    if (c.ssl) {
        SSL_shutdown(c.ssl);
        SSL_free(c.ssl);
    }
    SSL_CTX_free(ctx);
    close(c.fd);
    return rc;
}
