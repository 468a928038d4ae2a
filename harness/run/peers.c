/*
 * peers.c - peer servers from servers/peers/: the table, placeholder expansion, rendering.
 *
 * Placeholders are {word}; an unknown word fails loudly instead of passing a literal "{prot}"
 * to nginx. Rendering writes the configuration next to the target's logs in its private run
 * directory, so a failed run leaves the exact files that were used for inspection.
 */
#include "peers.h"

#include "error.h"
#include "fs.h"

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

void h2b_peers_del(struct h2b_peers *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->npeers; i++) {
        for (char **a = p->peers[i].command; a && *a; a++)
            free(*a);
        free(p->peers[i].command);
        free(p->peers[i].name);
        free(p->peers[i].config);
    }
    free(p->peers);
    free(p->names);
    free(p->dir);
    free(p);
}

static int bad(char *path, size_t path_size, char *msg, size_t msg_size, const char *where,
               const char *what)
{
    snprintf(path, path_size, "%s", where);
    snprintf(msg, msg_size, "%s", what);
    return H2B_ERR_INVAL;
}

static int parse_peer(const char *name, const json_t *v, struct h2b_peer *peer, char *path,
                      size_t path_size, char *msg, size_t msg_size)
{
    char where[160];
    const char *key;
    json_t *value;
    snprintf(where, sizeof(where), "%s", name);
    if (!json_is_object(v))
        return bad(path, path_size, msg, msg_size, where, "expected an object");
    json_object_foreach((json_t *)v, key, value)
    {
        if (strcmp(key, "description") && strcmp(key, "command") && strcmp(key, "config") &&
            strcmp(key, "max_streams")) {
            snprintf(where, sizeof(where), "%s.%s", name, key);
            return bad(path, path_size, msg, msg_size, where,
                       "unknown field (known: description, command, config, max_streams)");
        }
    }
    peer->name = strdup(name);
    if (!peer->name)
        return H2B_ERR_NOMEM;
    const json_t *cmd = json_object_get(v, "command");
    snprintf(where, sizeof(where), "%s.command", name);
    if (!json_is_array(cmd) || json_array_size(cmd) == 0)
        return bad(path, path_size, msg, msg_size, where, "expected a non-empty list of strings");
    peer->command = calloc(json_array_size(cmd) + 1, sizeof(char *));
    if (!peer->command)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < json_array_size(cmd); i++) {
        const json_t *a = json_array_get(cmd, i);
        if (!json_is_string(a)) {
            snprintf(where, sizeof(where), "%s.command[%zu]", name, i);
            return bad(path, path_size, msg, msg_size, where, "expected a string");
        }
        if (!(peer->command[i] = strdup(json_string_value(a))))
            return H2B_ERR_NOMEM;
    }
    const json_t *cfg = json_object_get(v, "config");
    if (cfg) {
        snprintf(where, sizeof(where), "%s.config", name);
        if (!json_is_string(cfg) || strchr(json_string_value(cfg), '/'))
            return bad(path, path_size, msg, msg_size, where,
                       "expected a template file name in the peers directory");
        if (!(peer->config = strdup(json_string_value(cfg))))
            return H2B_ERR_NOMEM;
    }
    const json_t *ms = json_object_get(v, "max_streams");
    snprintf(where, sizeof(where), "%s.max_streams", name);
    if (!json_is_integer(ms) || json_integer_value(ms) < 1 || json_integer_value(ms) > INT32_MAX)
        return bad(path, path_size, msg, msg_size, where, "expected a positive integer");
    peer->max_streams = (uint32_t)json_integer_value(ms);
    return H2B_OK;
}

int h2b_peers_from_json(const json_t *doc, const char *dir, struct h2b_peers **out, char *path,
                        size_t path_size, char *msg, size_t msg_size)
{
    if (!json_is_object(doc))
        return bad(path, path_size, msg, msg_size, "", "expected an object of peers");
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
        if ((rc = parse_peer(key, value, &p->peers[p->npeers], path, path_size, msg, msg_size))) {
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
                     char **out, char *msg, size_t msg_size)
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
        else {
            snprintf(msg, msg_size, "unknown placeholder {%s}", name);
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

int h2b__run_read_text(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return H2B_ERR_IO;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc = m ? H2B_OK : H2B_ERR_NOMEM;
    char chunk[4096];
    size_t n;
    while (rc == H2B_OK && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, m);
    if (ferror(f))
        rc = H2B_ERR_IO;
    fclose(f);
    if (m && fclose(m) != 0)
        rc = H2B_ERR_NOMEM;
    if (rc)
        free(buf);
    else
        *out = buf;
    return rc;
}

int h2b_peers_prepare(const struct h2b_peers *p, const struct h2b_peer *peer,
                      const struct h2b_peer_vars *vars, char ***argv, char *msg, size_t msg_size)
{
    char config_path[4096] = "";
    int rc;
    if (peer->config) {
        char tmpl_path[4096];
        char *tmpl = NULL, *text = NULL;
        snprintf(tmpl_path, sizeof(tmpl_path), "%s/%s", p->dir, peer->config);
        snprintf(config_path, sizeof(config_path), "%s/%s.conf", vars->dir, peer->name);
        if ((rc = h2b__run_read_text(tmpl_path, &tmpl))) {
            snprintf(msg, msg_size, "cannot read %s", tmpl_path);
            return rc;
        }
        rc = h2b_peers_expand(tmpl, vars, config_path, &text, msg, msg_size);
        free(tmpl);
        if (rc)
            return rc;
        FILE *f = fopen(config_path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            snprintf(msg, msg_size, "cannot write %s", config_path);
            free(text);
            return H2B_ERR_IO;
        }
        free(text);
    }
    size_t n = 0;
    while (peer->command[n])
        n++;
    char **v = calloc(n + 1, sizeof(*v));
    if (!v)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if ((rc = h2b_peers_expand(peer->command[i], vars, config_path, &v[i], msg, msg_size))) {
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            return rc;
        }
    }
    *argv = v;
    return H2B_OK;
}

void h2b__run_last_line(const char *path, char *buf, size_t size)
{
    char *text = NULL;
    buf[0] = '\0';
    if (h2b__run_read_text(path, &text) != H2B_OK)
        return;
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    size_t start = len;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(buf, size, "%s", text + start);
    free(text);
}
