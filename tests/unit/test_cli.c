/* test_cli.c - strict value parsers, table-driven. */
#include "core/cli.h"
#include "core/clock.h"
#include "core/error.h"
#include "test.h"

#include <getopt.h>
#include <stdbool.h>

/* h2b_cli_suggest: the option meant by a word getopt_long refused. */
static void test_suggest(void)
{
    static const struct option opts[] = {{"json", required_argument, NULL, 'j'},
                                         {"threshold", required_argument, NULL, 't'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    static const struct {
        const char *arg, *want;
        bool needs_value;
    } cases[] = {
        {"--jsn", "json", false},      /* a letter missing */
        {"--jsno", "json", false},     /* two swapped */
        {"--fromat", "format", false}, /* two swapped */
        {"--tresholds", "threshold", false},
        {"--json", "json", true},      /* known: its value was missing */
        {"--help", "help", false},     /* known, takes no value */
        {"--bogus-flag", NULL, false}, /* nothing near */
        {"--x", NULL, false},
        {"-j", NULL, false}, /* short options get no suggestion */
        {"--", NULL, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool nv = !cases[i].needs_value;
        const char *got = h2b_cli_suggest(cases[i].arg, opts, &nv);
        CHECK_STR(got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
        CHECK_EQ_INT(nv, cases[i].needs_value);
    }
}

int main(void)
{
    test_suggest();
    static const struct {
        const char *text;
        int rv;
        uint64_t v;
    } u64s[] = {{"0", H2B_OK, 0},
                {"42", H2B_OK, 42},
                {"", H2B_ERR_PARSE, 0},
                {"10x", H2B_ERR_PARSE, 0},
                {"-1", H2B_ERR_PARSE, 0},
                {" 1", H2B_ERR_PARSE, 0},
                {"+1", H2B_ERR_PARSE, 0},
                {"1001", H2B_ERR_RANGE, 0},
                {"99999999999999999999999", H2B_ERR_RANGE, 0}};
    for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++) {
        uint64_t v = 777;
        CHECK_EQ_INT(h2b_cli_parse_u64(u64s[i].text, 0, 1000, &v), u64s[i].rv);
        CHECK_EQ_U64(v, u64s[i].rv == H2B_OK ? u64s[i].v : 777);
    }

    static const struct {
        const char *text;
        int rv;
        uint64_t v;
    } sizes[] = {{"16", H2B_OK, 16},      {"16K", H2B_OK, 16384},    {"1m", H2B_OK, 1048576},
                 {"1G", H2B_OK, 1 << 30}, {"1KB", H2B_ERR_PARSE, 0}, {"K", H2B_ERR_PARSE, 0},
                 {"3G", H2B_ERR_RANGE, 0}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t v = 777;
        CHECK_EQ_INT(h2b_cli_parse_size(sizes[i].text, 1, 2ULL << 30, &v), sizes[i].rv);
        CHECK_EQ_U64(v, sizes[i].rv == H2B_OK ? sizes[i].v : 777);
    }

    static const struct {
        const char *text;
        int rv;
        uint64_t ns;
    } durs[] = {{"10", H2B_OK, 10 * H2B_NS_PER_SEC},
                {"1.5s", H2B_OK, 1500 * H2B_NS_PER_MS},
                {"250ms", H2B_OK, 250 * H2B_NS_PER_MS},
                {"7us", H2B_OK, 7000},
                {"9ns", H2B_OK, 9},
                {"2m", H2B_OK, 120 * H2B_NS_PER_SEC},
                {"1h", H2B_OK, 3600 * H2B_NS_PER_SEC},
                {"1sec", H2B_ERR_PARSE, 0},
                {"s", H2B_ERR_PARSE, 0},
                {"-1s", H2B_ERR_RANGE, 0}};
    for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
        uint64_t v = 777;
        CHECK_EQ_INT(h2b_cli_parse_duration_ns(durs[i].text, 0, UINT64_MAX / 2, &v), durs[i].rv);
        CHECK_EQ_U64(v, durs[i].rv == H2B_OK ? durs[i].ns : 777);
    }

    double d = 5;
    CHECK_EQ_INT(h2b_cli_parse_double("0.25", 0, 1, &d), H2B_OK);
    CHECK(d == 0.25);
    CHECK_EQ_INT(h2b_cli_parse_double("2", 0, 1, &d), H2B_ERR_RANGE);
    CHECK_EQ_INT(h2b_cli_parse_double("nan", 0, 1, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_cli_parse_double("1e999", 0, 1e300, &d), H2B_ERR_RANGE);
    CHECK(d == 0.25);
    return test_report();
}
