/*
 * peers.h - how the runner starts third-party servers (servers/peers/peers.json).
 *
 * Each peer is a command line and optionally a configuration template, with {placeholders}
 * filled in per run: {host} {port} {threads} {max_streams} {docroot} {dir} {config}. Peers are
 * data, not code: adding a server is an edit to peers.json and a template beside it.
 */
#ifndef H2B_RUN_PEERS_H
#define H2B_RUN_PEERS_H

#include "core/json.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a peer is started for one kind of cell: a command line and its configuration template. */
struct h2b_peer_variant {
    char **command; /* NULL-terminated argument templates */
    char *config;   /* template file name relative to the peers directory, or NULL */
};

struct h2b_peer {
    char *name;           /* key in peers.json */
    char **command;       /* NULL-terminated argument templates */
    char *config;         /* template file name relative to the peers directory, or NULL */
    uint32_t max_streams; /* what the command line / template configures by default */
    unsigned protocols;   /* "protocols": mask of (1u << enum h2b_protocol); default h2 */
    /* "tls": how to serve TLS with {cert} and {key} (has_tls false: the peer cannot); "h1": a
     * cleartext HTTP/1.1 listener where the default one speaks only h2c (nginx). A variant's
     * missing command or config falls back to the peer's own. */
    bool has_tls, has_h1;
    struct h2b_peer_variant tls, h1;
};

struct h2b_peers {
    char *dir; /* the directory peers.json was read from */
    struct h2b_peer *peers;
    size_t npeers;
    const char **names; /* NULL-terminated, for scenario validation */
};

/* Values substituted into a peer's command and configuration. */
struct h2b_peer_vars {
    const char *host;
    uint16_t port;
    uint32_t threads;
    uint32_t max_streams;
    const char *docroot;
    const char *dir;        /* a private directory for this target: configuration, logs, pid */
    const char *cert, *key; /* PEM files for TLS ({cert}, {key}); NULL when not TLS */
};

/* The peers directory when --peers-dir is not given: $H2B_PEERS_DIR, else DATADIR/h2bench/peers
 * relative to the running executable (PREFIX/share/h2bench/peers when installed; the build tree
 * links build/share/h2bench to the sources). Writes it into buf. Returns H2B_OK, H2B_ERR_RANGE
 * (buf too small) or H2B_ERR_SYS (/proc/self/exe unreadable). */
int h2b_peers_default_dir(char *buf, size_t size);

/* Builds the peer table from peers.json's parsed document (src: its file and text, for the
 * position; may be NULL). On a bad document returns H2B_ERR_INVAL with d at the field (its path
 * and, with src, file:line:column). *out untouched on failure. */
int h2b_peers_from_json(const json_t *doc, const char *dir, struct h2b_peers **out,
                        const struct h2b_json_src *src, struct h2b_diag *d);
void h2b_peers_del(struct h2b_peers *p);

/* The peer called name, or NULL. */
const struct h2b_peer *h2b_peers_find(const struct h2b_peers *p, const char *name);

/* Replaces every {name} in tmpl with its value; unknown placeholders are an error
 * (H2B_ERR_PARSE, d names it). Returns a malloc'd string in *out. */
int h2b_peers_expand(const char *tmpl, const struct h2b_peer_vars *vars, const char *config,
                     char **out, struct h2b_diag *d);

/* Writes the peer's rendered configuration into vars->dir (if it has one) and builds its
 * command line (NULL-terminated, malloc'd; free each string and the array). variant is NULL
 * for the peer's default start, or &peer->tls / &peer->h1. */
int h2b_peers_prepare(const struct h2b_peers *p, const struct h2b_peer *peer,
                      const struct h2b_peer_variant *variant, const struct h2b_peer_vars *vars,
                      char ***argv, struct h2b_diag *d);

#endif
