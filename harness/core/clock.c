/*
 * clock.c - CPU clocks, rusage and wall-clock formatting.
 *
 * The monotonic clock is inline in clock.h. CPU clocks use clock_gettime's per-thread and
 * per-process clocks rather than getrusage, whose resolution is a scheduler tick on some kernels.
 */
#include "core/clock.h"
#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * H2B_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t h2b_clock_thread_cpu_ns(void)
{
    return read_clock(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t h2b_clock_process_cpu_ns(void)
{
    return read_clock(CLOCK_PROCESS_CPUTIME_ID);
}

static uint64_t timeval_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * H2B_NS_PER_SEC + (uint64_t)tv.tv_usec * H2B_NS_PER_US;
}

int h2b_clock_rusage_ns(uint64_t *user_ns, uint64_t *sys_ns, uint64_t *children_ns)
{
    struct rusage self, kids;
    if (getrusage(RUSAGE_SELF, &self) != 0 || getrusage(RUSAGE_CHILDREN, &kids) != 0)
        return H2B_ERR_SYS;
    if (user_ns)
        *user_ns = timeval_ns(self.ru_utime);
    if (sys_ns)
        *sys_ns = timeval_ns(self.ru_stime);
    if (children_ns)
        *children_ns = timeval_ns(kids.ru_utime) + timeval_ns(kids.ru_stime);
    return H2B_OK;
}

void h2b_clock_utc_string(char *buf, unsigned long size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    if (strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && size > 0)
        buf[0] = '\0';
}

void h2b_clock_sleep_ns(uint64_t ns)
{
    struct timespec req = {.tv_sec = (time_t)(ns / H2B_NS_PER_SEC),
                           .tv_nsec = (long)(ns % H2B_NS_PER_SEC)};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}
