/*
 * hist.h - log-linear latency histogram (HdrHistogram-style).
 *
 * Values are unsigned integers (ns by convention). Bucket 0 covers [0, 2*S) with unit 1; bucket
 * k >= 1 covers [S*2^k, 2*S*2^k) with unit 2^k, where S = 2^sub_bits. The relative width of a
 * bin is at most 1/S, so with the default sub_bits = 7 every value is known within 0.78%.
 *
 * Recording is O(1), branch-light and allocation-free. Histograms with the same configuration
 * merge exactly (bin counts add). One histogram is not thread-safe: each thread records into its
 * own and the owner merges them after join.
 */
#ifndef H2B_CORE_HIST_H
#define H2B_CORE_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2B_HIST_DEFAULT_LOWEST 1ULL
#define H2B_HIST_DEFAULT_HIGHEST 60000000000ULL /* 60 s in ns */
#define H2B_HIST_DEFAULT_SUB_BITS 7             /* <= 0.78% relative error */

struct h2b_hist {
    uint64_t lowest;  /* smallest value tracked; smaller values are clamped up to it */
    uint64_t highest; /* largest value tracked; larger values are clamped down to it */
    int sub_bits;     /* log2 of the half sub-bucket count S */
    int bucket_count; /* number of power-of-two buckets */
    size_t count_len; /* number of bins */
    uint64_t total;   /* number of recorded values */
    uint64_t min;     /* exact smallest recorded value (after clamping); UINT64_MAX if empty */
    uint64_t max;     /* exact largest recorded value (after clamping); 0 if empty */
    uint64_t clamped; /* values that fell outside [lowest, highest] */
    uint64_t *counts; /* count_len bins */
};

/* Allocates a histogram tracking [lowest, highest] with 2^sub_bits bins per half-octave.
 * lowest >= 1, highest >= 2 * lowest, 1 <= sub_bits <= 14. Returns H2B_OK, H2B_ERR_INVAL or
 * H2B_ERR_NOMEM; *out untouched on failure. The caller owns *out (h2b_hist_del). */
int h2b_hist_new(struct h2b_hist **out, uint64_t lowest, uint64_t highest, int sub_bits);

/* h2b_hist_new with the defaults: 1 ns to 60 s, sub_bits 7. */
int h2b_hist_new_default(struct h2b_hist **out);

/* Frees h (NULL is fine). */
void h2b_hist_del(struct h2b_hist *h);

/* Empties h, keeping its configuration and memory. */
void h2b_hist_reset(struct h2b_hist *h);

/* Records value once / count times. Values outside [lowest, highest] are clamped and counted in
 * h->clamped. O(1), no allocation. */
void h2b_hist_record_n(struct h2b_hist *h, uint64_t value, uint64_t count);
static inline void h2b_hist_record(struct h2b_hist *h, uint64_t value)
{
    h2b_hist_record_n(h, value, 1);
}

/* Adds every count of src into dst. Both must have the same configuration: returns H2B_OK or
 * H2B_ERR_INVAL (dst untouched). */
int h2b_hist_merge(struct h2b_hist *dst, const struct h2b_hist *src);

/* True when a and b have the same lowest, highest and sub_bits. */
bool h2b_hist_same_config(const struct h2b_hist *a, const struct h2b_hist *b);

/* Value at percentile p (0..100), HdrHistogram's getValueAtPercentile (Java, JS): the highest
 * value equivalent to the bin holding the rank-th smallest value, rank = ceil(p/100 * total less
 * one ulp), at least 1; for p = 0 the lowest value of that bin. Not bounded by the exact min and
 * max (a percentile in the max's bin is that bin's top). 0 if empty. */
uint64_t h2b_hist_percentile(const struct h2b_hist *h, double p);

/* Mean and standard deviation (population) from bin midpoints; 0 if empty. */
double h2b_hist_mean(const struct h2b_hist *h);
double h2b_hist_stddev(const struct h2b_hist *h);

/* Lowest and highest values that land in the same bin as value. */
uint64_t h2b_hist_lowest_equivalent(const struct h2b_hist *h, uint64_t value);
uint64_t h2b_hist_highest_equivalent(const struct h2b_hist *h, uint64_t value);

/* Compact text encoding: "h2bh1:" followed by base64 of a varint stream (configuration, exact
 * min/max, zero-run-length-encoded counts) and a checksum. Returns a malloc'd NUL-terminated
 * string in *out (caller frees), H2B_OK or H2B_ERR_NOMEM. */
int h2b_hist_encode(const struct h2b_hist *h, char **out);

/* Decodes text from h2b_hist_encode into a new histogram. Returns H2B_OK, H2B_ERR_PARSE on any
 * corruption (bad prefix, base64, varint, checksum, configuration or counts) or H2B_ERR_NOMEM;
 * *out untouched on failure. */
int h2b_hist_decode(const char *text, struct h2b_hist **out);

/* Calls fn for each non-empty bin in ascending order with the bin's highest equivalent value
 * and its count; stops early when fn returns non-zero. */
void h2b_hist_foreach(const struct h2b_hist *h, int (*fn)(uint64_t value, uint64_t count, void *),
                      void *arg);

#endif
