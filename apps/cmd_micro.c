/*
 * cmd_micro.c - `h2bench micro`: the microbenchmark runner with the built-in HTTP/2 component
 * suite linked in (harness/micro/benches). It is h2b_micro_main itself, the same main a user's
 * benchmark executable gets, so both accept the same options; h2bench adds the profile hook, so
 * `--perf-record NAME` gets folded stacks, a flame graph and a summary (harness/prof), where a
 * user's executable keeps perf's text.
 */
#include "commands.h"
#include "core/error.h"
#include "h2bench/micro.h"
#include "prof/prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf script text -> STEM.folded, STEM.svg and the summary with their names (basenames: they
 * sit beside the results file unless --perf-dir put them elsewhere). */
static char *fold_profile(const char *script, const char *exe, const char *stem, char *why,
                          size_t why_size)
{
    struct h2b_prof *p = NULL;
    struct h2b_diag d = {0};
    json_t *sum = NULL;
    char *text = NULL, folded[4200], svg[4200], title[512];
    const char *base = strrchr(stem, '/');
    base = base ? base + 1 : stem;
    snprintf(folded, sizeof(folded), "%s.folded", stem);
    snprintf(svg, sizeof(svg), "%s.svg", stem);
    snprintf(title, sizeof(title), "h2bench micro: %s", base);
    int rc = h2b_prof_new(&p, exe);
    if (rc == H2B_OK)
        rc = h2b_prof_read_script(p, script, &d);
    if (rc == H2B_OK && h2b_prof_samples(p) == 0) {
        snprintf(d.message, sizeof(d.message), "perf recorded no samples");
        rc = H2B_ERR_UNSUPPORTED;
    }
    if (rc == H2B_OK)
        rc = h2b_prof_write_folded(p, folded, &d);
    if (rc == H2B_OK)
        rc = h2b_prof_flame_svg(p, title, svg, &d);
    if (rc == H2B_OK)
        rc = h2b_prof_summary_json(p, 12, &sum);
    if (rc == H2B_OK) {
        snprintf(folded, sizeof(folded), "%s.folded", base);
        snprintf(svg, sizeof(svg), "%s.svg", base);
        const char *exe_base = strrchr(exe, '/');
        json_object_set_new(sum, "exe", json_string(exe_base ? exe_base + 1 : exe));
        json_object_set_new(sum, "folded", json_string(folded));
        json_object_set_new(sum, "svg", json_string(svg));
        text = json_dumps(sum, JSON_COMPACT | JSON_REAL_PRECISION(15));
    }
    if (!text)
        snprintf(why, why_size, "%s", d.message[0] ? d.message : h2b_strerror(rc));
    json_decref(sum);
    h2b_prof_del(p);
    return text;
}

int h2b_cmd_micro(int argc, char **argv)
{
    h2b_micro_set_profile_hook(fold_profile);
    /* messages and usage say "h2bench micro", the command the user typed */
    char name[] = "h2bench micro";
    if (argc > 0)
        argv[0] = name;
    return h2b_micro_main(argc, argv);
}
