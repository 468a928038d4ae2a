/*
 * check.h - H2B_ASSERT: invariants of h2bench's own code, checked in every build.
 *
 * For what the code itself guarantees (an index below a bound it checked earlier, a buffer a
 * constructor allocated), never for input: anything a peer, a file or a flag can trigger stays
 * an error code and a message. A failed assertion is a bug in h2bench: it writes
 * "h2bench: internal error: FILE:LINE: FUNC: assertion 'EXPR' failed" to stderr and aborts.
 * Compiled in every build (Release included, NDEBUG ignored): a predictable branch costs next to
 * nothing outside the request loop, and a Release run is where an invariant breaks unnoticed.
 */
#ifndef H2B_CORE_CHECK_H
#define H2B_CORE_CHECK_H

#define H2B_ASSERT(cond) ((cond) ? (void)0 : h2b__assert_fail(#cond, __FILE__, __LINE__, __func__))

/* Reports the failed assertion and aborts. Async-signal-safe (write(2) and abort(3) only). */
_Noreturn void h2b__assert_fail(const char *expr, const char *file, int line, const char *func);

#endif
