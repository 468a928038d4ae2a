/*
 * test_report.c - the report library's pieces with known answers: number formatting, medians,
 * template expansion, gnuplot discovery, and the results validation messages (table-driven:
 * each malformed document names its place).
 */
#include "report/chart.h"
#include "core/error.h"
#include "report/rdata.h"
#include "report/report_int.h"
#include "core/stats.h"
#include "core/buf.h"
#include "core/fmt.h"
#include "core/fs.h"
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/h2b-test-report.XXXXXX";

static void test_fmt(void)
{
    char b[64];
    CHECK_STR(h2b_fmt_ns(NAN, b, sizeof(b)), "n/a");
    CHECK_STR(h2b_fmt_ns(8.123, b, sizeof(b)), "8.12 ns");
    CHECK_STR(h2b_fmt_ns(81.23, b, sizeof(b)), "81.2 ns");
    CHECK_STR(h2b_fmt_ns(999.4, b, sizeof(b)), "999 ns");
    CHECK_STR(h2b_fmt_ns(999.6, b, sizeof(b)), "1.00 µs");
    CHECK_STR(h2b_fmt_ns(12345, b, sizeof(b)), "12.3 µs");
    CHECK_STR(h2b_fmt_ns(4.56e6, b, sizeof(b)), "4.56 ms");
    CHECK_STR(h2b_fmt_ns(2.5e9, b, sizeof(b)), "2.50 s");
    CHECK_STR(h2b_fmt_count(0, b, sizeof(b)), "0");
    CHECK_STR(h2b_fmt_count(1234567, b, sizeof(b)), "1,234,567");
    CHECK_STR(h2b_fmt_count(3.5, b, sizeof(b)), "3.50");
    CHECK_STR(h2b_fmt_count(NAN, b, sizeof(b)), "n/a");
    CHECK_STR(h2b_fmt_rate(9950.2, b, sizeof(b)), "9,950");
    CHECK_STR(h2b_fmt_signed_rate(-1234.4, b, sizeof(b)), "−1,234");
    CHECK_STR(h2b_fmt_signed_ns(-50, b, sizeof(b)), "−50.0 ns");
    CHECK_STR(h2b_fmt_ratio(0, 0, b, sizeof(b)), "—");
    CHECK_STR(h2b_fmt_ratio(2, 0, b, sizeof(b)), "new (base 0)");
    CHECK_STR(h2b_fmt_ratio(3, 2, b, sizeof(b)), "1.50×");
    CHECK_STR(h2b__basename("a/b/c.json"), "c.json");
}

static void test_stats(void)
{
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    CHECK(h2b_stats_median(odd, 3) == 2.0);
    CHECK(h2b_stats_median(even, 4) == 2.5);
    CHECK(isnan(h2b_stats_median(odd, 0)));
}

static void test_strbuf_and_templates(void)
{
    struct h2b_buf b;
    h2b_buf_init(&b);
    for (int i = 0; i < 1000; i++)
        h2b_buf_printf(&b, "%04d,", i);
    CHECK_EQ_U64(b.len, 5000);
    CHECK(strncmp(h2b_buf_str(&b) + 4995, "0999,", 5) == 0);
    h2b_buf_free(&b);

    struct h2b_chart_var vars[] = {{"A", "x"}, {"BB", "yy"}};
    h2b_buf_init(&b);
    CHECK_EQ_INT(h2b_chart_expand("{{A}}-{{BB}}-{{A}} @macro {x}", vars, 2, &b), H2B_OK);
    CHECK_STR(h2b_buf_str(&b), "x-yy-x @macro {x}");
    h2b_buf_free(&b);
    h2b_buf_init(&b);
    CHECK_EQ_INT(h2b_chart_expand("{{A}} {{MISSING}}", vars, 2, &b), H2B_ERR_NOTFOUND);
    h2b_buf_free(&b);

    const char *names[] = {"head", "tail", "micro", "matrix-rps", "latency", "history"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        CHECK(h2b_chart_template(names[i]) != NULL);
    CHECK(h2b_chart_template("nope") == NULL);
    /* a whole script: head + body + tail, every key filled */
    struct h2b_chart_var lat[] = {{"XMAX", "1000"}, {"UNIT", "ms"}, {"PLOT", "'d' using 1:2"}};
    h2b_buf_init(&b);
    CHECK_EQ_INT(h2b_chart_script("lat", "latency", "T", lat, 3, &b), H2B_OK);
    CHECK(strstr(h2b_buf_str(&b), "set output 'lat.png'") != NULL);
    CHECK(strstr(h2b_buf_str(&b), "set output 'lat.svg'") != NULL);
    CHECK(strstr(h2b_buf_str(&b), "{{") == NULL);
    h2b_buf_free(&b);
}

/* Issue 13 defect 2: the one gnuplot quoting function makes every string an inert literal. */
static void test_gnuplot_quote(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"h2ref", "'h2ref'"},
        {"", "''"},
        {"it's", "'it''s'"},
        {"a`touch /tmp/x`b", "'atouch /tmp/xb'"},
        {"line\nplot system(\"id\")", "'line plot system(\"id\")'"},
        {"@macro \\n $x", "'@macro \\n $x'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct h2b_buf b;
        h2b_buf_init(&b);
        h2b_chart_quote(&b, cases[i].in);
        CHECK_STR(h2b_buf_str(&b), cases[i].out);
        h2b_buf_free(&b);
    }
}

static void test_gnuplot_discovery(void)
{
    struct h2b_diag d = {0};
    const char *scripts[] = {"x.gp"};
    CHECK_EQ_INT(h2b_chart_run_gnuplot("/nonexistent/gnuplot", tmpdir, scripts, 1, "log", &d),
                 H2B_ERR_NOTFOUND);
    CHECK_EQ_INT(h2b_chart_run_gnuplot("h2b-no-such-gnuplot", tmpdir, scripts, 1, "log", &d),
                 H2B_ERR_NOTFOUND);
    CHECK_EQ_INT(h2b_chart_run_gnuplot("false", tmpdir, scripts, 1, "log", &d), H2B_ERR_SYS);
    CHECK(strstr(d.message, "exited with status 1") != NULL);
}

#define MINI_HEAD                                                                                  \
    "{\"schema\": \"h2bench.result/1\", \"created\": \"2026-11-30T08:00:00Z\",\n"                  \
    " \"tool\": {\"name\": \"h2bench\", \"version\": \"0.1.0\", \"git_commit\": \"abc\"},\n"       \
    " \"scenario\": {\"name\": \"t\", \"file\": null, \"sha256\": null}, \"env\": {},\n"
#define MINI_MICRO                                                                                 \
    "\"name\": \"x\", \"ops\": 10, \"ns_per_op\": 1, \"bytes_per_op\": 0, \"allocs_per_op\": 0, "  \
    "\"p50_ns\": 1, \"p999_ns\": 1, \"instructions_per_op\": null, \"forks\": 1"
#define MINI_CELL                                                                                  \
    "\"target\": \"a\", \"client\": \"h2bench\", \"connections\": 1, \"streams_requested\": 1, "   \
    "\"streams_effective\": 1, \"repeat\": 0, \"requests\": 10, \"succeeded\": 10, "               \
    "\"failed\": 0, \"errors\": 0, \"duration_s\": 1, \"bytes_per_s\": 0, \"client_cpu_s\": 0, "   \
    "\"server_cpu_s\": 0, \"server_rss_kib\": 0, \"latency_ns\": {\"min\": 1, \"p50\": 10, "       \
    "\"p90\": 20, \"p99\": null, \"p999\": null, \"max\": 40}"

struct bad_case {
    const char *json;
    int line;            /* where the message must point (the column only needs to be > 0) */
    const char *message; /* expected right after "FILE:LINE:COLUMN: " */
};

/* Every case must fail with H2B_ERR_PARSE and a located message: the contract's checks come
 * from core (h2b_results_validate), the optional fields' checks from rdata.c. */
static const struct bad_case bad_results[] = {
    {"{\"schema\": \"h2bench.result/1\",\n  \"created\": ,}", 2, "invalid JSON"},
    {"{\"schema\": \"other/1\"}", 1, "schema: "},
    {MINI_HEAD "\"micro\": {}, \"matrix\": []}", 4, "micro: expected an array"},
    {MINI_HEAD "\"micro\": [{\"ns_per_op\": 1}], \"matrix\": []}", 4,
     "micro[0].name: missing required field"},
    {MINI_HEAD "\"micro\": [{" MINI_MICRO ", \"p99_ns\": \"1\"}], \"matrix\": []}", 4,
     "micro[0].p99_ns: expected a non-negative integer"},
    {MINI_HEAD "\"micro\": [{" MINI_MICRO ", \"p99_ns\": null, \"fork_p99_ns\": [1, -2]}], "
               "\"matrix\": []}",
     4, "micro[0].fork_p99_ns[1]: expected a non-negative number"},
    {MINI_HEAD "\"micro\": [{" MINI_MICRO ", \"p99_ns\": null, \"histogram\": \"h2bh1:AAAA\"}], "
               "\"matrix\": []}",
     4, "micro[0].histogram: not a valid encoded histogram"},
    {MINI_HEAD "\"micro\": [], \"matrix\": [{" MINI_CELL ", \"req_per_s\": 5, "
               "\"status\": \"failed\"}]}",
     4, "matrix[0].status: a failed cell must say why in \"reason\""},
    {MINI_HEAD "\"micro\": [], \"matrix\": [{" MINI_CELL ", \"req_per_s\": 5, "
               "\"status\": \"maybe\"}]}",
     4, "matrix[0].status: expected \"ok\", \"failed\" or \"skipped\", got \"maybe\""},
    {MINI_HEAD "\"micro\": [], \"matrix\": [{" MINI_CELL ", \"req_per_s\": null}]}", 4,
     "matrix[0]: req_per_s is null but the cell is not marked"},
    {MINI_HEAD "\"micro\": [], \"matrix\": [{" MINI_CELL ", \"req_per_s\": 5, "
               "\"latency_histogram\": 7}]}",
     4, "matrix[0].latency_histogram: expected a non-empty string"},
};

static int write_tmp(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void test_results_validation(void)
{
    char path[512];
    struct h2b_diag d;
    for (size_t i = 0; i < sizeof(bad_results) / sizeof(bad_results[0]); i++) {
        const struct bad_case *c = &bad_results[i];
        CHECK(write_tmp("bad.json", c->json, path, sizeof(path)) == 0);
        struct h2b_rdata_results *r = (struct h2b_rdata_results *)&i; /* must stay untouched */
        memset(&d, 0, sizeof(d));
        CHECK_EQ_INT(h2b_rdata_results_load(path, &r, &d), H2B_ERR_PARSE);
        CHECK(r == (struct h2b_rdata_results *)&i);
        if (strcmp(d.file, path) != 0 || d.line != c->line || d.column <= 0 ||
            strncmp(d.message, c->message, strlen(c->message)) != 0) {
            fprintf(stderr, "case %zu: got '%s:%d:%d: %s'\n   expected %s:%d:COL: %s...\n", i,
                    d.file, d.line, d.column, d.message, path, c->line, c->message);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    snprintf(path, sizeof(path), "%s/absent.json", tmpdir);
    struct h2b_rdata_results *r = NULL;
    memset(&d, 0, sizeof(d));
    CHECK_EQ_INT(h2b_rdata_results_load(path, &r, &d), H2B_ERR_NOTFOUND);
    CHECK(strcmp(d.file, path) == 0 && d.message[0]);

    /* A valid document: nulls are NAN, "status": "failed" marks a cell that was not measured */
    const char *ok = MINI_HEAD
        "\"micro\": [{\"name\": \"x\", \"ops\": 1, \"ns_per_op\": 12.5, \"bytes_per_op\": null,"
        " \"allocs_per_op\": null, \"p50_ns\": null, \"p99_ns\": null, \"p999_ns\": null,"
        " \"instructions_per_op\": null, \"forks\": 3, \"fork_p99_ns\": [30, 31, 29]}],\n"
        "\"matrix\": [{" MINI_CELL ", \"req_per_s\": 100, \"status\": \"ok\"},\n"
        "{" MINI_CELL ", \"req_per_s\": null, \"status\": \"failed\", \"reason\": \"died\"}]}";
    CHECK(write_tmp("ok.json", ok, path, sizeof(path)) == 0);
    CHECK_EQ_INT(h2b_rdata_results_load(path, &r, &d), H2B_OK);
    if (r) {
        CHECK_EQ_U64(r->n_micro, 1);
        CHECK(r->micro[0].ns_per_op == 12.5 && isnan(r->micro[0].p99_ns));
        CHECK(isnan(r->micro[0].instructions_per_op));
        CHECK_EQ_U64(r->micro[0].fork_p99_ns.n, 3);
        CHECK_EQ_U64(r->n_cells, 2);
        CHECK(!r->cells[0].failed && r->cells[0].e->failed == 0);
        CHECK(r->cells[0].e->latency_ns.p50 == 10); /* a view of the model's cell */
        CHECK(isnan(r->cells[0].e->latency_ns.p99));
        CHECK(r->cells[1].failed && strcmp(r->cells[1].e->reason, "died") == 0);
        CHECK(h2b_rdata_micro_find(r, "x") == &r->micro[0]);
        CHECK(h2b_rdata_micro_find(r, "y") == NULL);
    }
    h2b_rdata_results_del(r);
}

int main(void)
{
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_fmt();
    test_stats();
    test_strbuf_and_templates();
    test_gnuplot_quote();
    test_gnuplot_discovery();
    test_results_validation();
    /* core's remove-tree, checked here too: a symbolic link inside goes, its target stays */
    char link[600], target[] = "/tmp/h2b-test-report-keep.XXXXXX";
    CHECK(mkdtemp(target) != NULL);
    snprintf(link, sizeof(link), "%s/a/b/link", tmpdir);
    CHECK_EQ_INT(h2b_fs_mkdir_parent(link, 0755), H2B_OK);
    CHECK(symlink(target, link) == 0);
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK);
    CHECK(access(tmpdir, F_OK) != 0);
    CHECK(access(target, F_OK) == 0);
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK); /* already gone is fine */
    rmdir(target);
    return test_report();
}
