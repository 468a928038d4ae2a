/*
 * hist.c - log-linear histogram: record, merge, percentiles, text encoding.
 *
 * Layout (see hist.h): the bin of v is k*S + (v >> k) with k = msb(v | (2S-1)) - sub_bits. One
 * count array, no per-bucket pointers, so recording is a clz, a shift and an increment, and a
 * merge is one loop of additions.
 *
 * Percentiles are HdrHistogram's getValueAtPercentile, as its Java original and
 * hdr-histogram-js 3 (the reference of tests/integration/hist_hdr.sh) compute it; the code is
 * ours, the rule theirs:
 *   - the rank is ceil(fp - ulp(fp)), at least 1, where fp = (p / 100.0) x N in doubles, in that
 *     order of operations. The product overshoots an exact integer by an ulp (99.9 / 100 x
 *     20,000 is 19,980.000000000004) and a plain ceil would report the bin after the one that
 *     reaches the rank. ulp(fp) is 2^(ilogb(fp) - 52); hdr-histogram-js takes
 *     2^(floor(log2(fp)) - 52), which differs only for fp within a few ulps below a power of
 *     two, where both ceil to that power of two, so the rank is the same;
 *   - the walk: the first bin, in index order, whose cumulative count reaches the rank;
 *   - the value: that bin's highest equivalent value (p = 0: its lowest), not bounded by the
 *     exact min and max. A percentile in the max's bin is therefore up to one bin width (< 1/S
 *     relative) above the exact max that h->max and the JSON's `max` keep, as in HdrHistogram.
 *   HdrHistogram_C (hdr_value_at_percentile) rounds the rank to nearest instead, (int64_t)(fp +
 *   0.5): it can report one bin lower (p50 of 3 values: rank 2 here, 2 there; p10 of 12: rank 2
 *   here, 1 there). We follow Java and JS, whose readers decode `--hdr-log`.
 * Equality holds bin for bin because the layout is HdrHistogram's for lowest discernible value 1
 * (see harness/load/hdrlog.c): the same counts in the same bins give the same rank, bin and value.
 * A histogram with lowest > 1 (none of h2bench's latency histograms) clamps smaller values up to
 * lowest instead of tracking them; its percentiles follow the same rule over its own bins.
 *
 * Encoding: HdrHistogram's V2 log format (zig-zag LEB128 with negative zero runs, deflated) was
 * the model; we keep the zig-zag run-length idea but drop zlib and add an FNV-1a checksum so a
 * truncated or edited histogram in a results file is rejected instead of decoded into nonsense.
 */
#include "core/hist.h"
#include "core/array.h"
#include "core/check.h"
#include "core/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ENCODING_PREFIX "h2bh1:"

static inline int bucket_of(const struct h2b_hist *h, uint64_t v)
{
    uint64_t mask = (2ULL << h->sub_bits) - 1;
    return 63 - __builtin_clzll(v | mask) - h->sub_bits;
}

static inline size_t index_of(const struct h2b_hist *h, uint64_t v)
{
    int k = bucket_of(h, v);
    return ((size_t)k << h->sub_bits) + (size_t)(v >> k);
}

static void bin_range(const struct h2b_hist *h, size_t idx, uint64_t *lo, uint64_t *hi)
{
    size_t s = (size_t)1 << h->sub_bits;
    int k = idx < 2 * s ? 0 : (int)(idx >> h->sub_bits) - 1;
    uint64_t sub = idx - ((size_t)k << h->sub_bits);
    *lo = sub << k;
    *hi = *lo + ((1ULL << k) - 1);
}

static bool config_valid(uint64_t lowest, uint64_t highest, int sub_bits)
{
    return lowest >= 1 && highest / 2 >= lowest && sub_bits >= 1 && sub_bits <= 14 &&
           highest < (1ULL << 62);
}

int h2b_hist_new(struct h2b_hist **out, uint64_t lowest, uint64_t highest, int sub_bits)
{
    if (!config_valid(lowest, highest, sub_bits))
        return H2B_ERR_INVAL;
    struct h2b_hist *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return H2B_ERR_NOMEM;
    h->lowest = lowest;
    h->highest = highest;
    h->sub_bits = sub_bits;
    h->count_len = index_of(h, highest) + 1;
    h->bucket_count = bucket_of(h, highest) + 1;
    h->counts = calloc(h->count_len, sizeof(h->counts[0]));
    if (h->counts == NULL) {
        free(h);
        return H2B_ERR_NOMEM;
    }
    h->min = UINT64_MAX;
    *out = h;
    return H2B_OK;
}

int h2b_hist_new_default(struct h2b_hist **out)
{
    return h2b_hist_new(out, H2B_HIST_DEFAULT_LOWEST, H2B_HIST_DEFAULT_HIGHEST,
                        H2B_HIST_DEFAULT_SUB_BITS);
}

void h2b_hist_del(struct h2b_hist *h)
{
    if (h == NULL)
        return;
    free(h->counts);
    free(h);
}

void h2b_hist_reset(struct h2b_hist *h)
{
    memset(h->counts, 0, h->count_len * sizeof(h->counts[0]));
    h->total = 0;
    h->clamped = 0;
    h->min = UINT64_MAX;
    h->max = 0;
}

void h2b_hist_record_n(struct h2b_hist *h, uint64_t value, uint64_t count)
{
    if (value < h->lowest || value > h->highest) {
        value = value < h->lowest ? h->lowest : h->highest;
        h->clamped += count;
    }
    size_t idx = index_of(h, value);
    H2B_ASSERT(idx < h->count_len); /* value was clamped to [lowest, highest] */
    h->counts[idx] += count;
    h->total += count;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

bool h2b_hist_same_config(const struct h2b_hist *a, const struct h2b_hist *b)
{
    return a->lowest == b->lowest && a->highest == b->highest && a->sub_bits == b->sub_bits;
}

int h2b_hist_merge(struct h2b_hist *dst, const struct h2b_hist *src)
{
    if (!h2b_hist_same_config(dst, src))
        return H2B_ERR_INVAL;
    H2B_ASSERT(dst->count_len == src->count_len); /* the same geometry has as many bins */
    for (size_t i = 0; i < dst->count_len; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->clamped += src->clamped;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    return H2B_OK;
}

uint64_t h2b_hist_lowest_equivalent(const struct h2b_hist *h, uint64_t value)
{
    uint64_t lo, hi;
    bin_range(h, index_of(h, value), &lo, &hi);
    return lo;
}

uint64_t h2b_hist_highest_equivalent(const struct h2b_hist *h, uint64_t value)
{
    uint64_t lo, hi;
    bin_range(h, index_of(h, value), &lo, &hi);
    return hi;
}

uint64_t h2b_hist_percentile(const struct h2b_hist *h, double p)
{
    if (h->total == 0)
        return 0;
    if (!(p > 0)) /* negative or NaN: the lowest percentile */
        p = 0;
    if (p > 100)
        p = 100;
    /* The rank (see the design comment): p / 100 x N in floating point, less one ulp, rounded
     * up, at least 1. */
    double fp = p / 100.0 * (double)h->total;
    double ulp = fp > 0 ? ldexp(1.0, ilogb(fp) - 52) : 0;
    uint64_t rank = (uint64_t)ceil(fp - ulp);
    if (rank < 1)
        rank = 1;
    if (rank > h->total)
        rank = h->total;
    uint64_t seen = 0;
    for (size_t i = 0; i < h->count_len; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            bin_range(h, i, &lo, &hi);
            return p == 0 ? lo : hi;
        }
    }
    return h2b_hist_highest_equivalent(h, h->max); /* not reached: the counts sum to total */
}

static double bin_mid(const struct h2b_hist *h, size_t idx)
{
    uint64_t lo, hi;
    bin_range(h, idx, &lo, &hi);
    return ((double)lo + (double)hi) / 2.0;
}

double h2b_hist_mean(const struct h2b_hist *h)
{
    if (h->total == 0)
        return 0.0;
    double sum = 0.0;
    for (size_t i = 0; i < h->count_len; i++) {
        if (h->counts[i])
            sum += bin_mid(h, i) * (double)h->counts[i];
    }
    return sum / (double)h->total;
}

double h2b_hist_stddev(const struct h2b_hist *h)
{
    if (h->total == 0)
        return 0.0;
    double mean = h2b_hist_mean(h), acc = 0.0;
    for (size_t i = 0; i < h->count_len; i++) {
        if (h->counts[i]) {
            double d = bin_mid(h, i) - mean;
            acc += d * d * (double)h->counts[i];
        }
    }
    return sqrt(acc / (double)h->total);
}

void h2b_hist_foreach(const struct h2b_hist *h, int (*fn)(uint64_t value, uint64_t count, void *),
                      void *arg)
{
    for (size_t i = 0; i < h->count_len; i++) {
        if (h->counts[i] == 0)
            continue;
        uint64_t lo, hi;
        bin_range(h, i, &lo, &hi);
        if (fn(hi, h->counts[i], arg) != 0)
            return;
    }
}

/* ---- encoding ---- */

struct bytes {
    unsigned char *p;
    size_t len, cap;
};

static int put_byte(struct bytes *b, unsigned char c)
{
    if (b->len == b->cap) {
        unsigned char *p = h2b_array_grow(b->p, &b->cap, b->len + 1, 1, 256);
        if (p == NULL)
            return H2B_ERR_NOMEM;
        b->p = p;
    }
    b->p[b->len++] = c;
    return H2B_OK;
}

static int put_varint(struct bytes *b, uint64_t v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        if (put_byte(b, v ? (unsigned char)(c | 0x80) : c) != H2B_OK)
            return H2B_ERR_NOMEM;
    } while (v);
    return H2B_OK;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int h2b_hist_encode(const struct h2b_hist *h, char **out)
{
    struct bytes b = {0};
    int rv = H2B_OK;
    uint64_t header[] = {(uint64_t)h->sub_bits, h->lowest, h->highest, h->total,
                         h->total ? h->min : 0, h->max,    h->clamped, h->count_len};
    for (size_t i = 0; i < sizeof(header) / sizeof(header[0]) && rv == H2B_OK; i++)
        rv = put_varint(&b, header[i]);
    /* Counts: zig-zag, a positive count c is 2c, a run of r empty bins is 2r - 1. */
    for (size_t i = 0; i < h->count_len && rv == H2B_OK;) {
        if (h->counts[i] != 0) {
            rv = put_varint(&b, h->counts[i] << 1);
            i++;
            continue;
        }
        size_t run = 0;
        while (i < h->count_len && h->counts[i] == 0) {
            run++;
            i++;
        }
        rv = put_varint(&b, 2 * (uint64_t)run - 1);
    }
    if (rv == H2B_OK)
        rv = put_varint(&b, fnv1a(b.p, b.len));
    if (rv != H2B_OK) {
        free(b.p);
        return rv;
    }
    size_t plen = sizeof(ENCODING_PREFIX) - 1;
    char *s = malloc(plen + (b.len + 2) / 3 * 4 + 1);
    if (s == NULL) {
        free(b.p);
        return H2B_ERR_NOMEM;
    }
    memcpy(s, ENCODING_PREFIX, plen);
    char *o = s + plen;
    for (size_t i = 0; i < b.len; i += 3) {
        uint32_t v = (uint32_t)b.p[i] << 16;
        if (i + 1 < b.len)
            v |= (uint32_t)b.p[i + 1] << 8;
        if (i + 2 < b.len)
            v |= b.p[i + 2];
        *o++ = b64[(v >> 18) & 63];
        *o++ = b64[(v >> 12) & 63];
        *o++ = i + 1 < b.len ? b64[(v >> 6) & 63] : '=';
        *o++ = i + 2 < b.len ? b64[v & 63] : '=';
    }
    *o = '\0';
    free(b.p);
    *out = s;
    return H2B_OK;
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

static int base64_decode(const char *s, struct bytes *b)
{
    size_t n = strlen(s);
    if (n % 4 != 0)
        return H2B_ERR_PARSE;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            if (s[i + j] == '=' && i + 4 == n && j >= 2) {
                v[j] = 0;
                pad++;
            } else if (pad || (v[j] = b64_value(s[i + j])) < 0) {
                return H2B_ERR_PARSE;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | v[3];
        if (put_byte(b, (unsigned char)(w >> 16)) != H2B_OK ||
            (pad < 2 && put_byte(b, (unsigned char)(w >> 8)) != H2B_OK) ||
            (pad < 1 && put_byte(b, (unsigned char)w) != H2B_OK))
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

static int get_varint(const struct bytes *b, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= b->len)
            return H2B_ERR_PARSE;
        unsigned char c = b->p[(*pos)++];
        if (shift == 63 && (c & 0x7e))
            return H2B_ERR_PARSE;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return H2B_OK;
        }
    }
    return H2B_ERR_PARSE;
}

int h2b_hist_decode(const char *text, struct h2b_hist **out)
{
    size_t plen = sizeof(ENCODING_PREFIX) - 1;
    if (text == NULL || strncmp(text, ENCODING_PREFIX, plen) != 0)
        return H2B_ERR_PARSE;
    struct bytes b = {0};
    struct h2b_hist *h = NULL;
    int rv = base64_decode(text + plen, &b);
    if (rv != H2B_OK)
        goto out_free_bytes;
    rv = H2B_ERR_PARSE;
    size_t pos = 0;
    uint64_t hd[8];
    for (int i = 0; i < 8; i++) {
        if (get_varint(&b, &pos, &hd[i]) != H2B_OK)
            goto out_free_bytes;
    }
    if (hd[0] > 14 || !config_valid(hd[1], hd[2], (int)hd[0]))
        goto out_free_bytes;
    rv = h2b_hist_new(&h, hd[1], hd[2], (int)hd[0]);
    if (rv != H2B_OK)
        goto out_free_bytes;
    rv = H2B_ERR_PARSE;
    if (hd[7] != h->count_len)
        goto out_free_hist;
    uint64_t sum = 0;
    for (size_t i = 0; i < h->count_len;) {
        uint64_t z;
        if (get_varint(&b, &pos, &z) != H2B_OK)
            goto out_free_hist;
        if (z & 1) {
            uint64_t run = (z + 1) / 2;
            if (run > h->count_len - i)
                goto out_free_hist;
            i += run;
        } else {
            uint64_t c = z >> 1;
            if (c == 0 || sum + c < sum)
                goto out_free_hist;
            h->counts[i++] = c;
            sum += c;
        }
    }
    size_t body_len = pos;
    uint64_t check;
    if (get_varint(&b, &pos, &check) != H2B_OK || pos != b.len || check != fnv1a(b.p, body_len))
        goto out_free_hist;
    if (sum != hd[3] || hd[6] > sum)
        goto out_free_hist;
    if (sum > 0) {
        if (hd[4] > hd[5] || hd[4] < h->lowest || hd[5] > h->highest)
            goto out_free_hist;
        h->min = hd[4];
    } else if (hd[4] != 0 || hd[5] != 0) {
        goto out_free_hist;
    }
    h->max = hd[5];
    h->total = sum;
    h->clamped = hd[6];
    free(b.p);
    *out = h;
    return H2B_OK;

out_free_hist:
    h2b_hist_del(h);
out_free_bytes:
    free(b.p);
    return rv;
}
