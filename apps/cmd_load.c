/*
 * cmd_load.c - `h2bench load`: parse the options, run the engine, print and write the results.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops the run through h2b_load_stop(); the partial results are still
 * printed and written.
 */
#include "commands.h"
#include "error.h"
#include "json.h"
#include "load.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
    (void)sig;
    h2b_load_stop();
}

int h2b_cmd_load(int argc, char **argv)
{
    struct h2b_load_config cfg;
    char err[512] = "";
    int code = H2B_EXIT_OK;
    h2b_load_config_init(&cfg);
    int rv = h2b_load_config_parse(&cfg, argc, argv, err, sizeof(err));
    if (rv == H2B_OK && cfg.help) {
        h2b_load_usage(stdout);
        goto out;
    }
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench load: %s\n\n", err);
        h2b_load_usage(stderr);
        code = rv == H2B_ERR_IO ? H2B_EXIT_USAGE : H2B_EXIT_USAGE;
        goto out;
    }
    bool progress = cfg.progress == H2B_LOAD_PROGRESS_ON ||
                    (cfg.progress == H2B_LOAD_PROGRESS_AUTO && isatty(STDERR_FILENO));
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct h2b_load_result res;
    printf("starting benchmark...\n");
    fflush(stdout);
    rv = h2b_load_run(&cfg, progress ? stderr : NULL, &res, err, sizeof(err));
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench load: %s\n", err);
        code = H2B_EXIT_RUNTIME;
        goto out;
    }
    h2b_load_report_text(stdout, &cfg, &res);
    fflush(stdout);
    if (cfg.json_path) {
        json_t *doc = NULL;
        struct h2b_diag diag;
        memset(&diag, 0, sizeof(diag));
        rv = h2b_load_report_json(&cfg, &res, &doc);
        if (rv == H2B_OK)
            rv = h2b_json_write_atomic(cfg.json_path, doc, &diag);
        else
            snprintf(diag.message, sizeof(diag.message), "%s", h2b_strerror(rv));
        json_decref(doc);
        if (rv != H2B_OK) {
            fprintf(stderr, "h2bench load: cannot write %s: ", cfg.json_path);
            h2b_diag_print(&diag, stderr);
            h2b_load_result_free(&res);
            code = H2B_EXIT_RUNTIME;
            goto out;
        }
    }
    if (res.s.conns_ok == 0) {
        fprintf(stderr, "h2bench load: no connection to %s could be made\n", cfg.uris[0].authority);
        code = H2B_EXIT_RUNTIME;
    } else if (res.interrupted) {
        code = H2B_EXIT_RUNTIME;
    } else if (cfg.fail_on_error && res.s.failed > 0) {
        fprintf(stderr, "h2bench load: %llu of %llu requests failed (--fail-on-error)\n",
                (unsigned long long)res.s.failed, (unsigned long long)(res.s.done + res.s.errored));
        code = H2B_EXIT_FAIL;
    }
    h2b_load_result_free(&res);
out:
    h2b_load_config_free(&cfg);
    return code;
}
