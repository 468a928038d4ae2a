/*
 * export.h - results in the formats of the trackers people already use, and in Google
 * Benchmark's JSON (h2b_export_gbench, for its compare.py).
 *
 *   BMF  (Bencher Metric Format, `bencher run --adapter json`):
 *        {"<benchmark>": {"<measure slug>": {"value": v, "lower_value": lo, "upper_value": hi}}}
 *   GAB  (github-action-benchmark `customSmallerIsBetter` / `customBiggerIsBetter`):
 *        [{"name": "<benchmark> - <metric>", "unit": "...", "value": v, "range": "± r",
 *          "extra": "..."}]  one array per direction: the action takes one direction per step.
 *
 * Input is any h2bench document: a results file (h2bench.result/1: its "micro" entries and
 * "matrix" cells) or an `h2bench load --json` document (one cell). Matrix cells with the same
 * key (target, client, connections, streams_requested) and different repeats become one series:
 * the median over the repeats, with the smallest and largest as BMF's bounds. A metric that is
 * null ("not measured here") is left out, never written as 0; so is a micro benchmark that
 * failed ("error") and a cell that did not end "ok" (its numbers, if any, are a partial run's).
 * Measures:
 *
 *   micro:  latency (ns/op, bounds: fastest and slowest fork), p99-latency (ns), bytes-per-op,
 *           allocs-per-op, instructions (per op); GAB bigger-is-better: ops/s.
 *   cells:  throughput (req/s; GAB bigger-is-better), p50-latency and p99-latency (ns), and
 *           the budgets the cell carries: allocs-, bytes-, reads-, writes- and
 *           instructions-per-request, rss-per-connection-kib.
 */
#ifndef H2B_CORE_EXPORT_H
#define H2B_CORE_EXPORT_H

#include <jansson.h>
#include <stdbool.h>

/* The BMF object for doc. Returns H2B_OK with *out (caller decrefs), H2B_ERR_INVAL (doc is
 * neither a results nor a load document, or an entry of it does not decode) or H2B_ERR_NOMEM;
 * *out untouched on failure. */
int h2b_export_bmf(const json_t *doc, json_t **out);

/* The GAB array for doc: the smaller-is-better metrics, or with bigger the bigger-is-better ones
 * (throughput). Codes as h2b_export_bmf. */
int h2b_export_gab(const json_t *doc, bool bigger, json_t **out);

/* Google Benchmark JSON for doc ({"context": {...}, "benchmarks": [rows]}), as Google
 * Benchmark writes repetitions, for its compare.py: per micro benchmark a family NAME (ns/op,
 * one iteration row per fork, or one row when the file has no per-fork values; B/op, allocs/op
 * and instructions/op as counters) and NAME/p99 (p99 ns per fork); per matrix cell (or load
 * result) a family NAME (ns per request = 1e9 / req/s, one row per repeat, items_per_second
 * the req/s) and NAME/p99 (p99 latency ns per repeat); with two or more rows, the family's
 * mean, median and stddev aggregate rows follow. cpu_time is real_time (results files keep no
 * per-fork CPU time); iterations is 1. Codes as h2b_export_bmf. */
int h2b_export_gbench(const json_t *doc, json_t **out);

#endif
