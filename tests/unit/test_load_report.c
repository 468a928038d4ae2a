/*
 * test_load_report.c - the results as h2load-compatible text (exact lines for known numbers) and
 * as a JSON matrix cell that passes the results-file schema of DESIGN.md.
 */
#include "core/error.h"
#include "load/load.h"
#include "core/results.h"
#include "test.h"

static void fill(struct h2b_load_config *cfg, struct h2b_load_result *res)
{
    h2b_load_config_init(cfg);
    char *argv[] = {"load", "-n", "2000", "-c", "4", "-m", "10", "http://127.0.0.1:8080/x", NULL};
    struct h2b_diag err = {0};
    CHECK_EQ_INT(h2b_load_config_parse(cfg, 8, argv, &err), H2B_OK);
    memset(res, 0, sizeof(*res));
    CHECK_EQ_INT(h2b_load_stats_init(&res->s), H2B_OK);
    struct h2b_load_stats *s = &res->s;
    s->started = 2000;
    s->done = 1990;
    s->succeeded = 1980;
    s->failed = 20;
    s->errored = 10;
    s->timeouts = 4;
    s->resets = 6;
    s->status[200] = 1980;
    s->status[503] = 10;
    s->bytes_total = 330970;
    s->bytes_headers = 90730;
    s->bytes_headers_decomp = 1530000;
    s->bytes_data = 60000;
    s->conns_ok = 4;
    s->server_max_streams = 100;
    s->streams_effective = 10;
    for (int i = 0; i < 2000; i++)
        h2b_hist_record(s->latency, 1000000); /* 1 ms */
    for (int i = 0; i < 4; i++)
        h2b_hist_record(s->connect, 99000);  /* 99 us */
    h2b_hist_record(s->ttfb, 2500000000ULL); /* 2.5 s */
    res->wall_ns = 1500000000ULL;            /* 1.5 s */
    res->measure_ns = 1500000000ULL;
    static double rps[4] = {300, 300, 500, 500};
    res->conn_rps = rps;
    res->nconn_rps = 4;
    snprintf(res->alpn, sizeof(res->alpn), "h2c");
}

static void text(void)
{
    struct h2b_load_config cfg;
    struct h2b_load_result res;
    fill(&cfg, &res);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    h2b_load_report_text(f, &cfg, &res);
    fclose(f);
    CHECK(strstr(buf, "\nfinished in 1.50s, 1326.67 req/s, 215.48KB/s\n") != NULL);
    CHECK(strstr(buf, "\nrequests: 2000 total, 2000 started, 2000 done, 1980 succeeded, 20 failed, "
                      "10 errored, 4 timeout\n") != NULL);
    CHECK(strstr(buf, "\nstatus codes: 1980 2xx, 0 3xx, 0 4xx, 10 5xx\n") != NULL);
    CHECK(strstr(buf, "\ntraffic: 323.21KB (330970) total, 88.60KB (90730) headers (space savings "
                      "94.07%), 58.59KB (60000) data\n") != NULL);
    CHECK(strstr(buf, "\n                     min         max         mean         sd        +/- "
                      "sd\n") != NULL);
    /* every request took 1 ms (the histogram keeps it within its 0.78% bin) */
    CHECK(
        strstr(buf,
               "\ntime for request:     1.00ms      1.00ms      1.00ms         0us   100.00%\n") !=
        NULL);
    CHECK(
        strstr(buf,
               "\ntime for connect:       99us        99us        99us         0us   100.00%\n") !=
        NULL);
    CHECK(
        strstr(buf,
               "\ntime to 1st byte:      2.50s       2.50s       2.50s         0us   100.00%\n") !=
        NULL);
    CHECK(
        strstr(buf,
               "\nreq/s           :     300.00      500.00      400.00      100.00   100.00%\n") !=
        NULL);
    CHECK(strstr(buf, "\nlatency: p50 1.00ms, p90 1.00ms, p99 1.00ms, p99.9 1.00ms, p99.99 1.00ms, "
                      "max 1.00ms (2000 requests") != NULL);
    CHECK(strstr(buf, "goodput: 1320.00 req/s (2xx/3xx); status: 200 x1980 503 x10\n") != NULL);
    CHECK(strstr(buf, "requested 10, effective 10 (server SETTINGS_MAX_CONCURRENT_STREAMS 100)") !=
          NULL);
    if (test_failed)
        fputs(buf, stderr);
    free(buf);
    res.conn_rps = NULL;
    h2b_load_result_free(&res);
    h2b_load_config_free(&cfg);
}

static void json(void)
{
    struct h2b_load_config cfg;
    struct h2b_load_result res;
    fill(&cfg, &res);
    json_t *cell = NULL;
    CHECK_EQ_INT(h2b_load_report_json(&cfg, &res, &cell), H2B_OK);
    CHECK_EQ_U64(json_integer_value(json_object_get(cell, "requests")), 2000);
    CHECK_EQ_U64(json_integer_value(json_object_get(cell, "succeeded")), 1980);
    CHECK_EQ_U64(json_integer_value(json_object_get(cell, "failed")), 20);
    CHECK_EQ_U64(json_integer_value(json_object_get(cell, "errors")), 10);
    CHECK_EQ_U64(json_integer_value(json_object_get(cell, "streams_effective")), 10);
    CHECK_EQ_U64(json_integer_value(json_object_get(json_object_get(cell, "status_codes"), "503")),
                 10);
    const json_t *lat = json_object_get(cell, "latency_ns");
    CHECK(json_integer_value(json_object_get(lat, "p99")) >= 1000000);
    CHECK(json_integer_value(json_object_get(lat, "p99")) <= 1008000);
    /* the encoded histogram decodes to the same counts */
    const char *enc =
        json_string_value(json_object_get(json_object_get(cell, "histograms"), "latency"));
    struct h2b_hist *h = NULL;
    CHECK(enc != NULL && h2b_hist_decode(enc, &h) == H2B_OK);
    if (h)
        CHECK_EQ_U64(h->total, 2000);
    h2b_hist_del(h);
    /* it is a valid matrix entry of a results file */
    json_t *doc = NULL;
    CHECK_EQ_INT(h2b_results_new(&doc, "load", NULL), H2B_OK);
    struct h2b_results_load l;
    struct h2b_diag diag;
    CHECK_EQ_INT(h2b_results_load_from_json(cell, NULL, &l, &diag), H2B_OK);
    CHECK_EQ_INT(h2b_results_append_cell(doc, &l.cell), H2B_OK);
    h2b_results_load_free(&l);
    int rv = h2b_results_validate(doc, NULL, &diag);
    CHECK_EQ_INT(rv, H2B_OK);
    if (rv != H2B_OK)
        h2b_diag_print(&diag, stderr);
    json_decref(doc);
    json_decref(cell);
    res.conn_rps = NULL;
    h2b_load_result_free(&res);
    h2b_load_config_free(&cfg);
}

int main(void)
{
    text();
    json();
    return test_report();
}
