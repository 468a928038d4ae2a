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

/* H2B_CHECK_SLOW is 1 in a build configured with -DH2B_DEBUG_INVARIANTS=ON (the asan and fuzz
 * presets), else 0. An invariant whose check walks a whole structure (a heap's order: O(n) per
 * operation) is written `if (H2B_CHECK_SLOW) H2B_ASSERT(...)`: compiled and type-checked
 * everywhere, run only there. The O(1) ones stay plain H2B_ASSERTs, in every build. */
#ifdef H2B_DEBUG_INVARIANTS
#define H2B_CHECK_SLOW 1
#else
#define H2B_CHECK_SLOW 0
#endif

/* Reports the failed assertion and aborts. Async-signal-safe (write(2) and abort(3) only). */
_Noreturn void h2b__assert_fail(const char *expr, const char *file, int line, const char *func);

#endif
