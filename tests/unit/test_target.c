/*
 * test_target.c - run/target.h without a peer: which targets serve which cells
 * (h2b_target_serves), and the lifecycle of started targets whose program is this test binary
 * itself, in a fake-server mode (see fake_main): a command target (placeholders, its "env" over
 * the inherited environment, the budget pass's extra_env and wrapper, cwd, stdout.log and
 * stderr.log, url, pid, cpu, rss, death by a signal and its logs quoted), a bundled and a
 * floor target (the h2bench serve / floor-serve command lines, the URL from the "listening on"
 * line, a server that exits before it is ready), a URL target (answering, and not), and the
 * failures before any probe (a program that is not executable, a bad CPU list, a command that
 * exits, one that never answers). Real processes on loopback, ephemeral ports; no deadline is
 * asserted, the waits only bound a hang.
 */
#include "run/target.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "run/probe.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#define FAKE_RECORD "args.txt"

static char tmpdir[] = "/tmp/h2b_test_target.XXXXXX";
static char self[PATH_MAX];

/* ---- the fake server (this binary with "serve", "floor-serve" or "--serve PORT ...") ---- */

/* A listening socket on 127.0.0.1:port (0: any); its port in *out. -1 on failure. */
static int listen_on(uint16_t port, uint16_t *out)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    socklen_t len = sizeof(a);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *out = ntohs(a.sin_port);
    return fd;
}

/* Answers every HTTP/1.1 request on fd with 200 until killed. */
static void serve_h1(int fd)
{
    static const char resp[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    for (;;) {
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[2048];
        size_t have = 0;
        while (have < sizeof(buf) - 1) {
            ssize_t n = read(c, buf + have, sizeof(buf) - 1 - have);
            if (n <= 0)
                break;
            have += (size_t)n;
            buf[have] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        if (write(c, resp, sizeof(resp) - 1) < 0)
            perror("fake server: write");
        close(c);
    }
}

/* Writes argv, the H2B_T_* variables and the working directory to FAKE_RECORD in the working
 * directory, one per line. */
static void record(int argc, char **argv)
{
    extern char **environ;
    FILE *f = fopen(FAKE_RECORD, "w");
    if (!f)
        _exit(70);
    for (int i = 0; i < argc; i++)
        fprintf(f, "arg %s\n", argv[i]);
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "H2B_T_", 6) == 0)
            fprintf(f, "env %s\n", *e);
    char cwd[PATH_MAX];
    fprintf(f, "cwd %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
    if (fclose(f) != 0)
        _exit(70);
}

/* serve / floor-serve (a bundled or floor target; cwd: the test's directory): H2B_T_MODE
 * "exit" fails before the ready line, otherwise a noise line, the ready line, and HTTP/1.1.
 * --serve PORT (a command target): stdout and stderr lines, then HTTP/1.1 on PORT. */
static int fake_main(int argc, char **argv)
{
    record(argc, argv);
    uint16_t port = 0;
    if (strcmp(argv[1], "--serve") == 0) {
        printf("out-line\n");
        fprintf(stderr, "err-line\n");
        fflush(NULL);
        char *end;
        unsigned long want = strtoul(argv[2], &end, 10);
        int fd = *end || want == 0 || want > 65535 ? -1 : listen_on((uint16_t)want, &port);
        if (fd < 0)
            return 71;
        serve_h1(fd);
        return 0;
    }
    const char *mode = getenv("H2B_T_MODE");
    if (mode && strcmp(mode, "exit") == 0) {
        fprintf(stderr, "fake: cannot bind\n");
        return 2;
    }
    int fd = listen_on(0, &port);
    if (fd < 0)
        return 71;
    printf("starting\nlistening on http://127.0.0.1:%u\n", port);
    fflush(stdout);
    serve_h1(fd);
    return 0;
}

/* ---- helpers ---- */

/* The record the fake wrote in dir, or "" (a static buffer). */
static const char *record_of(const char *dir)
{
    static char text[8192];
    char path[PATH_MAX];
    char *t = NULL;
    size_t len = 0;
    struct h2b_diag d;
    snprintf(path, sizeof(path), "%s/%s", dir, FAKE_RECORD);
    text[0] = '\0';
    if (h2b_fs_read_file(path, sizeof(text) - 1, &t, &len, &d) == H2B_OK)
        snprintf(text, sizeof(text), "%s", t);
    free(t);
    return text;
}

/* A fresh private directory for one target (the env's dir). */
static void target_dir(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
    CHECK_EQ_INT(h2b_fs_mkdir_p(buf, 0755), H2B_OK);
}

static struct h2b_target_spec spec_of(enum h2b_target_kind kind, char *name, char *cpus)
{
    return (struct h2b_target_spec){
        .name = name, .kind = kind, .cpus = cpus, .threads = 1, .ready_timeout_s = 60};
}

/* Waits (bounded, only against a hang) until t is no longer alive; diag says how it ended. */
static bool wait_dead(struct h2b_target *t, struct h2b_diag *d)
{
    for (int i = 0; i < 6000; i++) {
        if (!h2b_target_alive(t, d))
            return true;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* ---- tests ---- */

static void test_serves(void)
{
    char name[] = "t", peer_name[] = "p", tls_peer_name[] = "pt", missing[] = "nope";
    char url_h2c[] = "http://127.0.0.1:1", url_tls[] = "https://127.0.0.1:1", cpus[] = "0";
    struct h2b_peer peer_list[2] = {
        {.name = peer_name, .protocols = 1u << H2B_PROTO_H2},
        {.name = tls_peer_name,
         .protocols = (1u << H2B_PROTO_H2) | (1u << H2B_PROTO_H1) | (1u << H2B_PROTO_H3),
         .has_tls = true},
    };
    struct h2b_peers peers = {.peers = peer_list, .npeers = 2};
    struct h2b_diag d;
    struct h2b_target_spec s = spec_of(H2B_TARGET_BUNDLED, name, cpus);
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, false, &d));
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H1, true, false, &d));
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H3, true, true, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H3, true, false, &d));
    check_has(d.message, "built without HTTP/3");
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H3, false, true, &d));
    check_has(d.message, "always TLS");

    s = spec_of(H2B_TARGET_PEER, name, cpus);
    s.peer = peer_name;
    CHECK(h2b_target_serves(&s, &peers, H2B_PROTO_H2, false, true, &d));
    CHECK(!h2b_target_serves(&s, &peers, H2B_PROTO_H1, false, true, &d));
    check_has(d.message, "peer p does not serve h1");
    CHECK(!h2b_target_serves(&s, &peers, H2B_PROTO_H2, true, true, &d));
    check_has(d.message, "peer p has no TLS configuration");
    s.peer = tls_peer_name;
    CHECK(h2b_target_serves(&s, &peers, H2B_PROTO_H2, true, true, &d));
    CHECK(h2b_target_serves(&s, &peers, H2B_PROTO_H1, false, true, &d));
    CHECK(!h2b_target_serves(&s, &peers, H2B_PROTO_H3, true, true, &d));
    check_has(d.message, "starts no HTTP/3 peer");
    s.peer = missing;
    CHECK(!h2b_target_serves(&s, &peers, H2B_PROTO_H2, false, true, &d));
    check_has(d.message, "peer nope does not serve h2");
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, true, &d));

    s = spec_of(H2B_TARGET_URL, name, cpus);
    s.url = url_h2c;
    s.protocols = (1u << H2B_PROTO_H2) | (1u << H2B_PROTO_H1);
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, false, &d));
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H1, false, false, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H3, true, true, &d));
    check_has(d.message, "target t declares \"protocols\" without h3");
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, true, false, &d));
    check_has(d.message, "url target t is cleartext only");
    s.url = url_tls;
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H2, true, false, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, false, &d));
    check_has(d.message, "url target t is TLS only");

    s = spec_of(H2B_TARGET_COMMAND, name, cpus);
    s.protocols = 1u << H2B_PROTO_H2;
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, false, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H1, false, false, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, true, false, &d));
    check_has(d.message, "command targets are started cleartext only");

    s = spec_of(H2B_TARGET_FLOOR, name, cpus);
    CHECK(h2b_target_serves(&s, NULL, H2B_PROTO_H2, false, true, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, true, true, &d));
    check_has(d.message, "cleartext h2 cells only");
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H1, false, true, &d));
    CHECK(!h2b_target_serves(&s, NULL, H2B_PROTO_H2, true, true, NULL)); /* diag may be NULL */
}

/* A command target: this binary with --serve {port} and placeholders, the scenario's env over
 * the inherited one, extra_env and a wrapper, cwd {dir}. */
static void test_command(void)
{
    char dir[PATH_MAX], name[] = "mine", cpus[] = "0", log[PATH_MAX + 32];
    target_dir(dir, sizeof(dir), "command");
    char a1[] = "--serve", a2[] = "{port}", a3[] = "{host}:{port}", a4[] = "t={threads}",
         a5[] = "s={max_streams}", a6[] = "{dir}/x", a7[] = "{docroot}", cwd[] = "{dir}";
    char *command[] = {self, a1, a2, a3, a4, a5, a6, a7, NULL};
    char e1[] = "H2B_T_SCEN=scenario", e2[] = "H2B_T_BOTH=from the scenario";
    char *envs[] = {e1, e2, NULL};
    const char *extra[] = {"H2B_T_BUDGET=budget pass", NULL};
    const char *wrapper[] = {"env", "H2B_T_WRAPPED=1", NULL};
    CHECK_EQ_INT(setenv("H2B_T_BOTH", "inherited", 1), 0);
    CHECK_EQ_INT(setenv("H2B_T_INHERITED", "yes", 1), 0);
    struct h2b_target_spec s = spec_of(H2B_TARGET_COMMAND, name, cpus);
    s.threads = 3;
    s.command = command;
    s.ncommand = 8;
    s.env = envs;
    s.nenv = 2;
    s.cwd = cwd;
    s.protocols = 1u << H2B_PROTO_H1;
    struct h2b_target_env env = {.self = self,
                                 .dir = dir,
                                 .docroot = "/srv/www",
                                 .ready_path = "/",
                                 .extra_env = extra,
                                 .wrapper = wrapper,
                                 .protocol = H2B_PROTO_H1};
    struct h2b_target *t = NULL;
    struct h2b_diag d = {0};
    int rc = h2b_target_start(&t, &s, &env, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc != H2B_OK) {
        fprintf(stderr, "start: %s\n", d.message);
        return;
    }
    const char *rec = record_of(dir);
    unsigned port = 0;
    CHECK(sscanf(h2b_target_url(t), "http://127.0.0.1:%u", &port) == 1 && port > 0);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "arg %s\narg --serve\narg %u\narg 127.0.0.1:%u\n", self, port,
             port);
    check_has(rec, want);
    check_has(rec, "arg t=3\narg s=256\n"); /* max_streams: the bundled server's default */
    snprintf(want, sizeof(want), "arg %s/x\narg /srv/www\n", dir);
    check_has(rec, want);
    check_has(rec, "env H2B_T_SCEN=scenario\n");
    check_has(rec, "env H2B_T_BOTH=from the scenario\n"); /* replaces the inherited value */
    CHECK(strstr(rec, "H2B_T_BOTH=inherited") == NULL);
    check_has(rec, "env H2B_T_INHERITED=yes\n");
    check_has(rec, "env H2B_T_BUDGET=budget pass\n");
    check_has(rec, "env H2B_T_WRAPPED=1\n"); /* the wrapper ran first */
    snprintf(want, sizeof(want), "cwd %s\n", dir);
    check_has(rec, want);
    CHECK_STR(h2b_target_program(t), self); /* the program, not the wrapper */
    snprintf(log, sizeof(log), "%s/stdout.log", dir);
    CHECK_STR(h2b_target_log(t), log);
    pid_t pid = h2b_target_pid(t);
    CHECK(pid > 0);
    CHECK(h2b_target_alive(t, &d));
    uint64_t cpu = 0, rss = 0;
    CHECK_EQ_INT(h2b_target_cpu_ns(t, &cpu), H2B_OK);
    CHECK_EQ_INT(h2b_target_rss_kib(t, &rss), H2B_OK);
    CHECK(rss > 0);

    /* killed: alive says how, with the last lines of both logs, and keeps saying so */
    CHECK_EQ_INT(kill(pid, SIGKILL), 0);
    CHECK(wait_dead(t, &d));
    check_has(d.message, "mine killed by signal 9");
    check_has(d.message, "(stdout: out-line) (stderr: err-line)");
    memset(&d, 0, sizeof(d));
    CHECK(!h2b_target_alive(t, &d));
    check_has(d.message, "mine killed by signal 9");
    h2b_target_del(t);
    CHECK_EQ_INT(unsetenv("H2B_T_BOTH"), 0);
    CHECK_EQ_INT(unsetenv("H2B_T_INHERITED"), 0);
}

/* h2bench serve and floor-serve: their command lines, the URL from the ready line; stopped by
 * h2b_target_del. */
static void test_bundled_and_floor(void)
{
    char dir[PATH_MAX], name[] = "h2ref", cpus[] = "0", extra_arg[] = "--verbose";
    char *args[] = {extra_arg, NULL};
    target_dir(dir, sizeof(dir), "bundled");
    CHECK_EQ_INT(chdir(dir), 0); /* the fake writes its record in its working directory */
    struct h2b_target_spec s = spec_of(H2B_TARGET_BUNDLED, name, cpus);
    s.threads = 2;
    s.max_streams = 100;
    s.args = args;
    s.nargs = 1;
    struct h2b_target_env env = {
        .self = self, .dir = dir, .ready_path = "/", .protocol = H2B_PROTO_H1};
    struct h2b_target *t = NULL;
    struct h2b_diag d = {0};
    int rc = h2b_target_start(&t, &s, &env, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc == H2B_OK) {
        char want[PATH_MAX + 256];
        snprintf(want, sizeof(want),
                 "arg %s\narg serve\narg --host\narg 127.0.0.1\narg --port\narg 0\narg --threads\n"
                 "arg 2\narg --cpus\narg 0\narg --max-streams\narg 100\narg --verbose\ncwd",
                 self);
        check_has(record_of(dir), want);
        unsigned port = 0;
        CHECK(sscanf(h2b_target_url(t), "http://127.0.0.1:%u", &port) == 1 && port > 0);
        char log[PATH_MAX + 32];
        snprintf(log, sizeof(log), "%s/server.log", dir);
        CHECK_STR(h2b_target_log(t), log);
        pid_t pid = h2b_target_pid(t);
        CHECK(pid > 0);
        h2b_target_del(t); /* SIGTERM, reaped */
        CHECK(kill(pid, 0) != 0 && errno == ESRCH);
    } else {
        fprintf(stderr, "start: %s\n", d.message);
    }

    /* the floor: its sizes; its ready line is all it waits for */
    s = spec_of(H2B_TARGET_FLOOR, name, cpus);
    s.floor_request = 40;
    s.floor_response = 1234;
    rc = h2b_target_start(&t, &s, &env, &d);
    CHECK_EQ_INT(rc, H2B_OK);
    if (rc == H2B_OK) {
        check_has(record_of(dir), "arg floor-serve\narg --host\narg 127.0.0.1\narg --port\narg 0\n"
                                  "arg --request-bytes\narg 40\narg --response-bytes\narg 1234\n");
        CHECK(strncmp(h2b_target_url(t), "http://127.0.0.1:", 17) == 0);
        h2b_target_del(t);
    }

    /* a server that exits before its ready line */
    CHECK_EQ_INT(setenv("H2B_T_MODE", "exit", 1), 0);
    s = spec_of(H2B_TARGET_BUNDLED, name, cpus);
    t = NULL;
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_CLOSED);
    CHECK(t == NULL);
    check_has(d.message, "h2bench serve exited before it was ready");
    check_has(d.message, "(log: fake: cannot bind)");
    CHECK_EQ_INT(unsetenv("H2B_T_MODE"), 0);
    CHECK_EQ_INT(chdir("/"), 0);
}

/* A URL target is only probed: answering (no process: pid 0, always alive, no cpu or rss), and
 * not answering (H2B_ERR_TIMEOUT). */
static void test_url(void)
{
    uint16_t port = 0;
    int fd = listen_on(0, &port);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        serve_h1(fd);
        _exit(0);
    }
    close(fd);
    char dir[PATH_MAX], name[] = "remote", cpus[] = "0", url[64];
    target_dir(dir, sizeof(dir), "url");
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", port);
    struct h2b_target_spec s = spec_of(H2B_TARGET_URL, name, cpus);
    s.url = url;
    struct h2b_target_env env = {
        .self = self, .dir = dir, .ready_path = "/", .protocol = H2B_PROTO_H1};
    struct h2b_target *t = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_OK);
    if (t) {
        CHECK_STR(h2b_target_url(t), url);
        CHECK_EQ_INT(h2b_target_pid(t), 0);
        CHECK(h2b_target_alive(t, &d));
        uint64_t v;
        CHECK_EQ_INT(h2b_target_cpu_ns(t, &v), H2B_ERR_UNSUPPORTED);
        CHECK_EQ_INT(h2b_target_rss_kib(t, &v), H2B_ERR_UNSUPPORTED);
        CHECK_STR(h2b_target_program(t), "");
        h2b_target_del(t);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* nothing listens there now */
    s.ready_timeout_s = 0.3;
    t = NULL;
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_TIMEOUT);
    CHECK(t == NULL);
}

/* Failures of command targets: not executable, a bad CPU list, exits at once, never answers. */
static void test_command_failures(void)
{
    char dir[PATH_MAX], prog[PATH_MAX + 16], name[] = "bad", cpus[] = "0", bad_cpus[] = "x";
    target_dir(dir, sizeof(dir), "fail");
    snprintf(prog, sizeof(prog), "%s/prog", dir);
    CHECK_EQ_INT(test_write_text(prog, "#!/bin/sh\nexit 0\n"), 0);
    CHECK_EQ_INT(chmod(prog, 0644), 0);
    char *command[] = {prog, NULL};
    struct h2b_target_spec s = spec_of(H2B_TARGET_COMMAND, name, cpus);
    s.command = command;
    s.ncommand = 1;
    s.protocols = 1u << H2B_PROTO_H2;
    struct h2b_target_env env = {.self = self, .dir = dir, .ready_path = "/"};
    struct h2b_target *t = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_SYS);
    check_has(d.message, "not executable");
    CHECK(t == NULL);

    char sh[] = "sh", c[] = "-c", exits[] = "echo out-line; echo err-line >&2; exit 3",
         sleeps[] = "exec sleep 60";
    char *exit_cmd[] = {sh, c, exits, NULL};
    s.command = exit_cmd;
    s.ncommand = 3;
    s.cpus = bad_cpus;
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_INVAL);
    check_has(d.message, "bad CPU list 'x'");
    s.cpus = cpus;
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_CLOSED);
    check_has(d.message, "bad exited with status 3");
    check_has(d.message, "(stdout: out-line) (stderr: err-line)");
    check_has(d.message, "before it was ready");
    CHECK(t == NULL);

    char *sleep_cmd[] = {sh, c, sleeps, NULL};
    s.command = sleep_cmd;
    s.ready_timeout_s = 0.3;
    CHECK_EQ_INT(h2b_target_start(&t, &s, &env, &d), H2B_ERR_TIMEOUT);
    check_has(d.message, "not answering after ready_timeout_s (0.3 s)");
    CHECK(t == NULL);
}

int main(int argc, char **argv)
{
    if (argc > 2 && (strcmp(argv[1], "serve") == 0 || strcmp(argv[1], "floor-serve") == 0 ||
                     strcmp(argv[1], "--serve") == 0))
        return fake_main(argc, argv);
    if (argc > 1) {
        /* started with arguments it does not know (a broken command line): never the tests,
         * which would start this binary again */
        fprintf(stderr, "test_target: unexpected arguments\n");
        return 2;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || !mkdtemp(tmpdir)) {
        perror("setup");
        return 1;
    }
    self[n] = '\0';
    CHECK_EQ_INT(h2b_probe_global_init(), H2B_OK);
    test_serves();
    test_command();
    test_bundled_and_floor();
    test_url();
    test_command_failures();
    CHECK_EQ_INT(h2b_fs_remove_tree(tmpdir), H2B_OK);
    return test_report();
}
