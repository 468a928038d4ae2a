/*
 * verdict.h - the one vocabulary of verdicts: the word, icon and phrase every table, verdict
 * line and report section prints for a status (`h2bench gate`, `h2bench ab`, `h2bench compare`,
 * the report's gate and A/B sections).
 *
 * The engines' status enums (enum h2b_gate_status, enum h2b_ab_status) are spelt as these
 * values, so a status is a verdict and there is nothing to map. A verdict can be failing or not
 * (a comparison that is significantly slower but inside the threshold is "slower"; one that
 * fails the A/B is "SLOWER"): upper case always means "this counts against the exit code".
 * Strings are static, UTF-8; thread-safe.
 */
#ifndef H2B_CORE_VERDICT_H
#define H2B_CORE_VERDICT_H

#include <stdbool.h>

enum h2b_verdict {
    H2B_VERDICT_PASS,    /* within its ceiling; a whole run that passed */
    H2B_VERDICT_FAIL,    /* a ceiling exceeded; a whole run that failed */
    H2B_VERDICT_MISSING, /* expected, absent from the results */
    H2B_VERDICT_UNGATED, /* no ceiling (failing with --strict) */
    H2B_VERDICT_INVALID, /* cannot be judged: the measurement itself is not valid */
    H2B_VERDICT_NA,      /* not judged here: too few samples, one side only, another machine */
    H2B_VERDICT_SAME,    /* within noise or within the threshold */
    H2B_VERDICT_SLOWER,  /* a time grew, or a rate fell */
    H2B_VERDICT_FASTER,
    H2B_VERDICT_MORE, /* an exact count grew (allocations, bytes, syscalls, instructions) */
    H2B_VERDICT_LESS,
    H2B_VERDICT_ONLY, /* present on one side of a comparison only */
    H2B_VERDICT_COUNT
};

struct h2b_verdict_words {
    const char *word;   /* a table's status column: "PASS", "same", "SLOWER", "n/a" */
    const char *icon;   /* one emoji for markdown: ✅ ❌ ⛔ ➖ ⚠️ */
    const char *phrase; /* a sentence's words: "missing from the results" */
};

/* The words for v, in its failing form when failing (a verdict that is never failing, or never
 * anything else, has one form). An out-of-range v reads as INVALID. Never NULL. */
const struct h2b_verdict_words *h2b_verdict_words(enum h2b_verdict v, bool failing);

/* The verdict of a whole run from its exit status (0 PASS, 1 FAIL, anything else INVALID). */
enum h2b_verdict h2b_verdict_of_exit(int exit_code);

#endif
