/*
 * budget.h - what a request costs a server: exact per-request budgets of a target process.
 *
 * For every matrix point (connections x streams) of a started target, the budget passes run
 * two fixed-count phases on the same connections, N1 warm-up requests and then N2 measured
 * ones, and take the difference of the target's counters across the second phase divided by
 * N2: start-up, connection set-up and first-use costs fall into the first phase and cancel.
 *
 *   allocs_per_request, bytes_per_request   counting preload (or h2bench's interposer)
 *   reads_per_request, writes_per_request,  the preload's read/recv and write/writev/sendmsg
 *   writes_per_read                         families (writes per read that returned data)
 *   instructions_per_request                callgrind, instrumentation on only around the
 *                                           measured phase; measured twice, they must agree
 *                                           within 0.5 % (else null with both numbers)
 *   rss_per_connection_kib                  VmRSS delta over R connections (default 1,000),
 *                                           each having done one request, divided by R
 *
 * A metric that cannot be measured is null with its reason, never 0: a URL target (not ours),
 * a statically linked target (no dynamic loader, no preload), an executable with its own malloc
 * (it shadows the preload's), valgrind missing, a target that did not start.
 *
 * The client is a small driver on libnghttp2 client sessions in this process, one thread, one
 * epoll loop, because the phases must share connections and stop in between with the target
 * idle, which neither h2load nor the load engine's free-running workers can do.
 */
#ifndef H2B_RUN_BUDGET_H
#define H2B_RUN_BUDGET_H

#include "run/peers.h"
#include "core/results.h"
#include "run/scenario.h"
#include "run/target.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The metrics (enum h2b_budget_metric) and their keys: the core table in results.h. */

/* The budgets of one matrix point of one target. */
struct h2b_budget_values {
    uint32_t connections, streams;
    bool have[H2B_BUDGET_NMETRICS];
    double v[H2B_BUDGET_NMETRICS];
    char why[H2B_BUDGET_NMETRICS][256]; /* the reason when !have */
    double instr_runs[2];               /* the two callgrind measurements (0: none) */
    char alloc_source[32];              /* "preload", "interposer" or "" */
    uint64_t warmup_requests, requests; /* N1 and N2 as done */
};

/* The request every phase sends: a GET of path, or (grpc) a gRPC call: a POST of path (the
 * method) with content-type application/grpc and te: trailers whose body is body[0..body_len)
 * (length-prefixed messages, load/grpc.h's h2b_load_grpc_body), which succeeds only with a 2xx
 * and grpc-status 0. Not owned: the caller's, alive while a client uses it. */
struct h2b_budget_request {
    const char *path;
    bool grpc;
    const uint8_t *body;
    size_t body_len;
};

/* One target's budget passes. */
struct h2b_budget_job {
    const struct h2b_target_spec *spec;
    struct h2b_target_env env; /* self, peers, docroot, ready_path; dir is a parent directory */
    const struct h2b_budgets_spec *budgets;
    struct h2b_budget_request req; /* the matrix's path, or its gRPC calls (matrix.grpc) */
    const char *preload; /* h2bench-budget.so, or NULL when not found (then: null + reason) */
};

/* Runs the passes for points[0..n) (connections and streams filled in by the caller) and fills
 * the rest of each. Never fails as a whole: what could not be measured is null with its
 * reason. progress (may be NULL) gets one line per step. */
void h2b_budget_measure(const struct h2b_budget_job *job, struct h2b_budget_values *points,
                        size_t n, FILE *progress);

/* Marks every metric of v null with reason (a target the passes could not run). */
void h2b_budget_values_null(struct h2b_budget_values *v, const char *reason);

/* The cell's budgets in the core results model: each metric a number or NaN (null), the reason
 * of each null in note ("metric: reason; ..."), the sources, N1/N2 and the two instruction
 * runs. *out is initialised here and the caller's to h2b_model_free (also on failure).
 * Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_budget_values_model(const struct h2b_budget_values *v, struct h2b_results_budgets *out);

/* The preload library for this executable: $H2B_BUDGET_PRELOAD, else <bin>/../lib/ or the
 * installed <bin>/../lib/h2bench/. Returns false (buf "") when there is none. */
bool h2b_budget_find_preload(const char *self, char *buf, size_t size);

/* ---- the driver (exposed for the tests) ---- */

struct h2b_budget_client;
struct h2b_diag; /* core/json.h */

/* Opens n h2c connections to base_url (http://host:port) that will send req (copied; its path
 * at most 1023 bytes, its body the caller's). Returns H2B_OK, H2B_ERR_INVAL,
 * H2B_ERR_UNSUPPORTED (https), H2B_ERR_NOTFOUND, H2B_ERR_SYS or H2B_ERR_NOMEM; diag (may be
 * NULL) says why. *out untouched on failure. */
int h2b_budget_client_open(struct h2b_budget_client **out, const char *base_url,
                           const struct h2b_budget_request *req, uint32_t n, uint64_t timeout_ns,
                           struct h2b_diag *diag);

/* Every connection completes per_conn requests, at most streams in flight each. Returns H2B_OK
 * when all got a 2xx response (and for gRPC calls grpc-status 0), else an error and diag (may be
 * NULL) says why; *done counts the completed. */
int h2b_budget_client_phase(struct h2b_budget_client *c, uint64_t per_conn, uint32_t streams,
                            uint64_t timeout_ns, uint64_t *done, struct h2b_diag *diag);

/* From now on, phases on more than one connection stop target's process group (SIGSTOP) while
 * each round's requests are written, once every thread of target has gone idle, and continue
 * it (SIGCONT) after: one event wait then finds every connection ready, in every run. With
 * single, phases on one connection are held too (an io_uring target: its send's completion is
 * an event of its own, which the next request would otherwise race). 0 turns it off. target
 * must lead its own process group (h2b_target_start's processes do). */
void h2b_budget_client_hold(struct h2b_budget_client *c, pid_t target, bool single);

void h2b_budget_client_del(struct h2b_budget_client *c);

#endif
