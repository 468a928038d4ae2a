/*
 * cpu.c - CPU list parsing and thread pinning, and a burn of an exact number of instructions.
 *
 * The parser is strict (no spaces, ascending ranges, nothing trailing) so that a typo in a
 * scenario's "cpus" field is an error and not a silently different pinning.
 */
#include "core/cpu.h"
#include "core/error.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *parse_num(const char *p, long *out)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p - '0');
        if (v > 1000000)
            return NULL;
        p++;
    }
    *out = v;
    return p;
}

int h2b_cpu_parse_list(const char *text, cpu_set_t *out)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (text == NULL || *text == '\0')
        return H2B_ERR_PARSE;
    const char *p = text;
    for (;;) {
        long lo, hi;
        p = parse_num(p, &lo);
        if (p == NULL)
            return H2B_ERR_PARSE;
        hi = lo;
        if (*p == '-') {
            p = parse_num(p + 1, &hi);
            if (p == NULL || hi < lo)
                return H2B_ERR_PARSE;
        }
        if (hi >= CPU_SETSIZE)
            return H2B_ERR_RANGE;
        for (long c = lo; c <= hi; c++)
            CPU_SET((int)c, &set);
        if (*p == '\0')
            break;
        if (*p != ',')
            return H2B_ERR_PARSE;
        p++;
    }
    *out = set;
    return H2B_OK;
}

void h2b_cpu_format_list(const cpu_set_t *set, char *buf, unsigned long size)
{
    unsigned long used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
            end++;
        int n = end == c ? snprintf(buf + used, size - used, "%s%d", used ? "," : "", c)
                         : snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", c, end);
        if (n < 0 || (unsigned long)n >= size - used) {
            buf[size - 1] = '\0';
            return;
        }
        used += (unsigned long)n;
        c = end;
    }
}

int h2b_cpu_nth(const cpu_set_t *set, int n)
{
    int count = CPU_COUNT(set);
    if (count == 0)
        return -1;
    n %= count;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, set) && n-- == 0)
            return c;
    }
    return -1;
}

int h2b_cpu_pin_self(const cpu_set_t *set)
{
    if (sched_setaffinity(0, sizeof(*set), set) != 0)
        return H2B_ERR_SYS;
    return H2B_OK;
}

int h2b_cpu_pin_self_to(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return H2B_ERR_RANGE;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return h2b_cpu_pin_self(&set);
}

int h2b_cpu_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Rejected: a C loop everywhere; its instruction count per iteration is the compiler's choice
 * (gcc 12 -O2 gave 5 to 7 for `volatile` arithmetic), so "1 % of the ceiling" would be a guess. */
void h2b_cpu_burn_instructions(uint64_t n)
{
    uint64_t iters = (n + 1) / 2;
    if (iters == 0)
        return;
#if defined(__x86_64__)
    __asm__ volatile("1:\n\tsub $1, %0\n\tjnz 1b" : "+r"(iters) : : "cc");
#else
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < iters; i++)
        sink = i;
    (void)sink;
#endif
}
