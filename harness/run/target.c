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
#include "target.h"

#include "clock.h"
#include "cpu.h"
#include "error.h"
#include "probe.h"
#include "proc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_GRACE_NS (5 * H2B_NS_PER_SEC)
#define LOOPBACK "127.0.0.1"

struct h2b_target {
    const struct h2b_target_spec *spec;
    struct h2b_proc *proc; /* NULL for URL targets */
    char url[256];
    char log[512];
    bool dead; /* reaped: dead_why says how it ended */
    char dead_why[256];
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
    size_t n = 12 + spec->nargs;
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

/* Peer command line, rendered configuration, and the URL it will answer on. */
static int peer_argv(struct h2b_target *t, const struct h2b_target_env *env, char ***out, char *why,
                     size_t why_size)
{
    const struct h2b_target_spec *spec = t->spec;
    const struct h2b_peer *peer = env->peers ? h2b_peers_find(env->peers, spec->peer) : NULL;
    uint16_t port;
    if (!peer) {
        snprintf(why, why_size, "unknown peer '%s'", spec->peer);
        return H2B_ERR_NOTFOUND;
    }
    if (free_port(&port)) {
        snprintf(why, why_size, "no free loopback port");
        return H2B_ERR_SYS;
    }
    struct h2b_peer_vars vars = {
        .host = LOOPBACK,
        .port = port,
        .threads = spec->threads,
        .max_streams = spec->max_streams ? spec->max_streams : peer->max_streams,
        .docroot = env->docroot,
        .dir = env->dir,
    };
    char **argv = NULL;
    int rc = h2b_peers_prepare(env->peers, peer, &vars, &argv, why, why_size);
    if (rc)
        return rc;
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
    snprintf(t->url, sizeof(t->url), "http://%s:%u", LOOPBACK, port);
    *out = argv;
    return H2B_OK;
}

/* Appends the last line of the target's log to why, which usually says what went wrong. */
static void quote_log(const struct h2b_target *t, char *why, size_t why_size)
{
    char last[256];
    h2b__run_last_line(t->log, last, sizeof(last));
    size_t len = strlen(why);
    if (last[0] && len + 4 < why_size)
        snprintf(why + len, why_size - len, " (log: %s)", last);
}

/* Waits for "listening on http://HOST:PORT" on the bundled server's stdout. */
static int read_ready_line(struct h2b_target *t, uint64_t timeout_ns, char *why, size_t why_size)
{
    static const char prefix[] = "listening on ";
    uint64_t deadline = h2b_clock_now_ns() + timeout_ns;
    char line[512];
    for (;;) {
        uint64_t now = h2b_clock_now_ns();
        int rc = now < deadline ? h2b_proc_read_line(t->proc, line, sizeof(line), deadline - now)
                                : H2B_ERR_TIMEOUT;
        if (rc == H2B_ERR_TIMEOUT) {
            snprintf(why, why_size, "no \"listening on\" line within %.1f s",
                     (double)timeout_ns / 1e9);
            return rc;
        }
        if (rc == H2B_ERR_CLOSED && !h2b_proc_exited(t->proc, NULL)) {
            /* End of the file so far: the server has not printed its line yet. */
            h2b_clock_sleep_ns(10 * H2B_NS_PER_MS);
            continue;
        }
        if (rc < 0) {
            snprintf(why, why_size, "h2bench serve exited before it was ready");
            return H2B_ERR_CLOSED;
        }
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            if (snprintf(t->url, sizeof(t->url), "%s", line + strlen(prefix)) >=
                (int)sizeof(t->url))
                continue; /* not a URL we can use */
            return H2B_OK;
        }
    }
}

int h2b_target_start(struct h2b_target **out, const struct h2b_target_spec *spec,
                     const struct h2b_target_env *env, char *why, size_t why_size)
{
    struct h2b_target *t = calloc(1, sizeof(*t));
    char **argv = NULL;
    int rc;
    if (!t)
        return H2B_ERR_NOMEM;
    t->spec = spec;
    uint64_t timeout = (uint64_t)(spec->ready_timeout_s * 1e9);
    snprintf(t->log, sizeof(t->log), "%s/server.log", env->dir);
    if (spec->kind == H2B_TARGET_URL) {
        snprintf(t->url, sizeof(t->url), "%s", spec->url);
        if ((rc = h2b_probe_ready(t->url, env->ready_path, timeout, why, why_size)))
            goto fail;
        *out = t;
        return H2B_OK;
    }
    rc = spec->kind == H2B_TARGET_BUNDLED ? bundled_argv(spec, env, &argv)
                                          : peer_argv(t, env, &argv, why, why_size);
    if (rc) {
        if (rc == H2B_ERR_NOMEM)
            snprintf(why, why_size, "out of memory");
        goto fail;
    }
    cpu_set_t cpus;
    if (h2b_cpu_parse_list(spec->cpus, &cpus) != H2B_OK) {
        snprintf(why, why_size, "bad CPU list '%s'", spec->cpus);
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
        .err_to_out = true,
        .kill_on_parent_exit = true,
        .new_process_group = true,
    };
    if ((rc = h2b_proc_spawn(&t->proc, argv, &opts))) {
        snprintf(why, why_size, "cannot start %s: %s", argv[0], h2b_strerror(rc));
        goto fail;
    }
    if (spec->kind == H2B_TARGET_BUNDLED) {
        if ((rc = read_ready_line(t, timeout, why, why_size)))
            goto fail_stop;
        /* h2bench serve answers as soon as it prints; probing anyway costs one request. */
    }
    uint64_t left = timeout;
    if ((rc = h2b_probe_ready(t->url, env->ready_path, left, why, why_size))) {
        char alive_why[128];
        if (!h2b_target_alive(t, alive_why, sizeof(alive_why)))
            snprintf(why, why_size, "%s", alive_why);
        goto fail_stop;
    }
    free_argv(argv);
    *out = t;
    return H2B_OK;
fail_stop:
    quote_log(t, why, why_size);
fail:
    free_argv(argv);
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
        h2b_proc_signal(t->proc, SIGTERM);
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

bool h2b_target_alive(struct h2b_target *t, char *why, size_t why_size)
{
    if (!t->proc)
        return true;
    if (!t->dead) {
        int status = 0;
        if (!h2b_proc_exited(t->proc, &status))
            return true;
        t->dead = true;
        if (WIFEXITED(status))
            snprintf(t->dead_why, sizeof(t->dead_why), "%s exited with status %d", t->spec->name,
                     WEXITSTATUS(status));
        else
            snprintf(t->dead_why, sizeof(t->dead_why), "%s killed by signal %d (%s)", t->spec->name,
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
        quote_log(t, t->dead_why, sizeof(t->dead_why));
    }
    snprintf(why, why_size, "%s", t->dead_why);
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
