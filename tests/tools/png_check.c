/*
 * png_check.c - tells whether a PNG file is a real image with something drawn on it.
 *
 * usage: png_check FILE [RRGGBB...]
 * Verifies the signature and every chunk's CRC, inflates the IDAT stream (zlib), undoes the
 * scanline filters (8-bit greyscale, RGB, palette, grey+alpha, RGBA; no interlace) and prints
 * "WIDTHxHEIGHT colors=N ink=P%" where ink is the share of pixels that differ from the most
 * common colour (the background). Each RRGGBB given must occur in the image (a series colour:
 * proof that data was drawn, not only axes). Exits 0 when valid, at least 3 colours, ink above
 * 0.5% and every colour found; 1 otherwise.
 *
 * A test helper, not part of h2bench: the report tests use it to prove a chart is not blank.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

struct color {
    uint32_t rgb;
    size_t count;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: png_check FILE [RRGGBB...]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)size);
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    fclose(f);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (size < 8 || memcmp(buf, sig, 8) != 0) {
        fprintf(stderr, "%s: not a PNG (bad signature)\n", argv[1]);
        return 1;
    }
    uint32_t w = 0, h = 0;
    int depth = 0, ctype = -1, interlace = 0;
    unsigned char palette[768];
    size_t idat_len = 0, idat_cap = (size_t)size;
    unsigned char *idat = malloc(idat_cap);
    long off = 8;
    int seen_end = 0;
    while (off + 12 <= size) {
        uint32_t len = be32(buf + off);
        if ((long)len > size - off - 12) {
            fprintf(stderr, "%s: truncated chunk\n", argv[1]);
            return 1;
        }
        const unsigned char *type = buf + off + 4, *data = buf + off + 8;
        uint32_t crc = (uint32_t)crc32(0, type, len + 4);
        if (crc != be32(data + len)) {
            fprintf(stderr, "%s: bad CRC in %.4s\n", argv[1], (const char *)type);
            return 1;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            w = be32(data);
            h = be32(data + 4);
            depth = data[8];
            ctype = data[9];
            interlace = data[12];
        } else if (memcmp(type, "PLTE", 4) == 0) {
            memcpy(palette, data, len < 768 ? len : 768);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(idat + idat_len, data, len);
            idat_len += len;
        } else if (memcmp(type, "IEND", 4) == 0) {
            seen_end = 1;
            break;
        }
        off += 12 + (long)len;
    }
    static const int channels[7] = {1, 0, 3, 1, 2, 0, 4};
    if (!seen_end || w == 0 || h == 0 || depth != 8 || ctype < 0 || ctype > 6 ||
        channels[ctype] == 0 || interlace != 0) {
        fprintf(stderr, "%s: unsupported or incomplete PNG (type %d, depth %d, interlace %d)\n",
                argv[1], ctype, depth, interlace);
        return 1;
    }
    size_t bpp = (size_t)channels[ctype], stride = (size_t)w * bpp;
    uLongf raw_len = (uLongf)((stride + 1) * h);
    unsigned char *raw = malloc(raw_len);
    if (uncompress(raw, &raw_len, idat, idat_len) != Z_OK || raw_len != (stride + 1) * h) {
        fprintf(stderr, "%s: IDAT does not inflate to the image size\n", argv[1]);
        return 1;
    }
    unsigned char *prev = calloc(stride, 1), *cur;
    uint32_t *px = malloc((size_t)w * h * sizeof(uint32_t));
    for (uint32_t y = 0; y < h; y++) {
        unsigned char ft = raw[y * (stride + 1)];
        cur = raw + y * (stride + 1) + 1;
        for (size_t x = 0; x < stride; x++) {
            int a = x >= bpp ? cur[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
            int v = cur[x];
            switch (ft) {
            case 0:
                break;
            case 1:
                v += a;
                break;
            case 2:
                v += b;
                break;
            case 3:
                v += (a + b) / 2;
                break;
            case 4:
                v += paeth(a, b, c);
                break;
            default:
                fprintf(stderr, "%s: bad filter %d\n", argv[1], ft);
                return 1;
            }
            cur[x] = (unsigned char)v;
        }
        for (uint32_t x = 0; x < w; x++) {
            const unsigned char *p = cur + x * bpp;
            uint32_t rgb;
            if (ctype == 3)
                rgb = (uint32_t)palette[p[0] * 3] << 16 | (uint32_t)palette[p[0] * 3 + 1] << 8 |
                      palette[p[0] * 3 + 2];
            else if (ctype == 0 || ctype == 4)
                rgb = (uint32_t)p[0] << 16 | (uint32_t)p[0] << 8 | p[0];
            else
                rgb = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            px[(size_t)y * w + x] = rgb;
        }
        memcpy(prev, cur, stride);
    }
    size_t n = (size_t)w * h;
    uint32_t *sorted = malloc(n * sizeof(uint32_t));
    memcpy(sorted, px, n * sizeof(uint32_t));
    qsort(sorted, n, sizeof(uint32_t), cmp_u32);
    size_t colors = 0, best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || sorted[i] != sorted[i - 1]) {
            colors++;
            run = 0;
        }
        run++;
        if (run > best)
            best = run;
    }
    double ink = 100.0 * (double)(n - best) / (double)n;
    printf("%ux%u colors=%zu ink=%.2f%%\n", w, h, colors, ink);
    int ok = colors >= 3 && ink > 0.5;
    for (int i = 2; i < argc; i++) {
        uint32_t want = (uint32_t)strtoul(argv[i], NULL, 16);
        if (bsearch(&want, sorted, n, sizeof(uint32_t), cmp_u32) == NULL) {
            printf("colour %s: absent\n", argv[i]);
            ok = 0;
        } else {
            printf("colour %s: present\n", argv[i]);
        }
    }
    free(sorted);
    free(px);
    free(prev);
    free(raw);
    free(idat);
    free(buf);
    return ok ? 0 : 1;
}
