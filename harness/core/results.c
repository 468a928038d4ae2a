/*
 * results.c - h2bench.result/1 documents.
 *
 * The schema lives here as data: one table of fields per entry kind (micro, matrix, latency),
 * each with its type and whether null is allowed, checked by one loop. Adding a field to the
 * contract is one table line. Metrics are nullable ("not measured here", the reason goes in
 * env.warnings or the entry's "note"); identifiers (names, connection counts, repeat) are not.
 * Unknown fields are accepted: the contract grows without a schema bump.
 */
#include "results.h"
#include "clock.h"
#include "env.h"
#include "error.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind {
    K_STRING,   /* non-empty string */
    K_COUNT,    /* integer >= 0 */
    K_POSITIVE, /* integer >= 1 */
    K_NUMBER,   /* number >= 0 */
    K_LATENCY,  /* object with latency_fields */
};

struct field {
    const char *key;
    enum kind kind;
    unsigned flags;
};

#define REQ H2B_JSON_REQUIRED
#define NUL H2B_JSON_NULLABLE

static const struct field latency_fields[] = {
    {"min", K_COUNT, NUL},  {"p50", K_COUNT, NUL}, {"p90", K_COUNT, NUL}, {"p99", K_COUNT, NUL},
    {"p999", K_COUNT, NUL}, {"max", K_COUNT, NUL}, {NULL, K_STRING, 0},
};

static const struct field micro_fields[] = {
    {"name", K_STRING, REQ},
    {"ops", K_COUNT, NUL},
    {"ns_per_op", K_NUMBER, NUL},
    {"bytes_per_op", K_NUMBER, NUL},
    {"allocs_per_op", K_NUMBER, NUL},
    {"p50_ns", K_COUNT, NUL},
    {"p99_ns", K_COUNT, NUL},
    {"p999_ns", K_COUNT, NUL},
    {"instructions_per_op", K_NUMBER, NUL},
    {"forks", K_COUNT, REQ},
    {NULL, K_STRING, 0},
};

static const struct field matrix_fields[] = {
    {"target", K_STRING, REQ},
    {"client", K_STRING, REQ},
    {"connections", K_POSITIVE, REQ},
    {"streams_requested", K_POSITIVE, REQ},
    {"streams_effective", K_POSITIVE, REQ},
    {"repeat", K_COUNT, REQ},
    {"requests", K_COUNT, NUL},
    {"succeeded", K_COUNT, NUL},
    {"failed", K_COUNT, NUL},
    {"errors", K_COUNT, NUL},
    {"duration_s", K_NUMBER, NUL},
    {"req_per_s", K_NUMBER, NUL},
    {"bytes_per_s", K_NUMBER, NUL},
    {"latency_ns", K_LATENCY, NUL},
    {"client_cpu_s", K_NUMBER, NUL},
    {"server_cpu_s", K_NUMBER, NUL},
    {"server_rss_kib", K_COUNT, NUL},
    {NULL, K_STRING, 0},
};

static const struct field tool_fields[] = {
    {"name", K_STRING, REQ},
    {"version", K_STRING, REQ},
    {"git_commit", K_STRING, REQ},
    {NULL, K_STRING, 0},
};

static const struct field scenario_fields[] = {
    {"name", K_STRING, NUL},
    {"file", K_STRING, NUL},
    {"sha256", K_STRING, NUL},
    {NULL, K_STRING, 0},
};

/* Checks every field of fields in obj (found at path). */
static int check_fields(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const struct field *fields, struct h2b_diag *d)
{
    for (const struct field *f = fields; f->key; f++) {
        uint64_t u;
        double x;
        const char *s;
        json_t *o;
        int rv;
        switch (f->kind) {
        case K_STRING:
            rv = h2b_json_get_string(src, obj, path, f->key, f->flags, &s, d);
            break;
        case K_COUNT:
        case K_POSITIVE:
            rv = h2b_json_get_u64(src, obj, path, f->key, f->flags, f->kind == K_POSITIVE,
                                  INT64_MAX, &u, d);
            break;
        case K_NUMBER:
            rv = h2b_json_get_double(src, obj, path, f->key, f->flags, 0, DBL_MAX, &x, d);
            break;
        case K_LATENCY:
            rv = h2b_json_get_object(src, obj, path, f->key, f->flags, &o, d);
            if (rv == H2B_OK) {
                char child[512];
                h2b_json_path_key(child, sizeof(child), path, f->key);
                rv = check_fields(src, o, child, latency_fields, d);
            }
            break;
        default:
            rv = H2B_ERR_INVAL;
        }
        if (rv < 0)
            return rv;
    }
    return H2B_OK;
}

/* Checks that section is an array of objects each matching fields. */
static int check_entries(const struct h2b_json_src *src, const json_t *doc, const char *section,
                         const struct field *fields, struct h2b_diag *d)
{
    json_t *array;
    int rv = h2b_json_get_array(src, doc, "", section, H2B_JSON_REQUIRED, &array, d);
    if (rv < 0)
        return rv;
    size_t i;
    json_t *entry;
    json_array_foreach(array, i, entry)
    {
        char path[64];
        json_t *obj;
        h2b_json_path_index(path, sizeof(path), section, i);
        if ((rv = h2b_json_check_object(src, entry, path, H2B_JSON_REQUIRED, &obj, d)) < 0 ||
            (rv = check_fields(src, obj, path, fields, d)) < 0)
            return rv;
    }
    return H2B_OK;
}

int h2b_results_validate(const json_t *doc, const struct h2b_json_src *src, struct h2b_diag *diag)
{
    const char *schema, *created;
    json_t *root, *obj;
    int rv;
    if ((rv = h2b_json_check_object(src, doc, "", H2B_JSON_REQUIRED, &root, diag)) < 0 ||
        (rv = h2b_json_get_string(src, root, "", "schema", H2B_JSON_REQUIRED, &schema, diag)) < 0)
        return H2B_ERR_PARSE;
    if (strcmp(schema, H2B_RESULTS_SCHEMA) != 0) {
        h2b_diag_set(diag, src ? src->file : NULL, src ? src->text : NULL, "schema",
                     "expected \"%s\", got \"%s\"", H2B_RESULTS_SCHEMA, schema);
        return H2B_ERR_PARSE;
    }
    if ((rv = h2b_json_get_string(src, root, "", "created", H2B_JSON_REQUIRED, &created, diag)) <
            0 ||
        (rv = h2b_json_get_object(src, root, "", "tool", H2B_JSON_REQUIRED, &obj, diag)) < 0 ||
        (rv = check_fields(src, obj, "tool", tool_fields, diag)) < 0 ||
        (rv = h2b_json_get_object(src, root, "", "scenario", H2B_JSON_REQUIRED, &obj, diag)) < 0 ||
        (rv = check_fields(src, obj, "scenario", scenario_fields, diag)) < 0 ||
        (rv = h2b_json_get_object(src, root, "", "env", H2B_JSON_REQUIRED, &obj, diag)) < 0 ||
        (rv = check_entries(src, root, "micro", micro_fields, diag)) < 0 ||
        (rv = check_entries(src, root, "matrix", matrix_fields, diag)) < 0)
        return H2B_ERR_PARSE;
    return H2B_OK;
}

int h2b_results_read(const char *path, json_t **out, struct h2b_diag *diag)
{
    json_t *doc;
    char *text;
    int rv = h2b_json_load(path, &doc, &text, diag);
    if (rv != H2B_OK)
        return rv;
    struct h2b_json_src src = {path, text};
    rv = h2b_results_validate(doc, &src, diag);
    free(text);
    if (rv != H2B_OK) {
        json_decref(doc);
        return rv;
    }
    *out = doc;
    return H2B_OK;
}

int h2b_results_write(const char *path, const json_t *doc, struct h2b_diag *diag)
{
    struct h2b_json_src src = {path, NULL};
    if (h2b_results_validate(doc, &src, diag) != H2B_OK)
        return H2B_ERR_INVAL;
    return h2b_json_write_atomic(path, doc, diag);
}

int h2b_results_append(json_t *doc, const char *section, json_t *entry)
{
    json_t *array = json_object_get(doc, section);
    if (!json_is_array(array)) {
        json_decref(entry);
        return H2B_ERR_INVAL;
    }
    return json_array_append_new(array, entry) == 0 ? H2B_OK : H2B_ERR_NOMEM;
}

int h2b_results_file_sha256(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return H2B_ERR_IO;
    int rv = H2B_ERR_NOMEM;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
        goto out;
    unsigned char buf[16384];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rv = H2B_ERR_IO;
            goto out;
        }
        if (n == 0)
            break;
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
            goto out;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32)
        goto out;
    for (unsigned i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    rv = H2B_OK;
out:
    EVP_MD_CTX_free(ctx);
    close(fd);
    return rv;
}

/* Builds {"name", "file", "sha256"} for the scenario; missing arguments become null. */
static int scenario_object(json_t **out, const char *name, const char *file)
{
    char hex[65];
    if (file) {
        int rv = h2b_results_file_sha256(file, hex);
        if (rv != H2B_OK)
            return rv;
    }
    json_t *s =
        json_pack("{s:s?, s:s?, s:s?}", "name", name, "file", file, "sha256", file ? hex : NULL);
    if (s == NULL)
        return H2B_ERR_NOMEM;
    *out = s;
    return H2B_OK;
}

int h2b_results_new(json_t **out, const char *scenario_name, const char *scenario_file)
{
    json_t *scenario, *env;
    int rv = scenario_object(&scenario, scenario_name, scenario_file);
    if (rv != H2B_OK)
        return rv;
    if ((rv = h2b_env_collect(&env)) != H2B_OK) {
        json_decref(scenario);
        return rv;
    }
    char created[32];
    h2b_clock_utc_string(created, sizeof(created));
    /* "o" steals the references, also when json_pack fails. */
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o, s:o, s:[], s:[]}", "schema",
                            H2B_RESULTS_SCHEMA, "created", created, "tool", "name", "h2bench",
                            "version", h2b_version(), "git_commit", h2b_version_git_commit(),
                            "scenario", scenario, "env", env, "micro", "matrix");
    if (doc == NULL)
        return H2B_ERR_NOMEM;
    *out = doc;
    return H2B_OK;
}
