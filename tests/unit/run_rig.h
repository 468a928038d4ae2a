/*
 * run_rig.h - what the unit tests of h2bench::run that start real targets share
 * (test_runner.c, test_budget.c; run_rig.c): the test binary is its own target. Started with
 * "serve" (as the runner starts a bundled target: h2bench serve --host H --port P --threads N
 * --cpus L --max-streams M) or with "--serve PORT" (a command target's line), it runs the
 * reference server (servers/h2ref) in that child on 127.0.0.1, prints its "listening on" line
 * and, when H2B_T_PIDFILE names a file, first writes its process id there (for a test that
 * kills it); when the file $H2B_T_ARM exists, it removes it and sends SIGINT to its parent (the
 * run that started it: a test that interrupts a run at a given target start). The server lives in
 * run_rig.c: servers/h2ref/conn.h and run/scenario.h both name their protocols H2B_PROTO_*, so no
 * file includes both.
 */
#ifndef H2B_TEST_RUN_RIG_H
#define H2B_TEST_RUN_RIG_H

#include <limits.h>
#include <stdbool.h>

/* This test executable (the self the runner and the targets are started as). */
extern char run_rig_self[PATH_MAX];

/* Fills run_rig_self. Returns false when /proc/self/exe cannot be read. */
bool run_rig_init(void);

/* Whether argv asks for the fake server. */
bool run_rig_is_serve(int argc, char **argv);

/* The fake server: the reference server until SIGTERM. Exit status 0, or 70 (the pid file)
 * and 71 (the server failed) with the reason on stderr. */
int run_rig_serve(int argc, char **argv);

#endif
