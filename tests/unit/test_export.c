/*
 * test_export.c - core/export.h: the exact JSON of BMF, github-action-benchmark (both
 * directions) and Google Benchmark for a results document with micro entries and matrix cells
 * (forks as bounds, repeats folded into their median, nulls left out, a failed benchmark or
 * cell not tracked), a load document, the empty document, and the error codes.
 */
#include "core/export.h"
#include "core/error.h"
#include "test.h"

#include <math.h>
#include <string.h>

#define DOC_HEAD                                                                                   \
    "{\"schema\": \"h2bench.result/1\", \"created\": \"2026-12-01T10:00:00Z\", \"env\": {},"

/* Two micro benchmarks and a failed one; a cell with three ok repeats and a failed one (whose
 * partial numbers must not count), and a cell that failed before measuring anything. */
static const char results[] =
    DOC_HEAD " \"micro\": ["
             "  {\"name\": \"h2/x\", \"ops\": 1000, \"ns_per_op\": 100.0, \"bytes_per_op\": 16.0,"
             "   \"allocs_per_op\": 1.0, \"p50_ns\": 90, \"p99_ns\": 200, \"p999_ns\": 300,"
             "   \"instructions_per_op\": null, \"forks\": 3, \"fork_p99_ns\": [190, 200, 210],"
             "   \"fork_ns_per_op\": [95.0, 100.0, 110.0]},"
             "  {\"name\": \"h2/broken\", \"ops\": 0, \"ns_per_op\": null, \"bytes_per_op\": null,"
             "   \"allocs_per_op\": null, \"p50_ns\": null, \"p99_ns\": null, \"p999_ns\": null,"
             "   \"instructions_per_op\": null, \"error\": \"exited with status 1\"},"
             "  {\"name\": \"h2/single\", \"ops\": 10, \"ns_per_op\": 50.0, \"bytes_per_op\": 0.0,"
             "   \"allocs_per_op\": 0.0, \"p50_ns\": 40, \"p99_ns\": 80, \"p999_ns\": 90,"
             "   \"instructions_per_op\": 1234.5, \"forks\": 1, \"fork_p99_ns\": [80],"
             "   \"fork_ns_per_op\": [50.0]}],"
             " \"matrix\": ["
#define CELL(rep, rps, p50, p99)                                                                   \
    "{\"target\": \"h2ref\", \"client\": \"h2bench\", \"connections\": 1, \"streams_requested\": " \
    "1,"                                                                                           \
    " \"streams_effective\": 1, \"repeat\": " rep ", \"status\": \"ok\", \"req_per_s\": " rps      \
    ", \"latency_ns\": {\"p50\": " p50 ", \"p99\": " p99 "},"                                      \
    " \"server_instructions_per_request\": 5000.0, \"budgets\": {\"allocs_per_request\": 0.0,"     \
    " \"bytes_per_request\": 5.0, \"reads_per_request\": 1.0, \"writes_per_request\": 0.5,"        \
    " \"writes_per_read\": 0.5, \"instructions_per_request\": null,"                               \
    " \"rss_per_connection_kib\": 24.0}}"
    CELL("0", "1000.0", "10", "100") "," CELL("1", "3000.0", "30", "300") "," CELL(
        "2", "2000.0", "20",
        "200") ","
               "  {\"target\": \"h2ref\", \"client\": \"h2bench\", \"connections\": 1,"
               "   \"streams_requested\": 1, \"streams_effective\": 1, \"repeat\": 3, \"status\": "
               "\"failed\","
               "   \"reason\": \"target exited\", \"req_per_s\": 10.0, \"latency_ns\": {\"p50\": "
               "1, \"p99\": 2}},"
               "  {\"target\": \"nghttpd\", \"client\": \"h2bench\", \"connections\": 1,"
               "   \"streams_requested\": 1, \"streams_effective\": 1, \"repeat\": 0, \"status\": "
               "\"failed\","
               "   \"reason\": \"did not start\", \"req_per_s\": null}]}";
#undef CELL

static const char bmf_expected[] =
    "{\"h2/x\": {"
    "  \"latency\": {\"value\": 100.0, \"lower_value\": 95.0, \"upper_value\": 110.0},"
    "  \"p99-latency\": {\"value\": 200.0, \"lower_value\": 190.0, \"upper_value\": 210.0},"
    "  \"bytes-per-op\": {\"value\": 16.0}, \"allocs-per-op\": {\"value\": 1.0},"
    "  \"throughput\": {\"value\": 10000000.0}},"
    " \"h2/single\": {"
    "  \"latency\": {\"value\": 50.0}, \"p99-latency\": {\"value\": 80.0},"
    "  \"bytes-per-op\": {\"value\": 0.0}, \"allocs-per-op\": {\"value\": 0.0},"
    "  \"instructions\": {\"value\": 1234.5}, \"throughput\": {\"value\": 20000000.0}},"
    " \"h2ref h2bench c=1 s=1\": {"
    "  \"throughput\": {\"value\": 2000.0, \"lower_value\": 1000.0, \"upper_value\": 3000.0},"
    "  \"p50-latency\": {\"value\": 20.0, \"lower_value\": 10.0, \"upper_value\": 30.0},"
    "  \"p99-latency\": {\"value\": 200.0, \"lower_value\": 100.0, \"upper_value\": 300.0},"
    "  \"allocs-per-request\": {\"value\": 0.0, \"lower_value\": 0.0, \"upper_value\": 0.0},"
    "  \"bytes-per-request\": {\"value\": 5.0, \"lower_value\": 5.0, \"upper_value\": 5.0},"
    "  \"reads-per-request\": {\"value\": 1.0, \"lower_value\": 1.0, \"upper_value\": 1.0},"
    "  \"writes-per-request\": {\"value\": 0.5, \"lower_value\": 0.5, \"upper_value\": 0.5},"
    "  \"instructions-per-request\": {\"value\": 5000.0, \"lower_value\": 5000.0,"
    "                                \"upper_value\": 5000.0},"
    "  \"rss-per-connection-kib\": {\"value\": 24.0, \"lower_value\": 24.0,"
    "                              \"upper_value\": 24.0}}}";

#define CELL_EXTRA "\"extra\": \"median of 3 repeats\""
static const char gab_expected[] =
    "["
    "{\"name\": \"h2/x - ns/op\", \"unit\": \"ns/op\", \"value\": 100.0, \"range\": \"± 7.5\","
    " \"extra\": \"forks: 3\"},"
    "{\"name\": \"h2/x - p99\", \"unit\": \"ns\", \"value\": 200.0, \"range\": \"± 10\","
    " \"extra\": \"forks: 3\"},"
    "{\"name\": \"h2/x - B/op\", \"unit\": \"B/op\", \"value\": 16.0, \"extra\": \"forks: 3\"},"
    "{\"name\": \"h2/x - allocs/op\", \"unit\": \"allocs/op\", \"value\": 1.0,"
    " \"extra\": \"forks: 3\"},"
    "{\"name\": \"h2/single - ns/op\", \"unit\": \"ns/op\", \"value\": 50.0,"
    " \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2/single - p99\", \"unit\": \"ns\", \"value\": 80.0, \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2/single - B/op\", \"unit\": \"B/op\", \"value\": 0.0, \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2/single - allocs/op\", \"unit\": \"allocs/op\", \"value\": 0.0,"
    " \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2/single - instructions/op\", \"unit\": \"instructions/op\", \"value\": 1234.5,"
    " \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - p50\", \"unit\": \"ns\", \"value\": 20.0,"
    " \"range\": \"± 10\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - p99\", \"unit\": \"ns\", \"value\": 200.0,"
    " \"range\": \"± 100\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - allocs/request\", \"unit\": \"allocs/request\","
    " \"value\": 0.0, \"range\": \"± 0\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - B/request\", \"unit\": \"B/request\", \"value\": 5.0,"
    " \"range\": \"± 0\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - reads/request\", \"unit\": \"reads/request\","
    " \"value\": 1.0, \"range\": \"± 0\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - writes/request\", \"unit\": \"writes/request\","
    " \"value\": 0.5, \"range\": \"± 0\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - instructions/request\","
    " \"unit\": \"instructions/request\", \"value\": 5000.0, \"range\": \"± 0\", " CELL_EXTRA "},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - RSS KiB/connection\", \"unit\": \"KiB\","
    " \"value\": 24.0, \"range\": \"± 0\", " CELL_EXTRA "}]";

static const char gab_bigger_expected[] =
    "["
    "{\"name\": \"h2/x - ops/s\", \"unit\": \"ops/s\", \"value\": 10000000.0,"
    " \"extra\": \"forks: 3\"},"
    "{\"name\": \"h2/single - ops/s\", \"unit\": \"ops/s\", \"value\": 20000000.0,"
    " \"extra\": \"forks: 1\"},"
    "{\"name\": \"h2ref h2bench c=1 s=1 - req/s\", \"unit\": \"req/s\", \"value\": 2000.0,"
    " \"range\": \"± 1000\", " CELL_EXTRA "}]";
#undef CELL_EXTRA

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fprintf(stderr, "test JSON does not parse: line %d: %s\n", err.line, err.text);
    return j;
}

/* got equals the JSON text want (key order aside); prints both when not. */
static void check_json(const json_t *got, const char *want_text)
{
    json_t *want = parse(want_text);
    CHECK(want != NULL);
    bool same = got && want && json_equal(got, want);
    CHECK(same);
    if (!same) {
        char *g = got ? json_dumps(got, JSON_INDENT(1)) : NULL;
        fprintf(stderr, "got:\n%s\n", g ? g : "(null)");
        free(g);
    }
    json_decref(want);
}

static void test_bmf_gab(void)
{
    json_t *doc = parse(results), *out = NULL;
    CHECK(doc != NULL);
    CHECK_EQ_INT(h2b_export_bmf(doc, &out), H2B_OK);
    check_json(out, bmf_expected);
    /* a cell that failed before measuring anything is no benchmark at all */
    CHECK(json_object_get(out, "nghttpd h2bench c=1 s=1") == NULL);
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gab(doc, false, &out), H2B_OK);
    check_json(out, gab_expected);
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gab(doc, true, &out), H2B_OK);
    check_json(out, gab_bigger_expected);
    json_decref(out);
    json_decref(doc);
}

/* The row of array rows with this name (and aggregate_name, or an iteration row's repetition
 * index when agg is NULL). */
static const json_t *gb_find(const json_t *rows, const char *name, const char *agg, int rep)
{
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) != 0)
            continue;
        if (agg ? json_is_string(json_object_get(r, "aggregate_name"))
                : json_integer_value(json_object_get(r, "repetition_index")) == rep)
            return r;
    }
    fprintf(stderr, "no gbench row %s %s %d\n", name, agg ? agg : "iteration", rep);
    return NULL;
}

static double num(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static void test_gbench(void)
{
    json_t *doc = parse(results), *out = NULL;
    CHECK(doc != NULL);
    CHECK_EQ_INT(h2b_export_gbench(doc, &out), H2B_OK);
    const json_t *ctx = json_object_get(out, "context"), *rows = json_object_get(out, "benchmarks");
    CHECK_STR(json_string_value(json_object_get(ctx, "date")), "2026-12-01T10:00:00Z");
    CHECK_STR(json_string_value(json_object_get(ctx, "executable")), "h2bench export");
    CHECK_STR(json_string_value(json_object_get(ctx, "library_build_type")), "release");
    /* h2/x: 3 forks + 3 aggregates, h2/x/p99 the same; h2/single and its p99 one row each;
     * the cell 3 repeats + 3 aggregates (the failed repeat is not a sample), its p99 the same */
    CHECK_EQ_U64(json_array_size(rows), 6 + 6 + 1 + 1 + 6 + 6);

    const json_t *r = gb_find(rows, "h2/x", NULL, 2);
    CHECK(r != NULL);
    CHECK(near(num(r, "real_time"), 110) && near(num(r, "cpu_time"), 110));
    CHECK_STR(json_string_value(json_object_get(r, "run_type")), "iteration");
    CHECK_STR(json_string_value(json_object_get(r, "run_name")), "h2/x");
    CHECK_STR(json_string_value(json_object_get(r, "time_unit")), "ns");
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "family_index")), 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "repetitions")), 3);
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "iterations")), 1);
    CHECK(near(num(r, "bytes_per_op"), 16) && near(num(r, "allocs_per_op"), 1));
    CHECK(json_object_get(r, "instructions_per_op") == NULL); /* null: left out */
    r = gb_find(rows, "h2/x_mean", "mean", 0);
    CHECK(r && near(num(r, "real_time"), 305.0 / 3));
    CHECK_STR(json_string_value(json_object_get(r, "run_name")), "h2/x");
    CHECK_STR(json_string_value(json_object_get(r, "aggregate_unit")), "time");
    r = gb_find(rows, "h2/x_median", "median", 0);
    CHECK(r && near(num(r, "real_time"), 100));
    r = gb_find(rows, "h2/x_stddev", "stddev", 0);
    CHECK(r && near(num(r, "real_time"), sqrt(350.0 / 6))); /* sample sd of 95, 100, 110 */
    r = gb_find(rows, "h2/x/p99", NULL, 0);
    CHECK(r && near(num(r, "real_time"), 190));
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "family_index")), 1);
    CHECK(r && json_object_get(r, "bytes_per_op") == NULL);

    r = gb_find(rows, "h2/single", NULL, 0);
    CHECK(r && near(num(r, "real_time"), 50) && near(num(r, "instructions_per_op"), 1234.5));
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "family_index")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "repetitions")), 1);

    /* a cell: ns per request = 1e9 / req/s, items_per_second the req/s */
    const char *cell = "h2ref h2bench c=1 s=1";
    r = gb_find(rows, cell, NULL, 1);
    CHECK(r && near(num(r, "real_time"), 1e9 / 3000) && near(num(r, "items_per_second"), 3000));
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "family_index")), 4);
    r = gb_find(rows, "h2ref h2bench c=1 s=1_median", "median", 0);
    CHECK(r && near(num(r, "real_time"), 1e9 / 2000) && near(num(r, "items_per_second"), 2000));
    r = gb_find(rows, "h2ref h2bench c=1 s=1_mean", "mean", 0);
    CHECK(r && near(num(r, "items_per_second"), 2000));
    r = gb_find(rows, "h2ref h2bench c=1 s=1/p99", NULL, 2);
    CHECK(r && near(num(r, "real_time"), 200));
    CHECK_EQ_INT(json_integer_value(json_object_get(r, "family_index")), 5);
    json_decref(out);
    json_decref(doc);
}

/* An h2bench load --json document is one cell; a document with no entries exports nothing. */
static void test_load_and_empty(void)
{
    json_t *doc = parse("{\"schema\": \"h2bench.load/1\", \"target\": \"http://127.0.0.1:1/\","
                        " \"client\": \"h2bench\", \"connections\": 2, \"streams_requested\": 4,"
                        " \"streams_effective\": 4, \"repeat\": 0, \"req_per_s\": 500.0,"
                        " \"latency_ns\": {\"p50\": 7, \"p99\": 9}}"),
           *out = NULL;
    CHECK(doc != NULL);
    CHECK_EQ_INT(h2b_export_bmf(doc, &out), H2B_OK);
    check_json(out, "{\"http://127.0.0.1:1/ h2bench c=2 s=4\": {"
                    "\"throughput\": {\"value\": 500.0}, \"p50-latency\": {\"value\": 7.0},"
                    " \"p99-latency\": {\"value\": 9.0}}}");
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gab(doc, true, &out), H2B_OK);
    check_json(out, "[{\"name\": \"http://127.0.0.1:1/ h2bench c=2 s=4 - req/s\","
                    " \"unit\": \"req/s\", \"value\": 500.0}]");
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gbench(doc, &out), H2B_OK);
    CHECK_EQ_U64(json_array_size(json_object_get(out, "benchmarks")), 2);
    json_decref(out);
    json_decref(doc);

    doc = parse(DOC_HEAD " \"micro\": [], \"matrix\": []}");
    out = NULL;
    CHECK_EQ_INT(h2b_export_bmf(doc, &out), H2B_OK);
    check_json(out, "{}");
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gab(doc, false, &out), H2B_OK);
    check_json(out, "[]");
    json_decref(out);
    out = NULL;
    CHECK_EQ_INT(h2b_export_gbench(doc, &out), H2B_OK);
    CHECK_EQ_U64(json_array_size(json_object_get(out, "benchmarks")), 0);
    json_decref(out);
    json_decref(doc);
}

/* Neither a results nor a load document, or one whose entries do not decode: H2B_ERR_INVAL,
 * *out untouched. */
static void check_inval(const char *text)
{
    json_t *doc = parse(text), *sentinel = json_null(), *out = sentinel;
    CHECK(doc != NULL);
    CHECK_EQ_INT(h2b_export_bmf(doc, &out), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_export_gab(doc, false, &out), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_export_gab(doc, true, &out), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_export_gbench(doc, &out), H2B_ERR_INVAL);
    CHECK(out == sentinel);
    json_decref(doc);
}

static void test_errors(void)
{
    check_inval("[1, 2]");
    check_inval("{\"schema\": \"h2bench.ceilings/1\", \"cells\": {}}");
    check_inval("{\"schema\": \"h2bench.load/1\", \"connections\": \"two\"}");
    check_inval(DOC_HEAD " \"micro\": [{\"name\": 5}], \"matrix\": []}");
    check_inval(DOC_HEAD " \"micro\": [], \"matrix\": [{\"target\": \"h2ref\","
                         " \"connections\": -1}]}");
}

int main(void)
{
    test_bmf_gab();
    test_gbench();
    test_load_and_empty();
    test_errors();
    return test_report();
}
