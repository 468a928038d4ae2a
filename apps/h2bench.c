/*
 * h2bench.c - the command-line entry point: dispatch to a subcommand.
 *
 * The table below is the whole CLI surface; each subcommand lives in its own cmd_*.c and only
 * parses options before calling its engine library.
 */
#include "commands.h"
#include "h2b_version.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    {"report", "render results into a markdown report with charts", h2b_cmd_report},
    {"load", "generate HTTP/2 load (h2load-compatible, open-loop --total-rps)", h2b_cmd_load},
    {"merge", "merge the load results of a distributed run into one, exactly", h2b_cmd_merge},
    {"serve", "run the reference HTTP/2 server", h2b_cmd_serve},
    {"floor-serve", "run the kernel's floor: raw TCP, N request bytes in, M response bytes out",
     h2b_cmd_floor},
    {"gate", "check results against ceilings; propose ceilings", h2b_cmd_gate},
    {"history", "change points over stored results (slow drift); the history store",
     h2b_cmd_history},
    {"compare", "A/B two results files with confidence intervals", h2b_cmd_compare},
    {"run", "run a scenario file: matrix cells and micro suites, one results file", h2b_cmd_run},
    {"micro", "run component microbenchmarks (ns/op, p99, B/op, allocs/op)", h2b_cmd_micro},
    {"flame", "draw a flame graph (or an A/B one) from folded stacks", h2b_cmd_flame},
    {"ab", "build a base revision, run base and head interleaved, judge the head", h2b_cmd_ab},
    {"export", "results in Bencher (BMF) or github-action-benchmark format", h2b_cmd_export},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: h2bench <command> [options]\n"
               "       h2bench --version | --help\n\n"
               "HTTP/2 benchmarking and regression gating.\n\ncommands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\nRun 'h2bench <command> --help' for a command's options.\n"
               "Exit codes: 0 ok, 1 check failed, 2 usage or input error, 3 runtime failure.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("h2bench %s (commit %s, %s build%s%s, %s)\n", H2B_VERSION, H2B_GIT_COMMIT,
               H2B_BUILD_TYPE, H2B_SANITIZERS[0] ? ", sanitizers " : "", H2B_SANITIZERS,
               H2B_COMPILER);
        return H2B_EXIT_OK;
    }
    if (strcmp(name, "help") == 0 && argc >= 3) {
        /* h2bench help CMD: the command's own --help */
        for (const struct command *c = commands; c->name; c++) {
            if (strcmp(argv[2], c->name) == 0) {
                char help[] = "--help";
                char *args[] = {argv[2], help, NULL};
                return c->run(2, args);
            }
        }
        fprintf(stderr, "h2bench help: no command '%s'\nRun 'h2bench --help' for the commands.\n",
                argv[2]);
        return H2B_EXIT_USAGE;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return H2B_EXIT_OK;
    }
    for (const struct command *c = commands; c->name; c++) {
        if (strcmp(name, c->name) == 0)
            return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "h2bench: unknown %s '%s'\n\n", name[0] == '-' ? "option" : "command", name);
    usage(stderr);
    return H2B_EXIT_USAGE;
}
