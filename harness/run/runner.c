/*
 * runner.c - `h2bench run`: scenario in, targets up, cells measured, results out.
 *
 * Shape: every target is started once, before the first cell, and stays up for the whole run,
 * so "alternate" really interleaves warm targets (starting a server per cell would measure its
 * start-up). Each cell spawns the client pinned to the client CPUs and, while it runs, samples
 * the server's RSS every 100 ms (the peak is recorded) and watches both processes; the server's
 * CPU time is the /proc/PID/stat delta across the cell, the client's comes from its rusage.
 *
 * Failure policy: a cell fails (status "failed" with a reason, metrics null) when its target is
 * not running, dies during the cell, or the client crashes, times out or completes fewer than
 * min_requests. Failed requests inside a completed cell are data, not a failure. A dead target
 * is not restarted: its remaining cells fail with the original reason. The results file is
 * written in every case, atomically, and the exit status says whether anything failed.
 *
 * Rejected: running cells in threads of this process (the client's CPU time and a crash in it
 * would be ours); restarting dead targets (it hides the crash the run exists to reveal).
 *
 * This file drives the matrix (targets, cells, budgets, micro suites); the run directory and the
 * results path are rundir.c's, everything printed is console.c's (runner_int.h holds the run).
 */
#include "run/runner_int.h"

#include "run/budget.h"
#include "run/client.h"
#include "core/clock.h"
#include "core/cpu.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "run/expand.h"
#include "run/peers.h"
#include "run/probe.h"
#include "core/proc.h"
#include "run/profile.h"
#include "core/results.h"
#include "load/grpc.h"
#include "run/scenario.h"
#include "run/target.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define POLL_NS (100 * H2B_NS_PER_MS)
#define PROBE_TIMEOUT_NS (5 * H2B_NS_PER_SEC)

#ifndef H2B_PEERS_DIR_DEFAULT
#define H2B_PEERS_DIR_DEFAULT "servers/peers"
#endif

/* Ctrl-C: the client (same process group) gets it too and ends its cell early; the runner
 * records that cell, runs no more, stops the targets and writes what it has. */
static volatile sig_atomic_t interrupted;

/* Instances per target: every protocol, cleartext and TLS. */
#define NVAR (2 * H2B_PROTO_COUNT)
#define MAX_INSTANCES (16 * NVAR) /* scenario.c allows 16 targets */

static size_t inst_of(const struct h2b_cell *c)
{
    return c->target * NVAR + (c->tls ? H2B_PROTO_COUNT : 0) + (size_t)c->protocol;
}

bool h2b__run_have_h3(void)
{
#ifdef H2B_HAVE_H3
    return true;
#else
    return false;
#endif
}

bool h2b__run_client_serves(const struct run *r, const struct h2b_cell *c, struct h2b_diag *diag)
{
    if (r->s->client.kind == H2B_CLIENT_H2LOAD && c->protocol == H2B_PROTO_H3) {
        h2b_diag_at(diag, NULL, 0, 0, "h2load 1.52 (Debian 12) speaks no HTTP/3");
        return false;
    }
    if (r->s->client.kind == H2B_CLIENT_H2LOAD && c->target < r->s->ntargets &&
        r->s->targets[c->target].kind == H2B_TARGET_FLOOR) {
        h2b_diag_at(diag, NULL, 0, 0,
                    "the floor is driven by h2bench load --raw; h2load has no "
                    "raw TCP mode");
        return false;
    }
    return true;
}

/* ---- loading ---- */

static const char *peers_dir(const struct h2b_run_options *o)
{
    if (o->peers_dir)
        return o->peers_dir;
    const char *env = getenv("H2B_PEERS_DIR");
    return env && *env ? env : H2B_PEERS_DIR_DEFAULT;
}

static int load_peers(struct run *r)
{
    char path[4096];
    json_t *doc = NULL;
    char *text = NULL;
    snprintf(path, sizeof(path), "%s/peers.json", peers_dir(r->o));
    int rc = h2b_json_load(path, &doc, &text, r->diag);
    if (rc)
        return rc == H2B_ERR_NOMEM ? rc : H2B_ERR_PARSE;
    struct h2b_json_src src = {path, text};
    rc = h2b_peers_from_json(doc, peers_dir(r->o), &r->peers, &src, r->diag);
    json_decref(doc);
    free(text);
    return rc == H2B_ERR_INVAL ? H2B_ERR_PARSE : rc;
}

static int load_scenario(struct run *r)
{
    struct h2b_json_src src;
    int rc = h2b_json_load(r->o->scenario, &r->doc, &r->text, r->diag);
    if (rc)
        return rc == H2B_ERR_NOMEM ? rc : H2B_ERR_PARSE; /* unreadable input is an input error */
    src.file = r->o->scenario;
    src.text = r->text;
    /* Peers are needed only to validate peer names; a scenario without peers runs even where
     * servers/peers/ is not installed. */
    bool wants_peers = false;
    json_t *targets = json_object_get(r->doc, "targets");
    for (size_t i = 0; json_is_array(targets) && i < json_array_size(targets); i++) {
        json_t *type = json_object_get(json_array_get(targets, i), "type");
        wants_peers =
            wants_peers || (json_is_string(type) && strcmp(json_string_value(type), "peer") == 0);
    }
    if (wants_peers && (rc = load_peers(r)))
        return rc;
    return h2b_scenario_load(r->doc, &src, r->peers ? r->peers->names : NULL, &r->s, r->diag);
}

/* ---- one cell ---- */

static void client_program(const struct run *r, char *buf, size_t size)
{
    const struct h2b_client_spec *cl = &r->s->client;
    if (cl->command)
        snprintf(buf, size, "%s", cl->command);
    else
        snprintf(buf, size, "%s", cl->kind == H2B_CLIENT_H2LOAD ? "h2load" : r->o->self);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    size_t len;
    return h2b_fs_read_file(path, H2B_JSON_MAX_FILE, &text, &len, NULL) == H2B_OK ? text : NULL;
}

static int parse_output(const struct run *r, const char *out_path, const char *json_path,
                        const char *log_path, struct cell_result *res)
{
    if (r->s->client.kind == H2B_CLIENT_H2LOAD) {
        char *text = read_text(out_path);
        int rc = text ? h2b_client_parse_h2load(text, &res->m) : H2B_ERR_IO;
        free(text);
        if (rc == H2B_OK && log_path)
            rc = h2b_client_read_h2load_log(log_path, &res->m);
        return rc;
    }
    json_t *obj = NULL;
    struct h2b_diag d;
    int rc = h2b_json_load(json_path, &obj, NULL, &d);
    if (rc)
        return rc;
    rc = r->s->matrix.find_max.enabled ? h2b_client_from_search_json(obj, &res->m)
                                       : h2b_client_from_json(obj, &res->m);
    json_decref(obj);
    return rc;
}

/* perf stat attached to the server for the cell: user-space instructions of every thread. */
static struct h2b_proc *perf_attach(const struct run *r, pid_t pid, const char *out_path)
{
    char pidbuf[32];
    struct h2b_proc *p = NULL;
    if (!r->perf || pid <= 0)
        return NULL;
    snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
    char *argv[] = {"perf", "stat", "-e", "instructions:u", "-x", ",",
                    "-p",   pidbuf, "-o", (char *)out_path, NULL};
    struct h2b_proc_opts opts = {
        .out = H2B_PROC_DEVNULL, .err = H2B_PROC_DEVNULL, .kill_on_parent_exit = true};
    return h2b_proc_spawn(&p, argv, &opts) == H2B_OK ? p : NULL;
}

/* Stops perf (SIGINT makes it print its count) and reads the count; false with a note if none. */
static bool perf_detach(struct h2b_proc *p, const char *out_path, uint64_t *count,
                        struct cell_result *res)
{
    if (!p)
        return false;
    h2b_proc_signal(p, SIGINT);
    h2b_proc_wait(p, 5 * H2B_NS_PER_SEC, NULL);
    h2b_proc_del(p);
    char *text = read_text(out_path);
    int rc = text ? h2b_client_parse_perf_stat(text, count) : H2B_ERR_IO;
    free(text);
    if (rc != H2B_OK)
        say(res->perf_note, sizeof(res->perf_note),
            "server_instructions_per_request: perf stat gave no count (%s)", h2b_strerror(rc));
    return rc == H2B_OK;
}

/* What a failed child left on stderr, for its reason: mpirun's own message under MPI, else the
 * log's last line ("" if none). */
static void failure_tail(const struct run *r, const char *err_path, char *tail, size_t size)
{
    char *text = NULL;
    size_t len;
    if (r->s->client.mpi.np &&
        h2b_fs_read_file(err_path, H2B_JSON_MAX_FILE, &text, &len, NULL) == H2B_OK)
        h2b_client_mpirun_message(text, tail, size);
    else
        h2b_fs_last_line(err_path, tail, size);
    free(text);
}

/* The floor is one request in flight per connection: a c x m cell with m > 1 has no floor (a
 * raw exchange cannot multiplex), so it is skipped with the reason, never run as c x 1. */
static bool floor_skips(const struct run *r, const struct h2b_cell *c, struct cell_result *res)
{
    if (r->s->targets[c->target].kind != H2B_TARGET_FLOOR || c->streams_requested <= 1)
        return false;
    res->skipped = true;
    say(res->reason, sizeof(res->reason),
        "the floor is defined at c x 1 only (one raw request in flight per connection)");
    return true;
}

/* Whether cell c can run now: not skipped (its target's, or the floor's c x 1 rule), its target
 * t started and alive; false with res->reason (and res->skipped) saying why not. */
static bool attempt_ready(struct run *r, const struct h2b_cell *c, struct h2b_target *t,
                          struct cell_result *res)
{
    struct h2b_diag why = {0};
    if (r->skip_why[inst_of(c)][0]) {
        res->skipped = true;
        say(res->reason, sizeof(res->reason), "%s", r->skip_why[inst_of(c)]);
        return false;
    }
    if (floor_skips(r, c, res))
        return false;
    if (!t) {
        say(res->reason, sizeof(res->reason), "%s", r->target_why[inst_of(c)]);
        return false;
    }
    if (!h2b_target_alive(t, &why)) {
        say(res->reason, sizeof(res->reason), "target not running: %s", why.message);
        return false;
    }
    return true;
}

/* Whether the client's exit status lets its results be read; false with res->reason (the
 * status and the end of its stderr). */
static bool client_exit_ok(struct run *r, const struct h2b_cell *c, int status,
                           const char *err_path, struct cell_result *res)
{
    /* With objectives, h2bench load exits 1 when one is breached or not evaluable (--find-max:
     * when no step passed) and still writes its results: a verdict of the cell, not a failure */
    bool judged = WIFEXITED(status) && WEXITSTATUS(status) == H2B_EXIT_FAIL &&
                  h2b_expand_cell_slo(r->s, c) && r->s->client.kind == H2B_CLIENT_H2BENCH;
    if (judged || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
        return true;
    char tail[256];
    failure_tail(r, err_path, tail, sizeof(tail));
    say(res->reason, sizeof(res->reason), "client %s %d%s%s",
        WIFEXITED(status) ? "exited with status" : "killed by signal",
        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail[0] ? ": " : "", tail);
    return false;
}

/* A shaped cell's intervals (the client's --interval-json at path) and the shape's boundaries
 * in its measurement of measured_s (stages: the shape's own length) into res->m; false with
 * res->reason when the file is missing or malformed (the client's output is hostile too). */
static bool over_time_read(const struct h2b_matrix_spec *m, double measured_s, const char *path,
                           struct cell_result *res)
{
    struct h2b_diag d = {0};
    int rc = h2b_client_read_intervals(path, &res->m, &d);
    if (rc == H2B_OK)
        rc = h2b_client_shape_bounds(m, measured_s, &res->m.shape_bounds_s);
    else if (d.line > 0)
        say(res->reason, sizeof(res->reason), "the client's intervals %s:%d:%d: %s", d.file, d.line,
            d.column, d.message);
    else
        say(res->reason, sizeof(res->reason), "the client's intervals %s: %s",
            d.file[0] ? d.file : path, d.message);
    if (rc != H2B_OK && !res->reason[0])
        say(res->reason, sizeof(res->reason), "the shape's boundaries: %s", h2b_strerror(rc));
    return rc == H2B_OK;
}

/* One run of the client for cell i; duration_s > 0 overrides the matrix's (timed mode). */
static void run_attempt(struct run *r, size_t i, double duration_s, struct cell_result *res)
{
    const struct h2b_cell *c = &r->cells[i];
    struct h2b_target *t = r->targets[inst_of(c)];
    const struct h2b_matrix_spec *m = &r->s->matrix;
    char url[1024], prog[4096], out_path[512], err_path[512], json_path[512], log_path[512];
    char perf_path[512], iv_path[512];
    struct h2b_diag why = {0};
    memset(res, 0, sizeof(*res));
    if (!attempt_ready(r, c, t, res))
        return;
    /* a gRPC cell's path is its method: h2bench load --grpc takes the URI without one */
    snprintf(url, sizeof(url), "%s%s", h2b_target_url(t), m->grpc_method ? "/" : m->path);
    snprintf(out_path, sizeof(out_path), "%s/cell-%zu.out", r->dir, i);
    snprintf(err_path, sizeof(err_path), "%s/cell-%zu.err", r->dir, i);
    snprintf(json_path, sizeof(json_path), "%s/cell-%zu.json", r->dir, i);
    snprintf(log_path, sizeof(log_path), "%s/cell-%zu.log", r->dir, i);
    snprintf(perf_path, sizeof(perf_path), "%s/cell-%zu.perf", r->dir, i);
    snprintf(iv_path, sizeof(iv_path), "%s/cell-%zu.intervals.ndjson", r->dir, i);
    /* a shaped cell keeps its load over time: h2bench load's intervals (not a retry's stale) */
    bool over_time = (m->stages || m->step) && r->s->client.kind == H2B_CLIENT_H2BENCH;
    if (over_time)
        unlink(iv_path);
    client_program(r, prog, sizeof(prog));
    struct h2b_client_call call = {
        .program = prog,
        .url = url,
        .body_file = r->body_file[0] ? r->body_file : NULL,
        .json_out = json_path,
        .log_file = r->s->client.latency_log ? log_path : NULL,
        .interval_json = over_time ? iv_path : NULL,
        .duration_s = duration_s,
    };
    char **argv = NULL;
    if (h2b_client_argv(r->s, c, &call, &argv) != H2B_OK) {
        say(res->reason, sizeof(res->reason), "out of memory");
        return;
    }

    cpu_set_t cpus;
    h2b_cpu_parse_list(r->s->client.cpus, &cpus);
    uint64_t srv_cpu0 = 0, srv_cpu1 = 0, rss = 0, rss_now;
    bool have_srv = h2b_target_pid(t) > 0 && h2b_target_cpu_ns(t, &srv_cpu0) == H2B_OK;
    struct h2b_proc *client = NULL;
    struct h2b_proc_opts opts = {
        .cpus = &cpus,
        .out = H2B_PROC_FILE,
        .out_path = out_path,
        .err = H2B_PROC_FILE,
        .err_path = err_path,
        .kill_on_parent_exit = true,
    };
    struct h2b_proc *perf = perf_attach(r, h2b_target_pid(t), perf_path);
    int rc = h2b_proc_spawn(&client, argv, &opts);
    h2b_client_argv_free(argv);
    uint64_t instructions = 0;
    if (rc) {
        perf_detach(perf, perf_path, &instructions, res);
        say(res->reason, sizeof(res->reason), "cannot start the client %s: %s", prog,
            h2b_strerror(rc));
        return;
    }
    uint64_t deadline = h2b_clock_now_ns() + (uint64_t)(r->s->client.timeout_s * 1e9);
    double measured_s = duration_s > 0 ? duration_s : m->duration_s;
    h2b_run_prof_begin(r->prof, i, c, r->s->targets[c->target].name, h2b_target_pid(t),
                       h2b_proc_pid(client), m->warmup_s,
                       measured_s > 0 ? measured_s : fmin(r->s->client.timeout_s, 60));
    bool target_died = false, told_client = false;
    int status = 0;
    for (;;) {
        bool exited = h2b_proc_exited(client, &status);
        if (have_srv && h2b_target_rss_kib(t, &rss_now) == H2B_OK && rss_now > rss)
            rss = rss_now;
        if (!target_died && !h2b_target_alive(t, &why)) {
            /* Let the client notice and finish within its own timeouts; it is stopped below
             * if it does not. */
            target_died = true;
            deadline = h2b_clock_now_ns() + 10 * H2B_NS_PER_SEC;
        }
        if (exited)
            break;
        if (interrupted && !told_client) {
            /* A client started just after the Ctrl-C did not get it: pass it on. */
            h2b_proc_signal(client, SIGINT);
            told_client = true;
        }
        h2b__run_progress(r, i);
        if (h2b_clock_now_ns() >= deadline) {
            h2b_run_prof_end(r->prof);
            perf_detach(perf, perf_path, &instructions, res);
            h2b_proc_del(client); /* SIGKILL and reap */
            if (target_died)
                say(res->reason, sizeof(res->reason), "target died during the cell: %s",
                    why.message);
            else
                say(res->reason, sizeof(res->reason),
                    "client did not finish within client.timeout_s (%.0f s): the target "
                    "stopped answering?",
                    r->s->client.timeout_s);
            return;
        }
        h2b_run_prof_tick(r->prof);
        h2b_clock_sleep_ns(POLL_NS);
    }
    h2b_run_prof_end(r->prof);
    uint64_t client_cpu = 0;
    bool have_client_cpu = h2b_proc_cpu_ns(client, &client_cpu) == H2B_OK;
    h2b_proc_del(client);
    if (have_srv && h2b_target_cpu_ns(t, &srv_cpu1) == H2B_OK && srv_cpu1 >= srv_cpu0) {
        res->have_server = true;
        res->server_cpu_s = (double)(srv_cpu1 - srv_cpu0) / 1e9;
        res->server_rss_kib = rss;
    } else if (h2b_target_pid(t) == 0) {
        say(res->extra_note, sizeof(res->extra_note),
            "url target: not started by the runner, so its CPU time and RSS are not observed");
    }
    bool counted = perf_detach(perf, perf_path, &instructions, res);
    res->have_client_cpu = have_client_cpu;
    res->client_cpu_s = (double)client_cpu / 1e9;
    if (target_died || !h2b_target_alive(t, &why)) {
        say(res->reason, sizeof(res->reason), "target died during the cell: %s", why.message);
        return;
    }
    if (interrupted) {
        say(res->reason, sizeof(res->reason), "interrupted (SIGINT) during the cell");
        return;
    }
    if (!client_exit_ok(r, c, status, err_path, res))
        return;
    if (parse_output(r, out_path, json_path, r->s->client.latency_log ? log_path : NULL, res) !=
        H2B_OK) {
        say(res->reason, sizeof(res->reason), "cannot read the client's results (%s)",
            r->s->client.kind == H2B_CLIENT_H2LOAD ? out_path : json_path);
        return;
    }
    if (over_time && !over_time_read(m, measured_s, iv_path, res))
        return;
    if (counted && res->m.succeeded > 0) {
        res->have_instructions = true;
        res->instructions_per_request = (double)instructions / (double)res->m.succeeded;
    }
    if (res->m.succeeded < m->min_requests) {
        say(res->reason, sizeof(res->reason),
            "%llu requests succeeded, fewer than matrix.min_requests (%llu)",
            (unsigned long long)res->m.succeeded, (unsigned long long)m->min_requests);
        return;
    }
    res->ok = true;
}

static void run_cell(struct run *r, size_t i, struct cell_result *res)
{
    const struct h2b_matrix_spec *m = &r->s->matrix;
    run_attempt(r, i, 0, res);
    if (res->ok || res->skipped || m->duration_s <= 0 || res->m.succeeded == 0 ||
        res->m.succeeded >= m->min_requests)
        return;
    /* Every cell completes at least min_requests (DESIGN.md). A timed cell that fell short (a
     * slow cell on a busy machine) runs once more, long enough to get there twice over,
     * bounded by half the client timeout; the note says so. */
    uint64_t got = res->m.succeeded;
    double need = m->duration_s * 2 * (double)m->min_requests / (double)got;
    double cap = r->s->client.timeout_s / 2;
    need = need > cap ? cap : need;
    h2b_client_metrics_free(&res->m);
    run_attempt(r, i, need, res);
    say(res->extra_note, sizeof(res->extra_note),
        "timed cell extended to %.1f s: the first %.1f s gave %llu requests, fewer than "
        "min_requests",
        need, m->duration_s, (unsigned long long)got);
}

/* ---- results ---- */

static double u64_or_nan(bool have, uint64_t v)
{
    return have ? (double)v : NAN;
}

static double real_or_nan(bool have, double v)
{
    return have && isfinite(v) ? v : NAN;
}

/* Appends a copy of every element of src (of structs described by m) to dst. H2B_OK or
 * H2B_ERR_NOMEM (what was appended stays dst's). */
static int copy_array(const struct h2b_model *m, struct h2b_model_array *dst,
                      const struct h2b_model_array *src)
{
    int rc = H2B_OK;
    for (size_t k = 0; k < src->n && rc == H2B_OK; k++) {
        void *e;
        rc = h2b_model_array_push(m, dst, &e);
        if (rc == H2B_OK)
            rc = h2b_model_copy(m, e, h2b_model_array_at(m, src, k));
    }
    return rc;
}

/* The results-model cell of cell i (core/results.h). Returns H2B_OK or H2B_ERR_NOMEM; *o is the
 * caller's to free in both cases. */
static int cell_entry(const struct run *r, size_t i, const struct cell_result *res,
                      struct h2b_results_cell *o)
{
    const struct h2b_cell *c = &r->cells[i];
    const struct h2b_cell_metrics *mt = &res->m;
    bool have = res->ok || mt->requests > 0;
    int bad = 0;
    h2b_results_cell_init(o);
    bad |= h2b_model_set_string(&o->target, r->s->targets[c->target].name);
    if (r->s->targets[c->target].kind == H2B_TARGET_FLOOR)
        bad |= h2b_model_set_string(&o->target_type, "floor");
    if (r->targets[inst_of(c)]) {
        const char *fallback;
        bad |=
            h2b_model_set_string(&o->server_io, h2b_target_io(r->targets[inst_of(c)], &fallback));
        bad |= h2b_model_set_string(&o->server_io_fallback, fallback);
    }
    bad |= h2b_model_set_string(&o->client,
                                r->s->client.kind == H2B_CLIENT_H2LOAD ? "h2load" : "h2bench");
    bad |= h2b_model_set_string(&o->protocol, h2b_protocol_name(c->protocol));
    o->tls = c->tls;
    o->connections = c->connections;
    o->streams_requested = c->streams_requested;
    o->streams_effective = c->streams_effective;
    o->server_max_streams = c->server_max_streams ? c->server_max_streams : NAN;
    bad |= h2b_model_set_string(&o->server_max_streams_source,
                                r->server_max_probed[c->target] ? "probe" : "configured");
    o->frame_size = c->frame_size ? c->frame_size : NAN;
    o->window_bits = c->window_bits ? c->window_bits : NAN;
    bad |= h2b_model_set_string(&o->path, r->s->matrix.grpc_method ? r->s->matrix.grpc_method
                                                                   : r->s->matrix.path);
    o->repeat = c->repeat;
    /* a shaped cell has no one offered rate (a p99_ms ceiling's rate never matches it) */
    bool shaped = r->s->matrix.stages || r->s->matrix.step;
    o->rate = r->s->matrix.rate > 0 && !shaped ? r->s->matrix.rate : NAN;
    bad |= h2b_model_set_string(&o->status, res->ok ? "ok" : res->skipped ? "skipped" : "failed");
    if (!res->ok)
        bad |= h2b_model_set_string(&o->reason, res->reason);
    o->requests = u64_or_nan(have, mt->requests);
    o->succeeded = u64_or_nan(have, mt->succeeded);
    o->failed = u64_or_nan(have, mt->failed);
    o->errors = u64_or_nan(have, mt->errors);
    o->duration_s = real_or_nan(have, mt->duration_s);
    o->req_per_s = real_or_nan(have, mt->req_per_s);
    o->bytes_per_s = real_or_nan(have, mt->bytes_per_s);
    struct h2b_results_latency *lat = &o->latency_ns;
    bool pct = have && mt->have_percentiles;
    lat->base.present = true;
    lat->min = u64_or_nan(have && mt->have_latency, mt->lat_min_ns);
    lat->p50 = u64_or_nan(pct, mt->lat_p50_ns);
    lat->p90 = u64_or_nan(pct, mt->lat_p90_ns);
    lat->p99 = u64_or_nan(pct, mt->lat_p99_ns);
    lat->p999 = u64_or_nan(pct, mt->lat_p999_ns);
    lat->max = u64_or_nan(have && mt->have_latency, mt->lat_max_ns);
    lat->mean = real_or_nan(have && mt->have_latency && mt->lat_mean_ns > 0, mt->lat_mean_ns);
    bad |= h2b_model_set_string(&o->latency_histogram, mt->histogram);
    o->client_cpu_s = real_or_nan(res->have_client_cpu, res->client_cpu_s);
    o->server_cpu_s = real_or_nan(res->have_server, res->server_cpu_s);
    o->server_rss_kib = u64_or_nan(res->have_server, res->server_rss_kib);
    o->server_instructions_per_request =
        real_or_nan(res->have_instructions, res->instructions_per_request);
    if (c->tls && have && mt->tls_version[0]) {
        bad |= h2b_model_set_string(&o->tls_version, mt->tls_version);
        bad |= h2b_model_set_string(&o->tls_cipher, mt->tls_cipher);
        o->tls_records_per_response = real_or_nan(true, mt->tls_records_per_response);
    }
    bad |= h2b_run_prof_cell(r->prof, i, &o->profile) != H2B_OK;
    char note[1400], prof_note[620];
    h2b_run_prof_reason(r->prof, i, prof_note, sizeof(prof_note));
    const char *perf = r->perf_reason[0] ? r->perf_reason : res->perf_note;
    const char *quic = c->protocol == H2B_PROTO_H3 && have
                           ? "tls_version, tls_cipher, tls_records_per_response: QUIC carries TLS "
                             "1.3 inside its own packets (no TLS records; h2bench load --h3 does "
                             "not report the cipher)"
                           : "";
    const char *shape = shaped && have ? "rate: the offered rate follows matrix.stages or "
                                         "matrix.step, not one rate"
                                       : "";
    const char *parts[] = {mt->note, res->extra_note, perf, prof_note, quic, shape};
    size_t used = 0;
    note[0] = '\0';
    for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
        if (parts[k][0] && used < sizeof(note))
            used += (size_t)snprintf(note + used, sizeof(note) - used, "%s%s", used ? "; " : "",
                                     parts[k]);
    }
    if (note[0])
        bad |= h2b_model_set_string(&o->note, note);
    if (have && !bad)
        bad |= copy_array(&h2b_results_slo_model, &o->slo, &mt->slo) != H2B_OK;
    if (have && mt->search.base.present && !bad)
        bad |= h2b_model_copy(&h2b_results_search_model, &o->search, &mt->search) != H2B_OK;
    if (have && !bad)
        bad |=
            copy_array(&h2b_results_cell_interval_model, &o->intervals, &mt->intervals) != H2B_OK;
    if (have && mt->shape_bounds_s.v && !bad)
        bad |= h2b_model_set_nums(&o->shape_bounds_s, mt->shape_bounds_s.v, mt->shape_bounds_s.n) !=
               H2B_OK;
    return bad ? H2B_ERR_NOMEM : H2B_OK;
}

/* ---- targets ---- */

/* Which instances the matrix needs, and for each the reason it is skipped ("" = it runs). */
static void plan_instances(struct run *r, bool *need)
{
    const struct h2b_matrix_spec *m = &r->s->matrix;
    for (size_t t = 0; t < r->s->ntargets; t++) {
        for (size_t pi = 0; pi < m->nprotocols; pi++) {
            for (size_t ti = 0; ti < m->ntls; ti++) {
                struct h2b_cell c = {.target = t, .protocol = m->protocols[pi], .tls = m->tls[ti]};
                size_t k = inst_of(&c);
                struct h2b_diag why = {0};
                if (h2b_target_serves(&r->s->targets[t], r->peers, c.protocol, c.tls,
                                      h2b__run_have_h3(), &why) &&
                    h2b__run_client_serves(r, &c, &why))
                    need[k] = true;
                else
                    say(r->skip_why[k], sizeof(r->skip_why[k]), "%s", why.message);
            }
        }
    }
}

/* Starts every instance the matrix needs (each target once per protocol and TLS setting it
 * serves), probes the h2-speaking ones for SETTINGS_MAX_CONCURRENT_STREAMS (the target's value
 * is the first probe's; h3 cells use it too, h1 cells need none). */
static void start_targets(struct run *r)
{
    bool need[MAX_INSTANCES] = {false};
    plan_instances(r, need);
    for (size_t k = 0; k < r->s->ntargets * NVAR; k++) {
        if (!need[k])
            continue;
        size_t t = k / NVAR;
        enum h2b_protocol proto = (enum h2b_protocol)(k % H2B_PROTO_COUNT);
        bool tls = k % NVAR >= H2B_PROTO_COUNT;
        const struct h2b_target_spec *spec = &r->s->targets[t];
        char tdir[512], label[16];
        struct h2b_diag why = {0};
        h2b__run_proto_label(label, sizeof(label), proto, tls);
        /* the cleartext h2 instance keeps the plain name (as before the protocol axis) */
        if (proto == H2B_PROTO_H2 && !tls)
            snprintf(tdir, sizeof(tdir), "%s/%s", r->dir, spec->name);
        else
            snprintf(tdir, sizeof(tdir), "%s/%s-%s", r->dir, spec->name, label);
        if (mkdir(tdir, 0755) != 0) {
            say(r->target_why[k], sizeof(r->target_why[k]), "cannot create %s", tdir);
            continue;
        }
        struct h2b_target_env env = {
            .self = r->o->self,
            .peers = r->peers,
            .dir = tdir,
            .docroot = r->docroot,
            .ready_path = r->s->matrix.path,
            .protocol = proto,
            .tls = tls,
            .cert = r->cert[0] ? r->cert : NULL,
            .key = r->key[0] ? r->key : NULL,
        };
        int rc = h2b_target_start(&r->targets[k], spec, &env, &why);
        if (rc) {
            say(r->target_why[k], sizeof(r->target_why[k]), "target did not start: %s",
                why.message);
            h2b__run_warn(r, "%s (%s): %s\n", spec->name, label, r->target_why[k]);
            continue;
        }
        if (proto == H2B_PROTO_H1)
            continue;
        if (spec->kind == H2B_TARGET_FLOOR)
            continue; /* no SETTINGS: configured_max's one raw request per connection */
        uint32_t max;
        rc = h2b_probe_max_streams(h2b_target_url(r->targets[k]), PROBE_TIMEOUT_NS, &max, &why);
        if (rc) {
            say(r->target_why[k], sizeof(r->target_why[k]), "SETTINGS probe failed: %s",
                why.message);
            h2b__run_warn(r, "%s (%s): %s\n", spec->name, label, r->target_why[k]);
            h2b_target_del(r->targets[k]);
            r->targets[k] = NULL;
            continue;
        }
        if (!r->server_max_probed[t]) {
            r->server_max[t] = max;
            r->server_max_probed[t] = true;
        }
    }
}

/* The configured maximum, for dry runs: what the command line or template sets. */
static uint32_t configured_max(const struct run *r, const struct h2b_target_spec *spec)
{
    if (spec->max_streams)
        return spec->max_streams;
    if (spec->kind == H2B_TARGET_PEER) {
        const struct h2b_peer *p = h2b_peers_find(r->peers, spec->peer);
        return p ? p->max_streams : 0;
    }
    if (spec->kind == H2B_TARGET_BUNDLED)
        return H2B_TARGET_BUNDLED_MAX_STREAMS;
    if (spec->kind == H2B_TARGET_FLOOR)
        return 1;
    return 0;
}

/* ---- micro suites ---- */

static int run_micro(struct run *r)
{
    const struct h2b_micro_spec *mi = &r->s->micro;
    char json_path[512], err_path[512];
    snprintf(json_path, sizeof(json_path), "%s/micro.json", r->dir);
    snprintf(err_path, sizeof(err_path), "%s/micro.err", r->dir);
    char cpu[16];
    snprintf(cpu, sizeof(cpu), "%u", mi->cpu);
    char *argv[] = {(char *)r->o->self, "micro",    "--profile", mi->profile,
                    "--filter",         mi->filter, "--cpu",     cpu,
                    "--json",           json_path,  NULL};
    struct h2b_proc *p = NULL;
    struct h2b_proc_opts opts = {.out = H2B_PROC_FILE,
                                 .out_path = err_path,
                                 .err_to_out = true,
                                 .kill_on_parent_exit = true};
    int status = 0;
    int rc = h2b_proc_spawn(&p, argv, &opts);
    if (rc) {
        h2b__run_warn(r, "cannot start h2bench micro: %s\n", h2b_strerror(rc));
        return rc;
    }
    rc = h2b_proc_wait(p, 3600 * H2B_NS_PER_SEC, &status);
    h2b_proc_del(p);
    if (rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[256];
        failure_tail(r, err_path, tail, sizeof(tail));
        h2b__run_warn(r, "h2bench micro failed: %s\n", tail);
        return H2B_ERR_INTERRUPTED;
    }
    struct h2b_results_doc *doc = NULL;
    struct h2b_diag d;
    if ((rc = h2b_results_doc_load(json_path, &doc, NULL, &d))) {
        if (r->o->log)
            h2b_diag_print(&d, r->o->log);
        return rc;
    }
    for (size_t k = 0; k < doc->micro.n && rc == H2B_OK; k++)
        rc = h2b_results_append_micro(r->results, h2b_results_doc_micro(doc, k));
    h2b_results_doc_del(doc);
    return rc;
}

/* ---- the run ---- */

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* env.pinning (DESIGN.md): the CPUs of the servers (each target's list, joined when they
 * differ) and of the client. */
static void add_pinning(struct run *r)
{
    if (!r->s->has_matrix)
        return;
    char server[256] = "";
    size_t used = 0;
    for (size_t t = 0; t < r->s->ntargets && used < sizeof(server); t++) {
        bool seen = false;
        for (size_t u = 0; u < t; u++)
            seen = seen || strcmp(r->s->targets[u].cpus, r->s->targets[t].cpus) == 0;
        if (!seen && r->s->targets[t].kind != H2B_TARGET_URL)
            used += (size_t)snprintf(server + used, sizeof(server) - used, "%s%s", used ? " " : "",
                                     r->s->targets[t].cpus);
    }
    h2b_results_set_pinning(r->results, server, r->s->client.cpus);
}

/* Cells need file descriptors: 1000 connections are 1000 on each side. Children inherit. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int run_matrix(struct run *r, struct h2b_run_summary *sum)
{
    const json_t *doc = r->results;
    h2b__run_print_header(r);
    r->started_ns = h2b_clock_now_ns();
    for (size_t i = 0; i < r->ncells && !interrupted; i++) {
        struct cell_result res;
        h2b__run_progress(r, i);
        run_cell(r, i, &res);
        r->done++;
        h2b__run_progress_clear(r);
        h2b__run_print_cell_line(r, i, &res);
        struct h2b_results_cell e;
        int rc = cell_entry(r, i, &res, &e);
        h2b_client_metrics_free(&res.m);
        if (rc == H2B_OK)
            rc = h2b_results_append_cell(r->results, &e);
        h2b_results_cell_free(&e);
        if (rc != H2B_OK)
            return H2B_ERR_NOMEM;
        if (res.ok) {
            sum->cells_ok++;
        } else if (res.skipped) {
            sum->cells_skipped++;
        } else {
            sum->cells_failed++;
            if (r->o->fail_fast) {
                h2b__run_warn(r, "--fail-fast: stopping after cell %zu\n", i + 1);
                break;
            }
        }
    }
    h2b__run_progress_clear(r);
    if (interrupted) {
        h2b__run_warn(r, "interrupted after %zu of %zu cells\n", r->done, r->ncells);
        sum->interrupted = true;
    }
    h2b__run_print_summaries(r, doc);
    return H2B_OK;
}

/* --perf-record (or the scenario's perf_record) over the expanded cells; results_path NULL for a
 * dry run (validation only). */
static int start_profiles(struct run *r, const char *results_path)
{
    const char *cells = r->o->perf_record ? r->o->perf_record : r->s->perf_record.cells;
    struct h2b_diag pd = {0}; /* why, placed below at the option or the scenario field */
    const char *msg = pd.message;
    if (!cells)
        return H2B_OK;
    if (!r->s->has_matrix) {
        h2b_diag_set(r->diag, NULL, NULL, NULL, "--perf-record: the scenario has no matrix");
        return H2B_ERR_INVAL;
    }
    int rc = h2b_run_prof_new(&r->prof, r->s, cells,
                              r->o->perf_record_client || r->s->perf_record.client, r->cells,
                              r->ncells, results_path, &pd);
    if (rc == H2B_ERR_PARSE || rc == H2B_ERR_NOTFOUND) {
        if (r->o->perf_record)
            h2b_diag_set(r->diag, NULL, NULL, NULL, "--perf-record: %s", msg);
        else
            h2b_diag_set(r->diag, r->o->scenario, r->text, "perf_record.cells", "%s", msg);
        return H2B_ERR_INVAL;
    }
    if (rc)
        h2b_diag_set(r->diag, NULL, NULL, NULL, "--perf-record: %s", msg);
    return rc;
}

/* Matrix entry i's "budgets" from the passes' values (out of memory: the entry has none). */
static void set_budgets(json_t *results, size_t i, const struct h2b_budget_values *v)
{
    struct h2b_results_budgets b;
    if (h2b_budget_values_model(v, &b) == H2B_OK)
        h2b_results_set_cell_budgets(results, i, &b);
    h2b_model_free(&h2b_results_budgets_model, &b);
}

/* The request the budget passes send: the matrix's GET of its path, or with matrix.grpc its
 * gRPC call, whose body (*body, malloc'd, the caller's to free) is built as h2bench load
 * --grpc builds it (load/grpc.h), so a budget cell costs what a timed cell's call costs. */
static int budget_request(const struct h2b_matrix_spec *m, struct h2b_budget_request *req,
                          uint8_t **body)
{
    *req = (struct h2b_budget_request){.path = m->path};
    *body = NULL;
    if (!m->grpc_method)
        return H2B_OK;
    char *path = NULL;
    enum h2b_load_grpc_kind kind;
    size_t len = 0;
    int64_t expect;
    int rc = h2b_load_grpc_method(m->grpc_method, &path, &kind);
    free(path); /* the method as the scenario parser stored it is already the path */
    if (rc == H2B_OK)
        rc = h2b_load_grpc_body(kind, NULL, 0, m->grpc_size, m->grpc_messages, 1u << 28, body, &len,
                                &expect);
    if (rc != H2B_OK)
        return rc;
    *req = (struct h2b_budget_request){
        .path = m->grpc_method, .grpc = true, .body = *body, .body_len = len};
    return H2B_OK;
}

/* The budget passes (budget.h): per started target, each distinct matrix point it ran, on
 * fresh instances after the timed cells (their targets are stopped by then, so the passes
 * compete with nothing). Every matrix entry of that point gets the point's "budgets". */
static int run_budgets(struct run *r)
{
    size_t cells = h2b_results_cell_count(r->results);
    size_t ran = cells < r->ncells ? cells : r->ncells;
    char preload[4096];
    bool have_preload = h2b_budget_find_preload(r->o->self, preload, sizeof(preload));
    struct h2b_budget_request req;
    uint8_t *body;
    int rc = budget_request(&r->s->matrix, &req, &body);
    if (rc != H2B_OK)
        return rc;
    for (size_t t = 0; t < r->s->ntargets && !interrupted; t++) {
        struct h2b_budget_values *pts = calloc(ran ? ran : 1, sizeof(*pts));
        size_t np = 0;
        if (!pts) {
            free(body);
            return H2B_ERR_NOMEM;
        }
        for (size_t i = 0; i < ran; i++) {
            const struct h2b_cell *c = &r->cells[i];
            /* the passes start the cleartext h2 instance: other cells get no budgets */
            bool seen = c->target != t || c->protocol != H2B_PROTO_H2 || c->tls;
            for (size_t k = 0; k < np && !seen; k++)
                seen =
                    pts[k].connections == c->connections && pts[k].streams == c->streams_effective;
            if (!seen) {
                pts[np].connections = c->connections;
                pts[np].streams = c->streams_effective;
                np++;
            }
        }
        char dir[600];
        say(dir, sizeof(dir), "%s/%s-budgets", r->dir, r->s->targets[t].name);
        mkdir(dir, 0755);
        struct h2b_budget_job job = {
            .spec = &r->s->targets[t],
            .env = {.self = r->o->self,
                    .peers = r->peers,
                    .dir = dir,
                    .docroot = r->docroot,
                    .ready_path = r->s->matrix.path},
            .budgets = &r->s->budgets,
            .req = req,
            .preload = have_preload ? preload : NULL,
        };
        if (np)
            h2b_budget_measure(&job, pts, np, r->o->progress ? r->o->log : NULL);
        for (size_t i = 0; i < ran; i++) {
            const struct h2b_cell *c = &r->cells[i];
            for (size_t k = 0; k < np && c->target == t && c->protocol == H2B_PROTO_H2 && !c->tls;
                 k++) {
                if (pts[k].connections == c->connections && pts[k].streams == c->streams_effective)
                    set_budgets(r->results, i, &pts[k]);
            }
        }
        free(pts);
    }
    free(body);
    h2b__run_print_budgets(r, r->results);
    return H2B_OK;
}

static void cleanup(struct run *r)
{
    for (size_t k = 0; r->targets && k < r->s->ntargets * NVAR; k++)
        h2b_target_del(r->targets[k]);
    free(r->targets);
    free(r->target_why);
    free(r->skip_why);
    free(r->server_max);
    free(r->server_max_probed);
    free(r->cells);
    h2b_run_prof_del(r->prof);
    h2b_scenario_del(r->s);
    h2b_peers_del(r->peers);
    json_decref(r->doc);
    json_decref(r->results);
    free(r->text);
}

int h2b_run(const struct h2b_run_options *o, struct h2b_run_summary *sum, struct h2b_diag *diag)
{
    struct run r = {.o = o, .diag = diag};
    struct h2b_cell_filter *filters = NULL;
    size_t nfilters = 0;
    int rc, out_lock = -1;
    char out_path[4096] = "";
    memset(sum, 0, sizeof(*sum));
    if ((rc = load_scenario(&r)))
        goto out;
    if (o->filter) {
        if (!r.s->has_matrix) {
            h2b_diag_set(diag, NULL, NULL, NULL, "--filter: the scenario has no matrix");
            rc = H2B_ERR_INVAL;
            goto out;
        }
        struct h2b_diag fd = {0};
        if ((rc = h2b_expand_parse_filter(r.s, o->filter, &filters, &nfilters, &fd))) {
            h2b_diag_set(diag, NULL, NULL, NULL, "--filter: %s", fd.message);
            rc = rc == H2B_ERR_PARSE ? H2B_ERR_INVAL : rc;
            goto out;
        }
    }
    size_t nt = r.s->ntargets;
    if (nt > MAX_INSTANCES / NVAR) {
        h2b_diag_set(diag, o->scenario, NULL, "targets", "at most %d targets",
                     MAX_INSTANCES / NVAR);
        rc = H2B_ERR_INVAL;
        goto out;
    }
    r.targets = calloc(nt ? nt * NVAR : 1, sizeof(*r.targets));
    r.target_why = calloc(nt ? nt * NVAR : 1, sizeof(*r.target_why));
    r.skip_why = calloc(nt ? nt * NVAR : 1, sizeof(*r.skip_why));
    r.server_max = calloc(nt ? nt : 1, sizeof(*r.server_max));
    r.server_max_probed = calloc(nt ? nt : 1, sizeof(*r.server_max_probed));
    if (!r.targets || !r.target_why || !r.skip_why || !r.server_max || !r.server_max_probed) {
        rc = H2B_ERR_NOMEM;
        goto out;
    }
    for (size_t t = 0; t < nt; t++)
        r.server_max[t] = configured_max(&r, &r.s->targets[t]);

    if (o->dry_run) {
        /* No process is started in a dry run: peers and the bundled server use the maximum
         * their command line configures; URL targets are already up, so they are probed. */
        for (size_t t = 0; t < nt; t++) {
            const struct h2b_target_spec *spec = &r.s->targets[t];
            uint32_t max;
            if (spec->kind == H2B_TARGET_URL && !spec->max_streams &&
                h2b_probe_max_streams(spec->url, PROBE_TIMEOUT_NS, &max, NULL) == H2B_OK) {
                r.server_max[t] = max;
                r.server_max_probed[t] = true;
            }
        }
        if (r.s->has_matrix && (rc = h2b_expand_matrix(r.s, r.server_max, o->repeat, filters,
                                                       nfilters, &r.cells, &r.ncells)))
            goto out;
        sum->cells = r.ncells;
        if ((rc = start_profiles(&r, NULL)))
            goto out;
        h2b__run_print_plan(&r);
        goto out;
    }

    if ((rc = h2b__run_out_claim(&r, out_path, sizeof(out_path), &out_lock)))
        goto out;
    if (r.s->has_matrix) {
        /* the cells in run order with the configured maxima: which cells a filter names does not
         * depend on what the probes find, so a --perf-record that names none fails before any
         * target starts */
        if ((rc = h2b_expand_matrix(r.s, r.server_max, o->repeat, filters, nfilters, &r.cells,
                                    &r.ncells)) ||
            (rc = start_profiles(&r, out_path)))
            goto out;
        free(r.cells);
        r.cells = NULL;
    }
    if ((rc = h2b_results_new(&r.results, r.s->name, o->scenario))) {
        h2b_diag_set(diag, o->scenario, NULL, NULL, "cannot start the results: %s",
                     h2b_strerror(rc));
        goto out;
    }
    add_pinning(&r);
    r.perf = h2b_env_perf_counters(r.perf_reason, sizeof(r.perf_reason));
    if (r.perf) {
        r.perf_reason[0] = '\0';
    } else {
        char reason[256];
        snprintf(reason, sizeof(reason), "%s", r.perf_reason);
        say(r.perf_reason, sizeof(r.perf_reason),
            "server_instructions_per_request: no hardware counters (%s)", reason);
    }
    interrupted = 0;
    signal(SIGINT, on_interrupt);
    if (r.s->has_matrix) {
        raise_fd_limit();
        if ((rc = h2b__run_dir_prepare(&r)))
            goto out;
        start_targets(&r);
        if ((rc = h2b_expand_matrix(r.s, r.server_max, o->repeat, filters, nfilters, &r.cells,
                                    &r.ncells)))
            goto out;
        sum->cells = r.ncells;
        if ((rc = run_matrix(&r, sum)))
            goto out;
        for (size_t k = 0; k < nt * NVAR; k++) {
            h2b_target_del(r.targets[k]);
            r.targets[k] = NULL;
        }
        if (r.s->budgets.enabled && (rc = run_budgets(&r)))
            goto out;
        if (interrupted && !sum->interrupted) {
            /* after the cells: the remaining targets' budgets (and the micro suites) skipped */
            h2b__run_warn(&r, "interrupted during the budget passes\n");
            sum->interrupted = true;
        }
    }
    if (r.s->micro.enabled && !(o->fail_fast && sum->cells_failed) && !interrupted) {
        if (!r.dir[0] && (rc = h2b__run_dir_prepare(&r)))
            goto out;
        sum->micro_failed = run_micro(&r) != H2B_OK;
    }
    if ((rc = h2b_results_write(out_path, r.results, diag)))
        goto out;
    snprintf(sum->out, sizeof(sum->out), "%s", out_path);
    if (sum->cells_failed || sum->micro_failed || sum->interrupted) {
        fflush(o->report);
        h2b__run_warn(&r, "%zu of %zu cells failed%s; logs kept in %s\n", sum->cells_failed,
                      sum->cells, sum->micro_failed ? ", micro suites failed" : "", r.dir);
        r.dir[0] = '\0';
        rc = H2B_ERR_INTERRUPTED;
    }
out:
    signal(SIGINT, SIG_DFL);
    h2b_file_unlock(out_path, out_lock);
    if (r.dir[0])
        h2b__run_dir_remove(r.dir, o->log);
    free(filters);
    cleanup(&r);
    return rc;
}
