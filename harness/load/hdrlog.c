/*
 * hdrlog.c - h2bench's histograms in HdrHistogram's own formats: the V2 compressed encoding
 * (base64 of a cookie, a length and the zlib-deflated V2 encoding), the interval log that
 * carries it (HdrHistogram log format 1.3, read by HistogramLogAnalyzer, hdr-plot,
 * hdr-histogram-js), and the wrk2-style percentile spectrum of `--latency`.
 *
 * Approach: no conversion of values. h2b_hist's layout is HdrHistogram's for lowest
 * discernible value 1 and S = 2^sub_bits half sub-buckets (bin of v: k*S + (v >> k)), so the
 * counts array goes out index for index; sub_bits 4, 7, 10, 14 are 1, 2, 3, 4 significant
 * figures (the default, 7, is 2: at most 0.78% relative error). The V2 payload is zig-zag
 * LEB128 counts with runs of zeros as negative run lengths, up to the last non-zero bin.
 *
 * Percentiles: HdrHistogram sizes its sub-buckets from significant figures d as 2^ceil(log2(2 x
 * 10^d)) (d = 2: 256, i.e. S = 128 half sub-buckets, our sub_bits 7); wrk2 and h2load use d = 3
 * (sub_bits 10), a finer layout than h2bench's default. Other sub_bits have no HdrHistogram
 * equivalent and are not exported (H2B_ERR_UNSUPPORTED). Because an exported histogram is
 * HdrHistogram's bin for bin, a reader of the log (decodeFromCompressedBase64, then
 * getValueAtPercentile) walks the same counts to the same bin with the same rank rule as
 * h2b_hist_percentile (core/hist.c) and reports the same value, the bin's highest equivalent
 * value: p50 ... p99.99 in the JSON, the text block and `--latency` equal it exactly
 * (tests/integration/hist_hdr.sh). The max is the exception: h2bench keeps the exact max (and
 * writes it as Interval_Max); HdrHistogram's is the top of the max's bin. The spectrum's values
 * are bin tops too, as HdrHistogram's percentile iteration gives them.
 *
 * Rejected: vendoring HdrHistogram_c for its log writer (a second histogram type in the engine,
 * and a copy of another project's code); re-binning into a 3-significant-figure histogram (it
 * would invent precision the data do not have). Base64 is OpenSSL's EVP_EncodeBlock, deflate is
 * zlib's compress2 (zlib format, as Java's Deflater writes and every reader inflates).
 */
#include "core/error.h"
#include "core/hist.h"
#include "load/load.h"
#include "core/results.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define V2_ENCODING_COOKIE 0x1c849313U   /* V2 base 0x1c849303 | word size bit 0x10 */
#define V2_COMPRESSED_COOKIE 0x1c849314U /* compressed base 0x1c849304 | 0x10 */
#define V2_HEADER_LEN 40

static int significant_figures(int sub_bits)
{
    switch (sub_bits) {
    case 4:
        return 1;
    case 7:
        return 2;
    case 10:
        return 3;
    case 14:
        return 4;
    default:
        return 0;
    }
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static size_t put_zigzag(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    do {
        uint8_t b = z & 0x7f;
        z >>= 7;
        /* LEB128 as HdrHistogram writes it: at most 9 bytes, the ninth carries 8 bits */
        if (n == 8) {
            p[n++] = (uint8_t)(b | (z << 7));
            break;
        }
        p[n++] = z ? (uint8_t)(b | 0x80) : b;
    } while (z);
    return n;
}

int h2b_load_hdr_encode(const struct h2b_hist *h, char **out)
{
    int sf = significant_figures(h->sub_bits);
    if (sf == 0 || h->lowest != 1)
        return H2B_ERR_UNSUPPORTED;
    size_t last = 0; /* one past the last non-zero bin */
    for (size_t i = 0; i < h->count_len; i++)
        if (h->counts[i])
            last = i + 1;
    uint8_t *raw = malloc(V2_HEADER_LEN + last * 9 + 9);
    if (!raw)
        return H2B_ERR_NOMEM;
    size_t n = V2_HEADER_LEN;
    for (size_t i = 0; i < last;) {
        if (h->counts[i] == 0) {
            size_t run = 0;
            while (i < last && h->counts[i] == 0)
                run++, i++;
            n += put_zigzag(raw + n, -(int64_t)run);
        } else {
            uint64_t c = h->counts[i++];
            n += put_zigzag(raw + n, c > INT64_MAX ? INT64_MAX : (int64_t)c);
        }
    }
    put32(raw, V2_ENCODING_COOKIE);
    put32(raw + 4, (uint32_t)(n - V2_HEADER_LEN));
    put32(raw + 8, 0); /* normalizing index offset */
    put32(raw + 12, (uint32_t)sf);
    put64(raw + 16, h->lowest);
    put64(raw + 24, h->highest);
    double ratio = 1.0; /* integer to double conversion ratio */
    uint64_t bits;
    memcpy(&bits, &ratio, sizeof(bits));
    put64(raw + 32, bits);

    uLongf zlen = compressBound((uLong)n);
    uint8_t *z = malloc(8 + zlen);
    if (!z) {
        free(raw);
        return H2B_ERR_NOMEM;
    }
    int zr = compress2(z + 8, &zlen, raw, (uLong)n, Z_DEFAULT_COMPRESSION);
    free(raw);
    if (zr != Z_OK) {
        free(z);
        return zr == Z_MEM_ERROR ? H2B_ERR_NOMEM : H2B_ERR_SYS;
    }
    put32(z, V2_COMPRESSED_COOKIE);
    put32(z + 4, (uint32_t)zlen);
    size_t zn = 8 + zlen;
    char *b64 = malloc(4 * ((zn + 2) / 3) + 1);
    if (!b64) {
        free(z);
        return H2B_ERR_NOMEM;
    }
    EVP_EncodeBlock((unsigned char *)b64, z, (int)zn);
    free(z);
    *out = b64;
    return H2B_OK;
}

/* A growing text buffer for the log. */
struct text {
    char *p;
    size_t len, cap;
    int rc;
};

static void addf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct text *t, const char *fmt, ...)
{
    if (t->rc)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->rc = H2B_ERR_SYS;
            return;
        }
        if (t->p && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)n)
            cap *= 2;
        char *np = realloc(t->p, cap);
        if (!np) {
            t->rc = H2B_ERR_NOMEM;
            return;
        }
        t->p = np;
        t->cap = cap;
    }
}

int h2b_load_hdr_log(const struct h2b_load_result *res, char **out, size_t *outlen)
{
    const struct h2b_load_stats *s = &res->s;
    struct text t = {0};
    double start = (double)res->start_wall_ns / 1e9;
    time_t secs = (time_t)(res->start_wall_ns / 1000000000ULL);
    struct tm tm;
    char date[64] = "";
    if (gmtime_r(&secs, &tm))
        strftime(date, sizeof(date), "%a %b %d %H:%M:%S UTC %Y", &tm);
    addf(&t, "#[h2bench load: latency histograms in ns; Tag names the metric, as in h2bench's "
             "JSON (latency, service, ttfb, connect, tls_handshake)]\n");
    addf(&t, "#[Histogram log format version 1.3]\n");
    addf(&t, "#[StartTime: %.3f (seconds since epoch), %s]\n", start, date);
    addf(&t, "#[BaseTime: %.3f (seconds since epoch)]\n", start);
    addf(&t, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
             "\"Interval_Compressed_Histogram\"\n");
    const struct {
        const char *tag;
        const struct h2b_hist *h;
    } metrics[] = {{"latency", s->latency},
                   {"service", s->service},
                   {"ttfb", s->ttfb},
                   {"connect", s->connect},
                   {"tls_handshake", s->tls}};
    double length = (double)res->measure_ns / 1e9;
    /* with per-interval results, latency gets one histogram per interval (empty ones left out:
     * a reader adds the lines of a tag, and an absent line is an empty interval) */
    for (size_t i = 0; i < res->nintervals && !t.rc; i++) {
        const struct h2b_results_interval *r = &res->intervals[i];
        struct h2b_hist *h = NULL;
        char *b64 = NULL;
        if (!(r->ended > 0) || !r->latency_histogram)
            continue;
        int rv = h2b_hist_decode(r->latency_histogram, &h);
        if (rv == H2B_OK)
            rv = h2b_load_hdr_encode(h, &b64);
        if (rv == H2B_OK)
            addf(&t, "Tag=latency,%.3f,%.3f,%.6f,%s\n", r->start_s, r->end_s - r->start_s,
                 (double)h->max / 1e6, b64);
        else
            t.rc = rv == H2B_ERR_NOMEM ? rv : H2B_ERR_UNSUPPORTED;
        free(b64);
        h2b_hist_del(h);
    }
    for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]) && !t.rc; i++) {
        const struct h2b_hist *h = metrics[i].h;
        if (!h || h->total == 0 || (i == 0 && res->nintervals))
            continue;
        char *b64;
        int rv = h2b_load_hdr_encode(h, &b64);
        if (rv != H2B_OK) {
            t.rc = rv;
            break;
        }
        /* Interval_Max in ms (HdrHistogram's default unit ratio for ns values, 1e6) */
        addf(&t, "Tag=%s,%.3f,%.3f,%.6f,%s\n", metrics[i].tag, 0.0, length, (double)h->max / 1e6,
             b64);
        free(b64);
    }
    if (t.rc) {
        free(t.p);
        return t.rc;
    }
    *out = t.p;
    *outlen = t.len;
    return H2B_OK;
}

struct spectrum {
    FILE *f;
    const struct h2b_hist *h;
    double level; /* next reporting level, percent */
    uint64_t cum;
};

/* HdrHistogram's percentile iteration: the level advances by 100 / (5 * 2^(floor(log2(100 /
 * (100 - level))) + 1)), so the tail gets ever finer steps; the 100% line closes it (its
 * 1/(1-p) is inf, as wrk2 prints it). */
static int spectrum_bin(uint64_t value, uint64_t count, void *arg)
{
    struct spectrum *sp = arg;
    const struct h2b_hist *h = sp->h;
    sp->cum += count;
    while (sp->cum == h->total || 100.0 * (double)sp->cum / (double)h->total >= sp->level) {
        if (sp->cum == h->total) {
            fprintf(sp->f, "%12.3f %12.6f %12" PRIu64 " %12.2f\n", (double)value / 1e6, 1.0,
                    sp->cum, INFINITY);
            return 1;
        }
        fprintf(sp->f, "%12.3f %12.6f %12" PRIu64 " %12.2f\n", (double)value / 1e6, sp->level / 100,
                sp->cum, 1.0 / (1.0 - sp->level / 100));
        double halvings = floor(log2(100.0 / (100.0 - sp->level))) + 1;
        sp->level += 100.0 / (5 * pow(2, halvings));
    }
    return 0;
}

void h2b_load_spectrum(FILE *f, const struct h2b_hist *h, const char *title)
{
    static const double ps[] = {50, 90, 95, 99, 99.9, 99.99};
    fprintf(f, "  Latency Distribution (HdrHistogram - %s)\n", title);
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        fprintf(f, "%7.3f%% %10.3fms\n", ps[i], (double)h2b_hist_percentile(h, ps[i]) / 1e6);
    fprintf(f, "\n  Detailed Percentile spectrum:\n");
    fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    struct spectrum sp = {.f = f, .h = h};
    if (h->total)
        h2b_hist_foreach(h, spectrum_bin, &sp);
    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", h2b_hist_mean(h) / 1e6,
            h2b_hist_stddev(h) / 1e6);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n", (double)h->max / 1e6,
            h->total);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", h->bucket_count, 2 << h->sub_bits);
}
