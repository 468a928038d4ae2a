/*
 * expand.c - matrix expansion and cell filters.
 *
 * Pure functions over the scenario: no processes, no sockets, so --dry-run and the unit tests
 * see exactly the cells a real run would execute. The point loop nests connections, then
 * streams, then the frame-size and window sweeps; repeats are the outermost loop so that each
 * repetition sees the whole matrix once before the next begins.
 */
#include "run/expand.h"

#include "core/cli.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t h2b_expand_effective(uint32_t requested, uint32_t server_max, uint32_t aggregate_cap,
                              uint32_t connections)
{
    uint32_t eff = requested;
    if (server_max > 0 && server_max < eff)
        eff = server_max;
    if (connections > 0 && aggregate_cap / connections < eff)
        eff = aggregate_cap / connections;
    return eff < 1 ? 1 : eff;
}

bool h2b_expand_cell_matches(const struct h2b_cell *c, const struct h2b_cell_filter *filters,
                             size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        const struct h2b_cell_filter *f = &filters[i];
        if ((f->target < 0 || (size_t)f->target == c->target) &&
            (f->connections == 0 || f->connections == c->connections) &&
            (f->streams == 0 || f->streams == c->streams_requested))
            return true;
    }
    return false;
}

int h2b_expand_matrix(const struct h2b_scenario *s, const uint32_t *server_max,
                      uint32_t extra_repeats, const struct h2b_cell_filter *filters,
                      size_t nfilters, struct h2b_cell **out, size_t *n)
{
    const struct h2b_matrix_spec *m = &s->matrix;
    size_t nframe = m->nframe_sizes ? m->nframe_sizes : 1;
    size_t nwin = m->nwindow_bits ? m->nwindow_bits : 1;
    uint32_t repeats = m->repeats * (extra_repeats ? extra_repeats : 1);
    size_t nproto = m->nprotocols ? m->nprotocols : 1, ntls = m->ntls ? m->ntls : 1;
    size_t points = m->nconnections * m->nstreams * nframe * nwin * nproto * ntls;
    size_t total = points * s->ntargets * repeats;
    struct h2b_cell *cells = calloc(total ? total : 1, sizeof(*cells));
    if (!cells)
        return H2B_ERR_NOMEM;

    size_t count = 0;
    for (uint32_t rep = 0; rep < repeats; rep++) {
        size_t tcount = m->order == H2B_ORDER_SEQUENTIAL ? s->ntargets : 1;
        for (size_t tseq = 0; tseq < tcount; tseq++) {
            for (size_t p = 0; p < points; p++) {
                size_t ti = p % ntls, pi = (p / ntls) % nproto, q = p / ntls / nproto;
                size_t wi = q % nwin, fi = (q / nwin) % nframe;
                size_t si = (q / nwin / nframe) % m->nstreams;
                size_t ci = q / nwin / nframe / m->nstreams;
                size_t inner = m->order == H2B_ORDER_SEQUENTIAL ? 1 : s->ntargets;
                for (size_t k = 0; k < inner; k++) {
                    size_t t = m->order == H2B_ORDER_SEQUENTIAL ? tseq
                               : (p + rep * points) % 2         ? s->ntargets - 1 - k
                                                                : k;
                    struct h2b_cell c = {
                        .target = t,
                        .connections = m->connections[ci],
                        .streams_requested = m->streams[si],
                        .server_max_streams = server_max[t],
                        .frame_size = m->nframe_sizes ? m->frame_sizes[fi] : 0,
                        .window_bits = m->nwindow_bits ? m->window_bits[wi] : 0,
                        .repeat = rep,
                        .protocol = m->nprotocols ? m->protocols[pi] : H2B_PROTO_H2,
                        .tls = m->ntls ? m->tls[ti] : false,
                    };
                    /* QUIC is always TLS: with both tls values, h3 gets only its TLS cell */
                    if (c.protocol == H2B_PROTO_H3 && !c.tls && m->ntls == 2)
                        continue;
                    c.streams_effective =
                        c.protocol == H2B_PROTO_H1
                            ? 1
                            : h2b_expand_effective(c.streams_requested, server_max[t],
                                                   m->aggregate_cap, c.connections);
                    if (h2b_expand_cell_matches(&c, filters, nfilters))
                        cells[count++] = c;
                }
            }
        }
    }
    *out = cells;
    *n = count;
    return H2B_OK;
}

/* "100", "*" -> value or 0 for any. */
static int parse_count(const char *text, uint32_t *out)
{
    uint64_t v;
    if (strcmp(text, "*") == 0) {
        *out = 0;
        return H2B_OK;
    }
    int rc = h2b_cli_parse_u64(text, 1, UINT32_MAX, &v);
    if (rc == H2B_OK)
        *out = (uint32_t)v;
    return rc;
}

static int parse_term(const struct h2b_scenario *s, char *term, struct h2b_cell_filter *f,
                      struct h2b_diag *d)
{
    char *shape = term;
    char *colon = strchr(term, ':');
    f->target = -1;
    f->connections = 0;
    f->streams = 0;
    if (colon) {
        *colon = '\0';
        shape = colon + 1;
    } else if (!strchr(term, 'x')) {
        shape = NULL;
    } else {
        term = NULL;
    }
    if (term && strcmp(term, "*") != 0) {
        f->target = h2b_scenario_find_target(s, term);
        if (f->target < 0) {
            h2b_diag_at(d, NULL, 0, 0, "no target named '%s' in the scenario", term);
            return H2B_ERR_PARSE;
        }
    }
    if (shape) {
        char *x = strchr(shape, 'x');
        if (!x) {
            h2b_diag_at(d, NULL, 0, 0, "expected CONNECTIONSxSTREAMS, got '%s'", shape);
            return H2B_ERR_PARSE;
        }
        *x = '\0';
        if (parse_count(shape, &f->connections) || parse_count(x + 1, &f->streams)) {
            h2b_diag_at(d, NULL, 0, 0, "expected numbers or '*' in CONNECTIONSxSTREAMS");
            return H2B_ERR_PARSE;
        }
    }
    return H2B_OK;
}

int h2b_expand_parse_filter(const struct h2b_scenario *s, const char *text,
                            struct h2b_cell_filter **out, size_t *n, struct h2b_diag *d)
{
    size_t terms = 1;
    for (const char *p = text; *p; p++)
        terms += *p == ',';
    char *copy = strdup(text);
    struct h2b_cell_filter *filters = calloc(terms, sizeof(*filters));
    int rc = H2B_ERR_NOMEM;
    if (!copy || !filters)
        goto out;
    size_t count = 0;
    char *term = copy;
    for (;;) {
        char *comma = strchr(term, ',');
        if (comma)
            *comma = '\0';
        if (!*term) {
            h2b_diag_at(d, NULL, 0, 0, "empty filter term");
            rc = H2B_ERR_PARSE;
            goto out;
        }
        if ((rc = parse_term(s, term, &filters[count++], d)))
            goto out;
        if (!comma)
            break;
        term = comma + 1;
    }
    *out = filters;
    *n = count;
    filters = NULL;
    rc = H2B_OK;
out:
    free(filters);
    free(copy);
    return rc;
}

const char *h2b_expand_cell_slo(const struct h2b_scenario *s, const struct h2b_cell *c)
{
    const struct h2b_matrix_spec *m = &s->matrix;
    if (m->slo)
        return m->slo;
    for (size_t i = 0; i < m->nslo_rules; i++) {
        if (h2b_expand_cell_matches(c, m->slo_rules[i].filters, m->slo_rules[i].nfilters))
            return m->slo_rules[i].slo;
    }
    return NULL;
}
