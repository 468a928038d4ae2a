/*
 * scenario.c - validation of scenario documents into struct h2b_scenario.
 *
 * The document is walked once, field by field, with the field path carried along so the first
 * problem can be named exactly ("targets[1].peer: unknown peer 'apache'"). Unknown fields are
 * errors, not ignored: a misspelt "duraton_s" silently falling back to a default would measure
 * the wrong thing. Defaults live here and in docs/scenarios.md, nowhere else.
 *
 * Rejected: a schema language (JSON Schema) - it would need a validator dependency and still
 * could not express the cross-field rules (warm-up needs a duration, GET has no body).
 */
#include "run/scenario.h"

#include "core/error.h"
#include "core/json.h"
#include "core/url.h"
#include "run/expand.h"
#include "load/grpc.h"
#include "load/shape.h"
#include "load/slo.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64    /* entries in one matrix list */
#define MAX_TARGETS 16 /* targets in one scenario */
#define MAX_CONNECTIONS 60000
#define MAX_STREAMS 1000000
#define MAX_ARGS 64
#define PATH_LEN 128
#define ANY_U64 UINT64_MAX

struct ctx {
    const struct h2b_json_src *src;
    struct h2b_diag *diag;
};

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    h2b_diag_set(c->diag, c->src ? c->src->file : NULL, c->src ? c->src->text : NULL, path, "%s",
                 msg);
    return H2B_ERR_PARSE;
}

/* The character set of scenario and target names: they become file names, markdown table
 * cells and gnuplot titles, so nothing there needs quoting. */
static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return false;
    for (const char *p = s; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return false;
    }
    return true;
}

/* An optional string field; *out gets a copy of it or of def (which may be NULL). */
static int get_string(struct ctx *c, const json_t *obj, const char *key, const char *path,
                      const char *def, char **out)
{
    const char *v = def;
    int rc = h2b_json_get_string(c->src, obj, path, key, H2B_JSON_OPTIONAL, &v, c->diag);
    if (rc < 0)
        return rc;
    if (!v) {
        *out = NULL;
        return H2B_OK;
    }
    *out = strdup(v);
    return *out ? H2B_OK : H2B_ERR_NOMEM;
}

/* Positive or non-negative integers get the plain message the user needs ("expected a
 * positive integer"); the upper bound is checked separately so it does not clutter it. */
static int check_uint(struct ctx *c, const json_t *v, const char *path, uint64_t min, uint64_t max,
                      uint64_t *out)
{
    uint64_t value = 0;
    int rc = h2b_json_check_u64(c->src, v, path, H2B_JSON_REQUIRED, min, ANY_U64, &value, c->diag);
    if (rc < 0)
        return rc;
    if (value > max)
        return fail(c, path, "expected at most %llu, got %llu", (unsigned long long)max,
                    (unsigned long long)value);
    *out = value;
    return H2B_OK;
}

static int get_uint(struct ctx *c, const json_t *obj, const char *key, const char *path,
                    uint64_t min, uint64_t max, uint64_t def, uint64_t *out)
{
    char child[PATH_LEN];
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return H2B_OK;
    }
    h2b_json_path_key(child, sizeof(child), path, key);
    return check_uint(c, v, child, min, max, out);
}

static int get_u32(struct ctx *c, const json_t *obj, const char *key, const char *path,
                   uint32_t min, uint32_t max, uint32_t def, uint32_t *out)
{
    uint64_t value = def;
    int rc = get_uint(c, obj, key, path, min, max, def, &value);
    if (rc == H2B_OK)
        *out = (uint32_t)value;
    return rc;
}

/* Seconds as a JSON number in [min, max]. */
static int get_seconds(struct ctx *c, const json_t *obj, const char *key, const char *path,
                       double min, double max, double def, double *out)
{
    double v = def;
    int rc = h2b_json_get_double(c->src, obj, path, key, H2B_JSON_OPTIONAL, min, max, &v, c->diag);
    if (rc < 0)
        return rc;
    *out = v;
    return H2B_OK;
}

static int get_bool(struct ctx *c, const json_t *obj, const char *key, const char *path, bool def,
                    bool *out)
{
    bool v = def;
    int rc = h2b_json_get_bool(c->src, obj, path, key, H2B_JSON_OPTIONAL, &v, c->diag);
    if (rc < 0)
        return rc;
    *out = v;
    return H2B_OK;
}

/* A list of integers in [min, max]; absent gives an empty list unless required. */
static int get_u32_list(struct ctx *c, const json_t *obj, const char *key, const char *path,
                        uint32_t min, uint32_t max, bool required, uint32_t **out, size_t *n)
{
    char child[PATH_LEN], item[PATH_LEN];
    json_t *v = NULL;
    int rc = h2b_json_get_array(c->src, obj, path, key,
                                required ? H2B_JSON_REQUIRED : H2B_JSON_OPTIONAL, &v, c->diag);
    *out = NULL;
    *n = 0;
    if (rc < 0)
        return rc;
    if (!v)
        return H2B_OK;
    h2b_json_path_key(child, sizeof(child), path, key);
    size_t len = json_array_size(v);
    if (len == 0 || len > MAX_LIST)
        return fail(c, child, "expected 1 to %d entries, got %zu", MAX_LIST, len);
    uint32_t *list = calloc(len, sizeof(*list));
    if (!list)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < len; i++) {
        uint64_t value = 0;
        h2b_json_path_index(item, sizeof(item), child, i);
        if ((rc = check_uint(c, json_array_get(v, i), item, min, max, &value))) {
            free(list);
            return rc;
        }
        for (size_t j = 0; j < i; j++) {
            if (list[j] == value) {
                free(list);
                return fail(c, item, "duplicate value %llu", (unsigned long long)value);
            }
        }
        list[i] = (uint32_t)value;
    }
    *out = list;
    *n = len;
    return H2B_OK;
}

const char *h2b_protocol_name(enum h2b_protocol p)
{
    return p == H2B_PROTO_H1 ? "h1" : p == H2B_PROTO_H3 ? "h3" : "h2";
}

/* A list of protocol names ("h1", "h2", "h3") into out (in order, no duplicates); absent gives
 * def alone. */
static int get_protocols(struct ctx *c, const json_t *obj, const char *key, const char *path,
                         enum h2b_protocol *out, size_t *n, enum h2b_protocol def)
{
    char child[PATH_LEN], item[PATH_LEN];
    json_t *v = NULL;
    int rc = h2b_json_get_array(c->src, obj, path, key, H2B_JSON_OPTIONAL, &v, c->diag);
    if (rc < 0)
        return rc;
    *n = 0;
    if (!v) {
        out[(*n)++] = def;
        return H2B_OK;
    }
    h2b_json_path_key(child, sizeof(child), path, key);
    size_t len = json_array_size(v);
    if (len == 0 || len > H2B_PROTO_COUNT)
        return fail(c, child, "expected 1 to %d of \"h1\", \"h2\", \"h3\", got %zu entries",
                    H2B_PROTO_COUNT, len);
    for (size_t i = 0; i < len; i++) {
        const char *str = NULL;
        h2b_json_path_index(item, sizeof(item), child, i);
        if ((rc = h2b_json_check_string(c->src, json_array_get(v, i), item, H2B_JSON_REQUIRED, &str,
                                        c->diag)) < 0)
            return rc;
        enum h2b_protocol p;
        if (strcmp(str, "h1") == 0)
            p = H2B_PROTO_H1;
        else if (strcmp(str, "h2") == 0)
            p = H2B_PROTO_H2;
        else if (strcmp(str, "h3") == 0)
            p = H2B_PROTO_H3;
        else
            return fail(c, item, "expected \"h1\", \"h2\" or \"h3\", got \"%s\"", str);
        for (size_t j = 0; j < *n; j++)
            if (out[j] == p)
                return fail(c, item, "duplicate value \"%s\"", str);
        out[(*n)++] = p;
    }
    return H2B_OK;
}

/* matrix.tls: [false], [true] or both, in order. */
static int get_tls_list(struct ctx *c, const json_t *obj, struct h2b_matrix_spec *m)
{
    char item[PATH_LEN];
    json_t *v = NULL;
    int rc = h2b_json_get_array(c->src, obj, "matrix", "tls", H2B_JSON_OPTIONAL, &v, c->diag);
    if (rc < 0)
        return rc;
    m->ntls = 0;
    if (!v) {
        m->tls[m->ntls++] = false;
        return H2B_OK;
    }
    size_t len = json_array_size(v);
    if (len == 0 || len > 2)
        return fail(c, "matrix.tls", "expected [false], [true] or [false, true], got %zu entries",
                    len);
    for (size_t i = 0; i < len; i++) {
        bool b = false;
        h2b_json_path_index(item, sizeof(item), "matrix.tls", i);
        if ((rc = h2b_json_check_bool(c->src, json_array_get(v, i), item, H2B_JSON_REQUIRED, &b,
                                      c->diag)) < 0)
            return rc;
        if (i == 1 && m->tls[0] == b)
            return fail(c, item, "duplicate value %s", b ? "true" : "false");
        m->tls[m->ntls++] = b;
    }
    return H2B_OK;
}

static void free_strv(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* A list of strings (command-line arguments); absent gives an empty NULL-terminated list. */
static int get_strv(struct ctx *c, const json_t *obj, const char *key, const char *path,
                    char ***out, size_t *n)
{
    char child[PATH_LEN], item[PATH_LEN];
    json_t *v = NULL;
    int rc = h2b_json_get_array(c->src, obj, path, key, H2B_JSON_OPTIONAL, &v, c->diag);
    if (rc < 0)
        return rc;
    h2b_json_path_key(child, sizeof(child), path, key);
    size_t len = v ? json_array_size(v) : 0;
    if (len > MAX_ARGS)
        return fail(c, child, "expected at most %d entries, got %zu", MAX_ARGS, len);
    char **list = calloc(len + 1, sizeof(*list));
    if (!list)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < len; i++) {
        const char *str = NULL;
        h2b_json_path_index(item, sizeof(item), child, i);
        if ((rc = h2b_json_check_string(c->src, json_array_get(v, i), item, H2B_JSON_REQUIRED, &str,
                                        c->diag)) < 0) {
            free_strv(list);
            return rc;
        }
        if (!(list[i] = strdup(str))) {
            free_strv(list);
            return H2B_ERR_NOMEM;
        }
    }
    *out = list;
    *n = len;
    return H2B_OK;
}

/* The object at key, or NULL when absent (then every getter on it sees no field). */
static int get_object(struct ctx *c, const json_t *obj, const char *key, const char *path,
                      const char *const *keys, json_t **out)
{
    char child[PATH_LEN];
    *out = NULL;
    int rc = h2b_json_get_object(c->src, obj, path, key, H2B_JSON_OPTIONAL, out, c->diag);
    if (rc < 0)
        return rc;
    h2b_json_path_key(child, sizeof(child), path, key);
    if (*out && (rc = h2b_json_check_keys(c->src, *out, child, keys, c->diag)))
        return rc;
    return H2B_OK;
}

static bool cpu_list_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!(*s >= '0' && *s <= '9') && *s != ',' && *s != '-')
            return false;
    }
    return true;
}

/* The signals a server can be told to stop with, by name as kill -l spells them. */
static int signal_by_name(const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } table[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"HUP", SIGHUP},
                 {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    if (strncmp(name, "SIG", 3) == 0)
        name += 3;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].sig;
    return 0;
}

/* command, env, cwd (command targets only) and stop_signal (every started target). */
static int parse_command(struct ctx *c, const json_t *v, const char *path,
                         struct h2b_target_spec *t)
{
    char child[PATH_LEN], item[PATH_LEN];
    char *sig = NULL;
    int rc;
    bool is_cmd = t->kind == H2B_TARGET_COMMAND;
    if ((rc = get_string(c, v, "stop_signal", path, "TERM", &sig)))
        return rc;
    t->stop_signal = signal_by_name(sig);
    free(sig);
    if (t->stop_signal == 0) {
        h2b_json_path_key(child, sizeof(child), path, "stop_signal");
        return fail(c, child, "expected TERM, INT, QUIT, HUP, KILL, USR1 or USR2");
    }
    static const char *const only[] = {"command", "env", "cwd", NULL};
    for (const char *const *k = only; *k && !is_cmd; k++) {
        if (json_object_get(v, *k)) {
            h2b_json_path_key(child, sizeof(child), path, *k);
            return fail(c, child, "only a target of type \"command\" takes \"%s\"", *k);
        }
    }
    if (!is_cmd)
        return H2B_OK;
    h2b_json_path_key(child, sizeof(child), path, "command");
    if (!json_is_array(json_object_get(v, "command")) ||
        json_array_size(json_object_get(v, "command")) == 0)
        return fail(c, child,
                    "required for a target of type \"command\": a non-empty list of strings, "
                    "e.g. [\"./mysrv\", \"--port\", \"{port}\"]");
    if ((rc = get_strv(c, v, "command", path, &t->command, &t->ncommand)) ||
        (rc = get_string(c, v, "cwd", path, NULL, &t->cwd)))
        return rc;
    if (t->command[0][0] == '\0')
        return fail(c, child, "the program (command[0]) is empty");
    json_t *env = NULL;
    if ((rc = h2b_json_get_object(c->src, v, path, "env", H2B_JSON_OPTIONAL, &env, c->diag)) < 0)
        return rc;
    size_t n = env ? json_object_size(env) : 0;
    if (!(t->env = calloc(n + 1, sizeof(*t->env))))
        return H2B_ERR_NOMEM;
    h2b_json_path_key(child, sizeof(child), path, "env");
    const char *key;
    json_t *val;
    json_object_foreach(env, key, val)
    {
        h2b_json_path_key(item, sizeof(item), child, key);
        const char *str = NULL;
        if ((rc = h2b_json_check_string(c->src, val, item, H2B_JSON_REQUIRED, &str, c->diag)) < 0)
            return rc;
        if (!key[0] || strchr(key, '=') ||
            strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                        "qrstuvwxyz0123456789_") != strlen(key))
            return fail(c, item, "expected a variable name of letters, digits and '_'");
        size_t len = strlen(key) + strlen(str) + 2;
        if (!(t->env[t->nenv] = malloc(len)))
            return H2B_ERR_NOMEM;
        snprintf(t->env[t->nenv++], len, "%s=%s", key, str);
    }
    if (!t->name_given) {
        h2b_json_path_key(child, sizeof(child), path, "name");
        return fail(c, child, "required for a target of type \"command\" (it names the cells)");
    }
    return H2B_OK;
}

/* request_bytes, response_bytes and io (floor targets only), and what a floor target does not
 * take: it is one thread of h2bench floor-serve speaking no HTTP, so no threads, max_streams or
 * args (its one option beyond the sizes, --io, is the "io" field, checked here). */
static int parse_floor(struct ctx *c, const json_t *v, const char *path, struct h2b_target_spec *t)
{
    char child[PATH_LEN];
    int rc;
    bool is_floor = t->kind == H2B_TARGET_FLOOR;
    static const char *const only[] = {"request_bytes", "response_bytes", "io", NULL};
    static const char *const never[] = {"threads", "max_streams", "args", NULL};
    for (const char *const *k = is_floor ? never : only; *k; k++) {
        if (json_object_get(v, *k)) {
            h2b_json_path_key(child, sizeof(child), path, *k);
            return is_floor ? fail(c, child,
                                   "a target of type \"floor\" takes no \"%s\" (it is one "
                                   "thread of h2bench floor-serve, no HTTP)",
                                   *k)
                            : fail(c, child, "only a target of type \"floor\" takes \"%s\"", *k);
        }
    }
    if (!is_floor)
        return H2B_OK;
    if ((rc = get_u32(c, v, "request_bytes", path, 1, H2B_FLOOR_BYTES_MAX,
                      H2B_FLOOR_DEFAULT_REQUEST, &t->floor_request)) ||
        (rc = get_u32(c, v, "response_bytes", path, 1, H2B_FLOOR_BYTES_MAX,
                      H2B_FLOOR_DEFAULT_RESPONSE, &t->floor_response)))
        return rc;
    char *io = NULL;
    if ((rc = get_string(c, v, "io", path, "epoll", &io)))
        return rc;
    bool known = strcmp(io, "epoll") == 0 || strcmp(io, "uring") == 0;
    t->floor_uring = strcmp(io, "uring") == 0;
    free(io);
    if (!known) {
        h2b_json_path_key(child, sizeof(child), path, "io");
        return fail(c, child, "expected \"epoll\" or \"uring\" (floor-serve --io)");
    }
    return H2B_OK;
}

static int parse_target(struct ctx *c, const json_t *v, const char *path,
                        const char *const *known_peers, struct h2b_target_spec *t)
{
    static const char *const keys[] = {"name",
                                       "type",
                                       "peer",
                                       "url",
                                       "cpus",
                                       "threads",
                                       "max_streams",
                                       "args",
                                       "ready_timeout_s",
                                       "command",
                                       "env",
                                       "cwd",
                                       "stop_signal",
                                       "protocols",
                                       "request_bytes",
                                       "response_bytes",
                                       "io",
                                       NULL};
    char child[PATH_LEN];
    char *type = NULL;
    int rc;
    if ((rc = h2b_json_check_object(c->src, v, path, H2B_JSON_REQUIRED, &(json_t *){NULL},
                                    c->diag)) ||
        (rc = h2b_json_check_keys(c->src, v, path, keys, c->diag)))
        return rc;
    if ((rc = get_string(c, v, "type", path, "bundled", &type)))
        return rc;
    t->name_given = json_object_get(v, "name") != NULL;
    h2b_json_path_key(child, sizeof(child), path, "type");
    if (strcmp(type, "bundled") == 0)
        t->kind = H2B_TARGET_BUNDLED;
    else if (strcmp(type, "peer") == 0)
        t->kind = H2B_TARGET_PEER;
    else if (strcmp(type, "url") == 0)
        t->kind = H2B_TARGET_URL;
    else if (strcmp(type, "command") == 0)
        t->kind = H2B_TARGET_COMMAND;
    else if (strcmp(type, "floor") == 0)
        t->kind = H2B_TARGET_FLOOR;
    else
        rc = fail(c, child,
                  "expected \"bundled\", \"peer\", \"url\", \"command\" or \"floor\", got \"%s\"",
                  type);
    free(type);
    if (rc)
        return rc;

    if ((rc = get_string(c, v, "peer", path, NULL, &t->peer)) ||
        (rc = get_string(c, v, "url", path, NULL, &t->url)) ||
        (rc = get_string(c, v, "cpus", path, "0", &t->cpus)) ||
        (rc = get_u32(c, v, "threads", path, 1, 256, 1, &t->threads)) ||
        (rc = get_u32(c, v, "max_streams", path, 1, INT32_MAX, 0, &t->max_streams)) ||
        (rc = get_strv(c, v, "args", path, &t->args, &t->nargs)) ||
        (rc = get_seconds(c, v, "ready_timeout_s", path, 0.1, 600, 10, &t->ready_timeout_s)) ||
        (rc = parse_command(c, v, path, t)) || (rc = parse_floor(c, v, path, t)))
        return rc;
    h2b_json_path_key(child, sizeof(child), path, "protocols");
    if (json_object_get(v, "protocols")) {
        if (t->kind != H2B_TARGET_COMMAND && t->kind != H2B_TARGET_URL)
            return fail(c, child,
                        "only \"command\" and \"url\" targets declare their protocols (h2ref "
                        "and the peers' are known)");
        enum h2b_protocol list[H2B_PROTO_COUNT];
        size_t n = 0;
        if ((rc = get_protocols(c, v, "protocols", path, list, &n, H2B_PROTO_H2)))
            return rc;
        for (size_t i = 0; i < n; i++)
            t->protocols |= 1u << list[i];
    } else if (t->kind == H2B_TARGET_COMMAND || t->kind == H2B_TARGET_URL) {
        t->protocols = 1u << H2B_PROTO_H2;
    }

    h2b_json_path_key(child, sizeof(child), path, "cpus");
    if (!cpu_list_ok(t->cpus))
        return fail(c, child, "expected a CPU list like \"0\" or \"0-1,3\", got \"%s\"", t->cpus);

    if (t->kind == H2B_TARGET_PEER) {
        h2b_json_path_key(child, sizeof(child), path, "peer");
        if (!t->peer)
            return fail(c, child, "required for a target of type \"peer\"");
        bool known = !known_peers;
        for (const char *const *p = known_peers; p && *p; p++)
            known = known || strcmp(*p, t->peer) == 0;
        if (!known)
            return fail(c, child, "unknown peer '%s' (servers/peers/peers.json)", t->peer);
    } else if (t->peer) {
        h2b_json_path_key(child, sizeof(child), path, "peer");
        return fail(c, child, "only a target of type \"peer\" names a peer");
    }
    h2b_json_path_key(child, sizeof(child), path, "url");
    if (t->kind == H2B_TARGET_URL) {
        if (!t->url)
            return fail(c, child, "required for a target of type \"url\"");
        struct h2b_url u;
        struct h2b_diag d = {0};
        if (h2b_url_parse(t->url, H2B_URL_ORIGIN, &u, &d) != H2B_OK)
            return fail(c, child, "%s%s", d.message,
                        strstr(d.message, "without a path") ? "; the path is matrix.path" : "");
    } else if (t->url) {
        return fail(c, child, "only a target of type \"url\" has a url");
    }
    return H2B_OK;
}

static int parse_targets(struct ctx *c, const json_t *doc, const char *const *known_peers,
                         struct h2b_scenario *s)
{
    char item[PATH_LEN], child[PATH_LEN];
    json_t *v = NULL;
    int rc = h2b_json_get_array(c->src, doc, "", "targets", H2B_JSON_REQUIRED, &v, c->diag);
    if (rc < 0)
        return rc;
    size_t len = json_array_size(v);
    if (len == 0 || len > MAX_TARGETS)
        return fail(c, "targets", "expected 1 to %d targets, got %zu", MAX_TARGETS, len);
    s->targets = calloc(len, sizeof(*s->targets));
    if (!s->targets)
        return H2B_ERR_NOMEM;
    s->ntargets = len;
    for (size_t i = 0; i < len; i++) {
        struct h2b_target_spec *t = &s->targets[i];
        const json_t *tv = json_array_get(v, i);
        h2b_json_path_index(item, sizeof(item), "targets", i);
        if ((rc = parse_target(c, tv, item, known_peers, t)))
            return rc;
        /* The name defaults to what the target is, so a plain list of peers needs no names. */
        const char *def = t->kind == H2B_TARGET_BUNDLED ? "h2ref"
                          : t->kind == H2B_TARGET_PEER  ? t->peer
                          : t->kind == H2B_TARGET_FLOOR ? "floor"
                                                        : "url";
        if ((rc = get_string(c, tv, "name", item, def, &t->name)))
            return rc;
        if (!name_ok(t->name)) {
            h2b_json_path_key(child, sizeof(child), item, "name");
            return fail(c, child,
                        "expected 1 to 64 letters, digits, '-', '_' or '.' (names reach "
                        "file names, tables and chart scripts)");
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->targets[j].name, t->name) == 0) {
                h2b_json_path_key(child, sizeof(child), item, "name");
                return fail(c, child, "duplicate target name '%s' (give each target a name)",
                            t->name);
            }
        }
    }
    return H2B_OK;
}

static int parse_client(struct ctx *c, const json_t *doc, struct h2b_client_spec *cl)
{
    static const char *const keys[] = {"type",      "command", "cpus", "threads", "latency_log",
                                       "timeout_s", "args",    "mpi",  NULL};
    static const char *const mpi_keys[] = {"np", "hostfile", "mpirun", NULL};
    json_t *mpi = NULL;
    /* Absent: every getter below sees no field (json_object_get(NULL, ...) is NULL). */
    json_t *v = NULL;
    char *type = NULL;
    int rc;
    if ((rc = get_object(c, doc, "client", "", keys, &v)))
        return rc;
    if ((rc = get_string(c, v, "type", "client", "h2bench", &type)))
        return rc;
    if (strcmp(type, "h2bench") == 0)
        cl->kind = H2B_CLIENT_H2BENCH;
    else if (strcmp(type, "h2load") == 0)
        cl->kind = H2B_CLIENT_H2LOAD;
    else
        rc = fail(c, "client.type", "expected \"h2bench\" or \"h2load\", got \"%s\"", type);
    free(type);
    if (rc)
        return rc;
    if ((rc = get_string(c, v, "command", "client", NULL, &cl->command)) ||
        (rc = get_string(c, v, "cpus", "client", "1", &cl->cpus)) ||
        (rc = get_u32(c, v, "threads", "client", 1, 256, 1, &cl->threads)) ||
        (rc = get_bool(c, v, "latency_log", "client", false, &cl->latency_log)) ||
        (rc = get_seconds(c, v, "timeout_s", "client", 1, 3600, 120, &cl->timeout_s)) ||
        (rc = get_strv(c, v, "args", "client", &cl->args, &cl->nargs)))
        return rc;
    if (!cpu_list_ok(cl->cpus))
        return fail(c, "client.cpus", "expected a CPU list like \"1\" or \"1-3\", got \"%s\"",
                    cl->cpus);
    if (cl->latency_log && cl->kind != H2B_CLIENT_H2LOAD)
        return fail(c, "client.latency_log", "only the h2load client needs a latency log");
    if ((rc = get_object(c, v, "mpi", "client", mpi_keys, &mpi)) || !mpi)
        return rc;
    if ((rc = get_u32(c, mpi, "np", "client.mpi", 1, 4096, 0, &cl->mpi.np)) ||
        (rc = get_string(c, mpi, "hostfile", "client.mpi", NULL, &cl->mpi.hostfile)) ||
        (rc = get_strv(c, mpi, "mpirun", "client.mpi", &cl->mpi.mpirun, &cl->mpi.nmpirun)))
        return rc;
    if (cl->mpi.np == 0)
        return fail(c, "client.mpi", "expected \"np\": the number of MPI ranks (1..4096)");
    if (cl->kind != H2B_CLIENT_H2BENCH)
        return fail(c, "client.mpi", "only the h2bench client runs under MPI");
    if (cl->mpi.mpirun && cl->mpi.nmpirun == 0)
        return fail(c, "client.mpi.mpirun", "expected the launcher, e.g. [\"mpirun\"]");
    return H2B_OK;
}

/* The column in the file of character col (1-based) of the JSON string at path: its opening
 * quote's column plus the raw characters before it (an escape such as \n is two, \uXXXX six). */
static int string_column(struct ctx *c, const char *path, int col, int *line)
{
    int l = 0, column = 0;
    *line = 0;
    if (!c->src || !c->src->text || h2b_json_locate(c->src->text, path, &l, &column) != H2B_OK)
        return 0;
    /* find the value's first byte on its line: the locate's column counts characters */
    const char *p = c->src->text;
    for (int k = 1; k < l && (p = strchr(p, '\n')); k++)
        p++;
    if (!p)
        return 0;
    for (int k = 1; k < column && *p && *p != '\n'; k++) {
        p++;
        while ((*p & 0xC0) == 0x80) /* a UTF-8 continuation byte: same character */
            p++;
    }
    if (*p != '"')
        return 0;
    int raw = 1;
    for (const char *q = p + 1; *q && *q != '"' && col > 1; col--) {
        int len = q[0] == '\\' ? (q[1] == 'u' ? 6 : 2) : 1;
        for (int k = 0; k < len && *q; k++)
            q++;
        while ((*q & 0xC0) == 0x80)
            q++;
        raw += len;
    }
    *line = l;
    return column + raw;
}

/* A field parsed by h2bench load's own parser (--slo, --stages, --step): sub names a column of
 * the text; the message names the field and that column's place in the file. */
static int sub_fail(struct ctx *c, const char *path, const struct h2b_diag *sub)
{
    int line = 0;
    int column = string_column(c, path, sub->column > 0 ? sub->column : 1, &line);
    if (!line)
        return fail(c, path, "%s", sub->message);
    h2b_diag_at(c->diag, c->src->file, line, column, "%s: column %d of the text: %s", path,
                sub->column, sub->message);
    return H2B_ERR_PARSE;
}

/* matrix.stages, step, slo, slo_window and find_max (scenario.h). */
static int parse_load_shape(struct ctx *c, const json_t *v, struct h2b_matrix_spec *m)
{
    static const char *const fm_keys[] = {"step_s",        "warmup_s", "start", "limit",
                                          "precision_pct", "retries",  NULL};
    struct h2b_diag sub = {0};
    json_t *fm = NULL;
    int rc;
    m->find_max.step_s = m->find_max.warmup_s = m->find_max.start = m->find_max.limit =
        m->find_max.precision_pct = NAN;
    m->find_max.retries = -1;
    if ((rc = get_string(c, v, "stages", "matrix", NULL, &m->stages)) ||
        (rc = get_string(c, v, "step", "matrix", NULL, &m->step)) ||
        (!json_is_object(json_object_get(v, "slo")) &&
         (rc = get_string(c, v, "slo", "matrix", NULL, &m->slo))) ||
        (rc = get_seconds(c, v, "slo_window", "matrix", 0.001, 3600, 0, &m->slo_window_s)))
        return rc;
    const json_t *fmv = json_object_get(v, "find_max");
    if (fmv && json_is_true(fmv)) {
        m->find_max.enabled = true;
    } else if (fmv && !json_is_false(fmv)) {
        if ((rc = get_object(c, v, "find_max", "matrix", fm_keys, &fm)))
            return rc;
        uint64_t retries = 0;
        if ((rc = get_seconds(c, fm, "step_s", "matrix.find_max", 0.1, 3600, NAN,
                              &m->find_max.step_s)) ||
            (rc = get_seconds(c, fm, "warmup_s", "matrix.find_max", 0, 600, NAN,
                              &m->find_max.warmup_s)) ||
            (rc =
                 get_seconds(c, fm, "start", "matrix.find_max", 1, 1e9, NAN, &m->find_max.start)) ||
            (rc =
                 get_seconds(c, fm, "limit", "matrix.find_max", 1, 1e9, NAN, &m->find_max.limit)) ||
            (rc = get_seconds(c, fm, "precision_pct", "matrix.find_max", 0.01, 100, NAN,
                              &m->find_max.precision_pct)) ||
            (rc = get_uint(c, fm, "retries", "matrix.find_max", 0, 10, 1, &retries)))
            return rc;
        if (json_object_get(fm, "retries"))
            m->find_max.retries = (int)retries;
        m->find_max.enabled = true;
    }
    if (m->stages && m->step)
        return fail(c, "matrix.step", "give stages or step, not both");
    if (m->stages) {
        struct h2b_shape shape = {0};
        if ((rc = h2b_shape_parse_stages(&shape, m->stages, m->rate, &sub)) != H2B_OK)
            return rc == H2B_ERR_PARSE ? sub_fail(c, "matrix.stages", &sub) : rc;
        h2b_shape_free(&shape);
    }
    if (m->step) {
        double rate, step;
        uint64_t dur;
        if ((rc = h2b_shape_parse_step(m->step, &rate, &step, &dur, &sub)) != H2B_OK)
            return sub_fail(c, "matrix.step", &sub);
    }
    if (m->stages && (m->duration_s > 0 || json_object_get(v, "requests")))
        return fail(c, "matrix.stages",
                    "the stages set the run's length: no matrix.duration_s, warmup_s or "
                    "requests");
    if (m->step && m->duration_s == 0)
        return fail(c, "matrix.step", "a staircase needs a timed run: set matrix.duration_s");
    if (m->step && m->rate > 0)
        return fail(c, "matrix.step", "the step sets the rate: no matrix.rate");
    if (m->slo) {
        struct h2b_slo slo;
        memset(&slo, 0, sizeof(slo));
        rc = h2b_slo_parse(&slo, m->slo, &sub);
        h2b_slo_free(&slo);
        if (rc != H2B_OK)
            return rc == H2B_ERR_PARSE ? sub_fail(c, "matrix.slo", &sub) : rc;
    }
    bool per_cell = json_is_object(json_object_get(v, "slo"));
    if (m->slo_window_s > 0 && !m->slo && !per_cell)
        return fail(c, "matrix.slo_window", "a window judges the objectives: set matrix.slo");
    /* h2bench load's intervals are 1 s, or the window when shorter: a window is whole ones */
    if (m->slo_window_s >= 1 && fabs(m->slo_window_s - round(m->slo_window_s)) > 1e-9)
        return fail(c, "matrix.slo_window",
                    "expected whole seconds from 1 s up (the intervals are 1 s), got %g",
                    m->slo_window_s);
    if (!m->find_max.enabled)
        return H2B_OK;
    static const char *const excl[] = {"rate",       "stages",   "step",    "slo_window",
                                       "duration_s", "warmup_s", "requests"};
    if (per_cell)
        return fail(c, "matrix.slo",
                    "matrix.find_max searches every cell against one set of objectives: give "
                    "them as a string");
    if (!m->slo)
        return fail(c, "matrix.find_max", "the search needs the objectives: set matrix.slo");
    for (size_t k = 0; k < sizeof(excl) / sizeof(excl[0]); k++) {
        char path[PATH_LEN];
        if (!json_object_get(v, excl[k]))
            continue;
        h2b_json_path_key(path, sizeof(path), "matrix", excl[k]);
        return fail(c, path,
                    "matrix.find_max sets each step's rate and length itself (find_max.start, "
                    "step_s, warmup_s): remove %s",
                    excl[k]);
    }
    if (m->find_max.limit < m->find_max.start) /* false when either is NAN */
        return fail(c, "matrix.find_max.limit", "expected at least find_max.start (%g), got %g",
                    m->find_max.start, m->find_max.limit);
    return H2B_OK;
}

/* matrix.slo as an object: {"FILTER": "OBJECTIVES", ...}, in order (docs/scenarios.md). */
static int parse_slo_rules(struct ctx *c, const json_t *matrix, struct h2b_scenario *s)
{
    const json_t *o = json_object_get(matrix, "slo");
    struct h2b_matrix_spec *m = &s->matrix;
    if (!json_is_object(o))
        return H2B_OK;
    if (json_object_size(o) == 0)
        return fail(c, "matrix.slo", "expected at least one \"FILTER\": \"OBJECTIVES\" rule");
    if (json_object_size(o) > MAX_LIST)
        return fail(c, "matrix.slo", "expected at most %d rules", MAX_LIST);
    if (!(m->slo_rules = calloc(json_object_size(o), sizeof(*m->slo_rules))))
        return H2B_ERR_NOMEM;
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)o, key, val)
    {
        char path[PATH_LEN];
        struct h2b_diag sub = {0};
        struct h2b_slo_rule *rule = &m->slo_rules[m->nslo_rules++];
        int rc;
        h2b_json_path_key(path, sizeof(path), "matrix.slo", key);
        if ((rc = get_string(c, o, key, "matrix.slo", NULL, &rule->slo)))
            return rc;
        if ((rc = h2b_expand_parse_filter(s, key, &rule->filters, &rule->nfilters, &sub)))
            return rc == H2B_ERR_PARSE
                       ? fail(c, path,
                              "the key is a --filter (CONNSxSTREAMS, TARGET:CONNSxSTREAMS "
                              "or TARGET): %s",
                              sub.message)
                       : rc;
        struct h2b_slo slo;
        memset(&slo, 0, sizeof(slo));
        rc = h2b_slo_parse(&slo, rule->slo, &sub);
        h2b_slo_free(&slo);
        if (rc != H2B_OK)
            return rc == H2B_ERR_PARSE ? sub_fail(c, path, &sub) : rc;
    }
    return H2B_OK;
}

/* matrix.grpc {method, size, messages}: gRPC calls in every cell, checked with the load
 * generator's own parser (load/grpc.h) so a bad method is named here, not by a cell. */
static int parse_grpc(struct ctx *c, const json_t *v, struct h2b_matrix_spec *m)
{
    static const char *const keys[] = {"method", "size", "messages", NULL};
    json_t *g = NULL;
    char *method = NULL;
    int rc;
    if (!json_object_get(v, "grpc"))
        return H2B_OK;
    if ((rc = get_object(c, v, "grpc", "matrix", keys, &g)) ||
        (rc = get_string(c, g, "method", "matrix.grpc", NULL, &method)) ||
        (rc = get_uint(c, g, "size", "matrix.grpc", 0, 1ULL << 28, 0, &m->grpc_size)) ||
        (rc = get_u32(c, g, "messages", "matrix.grpc", 1, H2B_LOAD_GRPC_MAX_MESSAGES, 1,
                      &m->grpc_messages)))
        goto out;
    enum h2b_load_grpc_kind kind;
    if (!method) {
        rc = fail(c, "matrix.grpc", "missing field 'method' (e.g. \"/h2bench.Echo/Unary\")");
        goto out;
    }
    rc = h2b_load_grpc_method(method, &m->grpc_method, &kind);
    if (rc == H2B_ERR_PARSE)
        rc = fail(c, "matrix.grpc.method",
                  "expected /SERVICE/METHOD, like /h2bench.Echo/Unary, "
                  "got \"%s\"",
                  method);
    if (rc)
        goto out;
    if (json_object_get(v, "path") || json_object_get(v, "method") ||
        json_object_get(v, "body_bytes")) {
        rc = fail(c, "matrix.grpc",
                  "the gRPC method is every call's path and its messages the body: not with "
                  "matrix.path, matrix.method or matrix.body_bytes");
        goto out;
    }
    for (size_t i = 0; i < m->nprotocols; i++)
        if (m->protocols[i] != H2B_PROTO_H2) {
            rc = fail(c, "matrix.grpc", "gRPC runs over HTTP/2: not with matrix.protocol \"%s\"",
                      h2b_protocol_name(m->protocols[i]));
            goto out;
        }
out:
    free(method);
    return rc;
}

static int parse_matrix(struct ctx *c, const json_t *v, struct h2b_matrix_spec *m)
{
    char *order = NULL;
    int rc;
    if ((rc = get_u32_list(c, v, "connections", "matrix", 1, MAX_CONNECTIONS, true, &m->connections,
                           &m->nconnections)) ||
        (rc = get_u32_list(c, v, "streams", "matrix", 1, MAX_STREAMS, true, &m->streams,
                           &m->nstreams)) ||
        (rc = get_u32_list(c, v, "frame_size", "matrix", 16384, 16777215, false, &m->frame_sizes,
                           &m->nframe_sizes)) ||
        (rc = get_u32_list(c, v, "window_bits", "matrix", 16, 30, false, &m->window_bits,
                           &m->nwindow_bits)) ||
        (rc = get_string(c, v, "path", "matrix", "/hello", &m->path)) ||
        (rc = get_string(c, v, "method", "matrix", "GET", &m->method)) ||
        (rc = get_uint(c, v, "body_bytes", "matrix", 0, 1ULL << 30, 0, &m->body_bytes)) ||
        (rc = get_uint(c, v, "min_requests", "matrix", 1, UINT32_MAX, 1000, &m->min_requests)) ||
        (rc = get_uint(c, v, "requests", "matrix", 1, UINT32_MAX, 0, &m->requests)) ||
        (rc = get_seconds(c, v, "duration_s", "matrix", 0, 3600, 0, &m->duration_s)) ||
        (rc = get_seconds(c, v, "warmup_s", "matrix", 0, 600, 0, &m->warmup_s)) ||
        (rc = get_seconds(c, v, "rate", "matrix", 0, 1e9, 0, &m->rate)) ||
        (rc = get_u32(c, v, "aggregate_cap", "matrix", 1, INT32_MAX, 4096, &m->aggregate_cap)) ||
        (rc = get_u32(c, v, "repeats", "matrix", 1, 1000, 1, &m->repeats)) ||
        (rc = get_string(c, v, "order", "matrix", "alternate", &order)) ||
        (rc = get_protocols(c, v, "protocol", "matrix", m->protocols, &m->nprotocols,
                            H2B_PROTO_H2)) ||
        (rc = get_tls_list(c, v, m)) || (rc = parse_grpc(c, v, m)))
        goto out;
    if (strcmp(order, "alternate") == 0) {
        m->order = H2B_ORDER_ALTERNATE;
    } else if (strcmp(order, "sequential") == 0) {
        m->order = H2B_ORDER_SEQUENTIAL;
    } else {
        rc = fail(c, "matrix.order", "expected \"alternate\" or \"sequential\", got \"%s\"", order);
        goto out;
    }
    if (m->path[0] != '/') {
        rc = fail(c, "matrix.path", "expected a path starting with '/', got \"%s\"", m->path);
        goto out;
    }
    if (strcmp(m->method, "GET") != 0 && strcmp(m->method, "POST") != 0) {
        rc = fail(c, "matrix.method", "expected \"GET\" or \"POST\", got \"%s\"", m->method);
        goto out;
    }
    if (strcmp(m->method, "GET") == 0 && m->body_bytes > 0) {
        rc = fail(c, "matrix.body_bytes", "a GET request has no body (use \"method\": \"POST\")");
        goto out;
    }
    if (strcmp(m->method, "POST") == 0 && m->body_bytes == 0) {
        rc = fail(c, "matrix.body_bytes", "a POST needs a body: expected a positive integer");
        goto out;
    }
    if (m->warmup_s > 0 && m->duration_s == 0) {
        rc = fail(c, "matrix.warmup_s", "a warm-up needs a timed run: set matrix.duration_s");
        goto out;
    }
    if (m->duration_s > 0 && json_object_get(v, "requests")) {
        rc = fail(c, "matrix.requests",
                  "give either requests (count mode) or duration_s "
                  "(timed mode), not both");
        goto out;
    }
    if (m->requests == 0)
        m->requests = m->min_requests;
    if (m->duration_s == 0 && m->requests < m->min_requests) {
        rc = fail(c, "matrix.requests", "expected at least min_requests (%llu), got %llu",
                  (unsigned long long)m->min_requests, (unsigned long long)m->requests);
        goto out;
    }
    if ((rc = parse_load_shape(c, v, m)))
        goto out;
    for (size_t i = 0; i < m->nconnections; i++) {
        /* count mode only: a search and stages are timed */
        if (m->duration_s == 0 && !m->find_max.enabled && !m->stages &&
            m->requests < m->connections[i]) {
            char item[PATH_LEN];
            h2b_json_path_index(item, sizeof(item), "matrix.connections", i);
            rc = fail(c, item,
                      "%u connections need at least as many requests (matrix.requests "
                      "is %llu)",
                      m->connections[i], (unsigned long long)m->requests);
            goto out;
        }
    }
out:
    free(order);
    return rc;
}

static int parse_budgets(struct ctx *c, const json_t *v, struct h2b_budgets_spec *b)
{
    int rc;
    if ((rc = get_uint(c, v, "warmup_requests", "budgets", 1, UINT32_MAX, 1000,
                       &b->warmup_requests)) ||
        (rc = get_uint(c, v, "requests", "budgets", 1, UINT32_MAX, 2000, &b->requests)) ||
        (rc = get_bool(c, v, "instructions", "budgets", true, &b->instructions)) ||
        (rc = get_u32(c, v, "rss_connections", "budgets", 0, 20000, 1000, &b->rss_connections)))
        return rc;
    b->enabled = true;
    return H2B_OK;
}

static int parse_micro(struct ctx *c, const json_t *v, struct h2b_micro_spec *mi)
{
    int rc;
    if ((rc = get_string(c, v, "filter", "micro", ".", &mi->filter)) ||
        (rc = get_string(c, v, "profile", "micro", "ci", &mi->profile)) ||
        (rc = get_u32(c, v, "cpu", "micro", 0, CPU_SETSIZE - 1, 0, &mi->cpu)))
        return rc;
    if (strcmp(mi->profile, "quick") != 0 && strcmp(mi->profile, "ci") != 0 &&
        strcmp(mi->profile, "precise") != 0)
        return fail(c, "micro.profile", "expected \"quick\", \"ci\" or \"precise\", got \"%s\"",
                    mi->profile);
    mi->enabled = true;
    return H2B_OK;
}

int h2b_scenario_load(const json_t *doc, const struct h2b_json_src *src,
                      const char *const *known_peers, struct h2b_scenario **out,
                      struct h2b_diag *diag)
{
    static const char *const keys[] = {"name",  "description", "targets", "client", "matrix",
                                       "micro", "perf_record", "budgets", NULL};
    static const char *const perf_record_keys[] = {"cells", "client", NULL};
    static const char *const budgets_keys[] = {"warmup_requests", "requests", "instructions",
                                               "rss_connections", NULL};
    static const char *const matrix_keys[] = {
        "connections", "streams",  "frame_size", "window_bits",  "path",     "method",
        "body_bytes",  "requests", "duration_s", "min_requests", "warmup_s", "aggregate_cap",
        "repeats",     "order",    "rate",       "protocol",     "tls",      "stages",
        "step",        "slo",      "slo_window", "find_max",     "grpc",     NULL};
    static const char *const micro_keys[] = {"filter", "profile", "cpu", NULL};
    struct ctx c = {src, diag};
    struct h2b_scenario *s = calloc(1, sizeof(*s));
    json_t *matrix = NULL, *micro = NULL, *perf_record = NULL, *budgets = NULL;
    int rc;
    if (!s)
        return H2B_ERR_NOMEM;
    if ((rc = h2b_json_check_object(src, doc, "", H2B_JSON_REQUIRED, &(json_t *){NULL}, diag)) ||
        (rc = h2b_json_check_keys(src, doc, "", keys, diag)))
        goto fail;
    const char *name = NULL;
    if ((rc = h2b_json_get_string(src, doc, "", "name", H2B_JSON_REQUIRED, &name, diag)))
        goto fail;
    if (!name_ok(name)) {
        rc = fail(&c, "name", "expected 1 to 64 letters, digits, '-', '_' or '.' (it names files)");
        goto fail;
    }
    if (!(s->name = strdup(name))) {
        rc = H2B_ERR_NOMEM;
        goto fail;
    }
    if ((rc = get_string(&c, doc, "description", "", "", &s->description)) ||
        (rc = get_object(&c, doc, "matrix", "", matrix_keys, &matrix)) ||
        (rc = get_object(&c, doc, "micro", "", micro_keys, &micro)) ||
        (rc = get_object(&c, doc, "perf_record", "", perf_record_keys, &perf_record)) ||
        (rc = get_object(&c, doc, "budgets", "", budgets_keys, &budgets)))
        goto fail;
    if (budgets && !matrix) {
        rc = fail(&c, "budgets", "budgets are measured per matrix point: add a \"matrix\"");
        goto fail;
    }
    if (budgets && (rc = parse_budgets(&c, budgets, &s->budgets)))
        goto fail;
    if (!matrix && !micro) {
        rc = fail(&c, "", "a scenario needs a \"matrix\", a \"micro\" block, or both");
        goto fail;
    }
    if (matrix) {
        if ((rc = parse_targets(&c, doc, known_peers, s)) ||
            (rc = parse_client(&c, doc, &s->client)) ||
            (rc = parse_matrix(&c, matrix, &s->matrix)) || (rc = parse_slo_rules(&c, matrix, s)))
            goto fail;
        const struct h2b_matrix_spec *m = &s->matrix;
        const char *own = m->find_max.enabled       ? "matrix.find_max"
                          : m->slo || m->nslo_rules ? "matrix.slo"
                          : m->stages               ? "matrix.stages"
                          : m->step                 ? "matrix.step"
                                                    : NULL;
        if (m->grpc_method && s->client.kind != H2B_CLIENT_H2BENCH) {
            rc = fail(&c, "matrix.grpc",
                      "gRPC cells are h2bench load's (h2load cannot read grpc-status): not with "
                      "client.type \"h2load\"");
            goto fail;
        }
        if (own && s->client.kind != H2B_CLIENT_H2BENCH) {
            rc = fail(&c, own,
                      "load shapes, objectives and the search are h2bench load's: "
                      "not with client.type \"h2load\"");
            goto fail;
        }
        if (m->find_max.enabled && s->client.mpi.np) {
            rc = fail(&c, "matrix.find_max", "the search runs on one machine: not with client.mpi");
            goto fail;
        }
        for (size_t k = 0; k < s->matrix.nconnections && s->client.mpi.np; k++) {
            if (s->matrix.connections[k] < s->client.mpi.np) {
                rc = fail(&c, "client.mpi.np",
                          "%u MPI ranks but a cell has %u connections: every rank needs at "
                          "least one (matrix.connections are job totals)",
                          s->client.mpi.np, s->matrix.connections[k]);
                goto fail;
            }
        }
        s->has_matrix = true;
    } else if (json_object_get(doc, "targets") || json_object_get(doc, "client")) {
        rc = fail(&c, json_object_get(doc, "targets") ? "targets" : "client",
                  "targets and a client only make sense with a \"matrix\"");
        goto fail;
    }
    if (micro && (rc = parse_micro(&c, micro, &s->micro)))
        goto fail;
    if (perf_record && !matrix) {
        rc = fail(&c, "perf_record", "profiles are recorded during matrix cells: add a \"matrix\"");
        goto fail;
    }
    if (perf_record &&
        ((rc = get_string(&c, perf_record, "cells", "perf_record", NULL, &s->perf_record.cells)) ||
         (rc = get_bool(&c, perf_record, "client", "perf_record", false, &s->perf_record.client))))
        goto fail;
    if (perf_record && !s->perf_record.cells) {
        rc =
            fail(&c, "perf_record", "missing field 'cells' (the --filter syntax, e.g. \"100x10\")");
        goto fail;
    }
    *out = s;
    return H2B_OK;
fail:
    h2b_scenario_del(s);
    return rc;
}

void h2b_scenario_del(struct h2b_scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ntargets; i++) {
        struct h2b_target_spec *t = &s->targets[i];
        free(t->name);
        free(t->peer);
        free(t->url);
        free(t->cpus);
        free_strv(t->args);
        free_strv(t->command);
        free_strv(t->env);
        free(t->cwd);
    }
    free(s->targets);
    free(s->client.command);
    free(s->client.cpus);
    free_strv(s->client.args);
    free(s->client.mpi.hostfile);
    free_strv(s->client.mpi.mpirun);
    free(s->matrix.connections);
    free(s->matrix.streams);
    free(s->matrix.frame_sizes);
    free(s->matrix.window_bits);
    free(s->matrix.path);
    free(s->matrix.grpc_method);
    free(s->matrix.method);
    free(s->matrix.stages);
    free(s->matrix.step);
    free(s->matrix.slo);
    for (size_t i = 0; i < s->matrix.nslo_rules; i++) {
        free(s->matrix.slo_rules[i].filters);
        free(s->matrix.slo_rules[i].slo);
    }
    free(s->matrix.slo_rules);
    free(s->micro.filter);
    free(s->perf_record.cells);
    free(s->micro.profile);
    free(s->name);
    free(s->description);
    free(s);
}

int h2b_scenario_find_target(const struct h2b_scenario *s, const char *name)
{
    for (size_t i = 0; i < s->ntargets; i++) {
        if (strcmp(s->targets[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}
