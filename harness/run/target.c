/*
 * target.c - starting, watching and stopping matrix targets.
 *
 * Processes go through the core process helpers (proc.h): pinned before exec, stdout of the
 * bundled server read line by line with a deadline, everything else into a log file in the
 * target's directory so a failure can quote it. Peers cannot be told to use port 0 and report
 * it, so the runner picks a free loopback port (bind to port 0, read it back, close) just
 * before starting them; the window in which another process could take it is a few
 * milliseconds on a machine where only we start servers, and a lost race shows as a target
 * that never becomes ready, with the peer's own "address in use" in the reason.
 */
#include "run/target.h"

#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "run/probe.h"
#include "core/proc.h"
#include "core/url.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_GRACE_NS (5 * H2B_NS_PER_SEC)
#define PROBE_SLICE_NS (300 * H2B_NS_PER_MS)
#define LOOPBACK "127.0.0.1"

struct h2b_target {
    const struct h2b_target_spec *spec;
    struct h2b_proc *proc; /* NULL for URL targets */
    char url[sizeof("https://") + H2B_URL_AUTHORITY_MAX];
    char log[512];
    char err_log[512]; /* command targets: stderr apart from stdout; "" otherwise */
    char program[4096];
    bool dead; /* reaped: dead says how it ended */
    struct h2b_diag dead_diag;
    /* bundled and floor targets: the I/O backend their "io:" line named ("epoll" without one,
     * the default) and, after a fallback, its reason; "" for the other kinds */
    char io[8];
    char io_fallback[200];
};

static int free_port(uint16_t *out)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    inet_pton(AF_INET, LOOPBACK, &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return H2B_ERR_SYS;
    int rc = H2B_ERR_SYS;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
        *out = ntohs(a.sin_port);
        rc = H2B_OK;
    }
    close(fd);
    return rc;
}

static void free_argv(char **argv)
{
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}

/* The bundled server's command line: h2bench serve on an ephemeral loopback port. */
static int bundled_argv(const struct h2b_target_spec *spec, const struct h2b_target_env *env,
                        char ***out)
{
    size_t n = 17 + spec->nargs; /* the fixed 12, --tls --cert F --key F, the scenario's */
    char **argv = calloc(n + 1, sizeof(*argv));
    char num[32], streams[32];
    size_t k = 0;
    if (!argv)
        return H2B_ERR_NOMEM;
    snprintf(num, sizeof(num), "%u", spec->threads);
    snprintf(streams, sizeof(streams), "%u",
             spec->max_streams ? spec->max_streams : H2B_TARGET_BUNDLED_MAX_STREAMS);
    const char *fixed[] = {env->self,   "serve", "--host", LOOPBACK,   "--port",        "0",
                           "--threads", num,     "--cpus", spec->cpus, "--max-streams", streams};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        argv[k++] = strdup(fixed[i]);
    if (env->protocol == H2B_PROTO_H3) {
        argv[k++] = strdup("--h3"); /* implies --tls; its QUIC side makes its own certificate */
    } else if (env->tls) {
        argv[k++] = strdup("--tls");
        if (env->cert && env->key) {
            argv[k++] = strdup("--cert");
            argv[k++] = strdup(env->cert);
            argv[k++] = strdup("--key");
            argv[k++] = strdup(env->key);
        }
    }
    for (size_t i = 0; i < spec->nargs; i++)
        argv[k++] = strdup(spec->args[i]);
    for (size_t i = 0; i < k; i++) {
        if (!argv[i]) {
            free_argv(argv);
            return H2B_ERR_NOMEM;
        }
    }
    *out = argv;
    return H2B_OK;
}

/* The placeholders of a started server on a free loopback port (no TLS files: the caller sets
 * them); max_streams when the scenario sets none. H2B_OK or H2B_ERR_SYS (diag says why). */
static int loopback_vars(const struct h2b_target_spec *spec, const struct h2b_target_env *env,
                         uint32_t max_streams, struct h2b_peer_vars *vars, struct h2b_diag *diag)
{
    uint16_t port;
    if (free_port(&port)) {
        h2b_diag_at(diag, NULL, 0, 0, "no free loopback port");
        return H2B_ERR_SYS;
    }
    *vars = (struct h2b_peer_vars){
        .host = LOOPBACK,
        .port = port,
        .threads = spec->threads,
        .max_streams = spec->max_streams ? spec->max_streams : max_streams,
        .docroot = env->docroot,
        .dir = env->dir,
    };
    return H2B_OK;
}

/* Peer command line, rendered configuration, and the URL it will answer on. */
static int peer_argv(struct h2b_target *t, const struct h2b_target_env *env, char ***out,
                     struct h2b_diag *diag)
{
    const struct h2b_target_spec *spec = t->spec;
    const struct h2b_peer *peer = env->peers ? h2b_peers_find(env->peers, spec->peer) : NULL;
    struct h2b_peer_vars vars;
    if (!peer) {
        h2b_diag_at(diag, NULL, 0, 0, "unknown peer '%s'", spec->peer);
        return H2B_ERR_NOTFOUND;
    }
    if (loopback_vars(spec, env, peer->max_streams, &vars, diag))
        return H2B_ERR_SYS;
    vars.cert = env->tls ? env->cert : NULL;
    vars.key = env->tls ? env->key : NULL;
    const struct h2b_peer_variant *variant = env->tls ? &peer->tls
                                             : env->protocol == H2B_PROTO_H1 && peer->has_h1
                                                 ? &peer->h1
                                                 : NULL;
    char **argv = NULL;
    int rc = h2b_peers_prepare(env->peers, peer, variant, &vars, &argv, diag);
    if (rc)
        return rc;
    /* A peer h2bench builds itself (h2bench-grpcpp-echo) is found beside the running h2bench
     * first, in build/bin or the install's bindir, then in PATH as any other command. */
    char self[PATH_MAX], beside[PATH_MAX + 256];
    if (!strchr(argv[0], '/') && h2b_self_dir(self, sizeof(self)) == H2B_OK &&
        (size_t)snprintf(beside, sizeof(beside), "%s/%s", self, argv[0]) < sizeof(beside) &&
        access(beside, X_OK) == 0) {
        char *full = strdup(beside);
        if (!full) {
            free_argv(argv);
            return H2B_ERR_NOMEM;
        }
        free(argv[0]);
        argv[0] = full;
    }
    /* Extra scenario arguments go after the template's: most servers let later flags win. */
    if (spec->nargs) {
        size_t n = 0;
        while (argv[n])
            n++;
        char **grown = realloc(argv, (n + spec->nargs + 1) * sizeof(*argv));
        if (!grown) {
            free_argv(argv);
            return H2B_ERR_NOMEM;
        }
        argv = grown;
        for (size_t i = 0; i < spec->nargs; i++)
            argv[n + i] = strdup(spec->args[i]);
        argv[n + spec->nargs] = NULL;
        for (size_t i = 0; i < spec->nargs; i++) {
            if (!argv[n + i]) {
                free_argv(argv);
                return H2B_ERR_NOMEM;
            }
        }
    }
    snprintf(t->url, sizeof(t->url), "%s://%s:%u", env->tls ? "https" : "http", LOOPBACK,
             vars.port);
    *out = argv;
    return H2B_OK;
}

/* A url target's scheme (validated when the scenario was read). */
static bool url_is_tls(const char *url)
{
    struct h2b_url u;
    return h2b_url_parse(url, H2B_URL_ORIGIN, &u, NULL) == H2B_OK && u.tls;
}

bool h2b_target_serves(const struct h2b_target_spec *spec, const struct h2b_peers *peers,
                       enum h2b_protocol protocol, bool tls, bool have_h3, struct h2b_diag *diag)
{
    const char *name = h2b_protocol_name(protocol);
    const struct h2b_peer *peer =
        spec->kind == H2B_TARGET_PEER && peers ? h2b_peers_find(peers, spec->peer) : NULL;
    switch (spec->kind) {
    case H2B_TARGET_BUNDLED:
        if (protocol == H2B_PROTO_H3 && !have_h3) {
            h2b_diag_at(diag, NULL, 0, 0, "this h2bench was built without HTTP/3 (H2B_H3=OFF)");
            return false;
        }
        if (protocol == H2B_PROTO_H3 && !tls) {
            h2b_diag_at(diag, NULL, 0, 0, "HTTP/3 runs over QUIC, which is always TLS");
            return false;
        }
        return true;
    case H2B_TARGET_PEER:
        if (!peer || !(peer->protocols & (1u << protocol))) {
            h2b_diag_at(diag, NULL, 0, 0, "peer %s does not serve %s (servers/peers/peers.json)",
                        spec->peer, name);
            return false;
        }
        if (protocol == H2B_PROTO_H3) {
            h2b_diag_at(diag, NULL, 0, 0,
                        "h2bench run starts no HTTP/3 peer (its readiness is TCP)");
            return false;
        }
        if (tls && !peer->has_tls) {
            h2b_diag_at(diag, NULL, 0, 0,
                        "peer %s has no TLS configuration (servers/peers/peers.json)", spec->peer);
            return false;
        }
        return true;
    case H2B_TARGET_URL:
    case H2B_TARGET_COMMAND:
        if (!(spec->protocols & (1u << protocol))) {
            h2b_diag_at(diag, NULL, 0, 0, "target %s declares \"protocols\" without %s", spec->name,
                        name);
            return false;
        }
        if (spec->kind == H2B_TARGET_URL && tls != url_is_tls(spec->url)) {
            h2b_diag_at(diag, NULL, 0, 0, "url target %s is %s only", spec->name,
                        tls ? "cleartext" : "TLS");
            return false;
        }
        if (spec->kind == H2B_TARGET_COMMAND && tls) {
            h2b_diag_at(diag, NULL, 0, 0,
                        "command targets are started cleartext only (no TLS command line)");
            return false;
        }
        return true;
    case H2B_TARGET_FLOOR:
        if (protocol != H2B_PROTO_H2 || tls) {
            h2b_diag_at(diag, NULL, 0, 0,
                        "the floor stands beside cleartext h2 cells only (its sizes are h2c's)");
            return false;
        }
        return true;
    }
    return false;
}

/* The user's command line with the peers' placeholders filled in, its working directory, and
 * the URL it will answer on. */
static int command_argv(struct h2b_target *t, const struct h2b_target_env *env, char ***out,
                        char **cwd, struct h2b_diag *diag)
{
    const struct h2b_target_spec *spec = t->spec;
    struct h2b_peer_vars vars;
    if (loopback_vars(spec, env, H2B_TARGET_BUNDLED_MAX_STREAMS, &vars, diag))
        return H2B_ERR_SYS;
    char **argv = calloc(spec->ncommand + 1, sizeof(*argv));
    int rc = argv ? H2B_OK : H2B_ERR_NOMEM;
    for (size_t i = 0; rc == H2B_OK && i < spec->ncommand; i++)
        rc = h2b_peers_expand(spec->command[i], &vars, NULL, &argv[i], diag);
    if (rc == H2B_OK && spec->cwd)
        rc = h2b_peers_expand(spec->cwd, &vars, NULL, cwd, diag);
    if (rc) {
        free_argv(argv);
        return rc;
    }
    snprintf(t->url, sizeof(t->url), "http://%s:%u", LOOPBACK, vars.port);
    *out = argv;
    return H2B_OK;
}

/* argv[0] as exec will find it: relative to cwd, or searched in PATH when it has no '/'. */
static void resolve_program(const char *argv0, const char *cwd, char *buf, size_t size)
{
    if (strchr(argv0, '/')) {
        if (argv0[0] != '/' && cwd)
            snprintf(buf, size, "%s/%s", cwd, argv0);
        else
            snprintf(buf, size, "%s", argv0);
        return;
    }
    if (h2b_find_program(argv0, buf, size) != H2B_OK)
        snprintf(buf, size, "%s", argv0);
}

/* wrapper + argv, NULL-terminated; the strings are borrowed. */
static char **wrapped_argv(const char *const *wrapper, char **argv)
{
    size_t nw = 0, na = 0;
    while (wrapper && wrapper[nw])
        nw++;
    while (argv[na])
        na++;
    char **v = calloc(nw + na + 1, sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < nw; i++)
        v[i] = (char *)wrapper[i];
    for (size_t i = 0; i < na; i++)
        v[nw + i] = argv[i];
    return v;
}

extern char **environ;

/* The parent's environment with the scenario's and the budget pass's variables on top (a name
 * given again replaces the inherited value). Strings borrowed; free the array only. */
static char **merged_env(const struct h2b_target_spec *spec, const struct h2b_target_env *env)
{
    size_t ne = 0, nx = 0;
    while (environ[ne])
        ne++;
    while (env->extra_env && env->extra_env[nx])
        nx++;
    char **v = calloc(ne + spec->nenv + nx + 1, sizeof(*v));
    if (!v)
        return NULL;
    size_t k = 0;
    const char *const *adds[2] = {(const char *const *)spec->env, env->extra_env};
    for (size_t i = 0; i < ne; i++) {
        size_t len = strcspn(environ[i], "=");
        bool replaced = false;
        for (size_t a = 0; a < 2; a++)
            for (const char *const *x = adds[a]; x && *x; x++)
                replaced = replaced || (strncmp(*x, environ[i], len) == 0 && (*x)[len] == '=');
        if (!replaced)
            v[k++] = environ[i];
    }
    for (size_t a = 0; a < 2; a++)
        for (const char *const *x = adds[a]; x && *x; x++)
            v[k++] = (char *)*x;
    return v;
}

/* Appends the last line of the target's log(s) to diag's message, which usually says what
 * went wrong. */
static void quote_log(const struct h2b_target *t, struct h2b_diag *diag)
{
    char last[256];
    if (!diag)
        return;
    char *msg = diag->message;
    size_t size = sizeof(diag->message);
    h2b_fs_last_line(t->log, last, sizeof(last));
    size_t len = strlen(msg);
    if (last[0] && len + 4 < size)
        h2b_reason(msg + len, size - len, " (%s: %s)", t->err_log[0] ? "stdout" : "log", last);
    if (t->err_log[0]) {
        h2b_fs_last_line(t->err_log, last, sizeof(last));
        len = strlen(msg);
        if (last[0] && len + 4 < size)
            h2b_reason(msg + len, size - len, " (stderr: %s)", last);
    }
}

/* The floor's command line: h2bench floor-serve on an ephemeral loopback port, with the
 * target's request and response sizes and I/O backend (scenario.h H2B_TARGET_FLOOR). */
static int floor_argv(const struct h2b_target_spec *spec, const struct h2b_target_env *env,
                      char ***out)
{
    char req[16], resp[16];
    snprintf(req, sizeof(req), "%u", spec->floor_request);
    snprintf(resp, sizeof(resp), "%u", spec->floor_response);
    const char *io = spec->floor_uring ? "uring" : "epoll";
    const char *fixed[] = {
        env->self, "floor-serve",      "--host", LOOPBACK, "--port", "0", "--request-bytes",
        req,       "--response-bytes", resp,     "--io",   io,       NULL};
    size_t n = sizeof(fixed) / sizeof(fixed[0]);
    char **argv = calloc(n, sizeof(*argv));
    if (!argv)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i + 1 < n; i++) {
        if (!(argv[i] = strdup(fixed[i]))) {
            free_argv(argv);
            return H2B_ERR_NOMEM;
        }
    }
    *out = argv;
    return H2B_OK;
}

/* An "io:" line of h2bench serve or floor-serve --io uring, before its ready line: "io: uring",
 * or "io: epoll (io_uring unavailable: WHY)" into t->io and t->io_fallback. Other text is
 * ignored (the default, epoll, stays). */
static void io_line(struct h2b_target *t, const char *line)
{
    static const char fell[] = "io: epoll (io_uring unavailable: ";
    size_t len = strlen(line);
    if (strcmp(line, "io: uring") == 0) {
        snprintf(t->io, sizeof(t->io), "uring");
    } else if (strncmp(line, fell, strlen(fell)) == 0 && len > strlen(fell) &&
               line[len - 1] == ')') {
        snprintf(t->io, sizeof(t->io), "epoll");
        snprintf(t->io_fallback, sizeof(t->io_fallback), "%.*s", (int)(len - strlen(fell) - 1),
                 line + strlen(fell));
    }
}

/* Waits for "listening on http://HOST:PORT" on the bundled server's stdout. */
static int read_ready_line(struct h2b_target *t, uint64_t timeout_ns, struct h2b_diag *diag)
{
    static const char prefix[] = "listening on ";
    snprintf(t->io, sizeof(t->io), "epoll");
    uint64_t deadline = h2b_clock_now_ns() + timeout_ns;
    char line[512];
    for (;;) {
        uint64_t now = h2b_clock_now_ns();
        int rc = now < deadline ? h2b_proc_read_line(t->proc, line, sizeof(line), deadline - now)
                                : H2B_ERR_TIMEOUT;
        if (rc == H2B_ERR_TIMEOUT) {
            h2b_diag_at(diag, NULL, 0, 0, "no \"listening on\" line within %.1f s",
                        (double)timeout_ns / 1e9);
            return rc;
        }
        if (rc == H2B_ERR_CLOSED && !h2b_proc_exited(t->proc, NULL)) {
            /* End of the file so far: the server has not printed its line yet. */
            h2b_clock_sleep_ns(10 * H2B_NS_PER_MS);
            continue;
        }
        if (rc < 0) {
            h2b_diag_at(diag, NULL, 0, 0, "h2bench %s exited before it was ready",
                        t->spec->kind == H2B_TARGET_FLOOR ? "floor-serve" : "serve");
            return H2B_ERR_CLOSED;
        }
        io_line(t, line);
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            if (snprintf(t->url, sizeof(t->url), "%s", line + strlen(prefix)) >=
                (int)sizeof(t->url))
                continue; /* not a URL we can use */
            return H2B_OK;
        }
    }
}

int h2b_target_start(struct h2b_target **out, const struct h2b_target_spec *spec,
                     const struct h2b_target_env *env, struct h2b_diag *diag)
{
    struct h2b_target *t = calloc(1, sizeof(*t));
    char **argv = NULL, **full = NULL, **envp = NULL, *cwd = NULL;
    int rc;
    if (!t)
        return H2B_ERR_NOMEM;
    t->spec = spec;
    uint64_t timeout =
        (uint64_t)(spec->ready_timeout_s * (env->timeout_scale > 0 ? env->timeout_scale : 1) * 1e9);
    snprintf(t->log, sizeof(t->log), "%s/server.log", env->dir);
    if (spec->kind == H2B_TARGET_COMMAND) {
        snprintf(t->log, sizeof(t->log), "%s/stdout.log", env->dir);
        snprintf(t->err_log, sizeof(t->err_log), "%s/stderr.log", env->dir);
    }
    if (spec->kind == H2B_TARGET_URL) {
        snprintf(t->url, sizeof(t->url), "%s", spec->url);
        if ((rc = h2b_probe_ready(t->url, env->ready_path, env->protocol == H2B_PROTO_H1, timeout,
                                  diag)))
            goto fail;
        *out = t;
        return H2B_OK;
    }
    rc = spec->kind == H2B_TARGET_BUNDLED   ? bundled_argv(spec, env, &argv)
         : spec->kind == H2B_TARGET_FLOOR   ? floor_argv(spec, env, &argv)
         : spec->kind == H2B_TARGET_COMMAND ? command_argv(t, env, &argv, &cwd, diag)
                                            : peer_argv(t, env, &argv, diag);
    if (rc == H2B_OK) {
        resolve_program(argv[0], cwd, t->program, sizeof(t->program));
        full = wrapped_argv(env->wrapper, argv);
        if (spec->nenv || env->extra_env)
            envp = merged_env(spec, env);
        if (!full || ((spec->nenv || env->extra_env) && !envp))
            rc = H2B_ERR_NOMEM;
    }
    if (rc) {
        if (rc == H2B_ERR_NOMEM)
            h2b_diag_at(diag, NULL, 0, 0, "out of memory");
        goto fail;
    }
    cpu_set_t cpus;
    if (h2b_cpu_parse_list(spec->cpus, &cpus) != H2B_OK) {
        h2b_diag_at(diag, NULL, 0, 0, "bad CPU list '%s'", spec->cpus);
        rc = H2B_ERR_INVAL;
        goto fail;
    }
    /* Output goes to a file, never a pipe: a server that logs would block on a full pipe.
     * read_line tails the file for the bundled server's ready line. Servers that fork lead
     * their own process group so stopping them stops every process they made. */
    struct h2b_proc_opts opts = {
        .cpus = &cpus,
        .out = H2B_PROC_FILE,
        .out_path = t->log,
        .err = H2B_PROC_FILE,
        .err_path = t->err_log,
        .err_to_out = t->err_log[0] == '\0',
        .envp = envp,
        .cwd = cwd,
        .kill_on_parent_exit = true,
        .new_process_group = true,
    };
    if (spec->kind == H2B_TARGET_COMMAND && !env->wrapper && access(t->program, F_OK) == 0 &&
        access(t->program, X_OK) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot start %s: not executable (%s)", argv[0],
                    strerror(errno));
        rc = H2B_ERR_SYS;
        goto fail;
    }
    if ((rc = h2b_proc_spawn(&t->proc, full, &opts))) {
        int e = errno;
        h2b_diag_at(diag, NULL, 0, 0, "cannot start %s: %s%s%s", argv[0], h2b_strerror(rc),
                    rc == H2B_ERR_SYS ? ": " : "", rc == H2B_ERR_SYS ? strerror(e) : "");
        goto fail;
    }
    if (spec->kind == H2B_TARGET_BUNDLED || spec->kind == H2B_TARGET_FLOOR) {
        if ((rc = read_ready_line(t, timeout, diag)))
            goto fail_stop;
        /* h2bench serve answers as soon as it prints; probing anyway costs one request. The
         * floor speaks no HTTP: its line is all there is to wait for. */
        if (spec->kind == H2B_TARGET_FLOOR)
            goto started;
    }
    /* Probe in slices and look at the process between them: a server that exits at once is
     * reported at once, not after the whole readiness deadline. */
    uint64_t deadline = h2b_clock_now_ns() + timeout;
    for (;;) {
        uint64_t now = h2b_clock_now_ns();
        uint64_t left = now < deadline ? deadline - now : 0;
        rc = h2b_probe_ready(t->url, env->ready_path, env->protocol == H2B_PROTO_H1,
                             left < PROBE_SLICE_NS ? left : PROBE_SLICE_NS, diag);
        struct h2b_diag alive = {0};
        if (rc == H2B_OK)
            break;
        if (!h2b_target_alive(t, &alive)) {
            h2b_diag_at(diag, NULL, 0, 0, "%s before it was ready", alive.message);
            rc = H2B_ERR_CLOSED;
            goto fail_stop_quoted;
        }
        if (h2b_clock_now_ns() >= deadline) {
            char probe_why[200];
            h2b_reason(probe_why, sizeof(probe_why), "%s", diag ? diag->message : "");
            h2b_diag_at(diag, NULL, 0, 0, "not answering after ready_timeout_s (%.1f s): %s",
                        (double)timeout / 1e9, probe_why);
            rc = H2B_ERR_TIMEOUT;
            goto fail_stop;
        }
    }
started:
    free_argv(argv);
    free(full);
    free(envp);
    free(cwd);
    *out = t;
    return H2B_OK;
fail_stop:
    quote_log(t, diag);
fail_stop_quoted:
fail:
    free_argv(argv);
    free(full);
    free(envp);
    free(cwd);
    h2b_target_del(t);
    return rc;
}

void h2b_target_del(struct h2b_target *t)
{
    if (!t)
        return;
    if (t->proc) {
        /* SIGTERM: every server here shuts down cleanly on it; after the grace period
         * h2b_proc_wait SIGKILLs. */
        h2b_proc_signal(t->proc, t->spec->stop_signal ? t->spec->stop_signal : SIGTERM);
        h2b_proc_wait(t->proc, STOP_GRACE_NS, NULL);
        h2b_proc_del(t->proc);
    }
    free(t);
}

const char *h2b_target_url(const struct h2b_target *t)
{
    return t->url;
}

pid_t h2b_target_pid(const struct h2b_target *t)
{
    return t->proc ? h2b_proc_pid(t->proc) : 0;
}

const char *h2b_target_log(const struct h2b_target *t)
{
    return t->log;
}

const char *h2b_target_io(const struct h2b_target *t, const char **fallback)
{
    *fallback = t->io_fallback[0] ? t->io_fallback : NULL;
    return t->io[0] ? t->io : NULL;
}

const char *h2b_target_program(const struct h2b_target *t)
{
    return t->program;
}

bool h2b_target_alive(struct h2b_target *t, struct h2b_diag *diag)
{
    if (!t->proc)
        return true;
    if (!t->dead) {
        int status = 0;
        if (!h2b_proc_exited(t->proc, &status))
            return true;
        t->dead = true;
        if (WIFEXITED(status))
            h2b_diag_at(&t->dead_diag, NULL, 0, 0, "%s exited with status %d", t->spec->name,
                        WEXITSTATUS(status));
        else
            h2b_diag_at(&t->dead_diag, NULL, 0, 0, "%s killed by signal %d (%s)", t->spec->name,
                        WTERMSIG(status), strsignal(WTERMSIG(status)));
        quote_log(t, &t->dead_diag);
    }
    if (diag)
        *diag = t->dead_diag;
    return false;
}

int h2b_target_cpu_ns(const struct h2b_target *t, uint64_t *out)
{
    if (!t->proc)
        return H2B_ERR_UNSUPPORTED;
    return h2b_proc_cpu_ns(t->proc, out) == H2B_OK ? H2B_OK : H2B_ERR_IO;
}

int h2b_target_rss_kib(const struct h2b_target *t, uint64_t *out)
{
    if (!t->proc)
        return H2B_ERR_UNSUPPORTED;
    return h2b_proc_rss_kib(t->proc, out, NULL) == H2B_OK ? H2B_OK : H2B_ERR_IO;
}
