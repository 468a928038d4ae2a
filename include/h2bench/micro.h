/*
 * h2bench/micro.h - write component microbenchmarks for C code and run them like JMH.
 *
 * A benchmark is a batch callback fn(state, n) that performs its operation n times in its own
 * loop; the runner never calls anything per operation, so the measured loop is the user's loop.
 * Registration is by the H2B_MICRO_BENCH macro (a constructor function), so a benchmark source
 * file only has to be linked into the executable. The executable's main() calls
 * h2b_micro_main(argc, argv) and gets the whole runner: --list, --filter, forks, profiles, JSON,
 * Google Benchmark and github-action-benchmark output (see docs/micro.md).
 *
 *     static void bench_parse(struct h2b_micro_state *st, uint64_t n)
 *     {
 *         for (uint64_t i = 0; i < n; i++) {
 *             int v = my_parse(input);
 *             H2B_MICRO_KEEP(v);
 *         }
 *     }
 *     H2B_MICRO_BENCH(parse, .name = "mylib/parse", .fn = bench_parse)
 *
 *     int main(int argc, char **argv) { return h2b_micro_main(argc, argv); }
 *
 * Passes. Each benchmark runs in fresh child processes (forks). In each fork the runner does a
 * time pass (warm-up, then epochs sized automatically; ns/op is the median of epochs), a sample
 * pass (per-operation latency into a histogram: p50..max; operations too short to time one by
 * one are timed in batches), an allocation pass (counting allocator armed around n and 4n
 * calls, so one-time allocations cancel: exact allocs/op and B/op) and an instruction pass
 * (perf_event_open where the machine has counters; --callgrind for deterministic counts).
 *
 * Units. One "op" is one iteration of fn's loop divided by .ops_per_call: ns/op is the time of
 * fn(st, n) / (n * ops_per_call), and so are allocs/op, B/op and instructions/op.
 *
 * Allocation counting. The runner interposes the whole malloc family for the process (shared
 * libraries included) and counts on the measuring thread while armed: B/op is the bytes
 * *requested*; malloc, calloc, aligned_alloc, posix_memalign, memalign, valloc and pvalloc
 * count one allocation each; realloc (and reallocarray) counts one allocation of the new size
 * and one free of the old block, also when the block did not move (realloc(NULL, n) is one
 * allocation, realloc(p, 0) one free); a failed call and free(NULL) count nothing.
 * Allocations made before the first call (setup) or once per fork (lazy caches) cancel out:
 * the pass measures n and 4n calls and reports the difference. Under sanitizers nothing is
 * counted and the metrics are null with the reason.
 *
 * Sampling. The sample pass times calls one by one, except that calls cheaper than about 20x
 * the clock's own cost are timed in batches and recorded as batch time / batch (the result's
 * "sample_batch"); .sample_per_call (or --sample-per-call for every benchmark) forces one call
 * per sample (n = 1), accepting the clock's cost in every sample.
 *
 * Forks. Each measurement fork is a fresh process; h2b_micro_fork_index() tells a benchmark
 * which one it runs in (0..forks-1), e.g. to vary its input per fork.
 *
 * Setup and teardown run outside every measured region, once per pass and possibly several times
 * per fork: fn must be callable again after a new setup. Thread-safety: benchmarks run on one
 * thread; registration happens before main.
 */
#ifndef H2BENCH_MICRO_H
#define H2BENCH_MICRO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque per-run state handed to every callback. */
struct h2b_micro_state;

/* Performs the benchmarked operation n times (n >= 1). */
typedef void (*h2b_micro_fn)(struct h2b_micro_state *st, uint64_t n);
/* Prepares a run (untimed, allocation not counted). Returns 0, or non-zero to fail the
 * benchmark (call h2b_micro_fail first to say why). */
typedef int (*h2b_micro_setup_fn)(struct h2b_micro_state *st);
/* Undoes setup (untimed). */
typedef void (*h2b_micro_teardown_fn)(struct h2b_micro_state *st);

struct h2b_micro_bench {
    const char *name;               /* "group/name": letters, digits and -_./: only */
    h2b_micro_fn fn;                /* required */
    h2b_micro_setup_fn setup;       /* optional */
    h2b_micro_teardown_fn teardown; /* optional */
    const char *params; /* optional "1,8,64": one instance per value, named "name/<value>",
                           the value read with h2b_micro_param() */
    /* Logical operations ONE ITERATION of fn's loop performs (per unit of n, not per call of
     * fn, despite the name, kept for compatibility); every per-op figure is divided by
     * n * ops_per_call. 0 means 1. */
    uint64_t ops_per_call;
    void *arg; /* optional, read with h2b_micro_arg() */
    /* Non-zero: the sample pass times every call on its own (n = 1), never in batches, even
     * when a call costs less than the clock (see Sampling above). */
    unsigned sample_per_call;
};

/* Registers bench; the struct must outlive the program (use H2B_MICRO_BENCH). Call before
 * h2b_micro_main. Invalid or duplicate names are reported by h2b_micro_main (exit 2). */
void h2b_micro_register(const struct h2b_micro_bench *bench);

/* Defines and registers a benchmark at load time: H2B_MICRO_BENCH(id, .name = ..., .fn = ...). */
#define H2B_MICRO_BENCH(id, ...)                                                                   \
    static const struct h2b_micro_bench h2b_micro__bench_##id = {__VA_ARGS__};                     \
    __attribute__((constructor)) static void h2b_micro__register_##id(void)                        \
    {                                                                                              \
        h2b_micro_register(&h2b_micro__bench_##id);                                                \
    }

/* The instance's parameter (0 without params). */
int64_t h2b_micro_param(const struct h2b_micro_state *st);
/* The bench's .arg. */
void *h2b_micro_arg(const struct h2b_micro_state *st);
/* Per-run data owned by the benchmark: setup stores it, fn reads it, teardown frees it. */
void h2b_micro_set_data(struct h2b_micro_state *st, void *data);
void *h2b_micro_data(const struct h2b_micro_state *st);
/* The instance's full name ("group/name/param"). */
const char *h2b_micro_name(const struct h2b_micro_state *st);
/* Which measurement fork this is: 0..forks-1. The in-process run (--forks 0), the callgrind
 * pass and the --perf-record fork report 0. */
int h2b_micro_fork_index(const struct h2b_micro_state *st);

/* Marks the benchmark failed with a printf-style reason; fn should return promptly. The runner
 * reports the reason and exits 3. */
void h2b_micro_fail(struct h2b_micro_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keeps the compiler from deleting work. H2B_MICRO_KEEP(lvalue): the value is assumed read and
 * modified, so its computation cannot be removed or hoisted out of the loop; keep the result of
 * every iteration, not the input. h2b_micro_escape(p): memory reachable through p is assumed
 * read. h2b_micro_clobber(): all memory is assumed read and written. */
#if defined(__clang__)
#define H2B_MICRO_KEEP(x) __asm__ volatile("" : "+r,m"(x) : : "memory")
#else
#define H2B_MICRO_KEEP(x) __asm__ volatile("" : "+m,r"(x) : : "memory")
#endif
static inline void h2b_micro_escape(const void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}
static inline void h2b_micro_clobber(void)
{
    __asm__ volatile("" : : : "memory");
}

/* The runner: parses argv (see --help), runs the registered benchmarks and returns the exit code
 * (0 ok, 2 usage error, 3 a benchmark failed or a measurement could not be made). argv[0] is
 * only used in messages. */
int h2b_micro_main(int argc, char **argv);

/* Folding for --perf-record NAME (optional). The runner records one extra fork of NAME under
 * `perf record` and writes `perf script` text to script_path; without a hook that text is the
 * artefact (fold it with `h2bench flame --perf-script`). With a hook, the runner calls it with
 * that path, the fork's executable and an output stem (a path without extension); the hook
 * returns a malloc'd JSON object text for the result's "profile" field, or NULL with why filled.
 * `h2bench micro` installs one that writes STEM.folded and STEM.svg. Call before
 * h2b_micro_main; not thread-safe. */
typedef char *(*h2b_micro_profile_fn)(const char *script_path, const char *exe, const char *stem,
                                      char *why, size_t why_size);
void h2b_micro_set_profile_hook(h2b_micro_profile_fn fn);

#ifdef __cplusplus
}
#endif

#endif
