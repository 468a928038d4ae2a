/*
 * peers.c - peer servers from servers/peers/: the table, placeholder expansion, rendering.
 *
 * Placeholders are {word}; an unknown word fails loudly instead of passing a literal "{prot}"
 * to nginx. Rendering writes the configuration next to the target's logs in its private run
 * directory, so a failed run leaves the exact files that were used for inspection.
 */
#include "run/peers.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "run/scenario.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef H2B_DATA_FROM_BIN
#define H2B_DATA_FROM_BIN "../share/h2bench"
#endif

int h2b_peers_default_dir(char *buf, size_t size)
{
    const char *env = getenv("H2B_PEERS_DIR");
    if (env && *env)
        return (size_t)snprintf(buf, size, "%s", env) < size ? H2B_OK : H2B_ERR_RANGE;
    char dir[PATH_MAX];
    int rc = h2b_self_dir(dir, sizeof(dir));
    if (rc != H2B_OK)
        return rc;
    return (size_t)snprintf(buf, size, "%s/%s/peers", dir, H2B_DATA_FROM_BIN) < size
               ? H2B_OK
               : H2B_ERR_RANGE;
}

static void free_strv(char **v)
{
    for (char **a = v; a && *a; a++)
        free(*a);
    free(v);
}

void h2b_peers_del(struct h2b_peers *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->npeers; i++) {
        struct h2b_peer *e = &p->peers[i];
        free_strv(e->command);
        free_strv(e->tls.command);
        free_strv(e->h1.command);
        free(e->name);
        free(e->config);
        free(e->tls.config);
        free(e->h1.config);
    }
    free(p->peers);
    free(p->names);
    free(p->dir);
    free(p);
}

static int bad(const struct h2b_json_src *src, struct h2b_diag *d, const char *where,
               const char *what)
{
    h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, where, "%s", what);
    return H2B_ERR_INVAL;
}

/* "command" (a non-empty list of strings) and "config" (a file name) of obj into v; either may
 * be absent when optional. where is the object's path. */
static int parse_start(const char *where, const json_t *obj, bool optional,
                       struct h2b_peer_variant *v, const struct h2b_json_src *src,
                       struct h2b_diag *d)
{
    char at[200];
    const json_t *cmd = json_object_get(obj, "command");
    snprintf(at, sizeof(at), "%s.command", where);
    if (cmd || !optional) {
        if (!json_is_array(cmd) || json_array_size(cmd) == 0)
            return bad(src, d, at, "expected a non-empty list of strings");
        v->command = calloc(json_array_size(cmd) + 1, sizeof(char *));
        if (!v->command)
            return H2B_ERR_NOMEM;
        for (size_t i = 0; i < json_array_size(cmd); i++) {
            const json_t *a = json_array_get(cmd, i);
            if (!json_is_string(a)) {
                snprintf(at, sizeof(at), "%s.command[%zu]", where, i);
                return bad(src, d, at, "expected a string");
            }
            if (!(v->command[i] = strdup(json_string_value(a))))
                return H2B_ERR_NOMEM;
        }
    }
    const json_t *cfg = json_object_get(obj, "config");
    if (cfg) {
        snprintf(at, sizeof(at), "%s.config", where);
        if (!json_is_string(cfg) || strchr(json_string_value(cfg), '/'))
            return bad(src, d, at, "expected a template file name in the peers directory");
        if (!(v->config = strdup(json_string_value(cfg))))
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

/* An optional variant object ("tls", "h1"): command and/or config. */
static int parse_variant(const char *name, const char *key, const json_t *obj, bool *has,
                         struct h2b_peer_variant *v, const struct h2b_json_src *src,
                         struct h2b_diag *d)
{
    char where[160];
    const json_t *o = json_object_get(obj, key);
    snprintf(where, sizeof(where), "%s.%s", name, key);
    if (!o)
        return H2B_OK;
    const char *k;
    json_t *value;
    if (!json_is_object(o))
        return bad(src, d, where, "expected an object");
    json_object_foreach((json_t *)o, k, value)
    {
        if (strcmp(k, "command") && strcmp(k, "config")) {
            snprintf(where, sizeof(where), "%s.%s.%s", name, key, k);
            return bad(src, d, where, "unknown field (known: command, config)");
        }
    }
    *has = true;
    return parse_start(where, o, true, v, src, d);
}

static int parse_peer(const char *name, const json_t *v, struct h2b_peer *peer,
                      const struct h2b_json_src *src, struct h2b_diag *d)
{
    char where[160];
    const char *key;
    json_t *value;
    snprintf(where, sizeof(where), "%s", name);
    if (!json_is_object(v))
        return bad(src, d, where, "expected an object");
    json_object_foreach((json_t *)v, key, value)
    {
        if (strcmp(key, "description") && strcmp(key, "command") && strcmp(key, "config") &&
            strcmp(key, "max_streams") && strcmp(key, "protocols") && strcmp(key, "tls") &&
            strcmp(key, "h1")) {
            snprintf(where, sizeof(where), "%s.%s", name, key);
            return bad(src, d, where,
                       "unknown field (known: description, command, config, max_streams, "
                       "protocols, tls, h1)");
        }
    }
    peer->name = strdup(name);
    if (!peer->name)
        return H2B_ERR_NOMEM;
    struct h2b_peer_variant base = {NULL, NULL};
    int rc = parse_start(name, v, false, &base, src, d);
    peer->command = base.command;
    peer->config = base.config;
    if (rc)
        return rc;
    const json_t *ms = json_object_get(v, "max_streams");
    snprintf(where, sizeof(where), "%s.max_streams", name);
    if (!json_is_integer(ms) || json_integer_value(ms) < 1 || json_integer_value(ms) > INT32_MAX)
        return bad(src, d, where, "expected a positive integer");
    peer->max_streams = (uint32_t)json_integer_value(ms);
    const json_t *protos = json_object_get(v, "protocols");
    snprintf(where, sizeof(where), "%s.protocols", name);
    peer->protocols = protos ? 0 : 1u << H2B_PROTO_H2;
    if (protos && (!json_is_array(protos) || json_array_size(protos) == 0))
        return bad(src, d, where, "expected a non-empty list of \"h1\", \"h2\", \"h3\"");
    for (size_t i = 0; protos && i < json_array_size(protos); i++) {
        const char *p = json_string_value(json_array_get(protos, i));
        int bit = -1;
        for (int k = 0; p && k < H2B_PROTO_COUNT; k++)
            if (strcmp(p, h2b_protocol_name((enum h2b_protocol)k)) == 0)
                bit = k;
        if (bit < 0) {
            snprintf(where, sizeof(where), "%s.protocols[%zu]", name, i);
            return bad(src, d, where, "expected \"h1\", \"h2\" or \"h3\"");
        }
        peer->protocols |= 1u << bit;
    }
    if ((rc = parse_variant(name, "tls", v, &peer->has_tls, &peer->tls, src, d)) ||
        (rc = parse_variant(name, "h1", v, &peer->has_h1, &peer->h1, src, d)))
        return rc;
    return H2B_OK;
}

int h2b_peers_from_json(const json_t *doc, const char *dir, struct h2b_peers **out,
                        const struct h2b_json_src *src, struct h2b_diag *d)
{
    if (!json_is_object(doc))
        return bad(src, d, "", "expected an object of peers");
    struct h2b_peers *p = calloc(1, sizeof(*p));
    size_t n = json_object_size(doc);
    int rc = H2B_ERR_NOMEM;
    if (!p)
        return rc;
    p->dir = strdup(dir);
    p->peers = calloc(n ? n : 1, sizeof(*p->peers));
    p->names = calloc(n + 1, sizeof(*p->names));
    if (!p->dir || !p->peers || !p->names)
        goto fail;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)doc, key, value)
    {
        if ((rc = parse_peer(key, value, &p->peers[p->npeers], src, d))) {
            p->npeers++;
            goto fail;
        }
        p->names[p->npeers] = p->peers[p->npeers].name;
        p->npeers++;
    }
    *out = p;
    return H2B_OK;
fail:
    h2b_peers_del(p);
    return rc;
}

const struct h2b_peer *h2b_peers_find(const struct h2b_peers *p, const char *name)
{
    for (size_t i = 0; i < p->npeers; i++) {
        if (strcmp(p->peers[i].name, name) == 0)
            return &p->peers[i];
    }
    return NULL;
}

int h2b_peers_expand(const char *tmpl, const struct h2b_peer_vars *vars, const char *config,
                     char **out, struct h2b_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return H2B_ERR_NOMEM;
    int rc = H2B_OK;
    for (const char *p = tmpl; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            fputc(*p++, f);
            continue;
        }
        char name[32];
        size_t n = (size_t)(close - p - 1);
        if (n == 0 || n >= sizeof(name) || strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_") != n) {
            /* Not a placeholder (nginx blocks: "events {"); copy the brace through. */
            fputc(*p++, f);
            continue;
        }
        memcpy(name, p + 1, n);
        name[n] = '\0';
        if (strcmp(name, "host") == 0)
            fputs(vars->host, f);
        else if (strcmp(name, "port") == 0)
            fprintf(f, "%u", vars->port);
        else if (strcmp(name, "threads") == 0)
            fprintf(f, "%u", vars->threads);
        else if (strcmp(name, "max_streams") == 0)
            fprintf(f, "%u", vars->max_streams);
        else if (strcmp(name, "docroot") == 0)
            fputs(vars->docroot, f);
        else if (strcmp(name, "dir") == 0)
            fputs(vars->dir, f);
        else if (strcmp(name, "config") == 0 && config)
            fputs(config, f);
        else if ((strcmp(name, "cert") == 0 || strcmp(name, "key") == 0) &&
                 (name[0] == 'c' ? vars->cert : vars->key))
            fputs(name[0] == 'c' ? vars->cert : vars->key, f);
        else {
            h2b_diag_at(d, NULL, 0, 0, "unknown placeholder {%s}", name);
            rc = H2B_ERR_PARSE;
        }
        p = close + 1;
    }
    if (fclose(f) != 0 && rc == H2B_OK)
        rc = H2B_ERR_NOMEM;
    if (rc != H2B_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    return H2B_OK;
}

int h2b_peers_prepare(const struct h2b_peers *p, const struct h2b_peer *peer,
                      const struct h2b_peer_variant *variant, const struct h2b_peer_vars *vars,
                      char ***argv, struct h2b_diag *d)
{
    char config_path[4096] = "";
    int rc;
    const char *config = variant && variant->config ? variant->config : peer->config;
    char **command = variant && variant->command ? variant->command : peer->command;
    if (config) {
        char tmpl_path[4096];
        char *tmpl = NULL, *text = NULL;
        snprintf(tmpl_path, sizeof(tmpl_path), "%s/%s", p->dir, config);
        snprintf(config_path, sizeof(config_path), "%s/%s.conf", vars->dir, peer->name);
        size_t tlen;
        if ((rc = h2b_fs_read_file(tmpl_path, H2B_JSON_MAX_FILE, &tmpl, &tlen, NULL))) {
            h2b_diag_at(d, NULL, 0, 0, "cannot read %s", tmpl_path);
            return rc;
        }
        rc = h2b_peers_expand(tmpl, vars, config_path, &text, d);
        free(tmpl);
        if (rc)
            return rc;
        FILE *f = fopen(config_path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            h2b_diag_at(d, NULL, 0, 0, "cannot write %s", config_path);
            free(text);
            return H2B_ERR_IO;
        }
        free(text);
    }
    size_t n = 0;
    while (command[n])
        n++;
    char **v = calloc(n + 1, sizeof(*v));
    if (!v)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((rc = h2b_peers_expand(command[i], vars, config_path, &v[i], d))) {
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            return rc;
        }
    }
    *argv = v;
    return H2B_OK;
}
