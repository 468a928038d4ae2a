/*
 * cmd_run.c - `h2bench run SCENARIO`: options in, h2b_run (harness/run) does the work.
 */
#include "core/cli.h"
#include "commands.h"
#include "core/error.h"
#include "core/fs.h"
#include "run/peers.h"
#include "run/probe.h"
#include "run/runner.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench run SCENARIO [--out FILE] [--dry-run] [--repeat N] [--filter CELLS]\n"
            "                   [--fail-fast] [--peers-dir DIR] [--progress | --no-progress]\n"
            "                   [--perf-record CELLS [--perf-record-client]]\n\n"
            "Runs a scenario file (docs/scenarios.md): starts its targets pinned, runs every\n"
            "matrix cell with the client pinned, runs its micro suites, and writes one\n"
            "h2bench.result/1 file atomically.\n\n"
            "  --out FILE       results file (default results/runs/NAME-UTCSTAMP.json)\n"
            "  --dry-run        print the expanded cells (requested and effective streams) and\n"
            "                   exit; targets are not started (see docs/scenarios.md)\n"
            "  --repeat N       run the whole matrix N times (multiplies matrix.repeats)\n"
            "  --filter CELLS   only these cells: comma-separated [TARGET:]CONNSxSTREAMS or\n"
            "                   TARGET terms, '*' for any number (\"1000x*,h2o:10x10\")\n"
            "  --fail-fast      stop at the first failed cell (results are still written)\n"
            "  --perf-record CELLS  CPU profile of each target during these cells (the\n"
            "                   --filter syntax), after warm-up: top symbols, DSO split and a\n"
            "                   flame graph per cell beside the results (docs/profiles.md)\n"
            "  --perf-record-client  profile the client too\n"
            "  --peers-dir DIR  peer definitions (default $H2B_PEERS_DIR, else\n"
            "                   share/h2bench/peers beside the executable's bin/)\n"
            "  --progress       progress bar on stderr even when it is not a terminal\n"
            "  --no-progress    no progress bar\n\n"
            "Exit: 0 all cells ran, 2 malformed scenario or option (file:line:column),\n"
            "3 a cell or suite failed or the results could not be written.\n");
}

int h2b_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {{"out", required_argument, NULL, 'o'},
                                             {"dry-run", no_argument, NULL, 'n'},
                                             {"repeat", required_argument, NULL, 'r'},
                                             {"filter", required_argument, NULL, 'f'},
                                             {"fail-fast", no_argument, NULL, 'x'},
                                             {"peers-dir", required_argument, NULL, 'P'},
                                             {"progress", no_argument, NULL, 'p'},
                                             {"no-progress", no_argument, NULL, 'q'},
                                             {"perf-record", required_argument, NULL, 'R'},
                                             {"perf-record-client", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct h2b_run_options o = {
        .repeat = 1, .progress = isatty(STDERR_FILENO), .report = stdout, .log = stderr};
    uint64_t repeat;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out = optarg;
            break;
        case 'n':
            o.dry_run = true;
            break;
        case 'r':
            if (h2b_cli_parse_u64(optarg, 1, 1000, &repeat) != H2B_OK) {
                fprintf(stderr,
                        "h2bench run: --repeat: expected an integer in [1, 1000], got "
                        "'%s'\n",
                        optarg);
                return H2B_EXIT_USAGE;
            }
            o.repeat = (uint32_t)repeat;
            break;
        case 'f':
            o.filter = optarg;
            break;
        case 'R':
            o.perf_record = optarg;
            break;
        case 'C':
            o.perf_record_client = true;
            break;
        case 'x':
            o.fail_fast = true;
            break;
        case 'P':
            o.peers_dir = optarg;
            break;
        case 'p':
            o.progress = true;
            break;
        case 'q':
            o.progress = false;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("run", argv[optind - 1], longopts);
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "h2bench run: expected one SCENARIO file\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    o.scenario = argv[optind];
    if (h2b_cmd_check_output("run", "--out", o.out, H2B_FS_OUT_FILE_MKDIR) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;

    char self[PATH_MAX];
    if (h2b_self_exe(self, sizeof(self)) != H2B_OK) {
        fprintf(stderr, "h2bench run: cannot find this executable (/proc/self/exe)\n");
        return H2B_EXIT_RUNTIME;
    }
    o.self = self;
    char peers[PATH_MAX];
    if (!o.peers_dir) {
        if (h2b_peers_default_dir(peers, sizeof(peers)) != H2B_OK) {
            fprintf(stderr, "h2bench run: cannot find the peers directory beside this executable "
                            "(give --peers-dir)\n");
            return H2B_EXIT_RUNTIME;
        }
        o.peers_dir = peers;
    }

    if (h2b_probe_global_init() != H2B_OK) {
        fprintf(stderr, "h2bench run: libcurl initialisation failed\n");
        return H2B_EXIT_RUNTIME;
    }
    struct h2b_run_summary sum;
    struct h2b_diag diag;
    memset(&diag, 0, sizeof(diag));
    int rc = h2b_run(&o, &sum, &diag);
    h2b_probe_global_cleanup();
    if (h2b_exit_code(rc) == H2B_EXIT_USAGE) {
        /* file:line:column first, as compilers do, so editors can jump to it. */
        if (!diag.file[0])
            fprintf(stderr, "h2bench run: ");
        h2b_diag_print(&diag, stderr);
        return H2B_EXIT_USAGE;
    }
    if (sum.out[0] && sum.cells_skipped)
        printf("\nresults: %s (%zu cells, %zu failed, %zu skipped: their target cannot serve "
               "them)\n",
               sum.out, sum.cells, sum.cells_failed, sum.cells_skipped);
    else if (sum.out[0])
        printf("\nresults: %s (%zu cells, %zu failed)\n", sum.out, sum.cells, sum.cells_failed);
    if (rc == H2B_OK)
        return H2B_EXIT_OK;
    if (rc != H2B_ERR_INTERRUPTED) {
        fprintf(stderr, "h2bench run: ");
        if (diag.message[0])
            h2b_diag_print(&diag, stderr);
        else
            fprintf(stderr, "%s\n", h2b_strerror(rc));
    }
    return h2b_exit_code(rc);
}
