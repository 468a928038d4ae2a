/*
 * test_budget.c - run/budget.h: the per-request budgets, driven against a real reference server
 * that this binary starts as a child (run_rig.h), on an ephemeral loopback port.
 *
 * The driver (h2b_budget_client_*): lockstep phases count exactly per_conn x connections
 * responses, held rounds (the target stopped while a round is written) count the same and leave
 * the target running, a non-2xx answer and a gRPC call without grpc-status 0 fail the phase
 * with the reason, a target killed between phases closes it; opening refuses https, a bad URL
 * and a port nobody listens on. The values: h2b_budget_values_null fills only what has neither
 * a value nor a reason, h2b_budget_values_model turns values into the results model (NaN and a
 * note for each null, the sources, N1 and N2, the two callgrind runs only when measured).
 * h2b_budget_find_preload: $H2B_BUDGET_PRELOAD, then <bin>/../lib/. The passes
 * (h2b_budget_measure): a URL target gets every metric null with the reason; a command target
 * without the preload gets its RSS per connection measured and the counts null with the reason;
 * with the preload (not under sanitizers, whose runtime refuses it) the counts are measured over
 * exactly N2 requests; under sanitizers a bundled target gets only its RSS, the rest null with
 * why; the instruction pass is refused with its reason when switched off or
 * when valgrind is not on PATH (callgrind itself is not run here: integration.budgets does).
 */
#include "run/budget.h"
#include "core/error.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/results.h"
#include "run/probe.h"
#include "run/target.h"
#include "run_rig.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

static char tmpdir[] = "/tmp/h2b_test_budget.XXXXXX";

static const struct h2b_budget_request hello = {.path = "/hello"};

/* A command target: this binary's fake server on a port the target module picks. */
static char name_srv[] = "srv", cpus0[] = "0", arg_serve[] = "--serve", arg_port[] = "{port}";
static char *serve_command[] = {run_rig_self, arg_serve, arg_port, NULL};

static struct h2b_target_spec server_spec(void)
{
    return (struct h2b_target_spec){.name = name_srv,
                                    .kind = H2B_TARGET_COMMAND,
                                    .cpus = cpus0,
                                    .threads = 1,
                                    .ready_timeout_s = 60,
                                    .command = serve_command,
                                    .ncommand = 3,
                                    .protocols = 1u << H2B_PROTO_H2,
                                    .name_given = true};
}

static struct h2b_target *start_server(const char *sub)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/%s", tmpdir, sub);
    CHECK_EQ_INT(h2b_fs_mkdir_p(dir, 0755), H2B_OK);
    static struct h2b_target_spec spec; /* the target keeps a pointer to it */
    spec = server_spec();
    struct h2b_target_env env = {.self = run_rig_self, .dir = dir, .ready_path = "/hello"};
    struct h2b_target *t = NULL;
    struct h2b_diag d = {0};
    int rc = h2b_target_start(&t, &spec, &env, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc != H2B_OK)
        fprintf(stderr, "start: %s\n", d.message);
    return t;
}

/* The one-letter state of pid in /proc/PID/stat ('T': stopped), or '?'. */
static char proc_state(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close_paren = strrchr(text, ')');
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
}

/* ---- the driver ---- */

static void test_client_phases(void)
{
    struct h2b_target *t = start_server("phases");
    if (!t)
        return;
    const char *url = h2b_target_url(t);
    struct h2b_budget_client *cl = NULL;
    struct h2b_diag d = {0};
    uint64_t done = 0;
    CHECK_EQ_INT(h2b_budget_client_open(&cl, url, &hello, 3, 10 * H2B_NS_PER_SEC, &d), H2B_OK);
    if (cl) {
        /* 7 per connection in rounds of 3 (3, 3, 1): every response counted, none more */
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 7, 3, 30 * H2B_NS_PER_SEC, &done, &d), H2B_OK);
        CHECK_EQ_U64(done, 21);
        /* held rounds: the target stopped while each round is written, continued after */
        h2b_budget_client_hold(cl, h2b_target_pid(t), false);
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 4, 2, 30 * H2B_NS_PER_SEC, &done, &d), H2B_OK);
        CHECK_EQ_U64(done, 12);
        CHECK(proc_state(h2b_target_pid(t)) != 'T');
        CHECK(h2b_target_alive(t, &d));
        /* streams 0 means one in flight; the count is per phase, not cumulative */
        h2b_budget_client_hold(cl, 0, false);
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 2, 0, 30 * H2B_NS_PER_SEC, &done, &d), H2B_OK);
        CHECK_EQ_U64(done, 6);
        h2b_budget_client_del(cl);
    }

    /* a path the server does not have: every request answered 404, the phase fails */
    const struct h2b_budget_request missing = {.path = "/no-such-path"};
    cl = NULL;
    CHECK_EQ_INT(h2b_budget_client_open(&cl, url, &missing, 2, 10 * H2B_NS_PER_SEC, &d), H2B_OK);
    if (cl) {
        memset(&d, 0, sizeof(d));
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 3, 1, 30 * H2B_NS_PER_SEC, &done, &d),
                     H2B_ERR_PROTO);
        CHECK_EQ_U64(done, 0);
        check_has(d.message, "6 of 6 requests failed: a response was not 2xx");
        h2b_budget_client_del(cl);
    }

    /* a "gRPC call" to a plain path: 200 without grpc-status 0 is not a successful call */
    static const uint8_t body[5] = {0, 0, 0, 0, 0};
    const struct h2b_budget_request grpc = {
        .path = "/hello", .grpc = true, .body = body, .body_len = sizeof(body)};
    cl = NULL;
    CHECK_EQ_INT(h2b_budget_client_open(&cl, url, &grpc, 1, 10 * H2B_NS_PER_SEC, &d), H2B_OK);
    if (cl) {
        memset(&d, 0, sizeof(d));
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 2, 1, 30 * H2B_NS_PER_SEC, &done, &d),
                     H2B_ERR_PROTO);
        CHECK_EQ_U64(done, 0);
        check_has(d.message, "2 of 2 requests failed");
        h2b_budget_client_del(cl);
    }

    /* the target killed between phases: the next phase ends with the connection closed */
    cl = NULL;
    CHECK_EQ_INT(h2b_budget_client_open(&cl, url, &hello, 2, 10 * H2B_NS_PER_SEC, &d), H2B_OK);
    if (cl) {
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 1, 1, 30 * H2B_NS_PER_SEC, &done, &d), H2B_OK);
        CHECK_EQ_U64(done, 2);
        CHECK_EQ_INT(kill(h2b_target_pid(t), SIGKILL), 0);
        for (int i = 0; i < 6000 && h2b_target_alive(t, NULL); i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        memset(&d, 0, sizeof(d));
        CHECK_EQ_INT(h2b_budget_client_phase(cl, 5, 1, 30 * H2B_NS_PER_SEC, &done, &d),
                     H2B_ERR_CLOSED);
        CHECK(done < 10);
        check_has(d.message, "closed or failed during the phase");
        h2b_budget_client_del(cl);
    }
    h2b_target_del(t);
}

/* What opening refuses: TLS, a malformed URL, a port nobody listens on. */
static void test_client_open_errors(void)
{
    struct h2b_budget_client *cl = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_budget_client_open(&cl, "https://127.0.0.1:1", &hello, 1, H2B_NS_PER_SEC, &d),
                 H2B_ERR_UNSUPPORTED);
    check_has(d.message, "budgets need an h2c (http://) target");
    CHECK(cl == NULL);
    CHECK_EQ_INT(h2b_budget_client_open(&cl, "not a url", &hello, 1, H2B_NS_PER_SEC, &d),
                 H2B_ERR_INVAL);
    check_has(d.message, "not a url: ");
    CHECK(cl == NULL);

    /* a port that was free a moment ago: bound, then closed, so nothing listens there */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
    CHECK_EQ_INT(h2b_budget_client_open(&cl, url, &hello, 2, H2B_NS_PER_SEC, &d), H2B_ERR_SYS);
    check_has(d.message, "connection 1 of 2 to 127.0.0.1:");
    check_has(d.message, strerror(ECONNREFUSED));
    CHECK(cl == NULL);
    h2b_budget_client_del(NULL); /* NULL is fine */
}

/* ---- the values ---- */

static void test_values(void)
{
    struct h2b_budget_values v = {.connections = 2, .streams = 4};
    v.have[H2B_BUDGET_ALLOCS] = true;
    v.v[H2B_BUDGET_ALLOCS] = 12.5;
    v.have[H2B_BUDGET_RSS_PER_CONN] = true;
    v.v[H2B_BUDGET_RSS_PER_CONN] = 3.25;
    snprintf(v.why[H2B_BUDGET_READS], sizeof(v.why[0]), "%s", "own reason");
    /* only what has neither a value nor a reason gets this one */
    h2b_budget_values_null(&v, "the target did not start");
    CHECK_STR(v.why[H2B_BUDGET_READS], "own reason");
    CHECK_STR(v.why[H2B_BUDGET_BYTES], "the target did not start");
    CHECK_STR(v.why[H2B_BUDGET_INSTRUCTIONS], "the target did not start");
    CHECK_STR(v.why[H2B_BUDGET_ALLOCS], "");
    CHECK(v.have[H2B_BUDGET_ALLOCS]);

    v.why[H2B_BUDGET_WRITES][0] = '\0'; /* a null without a reason: "not measured" */
    v.warmup_requests = 100;
    v.requests = 200;
    snprintf(v.alloc_source, sizeof(v.alloc_source), "%s", "preload");
    struct h2b_results_budgets b;
    CHECK_EQ_INT(h2b_budget_values_model(&v, &b), H2B_OK);
    CHECK(b.base.present);
    CHECK(h2b_results_budget_get(&b, H2B_BUDGET_ALLOCS) == 12.5);
    CHECK(h2b_results_budget_get(&b, H2B_BUDGET_RSS_PER_CONN) == 3.25);
    CHECK(isnan(h2b_results_budget_get(&b, H2B_BUDGET_BYTES)));
    CHECK(isnan(h2b_results_budget_get(&b, H2B_BUDGET_INSTRUCTIONS)));
    CHECK(b.warmup_requests == 100);
    CHECK(b.measured_requests == 200);
    CHECK_STR(b.alloc_source, "preload");
    CHECK_STR(b.instructions_source, "callgrind");
    CHECK_EQ_U64(b.instructions_runs.n, 0); /* no callgrind run: no runs */
    char why[256] = "";
    CHECK(h2b_model_note_reason(b.note, "reads_per_request", why, sizeof(why)));
    CHECK_STR(why, "own reason");
    CHECK(h2b_model_note_reason(b.note, "writes_per_request", why, sizeof(why)));
    CHECK_STR(why, "not measured");
    CHECK(h2b_model_note_reason(b.note, "bytes_per_request", why, sizeof(why)));
    CHECK_STR(why, "the target did not start");
    CHECK(!h2b_model_note_reason(b.note, "allocs_per_request", why, sizeof(why)));
    h2b_model_free(&h2b_results_budgets_model, &b);

    /* measured instructions: both runs kept; no alloc source: none recorded */
    struct h2b_budget_values w = {0};
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
        w.have[m] = true;
        w.v[m] = m + 1;
    }
    w.instr_runs[0] = 4106.1;
    w.instr_runs[1] = 4106.8;
    CHECK_EQ_INT(h2b_budget_values_model(&w, &b), H2B_OK);
    CHECK(b.note == NULL);
    CHECK(b.alloc_source == NULL);
    CHECK_EQ_U64(b.instructions_runs.n, 2);
    if (b.instructions_runs.n == 2)
        CHECK(b.instructions_runs.v[0] == 4106.1 && b.instructions_runs.v[1] == 4106.8);
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++)
        CHECK(h2b_results_budget_get(&b, (enum h2b_budget_metric)m) == m + 1);
    h2b_model_free(&h2b_results_budgets_model, &b);
}

static void test_find_preload(void)
{
    char buf[PATH_MAX], bin[PATH_MAX], lib[PATH_MAX], so[PATH_MAX + 32], exe[PATH_MAX + 32];
    snprintf(bin, sizeof(bin), "%s/inst/bin", tmpdir);
    snprintf(lib, sizeof(lib), "%s/inst/lib", tmpdir);
    snprintf(so, sizeof(so), "%s/h2bench-budget.so", lib);
    snprintf(exe, sizeof(exe), "%s/h2bench", bin);
    CHECK_EQ_INT(h2b_fs_mkdir_p(bin, 0755), H2B_OK);
    CHECK_EQ_INT(h2b_fs_mkdir_p(lib, 0755), H2B_OK);
    CHECK_EQ_INT(unsetenv("H2B_BUDGET_PRELOAD"), 0);
    /* none beside the executable */
    CHECK(!h2b_budget_find_preload(exe, buf, sizeof(buf)));
    CHECK_STR(buf, "");
    /* <bin>/../lib/h2bench-budget.so, resolved */
    CHECK_EQ_INT(test_write_text(so, "not really a library\n"), 0);
    CHECK(h2b_budget_find_preload(exe, buf, sizeof(buf)));
    char *real = realpath(so, NULL);
    CHECK_STR(buf, real);
    free(real);
    /* the environment wins, when it names a readable file */
    char other[PATH_MAX + 16];
    snprintf(other, sizeof(other), "%s/other.so", tmpdir);
    CHECK_EQ_INT(test_write_text(other, "x\n"), 0);
    CHECK_EQ_INT(setenv("H2B_BUDGET_PRELOAD", other, 1), 0);
    CHECK(h2b_budget_find_preload(exe, buf, sizeof(buf)));
    CHECK_STR(buf, other);
    snprintf(other, sizeof(other), "%s/missing.so", tmpdir);
    CHECK_EQ_INT(setenv("H2B_BUDGET_PRELOAD", other, 1), 0);
    CHECK(!h2b_budget_find_preload(exe, buf, sizeof(buf)));
    CHECK_STR(buf, "");
    CHECK_EQ_INT(unsetenv("H2B_BUDGET_PRELOAD"), 0);
}

/* ---- the passes ---- */

static void check_reason(const struct h2b_budget_values *v, enum h2b_budget_metric m,
                         const char *want)
{
    CHECK(!v->have[m]);
    check_has(v->why[m], want);
}

static void test_measure_url(void)
{
    char name[] = "remote", url[] = "http://127.0.0.1:1";
    struct h2b_target_spec spec = {.name = name, .kind = H2B_TARGET_URL, .url = url, .cpus = cpus0};
    struct h2b_budgets_spec budgets = {
        .enabled = true, .warmup_requests = 10, .requests = 20, .rss_connections = 2};
    struct h2b_budget_job job = {
        .spec = &spec, .env = {.self = run_rig_self, .dir = tmpdir}, .budgets = &budgets};
    struct h2b_budget_values v[2] = {{.connections = 1, .streams = 1},
                                     {.connections = 2, .streams = 2}};
    h2b_budget_measure(&job, v, 2, NULL);
    for (size_t i = 0; i < 2; i++)
        for (int m = 0; m < H2B_BUDGET_NMETRICS; m++)
            check_reason(&v[i], (enum h2b_budget_metric)m, "url target: not started by the runner");
}

/* No preload: RSS per connection is still measured on a plain instance; the counts are null
 * with the reason; the instruction pass is off. Then with the pass on and no valgrind on PATH:
 * refused with its reason. */
static void test_measure_plain(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/plain", tmpdir);
    CHECK_EQ_INT(h2b_fs_mkdir_p(dir, 0755), H2B_OK);
    struct h2b_target_spec spec = server_spec();
    struct h2b_budgets_spec budgets = {.enabled = true,
                                       .warmup_requests = 10,
                                       .requests = 20,
                                       .instructions = false,
                                       .rss_connections = 4};
    struct h2b_budget_job job = {
        .spec = &spec,
        .env = {.self = run_rig_self, .dir = dir, .ready_path = "/hello"},
        .budgets = &budgets,
        .req = hello,
    };
    struct h2b_budget_values v[2] = {{.connections = 1, .streams = 1},
                                     {.connections = 2, .streams = 3}};
    char *progress = NULL;
    size_t plen = 0;
    FILE *pf = open_memstream(&progress, &plen);
    CHECK(pf != NULL);
    h2b_budget_measure(&job, v, 2, pf);
    if (pf)
        fclose(pf);
    check_has(progress ? progress : "", "budgets srv: counting pass (preload)\n");
    free(progress);
    for (size_t i = 0; i < 2; i++) {
        CHECK(v[i].have[H2B_BUDGET_RSS_PER_CONN]);
        CHECK(isfinite(v[i].v[H2B_BUDGET_RSS_PER_CONN]));
        check_reason(&v[i], H2B_BUDGET_ALLOCS, "h2bench-budget.so not found");
        check_reason(&v[i], H2B_BUDGET_BYTES, "h2bench-budget.so not found");
        check_reason(&v[i], H2B_BUDGET_READS, "h2bench-budget.so not found");
        check_reason(&v[i], H2B_BUDGET_WRITES, "h2bench-budget.so not found");
        check_reason(&v[i], H2B_BUDGET_WRITES_PER_READ, "h2bench-budget.so not found");
        check_reason(&v[i], H2B_BUDGET_INSTRUCTIONS, "budgets.instructions is false");
        CHECK_STR(v[i].alloc_source, "");
    }
    /* the same RSS figure for every point: one measurement on the fresh process */
    CHECK(v[0].v[H2B_BUDGET_RSS_PER_CONN] == v[1].v[H2B_BUDGET_RSS_PER_CONN]);

    /* rss_connections 0: RSS skipped with its reason; valgrind not on PATH: refused */
    budgets.rss_connections = 0;
    budgets.instructions = true;
    const char *path = getenv("PATH");
    char saved[8192];
    snprintf(saved, sizeof(saved), "%s", path ? path : "");
    CHECK_EQ_INT(setenv("PATH", dir, 1), 0); /* an empty directory: no valgrind there */
    h2b_budget_measure(&job, v, 1, NULL);
    CHECK_EQ_INT(setenv("PATH", saved, 1), 0);
    check_reason(&v[0], H2B_BUDGET_RSS_PER_CONN, "budgets.rss_connections is 0");
    check_reason(&v[0], H2B_BUDGET_INSTRUCTIONS, "valgrind/vgdb not installed");
}

/* A target that cannot start: every metric of the passes that needed it null with why. */
static void test_measure_no_start(void)
{
    char dir[PATH_MAX], sh[] = "sh", c[] = "-c", exits[] = "echo cannot bind >&2; exit 4";
    char *command[] = {sh, c, exits, NULL};
    snprintf(dir, sizeof(dir), "%s/nostart", tmpdir);
    CHECK_EQ_INT(h2b_fs_mkdir_p(dir, 0755), H2B_OK);
    struct h2b_target_spec spec = server_spec();
    spec.command = command;
    spec.ncommand = 3;
    struct h2b_budgets_spec budgets = {
        .enabled = true, .warmup_requests = 10, .requests = 20, .rss_connections = 4};
    struct h2b_budget_job job = {
        .spec = &spec,
        .env = {.self = run_rig_self, .dir = dir, .ready_path = "/hello"},
        .budgets = &budgets,
        .req = hello,
    };
    struct h2b_budget_values v = {.connections = 1, .streams = 1};
    h2b_budget_measure(&job, &v, 1, NULL);
    check_reason(&v, H2B_BUDGET_RSS_PER_CONN, "the target did not start for this pass");
    check_has(v.why[H2B_BUDGET_RSS_PER_CONN], "exited with status 4");
    check_reason(&v, H2B_BUDGET_ALLOCS, "the target did not start for this pass");
    check_reason(&v, H2B_BUDGET_INSTRUCTIONS, "budgets.instructions is false");
}

#ifdef H2B_SANITIZED
/* A sanitized h2bench's bundled server (this binary, as sanitized): RSS is measured on a plain
 * instance, every other metric null with why (the sanitizer runtime owns malloc). */
static void test_measure_sanitized(void)
{
    char dir[PATH_MAX], name[] = "h2ref";
    snprintf(dir, sizeof(dir), "%s/sanitized", tmpdir);
    CHECK_EQ_INT(h2b_fs_mkdir_p(dir, 0755), H2B_OK);
    struct h2b_target_spec spec = {.name = name,
                                   .kind = H2B_TARGET_BUNDLED,
                                   .cpus = cpus0,
                                   .threads = 1,
                                   .ready_timeout_s = 60};
    struct h2b_budgets_spec budgets = {.enabled = true,
                                       .warmup_requests = 10,
                                       .requests = 20,
                                       .instructions = true,
                                       .rss_connections = 2};
    struct h2b_budget_job job = {
        .spec = &spec,
        .env = {.self = run_rig_self, .dir = dir, .ready_path = "/hello"},
        .budgets = &budgets,
        .req = hello,
        .preload = "/nonexistent/h2bench-budget.so",
    };
    struct h2b_budget_values v = {.connections = 1, .streams = 1};
    h2b_budget_measure(&job, &v, 1, NULL);
    CHECK(v.have[H2B_BUDGET_RSS_PER_CONN]);
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++)
        if (m != H2B_BUDGET_RSS_PER_CONN)
            check_reason(&v, (enum h2b_budget_metric)m, "built with sanitizers");
}
#endif

#ifndef H2B_SANITIZED
#ifdef H2B_BUDGET_SO
/* The counting pass with the real preload: per-request counts over exactly N2 requests. */
static void test_measure_counts(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/counts", tmpdir);
    CHECK_EQ_INT(h2b_fs_mkdir_p(dir, 0755), H2B_OK);
    struct h2b_target_spec spec = server_spec();
    struct h2b_budgets_spec budgets = {.enabled = true,
                                       .warmup_requests = 30,
                                       .requests = 41,
                                       .instructions = false,
                                       .rss_connections = 3};
    struct h2b_budget_job job = {
        .spec = &spec,
        .env = {.self = run_rig_self, .dir = dir, .ready_path = "/hello"},
        .budgets = &budgets,
        .req = hello,
        .preload = H2B_BUDGET_SO,
    };
    struct h2b_budget_values v[2] = {{.connections = 1, .streams = 1},
                                     {.connections = 2, .streams = 4}};
    h2b_budget_measure(&job, v, 2, NULL);
    /* N per connection rounded up: 1 x 30 + 41, then 2 x 15 + 2 x 21 */
    CHECK_EQ_U64(v[0].warmup_requests, 30);
    CHECK_EQ_U64(v[0].requests, 41);
    CHECK_EQ_U64(v[1].warmup_requests, 30);
    CHECK_EQ_U64(v[1].requests, 42);
    for (size_t i = 0; i < 2; i++) {
        for (int m = H2B_BUDGET_ALLOCS; m <= H2B_BUDGET_WRITES_PER_READ; m++) {
            CHECK(v[i].have[m]);
            if (!v[i].have[m])
                fprintf(stderr, "point %zu metric %d: %s\n", i, m, v[i].why[m]);
        }
        /* every request is read and answered: at least one of each per request */
        CHECK(v[i].v[H2B_BUDGET_READS] > 0);
        CHECK(v[i].v[H2B_BUDGET_WRITES] > 0);
        CHECK(v[i].v[H2B_BUDGET_WRITES_PER_READ] > 0);
        CHECK(v[i].v[H2B_BUDGET_ALLOCS] >= 0);
        CHECK(v[i].alloc_source[0] != '\0');
        CHECK(v[i].have[H2B_BUDGET_RSS_PER_CONN]);
        check_reason(&v[i], H2B_BUDGET_INSTRUCTIONS, "budgets.instructions is false");
    }
    /* one request in flight on one connection: every request its own read */
    CHECK(v[0].v[H2B_BUDGET_READS] >= 1);
}
#endif
#endif

int main(int argc, char **argv)
{
    if (run_rig_is_serve(argc, argv))
        return run_rig_serve(argc, argv);
    if (argc > 1) {
        fprintf(stderr, "test_budget: unexpected arguments\n");
        return 2;
    }
    if (!run_rig_init() || !mkdtemp(tmpdir)) {
        perror("setup");
        return 1;
    }
    CHECK_EQ_INT(h2b_probe_global_init(), H2B_OK);
    test_values();
    test_find_preload();
    test_client_open_errors();
    test_client_phases();
    test_measure_url();
    test_measure_plain();
    test_measure_no_start();
#ifdef H2B_SANITIZED
    test_measure_sanitized();
#endif
#ifndef H2B_SANITIZED
#ifdef H2B_BUDGET_SO
    test_measure_counts();
#endif
#endif
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK);
    return test_report();
}
