/*
 * mpi_job.h - `h2bench load` as one job over many MPI ranks (mpirun … h2bench load …).
 *
 * Every rank is a whole load process. The job's -c, -n, -t and rate are totals: each rank runs
 * its exact share (remainders spread over the lowest ranks, never lost or doubled). Ranks start
 * together (a barrier, then an agreed CLOCK_REALTIME instant broadcast by rank 0), run the
 * ordinary engine with no MPI call anywhere near the request loop, then send rank 0 their
 * counters, histograms (as exact encodings) and per-connection rates. Rank 0 merges them with
 * the same merge the threads of one process use and prints and writes the one result.
 *
 * Built only with -DH2B_MPI=ON (the default when Open MPI's development files are present).
 * Without it every function here reports H2B_ERR_UNSUPPORTED, so the CLI can say so.
 */
#ifndef H2B_LOAD_MPI_JOB_H
#define H2B_LOAD_MPI_JOB_H

#include "load/load.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What one rank did, as rank 0 reports it. */
struct h2b_load_mpi_rank {
    char host[64];
    uint32_t connections;
    uint32_t threads;
    uint64_t requests; /* its share of -n (0 with -D) */
    double rate;       /* its share of the open-loop rate, req/s (0 = closed loop) */
    int64_t skew_ns;   /* its actual start minus the agreed start */
    uint64_t succeeded, failed, errored;
    uint64_t conns_ok, conns_failed;
    double req_per_s; /* its succeeded+failed (ended) / its own measured seconds */
    int rc;           /* its engine's return code (H2B_OK when the run itself worked) */
    bool interrupted;
};

struct h2b_load_mpi_job {
    bool active; /* running as a rank of an MPI job */
    int rank;
    int size;
    struct h2b_load_mpi_rank *ranks; /* rank 0 only: size entries */
    int64_t skew_max_ns;             /* rank 0: largest |skew| over the ranks */
    uint32_t failed_ranks;           /* rank 0: ranks whose engine failed or made no connection */
};

/* True when this build can run under MPI. */
bool h2b_load_mpi_built(void);

/* True when the environment says this process was started by mpirun/mpiexec (Open MPI,
 * PMIx or PMI variables), so `--mpi` is implied. */
bool h2b_load_mpi_detected(void);

/* Initialises MPI and fills job->rank/size. Returns H2B_OK, or H2B_ERR_UNSUPPORTED (built
 * without MPI) / H2B_ERR_SYS (MPI_Init failed), with the reason in err. Call once. */
int h2b_load_mpi_init(struct h2b_load_mpi_job *job, int *argc, char ***argv, struct h2b_diag *err);

/* Replaces the job totals in cfg by this rank's share. Returns H2B_ERR_INVAL with the reason
 * when the job cannot be split (more ranks than connections, a rate below one request per
 * second per thread). Collective: every rank calls it with the same cfg. */
int h2b_load_mpi_split(struct h2b_load_mpi_job *job, struct h2b_load_config *cfg,
                       struct h2b_diag *err);

/* The one line that states the split, for rank 0 to print ("mpi: 2 ranks: rank 0 …"). */
void h2b_load_mpi_split_text(const struct h2b_load_mpi_job *job,
                             const struct h2b_load_config *total, char *buf, size_t len);

/* Synchronised start, then the engine, then the merge onto rank 0. Collective. On rank 0 *res
 * holds the merged job result (free with h2b_load_result_free) and job->ranks the breakdown;
 * on the other ranks *res is empty and nothing is to be printed. Returns the engine's error
 * code when this rank's own run failed (the collectives still happen, so no rank hangs).
 * progress, on rank 0, turns on the job's progress lines (the other ranks' value is ignored):
 * one a second, the ranks' counts summed and interval histograms merged, printed by rank 0.
 * rank_json_prefix, when not NULL, makes every rank also write its own result, before the
 * merge, to PREFIX.rankN.json (for checking the merge offline with `h2bench merge`). */
int h2b_load_mpi_run(struct h2b_load_mpi_job *job, const struct h2b_load_config *cfg,
                     FILE *progress, const char *rank_json_prefix, struct h2b_load_result *res,
                     struct h2b_diag *err);

/* Adds {"mpi": {"ranks": N, "skew_max_ns": …, "per_rank": [...]}} to a load result document
 * (rank 0). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_load_mpi_json(const struct h2b_load_mpi_job *job, json_t *doc);

/* Lines after the h2load block, one per rank (rank 0). */
void h2b_load_mpi_text(FILE *f, const struct h2b_load_mpi_job *job);

/* MPI_Finalize and frees job->ranks. */
void h2b_load_mpi_finish(struct h2b_load_mpi_job *job);

#endif
