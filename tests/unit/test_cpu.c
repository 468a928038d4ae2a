/* test_cpu.c - CPU list parsing (table-driven), formatting round trip, pinning. */
#include "core/cpu.h"
#include "core/error.h"
#include "test.h"

static const struct {
    const char *text;
    int rv;
    const char *formatted;
} cases[] = {
    {"0", H2B_OK, "0"},
    {"1", H2B_OK, "1"},
    {"0-3", H2B_OK, "0-3"},
    {"0,2,4-5", H2B_OK, "0,2,4-5"},
    {"3,1", H2B_OK, "1,3"},
    {"0-1,1-2", H2B_OK, "0-2"},
    {"", H2B_ERR_PARSE, NULL},
    {"a", H2B_ERR_PARSE, NULL},
    {"1-", H2B_ERR_PARSE, NULL},
    {"3-1", H2B_ERR_PARSE, NULL},
    {"1,", H2B_ERR_PARSE, NULL},
    {" 1", H2B_ERR_PARSE, NULL},
    {"1 ", H2B_ERR_PARSE, NULL},
    {"-1", H2B_ERR_PARSE, NULL},
    {"99999", H2B_ERR_RANGE, NULL},
};

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(7, &set);
        int rv = h2b_cpu_parse_list(cases[i].text, &set);
        CHECK_EQ_INT(rv, cases[i].rv);
        if (rv == H2B_OK) {
            char buf[64];
            h2b_cpu_format_list(&set, buf, sizeof(buf));
            CHECK_STR(buf, cases[i].formatted);
        } else {
            CHECK(CPU_ISSET(7, &set) && CPU_COUNT(&set) == 1); /* untouched on failure */
        }
    }
    cpu_set_t set;
    CHECK_EQ_INT(h2b_cpu_parse_list("2,5,9", &set), H2B_OK);
    CHECK_EQ_INT(h2b_cpu_nth(&set, 0), 2);
    CHECK_EQ_INT(h2b_cpu_nth(&set, 2), 9);
    CHECK_EQ_INT(h2b_cpu_nth(&set, 4), 5);
    CPU_ZERO(&set);
    CHECK_EQ_INT(h2b_cpu_nth(&set, 0), -1);

    CHECK(h2b_cpu_online() >= 1);
    CHECK_EQ_INT(h2b_cpu_pin_self_to(0), H2B_OK);
    CHECK_EQ_INT(sched_getcpu(), 0);
    CHECK_EQ_INT(h2b_cpu_pin_self_to(-1), H2B_ERR_RANGE);
    return test_report();
}
