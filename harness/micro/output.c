/*
 * output.c - merging forks into one result, and writing it: the console table, the "micro"
 * entries of h2bench.result/1 and Google Benchmark JSON (one row per fork, then mean, median
 * and stddev rows, as Google Benchmark writes repetitions). The tracker formats (BMF, GAB) are
 * written from the results document by core/export.c.
 *
 * Merging rules: ns/op is the median over the epochs of every fork (with its median absolute
 * percentage error); percentiles come from the forks' histograms merged bin by bin, never from
 * averaged percentiles; per-fork p99 and ns/op stay in the entry so a gate can use the best
 * fork. Allocation counts must agree across forks (and across the repeat inside each fork) to
 * be called deterministic. A metric that could not be measured is null and its reason is in
 * the entry's "note".
 */
#include "core/error.h"
#include "core/results.h"
#include "micro/runner.h"
#include "core/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A micro entry's results key (the core model's row for the member); the Google Benchmark
 * export's user counters are named after them too. */
#define MKEY(member) H2B_MODEL_KEY(h2b_results_micro_model, struct h2b_results_micro, member)

#ifndef H2B_MICRO_VERSION
#define H2B_MICRO_VERSION "0"
#endif

static int merge_hist(struct h2b_micro_result *r)
{
    for (unsigned i = 0; i < r->forks; i++) {
        const struct h2b_hist *h = r->fork[i].hist;
        if (!h)
            continue;
        if (!r->hist) {
            int rc = h2b_hist_new(&r->hist, h->lowest, h->highest, h->sub_bits);
            if (rc != H2B_OK)
                return rc;
        }
        int rc = h2b_hist_merge(r->hist, h);
        if (rc != H2B_OK)
            return rc;
    }
    return H2B_OK;
}

static double fork_median(const struct h2b_micro_fork *f)
{
    double v[H2B_MICRO_MAX_EPOCHS];
    memcpy(v, f->epoch_ns_per_op, f->epochs * sizeof v[0]);
    return (f->epochs ? h2b_stats_median(v, f->epochs) : 0);
}

int h2b__micro_result_merge(struct h2b_micro_result *r)
{
    static double all[H2B_MICRO_MAX_EPOCHS * H2B_MICRO_MAX_FORKS];
    size_t n = 0;
    double cpu_ns = 0, min = INFINITY;
    uint64_t overhead[H2B_MICRO_MAX_FORKS] = {0};
    r->ops = 0;
    r->batch = 0;
    for (unsigned i = 0; i < r->forks; i++) {
        const struct h2b_micro_fork *f = &r->fork[i];
        if (f->error[0] && !r->error[0])
            snprintf(r->error, sizeof r->error, "%s", f->error);
        for (unsigned e = 0; e < f->epochs; e++) {
            all[n++] = f->epoch_ns_per_op[e];
            if (f->epoch_ns_per_op[e] < min)
                min = f->epoch_ns_per_op[e];
        }
        cpu_ns += f->cpu_ns_per_op * (double)f->ops;
        r->ops += f->ops;
        if (f->batch > r->batch)
            r->batch = f->batch;
        overhead[i] = f->timer_overhead_ns;
    }
    r->ns_per_op = (n ? h2b_stats_median(all, n) : 0);
    for (size_t i = 0; i < n; i++)
        all[i] = r->ns_per_op > 0 ? fabs(all[i] - r->ns_per_op) / r->ns_per_op : 0;
    r->ns_per_op_mdape = (n ? h2b_stats_median(all, n) : 0);
    r->ns_per_op_min = n ? min : 0;
    r->cpu_ns_per_op = r->ops ? cpu_ns / (double)r->ops : 0;
    double ov[H2B_MICRO_MAX_FORKS];
    for (unsigned i = 0; i < r->forks; i++)
        ov[i] = (double)overhead[i];
    r->timer_overhead_ns = (uint64_t)(r->forks ? h2b_stats_median(ov, r->forks) : 0);

    int rc = merge_hist(r);
    if (rc != H2B_OK)
        return rc;
    if (r->hist) {
        r->samples = r->hist->total;
        r->p50 = h2b_hist_percentile(r->hist, 50);
        r->p90 = h2b_hist_percentile(r->hist, 90);
        r->p99 = h2b_hist_percentile(r->hist, 99);
        r->p999 = h2b_hist_percentile(r->hist, 99.9);
        r->max = r->hist->total ? r->hist->max : 0;
    }

    /* allocation: every fork must have measured, and agree */
    r->allocs_per_op = r->fork[0].allocs_per_op;
    r->bytes_per_op = r->fork[0].bytes_per_op;
    r->alloc_deterministic = r->allocs_per_op.available;
    for (unsigned i = 0; i < r->forks; i++) {
        const struct h2b_micro_fork *f = &r->fork[i];
        if (!f->allocs_per_op.available) {
            r->allocs_per_op = f->allocs_per_op;
            r->bytes_per_op = f->bytes_per_op;
            r->alloc_deterministic = false;
            break;
        }
        if (!f->alloc_deterministic || f->allocs_per_op.value != r->allocs_per_op.value ||
            f->bytes_per_op.value != r->bytes_per_op.value)
            r->alloc_deterministic = false;
    }

    /* perf instructions: median over forks when every fork has them */
    double ins[H2B_MICRO_MAX_FORKS];
    r->instructions_per_op = r->fork[0].instructions_per_op;
    r->instructions_source = NULL;
    for (unsigned i = 0; i < r->forks; i++) {
        if (!r->fork[i].instructions_per_op.available) {
            r->instructions_per_op = r->fork[i].instructions_per_op;
            break;
        }
        ins[i] = r->fork[i].instructions_per_op.value;
    }
    if (r->instructions_per_op.available) {
        r->instructions_per_op.value = (r->forks ? h2b_stats_median(ins, r->forks) : 0);
        r->instructions_source = "perf";
    }
    return H2B_OK;
}

void h2b__micro_result_free(struct h2b_micro_result *r)
{
    for (unsigned i = 0; i < r->forks; i++)
        h2b__micro_fork_free(&r->fork[i]);
    h2b_hist_del(r->hist);
    r->hist = NULL;
    free(r->profile);
    r->profile = NULL;
}

static double maybe_value(const struct h2b_micro_maybe *m)
{
    return m->available ? m->value : NAN;
}

int h2b__micro_result_entry(const struct h2b_micro_result *r, struct h2b_results_micro *e)
{
    double pids[H2B_MICRO_MAX_FORKS], p99s[H2B_MICRO_MAX_FORKS], nss[H2B_MICRO_MAX_FORKS];
    char *enc = NULL;
    int rc;
    h2b_results_micro_init(e);
    e->ops = (double)r->ops;
    e->ops_per_call = (double)r->inst->ops_per_call;
    e->ns_per_op = r->ns_per_op;
    e->ns_per_op_mdape = r->ns_per_op_mdape;
    e->ns_per_op_min = r->ns_per_op_min;
    e->cpu_ns_per_op = r->cpu_ns_per_op;
    e->bytes_per_op = maybe_value(&r->bytes_per_op);
    e->allocs_per_op = maybe_value(&r->allocs_per_op);
    e->alloc_deterministic =
        r->allocs_per_op.available ? (int)r->alloc_deterministic : H2B_MODEL_NULL_BOOL;
    e->p50_ns = (double)r->p50;
    e->p90_ns = (double)r->p90;
    e->p99_ns = (double)r->p99;
    e->p999_ns = (double)r->p999;
    e->max_ns = (double)r->max;
    e->samples = (double)r->samples;
    e->sample_batch = (double)r->batch;
    e->timer_overhead_ns = (double)r->timer_overhead_ns;
    e->instructions_per_op = maybe_value(&r->instructions_per_op);
    e->forks = r->forks;
    for (unsigned i = 0; i < r->forks; i++) {
        const struct h2b_micro_fork *f = &r->fork[i];
        pids[i] = (double)f->pid;
        p99s[i] = f->hist ? (double)h2b_hist_percentile(f->hist, 99) : 0;
        nss[i] = fork_median(f);
    }
    if ((rc = h2b_model_set_string(&e->name, r->inst->name)) ||
        (rc = h2b_model_set_string(&e->instructions_source, r->instructions_source)) ||
        (rc = h2b_model_set_nums(&e->fork_pids, pids, r->forks)) ||
        (rc = h2b_model_set_nums(&e->fork_p99_ns, p99s, r->forks)) ||
        (rc = h2b_model_set_nums(&e->fork_ns_per_op, nss, r->forks)))
        goto out;
    if (r->hist) {
        if ((rc = h2b_hist_encode(r->hist, &enc)) ||
            (rc = h2b_model_set_string(&e->histogram, enc)))
            goto out;
    }
    if (!r->allocs_per_op.available)
        rc = h2b_model_note_add(&e->note, MKEY(allocs_per_op), r->allocs_per_op.reason);
    else if (!r->alloc_deterministic)
        rc = h2b_model_note_add(&e->note, MKEY(allocs_per_op),
                                "not deterministic (forks or repeats disagree); do not gate it "
                                "exactly");
    if (rc == H2B_OK && !r->instructions_per_op.available)
        rc = h2b_model_note_add(&e->note, MKEY(instructions_per_op), r->instructions_per_op.reason);
    if (rc == H2B_OK && r->batch > 1)
        rc = h2b_model_note_add(&e->note, "percentiles", "per-op averages over sample batches");
    if (rc == H2B_OK && r->profile) {
        json_error_t jerr;
        struct h2b_diag d = {0};
        json_t *prof = json_loads(r->profile, 0, &jerr);
        if (prof && h2b_model_from_json(&h2b_results_profile_model, prof, NULL, "profile", 0,
                                        &e->profile, &d) == H2B_OK)
            e->profile.base.present = true;
        else
            rc = h2b_model_note_add(&e->note, "profile", "the profile hook returned no profile");
        json_decref(prof);
    } else if (rc == H2B_OK && r->profile_reason[0]) {
        rc = h2b_model_note_add(&e->note, "profile", r->profile_reason);
    }
    if (rc != H2B_OK)
        goto out;
    /* a percentile resting on fewer than 10 samples above it is an anecdote, not a tail */
    const struct {
        const char *metric;
        double p;
    } tails[] = {{MKEY(p99_ns), 99}, {MKEY(p999_ns), 99.9}};
    if (!(e->insufficient = json_array())) {
        rc = H2B_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < sizeof tails / sizeof tails[0] && rc == H2B_OK; i++) {
        if ((double)r->samples * (1.0 - tails[i].p / 100.0) < 10.0) {
            char why[96];
            json_array_append_new(e->insufficient, json_string(tails[i].metric));
            snprintf(why, sizeof why, "fewer than 10 of %" PRIu64 " samples above it", r->samples);
            rc = h2b_model_note_add(&e->note, tails[i].metric, why);
        }
    }
    if (rc == H2B_OK && r->error[0])
        rc = h2b_model_set_string(&e->error, r->error);
out:
    free(enc);
    if (rc != H2B_OK)
        h2b_results_micro_free(e);
    return rc;
}

json_t *h2b__micro_result_json(const struct h2b_micro_result *r)
{
    struct h2b_results_micro e;
    json_t *o = NULL;
    if (h2b__micro_result_entry(r, &e) == H2B_OK && h2b_results_micro_to_json(&e, &o) != H2B_OK)
        o = NULL;
    h2b_results_micro_free(&e);
    return o;
}

/* --- console table -------------------------------------------------------------------------- */

static void fmt_maybe(char *buf, size_t size, const struct h2b_micro_maybe *m)
{
    if (!m->available)
        snprintf(buf, size, "-");
    else if (m->value == floor(m->value) && m->value < 1e9)
        snprintf(buf, size, "%.0f", m->value);
    else
        snprintf(buf, size, "%.2f", m->value);
}

void h2b__micro_print_table_header(FILE *f)
{
    fprintf(f, "%-34s %10s %6s %10s %8s %9s %8s %8s %9s %10s\n", "benchmark", "ns/op", "err%",
            "cpu ns/op", "B/op", "allocs/op", "p50 ns", "p99 ns", "p999 ns", "ins/op");
}

void h2b__micro_print_table_row(FILE *f, const struct h2b_micro_result *r)
{
    if (r->error[0]) {
        fprintf(f, "%-34s FAILED: %s\n", r->inst->name, r->error);
        return;
    }
    char bytes[32], allocs[32], ins[32];
    fmt_maybe(bytes, sizeof bytes, &r->bytes_per_op);
    fmt_maybe(allocs, sizeof allocs, &r->allocs_per_op);
    fmt_maybe(ins, sizeof ins, &r->instructions_per_op);
    if (r->allocs_per_op.available && !r->alloc_deterministic) {
        size_t len = strlen(allocs);
        snprintf(allocs + len, sizeof allocs - len, "~");
    }
    fprintf(f, "%-34s %10.1f %5.1f%% %10.1f %8s %9s %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %10s\n",
            r->inst->name, r->ns_per_op, 100.0 * r->ns_per_op_mdape, r->cpu_ns_per_op, bytes,
            allocs, r->p50, r->p99, r->p999, ins);
}

/* --- Google Benchmark JSON ------------------------------------------------------------------ */

static json_int_t cpu_mhz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    double mhz = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu MHz", 7) == 0) {
            const char *c = strchr(line, ':');
            if (c)
                mhz = strtod(c + 1, NULL);
            break;
        }
    }
    if (f)
        fclose(f);
    return (json_int_t)(mhz + 0.5);
}

/* One Google Benchmark aggregate row (run_type "aggregate") over the forks' real and CPU time. */
static json_t *gbench_aggregate(const struct h2b_micro_result *b, size_t family, const char *stat,
                                double real, double cpu)
{
    char name[H2B_MICRO_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s_%s", b->inst->name, stat);
    return json_pack("{s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:f, s:f, s:s}", "name",
                     name, "family_index", (json_int_t)family, "per_family_instance_index", 0,
                     "run_name", b->inst->name, "run_type", "aggregate", "repetitions",
                     (json_int_t)b->forks, "threads", 1, "aggregate_name", stat, "aggregate_unit",
                     "time", "iterations", (json_int_t)b->forks, "real_time", real, "cpu_time", cpu,
                     "time_unit", "ns");
}

/* mean, median and sample standard deviation of v[0..n) (v is reordered). */
static void stats(double *v, size_t n, double *mean, double *median, double *sd)
{
    double sum = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    *mean = n ? sum / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    *median = (n ? h2b_stats_median(v, n) : 0);
}

/* Google Benchmark emits mean, median and stddev rows after the repetitions of a benchmark when
 * there is more than one; compare.py and github-action-benchmark's googlecpp read them. */
static int gbench_aggregates(json_t *list, const struct h2b_micro_result *b, size_t family)
{
    if (b->forks < 2)
        return H2B_OK;
    double real[H2B_MICRO_MAX_FORKS], cpu[H2B_MICRO_MAX_FORKS];
    for (unsigned k = 0; k < b->forks; k++) {
        real[k] = fork_median(&b->fork[k]);
        cpu[k] = b->fork[k].cpu_ns_per_op;
    }
    double rm, rmed, rsd, cm, cmed, csd;
    stats(real, b->forks, &rm, &rmed, &rsd);
    stats(cpu, b->forks, &cm, &cmed, &csd);
    json_t *rows[3] = {gbench_aggregate(b, family, "mean", rm, cm),
                       gbench_aggregate(b, family, "median", rmed, cmed),
                       gbench_aggregate(b, family, "stddev", rsd, csd)};
    int rc = H2B_OK;
    for (int i = 0; i < 3; i++) {
        if (!rows[i] || json_array_append_new(list, rows[i]) != 0)
            rc = H2B_ERR_NOMEM;
    }
    return rc;
}

json_t *h2b__micro_gbench_json(const struct h2b_micro_result *r, size_t n, const char *exe,
                               bool aggregates, bool iterations)
{
    json_t *doc = json_object(), *ctx = json_object(), *list = json_array(), *load = json_array();
    if (!doc || !ctx || !list || !load) {
        json_decref(doc);
        json_decref(ctx);
        json_decref(list);
        json_decref(load);
        return NULL;
    }
    char date[64], host[256] = "";
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", &tm);
    /* RFC 3339 wants +HH:MM */
    size_t dl = strlen(date);
    if (dl >= 5 && dl + 2 < sizeof date) {
        memmove(date + dl - 1, date + dl - 2, 3);
        date[dl - 2] = ':';
    }
    gethostname(host, sizeof host - 1);
    double la[3];
    int nla = getloadavg(la, 3);
    for (int i = 0; i < nla; i++)
        json_array_append_new(load, json_real(la[i]));
    json_object_set_new(ctx, "date", json_string(date));
    json_object_set_new(ctx, "host_name", json_string(host));
    if (exe)
        json_object_set_new(ctx, "executable", json_string(exe));
    json_object_set_new(ctx, "num_cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(ctx, "mhz_per_cpu", json_integer(cpu_mhz()));
    json_object_set_new(ctx, "caches", json_array());
    json_object_set_new(ctx, "load_avg", load);
    json_object_set_new(ctx, "library_version", json_string("h2bench " H2B_MICRO_VERSION));
#ifdef NDEBUG
    json_object_set_new(ctx, "library_build_type", json_string("release"));
#else
    json_object_set_new(ctx, "library_build_type", json_string("debug"));
#endif
    json_object_set_new(ctx, "json_schema_version", json_integer(1));
    json_object_set_new(doc, "context", ctx);
    for (size_t i = 0; i < n; i++) {
        const struct h2b_micro_result *b = &r[i];
        if (b->error[0])
            continue; /* a failed benchmark has no times; its error is in the table and exit */
        for (unsigned k = 0; iterations && k < b->forks; k++) {
            const struct h2b_micro_fork *f = &b->fork[k];
            json_t *e = json_object();
            if (!e)
                break;
            json_object_set_new(e, "name", json_string(b->inst->name));
            json_object_set_new(e, "family_index", json_integer((json_int_t)i));
            json_object_set_new(e, "per_family_instance_index", json_integer(0));
            json_object_set_new(e, "run_name", json_string(b->inst->name));
            json_object_set_new(e, "run_type", json_string("iteration"));
            json_object_set_new(e, "repetitions", json_integer(b->forks));
            json_object_set_new(e, "repetition_index", json_integer(k));
            json_object_set_new(e, "threads", json_integer(1));
            json_object_set_new(e, "iterations", json_integer((json_int_t)f->ops));
            json_object_set_new(e, "real_time", json_real(fork_median(f)));
            json_object_set_new(e, "cpu_time", json_real(f->cpu_ns_per_op));
            json_object_set_new(e, "time_unit", json_string("ns"));
            if (f->bytes_per_op.available)
                json_object_set_new(e, MKEY(bytes_per_op), json_real(f->bytes_per_op.value));
            if (f->allocs_per_op.available) {
                json_object_set_new(e, MKEY(allocs_per_op), json_real(f->allocs_per_op.value));
                json_object_set_new(e, "allocs_per_iter", json_real(f->allocs_per_op.value));
            }
            if (f->hist) {
                json_object_set_new(e, MKEY(p50_ns),
                                    json_real((double)h2b_hist_percentile(f->hist, 50)));
                json_object_set_new(e, MKEY(p99_ns),
                                    json_real((double)h2b_hist_percentile(f->hist, 99)));
            }
            const struct h2b_micro_maybe *ins = b->instructions_per_op.available
                                                    ? &b->instructions_per_op
                                                    : &f->instructions_per_op;
            if (ins->available)
                json_object_set_new(e, MKEY(instructions_per_op), json_real(ins->value));
            json_array_append_new(list, e);
        }
        if (aggregates && gbench_aggregates(list, b, i) != H2B_OK) {
            json_decref(doc);
            json_decref(list);
            return NULL;
        }
    }
    json_object_set_new(doc, "benchmarks", list);
    return doc;
}
