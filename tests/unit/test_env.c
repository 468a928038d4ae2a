/*
 * test_env.c - the environment fingerprint has every field with the right type and the runtime
 * library versions, and reports hardware counters honestly: this machine has none, so the
 * result must be false with a reason (a machine with counters gets true and an empty reason).
 */
#include "core/env.h"
#include "core/error.h"
#include "core/results.h"
#include "test.h"
#include "core/version.h"

#include <nghttp2/nghttp2.h>
#include <string.h>

static void check_string(const json_t *env, const char *key)
{
    const char *s = json_string_value(json_object_get(env, key));
    CHECK(s != NULL && s[0] != '\0');
    if (s == NULL)
        fprintf(stderr, "env.%s is not a string\n", key);
}

int main(void)
{
    json_t *env = NULL;
    CHECK_EQ_INT(h2b_env_collect(&env), H2B_OK);
    if (env == NULL)
        return test_report();
    char *text = json_dumps(env, JSON_INDENT(2));
    printf("env: %s\n", text);
    free(text);

    static const char *const strings[] = {"cpu_model",      "cpus_allowed", "kernel",  "compiler",
                                          "compiler_flags", "build_type",   "nghttp2", "openssl",
                                          "jansson",        "git_commit",   "hostname"};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        check_string(env, strings[i]);
    CHECK(json_integer_value(json_object_get(env, "cpus")) >= 1);
    CHECK_STR(json_string_value(json_object_get(env, "nghttp2")), nghttp2_version(0)->version_str);
    CHECK_STR(json_string_value(json_object_get(env, "build_type")), h2b_version_build_type());
    CHECK_STR(json_string_value(json_object_get(env, "git_commit")), h2b_version_git_commit());
    CHECK(strstr(json_string_value(json_object_get(env, "kernel")), "Linux") != NULL);
    json_t *san = json_object_get(env, "sanitizers");
    CHECK(json_is_array(san));
#ifdef H2B_SANITIZED
    CHECK(json_array_size(san) >= 1);
#else
    CHECK_EQ_INT(json_array_size(san), 0);
#endif

    json_t *warnings = json_object_get(env, "warnings");
    CHECK(json_is_array(warnings));
    bool perf_warning = false;
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w)
    {
        CHECK(json_is_string(w));
        perf_warning |= strstr(json_string_value(w), "no hardware performance counters") != NULL;
    }

    char reason[256];
    bool perf = h2b_env_perf_counters(reason, sizeof(reason));
    CHECK(json_is_boolean(json_object_get(env, "perf_counters")));
    CHECK_EQ_INT(json_is_true(json_object_get(env, "perf_counters")), perf);
    const char *env_reason = json_string_value(json_object_get(env, "perf_counters_reason"));
    if (perf) {
        printf("hardware counters usable on this machine\n");
        CHECK_STR(reason, "");
        CHECK_STR(env_reason, "");
        CHECK(!perf_warning);
    } else {
        printf("perf_counters false: %s\n", reason);
        CHECK(strstr(reason, "perf_event_open") != NULL);
        CHECK_STR(env_reason, reason);
        CHECK(perf_warning);
    }
    /* what the collector writes, the results model reads back unchanged (one table for both) */
    struct h2b_results_env model;
    struct h2b_diag d;
    CHECK_EQ_INT(h2b_model_from_json(&h2b_results_env_model, env, NULL, "env", H2B_MODEL_CONTRACT,
                                     &model, &d),
                 H2B_OK);
    json_t *back = NULL;
    CHECK_EQ_INT(h2b_model_to_json(&h2b_results_env_model, &model, &back), H2B_OK);
    CHECK(back && json_equal(back, env));
    char *a = json_dumps(env, 0), *b = back ? json_dumps(back, 0) : NULL;
    CHECK(a && b && strcmp(a, b) == 0); /* the same keys in the same order */
    free(a);
    free(b);
    json_decref(back);
    h2b_model_free(&h2b_results_env_model, &model);
    json_decref(env);
    return test_report();
}
