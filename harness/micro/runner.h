/*
 * runner.h - internals of the microbenchmark runner shared by its .c files and its tests.
 *
 * registry.c expands registered benchmarks into instances; measure.c runs the passes of one
 * instance in the current process (what a fork does); fork.c runs measure.c in fresh child
 * processes and carries each fork's numbers back over a pipe; output.c merges forks into a
 * result and writes the table, the h2bench.result/1 entries and the exporter formats; main.c is
 * h2b_micro_main.
 */
#ifndef H2B_MICRO_RUNNER_H
#define H2B_MICRO_RUNNER_H

#include "h2bench/micro.h"
#include "core/hist.h"

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define H2B_MICRO_NAME_MAX 128
#define H2B_MICRO_MAX_INSTANCES 1024
#define H2B_MICRO_MAX_EPOCHS 64
#define H2B_MICRO_MAX_FORKS 32
#define H2B_MICRO_REASON_MAX 256

struct h2b_micro_instance {
    const struct h2b_micro_bench *bench;
    char name[H2B_MICRO_NAME_MAX];
    int64_t param;
    uint64_t ops_per_call; /* >= 1 */
};

struct h2b_micro_config {
    unsigned forks;     /* 0: measure in this process (debugging, sanitizers) */
    uint64_t warmup_ns; /* warm-up time per fork */
    uint64_t time_ns;   /* measurement time of the time pass and of the sample pass, per fork */
    unsigned epochs;    /* epochs of the time pass */
    bool callgrind;     /* also count instructions under valgrind --tool=callgrind */
    uint64_t callgrind_calls; /* N of the callgrind pass (it runs N and 4N calls) */
    int cpu;                  /* CPU to pin to, -1 for none */
    uint64_t seed;            /* epoch-size jitter */
    const char *perf_record;  /* --perf-record: the benchmark to profile, or NULL */
    const char *perf_dir;     /* where its profile goes */
    bool sample_per_call;     /* --sample-per-call: no batches in the sample pass */
};

/* A measurement that may be missing: value, or a reason why not. */
struct h2b_micro_maybe {
    bool available;
    double value;
    char reason[H2B_MICRO_REASON_MAX];
};

/* What one fork measured. */
struct h2b_micro_fork {
    long pid;
    /* time pass */
    unsigned epochs;
    double epoch_ns_per_op[H2B_MICRO_MAX_EPOCHS];
    uint64_t ops;         /* operations measured in the time pass */
    double cpu_ns_per_op; /* thread CPU time of the time pass per op */
    /* sample pass */
    struct h2b_hist *hist; /* per-op ns; owned */
    uint64_t batch;        /* calls per sample */
    uint64_t timer_overhead_ns;
    /* allocation pass */
    struct h2b_micro_maybe allocs_per_op, bytes_per_op;
    bool alloc_deterministic;
    /* instruction pass (perf_event_open, or callgrind in a callgrind child) */
    struct h2b_micro_maybe instructions_per_op;
    char error[H2B_MICRO_REASON_MAX]; /* non-empty: the benchmark failed */
};

/* registry.c */
/* Validates and expands the registered benchmarks; on error prints why and returns
 * H2B_ERR_INVAL. Idempotent. */
/* The bench to run for instance name: b, or a wrapper injecting a regression when
 * H2B_INJECT_ALLOC, H2B_INJECT_SLOW or H2B_INJECT_INSTR names the instance (inject.c). */
const struct h2b_micro_bench *h2b__micro_inject(const struct h2b_micro_bench *b, const char *name);

int h2b__micro_registry_load(void);
size_t h2b__micro_instance_count(void);
const struct h2b_micro_instance *h2b__micro_instance(size_t i);
const struct h2b_micro_instance *h2b__micro_find(const char *name);

/* measure.c */
void h2b__micro_fork_init(struct h2b_micro_fork *f);
void h2b__micro_fork_free(struct h2b_micro_fork *f);
/* Runs warm-up, time, sample, allocation and perf-instruction passes of inst here. Returns H2B_OK
 * (f->error says whether the benchmark itself failed) or H2B_ERR_NOMEM. */
int h2b__micro_measure(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                       struct h2b_micro_fork *f);
/* The callgrind pass: must run under valgrind; fills f->instructions_per_op from the two dumps
 * that parent reads (callgrind dump files), so here it only brackets the loops. */
int h2b__micro_measure_callgrind(const struct h2b_micro_instance *inst, uint64_t calls,
                                 struct h2b_micro_fork *f);
/* The fork index h2b_micro_fork_index() reports in this process (fork.c sets it in a child). */
extern int h2b__micro_fork_index;
/* Median-of-back-to-back-reads cost of one clock sample, ns. */
uint64_t h2b__micro_timer_overhead_ns(void);

/* fork.c */
json_t *h2b__micro_fork_to_json(const struct h2b_micro_fork *f);
int h2b__micro_fork_from_json(json_t *j, struct h2b_micro_fork *f);
/* Runs inst in cfg->forks fresh processes (or in-process when forks == 0); out[] gets
 * cfg->forks (or 1) entries. Returns H2B_OK or an error with a message on stderr. */
int h2b__micro_run_forks(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                         struct h2b_micro_fork *out);
/* Runs the callgrind pass of inst in a valgrind child; *out gets instructions per op. */
int h2b__micro_run_callgrind(const struct h2b_micro_instance *inst,
                             const struct h2b_micro_config *cfg, struct h2b_micro_maybe *out);
/* If this process is a child started by fork.c, runs its job with cfg (parsed from the same
 * command line as the parent's) and returns true with *exit_code set; otherwise returns false.
 * argc/argv are what h2b_micro_main received: the parent re-executes the same command line. */
bool h2b__micro_child(const struct h2b_micro_config *cfg, int *exit_code);
/* Records the command line h2b_micro_main received, for re-executing it in children. */
void h2b__micro_set_command_line(int argc, char **argv);

/* output.c */
struct h2b_micro_result {
    const struct h2b_micro_instance *inst;
    unsigned forks;
    struct h2b_micro_fork fork[H2B_MICRO_MAX_FORKS];
    struct h2b_hist *hist; /* merged over forks; owned */
    double ns_per_op, ns_per_op_mdape, ns_per_op_min, cpu_ns_per_op;
    uint64_t ops, samples, p50, p90, p99, p999, max, batch, timer_overhead_ns;
    struct h2b_micro_maybe allocs_per_op, bytes_per_op, instructions_per_op;
    const char *instructions_source; /* "perf", "callgrind" or NULL */
    bool alloc_deterministic;
    char error[H2B_MICRO_REASON_MAX];
    char *profile;                             /* --perf-record: JSON object text, or NULL */
    char profile_reason[H2B_MICRO_REASON_MAX]; /* why profile is NULL */
};
/* Merges r->fork[0..forks) into the summary fields. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b__micro_result_merge(struct h2b_micro_result *r);
void h2b__micro_result_free(struct h2b_micro_result *r);
struct h2b_results_micro;
/* The results-model entry of r (core/results.h); *e is the caller's to free, also on failure
 * (left initialised). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b__micro_result_entry(const struct h2b_micro_result *r, struct h2b_results_micro *e);
/* The same entry encoded; NULL when out of memory. */
json_t *h2b__micro_result_json(const struct h2b_micro_result *r);
void h2b__micro_print_table_header(FILE *f);
void h2b__micro_print_table_row(FILE *f, const struct h2b_micro_result *r);
/* Google Benchmark JSON: a row per fork (iterations) and mean/median/stddev rows for benchmarks
 * with two or more forks (aggregates). */
json_t *h2b__micro_gbench_json(const struct h2b_micro_result *r, size_t n, const char *exe,
                               bool aggregates, bool iterations);

/* --perf-record: one extra fork of inst under `perf record -e cpu-clock --call-graph dwarf`,
 * recording from the end of its warm-up to its exit (its numbers are not used: perf slows it),
 * then `perf script` into cfg->perf_dir and the profile hook. Fills r->profile or
 * r->profile_reason. Returns H2B_OK or the code of what failed. */
int h2b__micro_run_perf(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                        struct h2b_micro_result *r);

#endif
