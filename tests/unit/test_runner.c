/*
 * test_runner.c - run/runner.h: h2b_run over scenario files, in this process, with real
 * processes on loopback. This binary is both the run's bundled target (run_rig.h: the reference
 * server on an ephemeral port) and its client ("load ...": fake_client sends the cell's requests
 * to the target with the budget driver and writes an h2bench.load/1 object where --json says).
 * H2B_T_CLIENT picks, by the cell's connections, what the client does instead ("2=exit3,3=kill9"):
 * exit 3 with a line on stderr, die of SIGKILL, write no JSON, complete too few requests, kill
 * the target (its pid in $H2B_T_PIDFILE), send SIGINT to the runner, arm the next target start
 * to send it (run_rig.h), or fail unless the report ($H2B_T_REPORT) already shows the table's
 * header.
 *
 * What is asserted: the table's header is out (flushed) before the first client runs; the cells
 * run and recorded in expansion order (alternate targets, --filter,
 * --repeat, effective streams from the probed maximum); an ok cell's record (what the target
 * answered, server CPU and RSS observed, the probe as the maximum's source); a failed cell's
 * status, reason and null metrics for each way a client fails, and that the results file is
 * still written with the exit code saying cells failed; --fail-fast; a target that never starts
 * and one that dies during a cell (its remaining cells fail with the reason, not restarted);
 * SIGINT: the cells done are written and nothing more runs; the budget passes' figures on every
 * cell of their point; the dry run's plan; the exit codes
 * of a malformed scenario, a bad --filter and an unwritable results path.
 */
#include "run/runner.h"
#include "core/error.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/results.h"
#include "run/budget.h"
#include "run/probe.h"
#include "run_rig.h"
#include "test.h"

#include <math.h>
#include <sys/stat.h>

static char tmpdir[] = "/tmp/h2b_test_runner.XXXXXX";

/* ---- the fake client: this binary with "load ..." ---- */

/* What H2B_T_CLIENT says the client of a cell with `connections` does ("ok" by default). */
static void client_mode(uint32_t connections, char *mode, size_t size)
{
    const char *spec = getenv("H2B_T_CLIENT");
    snprintf(mode, size, "ok");
    for (const char *p = spec; p && *p;) {
        char *end;
        unsigned long c = strtoul(p, &end, 10);
        const char *stop = strchr(p, ',');
        size_t len = stop ? (size_t)(stop - p) : strlen(p);
        if (*end == '=' && c == connections && (size_t)(end + 1 - p) < len)
            snprintf(mode, size, "%.*s", (int)(len - (size_t)(end + 1 - p)), end + 1);
        p = stop ? stop + 1 : p + len;
    }
}

/* Sends per_conn requests on each of c connections, at most m in flight, to url (its origin
 * and path). Returns the responses that were 2xx. */
static uint64_t client_requests(const char *url, uint32_t c, uint32_t m, uint64_t per_conn)
{
    char origin[512];
    const char *slash = strncmp(url, "http://", 7) == 0 ? strchr(url + 7, '/') : NULL;
    if (!slash || (size_t)(slash - url) >= sizeof(origin))
        return 0;
    snprintf(origin, sizeof(origin), "%.*s", (int)(slash - url), url);
    struct h2b_budget_request req = {.path = slash};
    struct h2b_budget_client *cl = NULL;
    struct h2b_diag d = {0};
    uint64_t done = 0;
    if (h2b_budget_client_open(&cl, origin, &req, c, 30 * H2B_NS_PER_SEC, &d) == H2B_OK)
        h2b_budget_client_phase(cl, per_conn, m, 30 * H2B_NS_PER_SEC, &done, &d);
    if (d.message[0])
        fprintf(stderr, "fake client: %s\n", d.message);
    h2b_budget_client_del(cl);
    return done;
}

/* Whether process pid has ended (a zombie, or gone): /proc/PID/stat's state. */
static bool ended(long pid)
{
    char path[64], text[512] = "";
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *paren = strrchr(text, ')');
    return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

/* SIGKILLs the target ($H2B_T_PIDFILE) and waits until it has ended, so that the runner finds
 * it dead whenever it looks after this client (bounded, only against a hang). */
static void kill_target(void)
{
    char *text = NULL;
    size_t len = 0;
    const char *pidfile = getenv("H2B_T_PIDFILE");
    if (pidfile && h2b_fs_read_file(pidfile, 64, &text, &len, NULL) == H2B_OK) {
        long pid = strtol(text, NULL, 10);
        if (pid > 1 && kill((pid_t)pid, SIGKILL) == 0)
            for (int i = 0; i < 3000 && !ended(pid); i++)
                h2b_clock_sleep_ns(10 * H2B_NS_PER_MS);
    }
    free(text);
}

/* h2bench load's command line as client.c builds it: -c C -m M -t T -n N --json PATH URL. */
static int fake_client(int argc, char **argv)
{
    uint32_t c = 0, m = 0;
    uint64_t n = 0;
    const char *json = NULL, *url = argv[argc - 1];
    for (int i = 2; i + 1 < argc; i++) {
        if (strcmp(argv[i], "-c") == 0)
            c = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-m") == 0)
            m = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-n") == 0)
            n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            json = argv[++i];
    }
    if (!c || !m || !n || !json) {
        fprintf(stderr, "fake client: -c, -m, -n and --json expected\n");
        return 2;
    }
    char mode[32];
    client_mode(c, mode, sizeof(mode));
    if (strcmp(mode, "exit3") == 0) {
        fprintf(stderr, "fake client: noise\nfake client: boom\n");
        return 3;
    }
    if (strcmp(mode, "kill9") == 0)
        raise(SIGKILL);
    if (strcmp(mode, "nojson") == 0)
        return 0;
    if (strcmp(mode, "sawheader") == 0) {
        /* the table's header is out before the first cell's client runs */
        char *report = NULL;
        size_t len = 0;
        const char *path = getenv("H2B_T_REPORT");
        bool seen = path && h2b_fs_read_file(path, 1u << 20, &report, &len, NULL) == H2B_OK &&
                    strstr(report, "cell  target");
        free(report);
        if (!seen) {
            fprintf(stderr, "fake client: no header in the report yet\n");
            return 3;
        }
    }
    if (strcmp(mode, "killtarget") == 0)
        kill_target();
    const char *arm = getenv("H2B_T_ARM");
    if (strcmp(mode, "arm") == 0 && arm && test_write_text(arm, "armed\n") != 0)
        return 70;
    if (strcmp(mode, "sigint") == 0)
        kill(getppid(), SIGINT);
    uint64_t per_conn = (n + c - 1) / c;
    if (strcmp(mode, "short") == 0)
        per_conn = per_conn / 2 ? per_conn / 2 : 1;
    uint64_t done = strcmp(mode, "killtarget") == 0 ? n : client_requests(url, c, m, per_conn);
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"schema\": \"h2bench.load/1\", \"connections\": %u, \"streams_requested\": %u, "
             "\"streams_effective\": %u, \"requests\": %" PRIu64 ", \"succeeded\": %" PRIu64
             ", \"failed\": %" PRIu64
             ", \"errors\": 0, \"duration_s\": 0.5, \"req_per_s\": %" PRIu64
             ", \"bytes_per_s\": 0}\n",
             c, m, m, done, done, (uint64_t)0, done * 2);
    return test_write_text(json, text) == 0 ? 0 : 70;
}

/* ---- helpers ---- */

/* One h2b_run: the scenario text written to tmpdir/NAME.json, results to tmpdir/NAME.out.json;
 * what it printed in report and log (malloc'd, the caller's). */
struct outcome {
    int rc;
    struct h2b_run_summary sum;
    struct h2b_diag diag;
    char *report, *log;
    char scenario[PATH_MAX], out[PATH_MAX];
};

static void run_scenario(const char *name, const char *text, struct h2b_run_options o,
                         struct outcome *r)
{
    size_t rlen = 0, llen = 0;
    memset(r, 0, sizeof(*r));
    snprintf(r->scenario, sizeof(r->scenario), "%s/%s.json", tmpdir, name);
    snprintf(r->out, sizeof(r->out), "%s/%s.out.json", tmpdir, name);
    CHECK_EQ_INT(test_write_text(r->scenario, text), 0);
    o.scenario = r->scenario;
    if (!o.out)
        o.out = r->out;
    o.self = run_rig_self;
    o.repeat = o.repeat ? o.repeat : 1;
    /* the report a real file, as stdout redirected is: what is not flushed is not there yet */
    char report[PATH_MAX + 16];
    snprintf(report, sizeof(report), "%s/%s.report", tmpdir, name);
    CHECK_EQ_INT(setenv("H2B_T_REPORT", report, 1), 0);
    o.report = fopen(report, "w");
    o.log = open_memstream(&r->log, &llen);
    CHECK(o.report && o.log);
    if (!o.report || !o.log) {
        if (o.report)
            fclose(o.report);
        if (o.log)
            fclose(o.log);
        return;
    }
    r->rc = h2b_run(&o, &r->sum, &r->diag);
    fclose(o.report);
    fclose(o.log);
    CHECK_EQ_INT(h2b_fs_read_file(report, 1u << 20, &r->report, &rlen, NULL), H2B_OK);
}

/* Removes the run directory a failed run kept ("logs kept in DIR" on its log). */
static void outcome_free(struct outcome *r)
{
    const char *kept = r->log ? strstr(r->log, "logs kept in /tmp/h2bench-run-") : NULL;
    if (kept) {
        char dir[512];
        kept += strlen("logs kept in ");
        size_t len = strcspn(kept, "\n");
        snprintf(dir, sizeof(dir), "%.*s", (int)len, kept);
        CHECK_EQ_INT(h2b_fs_remove_tree(dir), H2B_OK);
    }
    free(r->report);
    free(r->log);
}

static struct h2b_results_doc *load_results(const char *path)
{
    struct h2b_results_doc *doc = NULL;
    struct h2b_diag d = {0};
    int rc = h2b_results_doc_load(path, &doc, NULL, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc != H2B_OK)
        h2b_diag_print(&d, stderr);
    return doc;
}

static void check_cell(const struct h2b_results_cell *c, const char *target, double conns,
                       double streams, double repeat)
{
    CHECK_STR(c->target, target);
    CHECK(c->connections == conns);
    CHECK(c->streams_requested == streams);
    CHECK(c->repeat == repeat);
}

/* ---- the tests ---- */

/* Two bundled targets, alternate order, --filter and --repeat: every cell measured, recorded in
 * the expansion's order with what the client and the runner observed. */
static void test_ok_run(void)
{
    static const char scenario[] =
        "{\"name\": \"ok\", \"targets\": [{\"name\": \"a\", \"cpus\": \"0\"},"
        " {\"name\": \"b\", \"cpus\": \"0\", \"max_streams\": 2}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2], \"streams\": [1, 4], \"requests\": 40,"
        " \"min_requests\": 40, \"aggregate_cap\": 6}}";
    struct outcome r;
    CHECK_EQ_INT(setenv("H2B_T_CLIENT", "2=sawheader", 1), 0);
    run_scenario("ok", scenario, (struct h2b_run_options){.filter = "2x*", .repeat = 2}, &r);
    CHECK_EQ_INT(r.rc, H2B_OK);
    if (r.rc != H2B_OK)
        fprintf(stderr, "run: %s\nlog: %s\n", r.diag.message, r.log);
    CHECK_EQ_U64(r.sum.cells, 8);
    CHECK_EQ_U64(r.sum.cells_ok, 8);
    CHECK_EQ_U64(r.sum.cells_failed, 0);
    CHECK_EQ_U64(r.sum.cells_skipped, 0);
    CHECK(!r.sum.interrupted);
    CHECK_STR(r.sum.out, r.out);
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc) {
        CHECK_EQ_U64(doc->matrix.n, 8);
        /* repeats outermost; on every other point the targets' order reversed (the filtered-out
         * 1 x N points count: 2x1 is the third point, 2x4 the fourth) */
        static const struct {
            const char *target;
            double streams, repeat;
        } want[8] = {{"a", 1, 0}, {"b", 1, 0}, {"b", 4, 0}, {"a", 4, 0},
                     {"a", 1, 1}, {"b", 1, 1}, {"b", 4, 1}, {"a", 4, 1}};
        for (size_t k = 0; k < doc->matrix.n && k < 8; k++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(doc, k);
            check_cell(c, want[k].target, 2, want[k].streams, want[k].repeat);
            CHECK_STR(c->status, "ok");
            CHECK(c->reason == NULL);
            CHECK_STR(c->client, "h2bench");
            CHECK_STR(c->protocol, "h2");
            CHECK_STR(c->path, "/hello");
            /* the probed maximum: b advertises 2; the cap gives 6 / 2 = 3 per connection */
            CHECK_STR(c->server_max_streams_source, "probe");
            bool is_b = strcmp(want[k].target, "b") == 0;
            CHECK(c->server_max_streams == (is_b ? 2 : 256));
            double eff = want[k].streams == 1 ? 1 : is_b ? 2 : 3;
            CHECK(c->streams_effective == eff);
            /* what the target answered, as the client counted it */
            CHECK(c->requests == 40);
            CHECK(c->succeeded == 40);
            CHECK(c->failed == 0);
            /* what the runner observed beside the client */
            CHECK(isfinite(c->server_cpu_s) && c->server_cpu_s >= 0);
            CHECK(isfinite(c->server_rss_kib) && c->server_rss_kib > 0);
            CHECK(isfinite(c->client_cpu_s) && c->client_cpu_s >= 0);
        }
        h2b_results_doc_del(doc);
    }
    check_has(r.report, "cell  target");
    outcome_free(&r);
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
}

/* Every way a cell's client fails, each its own cell (by its connections): the cell failed with
 * the reason, metrics null unless the client reported some; the results are written and the
 * exit code says cells failed. Then --fail-fast stops after the first failed cell. */
static void test_client_failures(void)
{
    static const char scenario[] =
        "{\"name\": \"fails\", \"targets\": [{\"name\": \"a\", \"cpus\": \"0\"}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2, 3, 4, 5], \"streams\": [1], \"requests\": 20,"
        " \"min_requests\": 20}}";
    struct outcome r;
    CHECK_EQ_INT(setenv("H2B_T_CLIENT", "2=exit3,3=kill9,4=nojson,5=short", 1), 0);
    run_scenario("fails", scenario, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INTERRUPTED);
    CHECK_EQ_U64(r.sum.cells, 5);
    CHECK_EQ_U64(r.sum.cells_ok, 1);
    CHECK_EQ_U64(r.sum.cells_failed, 4);
    CHECK_STR(r.sum.out, r.out);
    check_has(r.log, "4 of 5 cells failed; logs kept in /tmp/h2bench-run-");
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc && doc->matrix.n == 5) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(doc, 0);
        CHECK_STR(c->status, "ok");
        CHECK(c->succeeded == 20);

        c = h2b_results_doc_cell(doc, 1);
        CHECK_STR(c->status, "failed");
        CHECK_STR(c->reason, "client exited with status 3: fake client: boom");
        CHECK(isnan(c->requests) && isnan(c->succeeded) && isnan(c->req_per_s));
        CHECK(isnan(c->latency_ns.p99));
        CHECK(isfinite(c->server_cpu_s)); /* the server was observed all the same */

        c = h2b_results_doc_cell(doc, 2);
        CHECK_STR(c->status, "failed");
        check_has(c->reason, "client killed by signal 9");
        CHECK(isnan(c->requests));

        c = h2b_results_doc_cell(doc, 3);
        CHECK_STR(c->status, "failed");
        check_has(c->reason, "cannot read the client's results (");
        check_has(c->reason, "cell-3.json)");
        CHECK(isnan(c->requests));

        /* too few: failed, but what the client did is kept */
        c = h2b_results_doc_cell(doc, 4);
        CHECK_STR(c->status, "failed");
        CHECK_STR(c->reason, "10 requests succeeded, fewer than matrix.min_requests (20)");
        CHECK(c->requests == 10);
        CHECK(c->succeeded == 10);
    } else {
        CHECK(!"5 cells in the results");
    }
    h2b_results_doc_del(doc);
    outcome_free(&r);

    run_scenario("failfast", scenario, (struct h2b_run_options){.fail_fast = true}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INTERRUPTED);
    CHECK_EQ_U64(r.sum.cells, 5);
    CHECK_EQ_U64(r.sum.cells_ok, 1);
    CHECK_EQ_U64(r.sum.cells_failed, 1);
    check_has(r.log, "--fail-fast: stopping after cell 2");
    doc = load_results(r.out);
    if (doc) {
        CHECK_EQ_U64(doc->matrix.n, 2);
        if (doc->matrix.n == 2)
            CHECK_STR(h2b_results_doc_cell(doc, 1)->status, "failed");
        h2b_results_doc_del(doc);
    }
    outcome_free(&r);
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
}

/* A command target that exits before it is ready, and a bundled one killed during the first of
 * its cells: the first's cells fail with why it did not start, the second's first cell with
 * its death although the client reported success, and its next cell with "not running". */
static void test_target_failures(void)
{
    static const char scenario[] =
        "{\"name\": \"dies\", \"targets\": [{\"name\": \"gone\", \"type\": \"command\","
        " \"command\": [\"sh\", \"-c\", \"echo cannot bind >&2; exit 5\"], \"cpus\": \"0\"},"
        " {\"name\": \"victim\", \"cpus\": \"0\"}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2], \"streams\": [1], \"requests\": 20,"
        " \"min_requests\": 20, \"order\": \"sequential\"}}";
    char pidfile[PATH_MAX + 16];
    snprintf(pidfile, sizeof(pidfile), "%s/victim.pid", tmpdir);
    CHECK_EQ_INT(setenv("H2B_T_PIDFILE", pidfile, 1), 0);
    CHECK_EQ_INT(setenv("H2B_T_CLIENT", "1=killtarget", 1), 0);
    struct outcome r;
    run_scenario("dies", scenario, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INTERRUPTED);
    CHECK_EQ_U64(r.sum.cells, 4);
    CHECK_EQ_U64(r.sum.cells_failed, 4);
    check_has(r.log, "gone (h2): target did not start: ");
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc && doc->matrix.n == 4) {
        for (size_t k = 0; k < 2; k++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(doc, k);
            CHECK_STR(c->target, "gone");
            CHECK_STR(c->status, "failed");
            check_has(c->reason, "target did not start: ");
            check_has(c->reason, "exited with status 5");
            check_has(c->reason, "cannot bind");
            CHECK(isnan(c->server_cpu_s));
        }
        const struct h2b_results_cell *c = h2b_results_doc_cell(doc, 2);
        CHECK_STR(c->target, "victim");
        CHECK_STR(c->status, "failed");
        check_has(c->reason, "target died during the cell: ");
        check_has(c->reason, "killed by signal 9");
        c = h2b_results_doc_cell(doc, 3);
        CHECK_STR(c->target, "victim");
        CHECK(c->connections == 2);
        CHECK_STR(c->status, "failed");
        check_has(c->reason, "target not running: ");
        check_has(c->reason, "killed by signal 9");
    } else {
        CHECK(!"4 cells in the results");
    }
    h2b_results_doc_del(doc);
    outcome_free(&r);
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
    CHECK_EQ_INT(unsetenv("H2B_T_PIDFILE"), 0);
}

/* SIGINT during the second cell: that cell is recorded as interrupted, no further cell runs,
 * the results hold the two, and the runner's handler is gone afterwards. */
static void test_interrupt(void)
{
    static const char scenario[] =
        "{\"name\": \"stop\", \"targets\": [{\"name\": \"a\", \"cpus\": \"0\"}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2, 3], \"streams\": [1], \"requests\": 20,"
        " \"min_requests\": 20}}";
    CHECK_EQ_INT(setenv("H2B_T_CLIENT", "2=sigint", 1), 0);
    struct outcome r;
    run_scenario("stop", scenario, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INTERRUPTED);
    CHECK(r.sum.interrupted);
    CHECK_EQ_U64(r.sum.cells, 3);
    CHECK_EQ_U64(r.sum.cells_ok, 1);
    CHECK_EQ_U64(r.sum.cells_failed, 1);
    check_has(r.log, "interrupted after 2 of 3 cells");
    CHECK_STR(r.sum.out, r.out);
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc) {
        CHECK_EQ_U64(doc->matrix.n, 2);
        if (doc->matrix.n == 2) {
            CHECK_STR(h2b_results_doc_cell(doc, 0)->status, "ok");
            CHECK_STR(h2b_results_doc_cell(doc, 1)->status, "failed");
            CHECK_STR(h2b_results_doc_cell(doc, 1)->reason, "interrupted (SIGINT) during the cell");
        }
        h2b_results_doc_del(doc);
    }
    struct sigaction sa;
    CHECK_EQ_INT(sigaction(SIGINT, NULL, &sa), 0);
    CHECK(sa.sa_handler == SIG_DFL);
    outcome_free(&r);
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
}

/* A "budgets" block: after the timed cells, each distinct point of the target measured once
 * on a fresh instance, and every matrix entry of that point (here both repeats) given its
 * budgets; the preload is found beside this binary (build/lib) unless sanitized. */
static void test_budgets(void)
{
    static const char scenario[] =
        "{\"name\": \"budgets\", \"targets\": [{\"name\": \"a\", \"cpus\": \"0\"}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2], \"streams\": [3], \"requests\": 20,"
        " \"min_requests\": 20, \"repeats\": 2},"
        " \"budgets\": {\"warmup_requests\": 10, \"requests\": 30, \"instructions\": false,"
        " \"rss_connections\": 2}}";
    struct outcome r;
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
    run_scenario("budgets", scenario, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_OK);
    CHECK_EQ_U64(r.sum.cells_ok, 4);
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc && doc->matrix.n == 4) {
        for (size_t k = 0; k < 4; k++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(doc, k);
            const struct h2b_results_budgets *b = &c->budgets;
            CHECK(b->base.present);
            CHECK(isfinite(h2b_results_budget_get(b, H2B_BUDGET_RSS_PER_CONN)));
            CHECK(isnan(h2b_results_budget_get(b, H2B_BUDGET_INSTRUCTIONS)));
            char why[256] = "";
            CHECK(h2b_model_note_reason(b->note, "instructions_per_request", why, sizeof(why)));
#ifndef H2B_SANITIZED
            CHECK_STR(why, "budgets.instructions is false");
            /* N2 per connection rounded up: 30 on one connection, 2 x 15 on two */
            CHECK(b->warmup_requests == 10);
            CHECK(b->measured_requests == 30);
            CHECK(isfinite(h2b_results_budget_get(b, H2B_BUDGET_READS)));
            CHECK(h2b_results_budget_get(b, H2B_BUDGET_READS) > 0);
#else
            check_has(why, "built with sanitizers");
#endif
        }
        /* the two repeats of a point carry the one measurement of that point */
        const struct h2b_results_budgets *b0 = &h2b_results_doc_cell(doc, 0)->budgets;
        const struct h2b_results_budgets *b2 = &h2b_results_doc_cell(doc, 2)->budgets;
        for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
            double x = h2b_results_budget_get(b0, (enum h2b_budget_metric)m);
            double y = h2b_results_budget_get(b2, (enum h2b_budget_metric)m);
            CHECK((isnan(x) && isnan(y)) || x == y);
        }
    } else {
        CHECK(!"4 cells in the results");
    }
    h2b_results_doc_del(doc);
    outcome_free(&r);
}

/* SIGINT during the budget passes (the first pass's target sends it as it starts, armed by the
 * last cell's client): the run stopped early, so it says so and exits as interrupted; the
 * interrupted target's pass completes, the next target gets none. */
static void test_budgets_interrupted(void)
{
    static const char scenario[] =
        "{\"name\": \"budgets-stop\", \"targets\": [{\"name\": \"a\", \"cpus\": \"0\"},"
        " {\"name\": \"b\", \"cpus\": \"0\"}],"
        " \"client\": {\"cpus\": \"0\", \"timeout_s\": 60},"
        " \"matrix\": {\"connections\": [1, 2], \"streams\": [1], \"requests\": 20,"
        " \"min_requests\": 20},"
        " \"budgets\": {\"warmup_requests\": 10, \"requests\": 10, \"instructions\": false,"
        " \"rss_connections\": 1}}";
    char arm[PATH_MAX + 16];
    snprintf(arm, sizeof(arm), "%s/arm", tmpdir);
    CHECK_EQ_INT(setenv("H2B_T_ARM", arm, 1), 0);
    CHECK_EQ_INT(setenv("H2B_T_CLIENT", "2=arm", 1), 0);
    struct outcome r;
    run_scenario("budgets-stop", scenario, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INTERRUPTED);
    CHECK(r.sum.interrupted);
    CHECK_EQ_U64(r.sum.cells_ok, 4);
    check_has(r.log, "interrupted during the budget passes");
    struct stat st;
    CHECK(stat(arm, &st) != 0); /* a budget instance took it */
    struct h2b_results_doc *doc = load_results(r.out);
    if (doc && doc->matrix.n == 4) {
        for (size_t k = 0; k < 4; k++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(doc, k);
            CHECK_STR(c->status, "ok");
            CHECK(c->budgets.base.present == (strcmp(c->target, "a") == 0));
        }
    } else {
        CHECK(!"4 cells in the results");
    }
    h2b_results_doc_del(doc);
    outcome_free(&r);
    CHECK_EQ_INT(unsetenv("H2B_T_CLIENT"), 0);
    CHECK_EQ_INT(unsetenv("H2B_T_ARM"), 0);
}

/* The dry run starts nothing, writes nothing and prints the plan: the configured maxima. */
static void test_dry_run(void)
{
    static const char scenario[] =
        "{\"name\": \"plan\", \"targets\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
        " \"matrix\": {\"connections\": [1, 10], \"streams\": [1, 100], \"requests\": 1000}}";
    struct outcome r;
    run_scenario("plan", scenario,
                 (struct h2b_run_options){.dry_run = true, .filter = "b,10x*", .repeat = 3}, &r);
    CHECK_EQ_INT(r.rc, H2B_OK);
    /* b's 4 cells and a's two at 10 x N, three times */
    CHECK_EQ_U64(r.sum.cells, 18);
    CHECK_EQ_U64(r.sum.cells_ok, 0);
    CHECK_STR(r.sum.out, "");
    struct stat st;
    CHECK(stat(r.out, &st) != 0);
    check_has(r.report, "18 cells");
    outcome_free(&r);
}

/* Malformed input: the exit codes and what the diagnostics name. */
static void test_bad_input(void)
{
    struct outcome r;
    run_scenario("syntax", "{\"name\": \"x\",\n \"targets\": [}", (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_PARSE);
    check_has(r.diag.file, "syntax.json");
    CHECK_EQ_INT(r.diag.line, 2);
    outcome_free(&r);

    static const char bad_field[] = "{\"name\": \"x\", \"targets\": [{\"name\": \"a\"}],\n"
                                    " \"matrix\": {\"connections\": [1, 0], \"streams\": [1]}}";
    run_scenario("field", bad_field, (struct h2b_run_options){0}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_PARSE);
    check_has(r.diag.message, "matrix.connections[1]");
    CHECK_EQ_INT(r.diag.line, 2);
    outcome_free(&r);

    static const char no_matrix[] = "{\"name\": \"x\", \"micro\": {}}";
    run_scenario("nomatrix", no_matrix, (struct h2b_run_options){.filter = "1x1"}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INVAL);
    CHECK_STR(r.diag.message, "--filter: the scenario has no matrix");
    outcome_free(&r);

    static const char matrix[] = "{\"name\": \"x\", \"targets\": [{\"name\": \"a\"}],"
                                 " \"matrix\": {\"connections\": [1], \"streams\": [1]}}";
    run_scenario("badfilter", matrix, (struct h2b_run_options){.filter = "nope:1x1"}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_INVAL);
    check_has(r.diag.message, "--filter: ");
    check_has(r.diag.message, "nope");
    outcome_free(&r);

    /* results under a regular file: cannot be written, nothing started */
    char blocker[PATH_MAX + 16], out[PATH_MAX + 32];
    snprintf(blocker, sizeof(blocker), "%s/blocker", tmpdir);
    snprintf(out, sizeof(out), "%s/r.json", blocker);
    CHECK_EQ_INT(test_write_text(blocker, "x\n"), 0);
    run_scenario("noout", matrix, (struct h2b_run_options){.out = out}, &r);
    CHECK_EQ_INT(r.rc, H2B_ERR_IO);
    CHECK_STR(r.sum.out, "");
    CHECK_EQ_U64(r.sum.cells, 0);
    outcome_free(&r);
}

int main(int argc, char **argv)
{
    if (run_rig_is_serve(argc, argv))
        return run_rig_serve(argc, argv);
    if (argc > 2 && strcmp(argv[1], "load") == 0)
        return fake_client(argc, argv);
    if (argc > 1) {
        fprintf(stderr, "test_runner: unexpected arguments\n");
        return 2;
    }
    if (!run_rig_init() || !mkdtemp(tmpdir)) {
        perror("setup");
        return 1;
    }
    CHECK_EQ_INT(h2b_probe_global_init(), H2B_OK);
    test_bad_input();
    test_dry_run();
    test_ok_run();
    test_client_failures();
    test_target_failures();
    test_interrupt();
    test_budgets();
    test_budgets_interrupted();
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK);
    return test_report();
}
