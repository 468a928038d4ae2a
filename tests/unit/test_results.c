/*
 * test_results.c - h2bench.result/1: a new document has the contract's fields, a filled one
 * survives a write/read round trip unchanged, and malformed files (bad JSON, wrong schema,
 * wrong types, missing fields) are rejected with file:line:column naming the field.
 */
#include "core/error.h"
#include "core/results.h"
#include "test.h"
#include "core/version.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/h2b_test_results.XXXXXX";

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static json_t *micro_entry(void)
{
    return json_pack("{s:s, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:n, s:i}", "name",
                     "hpack/decode-browser-request", "ops", (json_int_t)1000000, "ns_per_op", 812.5,
                     "bytes_per_op", 0.0, "allocs_per_op", 0.0, "p50_ns", (json_int_t)790, "p99_ns",
                     (json_int_t)1200, "p999_ns", (json_int_t)4000, "instructions_per_op", "forks",
                     3);
}

static json_t *matrix_entry(void)
{
    return json_pack(
        "{s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:f, s:f, s:f,"
        " s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:f, s:f, s:I, s:s}",
        "target", "h2ref", "client", "h2bench", "connections", 100, "streams_requested", 100,
        "streams_effective", 40, "repeat", 0, "requests", (json_int_t)50000, "succeeded",
        (json_int_t)50000, "failed", (json_int_t)0, "errors", (json_int_t)0, "duration_s", 2.5,
        "req_per_s", 20000.0, "bytes_per_s", 1.5e6, "latency_ns", "min", (json_int_t)1000, "p50",
        (json_int_t)50000, "p90", (json_int_t)90000, "p99", (json_int_t)200000, "p999",
        (json_int_t)400000, "max", (json_int_t)900000, "client_cpu_s", 2.0, "server_cpu_s", 1.25,
        "server_rss_kib", (json_int_t)8192, "note", "extra fields are allowed");
}

/* Appends a micro entry or a cell given as JSON through the model, as writers do. */
static int append(json_t *doc, const char *section, json_t *entry)
{
    struct h2b_diag d;
    int rv;
    if (strcmp(section, "micro") == 0) {
        struct h2b_results_micro e;
        rv = h2b_results_micro_from_json(entry, NULL, "", H2B_MODEL_CONTRACT, &e, &d);
        if (rv == H2B_OK)
            rv = h2b_results_append_micro(doc, &e);
        h2b_results_micro_free(&e);
    } else {
        struct h2b_results_cell c;
        rv = h2b_results_cell_from_json(entry, NULL, "", H2B_MODEL_CONTRACT, &c, &d);
        if (rv == H2B_OK)
            rv = h2b_results_append_cell(doc, &c);
        h2b_results_cell_free(&c);
    }
    json_decref(entry);
    return rv;
}

static void test_new(void)
{
    char scen[256];
    tmp_path(scen, sizeof(scen), "scenario.json");
    test_write_text(scen, "abc");
    json_t *doc = NULL;
    CHECK_EQ_INT(h2b_results_new(&doc, "smoke", scen), H2B_OK);
    CHECK_STR(json_string_value(json_object_get(doc, "schema")), "h2bench.result/1");
    CHECK_EQ_INT(strlen(json_string_value(json_object_get(doc, "created"))), 20);
    json_t *tool = json_object_get(doc, "tool");
    CHECK_STR(json_string_value(json_object_get(tool, "name")), "h2bench");
    CHECK_STR(json_string_value(json_object_get(tool, "version")), h2b_version());
    CHECK_STR(json_string_value(json_object_get(tool, "git_commit")), h2b_version_git_commit());
    json_t *scenario = json_object_get(doc, "scenario");
    CHECK_STR(json_string_value(json_object_get(scenario, "name")), "smoke");
    CHECK_STR(json_string_value(json_object_get(scenario, "file")), scen);
    CHECK_STR(json_string_value(json_object_get(scenario, "sha256")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(json_is_object(json_object_get(doc, "env")));
    CHECK(json_is_array(json_object_get(doc, "micro")));
    CHECK_EQ_INT(json_array_size(json_object_get(doc, "matrix")), 0);
    /* The top-level keys in the contract's order. */
    static const char *const order[] = {"schema", "created", "tool",  "scenario",
                                        "env",    "micro",   "matrix"};
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(doc, key, value)
    {
        CHECK(i < 7 && strcmp(key, order[i]) == 0);
        i++;
    }
    CHECK_EQ_INT(h2b_results_validate(doc, NULL, NULL), H2B_OK);
    json_decref(doc);

    doc = NULL;
    CHECK_EQ_INT(h2b_results_new(&doc, NULL, NULL), H2B_OK);
    CHECK(json_is_null(json_object_get(json_object_get(doc, "scenario"), "sha256")));
    CHECK_EQ_INT(h2b_results_validate(doc, NULL, NULL), H2B_OK);
    json_decref(doc);

    json_t *untouched = (json_t *)&untouched;
    tmp_path(scen, sizeof(scen), "no-such-scenario.json");
    CHECK_EQ_INT(h2b_results_new(&untouched, "x", scen), H2B_ERR_IO);
    CHECK(untouched == (json_t *)&untouched);
    tmp_path(scen, sizeof(scen), "scenario.json");
    unlink(scen);
}

static void test_round_trip(void)
{
    char path[256];
    tmp_path(path, sizeof(path), "result.json");
    json_t *doc;
    struct h2b_diag d;
    CHECK_EQ_INT(h2b_results_new(&doc, "round-trip", NULL), H2B_OK);
    CHECK_EQ_INT(append(doc, "micro", micro_entry()), H2B_OK);
    CHECK_EQ_INT(append(doc, "matrix", matrix_entry()), H2B_OK);
    json_t *bare = json_object();
    struct h2b_results_micro none;
    h2b_results_micro_init(&none);
    CHECK_EQ_INT(h2b_results_append_micro(bare, &none), H2B_ERR_INVAL);
    json_decref(bare);
    CHECK_EQ_INT(h2b_results_write(path, doc, &d), H2B_OK);
    json_t *back = NULL;
    CHECK_EQ_INT(h2b_results_read(path, &back, &d), H2B_OK);
    CHECK(back && json_equal(doc, back));
    json_decref(back);

    /* A document that breaks the contract is not written. */
    json_object_set_new(json_array_get(json_object_get(doc, "matrix"), 0), "connections",
                        json_integer(0));
    char other[256];
    tmp_path(other, sizeof(other), "invalid.json");
    CHECK_EQ_INT(h2b_results_write(other, doc, &d), H2B_ERR_INVAL);
    CHECK_STR(d.message, "matrix[0].connections: expected a positive integer, got 0");
    CHECK(access(other, F_OK) != 0);
    json_decref(doc);
    unlink(path);
}

/* A valid file with one micro and one matrix entry; the cases below break one thing each. */
static const char valid_file[] =
    "{\n"
    "  \"schema\": \"h2bench.result/1\",\n"
    "  \"created\": \"2026-11-30T08:00:00Z\",\n"
    "  \"tool\": {\"name\": \"h2bench\", \"version\": \"0.1.0\", \"git_commit\": \"abc\"},\n"
    "  \"scenario\": {\"name\": null, \"file\": null, \"sha256\": null},\n"
    "  \"env\": {\"cpus\": 2, \"perf_counters\": false},\n"
    "  \"micro\": [\n"
    "    {\"name\": \"m\", \"ops\": 10, \"ns_per_op\": 1.5, \"bytes_per_op\": 0,\n"
    "     \"allocs_per_op\": 0, \"p50_ns\": 1, \"p99_ns\": null, \"p999_ns\": 3,\n"
    "     \"instructions_per_op\": null, \"forks\": 3}\n"
    "  ],\n"
    "  \"matrix\": [\n"
    "    {\"target\": \"h2ref\", \"client\": \"h2load\", \"connections\": 100,\n"
    "     \"streams_requested\": 100, \"streams_effective\": 40, \"repeat\": 0,\n"
    "     \"requests\": 5, \"succeeded\": 5, \"failed\": 0, \"errors\": null,\n"
    "     \"duration_s\": 1.0, \"req_per_s\": 5.0, \"bytes_per_s\": 9.0,\n"
    "     \"latency_ns\": {\"min\": 1, \"p50\": 2, \"p90\": 3, \"p99\": 4, \"p999\": 5,"
    " \"max\": 6},\n"
    "     \"client_cpu_s\": null, \"server_cpu_s\": null, \"server_rss_kib\": null}\n"
    "  ]\n"
    "}\n";

static const struct {
    const char *what;
    const char *from, *to; /* replace the first occurrence of from in valid_file by to */
    int rv, line, column;
    const char *message;
} bad_cases[] = {
    {"valid", NULL, NULL, H2B_OK, 0, 0, NULL},
    {"bad JSON", "\"repeat\": 0,", "\"repeat\": 0,,", H2B_ERR_PARSE, 14, 69,
     "invalid JSON: string or '}' expected near ','"},
    {"wrong schema", "result/1", "result/2", H2B_ERR_PARSE, 2, 13,
     "schema: expected \"h2bench.result/1\", got \"h2bench.result/2\""},
    {"connections as a string", "\"connections\": 100", "\"connections\": \"100\"", H2B_ERR_PARSE,
     13, 60, "matrix[0].connections: expected a positive integer, got \"100\""},
    {"negative p50", "\"p50_ns\": 1", "\"p50_ns\": -1", H2B_ERR_PARSE, 9, 36,
     "micro[0].p50_ns: expected a non-negative integer, got -1"},
    {"missing forks", ", \"forks\": 3}", "}", H2B_ERR_PARSE, 8, 5,
     "micro[0].forks: missing required field (expected a non-negative integer)"},
    {"null target", "\"target\": \"h2ref\"", "\"target\": null", H2B_ERR_PARSE, 13, 16,
     "matrix[0].target: expected a non-empty string, got null"},
    {"latency p99 as a real", "\"p99\": 4", "\"p99\": 4.5", H2B_ERR_PARSE, 17, 58,
     "matrix[0].latency_ns.p99: expected a non-negative integer, got 4.5"},
    {"micro not an array", "\"micro\": [", "\"micro\": {\"x\": [", H2B_ERR_PARSE, 0, 0, NULL},
    {"matrix entry not an object", "\"matrix\": [\n    {", "\"matrix\": [\n    7, {", H2B_ERR_PARSE,
     13, 5, "matrix[0]: expected an object, got 7"},
    {"tool without version", "\"version\": \"0.1.0\", ", "", H2B_ERR_PARSE, 4, 11,
     "tool.version: missing required field (expected a non-empty string)"},
    {"env cpus as a string", "\"cpus\": 2", "\"cpus\": \"2\"", H2B_ERR_PARSE, 6, 19,
     "env.cpus: expected a non-negative integer, got \"2\""},
    {"env sanitizer not a string", "\"perf_counters\": false}",
     "\"perf_counters\": false, \"sanitizers\": [\"address\", 7]}", H2B_ERR_PARSE, 6, 72,
     "env.sanitizers[1]: expected a non-empty string, got 7"},
    {"env pinning not an object", "\"cpus\": 2", "\"cpus\": 2, \"pinning\": \"0\"", H2B_ERR_PARSE,
     6, 33, "env.pinning: expected an object, got \"0\""},
    {"env missing", "\"env\": {\"cpus\": 2, \"perf_counters\": false},\n", "", H2B_ERR_PARSE, 0, 0,
     NULL},
};

static void test_malformed(void)
{
    char path[256];
    tmp_path(path, sizeof(path), "case.json");
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        char text[sizeof(valid_file) + 64];
        snprintf(text, sizeof(text), "%s", valid_file);
        if (bad_cases[i].from) {
            char *at = strstr(text, bad_cases[i].from);
            CHECK(at != NULL);
            if (at == NULL)
                continue;
            char rest[sizeof(text)];
            snprintf(rest, sizeof(rest), "%s", at + strlen(bad_cases[i].from));
            snprintf(at, sizeof(text) - (size_t)(at - text), "%s%s", bad_cases[i].to, rest);
        }
        test_write_text(path, text);
        json_t *doc = NULL;
        struct h2b_diag d = {.line = -1};
        int rv = h2b_results_read(path, &doc, &d);
        if (rv != bad_cases[i].rv || (bad_cases[i].message && d.line != bad_cases[i].line)) {
            fprintf(stderr, "case '%s': rv %d, ", bad_cases[i].what, rv);
            h2b_diag_print(&d, stderr);
        }
        CHECK_EQ_INT(rv, bad_cases[i].rv);
        if (rv == H2B_OK) {
            json_decref(doc);
            continue;
        }
        CHECK(doc == NULL);
        CHECK_STR(d.file, path);
        if (bad_cases[i].message) {
            CHECK_EQ_INT(d.line, bad_cases[i].line);
            CHECK_EQ_INT(d.column, bad_cases[i].column);
            CHECK_STR(d.message, bad_cases[i].message);
        }
        if (i == 3) {
            printf("wrong type reads: ");
            h2b_diag_print(&d, stdout);
        }
    }
    unlink(path);
}

/* The env section: every field env.c writes is read into its member, keys the table does not
 * know are kept in the file's order and written back after the known ones, nulls stay null. */
static void test_env_model(void)
{
    json_error_t jerr;
    json_t *in = json_loads(
        "{\"zeta\": \"z\", \"cpu_model\": \"EPYC\", \"cpus\": 2, \"cpus_allowed\": \"0-1\","
        " \"kernel\": \"Linux 6\", \"compiler\": \"GNU 12\", \"compiler_flags\": \"-O3\","
        " \"build_type\": \"Release\", \"sanitizers\": [\"address\", \"undefined\"],"
        " \"nghttp2\": \"1.52.0\", \"openssl\": \"3.0\", \"jansson\": \"2.14\","
        " \"git_commit\": \"abc\", \"hostname\": null, \"perf_counters\": false,"
        " \"perf_counters_reason\": \"\", \"warnings\": [\"w1\", \"w2\"],"
        " \"pinning\": {\"server\": \"0\", \"client\": \"1\", \"numa\": 0}, \"alpha\": 3}",
        0, &jerr);
    CHECK(in != NULL);
    struct h2b_results_env env;
    struct h2b_diag d;
    CHECK_EQ_INT(
        h2b_model_from_json(&h2b_results_env_model, in, NULL, "env", H2B_MODEL_CONTRACT, &env, &d),
        H2B_OK);
    CHECK(env.base.present);
    CHECK_STR(env.cpu_model, "EPYC");
    CHECK(env.cpus == 2);
    CHECK_STR(env.cpus_allowed, "0-1");
    CHECK_STR(env.kernel, "Linux 6");
    CHECK_STR(env.compiler, "GNU 12");
    CHECK_STR(env.compiler_flags, "-O3");
    CHECK_STR(env.build_type, "Release");
    CHECK_STR(env.nghttp2, "1.52.0");
    CHECK_STR(env.openssl, "3.0");
    CHECK_STR(env.jansson, "2.14");
    CHECK_STR(env.git_commit, "abc");
    CHECK(env.hostname == NULL);
    CHECK_EQ_INT(env.perf_counters, 0);
    CHECK_STR(env.perf_counters_reason, "");
    CHECK_EQ_INT(env.warnings.n, 2);
    CHECK_STR(env.warnings.n == 2 ? env.warnings.v[1] : "", "w2");
    CHECK_STR(env.pinning.server, "0");
    CHECK_STR(env.pinning.client, "1");
    char san[64];
    h2b_results_env_sanitizers(&env, san, sizeof(san));
    CHECK_STR(san, "address,undefined");
    /* the unknown keys, in the file's order, after the known ones; the null kept as null */
    json_t *out = NULL;
    CHECK_EQ_INT(h2b_model_to_json(&h2b_results_env_model, &env, &out), H2B_OK);
    static const char *const order[] = {
        "cpu_model",      "cpus",       "cpus_allowed", "kernel",        "compiler",
        "compiler_flags", "build_type", "sanitizers",   "nghttp2",       "openssl",
        "jansson",        "git_commit", "hostname",     "perf_counters", "perf_counters_reason",
        "warnings",       "pinning",    "zeta",         "alpha"};
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(out, key, v)
    {
        CHECK(i < sizeof(order) / sizeof(order[0]) && strcmp(key, order[i]) == 0);
        i++;
    }
    CHECK_EQ_INT(i, sizeof(order) / sizeof(order[0]));
    CHECK(json_is_null(json_object_get(out, "hostname")));
    json_t *numa = json_object_get(json_object_get(out, "pinning"), "numa");
    CHECK(json_is_integer(numa) && json_integer_value(numa) == 0);
    json_decref(out);
    h2b_model_free(&h2b_results_env_model, &env);
    CHECK(env.sanitizers.v == NULL && env.cpu_model == NULL && isnan(env.cpus));
    json_decref(in);

    /* an empty env is present with every field null; a null one is not present */
    in = json_object();
    CHECK_EQ_INT(h2b_model_from_json(&h2b_results_env_model, in, NULL, "env", 0, &env, &d), H2B_OK);
    CHECK(env.base.present && env.sanitizers.v == NULL && env.perf_counters == H2B_MODEL_NULL_BOOL);
    h2b_results_env_sanitizers(&env, san, sizeof(san));
    CHECK_STR(san, "");
    h2b_model_free(&h2b_results_env_model, &env);
    json_decref(in);
}

/* The model: legacy per-fork keys read as the current ones and never written; unknown keys pass
 * through unchanged; a null metric stays null; a budgets object round-trips. */
static void test_model(void)
{
    json_error_t jerr;
    json_t *in = json_loads("{\"name\": \"m\", \"forks\": 2, \"p99_ns_forks\": [5, 7.5], "
                            "\"ns_per_op_forks\": [1.5, 2], \"p99_ns\": null, "
                            "\"future\": {\"x\": 1}}",
                            0, &jerr);
    struct h2b_results_micro e;
    struct h2b_diag d;
    CHECK_EQ_INT(h2b_results_micro_from_json(in, NULL, "", H2B_MODEL_CONTRACT, &e, &d), H2B_OK);
    CHECK_EQ_INT(e.fork_p99_ns.n, 2);
    CHECK(e.fork_p99_ns.v[1] == 7.5);
    CHECK(e.fork_ns_per_op.v[0] == 1.5);
    CHECK(isnan(e.p99_ns));
    json_t *out = NULL;
    CHECK_EQ_INT(h2b_results_micro_to_json(&e, &out), H2B_OK);
    CHECK(json_object_get(out, "fork_p99_ns") != NULL);
    CHECK(json_object_get(out, "p99_ns_forks") == NULL);
    CHECK(json_is_null(json_object_get(out, "p99_ns")));
    CHECK(json_equal(json_object_get(out, "future"), json_object_get(in, "future")));
    json_decref(out);
    h2b_results_micro_free(&e);
    /* the current key wins over a legacy one */
    json_object_set_new(in, "fork_p99_ns", json_pack("[i]", 9));
    CHECK_EQ_INT(h2b_results_micro_from_json(in, NULL, "", 0, &e, &d), H2B_OK);
    CHECK(e.fork_p99_ns.n == 1 && e.fork_p99_ns.v[0] == 9);
    h2b_results_micro_free(&e);
    /* a required identifier is required in contract mode only */
    json_object_del(in, "forks");
    CHECK_EQ_INT(h2b_results_micro_from_json(in, NULL, "micro[0]", H2B_MODEL_CONTRACT, &e, &d),
                 H2B_ERR_PARSE);
    CHECK_STR(d.message,
              "micro[0].forks: missing required field (expected a non-negative integer)");
    CHECK_EQ_INT(h2b_results_micro_from_json(in, NULL, "", 0, &e, &d), H2B_OK);
    h2b_results_micro_free(&e);
    json_decref(in);

    struct h2b_results_cell c, back;
    h2b_results_cell_init(&c);
    c.budgets.base.present = true;
    c.budgets.allocs_per_request = 3;
    CHECK_EQ_INT(h2b_model_note_add(&c.budgets.note, "reads_per_request", "no strace"), H2B_OK);
    CHECK_EQ_INT(h2b_results_cell_to_json(&c, &out), H2B_OK);
    json_t *b = json_object_get(out, "budgets");
    CHECK(json_is_null(json_object_get(b, "reads_per_request")));
    CHECK_STR(json_string_value(json_object_get(b, "note")), "reads_per_request: no strace");
    CHECK_EQ_INT(h2b_results_cell_from_json(out, NULL, "", 0, &back, &d), H2B_OK);
    CHECK(back.budgets.base.present && back.budgets.allocs_per_request == 3);
    CHECK(isnan(back.budgets.bytes_per_request));
    h2b_results_cell_free(&back);
    h2b_results_cell_free(&c);
    json_decref(out);
}

/* The budget metric table: each key is a budgets field of the model, and get/set reach the
 * member the model reads and writes under that key; a note's clause is found by its key. */
static void test_budget_table(void)
{
    struct h2b_results_budgets b;
    h2b_model_init(&h2b_results_budgets_model, &b);
    CHECK(isnan(h2b_results_budget_get(&b, H2B_BUDGET_ALLOCS))); /* not present */
    b.base.present = true;
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
        h2b_results_budget_set(&b, m, 10.0 + m);
        CHECK_EQ_INT(h2b_budget_metric_find(h2b_budget_metrics[m].key), m);
        CHECK(h2b_budget_metrics[m].unit && h2b_budget_metrics[m].title);
    }
    json_t *o = NULL;
    CHECK_EQ_INT(h2b_model_to_json(&h2b_results_budgets_model, &b, &o), H2B_OK);
    for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
        bool found = false;
        CHECK(h2b_model_number(&h2b_results_budgets_model, &b, h2b_budget_metrics[m].key, &found) ==
              10.0 + m);
        CHECK(found);
        CHECK(json_real_value(json_object_get(o, h2b_budget_metrics[m].key)) == 10.0 + m);
        CHECK(h2b_results_budget_get(&b, m) == 10.0 + m);
    }
    CHECK(b.rss_per_connection_kib == 10.0 + H2B_BUDGET_RSS_PER_CONN);
    CHECK_EQ_INT(h2b_budget_metric_find("p99_ms"), -1);
    CHECK(isnan(h2b_results_budget_get(&b, H2B_BUDGET_NMETRICS)));
    json_decref(o);
    h2b_model_free(&h2b_results_budgets_model, &b);

    /* keys by member: top level, inside an inline table, a row whose key is not its member's */
    CHECK_STR(H2B_MODEL_KEY(h2b_results_micro_model, struct h2b_results_micro, p99_ns), "p99_ns");
    CHECK_STR(H2B_MODEL_KEY(h2b_results_load_model, struct h2b_results_load, cell.req_per_s),
              "req_per_s");
    CHECK_STR(H2B_MODEL_KEY(h2b_results_load_model, struct h2b_results_load, wall_s), "wall_s");
    CHECK_STR(H2B_MODEL_KEY(h2b_results_symbol_model, struct h2b_results_symbol, class_), "class");
    CHECK_STR(H2B_MODEL_KEY(h2b_results_fork_model, struct h2b_results_fork, allocs_note),
              "allocs_note");

    char why[32] = "";
    const char *note = "writes_per_request: a; writes_per_read: no reads; x: y";
    CHECK(h2b_model_note_reason(note, "writes_per_read", why, sizeof(why)));
    CHECK_STR(why, "no reads");
    CHECK(h2b_model_note_reason(note, "writes_per_request", why, sizeof(why)));
    CHECK_STR(why, "a");
    CHECK(!h2b_model_note_reason(note, "writes", why, sizeof(why)));
    CHECK(!h2b_model_note_reason(NULL, "x", why, sizeof(why)));
}

int main(void)
{
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_new();
    test_round_trip();
    test_malformed();
    test_model();
    test_env_model();
    test_budget_table();
    rmdir(tmpdir);
    return test_report();
}
