/*
 * cpu.h - CPU lists and pinning.
 *
 * CPU lists use the taskset/cpuset syntax: "0", "0-3", "0,2,4-5". Pinning is
 * sched_setaffinity, the same thing taskset does, so a pinned h2bench and a taskset-pinned peer
 * are comparable.
 */
#ifndef H2B_CORE_CPU_H
#define H2B_CORE_CPU_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* Parses a CPU list into *out (cleared first). Returns H2B_OK, or H2B_ERR_PARSE for bad syntax
 * and H2B_ERR_RANGE for a CPU number >= CPU_SETSIZE. *out is untouched on failure. */
int h2b_cpu_parse_list(const char *text, cpu_set_t *out);

/* Formats set as a CPU list ("0-2,5") into buf; truncates safely. */
void h2b_cpu_format_list(const cpu_set_t *set, char *buf, unsigned long size);

/* Returns the n-th CPU (0-based, wrapping around) of set, or -1 if set is empty. Used to spread
 * worker threads over a list: worker i gets h2b_cpu_nth(set, i). */
int h2b_cpu_nth(const cpu_set_t *set, int n);

/* Pins the calling thread to set. Returns H2B_OK or H2B_ERR_SYS (errno set). */
int h2b_cpu_pin_self(const cpu_set_t *set);

/* Pins the calling thread to the single CPU cpu. Returns H2B_OK, H2B_ERR_RANGE or H2B_ERR_SYS. */
int h2b_cpu_pin_self_to(int cpu);

/* Number of online CPUs (at least 1). */
int h2b_cpu_online(void);

/* Executes n instructions (n rounded up to an even number) and nothing else: on x86-64 a loop of
 * two instructions, so an instruction counter (callgrind, perf) sees exactly that many plus the
 * call's few; elsewhere a C loop of about that many. The injected "+1 % instructions" regression
 * of the calibration (inject.c, handlers.c). Thread-safe. */
void h2b_cpu_burn_instructions(uint64_t n);

#endif
