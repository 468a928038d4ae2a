/*
 * probe.h - asking a target what it is before measuring it.
 *
 * Two probes, both bounded by a deadline:
 *  - readiness: an HTTP/2 request through libcurl (prior knowledge for http://, ALPN h2 for
 *    https://, certificate not verified), or an HTTP/1.1 one for an h1 listener, retried until
 *    any HTTP response arrives;
 *  - max streams: a minimal libnghttp2 client handshake that reads the server's SETTINGS frame
 *    and returns its SETTINGS_MAX_CONCURRENT_STREAMS, which matrix expansion needs.
 * Blocking calls on the caller's thread; not for hot paths.
 */
#ifndef H2B_RUN_PROBE_H
#define H2B_RUN_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_diag; /* core/json.h */

/* The value reported when the server's SETTINGS carry no SETTINGS_MAX_CONCURRENT_STREAMS
 * (RFC 9113: unlimited). */
#define H2B_PROBE_UNLIMITED 0u

/* Requests base_url + path (base_url is scheme://host:port) every 50 ms until an HTTP response
 * comes back or timeout_ns passes; over HTTP/1.1 when h1 (a listener that speaks no h2c),
 * else HTTP/2. Returns H2B_OK, H2B_ERR_INVAL (base_url is not scheme://host[:port], url.h) or
 * H2B_ERR_TIMEOUT; diag (may be NULL) says why (or names the last failure). Needs
 * curl_global_init (h2b_probe_global_init). */
int h2b_probe_ready(const char *base_url, const char *path, bool h1, uint64_t timeout_ns,
                    struct h2b_diag *diag);

/* Opens one HTTP/2 connection to base_url, completes the SETTINGS exchange and stores the
 * server's SETTINGS_MAX_CONCURRENT_STREAMS in *out (H2B_PROBE_UNLIMITED if it sent none).
 * Returns H2B_OK, H2B_ERR_INVAL (base_url is not scheme://host[:port]), H2B_ERR_SYS (connect),
 * H2B_ERR_PROTO, H2B_ERR_CLOSED or H2B_ERR_TIMEOUT; diag (may be NULL) says why; *out
 * untouched on failure. */
int h2b_probe_max_streams(const char *base_url, uint64_t timeout_ns, uint32_t *out,
                          struct h2b_diag *diag);

/* libcurl's process-wide initialisation; call once before any thread starts. */
int h2b_probe_global_init(void);
void h2b_probe_global_cleanup(void);

#endif
