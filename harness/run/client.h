/*
 * client.h - the load client of a cell: its command line and what it reported.
 *
 * The client is a child process (h2bench load, or h2load for the published methodology), so a
 * crash or hang in it cannot take the runner down and its CPU time is its own. This module
 * builds the argument vector and turns the client's output into struct h2b_cell_metrics:
 * h2load's text block (nghttp2 1.52's format) and optional --log-file, or
 * h2bench load's --json object.
 */
#ifndef H2B_RUN_CLIENT_H
#define H2B_RUN_CLIENT_H

#include "core/results.h"
#include "run/expand.h"
#include "run/scenario.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_cell_metrics {
    uint64_t requests;     /* requests the client issued or planned (h2load "total") */
    uint64_t succeeded;    /* 2xx/3xx */
    uint64_t failed;       /* everything else, errored included */
    uint64_t errors;       /* network errors, resets, timeouts */
    double duration_s;     /* the client's measured duration */
    double req_per_s;      /* as the client reports it */
    double bytes_per_s;    /* response bytes received per second */
    bool have_latency;     /* min, max and mean are known */
    bool have_percentiles; /* p50 .. p999 are known */
    uint64_t lat_min_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p999_ns, lat_max_ns;
    double lat_mean_ns;
    uint32_t client_streams; /* streams per connection the client says it used; 0 unknown */
    char *histogram;         /* encoded latency histogram (h2b_hist_encode) or NULL; owned */
    char tls_version[32];    /* "TLSv1.3" when the client negotiated TLS, else "" */
    char tls_cipher[64];
    double tls_records_per_response; /* NAN: not reported (h2load counts no records) */
    char note[256];                  /* why something above is missing, or "" */
    /* matrix.slo: the client's verdicts (of struct h2b_results_slo; absent: none); owned */
    struct h2b_model_array slo;
    /* matrix.find_max: what the search found (not present otherwise); owned */
    struct h2b_results_search search;
    /* matrix.stages / matrix.step: the client's intervals (of struct h2b_results_cell_interval)
     * and the shape's boundaries in the measurement, seconds (absent: not shaped); owned */
    struct h2b_model_array intervals;
    struct h2b_model_nums shape_bounds_s;
};

/* Parses h2load's text output (stdout) into *m (zeroed first). Returns H2B_OK or
 * H2B_ERR_PARSE when the "finished in" / "requests:" lines are missing or malformed. */
int h2b_client_parse_h2load(const char *text, struct h2b_cell_metrics *m);

/* Reads an h2load --log-file (one "start_us TAB status TAB duration_us" line per request) into
 * exact percentiles and an encoded histogram in *m. Returns H2B_OK, H2B_ERR_IO or
 * H2B_ERR_PARSE. */
int h2b_client_read_h2load_log(const char *path, struct h2b_cell_metrics *m);

/* Reads the object h2bench load --json writes into *m (zeroed first). Returns H2B_OK or
 * H2B_ERR_PARSE (missing or mistyped field). */
int h2b_client_from_json(const json_t *obj, struct h2b_cell_metrics *m);

/* Reads the document h2bench load --find-max --json writes into *m (zeroed first): the search
 * in m->search, and as the cell's metrics those of its last passing step (of the first failing
 * one when none passed; m->note says which). Returns H2B_OK, H2B_ERR_PARSE (not a search, or
 * no step) or H2B_ERR_NOMEM. */
int h2b_client_from_search_json(const json_t *obj, struct h2b_cell_metrics *m);

/* Reads the --interval-json file h2bench load wrote at path (hostile: at most
 * H2B_JSON_MAX_FILE bytes and H2B_RESULTS_MAX_INTERVALS lines, each line's fields checked by
 * load's own interval parser) into m->intervals, cut to what a cell keeps. Returns H2B_OK,
 * H2B_ERR_PARSE (d: file, line and what was expected) or H2B_ERR_NOMEM. */
int h2b_client_read_intervals(const char *path, struct h2b_cell_metrics *m, struct h2b_diag *d);

/* The boundaries of the shape matrix m gives a cell (stages, or the steps of a staircase)
 * that fall inside its measurement, which lasted duration_s after m's warm-up: seconds from the
 * measurement's start, increasing, into *out (an empty array when none falls inside). m must
 * have stages or step (validated by the scenario parser). Returns H2B_OK, H2B_ERR_INVAL (no
 * shape, or one that does not parse) or H2B_ERR_NOMEM. */
int h2b_client_shape_bounds(const struct h2b_matrix_spec *m, double duration_s,
                            struct h2b_model_nums *out);

/* Reads the instruction count from `perf stat -x, -e instructions:u` output (CSV; '#' lines
 * are comments). Returns H2B_OK, H2B_ERR_UNSUPPORTED ("<not supported>" / "<not counted>") or
 * H2B_ERR_PARSE. */
int h2b_client_parse_perf_stat(const char *text, uint64_t *instructions);

/* Frees what *m owns. */
void h2b_client_metrics_free(struct h2b_cell_metrics *m);

/* Everything a client command line needs beside the cell. */
struct h2b_client_call {
    const char *program;       /* path of the client executable */
    const char *url;           /* full request URL */
    const char *body_file;     /* POST body file or NULL */
    const char *json_out;      /* h2bench load --json destination */
    const char *log_file;      /* h2load --log-file destination or NULL */
    const char *interval_json; /* h2bench load --interval-json destination or NULL */
    double duration_s;         /* > 0: timed run of this length instead of matrix.duration_s */
};

/* Builds the NULL-terminated argument vector for a cell into *argv (malloc'd strings and
 * array; free with h2b_client_argv_free). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_client_argv(const struct h2b_scenario *s, const struct h2b_cell *cell,
                    const struct h2b_client_call *call, char ***argv);
void h2b_client_argv_free(char **argv);

/* What went wrong, from an MPI launcher's stderr text: the first block Open MPI frames between
 * lines of dashes, joined into one line (or the whole text when it frames nothing). */
void h2b_client_mpirun_message(const char *text, char *buf, size_t size);

#endif
