/*
 * fuzz_prof_parse.c - the profile readers on arbitrary bytes: the input is parsed as `perf
 * script` text and, through a file, as folded stacks. Whatever either accepts must write as
 * folded stacks that read back to the same sample count and summarise with a DSO split adding
 * up to 100, and must draw as a flame graph (what `h2bench report` does with a results file's
 * artefacts).
 */
#include "core/error.h"
#include "fuzz_input.h"
#include "prof/prof.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(struct h2b_prof *p)
{
    if (h2b_prof_samples(p) == 0)
        return;
    char dir[] = "/tmp/fuzz_prof.XXXXXX", folded[64], svg[64];
    if (!mkdtemp(dir))
        return;
    snprintf(folded, sizeof(folded), "%s/p.folded", dir);
    snprintf(svg, sizeof(svg), "%s/p.svg", dir);
    struct h2b_diag d = {0};
    struct h2b_prof *q = NULL;
    if (h2b_prof_write_folded(p, folded, &d) != H2B_OK || h2b_prof_new(&q, NULL) != H2B_OK ||
        h2b_prof_read_folded(q, folded, &d) != H2B_OK || h2b_prof_samples(q) != h2b_prof_samples(p))
        abort();
    json_t *s = NULL;
    if (h2b_prof_summary_json(q, 12, &s) != H2B_OK)
        abort();
    double sum = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(s, "dso_pct"), k, v) sum += json_number_value(v);
    if (fabs(sum - 100) > 0.1)
        abort();
    if (h2b_prof_flame_svg(q, "fuzz", svg, &d) != H2B_OK)
        abort();
    json_decref(s);
    h2b_prof_del(q);
    unlink(folded);
    unlink(svg);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct h2b_prof *p = NULL;
    struct h2b_diag d = {0};
    if (h2b_prof_new(&p, "prog") == H2B_OK) {
        if (h2b_prof_parse_script(p, (const char *)data, size, "fuzz.txt", &d) == H2B_OK)
            check(p);
        h2b_prof_del(p);
    }
    char path[64];
    int fd = fuzz_input_path(data, size, path, sizeof(path));
    if (fd >= 0 && h2b_prof_new(&p, "prog") == H2B_OK) {
        if (h2b_prof_read_folded(p, path, &d) == H2B_OK)
            check(p);
        h2b_prof_del(p);
    }
    if (fd >= 0)
        close(fd);
    return 0;
}
