/* test_clock.c - clocks advance, CPU clocks see spent CPU, sleep sleeps, UTC string shape. */
#include "core/clock.h"
#include "test.h"

int main(void)
{
    uint64_t t0 = h2b_clock_now_ns();
    h2b_clock_sleep_ns(5 * H2B_NS_PER_MS);
    uint64_t t1 = h2b_clock_now_ns();
    CHECK(t1 - t0 >= 5 * H2B_NS_PER_MS);

    /* Spin until this thread has used 5 ms of CPU (however long a loaded machine takes to give
     * it that, up to 30 s): the thread clock must see it, and the process clock at least as much.
     */
    uint64_t c0 = h2b_clock_thread_cpu_ns(), p0 = h2b_clock_process_cpu_ns();
    uint64_t give_up = h2b_clock_now_ns() + 30 * H2B_NS_PER_SEC;
    volatile uint64_t x = 0;
    while (h2b_clock_thread_cpu_ns() - c0 < 5 * H2B_NS_PER_MS && h2b_clock_now_ns() < give_up)
        x++;
    uint64_t c1 = h2b_clock_thread_cpu_ns(), p1 = h2b_clock_process_cpu_ns();
    CHECK(c1 - c0 >= 5 * H2B_NS_PER_MS);
    CHECK(p1 - p0 + H2B_NS_PER_MS >= c1 - c0); /* read a moment apart: allow 1 ms */

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
