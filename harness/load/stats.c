/*
 * stats.c - per-worker counters and histograms, and their exact merge after join.
 *
 * Counts add; histograms merge bin by bin (same configuration everywhere); the two
 * "smallest seen" fields take the minimum. Percentiles are only ever read from merged
 * histograms, never averaged.
 */
#include "core/error.h"
#include "load/load.h"

#include <string.h>

int h2b_load_stats_init(struct h2b_load_stats *s)
{
    memset(s, 0, sizeof(*s));
    s->server_max_streams = UINT32_MAX;
    s->streams_effective = UINT32_MAX;
    if (h2b_hist_new_default(&s->latency) != H2B_OK ||
        h2b_hist_new_default(&s->service) != H2B_OK || h2b_hist_new_default(&s->ttfb) != H2B_OK ||
        h2b_hist_new_default(&s->connect) != H2B_OK || h2b_hist_new_default(&s->tls) != H2B_OK) {
        h2b_load_stats_free(s);
        return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

void h2b_load_stats_free(struct h2b_load_stats *s)
{
    h2b_hist_del(s->latency);
    h2b_hist_del(s->service);
    h2b_hist_del(s->ttfb);
    h2b_hist_del(s->connect);
    h2b_hist_del(s->tls);
    s->latency = s->service = s->ttfb = s->connect = s->tls = NULL;
}

int h2b_load_stats_merge(struct h2b_load_stats *dst, const struct h2b_load_stats *src)
{
    int rv = h2b_hist_merge(dst->latency, src->latency);
    if (rv == H2B_OK)
        rv = h2b_hist_merge(dst->service, src->service);
    if (rv == H2B_OK)
        rv = h2b_hist_merge(dst->ttfb, src->ttfb);
    if (rv == H2B_OK)
        rv = h2b_hist_merge(dst->connect, src->connect);
    if (rv == H2B_OK)
        rv = h2b_hist_merge(dst->tls, src->tls);
    if (rv != H2B_OK)
        return rv;
#define ADD(f) dst->f += src->f
    ADD(started);
    ADD(done);
    ADD(succeeded);
    ADD(failed);
    ADD(errored);
    ADD(timeouts);
    ADD(resets);
    ADD(protocol_errors);
    ADD(not_sent);
    ADD(unfinished);
    ADD(unsent);
    ADD(status_other);
    ADD(grpc_mismatch);
    ADD(grpc_wrong);
    ADD(bytes_total);
    ADD(bytes_headers);
    ADD(bytes_headers_decomp);
    ADD(bytes_data);
    ADD(bytes_sent);
    ADD(conns_ok);
    ADD(conns_failed);
    ADD(reconnects);
    ADD(tls_records);
    ADD(tls_responses);
    ADD(conn_errors);
#undef ADD
    if (!dst->conn_errno)
        dst->conn_errno = src->conn_errno;
    if (!dst->tls_version) {
        dst->tls_version = src->tls_version;
        dst->tls_cipher = src->tls_cipher;
    }
    for (int i = 0; i < H2B_LOAD_STATUS_MAX; i++)
        dst->status[i] += src->status[i];
    for (int i = 0; i < H2B_LOAD_GRPC_COUNTS; i++)
        dst->grpc_status[i] += src->grpc_status[i];
    if (src->sched_lag_max_ns > dst->sched_lag_max_ns)
        dst->sched_lag_max_ns = src->sched_lag_max_ns;
    if (src->server_max_streams < dst->server_max_streams)
        dst->server_max_streams = src->server_max_streams;
    if (src->streams_effective < dst->streams_effective)
        dst->streams_effective = src->streams_effective;
    return H2B_OK;
}
