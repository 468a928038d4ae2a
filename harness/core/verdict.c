/*
 * verdict.c - the one table of verdict words (verdict.h).
 *
 * Approach: a static table indexed by the verdict, with a second column for the failing form,
 * so a word is chosen in one place and `h2bench gate`, `h2bench ab`, `h2bench compare` and the
 * report cannot drift apart. The words are those users already saw: the gate's upper-case
 * PASS/FAIL/MISSING/INVALID, ab's lower-case "same"/"faster"/"less" and its upper-case
 * SLOWER/MORE for what fails.
 *
 * Rejected: one table per engine, as it was (gate_render.c, ab.c's status_word and compare.c's
 * significance words: the report said "cannot judge" where the gate said "INVALID", and compare
 * said "yes, worse" for what ab called "SLOWER"). Rejected: words chosen by the renderer from a
 * row's numbers: the engine that judged a row says what it is, the renderer only prints it.
 */
#include "core/verdict.h"

#include <stddef.h>

/* [v][0] the ordinary form, [v][1] the failing one. */
static const struct h2b_verdict_words words[H2B_VERDICT_COUNT][2] = {
    [H2B_VERDICT_PASS] = {{"PASS", "✅", "pass"}, {"PASS", "✅", "pass"}},
    [H2B_VERDICT_FAIL] = {{"FAIL", "❌", "exceeded"}, {"FAIL", "❌", "exceeded"}},
    [H2B_VERDICT_MISSING] = {{"MISSING", "❌", "missing from the results"},
                             {"MISSING", "❌", "missing from the results"}},
    [H2B_VERDICT_UNGATED] = {{"ungated", "➖", "no ceiling"},
                             {"UNGATED!", "❌", "no ceiling (--strict)"}},
    [H2B_VERDICT_INVALID] = {{"INVALID", "⛔", "invalid: cannot be judged"},
                             {"INVALID", "⛔", "invalid: cannot be judged"}},
    [H2B_VERDICT_NA] = {{"n/a", "➖", "not applicable (ceiling set on another machine or build)"},
                        {"N/A!", "❌", "not applicable (--strict: invalid)"}},
    [H2B_VERDICT_SAME] = {{"same", "✅", "within noise or the threshold"},
                          {"same", "✅", "within noise or the threshold"}},
    [H2B_VERDICT_SLOWER] = {{"slower", "⚠️", "slower"},
                            {"SLOWER", "❌", "slower beyond the threshold"}},
    [H2B_VERDICT_FASTER] = {{"faster", "✅", "faster"}, {"faster", "✅", "faster"}},
    [H2B_VERDICT_MORE] = {{"more", "⚠️", "more"}, {"MORE", "❌", "more than the base"}},
    [H2B_VERDICT_LESS] = {{"less", "✅", "less"}, {"less", "✅", "less"}},
    [H2B_VERDICT_ONLY] = {{"only", "➖", "on one side only"}, {"only", "➖", "on one side only"}},
};

const struct h2b_verdict_words *h2b_verdict_words(enum h2b_verdict v, bool failing)
{
    if ((unsigned)v >= H2B_VERDICT_COUNT)
        v = H2B_VERDICT_INVALID;
    return &words[v][failing ? 1 : 0];
}

enum h2b_verdict h2b_verdict_of_exit(int exit_code)
{
    return exit_code == 0   ? H2B_VERDICT_PASS
           : exit_code == 1 ? H2B_VERDICT_FAIL
                            : H2B_VERDICT_INVALID;
}
