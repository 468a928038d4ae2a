/*
 * ceilings.c - load, validate, serialise and render the stored ceilings (see ceilings.h).
 *
 * Validation is strict and positional: the file is parsed into a jansson tree, then every value
 * is checked against the schema, and a bad one is reported at its line and column in the text
 * (h2b_json_locate finds a dotted path in the original text, since jansson keeps no positions).
 * All problems are reported, not only the first, so a hand edit is fixed in one round.
 *
 * Rejected: accepting unknown keys with a warning. A misspelt metric would then silently remove a
 * gate, which is exactly the "regression but exit 0" failure the gate exists to prevent.
 */
#include "gates/ceilings.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/results.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The gated micro metrics: a ceilings file names each by its results key (the member's row in
 * the core model's table). */
#define MICRO(member) offsetof(struct h2b_results_micro, member)
/* the fingerprint's instructions_source: the micro entries' field of that name */
#define FP_INSTRUCTIONS_SOURCE                                                                     \
    h2b_model_key_at(&h2b_results_micro_model, MICRO(instructions_source))
/* A ceilings file's fingerprint names each fact by its key in the results' env. */
#define ENV_KEY(member) H2B_MODEL_KEY(h2b_results_env_model, struct h2b_results_env, member)
static const struct {
    size_t member;
    const char *label, *unit;
} metrics[H2B_METRIC_COUNT] = {
    [H2B_METRIC_BYTES_PER_OP] = {MICRO(bytes_per_op), "B/op", " B"},
    [H2B_METRIC_ALLOCS_PER_OP] = {MICRO(allocs_per_op), "allocs/op", ""},
    [H2B_METRIC_P99_NS] = {MICRO(p99_ns), "p99", " ns"},
    [H2B_METRIC_INSTRUCTIONS_PER_OP] = {MICRO(instructions_per_op), "instr/op", ""},
};

const char *h2b_metric_key(enum h2b_metric m)
{
    return (unsigned)m < H2B_METRIC_COUNT
               ? h2b_model_key_at(&h2b_results_micro_model, metrics[m].member)
               : NULL;
}

const char *h2b_metric_label(enum h2b_metric m)
{
    return (unsigned)m < H2B_METRIC_COUNT ? metrics[m].label : "?";
}

const char *h2b_metric_unit(enum h2b_metric m)
{
    return (unsigned)m < H2B_METRIC_COUNT ? metrics[m].unit : "";
}

double h2b_metric_value(const struct h2b_results_micro *e, enum h2b_metric m)
{
    if ((unsigned)m >= H2B_METRIC_COUNT)
        return NAN;
    double v;
    memcpy(&v, (const char *)e + metrics[m].member, sizeof(v));
    return v;
}

int h2b_metric_from_key(const char *key)
{
    for (int m = 0; m < H2B_METRIC_COUNT; m++) {
        if (strcmp(key, h2b_metric_key((enum h2b_metric)m)) == 0)
            return m;
    }
    return -1;
}

/* Parsing context: where diagnostics point and how many were printed. */
struct parse {
    const struct h2b_json_src *src;
    int errors;
    h2b_diag_fn report; /* every problem goes here (the CLI prints it); may be NULL */
    void *arg;
};

static void bad(struct parse *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(struct parse *p, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct h2b_diag d;
    h2b_diag_set(&d, p->src->file, p->src->text, path, "%s", msg);
    if (p->report)
        p->report(p->arg, &d);
    p->errors++;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* A finite, non-negative number at path, or an error. */
static bool number_at(struct parse *p, const json_t *v, const char *path, double *out)
{
    if (!json_is_number(v)) {
        bad(p, path, "expected a non-negative number, found %s", type_name(v));
        return false;
    }
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0) {
        bad(p, path, "expected a non-negative number, found %g", d);
        return false;
    }
    *out = d;
    return true;
}

static int parse_ceiling(struct parse *p, const json_t *v, const char *path, struct h2b_ceiling *c)
{
    char sub[1024];
    if (!json_is_object(v)) {
        bad(p, path, "expected an object {\"max\": N, \"why\": \"...\"}, found %s", type_name(v));
        return H2B_OK;
    }
    const char *key;
    json_t *item;
    bool have_max = false;
    const char *why = NULL;
    json_object_foreach((json_t *)v, key, item)
    {
        h2b_json_path_key(sub, sizeof(sub), path, key);
        if (strcmp(key, "max") == 0) {
            have_max = number_at(p, item, sub, &c->max);
        } else if (strcmp(key, "why") == 0) {
            if (!json_is_string(item) || json_string_length(item) == 0)
                bad(p, sub,
                    "expected a non-empty string saying when, from which runs and with "
                    "what headroom, found %s",
                    json_is_string(item) ? "an empty string" : type_name(item));
            else
                why = json_string_value(item);
        } else {
            bad(p, sub, "unknown key (expected \"max\" or \"why\")");
        }
    }
    if (!json_object_get(v, "max"))
        bad(p, path, "missing \"max\"");
    if (!json_object_get(v, "why"))
        bad(p, path, "missing \"why\" (when, from which runs, what headroom)");
    if (!have_max || !why)
        return H2B_OK;
    c->why = strdup(why);
    if (!c->why)
        return H2B_ERR_NOMEM;
    c->set = true;
    return H2B_OK;
}

static int parse_baseline(struct parse *p, const json_t *v, const char *path,
                          struct h2b_baseline *b)
{
    const char *const keys[] = {h2b_metric_key(H2B_METRIC_BYTES_PER_OP),
                                h2b_metric_key(H2B_METRIC_ALLOCS_PER_OP),
                                h2b_model_key_at(&h2b_results_micro_model, MICRO(p50_ns)),
                                h2b_metric_key(H2B_METRIC_P99_NS),
                                h2b_model_key_at(&h2b_results_micro_model, MICRO(p999_ns)),
                                "runs"};
    double *dst[] = {&b->bytes_per_op, &b->allocs_per_op, &b->p50_ns, &b->p99_ns, &b->p999_ns};
    bool *has[] = {&b->has_bytes, &b->has_allocs, &b->has_p50, &b->has_p99, &b->has_p999};
    char sub[1024];
    if (!json_is_object(v)) {
        bad(p, path, "expected an object of observed values, found %s", type_name(v));
        return H2B_OK;
    }
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        h2b_json_path_key(sub, sizeof(sub), path, key);
        if (strcmp(key, "note") == 0) {
            if (!json_is_string(item)) {
                bad(p, sub, "expected a string, found %s", type_name(item));
                continue;
            }
            free(b->note);
            if (!(b->note = strdup(json_string_value(item))))
                return H2B_ERR_NOMEM;
            continue;
        }
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], key) != 0)
            k++;
        if (k == sizeof(keys) / sizeof(keys[0])) {
            bad(p, sub,
                "unknown key (expected bytes_per_op, allocs_per_op, p50_ns, p99_ns, "
                "p999_ns, runs or note)");
            continue;
        }
        double d;
        if (!number_at(p, item, sub, &d))
            continue;
        if (k == 5) {
            if (d != floor(d) || d > 1e6)
                bad(p, sub, "expected a whole number of runs");
            else
                b->runs = (int)d;
        } else {
            *dst[k] = d;
            *has[k] = true;
        }
    }
    return H2B_OK;
}

static int parse_bench(struct parse *p, const char *name, const json_t *v,
                       struct h2b_ceiling_bench *b)
{
    char path[1024], sub[1200];
    h2b_json_path_key(path, sizeof(path), "benchmarks", name);
    if (!json_is_object(v)) {
        bad(p, path, "expected an object of ceilings, found %s", type_name(v));
        return H2B_OK;
    }
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        h2b_json_path_key(sub, sizeof(sub), path, key);
        int m = h2b_metric_from_key(key);
        if (m >= 0) {
            int rv = parse_ceiling(p, item, sub, &b->metric[m]);
            if (rv != H2B_OK)
                return rv;
        } else if (strcmp(key, "baseline") == 0) {
            int rv = parse_baseline(p, item, sub, &b->baseline);
            if (rv != H2B_OK)
                return rv;
        } else {
            bad(p, sub,
                "unknown metric (expected bytes_per_op, allocs_per_op, p99_ns, "
                "instructions_per_op or baseline)");
        }
    }
    return H2B_OK;
}

int h2b_ceilings_new(struct h2b_ceilings **out)
{
    struct h2b_ceilings *c = calloc(1, sizeof(*c));
    if (!c)
        return H2B_ERR_NOMEM;
    *out = c;
    return H2B_OK;
}

int h2b_ceilings_add(struct h2b_ceilings *c, const char *name, struct h2b_ceiling_bench **bench)
{
    struct h2b_ceiling_bench *grown = realloc(c->benches, (c->count + 1) * sizeof(*grown));
    if (!grown)
        return H2B_ERR_NOMEM;
    c->benches = grown;
    struct h2b_ceiling_bench *b = &c->benches[c->count];
    memset(b, 0, sizeof(*b));
    b->name = strdup(name);
    if (!b->name)
        return H2B_ERR_NOMEM;
    c->count++;
    *bench = b;
    return H2B_OK;
}

int h2b_ceilings_set(struct h2b_ceiling_bench *b, enum h2b_metric m, double max, const char *why)
{
    char *w = strdup(why);
    if (!w)
        return H2B_ERR_NOMEM;
    free(b->metric[m].why);
    b->metric[m].why = w;
    b->metric[m].max = max;
    b->metric[m].set = true;
    return H2B_OK;
}

void h2b_ceilings_del(struct h2b_ceilings *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++) {
        free(c->benches[i].name);
        free(c->benches[i].baseline.note);
        for (int m = 0; m < H2B_METRIC_COUNT; m++)
            free(c->benches[i].metric[m].why);
    }
    free(c->benches);
    h2b_fingerprint_free(&c->fingerprint);
    free(c);
}

/* ---------------------------------------------------------------- fingerprint */

void h2b_fingerprint_free(struct h2b_fingerprint *fp)
{
    free(fp->cpu_model);
    free(fp->kernel);
    free(fp->compiler);
    free(fp->build_type);
    free(fp->nghttp2);
    free(fp->instructions_source);
    memset(fp, 0, sizeof(*fp));
}

static int dup_field(char **to, const char *from)
{
    *to = NULL;
    if (!from)
        return H2B_OK;
    *to = strdup(from);
    return *to ? H2B_OK : H2B_ERR_NOMEM;
}

int h2b_fingerprint_copy(struct h2b_fingerprint *to, const struct h2b_fingerprint *from)
{
    h2b_fingerprint_free(to);
    struct h2b_fingerprint f = {.set = from->set, .cpus = from->cpus};
    if (dup_field(&f.cpu_model, from->cpu_model) || dup_field(&f.kernel, from->kernel) ||
        dup_field(&f.compiler, from->compiler) || dup_field(&f.build_type, from->build_type) ||
        dup_field(&f.nghttp2, from->nghttp2) ||
        dup_field(&f.instructions_source, from->instructions_source)) {
        h2b_fingerprint_free(&f);
        return H2B_ERR_NOMEM;
    }
    *to = f;
    return H2B_OK;
}

void h2b_fingerprint_view(const struct h2b_results_env *env, struct h2b_fingerprint *fp)
{
    memset(fp, 0, sizeof(*fp));
    if (!env->base.present)
        return;
    fp->set = true;
    /* cpus is a count of CPUs online: one beyond int is no machine, "not recorded" */
    fp->cpus = env->cpus >= 1 && env->cpus <= INT_MAX ? (int)env->cpus : 0;
    fp->cpu_model = env->cpu_model;
    fp->kernel = env->kernel;
    fp->compiler = env->compiler;
    fp->build_type = env->build_type;
    fp->nghttp2 = env->nghttp2;
}

static bool same_str(const char *key, const char *want, const char *have, char *why, size_t size)
{
    if (!want || (have && strcmp(want, have) == 0))
        return true;
    snprintf(why, size, "%s '%.120s' here", key, have ? have : "unknown");
    return false;
}

bool h2b_fingerprint_same_build(const struct h2b_fingerprint *want,
                                const struct h2b_fingerprint *have, char *why, size_t size)
{
    if (!want->set)
        return true;
    return same_str(ENV_KEY(compiler), want->compiler, have->compiler, why, size) &&
           same_str("build type", want->build_type, have->build_type, why, size) &&
           same_str(ENV_KEY(nghttp2), want->nghttp2, have->nghttp2, why, size);
}

bool h2b_fingerprint_same_machine(const struct h2b_fingerprint *want,
                                  const struct h2b_fingerprint *have, char *why, size_t size)
{
    if (!want->set)
        return true;
    if (!same_str(ENV_KEY(cpu_model), want->cpu_model, have->cpu_model, why, size) ||
        !same_str(ENV_KEY(kernel), want->kernel, have->kernel, why, size))
        return false;
    if (want->cpus && want->cpus != have->cpus) {
        snprintf(why, size, "%d CPUs here", have->cpus);
        return false;
    }
    return h2b_fingerprint_same_build(want, have, why, size);
}

static int parse_fingerprint(struct parse *p, const json_t *v, struct h2b_fingerprint *fp)
{
    const char *const keys[] = {ENV_KEY(cpu_model),  ENV_KEY(kernel),  ENV_KEY(compiler),
                                ENV_KEY(build_type), ENV_KEY(nghttp2), FP_INSTRUCTIONS_SOURCE};
    if (!json_is_object(v)) {
        bad(p, "fingerprint",
            "expected an object (cpu_model, cpus, kernel, compiler, "
            "build_type, nghttp2, instructions_source), found %s",
            type_name(v));
        return H2B_OK;
    }
    char *dst[6] = {NULL};
    const char *key;
    json_t *item;
    char sub[256];
    int rv = H2B_OK;
    json_object_foreach((json_t *)v, key, item)
    {
        h2b_json_path_key(sub, sizeof(sub), "fingerprint", key);
        if (strcmp(key, ENV_KEY(cpus)) == 0) {
            if (!json_is_integer(item) || json_integer_value(item) < 1 ||
                json_integer_value(item) > 65536)
                bad(p, sub, "expected a CPU count 1..65536, found %s", type_name(item));
            else
                fp->cpus = (int)json_integer_value(item);
            continue;
        }
        size_t k = 0;
        while (k < 6 && strcmp(keys[k], key) != 0)
            k++;
        if (k == 6) {
            bad(p, sub,
                "unknown key (expected cpu_model, cpus, kernel, compiler, build_type, "
                "nghttp2 or instructions_source)");
        } else if (!json_is_string(item) || json_string_length(item) == 0) {
            bad(p, sub, "expected a non-empty string, found %s", type_name(item));
        } else if (!dst[k] && !(dst[k] = strdup(json_string_value(item)))) {
            rv = H2B_ERR_NOMEM;
        }
    }
    fp->cpu_model = dst[0];
    fp->kernel = dst[1];
    fp->compiler = dst[2];
    fp->build_type = dst[3];
    fp->nghttp2 = dst[4];
    fp->instructions_source = dst[5];
    fp->set = true;
    return rv;
}

static int fingerprint_to_json(const struct h2b_fingerprint *fp, json_t *root)
{
    json_t *o = json_object();
    if (!o || json_object_set_new(root, "fingerprint", o))
        return H2B_ERR_NOMEM;
    const char *keys[] = {ENV_KEY(cpu_model),    ENV_KEY(cpus),       ENV_KEY(kernel),
                          ENV_KEY(compiler),     ENV_KEY(build_type), ENV_KEY(nghttp2),
                          FP_INSTRUCTIONS_SOURCE};
    const char *vals[] = {fp->cpu_model,          NULL,           fp->kernel,
                          fp->compiler,           fp->build_type, fp->nghttp2,
                          fp->instructions_source};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = i == 1 ? (fp->cpus ? json_integer(fp->cpus) : NULL)
                           : (vals[i] ? json_string(vals[i]) : NULL);
        if (v && json_object_set_new(o, keys[i], v))
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

/* ---------------------------------------------------------------- the file */

int h2b_ceilings_from_json(const json_t *root, const struct h2b_json_src *src,
                           struct h2b_ceilings **out, h2b_diag_fn report, void *arg)
{
    struct parse p = {.src = src, .report = report, .arg = arg};
    struct h2b_ceilings *c = NULL;
    int rv = h2b_ceilings_new(&c);
    if (rv != H2B_OK)
        return rv;
    if (!json_is_object(root)) {
        bad(&p, "", "expected an object {\"schema\": \"%s\", \"benchmarks\": {...}}, found %s",
            H2B_CEILINGS_SCHEMA, type_name(root));
        goto out_check;
    }
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)root, key, item)
    {
        if (strcmp(key, "schema") == 0) {
            if (!json_is_string(item) || strcmp(json_string_value(item), H2B_CEILINGS_SCHEMA))
                bad(&p, "schema", "expected \"%s\"", H2B_CEILINGS_SCHEMA);
        } else if (strcmp(key, "benchmarks") == 0) {
            if (!json_is_object(item)) {
                bad(&p, "benchmarks", "expected an object keyed by benchmark name, found %s",
                    type_name(item));
                continue;
            }
            const char *name;
            json_t *bench;
            json_object_foreach(item, name, bench)
            {
                struct h2b_ceiling_bench *b;
                rv = h2b_ceilings_add(c, name, &b);
                if (rv == H2B_OK)
                    rv = parse_bench(&p, name, bench, b);
                if (rv != H2B_OK)
                    goto out_del;
            }
        } else if (strcmp(key, "fingerprint") == 0) {
            rv = parse_fingerprint(&p, item, &c->fingerprint);
            if (rv != H2B_OK)
                goto out_del;
        } else if (strcmp(key, "comment") != 0 && strcmp(key, "cells") != 0) {
            /* "cells" (end-to-end gates on matrix cells) is validated by cells.c. */
            bad(&p, key,
                "unknown key (expected schema, fingerprint, benchmarks, cells or comment)");
        }
    }
    if (!json_object_get(root, "schema"))
        bad(&p, "", "missing \"schema\": \"%s\"", H2B_CEILINGS_SCHEMA);
    if (!json_object_get(root, "benchmarks") && !json_object_get(root, "cells"))
        bad(&p, "", "missing \"benchmarks\" (or \"cells\")");
out_check:
    if (p.errors) {
        rv = H2B_ERR_PARSE;
        goto out_del;
    }
    *out = c;
    return H2B_OK;
out_del:
    h2b_ceilings_del(c);
    return rv;
}

int h2b_ceilings_load(const char *path, struct h2b_ceilings **out, h2b_diag_fn report, void *arg)
{
    json_t *root = NULL;
    char *text = NULL;
    struct h2b_diag d;
    int rv = h2b_json_load(path, &root, &text, &d);
    if (rv != H2B_OK) {
        if (report)
            report(arg, &d);
        return rv == H2B_ERR_IO ? H2B_ERR_NOTFOUND : rv; /* unreadable input: the user's to fix */
    }
    struct h2b_json_src src = {.file = path, .text = text};
    rv = h2b_ceilings_from_json(root, &src, out, report, arg);
    json_decref(root);
    free(text);
    return rv;
}

const struct h2b_ceiling_bench *h2b_ceilings_find(const struct h2b_ceilings *c, const char *name)
{
    for (size_t i = 0; i < c->count; i++) {
        if (strcmp(c->benches[i].name, name) == 0)
            return &c->benches[i];
    }
    return NULL;
}

/* Integral values as JSON integers so the file reads "max": 192, not 192.0. */
static json_t *number(double d)
{
    if (d == floor(d) && fabs(d) < 9e15)
        return json_integer((json_int_t)d);
    return json_real(d);
}

int h2b_ceilings_to_json(const struct h2b_ceilings *c, char **out)
{
    int rv = H2B_ERR_NOMEM;
    json_t *root = json_object(), *benches = json_object();
    if (!root || !benches)
        goto out;
    if (json_object_set_new(root, "schema", json_string(H2B_CEILINGS_SCHEMA)) ||
        (c->fingerprint.set && fingerprint_to_json(&c->fingerprint, root) != H2B_OK) ||
        json_object_set(root, "benchmarks", benches))
        goto out;
    for (size_t i = 0; i < c->count; i++) {
        const struct h2b_ceiling_bench *b = &c->benches[i];
        json_t *o = json_object();
        if (!o || json_object_set_new(benches, b->name, o))
            goto out;
        for (int m = 0; m < H2B_METRIC_COUNT; m++) {
            if (!b->metric[m].set)
                continue;
            json_t *ce = json_object();
            if (!ce || json_object_set_new(o, h2b_metric_key((enum h2b_metric)m), ce) ||
                json_object_set_new(ce, "max", number(b->metric[m].max)) ||
                json_object_set_new(ce, "why", json_string(b->metric[m].why)))
                goto out;
        }
        const struct h2b_baseline *bl = &b->baseline;
        json_t *base = json_object();
        if (!base)
            goto out;
        const struct h2b_model *mm = &h2b_results_micro_model;
        if ((bl->has_bytes && json_object_set_new(base, h2b_metric_key(H2B_METRIC_BYTES_PER_OP),
                                                  number(bl->bytes_per_op))) ||
            (bl->has_allocs && json_object_set_new(base, h2b_metric_key(H2B_METRIC_ALLOCS_PER_OP),
                                                   number(bl->allocs_per_op))) ||
            (bl->has_p50 &&
             json_object_set_new(base, h2b_model_key_at(mm, MICRO(p50_ns)), number(bl->p50_ns))) ||
            (bl->has_p99 &&
             json_object_set_new(base, h2b_metric_key(H2B_METRIC_P99_NS), number(bl->p99_ns))) ||
            (bl->has_p999 && json_object_set_new(base, h2b_model_key_at(mm, MICRO(p999_ns)),
                                                 number(bl->p999_ns))) ||
            (bl->runs && json_object_set_new(base, "runs", json_integer(bl->runs))) ||
            (bl->note && json_object_set_new(base, "note", json_string(bl->note)))) {
            json_decref(base);
            goto out;
        }
        if (json_object_size(base) == 0)
            json_decref(base);
        else if (json_object_set_new(o, "baseline", base))
            goto out;
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text)
        goto out;
    struct h2b_buf b = {0};
    h2b_buf_printf(&b, "%s\n", text);
    free(text);
    rv = h2b_buf_finish(&b, out);
out:
    json_decref(benches);
    json_decref(root);
    return rv;
}

static void md_value(struct h2b_buf *b, bool has, double v, const char *unit)
{
    if (has && v == floor(v))
        h2b_buf_printf(b, " %.0f%s |", v, unit);
    else if (has)
        h2b_buf_printf(b, " %.2f%s |", v, unit);
    else
        h2b_buf_printf(b, " — |");
}

int h2b_ceilings_baselines_md(const struct h2b_ceilings *c, const char *source, char **out)
{
    struct h2b_buf b = {0};
    h2b_buf_printf(
        &b,
        "# Baselines\n\n"
        "<!-- Generated from %s by `h2bench gate --baselines-md`; do not edit. -->\n\n"
        "Observed values of the component suite (`h2bench micro --profile ci`, Release "
        "build) and the p99 ceiling the CI gate enforces. Allocation ceilings are exact: "
        "the observed values, or the next whole unit where the runner flags the "
        "allocation as not deterministic (see the why lines). See `docs/gates.md` for "
        "the policy.\n\n",
        source);
    const struct h2b_fingerprint *fp = &c->fingerprint;
    if (fp->set) {
        h2b_buf_printf(&b, "Set on: ");
        h2b_buf_md(&b, fp->cpu_model ? fp->cpu_model : "unrecorded CPU");
        h2b_buf_printf(&b, ", %d CPUs, ", fp->cpus);
        h2b_buf_md(&b, fp->kernel ? fp->kernel : "unrecorded kernel");
        h2b_buf_printf(&b, "; build ");
        h2b_buf_md(&b, fp->compiler ? fp->compiler : "?");
        h2b_buf_printf(&b, " ");
        h2b_buf_md(&b, fp->build_type ? fp->build_type : "?");
        h2b_buf_printf(&b, ", nghttp2 ");
        h2b_buf_md(&b, fp->nghttp2 ? fp->nghttp2 : "?");
        if (fp->instructions_source) {
            h2b_buf_printf(&b, ", instructions from ");
            h2b_buf_md(&b, fp->instructions_source);
        }
        h2b_buf_printf(&b, ". The p99 ceilings apply only on this machine fingerprint, the "
                           "instruction ceilings only with this build.\n\n");
    }
    h2b_buf_printf(&b, "| Benchmark | B/op | p50 | p99 | p999 | CI p99 ceiling | instr/op ceiling "
                       "|\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < c->count; i++) {
        const struct h2b_ceiling_bench *e = &c->benches[i];
        const struct h2b_baseline *bl = &e->baseline;
        const struct h2b_ceiling *bytes = &e->metric[H2B_METRIC_BYTES_PER_OP];
        const struct h2b_ceiling *p99 = &e->metric[H2B_METRIC_P99_NS];
        h2b_buf_puts(&b, "| ");
        h2b_buf_md_code(&b, e->name);
        h2b_buf_puts(&b, " |");
        md_value(&b, bl->has_bytes || bytes->set, bl->has_bytes ? bl->bytes_per_op : bytes->max,
                 "");
        md_value(&b, bl->has_p50, bl->p50_ns, " ns");
        md_value(&b, bl->has_p99, bl->p99_ns, " ns");
        md_value(&b, bl->has_p999, bl->p999_ns, " ns");
        if (p99->set || !bl->note)
            md_value(&b, p99->set, p99->max, " ns");
        else
            h2b_buf_printf(&b, " not gated¹ |");
        const struct h2b_ceiling *ins = &e->metric[H2B_METRIC_INSTRUCTIONS_PER_OP];
        md_value(&b, ins->set, ins->max, "");
        h2b_buf_printf(&b, "\n");
    }
    bool notes = false;
    for (size_t i = 0; i < c->count; i++) {
        const struct h2b_ceiling_bench *e = &c->benches[i];
        if (e->baseline.note && !e->metric[H2B_METRIC_P99_NS].set) {
            h2b_buf_puts(&b, notes ? "; " : "\n¹ ");
            h2b_buf_md_code(&b, e->name);
            h2b_buf_puts(&b, ": ");
            h2b_buf_md(&b, e->baseline.note);
            notes = true;
        }
    }
    if (notes)
        h2b_buf_printf(&b, ".\n");
    h2b_buf_printf(&b, "\n## Why these ceilings\n\n");
    for (size_t i = 0; i < c->count; i++) {
        const struct h2b_ceiling_bench *e = &c->benches[i];
        for (int m = 0; m < H2B_METRIC_COUNT; m++) {
            if (!e->metric[m].set)
                continue;
            h2b_buf_printf(&b, "- `");
            h2b_buf_md(&b, e->name);
            h2b_buf_printf(&b, "` %s ≤ %.15g%s: ", metrics[m].label, e->metric[m].max,
                           metrics[m].unit);
            h2b_buf_md(&b, e->metric[m].why);
            h2b_buf_printf(&b, "\n");
        }
    }
    return h2b_buf_finish(&b, out);
}
