/*
 * results.c - the results model: the key tables of every part of a results document.
 *
 * The schema lives here as data: one table per struct (micro entry, matrix cell, latency,
 * budgets, the load document, the whole results document), read and written by model.c's one
 * loop. Adding a field to the contract is one table line and one struct member. Metrics are
 * nullable ("not measured here", the reason goes in env.warnings or the entry's "note");
 * identifiers (names, connection counts, repeat) are required in a results file. Unknown fields
 * are kept: the contract grows without a schema bump.
 *
 * Validation is decoding: a results file is valid when the document decodes in contract mode,
 * so the validator and the readers cannot disagree about a field.
 */
#include "core/results.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/version.h"

#include "core/hist.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define F(type, key, kind, flags)                                                                  \
    {                                                                                              \
#key, H2B_MODEL_##kind, flags, offsetof(type, key), NULL, NULL                             \
    }
#define SUB(type, key, kind, flags, model)                                                         \
    {                                                                                              \
#key, H2B_MODEL_##kind, flags, offsetof(type, key), &(model), NULL                         \
    }
#define ALIAS(type, key, kind, flags, alias)                                                       \
    {                                                                                              \
#key, H2B_MODEL_##kind, flags, offsetof(type, key), NULL, alias                            \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, 0, 0, 0, NULL, NULL                                                                  \
    }

#define REQ H2B_MODEL_REQUIRED
#define OMIT H2B_MODEL_OMIT
#define INT H2B_MODEL_INT

#define T struct h2b_results_latency
static const struct h2b_model_field latency_fields[] = {
    F(T, min, COUNT, 0),      F(T, p50, COUNT, 0),
    F(T, p90, COUNT, 0),      F(T, p99, COUNT, 0),
    F(T, p999, COUNT, 0),     F(T, p9999, COUNT, OMIT),
    F(T, max, COUNT, 0),      F(T, mean, REAL, 0),
    F(T, count, COUNT, OMIT), END,
};
#undef T
const struct h2b_model h2b_results_latency_model = {"latency", sizeof(struct h2b_results_latency),
                                                    latency_fields};

#define T struct h2b_results_budgets
static const struct h2b_model_field budgets_fields[] = {
    F(T, allocs_per_request, REAL, 0),
    F(T, bytes_per_request, REAL, 0),
    F(T, reads_per_request, REAL, 0),
    F(T, writes_per_request, REAL, 0),
    F(T, writes_per_read, REAL, 0),
    F(T, instructions_per_request, REAL, 0),
    F(T, instructions_source, STRING, OMIT),
    F(T, rss_per_connection_kib, REAL, 0),
    F(T, alloc_source, STRING, OMIT),
    F(T, warmup_requests, COUNT, OMIT),
    F(T, measured_requests, COUNT, OMIT),
    F(T, instructions_runs, NUMBERS, OMIT),
    F(T, note, STRING, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_budgets_model = {"budgets", sizeof(struct h2b_results_budgets),
                                                    budgets_fields};

/* The budget metrics: the keys are the members' names, as in the model's table above. */
#define BM(member, unit, title, decimals)                                                          \
    {                                                                                              \
#member, unit, title, decimals, offsetof(struct h2b_results_budgets, member)               \
    }
const struct h2b_budget_metric_info h2b_budget_metrics[H2B_BUDGET_NMETRICS] = {
    [H2B_BUDGET_ALLOCS] = BM(allocs_per_request, "allocs/req", "allocations", 2),
    [H2B_BUDGET_BYTES] = BM(bytes_per_request, "B/req", "bytes allocated", 1),
    [H2B_BUDGET_READS] = BM(reads_per_request, "reads/req", "read calls", 3),
    [H2B_BUDGET_WRITES] = BM(writes_per_request, "writes/req", "write calls", 3),
    [H2B_BUDGET_WRITES_PER_READ] =
        BM(writes_per_read, "writes/read", "writes per read with data", 3),
    [H2B_BUDGET_INSTRUCTIONS] =
        BM(instructions_per_request, "instr/req", "instructions (callgrind)", 0),
    [H2B_BUDGET_RSS_PER_CONN] =
        BM(rss_per_connection_kib, "KiB/conn", "RSS per connection (KiB)", 2),
};
#undef BM

int h2b_budget_metric_find(const char *key)
{
    for (int m = 0; key && m < H2B_BUDGET_NMETRICS; m++)
        if (strcmp(h2b_budget_metrics[m].key, key) == 0)
            return m;
    return -1;
}

double h2b_results_budget_get(const struct h2b_results_budgets *b, enum h2b_budget_metric m)
{
    if (!b->base.present || (unsigned)m >= H2B_BUDGET_NMETRICS)
        return NAN;
    double v;
    memcpy(&v, (const char *)b + h2b_budget_metrics[m].offset, sizeof(v));
    return v;
}

void h2b_results_budget_set(struct h2b_results_budgets *b, enum h2b_budget_metric m, double v)
{
    if ((unsigned)m < H2B_BUDGET_NMETRICS)
        memcpy((char *)b + h2b_budget_metrics[m].offset, &v, sizeof(v));
}

#define T struct h2b_results_dso_pct
static const struct h2b_model_field dso_pct_fields[] = {
    F(T, kernel, REAL, 0),
    F(T, nghttp2, REAL, 0),
    F(T, tls, REAL, 0),
    F(T, libc, REAL, 0),
    F(T, own, REAL, 0),
    F(T, other, REAL, 0),
    END,
};
#undef T
static const struct h2b_model dso_pct_model = {"DSO split", sizeof(struct h2b_results_dso_pct),
                                               dso_pct_fields};

#define T struct h2b_results_symbol
static const struct h2b_model_field symbol_fields[] = {
    F(T, symbol, STRING, REQ),
    F(T, dso, STRING, 0),
    {"class", H2B_MODEL_STRING, 0, offsetof(T, class_), NULL, NULL},
    F(T, self_pct, REAL, 0),
    F(T, total_pct, REAL, 0),
    END,
};
#undef T
const struct h2b_model h2b_results_symbol_model = {
    "profile symbol", sizeof(struct h2b_results_symbol), symbol_fields};

#define T struct h2b_results_profile
static const struct h2b_model_field profile_fields[] = {
    F(T, samples, COUNT, REQ),
    SUB(T, dso_pct, OBJECT, 0, dso_pct_model),
    SUB(T, top, ARRAY, 0, h2b_results_symbol_model),
    F(T, exe, STRING, OMIT),
    F(T, recorded_s, REAL, OMIT),
    F(T, folded, STRING, OMIT),
    F(T, svg, STRING, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_profile_model = {"profile", sizeof(struct h2b_results_profile),
                                                    profile_fields};

#define T struct h2b_results_cell_profile
static const struct h2b_model_field cell_profile_fields[] = {
    SUB(T, server, OBJECT, 0, h2b_results_profile_model),
    SUB(T, client, OBJECT, OMIT, h2b_results_profile_model),
    END,
};
#undef T
const struct h2b_model h2b_results_cell_profile_model = {
    "cell profile", sizeof(struct h2b_results_cell_profile), cell_profile_fields};

#define T struct h2b_results_micro
static const struct h2b_model_field micro_fields[] = {
    F(T, name, STRING, REQ),
    F(T, ops, COUNT, 0),
    F(T, ops_per_call, COUNT, OMIT),
    F(T, ns_per_op, REAL, 0),
    F(T, ns_per_op_mdape, REAL, OMIT),
    F(T, ns_per_op_min, REAL, OMIT),
    F(T, cpu_ns_per_op, REAL, OMIT),
    F(T, bytes_per_op, REAL, 0),
    F(T, allocs_per_op, REAL, 0),
    F(T, alloc_deterministic, BOOL, 0),
    F(T, p50_ns, COUNT, 0),
    F(T, p90_ns, COUNT, OMIT),
    F(T, p99_ns, COUNT, 0),
    F(T, p999_ns, COUNT, 0),
    F(T, max_ns, COUNT, OMIT),
    F(T, samples, COUNT, OMIT),
    F(T, sample_batch, COUNT, OMIT),
    F(T, timer_overhead_ns, COUNT, OMIT),
    F(T, instructions_per_op, REAL, 0),
    F(T, instructions_source, STRING, OMIT),
    F(T, forks, COUNT, REQ),
    F(T, fork_pids, NUMBERS, OMIT | INT),
    /* per-fork values: one decision for the legacy names, here */
    ALIAS(T, fork_p99_ns, NUMBERS, OMIT | INT, "p99_ns_forks"),
    ALIAS(T, fork_ns_per_op, NUMBERS, OMIT, "ns_per_op_forks"),
    F(T, histogram, STRING, OMIT),
    F(T, insufficient, JSON, OMIT),
    SUB(T, profile, OBJECT, OMIT, h2b_results_profile_model),
    F(T, note, STRING, OMIT),
    F(T, error, STRING, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_micro_model = {"micro entry", sizeof(struct h2b_results_micro),
                                                  micro_fields};

#define T struct h2b_results_fork
static const struct h2b_model_field fork_fields[] = {
    F(T, pid, COUNT, 0),
    F(T, epoch_ns_per_op, NUMBERS, 0),
    F(T, ops, COUNT, 0),
    F(T, cpu_ns_per_op, REAL, 0),
    F(T, hist, STRING, OMIT),
    F(T, batch, COUNT, 0),
    F(T, timer_overhead_ns, COUNT, 0),
    F(T, allocs_per_op, REAL, 0),
    F(T, allocs_note, STRING, OMIT),
    F(T, bytes_per_op, REAL, 0),
    F(T, bytes_note, STRING, OMIT),
    F(T, alloc_deterministic, BOOL, 0),
    F(T, instructions_per_op, REAL, 0),
    F(T, instructions_note, STRING, OMIT),
    F(T, error, STRING, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_fork_model = {"fork", sizeof(struct h2b_results_fork),
                                                 fork_fields};

#define T struct h2b_results_cell_interval
static const struct h2b_model_field cell_interval_fields[] = {
    F(T, start_s, REAL, 0),       F(T, end_s, REAL, 0),
    F(T, offered_per_s, REAL, 0), F(T, achieved_per_s, REAL, 0),
    F(T, errors, COUNT, 0),       F(T, p50_ns, COUNT, 0),
    F(T, p99_ns, COUNT, 0),       END,
};
#undef T
const struct h2b_model h2b_results_cell_interval_model = {
    "cell interval", sizeof(struct h2b_results_cell_interval), cell_interval_fields};

/* Runner-only fields are OMIT so that a load document (a cell too) does not carry them. */
#define T struct h2b_results_cell
static const struct h2b_model_field cell_fields[] = {
    F(T, target, STRING, REQ),
    F(T, target_type, STRING, OMIT),
    F(T, client, STRING, REQ),
    F(T, protocol, STRING, OMIT),
    F(T, tls, BOOL, OMIT),
    F(T, connections, POSITIVE, REQ),
    F(T, streams_requested, POSITIVE, REQ),
    F(T, streams_effective, POSITIVE, REQ),
    F(T, server_max_streams, COUNT, OMIT),
    F(T, server_max_streams_source, STRING, OMIT),
    F(T, frame_size, COUNT, OMIT),
    F(T, window_bits, COUNT, OMIT),
    F(T, path, STRING, OMIT),
    F(T, repeat, COUNT, REQ),
    F(T, status, STRING, OMIT),
    F(T, reason, STRING, OMIT),
    F(T, requests, COUNT, 0),
    F(T, succeeded, COUNT, 0),
    F(T, failed, COUNT, 0),
    F(T, errors, COUNT, 0),
    F(T, duration_s, REAL, 0),
    F(T, req_per_s, REAL, 0),
    F(T, rate, REAL, OMIT),
    F(T, bytes_per_s, REAL, 0),
    SUB(T, latency_ns, OBJECT, 0, h2b_results_latency_model),
    ALIAS(T, latency_histogram, STRING, OMIT, "histogram"),
    F(T, client_cpu_s, REAL, 0),
    F(T, server_cpu_s, REAL, 0),
    F(T, server_rss_kib, COUNT, 0),
    F(T, server_instructions_per_request, REAL, OMIT),
    F(T, tls_version, STRING, OMIT),
    F(T, tls_cipher, STRING, OMIT),
    F(T, tls_records_per_response, REAL, OMIT),
    F(T, server_io, STRING, OMIT),
    F(T, server_io_fallback, STRING, OMIT),
    SUB(T, budgets, OBJECT, OMIT, h2b_results_budgets_model),
    SUB(T, profile, OBJECT, OMIT, h2b_results_cell_profile_model),
    F(T, note, STRING, OMIT),
    SUB(T, slo, ARRAY, OMIT, h2b_results_slo_model),
    SUB(T, search, OBJECT, OMIT, h2b_results_search_model),
    SUB(T, intervals, ARRAY, OMIT, h2b_results_cell_interval_model),
    F(T, shape_bounds_s, NUMBERS, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_cell_model = {"matrix cell", sizeof(struct h2b_results_cell),
                                                 cell_fields};

#define T struct h2b_results_tool
static const struct h2b_model_field tool_fields[] = {
    F(T, name, STRING, REQ),
    F(T, version, STRING, REQ),
    F(T, git_commit, STRING, REQ),
    END,
};
#undef T
static const struct h2b_model tool_model = {"tool", sizeof(struct h2b_results_tool), tool_fields};

#define T struct h2b_results_hline
static const struct h2b_model_field hline_fields[] = {
    F(T, series, STRING, REQ),
    F(T, fingerprint, STRING, REQ),
    F(T, bigger, BOOL, REQ),
    F(T, commit, STRING, REQ),
    F(T, created, STRING, REQ),
    F(T, value, REAL, REQ),
    END,
};
#undef T
const struct h2b_model h2b_results_hline_model = {"history line", sizeof(struct h2b_results_hline),
                                                  hline_fields};

#define T struct h2b_results_scenario
static const struct h2b_model_field scenario_fields[] = {
    F(T, name, STRING, 0),
    F(T, file, STRING, 0),
    F(T, sha256, STRING, 0),
    END,
};
#undef T
static const struct h2b_model scenario_model = {"scenario", sizeof(struct h2b_results_scenario),
                                                scenario_fields};

#define T struct h2b_results_traffic
static const struct h2b_model_field traffic_fields[] = {
    F(T, total, COUNT, 0), F(T, headers, COUNT, 0), F(T, headers_decompressed, COUNT, 0),
    F(T, data, COUNT, 0),  F(T, sent, COUNT, 0),    END,
};
#undef T
static const struct h2b_model traffic_model = {"traffic", sizeof(struct h2b_results_traffic),
                                               traffic_fields};

#define T struct h2b_results_open_loop
static const struct h2b_model_field open_loop_fields[] = {
    F(T, target_per_s, REAL, 0),   F(T, arrival, STRING, 0),           F(T, seed, COUNT, 0),
    F(T, achieved_per_s, REAL, 0), F(T, max_release_lag_ns, COUNT, 0), END,
};
#undef T
static const struct h2b_model open_loop_model = {"open_loop", sizeof(struct h2b_results_open_loop),
                                                 open_loop_fields};

#define T struct h2b_results_interval
static const struct h2b_model_field interval_fields[] = {
    F(T, index, COUNT, 0),
    F(T, start_s, REAL, 0),
    F(T, end_s, REAL, 0),
    F(T, offered_per_s, REAL, 0),
    F(T, achieved_per_s, REAL, 0),
    F(T, ended, COUNT, 0),
    F(T, succeeded, COUNT, 0),
    F(T, errors, COUNT, 0),
    F(T, connections, COUNT, OMIT),
    SUB(T, latency_ns, OBJECT, 0, h2b_results_latency_model),
    F(T, latency_histogram, STRING, OMIT),
    F(T, coalesced, COUNT, OMIT),
    END,
};
#undef T
const struct h2b_model h2b_results_interval_model = {
    "interval", sizeof(struct h2b_results_interval), interval_fields};

#define T struct h2b_results_slo
static const struct h2b_model_field slo_fields[] = {
    F(T, objective, STRING, 0), F(T, start_s, REAL, 0),    F(T, end_s, REAL, 0),
    F(T, verdict, STRING, 0),   F(T, value, REAL, 0),      F(T, limit, REAL, 0),
    F(T, reason, STRING, OMIT), F(T, scope, STRING, OMIT), END,
};
#undef T
const struct h2b_model h2b_results_slo_model = {"slo verdict", sizeof(struct h2b_results_slo),
                                                slo_fields};

#define T struct h2b_results_search_step
static const struct h2b_model_field search_step_fields[] = {
    F(T, rate_per_s, REAL, 0),
    F(T, achieved_per_s, REAL, 0),
    F(T, ended, COUNT, 0),
    F(T, errors, COUNT, 0),
    SUB(T, latency_ns, OBJECT, 0, h2b_results_latency_model),
    F(T, verdict, STRING, 0),
    END,
};
#undef T
const struct h2b_model h2b_results_search_step_model = {
    "search step", sizeof(struct h2b_results_search_step), search_step_fields};

#define T struct h2b_results_search
static const struct h2b_model_field search_fields[] = {
    F(T, capacity_per_s, REAL, 0),
    F(T, slo, STRING, 0),
    F(T, step_s, REAL, 0),
    F(T, warm_up_s, REAL, 0),
    F(T, precision, REAL, 0),
    F(T, search_s, REAL, 0),
    SUB(T, last_pass, OBJECT, 0, h2b_results_search_step_model),
    SUB(T, first_fail, OBJECT, 0, h2b_results_search_step_model),
    SUB(T, steps, ARRAY, 0, h2b_results_search_step_model),
    END,
};
#undef T
const struct h2b_model h2b_results_search_model = {"search", sizeof(struct h2b_results_search),
                                                   search_fields};

#define T struct h2b_results_histograms
static const struct h2b_model_field histograms_fields[] = {
    F(T, latency, STRING, OMIT), F(T, service, STRING, OMIT),       F(T, ttfb, STRING, OMIT),
    F(T, connect, STRING, OMIT), F(T, tls_handshake, STRING, OMIT), END,
};
#undef T
const struct h2b_model h2b_results_histograms_model = {
    "histograms", sizeof(struct h2b_results_histograms), histograms_fields};

#define T struct h2b_results_header
static const struct h2b_model_field header_fields[] = {
    F(T, name, STRING, 0),
    F(T, value, STRING, 0),
    END,
};
#undef T
const struct h2b_model h2b_results_header_model = {"header", sizeof(struct h2b_results_header),
                                                   header_fields};

#define T struct h2b_results_load_options
static const struct h2b_model_field options_fields[] = {
    F(T, requests, COUNT, 0),
    F(T, connections, COUNT, 0),
    F(T, streams, COUNT, 0),
    F(T, threads, COUNT, 0),
    F(T, duration_s, REAL, 0),
    F(T, warm_up_s, REAL, 0),
    F(T, data, STRING, 0),
    F(T, connection_active_timeout_s, REAL, 0),
    F(T, connection_inactivity_timeout_s, REAL, 0),
    F(T, timeout_s, REAL, 0),
    F(T, window_bits, COUNT, 0),
    F(T, connection_window_bits, COUNT, 0),
    F(T, header_table_size, COUNT, 0),
    F(T, rate, REAL, 0),
    F(T, arrival, STRING, 0),
    F(T, seed, COUNT, 0),
    F(T, cpus, STRING, 0),
    F(T, fail_on_error, BOOL, 0),
    F(T, encoder_header_table_size, COUNT, 0),
    F(T, max_frame_size, COUNT, 0),
    F(T, rps, REAL, OMIT),
    F(T, connection_rate, COUNT, OMIT),
    F(T, rate_period_s, REAL, OMIT),
    F(T, timing_script_file, STRING, OMIT),
    F(T, base_uri, STRING, OMIT),
    F(T, connect_to, STRING, OMIT),
    F(T, log_file, STRING, OMIT),
    F(T, ktls, BOOL, OMIT),
    F(T, coalesce_s, REAL, OMIT),
    F(T, io, STRING, OMIT),
    END,
};
#undef T
static const struct h2b_model options_model = {"options", sizeof(struct h2b_results_load_options),
                                               options_fields};

#define T struct h2b_results_load_config
static const struct h2b_model_field config_fields[] = {
    F(T, uris, JSON, 0),
    SUB(T, headers, ARRAY, 0, h2b_results_header_model),
    SUB(T, options, OBJECT, 0, options_model),
    END,
};
#undef T
static const struct h2b_model config_model = {"config", sizeof(struct h2b_results_load_config),
                                              config_fields};

#define T struct h2b_results_mpi_rank
static const struct h2b_model_field mpi_rank_fields[] = {
    F(T, rank, COUNT, 0),          F(T, host, STRING, 0),
    F(T, connections, COUNT, 0),   F(T, threads, COUNT, 0),
    F(T, requests, COUNT, 0),      F(T, rate, REAL, 0),
    F(T, succeeded, COUNT, 0),     F(T, failed, COUNT, 0),
    F(T, errored, COUNT, 0),       F(T, conns_ok, COUNT, 0),
    F(T, conns_failed, COUNT, 0),  F(T, req_per_s, REAL, 0),
    F(T, start_skew_ns, COUNT, 0), F(T, interrupted, BOOL, 0),
    F(T, error, STRING, 0),        END,
};
#undef T
const struct h2b_model h2b_results_mpi_rank_model = {
    "mpi rank", sizeof(struct h2b_results_mpi_rank), mpi_rank_fields};

#define T struct h2b_results_mpi
static const struct h2b_model_field mpi_fields[] = {
    F(T, ranks, COUNT, 0),
    F(T, start_skew_max_ns, COUNT, 0),
    F(T, failed_ranks, COUNT, 0),
    SUB(T, per_rank, ARRAY, 0, h2b_results_mpi_rank_model),
    END,
};
#undef T
const struct h2b_model h2b_results_mpi_model = {"mpi", sizeof(struct h2b_results_mpi), mpi_fields};

int h2b_results_load_set_mpi(json_t *doc, const struct h2b_results_mpi *m)
{
    json_t *o = NULL;
    int rv = h2b_model_to_json(&h2b_results_mpi_model, m, &o);
    if (rv != H2B_OK)
        return rv;
    return json_object_set_new(doc, "mpi", o) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

#define T struct h2b_results_grpc
static const struct h2b_model_field grpc_fields[] = {
    F(T, method, STRING, 0),
    F(T, messages, COUNT, 0),
    F(T, size, COUNT, 0),
    F(T, data, STRING, 0),
    F(T, expect_bytes, COUNT, 0),
    F(T, status_codes, JSON, 0),
    F(T, length_mismatches, COUNT, 0),
    F(T, content_mismatches, COUNT, 0),
    END,
};
#undef T
static const struct h2b_model grpc_model = {"grpc", sizeof(struct h2b_results_grpc), grpc_fields};

#define T struct h2b_results_load
static const struct h2b_model_field load_fields[] = {
    F(T, schema, STRING, 0),
    SUB(T, cell, INLINE, 0, h2b_results_cell_model),
    F(T, goodput_per_s, REAL, 0),
    F(T, wall_s, REAL, 0),
    F(T, started, COUNT, 0),
    F(T, done, COUNT, 0),
    F(T, timeouts, COUNT, 0),
    F(T, resets, COUNT, 0),
    F(T, protocol_errors, COUNT, 0),
    F(T, not_sent, COUNT, 0),
    F(T, unfinished, COUNT, 0),
    F(T, unsent, COUNT, 0),
    F(T, interrupted, BOOL, 0),
    F(T, ended_early, BOOL, 0),
    F(T, ended_early_reason, STRING, 0),
    F(T, status_codes, JSON, 0),
    SUB(T, traffic, OBJECT, 0, traffic_model),
    SUB(T, service_ns, OBJECT, 0, h2b_results_latency_model),
    SUB(T, ttfb_ns, OBJECT, 0, h2b_results_latency_model),
    SUB(T, connect_ns, OBJECT, 0, h2b_results_latency_model),
    SUB(T, tls_handshake_ns, OBJECT, 0, h2b_results_latency_model),
    F(T, client_cpu_user_s, REAL, 0),
    F(T, client_cpu_sys_s, REAL, 0),
    F(T, protocol, STRING, 0),
    F(T, engine, STRING, 0),
    F(T, io, STRING, 0),
    F(T, io_fallback, STRING, 0),
    F(T, server_max_concurrent_streams, COUNT, 0),
    F(T, connections_up, COUNT, 0),
    F(T, connections_failed, COUNT, 0),
    F(T, reconnects, COUNT, 0),
    F(T, connection_errors, COUNT, 0),
    SUB(T, open_loop, OBJECT, 0, open_loop_model),
    SUB(T, config, OBJECT, 0, config_model),
    SUB(T, histograms, OBJECT, 0, h2b_results_histograms_model),
    SUB(T, tool, OBJECT, 0, tool_model),
    F(T, env, JSON, 0),
    SUB(T, mpi, OBJECT, OMIT, h2b_results_mpi_model),
    SUB(T, grpc, OBJECT, OMIT, grpc_model),
    END,
};
#undef T
const struct h2b_model h2b_results_load_model = {"load results", sizeof(struct h2b_results_load),
                                                 load_fields};

#define T struct h2b_results_pinning
static const struct h2b_model_field pinning_fields[] = {
    F(T, server, STRING, 0),
    F(T, client, STRING, 0),
    END,
};
#undef T
static const struct h2b_model pinning_model = {"pinning", sizeof(struct h2b_results_pinning),
                                               pinning_fields};

/* h2b_env_collect writes this table (a fact it cannot determine is null, with a warning); the
 * report lists the fields it does not show in this order. pinning is h2bench run's, later. */
#define T struct h2b_results_env
static const struct h2b_model_field env_fields[] = {
    F(T, cpu_model, STRING, 0),
    F(T, cpus, COUNT, 0),
    F(T, cpus_allowed, STRING, 0),
    F(T, kernel, STRING, 0),
    F(T, compiler, STRING, 0),
    F(T, compiler_flags, STRING, 0),
    F(T, build_type, STRING, 0),
    F(T, sanitizers, STRINGS, 0),
    F(T, nghttp2, STRING, 0),
    F(T, openssl, STRING, 0),
    F(T, jansson, STRING, 0),
    F(T, git_commit, STRING, 0),
    F(T, hostname, STRING, 0),
    F(T, perf_counters, BOOL, 0),
    F(T, perf_counters_reason, STRING, 0),
    F(T, warnings, STRINGS, 0),
    SUB(T, pinning, OBJECT, OMIT, pinning_model),
    END,
};
#undef T
const struct h2b_model h2b_results_env_model = {"env", sizeof(struct h2b_results_env), env_fields};

#define T struct h2b_results_doc
static const struct h2b_model_field doc_fields[] = {
    F(T, schema, STRING, REQ),
    F(T, created, STRING, REQ),
    SUB(T, tool, OBJECT, REQ, tool_model),
    SUB(T, scenario, OBJECT, REQ, scenario_model),
    SUB(T, env, OBJECT, REQ, h2b_results_env_model),
    SUB(T, micro, ARRAY, REQ, h2b_results_micro_model),
    SUB(T, matrix, ARRAY, REQ, h2b_results_cell_model),
    END,
};
#undef T
const struct h2b_model h2b_results_doc_model = {"results", sizeof(struct h2b_results_doc),
                                                doc_fields};

/* ---- per-part entry points ---- */

/* Each part's init, free and to_json (and from_json for the parts read at a path of a larger
 * document) are its model's, under the part's own name and type: generated once here rather
 * than spelt out per part. */
#define PART_ENTRY_POINTS(name, type, model)                                                       \
    void name##_init(type *x)                                                                      \
    {                                                                                              \
        h2b_model_init(&(model), x);                                                               \
    }                                                                                              \
    void name##_free(type *x)                                                                      \
    {                                                                                              \
        h2b_model_free(&(model), x);                                                               \
    }                                                                                              \
    int name##_to_json(const type *x, json_t **out)                                                \
    {                                                                                              \
        return h2b_model_to_json(&(model), x, out);                                                \
    }
#define PART_FROM_JSON(name, type, model)                                                          \
    int name##_from_json(const json_t *obj, const struct h2b_json_src *src, const char *path,      \
                         unsigned mode, type *out, struct h2b_diag *d)                             \
    {                                                                                              \
        return h2b_model_from_json(&(model), obj, src, path, mode, out, d);                        \
    }

PART_ENTRY_POINTS(h2b_results_micro, struct h2b_results_micro, h2b_results_micro_model)
PART_FROM_JSON(h2b_results_micro, struct h2b_results_micro, h2b_results_micro_model)
PART_ENTRY_POINTS(h2b_results_cell, struct h2b_results_cell, h2b_results_cell_model)
PART_FROM_JSON(h2b_results_cell, struct h2b_results_cell, h2b_results_cell_model)
PART_ENTRY_POINTS(h2b_results_load, struct h2b_results_load, h2b_results_load_model)

int h2b_results_load_from_json(const json_t *obj, const struct h2b_json_src *src,
                               struct h2b_results_load *out, struct h2b_diag *d)
{
    return h2b_model_from_json(&h2b_results_load_model, obj, src, "", 0, out, d);
}

int h2b_results_load_env(const struct h2b_results_load *l, const struct h2b_json_src *src,
                         struct h2b_results_env *out, struct h2b_diag *d)
{
    if (!l->env || json_is_null(l->env)) {
        h2b_model_init(&h2b_results_env_model, out);
        return H2B_OK;
    }
    return h2b_model_from_json(&h2b_results_env_model, l->env, src, "env", 0, out, d);
}

bool h2b_results_cell_ok(const struct h2b_results_cell *c)
{
    return c->status == NULL || strcmp(c->status, "ok") == 0;
}

bool h2b_results_cell_skipped(const struct h2b_results_cell *c)
{
    return c->status != NULL && strcmp(c->status, "skipped") == 0;
}

/* The over-time part of a cell (intervals, shape_bounds_s): bounded, and in the order a chart
 * against time needs. */
static int check_over_time(const struct h2b_results_cell *c, const struct h2b_json_src *src,
                           const char *path, struct h2b_diag *d)
{
    char where[512], at[512];
    const char *file = src ? src->file : NULL, *text = src ? src->text : NULL;
    const char *ikey = H2B_MODEL_KEY(h2b_results_cell_model, struct h2b_results_cell, intervals);
    const char *bkey =
        H2B_MODEL_KEY(h2b_results_cell_model, struct h2b_results_cell, shape_bounds_s);
    h2b_json_path_key(where, sizeof(where), path, ikey);
    if (c->intervals.n > H2B_RESULTS_MAX_INTERVALS) {
        h2b_diag_set(d, file, text, where, "%zu intervals: expected at most %d", c->intervals.n,
                     H2B_RESULTS_MAX_INTERVALS);
        return H2B_ERR_PARSE;
    }
    double prev = 0;
    for (size_t i = 0; i < c->intervals.n; i++) {
        const struct h2b_results_cell_interval *e =
            h2b_model_array_at(&h2b_results_cell_interval_model, &c->intervals, i);
        const char *why = isnan(e->start_s) || isnan(e->end_s) ? "expected start_s and end_s"
                          : !(e->end_s >= e->start_s)          ? "expected end_s >= start_s"
                          : !(e->start_s >= prev) ? "expected start_s at or after the previous "
                                                    "interval's"
                                                  : NULL;
        if (why) {
            h2b_json_path_index(at, sizeof(at), where, i);
            h2b_diag_set(d, file, text, at, "%s", why);
            return H2B_ERR_PARSE;
        }
        prev = e->start_s;
    }
    h2b_json_path_key(where, sizeof(where), path, bkey);
    const struct h2b_model_nums *b = &c->shape_bounds_s;
    if (b->n > H2B_RESULTS_MAX_SHAPE_BOUNDS) {
        h2b_diag_set(d, file, text, where, "%zu boundaries: expected at most %d", b->n,
                     H2B_RESULTS_MAX_SHAPE_BOUNDS);
        return H2B_ERR_PARSE;
    }
    for (size_t i = 1; i < b->n; i++) {
        if (!(b->v[i] > b->v[i - 1])) {
            h2b_json_path_index(at, sizeof(at), where, i);
            h2b_diag_set(d, file, text, at, "expected seconds above the previous boundary's");
            return H2B_ERR_PARSE;
        }
    }
    return H2B_OK;
}

int h2b_results_cell_check(const struct h2b_results_cell *c, const struct h2b_json_src *src,
                           const char *path, struct h2b_diag *d)
{
    char where[512];
    const char *file = src ? src->file : NULL, *text = src ? src->text : NULL;
    h2b_json_path_key(where, sizeof(where), path, "status");
    if (c->status && strcmp(c->status, "ok") != 0 && strcmp(c->status, "failed") != 0 &&
        strcmp(c->status, "skipped") != 0) {
        h2b_diag_set(d, file, text, where, "expected \"ok\", \"failed\" or \"skipped\", got \"%s\"",
                     c->status);
        return H2B_ERR_PARSE;
    }
    bool failed = !h2b_results_cell_ok(c);
    if (failed && c->reason == NULL) {
        h2b_diag_set(d, file, text, where, "a %s cell must say why in \"reason\"", c->status);
        return H2B_ERR_PARSE;
    }
    /* A measured cell without throughput is no measurement: say so rather than print n/a. */
    if (!failed && isnan(c->req_per_s)) {
        h2b_diag_set(d, file, text, path,
                     "req_per_s is null but the cell is not marked \"status\": \"failed\"");
        return H2B_ERR_PARSE;
    }
    return check_over_time(c, src, path, d);
}

static int decode_hist(const char *text, const struct h2b_json_src *src, const char *path,
                       const char *key, struct h2b_hist **out, struct h2b_diag *d)
{
    *out = NULL;
    if (!text)
        return H2B_OK;
    int rc = h2b_hist_decode(text, out);
    if (rc == H2B_OK || rc == H2B_ERR_NOMEM)
        return rc;
    char where[512];
    h2b_json_path_key(where, sizeof(where), path, key);
    h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, where,
                 "not a valid encoded histogram (%s)", h2b_strerror(rc));
    return H2B_ERR_PARSE;
}

int h2b_results_micro_hist(const struct h2b_results_micro *e, const struct h2b_json_src *src,
                           const char *path, struct h2b_hist **out, struct h2b_diag *d)
{
    return decode_hist(e->histogram, src, path, "histogram", out, d);
}

int h2b_results_cell_hist(const struct h2b_results_cell *c, const struct h2b_json_src *src,
                          const char *path, struct h2b_hist **out, struct h2b_diag *d)
{
    return decode_hist(c->latency_histogram, src, path, "latency_histogram", out, d);
}

/* ---- documents ---- */

int h2b_results_validate(const json_t *doc, const struct h2b_json_src *src, struct h2b_diag *diag)
{
    struct h2b_results_doc d;
    const char *schema;
    json_t *root;
    int rv;
    /* the schema first: a ceilings file given as results says so, not "missing created" */
    if ((rv = h2b_json_check_object(src, doc, "", H2B_JSON_REQUIRED, &root, diag)) < 0 ||
        (rv = h2b_json_get_string(src, root, "", "schema", H2B_JSON_REQUIRED, &schema, diag)) < 0)
        return H2B_ERR_PARSE;
    if (strcmp(schema, H2B_RESULTS_SCHEMA) != 0) {
        h2b_diag_set(diag, src ? src->file : NULL, src ? src->text : NULL, "schema",
                     "expected \"%s\", got \"%s\"", H2B_RESULTS_SCHEMA, schema);
        return H2B_ERR_PARSE;
    }
    rv = h2b_model_from_json(&h2b_results_doc_model, doc, src, "", H2B_MODEL_CONTRACT, &d, diag);
    if (rv == H2B_ERR_NOMEM)
        return rv;
    h2b_model_free(&h2b_results_doc_model, &d);
    return rv == H2B_OK ? H2B_OK : H2B_ERR_PARSE;
}

/* A load result (`h2bench load --json`, `h2bench merge`) as a results document of one matrix
 * cell: its cell part as it is (the load document's first part is a matrix cell), its tool and
 * env; no micro entries, no scenario. It records no time of its own: "created" is when the file
 * was last written (its mtime, UTC), which for load --json is when the run ended. */
static int doc_from_load(const json_t *doc, const struct h2b_json_src *src,
                         struct h2b_results_doc *d, struct h2b_diag *diag)
{
    struct h2b_results_load l;
    int rv = h2b_results_load_from_json(doc, src, &l, diag);
    if (rv != H2B_OK)
        return rv;
    h2b_model_init(&h2b_results_doc_model, d);
    void *cell = NULL;
    char created[32] = "unknown";
    struct stat st;
    struct tm tm;
    if (src->file && stat(src->file, &st) == 0 && gmtime_r(&st.st_mtime, &tm))
        strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
    rv = h2b_model_set_string(&d->schema, H2B_RESULTS_SCHEMA);
    if (rv == H2B_OK)
        rv = h2b_model_set_string(&d->created, created);
    if (rv == H2B_OK)
        rv = h2b_model_copy(&tool_model, &d->tool, &l.tool);
    if (rv == H2B_OK) {
        h2b_model_free(&h2b_results_env_model, &d->env);
        rv = h2b_results_load_env(&l, src, &d->env, diag);
    }
    if (rv == H2B_OK)
        rv = h2b_model_array_push(&h2b_results_cell_model, &d->matrix, &cell);
    if (rv == H2B_OK) {
        h2b_model_free(&h2b_results_cell_model, cell);
        rv = h2b_model_copy(&h2b_results_cell_model, cell, &l.cell);
        if (rv != H2B_OK)
            h2b_model_init(&h2b_results_cell_model, cell); /* freed with d below */
    }
    h2b_results_load_free(&l);
    if (rv != H2B_OK)
        h2b_model_free(&h2b_results_doc_model, d);
    return rv;
}

int h2b_results_doc_load(const char *path, struct h2b_results_doc **out, char **text_out,
                         struct h2b_diag *diag)
{
    json_t *doc;
    char *text;
    int rv = h2b_json_load(path, &doc, &text, diag);
    if (rv != H2B_OK)
        return rv == H2B_ERR_IO ? H2B_ERR_NOTFOUND : rv; /* unreadable input: the user's to fix */
    struct h2b_json_src src = {path, text};
    struct h2b_results_doc *d = malloc(sizeof(*d));
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!d)
        rv = H2B_ERR_NOMEM;
    else if (schema && strcmp(schema, H2B_RESULTS_LOAD_SCHEMA) == 0)
        rv = doc_from_load(doc, &src, d, diag);
    else if ((rv = h2b_results_validate(doc, &src, diag)) == H2B_OK)
        rv =
            h2b_model_from_json(&h2b_results_doc_model, doc, &src, "", H2B_MODEL_CONTRACT, d, diag);
    json_decref(doc);
    if (rv != H2B_OK) {
        free(d);
        free(text);
        return rv;
    }
    *out = d;
    if (text_out)
        *text_out = text;
    else
        free(text);
    return H2B_OK;
}

void h2b_results_doc_del(struct h2b_results_doc *doc)
{
    if (!doc)
        return;
    h2b_model_free(&h2b_results_doc_model, doc);
    free(doc);
}

struct h2b_results_micro *h2b_results_doc_micro(const struct h2b_results_doc *doc, size_t i)
{
    return h2b_model_array_at(&h2b_results_micro_model, &doc->micro, i);
}

struct h2b_results_cell *h2b_results_doc_cell(const struct h2b_results_doc *doc, size_t i)
{
    return h2b_model_array_at(&h2b_results_cell_model, &doc->matrix, i);
}

static int append(json_t *doc, const char *section, json_t *entry)
{
    json_t *array = json_object_get(doc, section);
    if (!json_is_array(array)) {
        json_decref(entry);
        return H2B_ERR_INVAL;
    }
    return json_array_append_new(array, entry) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

int h2b_results_append_micro(json_t *doc, const struct h2b_results_micro *e)
{
    json_t *j;
    int rv = h2b_results_micro_to_json(e, &j);
    return rv == H2B_OK ? append(doc, "micro", j) : rv;
}

int h2b_results_append_cell(json_t *doc, const struct h2b_results_cell *c)
{
    json_t *j;
    int rv = h2b_results_cell_to_json(c, &j);
    return rv == H2B_OK ? append(doc, "matrix", j) : rv;
}

size_t h2b_results_micro_count(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "micro"));
}

size_t h2b_results_cell_count(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "matrix"));
}

int h2b_results_get_cell(const json_t *doc, size_t i, struct h2b_results_cell *out)
{
    const json_t *e = json_array_get(json_object_get(doc, "matrix"), i);
    struct h2b_diag d;
    if (!e) {
        h2b_results_cell_init(out);
        return H2B_ERR_RANGE;
    }
    return h2b_results_cell_from_json(e, NULL, "", 0, out, &d);
}

int h2b_results_set_cell_budgets(json_t *doc, size_t i, const struct h2b_results_budgets *b)
{
    json_t *e = json_array_get(json_object_get(doc, "matrix"), i), *j = NULL;
    if (!e)
        return H2B_ERR_RANGE;
    int rc = h2b_model_to_json(&h2b_results_budgets_model, b, &j);
    if (rc != H2B_OK)
        return rc;
    return json_object_set_new(e, "budgets", j) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

int h2b_results_set_pinning(json_t *doc, const char *server, const char *client)
{
    json_t *env = json_object_get(doc, "env");
    if (!json_is_object(env))
        return H2B_ERR_INVAL;
    json_t *pin = json_pack("{s:s, s:s}", "server", server, "client", client);
    return pin && json_object_set_new(env, "pinning", pin) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

void h2b_results_env_sanitizers(const struct h2b_results_env *env, char *san, size_t size)
{
    size_t used = 0;
    san[0] = '\0';
    for (size_t i = 0; i < env->sanitizers.n && used < size; i++)
        used +=
            (size_t)snprintf(san + used, size - used, "%s%s", i ? "," : "", env->sanitizers.v[i]);
}

int h2b_results_read(const char *path, json_t **out, struct h2b_diag *diag)
{
    json_t *doc;
    char *text;
    int rv = h2b_json_load(path, &doc, &text, diag);
    if (rv != H2B_OK)
        return rv;
    struct h2b_json_src src = {path, text};
    rv = h2b_results_validate(doc, &src, diag);
    free(text);
    if (rv != H2B_OK) {
        json_decref(doc);
        return rv;
    }
    *out = doc;
    return H2B_OK;
}

int h2b_results_write(const char *path, const json_t *doc, struct h2b_diag *diag)
{
    struct h2b_json_src src = {path, NULL};
    int rv = h2b_results_validate(doc, &src, diag);
    if (rv != H2B_OK)
        return rv == H2B_ERR_NOMEM ? rv : H2B_ERR_INVAL;
    return h2b_json_write_atomic(path, doc, diag);
}

int h2b_results_file_sha256(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return H2B_ERR_IO;
    int rv = H2B_ERR_NOMEM;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
        goto out;
    unsigned char buf[16384];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rv = H2B_ERR_IO;
            goto out;
        }
        if (n == 0)
            break;
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
            goto out;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32)
        goto out;
    for (unsigned i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    rv = H2B_OK;
out:
    EVP_MD_CTX_free(ctx);
    close(fd);
    return rv;
}

/* Builds {"name", "file", "sha256"} for the scenario; missing arguments become null. */
static int scenario_object(json_t **out, const char *name, const char *file)
{
    char hex[65];
    if (file) {
        int rv = h2b_results_file_sha256(file, hex);
        if (rv != H2B_OK)
            return rv;
    }
    json_t *s =
        json_pack("{s:s?, s:s?, s:s?}", "name", name, "file", file, "sha256", file ? hex : NULL);
    if (s == NULL)
        return H2B_ERR_NOMEM;
    *out = s;
    return H2B_OK;
}

int h2b_results_new(json_t **out, const char *scenario_name, const char *scenario_file)
{
    json_t *scenario, *env;
    int rv = scenario_object(&scenario, scenario_name, scenario_file);
    if (rv != H2B_OK)
        return rv;
    if ((rv = h2b_env_collect(&env)) != H2B_OK) {
        json_decref(scenario);
        return rv;
    }
    char created[32];
    h2b_clock_utc_string(created, sizeof(created));
    /* "o" steals the references, also when json_pack fails. */
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o, s:o, s:[], s:[]}", "schema",
                            H2B_RESULTS_SCHEMA, "created", created, "tool", "name", "h2bench",
                            "version", h2b_version(), "git_commit", h2b_version_git_commit(),
                            "scenario", scenario, "env", env, "micro", "matrix");
    if (doc == NULL)
        return H2B_ERR_NOMEM;
    *out = doc;
    return H2B_OK;
}
