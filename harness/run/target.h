/*
 * target.h - the lifecycle of one matrix target: start, ready, observe, stop.
 *
 * A bundled target is `h2bench serve --port 0`, whose "listening on http://HOST:PORT" line gives
 * the URL. A peer gets a free loopback port chosen here (bind port 0, read it back, close) and
 * a rendered configuration, then libcurl polls it until it answers. A URL target is only
 * polled. A command target (the user's own server) is started like a peer: its command's
 * placeholders are the peers' ({host} {port} {threads} {max_streams} {docroot} {dir}), its
 * environment gets the scenario's "env", and its stdout and stderr go to stdout.log and
 * stderr.log in its run directory, whose last lines are quoted when it fails. Started targets
 * are pinned to their CPU list before exec, so every thread they create
 * inherits the pinning, exactly as taskset would do.
 */
#ifndef H2B_RUN_TARGET_H
#define H2B_RUN_TARGET_H

#include "run/peers.h"
#include "run/scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* SETTINGS_MAX_CONCURRENT_STREAMS h2bench serve is started with when the scenario sets none
 * (its own default). */
#define H2B_TARGET_BUNDLED_MAX_STREAMS 256

struct h2b_target;
struct h2b_diag; /* core/json.h */

struct h2b_target_env {
    const char *self; /* this h2bench executable */
    const struct h2b_peers *peers;
    const char *dir;        /* private directory for this target (config, logs) */
    const char *docroot;    /* static files for peers */
    const char *ready_path; /* path the readiness probe requests */
    /* For the budget passes (budget.h); all may be NULL/0. */
    const char *const *extra_env; /* "NAME=value" added to the target's environment */
    const char *const *wrapper;   /* argv prefix, e.g. valgrind --tool=callgrind ... */
    double timeout_scale;         /* readiness deadline multiplier (valgrind is slow); 0 = 1 */
    /* The kind of cell this instance serves (matrix.protocol, matrix.tls): h2bench serve gets
     * --tls or --h3, a peer its "tls" or "h1" variant (peers.h) with cert and key. Zeroed: the
     * cleartext h2 start every target has. */
    enum h2b_protocol protocol;
    bool tls;
    const char *cert, *key; /* PEM files (tls) */
};

/* Whether spec can serve cells of protocol over TLS (tls) or cleartext; when not, diag (may be
 * NULL) says why in one line. peers may be NULL for targets that are not peers. h3 is served
 * only by h2bench serve built with HTTP/3 (have_h3) and only over TLS. */
bool h2b_target_serves(const struct h2b_target_spec *spec, const struct h2b_peers *peers,
                       enum h2b_protocol protocol, bool tls, bool have_h3, struct h2b_diag *diag);

/* Starts (or, for a URL target, reaches) spec and waits until it answers. Returns H2B_OK, or
 * an error (H2B_ERR_TIMEOUT: never answered; H2B_ERR_CLOSED: exited) and diag (may be NULL)
 * says why, quoting the target's log. *out untouched on failure; a process started on the way
 * is stopped again. The target keeps spec (not a copy): spec must outlive it. */
int h2b_target_start(struct h2b_target **out, const struct h2b_target_spec *spec,
                     const struct h2b_target_env *env, struct h2b_diag *diag);

/* Stops the target (SIGTERM, then SIGKILL after a grace period) and frees it; NULL is fine. */
void h2b_target_del(struct h2b_target *t);

/* scheme://host:port of the running target. */
const char *h2b_target_url(const struct h2b_target *t);

/* Process id, or 0 for a URL target (not ours to observe). */
pid_t h2b_target_pid(const struct h2b_target *t);

/* True while the process runs (URL targets: always). When it has exited, diag (may be NULL)
 * says how ("exited with status 1", "killed by signal 9"), and later calls keep saying so. */
bool h2b_target_alive(struct h2b_target *t, struct h2b_diag *diag);

/* CPU time (user + system, all threads) and resident set of the process. Return H2B_OK or
 * H2B_ERR_UNSUPPORTED for URL targets, H2B_ERR_IO if /proc cannot be read. */
int h2b_target_cpu_ns(const struct h2b_target *t, uint64_t *out);
int h2b_target_rss_kib(const struct h2b_target *t, uint64_t *out);

/* Where the target's stderr/stdout go (a file in its directory), for failure messages. */
const char *h2b_target_log(const struct h2b_target *t);

/* The program that was executed (after PATH search: the first existing one), "" for URLs. */
const char *h2b_target_program(const struct h2b_target *t);

/* The I/O backend of a bundled or floor target as its "io:" line before the ready line said
 * ("epoll" or "uring"; "epoll" without one: the default), with *fallback the reason --io uring
 * ran on epoll (NULL: it did not); NULL (and *fallback NULL) for the other kinds. The strings
 * are t's. */
const char *h2b_target_io(const struct h2b_target *t, const char **fallback);

#endif
