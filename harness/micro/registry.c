/*
 * registry.c - benchmarks registered by H2B_MICRO_BENCH, expanded into named instances.
 *
 * Registration runs in constructors, before main and before anything could report an error, so
 * h2b_micro_register only records the pointer in a fixed table; h2b__micro_registry_load
 * validates names and expands "params" lists when the runner starts. A fixed table (no malloc in
 * constructors) keeps registration independent of the counting allocator's start-up order.
 */
#include "core/error.h"
#include "micro/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct h2b_micro_bench *registered[H2B_MICRO_MAX_INSTANCES];
static size_t registered_count;
static bool registered_overflow;

static struct h2b_micro_instance instances[H2B_MICRO_MAX_INSTANCES];
static size_t instance_count;
static bool loaded;

void h2b_micro_register(const struct h2b_micro_bench *bench)
{
    if (registered_count == H2B_MICRO_MAX_INSTANCES) {
        registered_overflow = true;
        return;
    }
    registered[registered_count++] = bench;
}

static bool valid_name(const char *name)
{
    if (!name || !name[0])
        return false;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.' || c == '/' || c == ':';
        if (!ok)
            return false;
    }
    return true;
}

static int add_instance(const struct h2b_micro_bench *b, const char *suffix, int64_t param)
{
    if (instance_count == H2B_MICRO_MAX_INSTANCES) {
        fprintf(stderr, "micro: more than %d benchmark instances\n", H2B_MICRO_MAX_INSTANCES);
        return H2B_ERR_RANGE;
    }
    struct h2b_micro_instance *in = &instances[instance_count];
    int len = snprintf(in->name, sizeof in->name, "%s%s%s", b->name, suffix ? "/" : "",
                       suffix ? suffix : "");
    if (len < 0 || (size_t)len >= sizeof in->name) {
        fprintf(stderr, "micro: benchmark name '%s' is too long\n", b->name);
        return H2B_ERR_INVAL;
    }
    for (size_t i = 0; i < instance_count; i++) {
        if (strcmp(instances[i].name, in->name) == 0) {
            fprintf(stderr, "micro: benchmark '%s' is registered twice\n", in->name);
            return H2B_ERR_INVAL;
        }
    }
    in->bench = h2b__micro_inject(b, in->name);
    in->param = param;
    in->ops_per_call = b->ops_per_call ? b->ops_per_call : 1;
    instance_count++;
    return H2B_OK;
}

/* Expands "1,8,64" into one instance per value. */
static int add_params(const struct h2b_micro_bench *b)
{
    const char *p = b->params;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char text[32];
        if (len == 0 || len >= sizeof text)
            goto bad;
        memcpy(text, p, len);
        text[len] = '\0';
        char *stop;
        errno = 0;
        long long v = strtoll(text, &stop, 10);
        if (errno != 0 || *stop != '\0' || stop == text)
            goto bad;
        int rc = add_instance(b, text, (int64_t)v);
        if (rc != H2B_OK)
            return rc;
        p += len;
        if (*p == ',')
            p++;
    }
    return H2B_OK;
bad:
    fprintf(stderr, "micro: benchmark '%s': params must be a list of integers like \"1,8,64\"\n",
            b->name);
    return H2B_ERR_INVAL;
}

int h2b__micro_registry_load(void)
{
    if (loaded)
        return H2B_OK;
    if (registered_overflow) {
        fprintf(stderr, "micro: more than %d benchmarks registered\n", H2B_MICRO_MAX_INSTANCES);
        return H2B_ERR_RANGE;
    }
    instance_count = 0;
    for (size_t i = 0; i < registered_count; i++) {
        const struct h2b_micro_bench *b = registered[i];
        if (!valid_name(b->name)) {
            fprintf(stderr, "micro: invalid benchmark name '%s' (letters, digits, -_./: only)\n",
                    b->name ? b->name : "(null)");
            return H2B_ERR_INVAL;
        }
        if (!b->fn) {
            fprintf(stderr, "micro: benchmark '%s' has no .fn\n", b->name);
            return H2B_ERR_INVAL;
        }
        int rc = b->params && b->params[0] ? add_params(b) : add_instance(b, NULL, 0);
        if (rc != H2B_OK)
            return rc;
    }
    loaded = true;
    return H2B_OK;
}

size_t h2b__micro_instance_count(void)
{
    return instance_count;
}

const struct h2b_micro_instance *h2b__micro_instance(size_t i)
{
    return i < instance_count ? &instances[i] : NULL;
}

const struct h2b_micro_instance *h2b__micro_find(const char *name)
{
    for (size_t i = 0; i < instance_count; i++) {
        if (strcmp(instances[i].name, name) == 0)
            return &instances[i];
    }
    return NULL;
}
