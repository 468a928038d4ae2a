/*
 * run_rig.c - run_rig.h: the fake server the runner and budget tests start as their target.
 */
#include "run_rig.h"

#include "core/error.h"
#include "core/json.h"
#include "h2ref/server.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char run_rig_self[PATH_MAX];

bool run_rig_init(void)
{
    ssize_t n = readlink("/proc/self/exe", run_rig_self, sizeof(run_rig_self) - 1);
    if (n <= 0)
        return false;
    run_rig_self[n] = '\0';
    return true;
}

bool run_rig_is_serve(int argc, char **argv)
{
    return argc > 2 && (strcmp(argv[1], "serve") == 0 || strcmp(argv[1], "--serve") == 0);
}

/* Writes this process's id to path. Returns false on failure. */
static bool write_pid(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fprintf(f, "%d\n", (int)getpid()) > 0;
    return fclose(f) == 0 && ok;
}

int run_rig_serve(int argc, char **argv)
{
    struct h2b_server_config cfg;
    h2b_server_config_defaults(&cfg);
    cfg.host = "127.0.0.1";
    cfg.threads = 1;
    cfg.ready = stdout;
    /* "serve --host H --port P ..." (option pairs) or "--serve PORT" */
    for (int i = strcmp(argv[1], "--serve") == 0 ? 1 : 2; i + 1 < argc; i += 2) {
        char *end;
        unsigned long v = strtoul(argv[i + 1], &end, 10);
        bool number = *argv[i + 1] && !*end;
        if ((strcmp(argv[i], "--port") == 0 || strcmp(argv[i], "--serve") == 0) && number &&
            v <= 65535)
            cfg.port = (uint16_t)v;
        else if (strcmp(argv[i], "--max-streams") == 0 && number && v > 0 && v <= UINT32_MAX)
            cfg.conn.max_streams = (uint32_t)v;
    }
    const char *pidfile = getenv("H2B_T_PIDFILE");
    if (pidfile && *pidfile && !write_pid(pidfile)) {
        fprintf(stderr, "fake server: cannot write %s\n", pidfile);
        return 70;
    }
    /* armed by a test: this server's start interrupts the run that started it */
    const char *arm = getenv("H2B_T_ARM");
    if (arm && *arm && unlink(arm) == 0)
        kill(getppid(), SIGINT);
    struct h2b_diag d = {0};
    int rc = h2b_server_run(&cfg, &d);
    if (rc != H2B_OK) {
        fprintf(stderr, "fake server: %s\n", d.message);
        return 71;
    }
    return 0;
}
