/*
 * make_fixtures.c - writes the report's fixture results files (older.json, base.json,
 * head.json) deterministically: the component suite of issue 5 and a 4x3 matrix of h2ref
 * against nghttpd with 3 repeats, encoded latency histograms, one failed cell and one cell with
 * errors, in the shapes `h2bench run` and `h2bench micro` write (status/reason, latency_histogram,
 * fork_p99_ns, fork_ns_per_op). The numbers follow simple models (throughput rising with in-flight
 * requests until the server saturates, log-normal latency with a 1% slow mode), so the charts look
 * like real runs.
 *
 * Not part of the tests: run it only to change the fixtures, then review and commit them and
 * the golden REPORT.md:  build/tests/make_report_fixtures tests/data/report
 */
#include "core/hist.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_COUNTERS "server_instructions_per_request: no hardware counters here"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

struct bench {
    const char *name;
    double ns, bytes, allocs;
};

static const struct bench suite[] = {
    {"h2/stream-lifecycle", 2140, 0, 0},          {"h2/response-encoding/1", 312, 0, 0},
    {"h2/response-encoding/8", 2310, 0, 0},       {"h2/response-encoding/64", 18450, 0, 0},
    {"h2/response-encoding/256", 74100, 0, 0},    {"hpack/decode-browser-request", 1150, 412, 2},
    {"hpack/encode-typical-response", 478, 0, 0}, {"h2/frame-read-validate-discard", 688, 0, 0},
    {"h2/post-1k-lifecycle", 3420, 1024, 1},      {"h2/stream-1mib-response", 212000, 0, 0},
    {"h2ref/route-and-respond", 1610, 0, 0},
};

/* variant: 0 older, 1 base, 2 head */
static json_t *micro(int variant)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < sizeof(suite) / sizeof(suite[0]); i++) {
        const struct bench *b = &suite[i];
        double drift = variant == 0 ? 1.06 : variant == 1 ? 1.0 : 0.97;
        double ns = round(b->ns * drift * (1 + 0.02 * normal()) * 10) / 10;
        double allocs = b->allocs, bytes = b->bytes;
        if (variant == 2 && strcmp(b->name, "h2/post-1k-lifecycle") == 0) {
            allocs += 1; /* the regression the head introduces */
            bytes += 96;
        }
        json_t *forks = json_array(), *fork_ns = json_array();
        double best = INFINITY, worst = 0;
        for (int f = 0; f < 3; f++) {
            double p = round(ns * 2.4 * (1 + 0.06 * fabs(normal())));
            if (variant == 2 && i == 4)
                p = round(p * 1.25); /* encoding across 256 streams got slower in head */
            best = p < best ? p : best;
            worst = p > worst ? p : worst;
            json_array_append_new(forks, json_integer((json_int_t)p));
            json_array_append_new(fork_ns, json_real(round(ns * (1 + 0.01 * normal()) * 10) / 10));
        }
        json_t *e = json_pack(
            "{s:s, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:n, s:i, s:o}", "name", b->name, "ops",
            (json_int_t)(2e8 / ns), "ns_per_op", ns, "bytes_per_op", bytes, "allocs_per_op", allocs,
            "p50_ns", (json_int_t)round(ns * 0.96), "p99_ns",
            (json_int_t)fmin(round(best * 1.04), worst), "p999_ns", (json_int_t)round(ns * 6.5),
            "instructions_per_op", "forks", 3, "fork_p99_ns", forks);
        json_object_set_new(e, "fork_ns_per_op", fork_ns);
        if (strcmp(b->name, "h2ref/route-and-respond") == 0)
            json_object_set_new(
                e, "note",
                json_string("instructions_per_op: no hardware counters here; "
                            "run h2bench micro --callgrind for instruction counts"));
        json_array_append_new(arr, e);
    }
    return arr;
}

static double rps_model(const char *target, long inflight, int variant)
{
    double peak = strcmp(target, "h2ref") == 0 ? 182000 : 151000;
    double one = strcmp(target, "h2ref") == 0 ? 23500 : 21800;
    double x = one * pow((double)inflight, 0.62);
    double r = x * peak / (x + peak);
    if (variant == 2 && strcmp(target, "h2ref") == 0)
        r *= 1.07;
    if (variant == 0)
        r *= 0.96;
    return r;
}

static json_t *cell(const char *target, long c, long s, long eff, int rep, int variant)
{
    long inflight = c * eff;
    double rps = rps_model(target, inflight, variant) * (1 + 0.015 * normal());
    double duration = 2.0 + 0.01 * rep;
    double requests = round(rps * duration);
    double med_ns = (double)inflight / rps * 1e9;
    struct h2b_hist *h;
    h2b_hist_new_default(&h);
    const int samples = 20000;
    /* requests spread over the samples exactly: the first (requests % samples) weigh one more */
    uint64_t weight = (uint64_t)requests / samples, extra = (uint64_t)requests % samples;
    for (int i = 0; i < samples; i++) {
        double v = med_ns * exp(0.28 * normal());
        if (uniform() < 0.01)
            v *= 3.0 + 4.0 * uniform();
        h2b_hist_record_n(h, (uint64_t)v, weight + ((uint64_t)i < extra));
    }
    char *enc;
    h2b_hist_encode(h, &enc);
    json_t *lat = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I}", "min", (json_int_t)h2b_hist_percentile(h, 0), "p50",
        (json_int_t)h2b_hist_percentile(h, 50), "p90", (json_int_t)h2b_hist_percentile(h, 90),
        "p99", (json_int_t)h2b_hist_percentile(h, 99), "p999",
        (json_int_t)h2b_hist_percentile(h, 99.9), "max", (json_int_t)h2b_hist_percentile(h, 100));
    double total = (double)h->total;
    /* CPU per request falls as batching grows with in-flight requests, down to the server's cost */
    double per_req = (strcmp(target, "h2ref") == 0 ? 5.1e-6 : 6.4e-6) * (1 + 1.5 / sqrt(inflight));
    double server_cpu = fmin(total * per_req, duration);
    json_t *e = json_pack(
        "{s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:I, s:I, s:i, s:i, s:f, s:f, s:f, s:o, s:f, s:f, "
        "s:i, s:s}",
        "target", target, "client", "h2bench", "connections", (int)c, "streams_requested", (int)s,
        "streams_effective", (int)eff, "repeat", rep, "status", "ok", "requests", (json_int_t)total,
        "succeeded", (json_int_t)total, "failed", 0, "errors", 0, "duration_s", duration,
        "req_per_s", round(total / duration * 10) / 10, "bytes_per_s",
        round(total / duration * 1100), "latency_ns", lat, "client_cpu_s",
        round(duration * 0.9 * 1000) / 1000, "server_cpu_s", round(server_cpu * 1000) / 1000,
        "server_rss_kib", (int)(6000 + c * 70), "latency_histogram", enc);
    /* the machine-wide note a runner repeats on every cell ("; "-joined with cell notes) */
    json_object_set_new(e, "note", json_string(NO_COUNTERS));
    free(enc);
    h2b_hist_del(h);
    return e;
}

static json_t *matrix(int variant)
{
    static const long conns[] = {1, 10, 100, 1000}, streams[] = {1, 10, 100};
    static const char *const targets[] = {"h2ref", "nghttpd"};
    json_t *arr = json_array();
    for (int ci = 0; ci < 4; ci++) {
        for (int si = 0; si < 3; si++) {
            long c = conns[ci], s = streams[si];
            long eff = s < 100 ? s : 100;
            if (eff > 4096 / c)
                eff = 4096 / c;
            for (int rep = 0; rep < 3; rep++) {
                for (int t = 0; t < 2; t++) {
                    if (variant == 2 && t == 1 && c == 1000 && s == 100 && rep == 2) {
                        json_array_append_new(
                            arr,
                            json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:n, s:n, s:n, "
                                      "s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n}",
                                      "target", targets[t], "client", "h2bench", "connections",
                                      (int)c, "streams_requested", (int)s, "streams_effective",
                                      (int)eff, "repeat", rep, "status", "failed", "reason",
                                      "target stopped answering: no response within 10 s, "
                                      "readiness probe timed out",
                                      "requests", "succeeded", "failed", "errors", "duration_s",
                                      "req_per_s", "bytes_per_s", "latency_ns", "client_cpu_s",
                                      "server_cpu_s", "server_rss_kib"));
                        continue;
                    }
                    json_t *e = cell(targets[t], c, s, eff, rep, variant);
                    if (variant == 2 && t == 1 && c == 1000 && s == 10 && rep == 0) {
                        json_object_set_new(e, "failed", json_integer(37));
                        json_object_set_new(e, "errors", json_integer(37));
                        json_object_set_new(
                            e, "note",
                            json_string("failed: 37 streams reset by the server "
                                        "(RST_STREAM REFUSED_STREAM); " NO_COUNTERS));
                    }
                    json_array_append_new(arr, e);
                }
            }
        }
    }
    return arr;
}

static void write_one(const char *dir, const char *name, int variant, const char *created,
                      const char *commit)
{
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:s, s:[], s:s, "
        "s:s, s:b, s:{s:s, s:s}, s:[s]}, s:o, s:o}",
        "schema", "h2bench.result/1", "created", created, "tool", "name", "h2bench", "version",
        "0.1.0", "git_commit", commit, "scenario", "name", "matrix", "file",
        "scenarios/matrix.json", "sha256",
        "3f1c9a27d0b4e85f6a2c71d9e04b8a3c5f6e7d8c9b0a1f2e3d4c5b6a79880716", "env", "cpu_model",
        "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "cpus", 2, "kernel",
        "6.1.0-27-cloud-amd64", "compiler", "GNU 12.2.0", "build_type", "Release", "sanitizers",
        "nghttp2", "1.52.0", "openssl", "3.0.15", "perf_counters", 0, "pinning", "server", "0",
        "client", "1", "warnings",
        "perf_event_open: hardware counters not supported here; instructions_per_op is null",
        "micro", micro(variant), "matrix", matrix(variant));
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) != 0)
        fprintf(stderr, "cannot write %s\n", path);
    json_decref(doc);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    write_one(dir, "older.json", 0, "2026-11-23T08:02:11Z", "8d41c7e90b22");
    write_one(dir, "base.json", 1, "2026-11-27T08:01:47Z", "a17f03be5c96");
    write_one(dir, "head.json", 2, "2026-11-30T08:00:00Z", "5e1c0d2f4a9b");
    return 0;
}
