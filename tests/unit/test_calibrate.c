/* test_calibrate.c - the calibration's tallies as the three renderers show them: rates with
 * their Wilson intervals, A/A counting invalid trials as red, n/a cells with their reasons, and
 * the --inject words. The trials themselves are integration.gate_calibrate's. */
#include "gates/calibrate.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct h2b_calib_report *report(void)
{
    struct h2b_calib_report *r = calloc(1, sizeof(*r));
    r->measure = H2B_CALIB_SCENARIO;
    r->command = strdup("h2bench run bench.json");
    r->ceilings = strdup("c.json");
    r->trials = 10;
    r->aa_trials = 20;
    r->ran[H2B_CALIB_AA] = r->ran[H2B_CALIB_ALLOC] = true;
    r->count = 2;
    r->rows = calloc(2, sizeof(*r->rows));
    r->rows[0].gate = strdup("h2ref:1x1 allocs_per_request");
    r->rows[0].unit = strdup("h2ref:1x1");
    r->rows[0].c[H2B_CALIB_AA] = (struct h2b_calib_count){.trials = 20};
    r->rows[0].c[H2B_CALIB_ALLOC] = (struct h2b_calib_count){.trials = 10, .hits = 10};
    r->rows[1].gate = strdup("srv:1x1 allocs_per_request");
    r->rows[1].unit = strdup("srv:1x1");
    /* two invalid trials: red for A/A */
    r->rows[1].c[H2B_CALIB_AA] = (struct h2b_calib_count){.trials = 20, .hits = 1, .invalid = 2};
    r->rows[1].na[H2B_CALIB_ALLOC] = strdup("a command target");
    return r;
}

int main(void)
{
    CHECK_EQ_INT(h2b_calib_inject_from_key("aa"), H2B_CALIB_AA);
    CHECK_EQ_INT(h2b_calib_inject_from_key("slow25"), H2B_CALIB_SLOW25);
    CHECK_EQ_INT(h2b_calib_inject_from_key("slow2"), -1);
    CHECK_EQ_INT(h2b_calib_inject_from_key(""), -1);
    CHECK_STR(h2b_calib_inject_key(H2B_CALIB_INSTR), "instr");

    struct h2b_calib_report *r = report();
    char *t = NULL;
    CHECK_EQ_INT(h2b_calib_render_table(r, &t), 0);
    CHECK(t && strstr(t, "0/20 0% [0.0, 16.1]"));
    CHECK(t && strstr(t, "10/10 100% [72.2, 100.0]"));
    CHECK(t && strstr(t, "3/20 15% [5.2, 36.0] (2 invalid)"));
    CHECK(t && strstr(t, "srv:1x1, +1 alloc: a command target"));
    CHECK(t && !strstr(t, "+1 % instr")); /* a kind that did not run has no column */
    free(t);
    CHECK_EQ_INT(h2b_calib_render_md(r, &t), 0);
    CHECK(t && strstr(t, "| `h2ref:1x1 allocs_per_request` | 0/20 0% [0.0, 16.1] | 10/10 100% "
                         "[72.2, 100.0] |"));
    CHECK(t && strstr(t, "| `srv:1x1 allocs_per_request` | 3/20 15% [5.2, 36.0] (2 invalid) | "
                         "n/a |"));
    free(t);
    CHECK_EQ_INT(h2b_calib_render_json(r, &t), 0);
    json_error_t e;
    json_t *doc = t ? json_loads(t, 0, &e) : NULL;
    CHECK(doc != NULL);
    CHECK_STR(json_string_value(json_object_get(doc, "schema")), "h2bench.calibration/1");
    CHECK_EQ_INT(json_integer_value(json_object_get(doc, "aa_trials")), 20);
    const json_t *rows = json_object_get(doc, "rows");
    const json_t *aa0 = json_object_get(json_array_get(rows, 0), "aa");
    CHECK_EQ_INT(json_integer_value(json_object_get(aa0, "red")), 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(aa0, "trials")), 20);
    double hi = json_real_value(json_array_get(json_object_get(aa0, "wilson95"), 1));
    CHECK(fabs(hi - 0.161130) < 1e-6);
    const json_t *alloc1 = json_object_get(json_array_get(rows, 1), "alloc");
    CHECK_STR(json_string_value(json_object_get(alloc1, "not_applicable")), "a command target");
    CHECK(json_object_get(alloc1, "red") == NULL); /* never counted as detected */
    CHECK(json_object_get(json_array_get(rows, 0), "instr") == NULL);
    json_decref(doc);
    free(t);
    h2b_calib_report_del(r);
    return test_report();
}
