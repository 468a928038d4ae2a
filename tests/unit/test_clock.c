/* test_clock.c - clocks advance, CPU clocks see spent CPU, sleep sleeps, UTC string shape. */
#include "clock.h"
#include "test.h"

int main(void)
{
    uint64_t t0 = h2b_clock_now_ns();
    h2b_clock_sleep_ns(5 * H2B_NS_PER_MS);
    uint64_t t1 = h2b_clock_now_ns();
    CHECK(t1 - t0 >= 5 * H2B_NS_PER_MS);

    uint64_t c0 = h2b_clock_thread_cpu_ns(), p0 = h2b_clock_process_cpu_ns();
    volatile uint64_t x = 0;
    uint64_t spin_until = h2b_clock_now_ns() + 20 * H2B_NS_PER_MS;
    while (h2b_clock_now_ns() < spin_until)
        x++;
    uint64_t c1 = h2b_clock_thread_cpu_ns(), p1 = h2b_clock_process_cpu_ns();
    /* 20 ms of busy wall time is at least some ms of CPU even on a loaded machine. */
    CHECK(c1 - c0 >= 2 * H2B_NS_PER_MS);
    CHECK(p1 - p0 >= c1 - c0 - H2B_NS_PER_MS);

    uint64_t user = 0, sys = 0, kids = 1;
    CHECK_EQ_INT(h2b_clock_rusage_ns(&user, &sys, &kids), 0);
    CHECK(user + sys > 0);
    CHECK_EQ_U64(kids, 0);

    char buf[32];
    h2b_clock_utc_string(buf, sizeof(buf));
    CHECK_EQ_U64(strlen(buf), 20);
    CHECK(buf[4] == '-' && buf[10] == 'T' && buf[19] == 'Z');
    return test_report();
}
