/*
 * test_cells.c - the "cells" section of a ceilings file (gates/cells.h), as docs/gates.md
 * describes it: parsed from small files written here, and checked against results documents
 * written here too. Exact budgets (pass, over max), instructions within and beyond
 * max x (1 + tolerance), a cell named but absent (MISSING), a null metric and a failed cell
 * (INVALID with the reason), p99_ms at another rate or closed loop (INVALID) and from another
 * machine (not applicable; exit 3 only with strict), min_ratio against a reference target and
 * a missing reference; bad sections (wrong type, unknown metric, negative max, bad key) exit 2
 * with file:line:column and the field path; a server that fell back to another I/O backend than
 * its ceilings' (not applicable). Then h2b_cell_slo_check's rows for matrix.slo verdicts and
 * find_max searches.
 */
#include "gates/cells.h"
#include "core/error.h"
#include "core/fs.h"
#include "gates/ceilings.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/h2b_test_cells.XXXXXX";

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* A results document measured on "CPU-A" with the given matrix cells (a JSON array's inside). */
#define DOC_HEAD                                                                                   \
    "{\"schema\": \"h2bench.result/1\", \"created\": \"2026-12-01T00:00:00Z\",\n"                  \
    " \"tool\": {\"name\": \"h2bench\", \"version\": \"0.1.0\", \"git_commit\": \"abc\"},\n"       \
    " \"scenario\": {\"name\": \"t\", \"file\": \"t.json\", \"sha256\": null},\n"                  \
    " \"env\": {\"cpu_model\": \"CPU-A\", \"cpus\": 2, \"kernel\": \"K 1\", \"compiler\": "        \
    "\"GNU 12.2.0\", \"build_type\": \"Release\", \"sanitizers\": [], \"nghttp2\": \"1.52.0\"},\n" \
    " \"micro\": [],\n \"matrix\": [\n"

/* One ok cell: TARGET CxS repeat R, req/s, open-loop rate ("null": closed loop), p99 ns, and
 * the budgets object. */
#define CELL(target, c, s, rep, rps, rate, p99, budgets)                                           \
    "{\"target\": \"" target "\", \"client\": \"h2bench\", \"connections\": " c                    \
    ", \"streams_requested\": " s ", \"streams_effective\": " s ", \"repeat\": " rep               \
    ", \"status\": \"ok\", \"req_per_s\": " rps ", \"rate\": " rate                                \
    ", \"latency_ns\": {\"p50\": 1000, \"p99\": " p99 "}, \"budgets\": " budgets "}"

#define BUDGETS(allocs, bytes, instr, note)                                                        \
    "{\"allocs_per_request\": " allocs ", \"bytes_per_request\": " bytes                           \
    ", \"reads_per_request\": 1, \"writes_per_request\": 0.1, \"writes_per_read\": 1"              \
    ", \"instructions_per_request\": " instr ", \"rss_per_connection_kib\": 20, \"note\": " note   \
    "}"

static const char results_a[] = DOC_HEAD
    /* h2ref:1x1, two repeats: worst allocs 0, worst bytes 12, worst instructions 10040 (the
     * first repeat's), best p99 4 ms at 2000/s (the first's), median req/s 1100 */
    CELL("h2ref", "1", "1", "0", "1000", "2000", "4000000",
         BUDGETS("0", "12", "10040", "null")) ",\n" CELL("h2ref", "1", "1", "1", "1200", "2000",
                                                         "6000000",
                                                         BUDGETS("0", "10", "10000", "null")) ",\n"
    /* the reference: median req/s 1050 */
    CELL("nghttpd", "1", "1", "0", "1000", "2000", "5000000",
         BUDGETS("1", "10", "20000", "null")) ",\n" CELL("nghttpd", "1", "1", "1", "1100", "2000",
                                                         "5000000",
                                                         BUDGETS("1", "10", "20000", "null")) ",\n"
    /* instructions beyond max x 1.005 for a max of 10000 */
    CELL("h2ref", "1", "4", "0", "1000", "2000", "4000000",
         BUDGETS("0", "10", "10060", "null")) ",\n"
    /* instructions not measured, with the reason in the budgets' note */
    CELL("h2ref", "1", "2", "0", "1000", "2000", "4000000",
         BUDGETS("0", "10", "null",
                 "\"instructions_per_request: valgrind not found on PATH\"")) ",\n"
    /* measured at another rate, and closed loop */
    CELL(
        "h2ref", "4", "1", "0", "1000", "1000", "4000000",
        BUDGETS(
            "0",
            "10", "1",
            "null")) ",\n" CELL("h2ref", "8", "1", "0", "1000", "null", "4000000",
                                BUDGETS(
                                    "0",
                                    "10",
                                    "1",
                                    "null")) ",\n"
                                             /* a cell without "status" was measured (results.h:
                                                absent is "ok"), at 1000 req/s */
                                             "{\"target\": \"h2ref\", \"client\": \"h2bench\", "
                                             "\"connections\": 3, \"streams_requested\": 1,"
                                             " \"streams_effective\": 1, \"repeat\": 0, "
                                             "\"req_per_s\": 1000,"
                                             " \"budgets\": " BUDGETS(
                                                 "2", "10", "1",
                                                 "null") "},\n" CELL("nghttpd", "3", "1", "0",
                                                                     "500", "null",
                                                                     "1",
                                                                     BUDGETS(
                                                                         "0",
                                                                         "0",
                                                                         "1",
                                                                         "null")) ",\n"
                                                                                  /* a cell that
                                                                                     failed */
                                                                                  "{\"target\": "
                                                                                  "\"h2ref\", "
                                                                                  "\"client\": "
                                                                                  "\"h2bench\", "
                                                                                  "\"connections\":"
                                                                                  " 2, "
                                                                                  "\"streams_"
                                                                                  "requested\": 1,"
                                                                                  " \"streams_"
                                                                                  "effective\": 1, "
                                                                                  "\"repeat\": 0, "
                                                                                  "\"status\": "
                                                                                  "\"failed\","
                                                                                  " \"reason\": "
                                                                                  "\"target exited "
                                                                                  "with status 1 "
                                                                                  "before the cell "
                                                                                  "ended\"}\n]}\n";

static char results_path[512];
static struct h2b_results_doc *doc_a;

/* The fingerprint of results_a's env (same machine and build), or with another CPU model. */
static char fp_cpu_a[] = "CPU-A", fp_cpu_b[] = "CPU-B", fp_kernel[] = "K 1",
            fp_compiler[] = "GNU 12.2.0", fp_build[] = "Release", fp_nghttp2[] = "1.52.0";

static struct h2b_fingerprint fingerprint(char *cpu)
{
    return (struct h2b_fingerprint){.set = true,
                                    .cpu_model = cpu,
                                    .kernel = fp_kernel,
                                    .compiler = fp_compiler,
                                    .build_type = fp_build,
                                    .nghttp2 = fp_nghttp2,
                                    .cpus = 2};
}

/* Writes a ceilings file with the given "cells" object and loads it. */
static int load_cells(const char *name, const char *cells, struct h2b_cell_gates **out,
                      struct h2b_diag *d)
{
    char path[512], text[4096];
    tmp_path(path, sizeof(path), name);
    snprintf(text, sizeof(text), "{\"schema\": \"h2bench.ceilings/1\",\n \"cells\": %s}\n", cells);
    if (test_write_text(path, text) != 0)
        return H2B_ERR_IO;
    memset(d, 0, sizeof(*d));
    return h2b_cell_gates_load(path, out, d);
}

/* The report of the cells section cells checked against results_a (fp NULL: anywhere). */
static struct h2b_gate_report *check(const char *cells, const struct h2b_fingerprint *fp,
                                     bool strict)
{
    struct h2b_cell_gates *g = NULL;
    struct h2b_diag d;
    int rc = load_cells("ceilings.json", cells, &g, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc != H2B_OK) {
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.message);
        return NULL;
    }
    struct h2b_gate_report *r = calloc(1, sizeof(*r));
    const struct h2b_results_doc *docs[] = {doc_a};
    const char *paths[] = {results_path};
    CHECK(r != NULL);
    if (r)
        CHECK_EQ_INT(h2b_cell_gates_check(g, docs, paths, 1, fp, strict, r), H2B_OK);
    h2b_cell_gates_del(g);
    return r;
}

static const struct h2b_gate_row *row_of(const struct h2b_gate_report *r, const char *bench)
{
    for (size_t i = 0; r && i < r->count; i++) {
        if (strcmp(r->rows[i].bench, bench) == 0)
            return &r->rows[i];
    }
    fprintf(stderr, "no row \"%s\"\n", bench);
    return NULL;
}

/* Row bench has status st, and its evidence contains text (NULL: not checked). */
static void check_row(const struct h2b_gate_report *r, const char *bench, enum h2b_gate_status st,
                      const char *text)
{
    const struct h2b_gate_row *row = row_of(r, bench);
    CHECK(row != NULL);
    if (!row)
        return;
    CHECK_EQ_INT(row->status, st);
    if (text && (!row->evidence || !strstr(row->evidence, text))) {
        fprintf(stderr, "evidence of %s: \"%s\", expected to contain \"%s\"\n", bench,
                row->evidence ? row->evidence : "(null)", text);
        CHECK(false);
    }
}

static void test_exact_budgets(void)
{
    struct h2b_gate_report *r =
        check("{\"h2ref:1x1\": {"
              "\"allocs_per_request\": {\"max\": 0, \"why\": \"pooled\"},"
              "\"writes_per_request\": {\"max\": 0.1, \"why\": \"batched\"},"
              "\"rss_per_connection_kib\": {\"max\": 20, \"why\": \"r\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_EQ_U64(r->count, 3);
    check_row(r, "h2ref:1x1 allocs_per_request", H2B_GATE_PASS,
              "allocs_per_request 0, ceiling 0 (pooled)");
    check_row(r, "h2ref:1x1 writes_per_request", H2B_GATE_PASS, NULL);
    check_row(r, "h2ref:1x1 rss_per_connection_kib", H2B_GATE_PASS, NULL);
    CHECK_EQ_INT(r->passed, 3);
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);

    /* the largest value over the repeats (12) counts: a max of 12 holds, 11 fails */
    r = check("{\"h2ref:1x1\": {\"bytes_per_request\": {\"max\": 12, \"why\": \"w\"}}}", NULL,
              false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 bytes_per_request", H2B_GATE_PASS, NULL);
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);
    r = check("{\"h2ref:1x1\": {\"bytes_per_request\": {\"max\": 11, \"why\": \"tight\"}}}", NULL,
              false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 bytes_per_request", H2B_GATE_FAIL,
              "bytes_per_request 12, ceiling 11 (tight)");
    const struct h2b_gate_row *row = row_of(r, "h2ref:1x1 bytes_per_request");
    CHECK(row && row->failing && row->has_current && row->current == 12 && row->ceiling == 11);
    CHECK_EQ_INT(r->failed, 1);
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);
}

static void test_instructions_tolerance(void)
{
    /* 10040 is within 10000 x 1.005 (the default tolerance); 10060 is not */
    struct h2b_gate_report *r =
        check("{\"h2ref:1x1\": {\"instructions_per_request\": {\"max\": 10000, \"why\": \"cg\"}},"
              " \"h2ref:1x4\": {\"instructions_per_request\": {\"max\": 10000, \"why\": \"cg\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 instructions_per_request", H2B_GATE_PASS,
              "instructions_per_request 10040, ceiling 10000 + 0.5 %");
    check_row(r, "h2ref:1x4 instructions_per_request", H2B_GATE_FAIL,
              "instructions_per_request 10060, ceiling 10000 + 0.5 %");
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);

    /* an explicit tolerance: 0.001 fails 10040, 0.01 passes 10060 */
    r = check("{\"h2ref:1x1\": {\"instructions_per_request\": {\"max\": 10000, \"tolerance\": "
              "0.001, \"why\": \"cg\"}},"
              " \"h2ref:1x4\": {\"instructions_per_request\": {\"max\": 10000, \"tolerance\": "
              "0.01, \"why\": \"cg\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 instructions_per_request", H2B_GATE_FAIL, "+ 0.1 %");
    check_row(r, "h2ref:1x4 instructions_per_request", H2B_GATE_PASS, "+ 1 %");
    h2b_gate_report_del(r);
}

static void test_missing_and_invalid(void)
{
    struct h2b_gate_report *r = check(
        "{\"h2ref:16x16\": {\"allocs_per_request\": {\"max\": 0, \"why\": \"w\"}}}", NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:16x16 allocs_per_request", H2B_GATE_MISSING,
              "no cell h2ref:16x16 in the results");
    CHECK_EQ_INT(r->missing, 1);
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);

    /* a null budget: invalid, with the reason the results give; a failed cell: its reason */
    r = check("{\"h2ref:1x2\": {\"instructions_per_request\": {\"max\": 1, \"why\": \"w\"},"
              " \"allocs_per_request\": {\"max\": 0, \"why\": \"w\"}},"
              " \"h2ref:2x1\": {\"allocs_per_request\": {\"max\": 0, \"why\": \"w\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x2 instructions_per_request", H2B_GATE_INVALID,
              "null: valgrind not found on PATH");
    check_row(r, "h2ref:1x2 allocs_per_request", H2B_GATE_PASS, NULL);
    check_row(r, "h2ref:2x1 allocs_per_request", H2B_GATE_INVALID,
              "target exited with status 1 before the cell ended");
    CHECK_EQ_INT(r->invalid, 2);
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_gate_report_del(r);

    /* a cell without a status is judged as measured */
    r = check("{\"h2ref:3x1\": {\"allocs_per_request\": {\"max\": 2, \"why\": \"w\"},"
              " \"min_ratio\": {\"reference\": \"nghttpd\", \"min\": 2, \"why\": \"w\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:3x1 allocs_per_request", H2B_GATE_PASS, "allocs_per_request 2, ceiling 2");
    check_row(r, "h2ref:3x1 min_ratio", H2B_GATE_PASS, "req/s h2ref / nghttpd = 2, floor 2");
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);

    /* invalid outranks failed: exit 3 even beside a FAIL */
    r = check("{\"h2ref:1x2\": {\"instructions_per_request\": {\"max\": 1, \"why\": \"w\"}},"
              " \"h2ref:1x1\": {\"bytes_per_request\": {\"max\": 0, \"why\": \"w\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_EQ_INT(r->failed, 1);
    CHECK_EQ_INT(r->invalid, 1);
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_gate_report_del(r);
}

static void test_p99(void)
{
    struct h2b_fingerprint here = fingerprint(fp_cpu_a), there = fingerprint(fp_cpu_b);
    /* the best repeat (4 ms) against max; at exactly the ceiling's rate */
    const char *p99_5 =
        "{\"h2ref:1x1\": {\"p99_ms\": {\"max\": 5, \"rate\": 2000, \"why\": \"w\"}}}";
    const char *p99_3 =
        "{\"h2ref:1x1\": {\"p99_ms\": {\"max\": 3, \"rate\": 2000, \"why\": \"w\"}}}";
    struct h2b_gate_report *r = check(p99_5, &here, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 p99_ms", H2B_GATE_PASS, "p99 4 ms at 2000 req/s open loop, best of 2");
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);
    r = check(p99_3, NULL, false); /* no fingerprint: applies anywhere */
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 p99_ms", H2B_GATE_FAIL, "ceiling 3 ms");
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);

    /* another machine: not applicable, not a failure; exit 3 only with strict */
    r = check(p99_3, &there, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 p99_ms", H2B_GATE_NA, "not applicable (set on CPU-B");
    CHECK_EQ_INT(r->not_applicable, 1);
    CHECK(!row_of(r, "h2ref:1x1 p99_ms")->failing);
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);
    r = check(p99_3, &there, true);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 p99_ms", H2B_GATE_NA, "(--strict: invalid)");
    CHECK(row_of(r, "h2ref:1x1 p99_ms")->failing);
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_gate_report_del(r);

    /* measured at another rate, or closed loop: invalid */
    r = check("{\"h2ref:4x1\": {\"p99_ms\": {\"max\": 5, \"rate\": 2000, \"why\": \"w\"}},"
              " \"h2ref:8x1\": {\"p99_ms\": {\"max\": 5, \"rate\": 2000, \"why\": \"w\"}}}",
              &here, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:4x1 p99_ms", H2B_GATE_INVALID,
              "the cell ran at 1000 req/s, the ceiling is for 2000");
    check_row(r, "h2ref:8x1 p99_ms", H2B_GATE_INVALID, "the cell ran closed-loop");
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_gate_report_del(r);
}

static void test_min_ratio(void)
{
    /* h2ref's median 1100 over nghttpd's 1050 */
    struct h2b_gate_report *r = check("{\"h2ref:1x1\": {\"min_ratio\": {\"reference\": "
                                      "\"nghttpd\", \"min\": 1.04, \"why\": \"w\"}}}",
                                      NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 min_ratio", H2B_GATE_PASS, "req/s h2ref / nghttpd = 1.048, floor 1.04");
    const struct h2b_gate_row *row = row_of(r, "h2ref:1x1 min_ratio");
    CHECK(row && fabs(row->current - 1100.0 / 1050.0) < 1e-12);
    CHECK_EQ_INT(r->exit_code, 0);
    h2b_gate_report_del(r);

    r = check("{\"h2ref:1x1\": {\"min_ratio\": {\"reference\": \"nghttpd\", \"min\": 1.05, "
              "\"why\": \"w\"}}}",
              NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 min_ratio", H2B_GATE_FAIL, "floor 1.05");
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);

    r = check(
        "{\"h2ref:1x1\": {\"min_ratio\": {\"reference\": \"h2o\", \"min\": 0.9, \"why\": \"w\"}}}",
        NULL, false);
    CHECK(r != NULL);
    if (!r)
        return;
    check_row(r, "h2ref:1x1 min_ratio", H2B_GATE_MISSING, "reference h2o:1x1 not in the results");
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_gate_report_del(r);
}

/* cells (a "cells" value) does not parse: H2B_ERR_PARSE, diag at file:line:column naming
 * field and saying what, *out untouched. */
static void check_bad(const char *cells, const char *field, const char *what, int line)
{
    static struct h2b_cell_gates sentinel;
    struct h2b_cell_gates *g = &sentinel; /* must stay untouched */
    struct h2b_diag d;
    char path[512];
    tmp_path(path, sizeof(path), "bad.json");
    CHECK_EQ_INT(load_cells("bad.json", cells, &g, &d), H2B_ERR_PARSE);
    CHECK(g == &sentinel);
    CHECK_STR(d.file, path);
    CHECK_EQ_INT(d.line, line);
    CHECK(d.column > 0);
    if (!strstr(d.message, field) || !strstr(d.message, what)) {
        fprintf(stderr, "diag \"%s\" lacks \"%s\" or \"%s\"\n", d.message, field, what);
        CHECK(false);
    }
}

static void test_bad_sections(void)
{
    check_bad("[1, 2]", "cells", "expected", 2);
    check_bad("{\"h2ref:1x1\": 5}", "h2ref:1x1", "expected", 2);
    check_bad("{\n\"h2ref:1x1\": {\"allocs_per_request\": {\"max\": \"none\", \"why\": \"w\"}}}",
              "h2ref:1x1.allocs_per_request.max", "expected", 3);
    check_bad("{\"h2ref:1x1\": {\n\"p99\": {\"max\": 5, \"why\": \"w\"}}}", "h2ref:1x1.p99",
              "unknown ceiling (known: allocs_per_request", 3);
    check_bad("{\"h2ref:1x1\": {\"bytes_per_request\":\n {\"max\": -1, \"why\": \"w\"}}}",
              "bytes_per_request.max", "expected", 3);
    check_bad("{\"h2ref:1y1\": {\"allocs_per_request\": {\"max\": 0, \"why\": \"w\"}}}",
              "h2ref:1y1", "TARGET:CONNECTIONSxSTREAMS", 2);
    check_bad("{\"h2ref:0x1\": {\"allocs_per_request\": {\"max\": 0, \"why\": \"w\"}}}",
              "h2ref:0x1", "TARGET:CONNECTIONSxSTREAMS", 2);
    check_bad("{\"h2ref:1x1\": {}}", "h2ref:1x1", "at least one ceiling", 2);
    check_bad("{\"h2ref:1x1\": {\"allocs_per_request\": {\"max\": 0}}}",
              "h2ref:1x1.allocs_per_request", "why", 2);
    check_bad(
        "{\"h2ref:1x1\": {\"allocs_per_request\": {\"max\": 0, \"rate\": 5, \"why\": \"w\"}}}",
        "h2ref:1x1.allocs_per_request", "rate", 2);
    check_bad("{\"h2ref:1x1\": {\"p99_ms\": {\"max\": 5, \"why\": \"w\"}}}", "h2ref:1x1.p99_ms",
              "rate", 2);
    check_bad("{\"h2ref:1x1\": {\"instructions_per_request\": {\"max\": 5, \"tolerance\": 2, "
              "\"why\": \"w\"}}}",
              "instructions_per_request.tolerance", "expected", 2);
    check_bad("{\"h2ref:1x1\": {\"min_ratio\": {\"reference\": \"h2ref\", \"min\": 1, \"why\": "
              "\"w\"}}}",
              "min_ratio.reference", "its own reference", 2);
    check_bad("{\"h2ref:1x1\": {\"min_ratio\": {\"reference\": \"x\", \"min\": 0, \"why\": "
              "\"w\"}}}",
              "min_ratio.min", "expected", 2);
}

static void test_parse(void)
{
    struct h2b_cell_gates *g = NULL;
    struct h2b_diag d;
    CHECK_EQ_INT(load_cells("good.json",
                            "{\"h2ref:10x100\": {"
                            "\"instructions_per_request\": {\"max\": 9800, \"why\": \"cg\"},"
                            "\"p99_ms\": {\"max\": 50, \"rate\": 2000, \"why\": \"open\"},"
                            "\"min_ratio\": {\"reference\": \"nghttpd\", \"min\": 0.95, \"why\": "
                            "\"side by side\"}},"
                            " \"my:server:2x3\": {\"allocs_per_request\": {\"max\": 4, \"why\": "
                            "\"w\"}}}",
                            &g, &d),
                 H2B_OK);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK_EQ_U64(g->count, 2);
    const struct h2b_cell_gate *e = &g->cells[0];
    CHECK_STR(e->key, "h2ref:10x100");
    CHECK_STR(e->target, "h2ref");
    CHECK_EQ_INT(e->connections, 10);
    CHECK_EQ_INT(e->streams, 100);
    CHECK(e->m[H2B_CELL_INSTRUCTIONS].set && e->m[H2B_CELL_INSTRUCTIONS].max == 9800);
    CHECK(e->m[H2B_CELL_INSTRUCTIONS].tolerance == 0.005); /* the documented default */
    CHECK(e->m[H2B_CELL_P99_MS].set && e->m[H2B_CELL_P99_MS].rate == 2000);
    CHECK(e->m[H2B_CELL_MIN_RATIO].max == 0.95);
    CHECK_STR(e->m[H2B_CELL_MIN_RATIO].reference, "nghttpd");
    CHECK_STR(e->m[H2B_CELL_MIN_RATIO].why, "side by side");
    CHECK(!e->m[H2B_CELL_ALLOCS].set);
    /* the target is what precedes the last colon */
    CHECK_STR(g->cells[1].target, "my:server");
    CHECK_EQ_INT(g->cells[1].connections, 2);
    CHECK_EQ_INT(g->cells[1].streams, 3);
    h2b_cell_gates_del(g);

    CHECK_STR(h2b_cell_metric_key(H2B_CELL_ALLOCS), "allocs_per_request");
    CHECK_STR(h2b_cell_metric_key(H2B_CELL_RSS_PER_CONN), "rss_per_connection_kib");
    CHECK_STR(h2b_cell_metric_key(H2B_CELL_P99_MS), "p99_ms");
    CHECK_STR(h2b_cell_metric_key(H2B_CELL_MIN_RATIO), "min_ratio");

    /* a ceilings file without a cells section: H2B_OK and no gates */
    char path[512];
    tmp_path(path, sizeof(path), "micro-only.json");
    CHECK_EQ_INT(test_write_text(path, "{\"schema\": \"h2bench.ceilings/1\", \"benchmarks\": {}}"),
                 0);
    static struct h2b_cell_gates sentinel;
    g = &sentinel;
    CHECK_EQ_INT(h2b_cell_gates_load(path, &g, &d), H2B_OK);
    CHECK(g == NULL);
    tmp_path(path, sizeof(path), "absent.json");
    CHECK(h2b_cell_gates_load(path, &g, &d) != H2B_OK);
}

/* matrix.slo verdicts and a find_max search, read back as rows. */
#define SLO_CELL(c, verdicts)                                                                      \
    "{\"target\": \"h2ref\", \"client\": \"h2bench\", \"connections\": " c                         \
    ", \"streams_requested\": 1, \"streams_effective\": 1, \"repeat\": 0, \"status\": \"ok\","     \
    " \"slo\": [" verdicts "]}"
#define VERDICT(obj, scope, start, end, verdict, value, limit, reason)                             \
    "{\"objective\": \"" obj "\", \"scope\": \"" scope "\", \"start_s\": " start                   \
    ", \"end_s\": " end ", \"verdict\": \"" verdict "\", \"value\": " value ", \"limit\": " limit  \
    ", \"reason\": " reason "}"
#define STEP(rate, verdict)                                                                        \
    "{\"rate_per_s\": " rate ", \"achieved_per_s\": " rate ", \"ended\": 100, \"errors\": 0,"      \
    " \"latency_ns\": {\"p50\": 1000000, \"p99\": 2000000}, \"verdict\": \"" verdict "\"}"

static const char results_slo[] = DOC_HEAD SLO_CELL(
    "1",
    VERDICT("p99<5ms", "run", "0", "2", "pass", "1000000", "5000000", "null") "," VERDICT("p99<5ms", "window", "0", "1", "pass", "1000000", "5000000", "null") "," VERDICT(
        "p99<5ms", "window", "1",
        "2", "not_evaluable", "null", "5000000",
        "\"no request ended\"")) ",\n" SLO_CELL("2",
                                                VERDICT("p99<5ms", "run", "0", "2", "pass", "1000000", "5000000", "null") "," VERDICT(
                                                    "p99<5ms", "window", "1", "2",
                                                    "fail", "9000000", "5000000",
                                                    "null")) ",\n" SLO_CELL("3",
                                                                            VERDICT(
                                                                                "p999<5ms", "run",
                                                                                "0", "2",
                                                                                "not_evaluable",
                                                                                "null", "5000000",
                                                                                "\"fewer than 1000 "
                                                                                "requests\"")) ",\n"
                                                                                               "{\""
                                                                                               "tar"
                                                                                               "get"
                                                                                               "\":"
                                                                                               " \""
                                                                                               "h2r"
                                                                                               "ef"
                                                                                               "\","
                                                                                               " \""
                                                                                               "cli"
                                                                                               "ent"
                                                                                               "\":"
                                                                                               " \""
                                                                                               "h2b"
                                                                                               "enc"
                                                                                               "h\""
                                                                                               ", "
                                                                                               "\"c"
                                                                                               "onn"
                                                                                               "ect"
                                                                                               "ion"
                                                                                               "s\""
                                                                                               ": "
                                                                                               "4, "
                                                                                               "\"s"
                                                                                               "tre"
                                                                                               "ams"
                                                                                               "_re"
                                                                                               "que"
                                                                                               "ste"
                                                                                               "d\""
                                                                                               ": "
                                                                                               "1,"
                                                                                               " \""
                                                                                               "str"
                                                                                               "eam"
                                                                                               "s_"
                                                                                               "eff"
                                                                                               "ect"
                                                                                               "ive"
                                                                                               "\":"
                                                                                               " 1,"
                                                                                               " \""
                                                                                               "rep"
                                                                                               "eat"
                                                                                               "\":"
                                                                                               " 0,"
                                                                                               " \""
                                                                                               "sta"
                                                                                               "tus"
                                                                                               "\":"
                                                                                               " \""
                                                                                               "ok"
                                                                                               "\","
                                                                                               " \""
                                                                                               "sea"
                                                                                               "rch"
                                                                                               "\":"
                                                                                               " {"
                                                                                               "\"c"
                                                                                               "apa"
                                                                                               "cit"
                                                                                               "y_"
                                                                                               "per"
                                                                                               "_s"
                                                                                               "\":"
                                                                                               " 20"
                                                                                               "0, "
                                                                                               "\"s"
                                                                                               "lo"
                                                                                               "\":"
                                                                                               " \""
                                                                                               "p50"
                                                                                               "<75"
                                                                                               "ms"
                                                                                               "\","
                                                                                               " \""
                                                                                               "ste"
                                                                                               "p_"
                                                                                               "s\""
                                                                                               ": "
                                                                                               "1, "
                                                                                               "\"w"
                                                                                               "arm"
                                                                                               "_up"
                                                                                               "_s"
                                                                                               "\":"
                                                                                               " 0,"
                                                                                               " \""
                                                                                               "pre"
                                                                                               "cis"
                                                                                               "ion"
                                                                                               "\":"
                                                                                               " 0."
                                                                                               "05,"
                                                                                               " \""
                                                                                               "sea"
                                                                                               "rch"
                                                                                               "_s"
                                                                                               "\":"
                                                                                               " 10"
                                                                                               ", "
                                                                                               "\"l"
                                                                                               "ast"
                                                                                               "_pa"
                                                                                               "ss"
                                                                                               "\":"
                                                                                               " " STEP("200", "pass") ", \"first_fail\": " STEP(
                                                                                                   "210",
                                                                                                   "fail") ", \"steps\": []}},\n"
                                                                                                           "{\"target\": \"h2ref\", \"client\": \"h2bench\", \"connections\": 5, \"streams_requested\": 1,"
                                                                                                           " \"streams_effective\": 1, \"repeat\": 0, \"status\": \"ok\", \"search\": {"
                                                                                                           "\"capacity_per_s\": null, \"slo\": \"p50<75ms\", \"step_s\": 1, \"warm_up_s\": 0,"
                                                                                                           " \"precision\": 0.05, \"search_s\": 10, \"last_pass\": null, \"first_fail\": " STEP(
                                                                                                               "10",
                                                                                                               "fail") ", \"steps\": []}}\n]}\n";

static void test_slo(void)
{
    char path[512];
    tmp_path(path, sizeof(path), "slo.json");
    CHECK_EQ_INT(test_write_text(path, results_slo), 0);
    struct h2b_results_doc *doc = NULL;
    struct h2b_diag d;
    int rc = h2b_results_doc_load(path, &doc, NULL, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc != H2B_OK) {
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.message);
        return;
    }
    struct h2b_gate_report *r = calloc(1, sizeof(*r));
    CHECK(r != NULL);
    if (!r) {
        h2b_results_doc_del(doc);
        return;
    }
    const struct h2b_results_doc *docs[] = {doc};
    const char *paths[] = {path};
    CHECK_EQ_INT(h2b_cell_slo_check(docs, paths, 1, r), H2B_OK);
    CHECK_EQ_U64(r->count, 5);
    /* a window not evaluable beside a run that passes: PASS, the window named */
    check_row(r, "h2ref:1x1 slo p99<5ms", H2B_GATE_PASS,
              "1 of 2 windows not evaluable (the first 1.0-2.0s: no request ended)");
    check_row(r, "h2ref:1x1 slo p99<5ms", H2B_GATE_PASS, "limit 5.00 ms: holds");
    /* a breached window fails though the run passes */
    check_row(r, "h2ref:2x1 slo p99<5ms", H2B_GATE_FAIL,
              "1 of 1 windows breached, the first 1.0-2.0s: 9.00 ms");
    /* not evaluable over the run: invalid, with the reason */
    check_row(r, "h2ref:3x1 slo p999<5ms", H2B_GATE_INVALID,
              "not evaluable: fewer than 1000 requests");
    check_row(r, "h2ref:4x1 capacity", H2B_GATE_PASS,
              "capacity 200.0 req/s at 'p50<75ms': last pass 200.0 req/s (p50 1.00 ms");
    check_row(r, "h2ref:5x1 capacity", H2B_GATE_FAIL, "no step holds 'p50<75ms'");
    CHECK_EQ_INT(r->passed, 2);
    CHECK_EQ_INT(r->failed, 2);
    CHECK_EQ_INT(r->invalid, 1);
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_gate_report_del(r);
    h2b_results_doc_del(doc);
}

/* A server asked for io_uring that fell back to epoll measured another program: every row of
 * its cell is not applicable (exit 3 only with strict), where the counts would have passed or
 * failed against ceilings set on io_uring. */
static void test_io_fallback(void)
{
    static const char doc[] = DOC_HEAD
        "{\"target\": \"h2ref-uring\", \"client\": \"h2bench\", \"connections\": 1,"
        " \"streams_requested\": 1, \"streams_effective\": 1, \"repeat\": 0, \"status\": \"ok\","
        " \"req_per_s\": 1000, \"server_io\": \"epoll\","
        " \"server_io_fallback\": \"io_uring_queue_init: Operation not permitted\","
        " \"budgets\": " BUDGETS("0", "0", "99999", "null") "}]}\n";
    char path[512];
    tmp_path(path, sizeof(path), "fallback.json");
    CHECK_EQ_INT(test_write_text(path, doc), 0);
    struct h2b_results_doc *rd = NULL;
    struct h2b_diag d;
    CHECK_EQ_INT(h2b_results_doc_load(path, &rd, NULL, &d), H2B_OK);
    struct h2b_cell_gates *g = NULL;
    CHECK_EQ_INT(load_cells("fallback-ceilings.json",
                            "{\"h2ref-uring:1x1\": {"
                            "\"instructions_per_request\": {\"max\": 5000, \"why\": \"cg\"},"
                            "\"allocs_per_request\": {\"max\": 0, \"why\": \"pooled\"}}}",
                            &g, &d),
                 H2B_OK);
    if (!rd || !g) {
        h2b_results_doc_del(rd);
        h2b_cell_gates_del(g);
        return;
    }
    const struct h2b_results_doc *docs[] = {rd};
    const char *paths[] = {path};
    for (int strict = 0; strict <= 1; strict++) {
        struct h2b_gate_report *r = calloc(1, sizeof(*r));
        CHECK(r != NULL);
        if (!r)
            break;
        CHECK_EQ_INT(h2b_cell_gates_check(g, docs, paths, 1, NULL, strict, r), H2B_OK);
        check_row(r, "h2ref-uring:1x1 instructions_per_request", H2B_GATE_NA,
                  "not applicable (the server ran on epoll in ");
        check_row(r, "h2ref-uring:1x1 allocs_per_request", H2B_GATE_NA,
                  ": io_uring_queue_init: Operation not permitted)");
        CHECK_EQ_INT(r->failed, 0);
        CHECK_EQ_INT(r->exit_code, strict ? 3 : 0);
        h2b_gate_report_del(r);
    }
    h2b_cell_gates_del(g);
    h2b_results_doc_del(rd);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    tmp_path(results_path, sizeof(results_path), "a.json");
    CHECK_EQ_INT(test_write_text(results_path, results_a), 0);
    struct h2b_diag d;
    int rc = h2b_results_doc_load(results_path, &doc_a, NULL, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc == H2B_OK) {
        test_exact_budgets();
        test_instructions_tolerance();
        test_missing_and_invalid();
        test_p99();
        test_min_ratio();
        h2b_results_doc_del(doc_a);
    } else {
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.message);
    }
    test_io_fallback();
    test_parse();
    test_bad_sections();
    test_slo();
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK);
    return test_report();
}
