/*
 * test_run.c - the pure parts of h2bench::run: matrix expansion (effective streams, run order,
 * filters), h2load output parsing, client command lines and peer placeholder expansion.
 * Scenario validation is tested end to end from files (tests/integration/run_scenarios.sh).
 */
#include "run/client.h"
#include "core/error.h"
#include "run/expand.h"
#include "run/peers.h"
#include "run/scenario.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#ifndef H2B_TEST_DATA
#error "H2B_TEST_DATA must name tests/data/run"
#endif

static char *slurp(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", H2B_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static struct h2b_scenario *scenario(const char *json)
{
    json_error_t jerr;
    json_t *doc = json_loads(json, 0, &jerr);
    struct h2b_scenario *s = NULL;
    struct h2b_diag diag;
    CHECK(doc != NULL);
    if (!doc)
        return NULL;
    int rc = h2b_scenario_load(doc, NULL, NULL, &s, &diag);
    if (rc)
        h2b_diag_print(&diag, stderr);
    CHECK_EQ_INT(rc, H2B_OK);
    json_decref(doc);
    return s;
}

static const char *matrix_json =
    "{\"name\": \"m\", \"targets\": [{\"name\": \"a\"}, {\"name\": \"b\", \"type\": \"peer\", "
    "\"peer\": \"nghttpd\"}, {\"name\": \"c\", \"type\": \"peer\", \"peer\": \"h2o\"}],"
    "\"matrix\": {\"connections\": [1, 10, 100, 1000], \"streams\": [1, 10, 100], "
    "\"aggregate_cap\": 4096, \"requests\": 1000}}";

static void test_effective(void)
{
    CHECK_EQ_U64(h2b_expand_effective(100, 100, 4096, 100), 40);
    CHECK_EQ_U64(h2b_expand_effective(10, 100, 4096, 1000), 4);
    CHECK_EQ_U64(h2b_expand_effective(100, 100, 4096, 1000), 4);
    CHECK_EQ_U64(h2b_expand_effective(100, 100, 4096, 10), 100);
    CHECK_EQ_U64(h2b_expand_effective(100, 64, 4096, 10), 64);   /* the server's limit */
    CHECK_EQ_U64(h2b_expand_effective(100, 0, 4096, 1), 100);    /* 0: no limit advertised */
    CHECK_EQ_U64(h2b_expand_effective(10, 100, 4096, 60000), 1); /* never below 1 */
    CHECK_EQ_U64(h2b_expand_effective(10, 100, 100, 100), 1);
}

static void test_matrix(void)
{
    struct h2b_scenario *s = scenario(matrix_json);
    if (!s)
        return;
    uint32_t max[3] = {256, 100, 100};
    struct h2b_cell *cells = NULL;
    size_t n = 0;
    CHECK_EQ_INT(h2b_expand_matrix(s, max, 1, NULL, 0, &cells, &n), H2B_OK);
    CHECK_EQ_U64(n, 36);
    size_t per_target[3] = {0};
    for (size_t i = 0; i < n; i++) {
        const struct h2b_cell *c = &cells[i];
        per_target[c->target]++;
        if (c->connections == 100 && c->streams_requested == 100)
            CHECK_EQ_U64(c->streams_effective, 40);
        if (c->connections == 1000 && c->streams_requested >= 10)
            CHECK_EQ_U64(c->streams_effective, 4);
        if (c->connections == 1 && c->streams_requested == 100)
            CHECK_EQ_U64(c->streams_effective, 100);
    }
    CHECK_EQ_U64(per_target[0], 12);
    CHECK_EQ_U64(per_target[1], 12);
    CHECK_EQ_U64(per_target[2], 12);
    /* Alternate: a b c for the first point, c b a for the second. */
    CHECK_EQ_U64(cells[0].target, 0);
    CHECK_EQ_U64(cells[2].target, 2);
    CHECK_EQ_U64(cells[3].target, 2);
    CHECK_EQ_U64(cells[5].target, 0);
    CHECK_EQ_U64(cells[3].streams_requested, 10);
    free(cells);

    /* --repeat 2 doubles the cells; a filter keeps what it names. */
    CHECK_EQ_INT(h2b_expand_matrix(s, max, 2, NULL, 0, &cells, &n), H2B_OK);
    CHECK_EQ_U64(n, 72);
    CHECK_EQ_U64(cells[71].repeat, 1);
    free(cells);

    struct h2b_cell_filter *f = NULL;
    size_t nf = 0;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_expand_parse_filter(s, "1000x*,b:1x1", &f, &nf, &d), H2B_OK);
    CHECK_EQ_U64(nf, 2);
    CHECK_EQ_INT(h2b_expand_matrix(s, max, 1, f, nf, &cells, &n), H2B_OK);
    CHECK_EQ_U64(n, 3 * 3 + 1);
    free(cells);
    free(f);
    CHECK_EQ_INT(h2b_expand_parse_filter(s, "c", &f, &nf, &d), H2B_OK);
    CHECK_EQ_INT(h2b_expand_matrix(s, max, 1, f, nf, &cells, &n), H2B_OK);
    CHECK_EQ_U64(n, 12);
    free(cells);
    free(f);
    CHECK_EQ_INT(h2b_expand_parse_filter(s, "nope:1x1", &f, &nf, &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "nope") != NULL);
    CHECK_EQ_INT(h2b_expand_parse_filter(s, "10xz", &f, &nf, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_expand_parse_filter(s, "1x1,", &f, &nf, &d), H2B_ERR_PARSE);
    h2b_scenario_del(s);
}

static void test_sequential_and_sweeps(void)
{
    struct h2b_scenario *s = scenario(
        "{\"name\": \"s\", \"targets\": [{\"name\": \"a\"}, {\"name\": \"b\"}], \"matrix\": "
        "{\"connections\": [1], \"streams\": [1, 2], \"frame_size\": [16384, 65536], "
        "\"window_bits\": [16, 30], \"order\": \"sequential\", \"requests\": 10, "
        "\"min_requests\": 10}}");
    if (!s)
        return;
    uint32_t max[2] = {100, 100};
    struct h2b_cell *cells = NULL;
    size_t n = 0;
    CHECK_EQ_INT(h2b_expand_matrix(s, max, 1, NULL, 0, &cells, &n), H2B_OK);
    CHECK_EQ_U64(n, 16);
    for (size_t i = 0; i < 8; i++)
        CHECK_EQ_U64(cells[i].target, 0);
    CHECK_EQ_U64(cells[8].target, 1);
    CHECK_EQ_U64(cells[0].window_bits, 16);
    CHECK_EQ_U64(cells[1].window_bits, 30);
    CHECK_EQ_U64(cells[2].frame_size, 65536);
    CHECK_EQ_U64(cells[4].streams_requested, 2);
    free(cells);
    h2b_scenario_del(s);
}

static void test_h2load_text(void)
{
    struct h2b_cell_metrics m;
    const char *text = slurp("h2load-count.txt");
    CHECK(text != NULL);
    if (!text)
        return;
    CHECK_EQ_INT(h2b_client_parse_h2load(text, &m), H2B_OK);
    CHECK_EQ_U64(m.requests, 20000);
    CHECK_EQ_U64(m.succeeded, 20000);
    CHECK_EQ_U64(m.failed, 0);
    CHECK_EQ_U64(m.errors, 0);
    CHECK(m.req_per_s > 42731.7 && m.req_per_s < 42731.8);
    CHECK(m.duration_s > 0.46803 && m.duration_s < 0.46805);
    CHECK(m.have_latency && !m.have_percentiles);
    CHECK_EQ_U64(m.lat_min_ns, 11630000);
    CHECK_EQ_U64(m.lat_max_ns, 115280000);
    CHECK(m.bytes_per_s > 917000 / 0.46805 && m.bytes_per_s < 917000 / 0.46803);

    text = slurp("h2load-timed.txt");
    CHECK_EQ_INT(h2b_client_parse_h2load(text, &m), H2B_OK);
    CHECK_EQ_U64(m.requests, 305240);
    CHECK(m.duration_s > 2.99 && m.duration_s < 3.01);
    CHECK_EQ_U64(m.lat_min_ns, 76000);

    CHECK_EQ_INT(h2b_client_parse_h2load("progress: 10% done\n", &m), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_client_parse_h2load("finished in 3.00s, x req/s\nrequests: 1 total\n", &m),
                 H2B_ERR_PARSE);
    /* A run with every request errored parses, with no latency to report. */
    CHECK_EQ_INT(h2b_client_parse_h2load(
                     "finished in 334us, 0.00 req/s, 0B/s\nrequests: 5 total, 0 started, 0 "
                     "done, 0 succeeded, 5 failed, 5 errored, 0 timeout\n"
                     "time for request:        0us         0us         0us         0us     0.00%\n",
                     &m),
                 H2B_OK);
    CHECK_EQ_U64(m.failed, 5);
    CHECK_EQ_U64(m.errors, 5);
    CHECK(!m.have_latency);

    char path[1024];
    snprintf(path, sizeof(path), "%s/h2load-log.tsv", H2B_TEST_DATA);
    CHECK_EQ_INT(h2b_client_read_h2load_log(path, &m), H2B_OK);
    CHECK(m.have_percentiles);
    CHECK_EQ_U64(m.lat_max_ns, 398000);
    CHECK(m.lat_min_ns >= 30000 && m.lat_min_ns <= 31000);
    CHECK(m.lat_p50_ns >= 34000 && m.lat_p50_ns <= 34300); /* 31 32 [34] 61 398 us */
    CHECK(m.histogram != NULL && strncmp(m.histogram, "h2bh1:", 6) == 0);
    h2b_client_metrics_free(&m);
}

static void test_client_argv(void)
{
    struct h2b_scenario *s = scenario(
        "{\"name\": \"s\", \"targets\": [{}], \"client\": {\"type\": \"h2load\", \"args\": "
        "[\"-H\", \"x: y\"]}, \"matrix\": {\"connections\": [10], \"streams\": [4], "
        "\"duration_s\": 2, \"warmup_s\": 0.5}}");
    if (!s)
        return;
    struct h2b_cell cell = {
        .connections = 10, .streams_requested = 4, .streams_effective = 4, .frame_size = 65536};
    struct h2b_client_call call = {.program = "h2load", .url = "http://127.0.0.1:1/hello"};
    char **argv = NULL;
    CHECK_EQ_INT(h2b_client_argv(s, &cell, &call, &argv), H2B_OK);
    char joined[512] = "";
    size_t used = 0;
    for (char **a = argv; a && *a; a++)
        used += (size_t)snprintf(joined + used, sizeof(joined) - used, "%s ", *a);
    CHECK_STR(joined, "h2load -c 10 -m 4 -t 1 -D 2000ms --warm-up-time=500ms -f 65536 -H x: y "
                      "http://127.0.0.1:1/hello ");
    h2b_client_argv_free(argv);
    h2b_scenario_del(s);
}

static void joined_argv(const struct h2b_scenario *s, const struct h2b_cell *cell, char *out,
                        size_t size)
{
    struct h2b_client_call call = {.program = "h2bench", .url = "http://127.0.0.1:1/hello"};
    char **argv = NULL;
    size_t used = 0;
    out[0] = '\0';
    CHECK_EQ_INT(h2b_client_argv(s, cell, &call, &argv), H2B_OK);
    for (char **a = argv; a && *a && used < size; a++)
        used += (size_t)snprintf(out + used, size - used, "%s ", *a);
    h2b_client_argv_free(argv);
}

/* matrix.slo per cell (the first matching rule), stages and find_max reach h2bench load as its
 * own flags; a cell no rule matches gets none. */
static void test_client_argv_slo(void)
{
    struct h2b_scenario *s = scenario(
        "{\"name\": \"s\", \"targets\": [{\"name\": \"a\"}, {\"name\": \"b\", \"type\": "
        "\"url\", \"url\": \"http://127.0.0.1:1\"}], \"matrix\": {\"connections\": [1, 2], "
        "\"streams\": [1], \"rate\": 50, \"stages\": \"1s:100\", \"slo_window\": 1, "
        "\"slo\": {\"a:1x1\": \"p99<5ms\", \"2x*\": \"errors<1%\"}}}");
    if (!s)
        return;
    char j[512];
    struct h2b_cell c = {
        .target = 0, .connections = 1, .streams_requested = 1, .streams_effective = 1};
    joined_argv(s, &c, j, sizeof(j));
    CHECK_STR(j, "h2bench load -c 1 -m 1 -t 1 --slo=p99<5ms --slo-window=1000ms --stages=1s:100 "
                 "--total-rps 50 http://127.0.0.1:1/hello ");
    c.target = 1;
    joined_argv(s, &c, j, sizeof(j));
    CHECK_STR(j, "h2bench load -c 1 -m 1 -t 1 --stages=1s:100 --total-rps 50 "
                 "http://127.0.0.1:1/hello ");
    c.connections = 2;
    joined_argv(s, &c, j, sizeof(j));
    CHECK_STR(j, "h2bench load -c 2 -m 1 -t 1 --slo=errors<1% --slo-window=1000ms "
                 "--stages=1s:100 --total-rps 50 http://127.0.0.1:1/hello ");
    CHECK(h2b_expand_cell_slo(s, &c) != NULL);
    h2b_scenario_del(s);
    s = scenario("{\"name\": \"s\", \"targets\": [{}], \"matrix\": {\"connections\": [4], "
                 "\"streams\": [1], \"slo\": \"p50<75ms\", \"find_max\": {\"step_s\": 2, "
                 "\"start\": 50, \"retries\": 0}}}");
    if (!s)
        return;
    c = (struct h2b_cell){.connections = 4, .streams_requested = 1, .streams_effective = 1};
    joined_argv(s, &c, j, sizeof(j));
    CHECK_STR(j, "h2bench load -c 4 -m 1 -t 1 --find-max --slo=p50<75ms --find-max-step=2000ms "
                 "--find-max-start=50 --find-max-retries=0 http://127.0.0.1:1/hello ");
    h2b_scenario_del(s);
}

/* A shaped cell's boundaries inside its measurement: stages from the cell's start, a
 * staircase's steps from the run's start (a warm-up shifts them), neither the measurement's
 * start nor its end; and its client gets --interval-json before the URL. */
static void test_shape_bounds(void)
{
    struct h2b_scenario *s =
        scenario("{\"name\": \"s\", \"targets\": [{}], \"matrix\": {\"connections\": [1], "
                 "\"streams\": [1], \"rate\": 10, \"stages\": \"2s:100,1s:100,3s:0\"}}");
    if (!s)
        return;
    struct h2b_model_nums b = {0};
    CHECK_EQ_INT(h2b_client_shape_bounds(&s->matrix, 0, &b), H2B_OK);
    CHECK_EQ_U64(b.n, 2);
    CHECK(b.n == 2 && b.v[0] == 2 && b.v[1] == 3);
    free(b.v);
    struct h2b_cell c = {.connections = 1, .streams_requested = 1, .streams_effective = 1};
    struct h2b_client_call call = {.program = "h2bench",
                                   .url = "http://127.0.0.1:1/hello",
                                   .json_out = "/d/cell-0.json",
                                   .interval_json = "/d/cell-0.intervals.ndjson"};
    char **argv = NULL, j[512] = "";
    size_t used = 0;
    CHECK_EQ_INT(h2b_client_argv(s, &c, &call, &argv), H2B_OK);
    for (char **a = argv; a && *a; a++)
        used += (size_t)snprintf(j + used, sizeof(j) - used, "%s ", *a);
    h2b_client_argv_free(argv);
    CHECK_STR(j, "h2bench load -c 1 -m 1 -t 1 --stages=2s:100,1s:100,3s:0 --total-rps 10 --json "
                 "/d/cell-0.json --interval-json=/d/cell-0.intervals.ndjson "
                 "http://127.0.0.1:1/hello ");
    h2b_scenario_del(s);
    s = scenario("{\"name\": \"s\", \"targets\": [{}], \"matrix\": {\"connections\": [1], "
                 "\"streams\": [1], \"step\": \"100+50/1s\", \"duration_s\": 2.5, "
                 "\"warmup_s\": 0.5}}");
    if (!s)
        return;
    b = (struct h2b_model_nums){0};
    CHECK_EQ_INT(h2b_client_shape_bounds(&s->matrix, 2.5, &b), H2B_OK);
    CHECK(b.n == 2 && b.v[0] == 0.5 && b.v[1] == 1.5); /* 2.5 is the measurement's end */
    free(b.v);
    /* a timed cell extended (run_cell) ran longer than matrix.duration_s: more steps inside */
    b = (struct h2b_model_nums){0};
    CHECK_EQ_INT(h2b_client_shape_bounds(&s->matrix, 4, &b), H2B_OK);
    CHECK(b.n == 4 && b.v[3] == 3.5);
    free(b.v);
    h2b_scenario_del(s);
}

/* The shape h2bench load --json writes (harness/load/report.c). */
static void test_load_json(void)
{
    json_error_t jerr;
    json_t *o = json_loads(
        "{\"schema\": \"h2bench.load/1\", \"connections\": 2, \"streams_requested\": 8, "
        "\"streams_effective\": 4, \"requests\": 1000, \"succeeded\": 990, \"failed\": 10, "
        "\"errors\": 3, \"duration_s\": 0.5, \"req_per_s\": 2000.0, \"bytes_per_s\": 1e5, "
        "\"latency_ns\": {\"min\": 10, \"p50\": 20, \"p90\": 30, \"p99\": 40, \"p999\": 50, "
        "\"p9999\": 55, \"max\": 60, \"mean\": 21.5, \"count\": 1000}, \"client_cpu_s\": 0.1, "
        "\"histograms\": {\"latency\": \"h2bh1:xyz\"}}",
        0, &jerr);
    struct h2b_cell_metrics m;
    CHECK_EQ_INT(h2b_client_from_json(o, &m), H2B_OK);
    CHECK_EQ_U64(m.requests, 1000);
    CHECK_EQ_U64(m.succeeded, 990);
    CHECK_EQ_U64(m.failed, 10);
    CHECK_EQ_U64(m.errors, 3);
    CHECK_EQ_U64(m.client_streams, 4);
    CHECK(m.have_percentiles);
    CHECK_EQ_U64(m.lat_p99_ns, 40);
    CHECK_EQ_U64(m.lat_max_ns, 60);
    CHECK_STR(m.histogram, "h2bh1:xyz");
    h2b_client_metrics_free(&m);
    json_object_del(o, "succeeded");
    CHECK_EQ_INT(h2b_client_from_json(o, &m), H2B_ERR_PARSE);
    json_decref(o);
}

static void test_perf_stat(void)
{
    uint64_t n = 0;
    CHECK_EQ_INT(h2b_client_parse_perf_stat("# started on Mon\n\n123456789,,instructions:u,2000000,"
                                            "100.00,,\n",
                                            &n),
                 H2B_OK);
    CHECK_EQ_U64(n, 123456789);
    CHECK_EQ_INT(h2b_client_parse_perf_stat("<not supported>,,instructions:u,0,100.00,,\n", &n),
                 H2B_ERR_UNSUPPORTED);
    CHECK_EQ_INT(h2b_client_parse_perf_stat("# nothing\n", &n), H2B_ERR_PARSE);
}

static void test_peer_expand(void)
{
    struct h2b_peer_vars vars = {.host = "127.0.0.1",
                                 .port = 8080,
                                 .threads = 1,
                                 .max_streams = 100,
                                 .docroot = "/d",
                                 .dir = "/r"};
    char *out = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_peers_expand("listen {host}:{port}; events { x; } {max_streams} {dir}/a",
                                  &vars, "/r/c.conf", &out, &d),
                 H2B_OK);
    CHECK_STR(out, "listen 127.0.0.1:8080; events { x; } 100 /r/a");
    free(out);
    CHECK_EQ_INT(h2b_peers_expand("-c {config}", &vars, "/r/c.conf", &out, &d), H2B_OK);
    CHECK_STR(out, "-c /r/c.conf");
    free(out);
    CHECK_EQ_INT(h2b_peers_expand("{prot}", &vars, NULL, &out, &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "{prot}") != NULL);
}

int main(void)
{
    test_effective();
    test_matrix();
    test_sequential_and_sweeps();
    test_h2load_text();
    test_client_argv();
    test_client_argv_slo();
    test_shape_bounds();
    test_load_json();
    test_perf_stat();
    test_peer_expand();
    return test_report();
}
