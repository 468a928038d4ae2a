/*
 * fuzz_hist_decode.c - the histogram text decoder on arbitrary bytes.
 *
 * Whatever it accepts must be a consistent histogram: counts add up to the total, percentiles
 * are monotonic and within [min, max], and re-encoding then decoding gives the same bins.
 */
#include "core/error.h"
#include "fuzz_input.h"
#include "core/hist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_input_text(data, size);
    if (text == NULL)
        return 0;
    struct h2b_hist *h = NULL;
    if (h2b_hist_decode(text, &h) != H2B_OK) {
        free(text);
        return 0;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < h->count_len; i++)
        sum += h->counts[i];
    if (sum != h->total)
        abort();
    uint64_t prev = 0;
    for (double p = 0; p <= 100; p += 12.5) {
        uint64_t v = h2b_hist_percentile(h, p);
        /* HdrHistogram's values: bin edges, within the bins of the exact min and max */
        if (v < prev || (h->total && (v < h2b_hist_lowest_equivalent(h, h->min) ||
                                      v > h2b_hist_highest_equivalent(h, h->max))))
            abort();
        prev = v;
    }
    char *again;
    if (h2b_hist_encode(h, &again) == H2B_OK) {
        struct h2b_hist *h2 = NULL;
        if (h2b_hist_decode(again, &h2) != H2B_OK || h2->total != h->total ||
            memcmp(h2->counts, h->counts, h->count_len * sizeof(h->counts[0])) != 0)
            abort();
        h2b_hist_del(h2);
        free(again);
    }
    h2b_hist_del(h);
    free(text);
    return 0;
}
