/*
 * clock.h - time sources, all in nanoseconds.
 *
 * h2b_clock_now_ns() is CLOCK_MONOTONIC and inline: it sits on every request's hot path (vDSO,
 * about 20 ns here). CPU clocks are for whole-run accounting, not per request.
 */
#ifndef H2B_CORE_CLOCK_H
#define H2B_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define H2B_NS_PER_SEC 1000000000ULL
#define H2B_NS_PER_MS 1000000ULL
#define H2B_NS_PER_US 1000ULL

/* Monotonic time in ns since an arbitrary origin (boot). Thread-safe. */
static inline uint64_t h2b_clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * H2B_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread, ns (user + system). */
uint64_t h2b_clock_thread_cpu_ns(void);

/* CPU time consumed by the whole process, all threads, ns (user + system). */
uint64_t h2b_clock_process_cpu_ns(void);

/* User and system CPU time of the process and its reaped children, ns; either pointer may be
 * NULL. Returns H2B_OK or H2B_ERR_SYS. */
int h2b_clock_rusage_ns(uint64_t *user_ns, uint64_t *sys_ns, uint64_t *children_ns);

/* Wall-clock time as an RFC 3339 UTC string ("2026-11-30T08:00:00Z") into buf (>= 21 bytes). */
void h2b_clock_utc_string(char *buf, unsigned long size);

/* Sleeps for ns nanoseconds, resuming after signals until the time has passed. */
void h2b_clock_sleep_ns(uint64_t ns);

#endif
