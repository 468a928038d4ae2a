/*
 * fold.c - profiles as folded stacks: built from `perf script` text or folded files, written
 * back as folded files, summarised into the results cell's JSON.
 *
 * Approach: perf's text output is parsed line by line (a header line per sample, then its frames
 * leaf first, a blank line after), each sample becomes one stack of interned frames, root first,
 * and identical stacks share one entry with a count. Self share = samples whose leaf is the
 * frame; total share = samples whose stack holds it anywhere (once per stack, so recursion does
 * not count twice); the DSO split classifies each sample by its leaf frame, so it partitions the
 * samples and adds up to 100 %.
 *
 * Rejected: running FlameGraph's stackcollapse-perf.pl (Debian does not package FlameGraph, and
 * its Perl would be a second parser of the same text); `perf report --stdio` for the summary (a
 * second perf run and a text format meant for people, which changes between perf versions);
 * symbolising addresses ourselves (perf already does it, with the kernel's symbols and the
 * DWARF unwinder).
 */
#include "prof/prof_int.h"

#include "core/array.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- DSO classes ---- */

static const char *const dso_names[H2B_PROF_NDSO] = {"kernel", "nghttp2", "tls",
                                                     "libc",   "own",     "other"};

const char *h2b_prof_dso_name(enum h2b_prof_dso d)
{
    return (unsigned)d < H2B_PROF_NDSO ? dso_names[d] : "other";
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

enum h2b_prof_dso h2b_prof_dso_class(const char *dso, const char *own_exe)
{
    const char *b = base_name(dso);
    if (*b == '[')
        b++;
    if (starts(b, "kernel.kallsyms") || ends(b, ".ko") || ends(b, ".ko]") ||
        starts(b, "guest.kernel"))
        return H2B_PROF_DSO_KERNEL;
    if (own_exe && *own_exe && strcmp(b, base_name(own_exe)) == 0)
        return H2B_PROF_DSO_OWN;
    if (starts(b, "libnghttp2."))
        return H2B_PROF_DSO_NGHTTP2;
    if (starts(b, "libssl.") || starts(b, "libcrypto."))
        return H2B_PROF_DSO_TLS;
    if (starts(b, "libc.so") || starts(b, "libc-") || starts(b, "libm.so") ||
        starts(b, "ld-linux") || starts(b, "libpthread"))
        return H2B_PROF_DSO_LIBC;
    return H2B_PROF_DSO_OTHER;
}

/* ---- storage ---- */

int h2b_prof_new(struct h2b_prof **out, const char *own_exe)
{
    struct h2b_prof *p = calloc(1, sizeof(*p));
    if (!p)
        return H2B_ERR_NOMEM;
    if (own_exe && *own_exe && !(p->own = strdup(base_name(own_exe)))) {
        free(p);
        return H2B_ERR_NOMEM;
    }
    *out = p;
    return H2B_OK;
}

void h2b_prof_del(struct h2b_prof *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nframes; i++) {
        free(p->frames[i].name);
        free(p->frames[i].dso);
    }
    free(p->frames);
    free(p->fhash);
    free(p->ids);
    free(p->stacks);
    free(p->shash);
    free(p->own);
    free(p);
}

uint64_t h2b_prof_samples(const struct h2b_prof *p)
{
    return p->samples;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211u;
    }
    return h;
}

#define FNV0 14695981039346656037u

static uint64_t frame_hash(const char *name, const char *dso)
{
    return fnv(fnv(FNV0, name, strlen(name) + 1), dso, strlen(dso));
}

/* Grows an array to hold need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return H2B_OK;
    void *a = h2b_array_grow(*arr, cap, need, elem, 64);
    if (!a)
        return H2B_ERR_NOMEM;
    *arr = a;
    return H2B_OK;
}

/* Rebuilds a hash table of index + 1 with twice the slots of the entries it holds. */
static int rehash(uint32_t **table, size_t *cap, size_t entries,
                  uint64_t (*hash_of)(const struct h2b_prof *, size_t), const struct h2b_prof *p)
{
    size_t n = 1024;
    while (n < entries * 2 + 2)
        n *= 2;
    uint32_t *t = calloc(n, sizeof(*t));
    if (!t)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < entries; i++) {
        size_t slot = (size_t)hash_of(p, i) & (n - 1);
        while (t[slot])
            slot = (slot + 1) & (n - 1);
        t[slot] = (uint32_t)(i + 1);
    }
    free(*table);
    *table = t;
    *cap = n;
    return H2B_OK;
}

static uint64_t frame_hash_at(const struct h2b_prof *p, size_t i)
{
    return frame_hash(p->frames[i].name, p->frames[i].dso);
}

static uint64_t stack_hash_of(const uint32_t *ids, size_t n)
{
    return fnv(FNV0, ids, n * sizeof(*ids));
}

static uint64_t stack_hash_at(const struct h2b_prof *p, size_t i)
{
    return stack_hash_of(p->ids + p->stacks[i].off, p->stacks[i].len);
}

long h2b__prof_find_frame(const struct h2b_prof *p, const char *name, const char *dso)
{
    if (!p->fhash_cap)
        return -1;
    size_t slot = (size_t)frame_hash(name, dso) & (p->fhash_cap - 1);
    for (; p->fhash[slot]; slot = (slot + 1) & (p->fhash_cap - 1)) {
        const struct h2b__prof_frame *f = &p->frames[p->fhash[slot] - 1];
        if (strcmp(f->name, name) == 0 && strcmp(f->dso, dso) == 0)
            return (long)p->fhash[slot] - 1;
    }
    return -1;
}

/* The length of the well-formed UTF-8 sequence at s (1-4), or 0 when it is not one: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A copy of s fit for the folded format, the results JSON and the SVG: ';', control characters
 * and bytes that are not well-formed UTF-8 become '?'. */
static char *clean_copy(const char *s)
{
    char *c = strdup(s);
    if (!c)
        return NULL;
    for (unsigned char *q = (unsigned char *)c; *q;) {
        size_t n = utf8_len(q);
        if (n == 0 || *q == ';' || *q < 0x20 || *q == 0x7f)
            *q = '?', n = 1;
        q += n;
    }
    return c;
}

static int intern(struct h2b_prof *p, const char *name, const char *dso, uint32_t *id)
{
    long found = h2b__prof_find_frame(p, name, dso);
    if (found >= 0) {
        *id = (uint32_t)found;
        return H2B_OK;
    }
    if (p->nframes >= H2B_PROF_MAX_FRAMES)
        return H2B_ERR_RANGE;
    int rc = grow((void **)&p->frames, &p->capframes, p->nframes + 1, sizeof(*p->frames));
    if (rc)
        return rc;
    struct h2b__prof_frame f = {clean_copy(name), clean_copy(dso), 0};
    if (!f.name || !f.dso) {
        free(f.name);
        free(f.dso);
        return H2B_ERR_NOMEM;
    }
    f.cls = (uint8_t)h2b_prof_dso_class(f.dso, p->own);
    /* keep the table at most half full */
    if ((p->nframes + 1) * 2 > p->fhash_cap &&
        (rc = rehash(&p->fhash, &p->fhash_cap, p->nframes, frame_hash_at, p))) {
        free(f.name);
        free(f.dso);
        return rc;
    }
    p->frames[p->nframes] = f;
    size_t slot = (size_t)frame_hash(f.name, f.dso) & (p->fhash_cap - 1);
    while (p->fhash[slot])
        slot = (slot + 1) & (p->fhash_cap - 1);
    p->fhash[slot] = (uint32_t)(p->nframes + 1);
    *id = (uint32_t)p->nframes++;
    return H2B_OK;
}

static int add_ids(struct h2b_prof *p, const uint32_t *ids, size_t n, uint64_t count)
{
    if (count > H2B_PROF_MAX_SAMPLES - p->samples)
        return H2B_ERR_RANGE;
    uint64_t h = stack_hash_of(ids, n);
    if (p->shash_cap) {
        size_t slot = (size_t)h & (p->shash_cap - 1);
        for (; p->shash[slot]; slot = (slot + 1) & (p->shash_cap - 1)) {
            struct h2b__prof_stack *s = &p->stacks[p->shash[slot] - 1];
            if (s->len == n && memcmp(p->ids + s->off, ids, n * sizeof(*ids)) == 0) {
                s->count += count;
                p->samples += count;
                return H2B_OK;
            }
        }
    }
    if (p->nstacks >= H2B_PROF_MAX_STACKS || p->nids + n > H2B__PROF_MAX_IDS)
        return H2B_ERR_RANGE;
    int rc = grow((void **)&p->stacks, &p->capstacks, p->nstacks + 1, sizeof(*p->stacks));
    if (!rc)
        rc = grow((void **)&p->ids, &p->capids, p->nids + n, sizeof(*p->ids));
    if (rc)
        return rc;
    if ((p->nstacks + 1) * 2 > p->shash_cap &&
        (rc = rehash(&p->shash, &p->shash_cap, p->nstacks, stack_hash_at, p)))
        return rc;
    memcpy(p->ids + p->nids, ids, n * sizeof(*ids));
    p->stacks[p->nstacks] = (struct h2b__prof_stack){(uint32_t)p->nids, (uint32_t)n, count};
    size_t slot = (size_t)h & (p->shash_cap - 1);
    while (p->shash[slot])
        slot = (slot + 1) & (p->shash_cap - 1);
    p->shash[slot] = (uint32_t)(p->nstacks + 1);
    p->nids += n;
    p->nstacks++;
    p->samples += count;
    return H2B_OK;
}

int h2b_prof_add(struct h2b_prof *p, const char *const *names, const char *const *dsos, size_t n,
                 uint64_t count)
{
    uint32_t ids[H2B_PROF_MAX_DEPTH];
    if (n == 0)
        return H2B_ERR_INVAL;
    size_t skip = n > H2B_PROF_MAX_DEPTH ? n - H2B_PROF_MAX_DEPTH : 0;
    for (size_t i = skip; i < n; i++) {
        int rc = intern(p, names[i], dsos[i], &ids[i - skip]);
        if (rc)
            return rc;
    }
    return add_ids(p, ids, n - skip, count);
}

/* ---- perf script text ---- */

struct sample {
    /* leaf first, as perf prints them; names point into names_buf */
    char *names[H2B_PROF_MAX_DEPTH];
    char *dsos[H2B_PROF_MAX_DEPTH];
    size_t n;
    bool open;
    size_t dropped; /* frames beyond the depth limit (root-most, dropped) */
};

static int flush_sample(struct h2b_prof *p, struct sample *s)
{
    int rc = H2B_OK;
    if (!s->open)
        return H2B_OK;
    const char *names[H2B_PROF_MAX_DEPTH], *dsos[H2B_PROF_MAX_DEPTH];
    size_t n = 0;
    for (size_t i = s->n; i-- > 0;) {
        names[n] = s->names[i];
        dsos[n] = s->dsos[i];
        n++;
    }
    if (n == 0) {
        names[0] = "[unknown]";
        dsos[0] = "unknown";
        n = 1;
    }
    rc = h2b_prof_add(p, names, dsos, n, 1);
    for (size_t i = 0; i < s->n; i++) {
        free(s->names[i]);
        free(s->dsos[i]);
    }
    s->n = 0;
    s->open = false;
    return rc;
}

/* "ADDR SYMBOL (DSO)" -> symbol and DSO basename (brackets stripped), malloc'd. */
static int parse_frame(const char *line, size_t len, char **name, char **dso)
{
    while (len && (*line == ' ' || *line == '\t'))
        line++, len--;
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
        len--;
    size_t a = 0;
    while (a < len && ((line[a] >= '0' && line[a] <= '9') || (line[a] >= 'a' && line[a] <= 'f')))
        a++;
    if (a == 0 || a >= len || line[a] != ' ' || line[len - 1] != ')')
        return H2B_ERR_PARSE;
    const char *open = NULL;
    for (size_t i = len - 1; i-- > a;)
        if (line[i] == '(' && line[i - 1] == ' ') {
            open = line + i;
            break;
        }
    if (!open)
        return H2B_ERR_PARSE;
    const char *sym = line + a + 1;
    /* "ADDR (DSO)": the " (" found is the one right after the address, the symbol is empty */
    size_t symlen = open > sym ? (size_t)(open - 1 - sym) : 0;
    const char *d = open + 1;
    size_t dlen = (size_t)(line + len - 1 - d);
    /* basename, brackets off */
    for (size_t i = dlen; i-- > 0;)
        if (d[i] == '/') {
            dlen -= i + 1;
            d += i + 1;
            break;
        }
    if (dlen >= 2 && d[0] == '[' && d[dlen - 1] == ']')
        d++, dlen -= 2;
    if (dlen == 0)
        d = "unknown", dlen = 7;
    *dso = strndup(d, dlen);
    if (symlen == 0 || (symlen == 9 && memcmp(sym, "[unknown]", 9) == 0)) {
        /* perf had no symbol: name the frame after its DSO */
        size_t n = dlen + 3;
        *name = malloc(n);
        if (*name)
            snprintf(*name, n, "[%.*s]", (int)dlen, d);
    } else {
        *name = strndup(sym, symlen);
    }
    if (!*name || !*dso) {
        free(*name);
        free(*dso);
        return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

int h2b_prof_parse_script(struct h2b_prof *p, const char *text, size_t len, const char *file,
                          struct h2b_diag *diag)
{
    struct sample s = {0};
    int rc = H2B_OK, line = 0;
    const char *end = text + len;
    for (const char *q = text; q < end && rc == H2B_OK;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        size_t n = nl ? (size_t)(nl - q) : (size_t)(end - q);
        line++;
        size_t blank = 0;
        while (blank < n && (q[blank] == ' ' || q[blank] == '\t' || q[blank] == '\r'))
            blank++;
        if (blank == n) {
            rc = flush_sample(p, &s);
        } else if (blank == 0) {
            /* a sample's header line: comm, tid, period */
            if ((rc = flush_sample(p, &s)) == H2B_OK)
                s.open = true;
        } else if (!s.open) {
            h2b_diag_at(diag, file, line, 1, "expected a sample header line before its frames");
            rc = H2B_ERR_PARSE;
        } else {
            char *name, *dso;
            if ((rc = parse_frame(q, n, &name, &dso))) {
                if (rc == H2B_ERR_PARSE)
                    h2b_diag_at(diag, file, line, (int)blank + 1,
                                "expected a frame 'ADDRESS SYMBOL (DSO)'");
                break;
            }
            /* a run of unnamed frames in one DSO is one frame */
            bool same = s.n > 0 && name[0] == '[' && strcmp(s.names[s.n - 1], name) == 0 &&
                        strcmp(s.dsos[s.n - 1], dso) == 0;
            if (same || s.n >= H2B_PROF_MAX_DEPTH) {
                s.dropped += !same;
                free(name);
                free(dso);
            } else {
                s.names[s.n] = name;
                s.dsos[s.n] = dso;
                s.n++;
            }
        }
        q = nl ? nl + 1 : end;
    }
    if (rc == H2B_OK)
        rc = flush_sample(p, &s);
    for (size_t i = 0; i < s.n; i++) {
        free(s.names[i]);
        free(s.dsos[i]);
    }
    if (rc == H2B_ERR_RANGE)
        h2b_diag_at(diag, file, line, 0, "the profile has more than %u frames or stacks",
                    H2B_PROF_MAX_FRAMES);
    else if (rc == H2B_ERR_NOMEM)
        h2b_diag_at(diag, file, line, 0, "out of memory");
    return rc;
}

/* ---- folded files ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int h2b_prof_write_folded(const struct h2b_prof *p, const char *path, struct h2b_diag *diag)
{
    char **lines = calloc(p->nstacks ? p->nstacks : 1, sizeof(*lines));
    struct h2b_buf line = {0}, all = {0};
    int rc = H2B_ERR_NOMEM;
    if (!lines)
        goto out;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct h2b__prof_stack *s = &p->stacks[i];
        for (uint32_t k = 0; k < s->len; k++) {
            const struct h2b__prof_frame *f = &p->frames[p->ids[s->off + k]];
            h2b_buf_printf(&line, "%s%s [%s]", k ? ";" : "", f->name, f->dso);
        }
        h2b_buf_printf(&line, " %llu\n", (unsigned long long)s->count);
        if (h2b_buf_finish(&line, &lines[i]))
            goto out;
    }
    /* sorted, as FlameGraph's folded files are: diffs of two files stay readable */
    qsort(lines, p->nstacks, sizeof(*lines), cmp_str);
    for (size_t i = 0; i < p->nstacks; i++)
        h2b_buf_append(&all, lines[i], strlen(lines[i]));
    char *text = NULL;
    if (h2b_buf_finish(&all, &text))
        goto out;
    rc = h2b_file_write_atomic(path, text, strlen(text), diag);
    free(text);
out:
    if (rc == H2B_ERR_NOMEM)
        h2b_diag_at(diag, path, 0, 0, "out of memory writing the folded stacks");
    if (lines)
        for (size_t i = 0; i < p->nstacks; i++)
            free(lines[i]);
    free(lines);
    h2b_buf_free(&line);
    h2b_buf_free(&all);
    return rc;
}

/* One folded line (NUL-terminated, no newline) into p. */
static int fold_line(struct h2b_prof *p, char *s, const char *path, int line, struct h2b_diag *diag)
{
    char *sp = strrchr(s, ' ');
    if (!sp || sp == s || !sp[1]) {
        h2b_diag_at(diag, path, line, 1, "expected 'FRAME;FRAME;... COUNT'");
        return H2B_ERR_PARSE;
    }
    char *endp;
    errno = 0;
    unsigned long long count = strtoull(sp + 1, &endp, 10);
    if (*endp || errno || sp[1] < '0' || sp[1] > '9' || count == 0) {
        h2b_diag_at(diag, path, line, (int)(sp - s) + 2, "expected a sample count above 0");
        return H2B_ERR_PARSE;
    }
    *sp = '\0';
    const char *names[H2B_PROF_MAX_DEPTH], *dsos[H2B_PROF_MAX_DEPTH];
    size_t n = 0;
    for (char *f = s; f;) {
        char *semi = strchr(f, ';');
        if (semi)
            *semi = '\0';
        if (!*f) {
            h2b_diag_at(diag, path, line, (int)(f - s) + 1, "empty frame");
            return H2B_ERR_PARSE;
        }
        const char *dso = "unknown";
        size_t flen = strlen(f);
        char *br = NULL;
        if (flen > 3 && f[flen - 1] == ']')
            for (char *q = f + flen - 2; q > f; q--)
                if (q[0] == '[' && q[-1] == ' ') {
                    br = q;
                    break;
                }
        if (br) {
            br[-1] = '\0';
            f[flen - 1] = '\0';
            dso = br + 1;
        }
        if (n == H2B_PROF_MAX_DEPTH) /* keep the leaf-most frames */
            memmove(names, names + 1, sizeof(names[0]) * (n - 1)),
                memmove(dsos, dsos + 1, sizeof(dsos[0]) * (n - 1)), n--;
        names[n] = f;
        dsos[n] = dso;
        n++;
        f = semi ? semi + 1 : NULL;
    }
    if (count > H2B_PROF_MAX_SAMPLES - p->samples) {
        h2b_diag_at(diag, path, line, (int)(sp - s) + 2,
                    "the sample total passes 2^53 (%llu more on top of %llu)", count,
                    (unsigned long long)p->samples);
        return H2B_ERR_PARSE;
    }
    int rc = h2b_prof_add(p, names, dsos, n, count);
    if (rc == H2B_ERR_RANGE)
        h2b_diag_at(diag, path, line, 1, "more than %u frames or stacks", H2B_PROF_MAX_FRAMES);
    return rc;
}

/* Folded stacks text[0, len) (NUL-terminated, cut into lines in place) into p. */
static int parse_folded(struct h2b_prof *p, char *text, size_t len, const char *path,
                        struct h2b_diag *diag)
{
    if (memchr(text, '\0', len)) {
        h2b_diag_at(diag, path, 0, 0, "not a text file (NUL byte)");
        return H2B_ERR_PARSE;
    }
    int rc = H2B_OK, line = 0;
    for (char *q = text; *q && rc == H2B_OK;) {
        char *nl = strchr(q, '\n');
        if (nl)
            *nl = '\0';
        line++;
        size_t n = strlen(q);
        if (n && q[n - 1] == '\r')
            q[--n] = '\0';
        if (n)
            rc = fold_line(p, q, path, line, diag);
        q = nl ? nl + 1 : q + n;
    }
    return rc;
}

/* The file at path (at most H2B_PROF_MAX_TEXT bytes) into p: perf script's text, or folded
 * stacks when folded. */
static int read_profile(struct h2b_prof *p, const char *path, bool folded, struct h2b_diag *diag)
{
    char *text;
    size_t len;
    int rc = h2b_fs_read_file(path, H2B_PROF_MAX_TEXT, &text, &len, diag);
    if (rc)
        return rc;
    rc = folded ? parse_folded(p, text, len, path, diag)
                : h2b_prof_parse_script(p, text, len, path, diag);
    free(text);
    return rc;
}

int h2b_prof_read_script(struct h2b_prof *p, const char *path, struct h2b_diag *diag)
{
    return read_profile(p, path, false, diag);
}

int h2b_prof_read_folded(struct h2b_prof *p, const char *path, struct h2b_diag *diag)
{
    return read_profile(p, path, true, diag);
}

/* ---- summary ---- */

struct frame_stat {
    uint64_t self, total;
    uint32_t id;
};

/* self and total samples of every frame (total counted once per stack) */
static struct frame_stat *frame_stats(const struct h2b_prof *p)
{
    struct frame_stat *st = calloc(p->nframes ? p->nframes : 1, sizeof(*st));
    size_t *seen = calloc(p->nframes ? p->nframes : 1, sizeof(*seen));
    if (!st || !seen) {
        free(st);
        free(seen);
        return NULL;
    }
    for (size_t i = 0; i < p->nframes; i++)
        st[i].id = (uint32_t)i;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct h2b__prof_stack *s = &p->stacks[i];
        for (uint32_t k = 0; k < s->len; k++) {
            uint32_t id = p->ids[s->off + k];
            if (seen[id] != i + 1) {
                seen[id] = i + 1;
                st[id].total += s->count;
            }
        }
        st[p->ids[s->off + s->len - 1]].self += s->count;
    }
    free(seen);
    return st;
}

double h2b_prof_total_pct(const struct h2b_prof *p, const char *name)
{
    if (p->samples == 0)
        return 0;
    uint64_t total = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct h2b__prof_stack *s = &p->stacks[i];
        for (uint32_t k = 0; k < s->len; k++)
            if (strcmp(p->frames[p->ids[s->off + k]].name, name) == 0) {
                total += s->count;
                break;
            }
    }
    return 100.0 * (double)total / (double)p->samples;
}

static const struct h2b_prof *sort_prof; /* qsort has no context argument */

static int cmp_stat(const void *a, const void *b)
{
    const struct frame_stat *x = a, *y = b;
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return strcmp(sort_prof->frames[x->id].name, sort_prof->frames[y->id].name);
}

static double pct(uint64_t part, uint64_t whole)
{
    /* two decimals are what a reader uses; rounding here keeps the JSON short */
    return whole ? (double)(int64_t)(10000.0 * (double)part / (double)whole + 0.5) / 100.0 : 0.0;
}

int h2b_prof_summary(const struct h2b_prof *p, size_t top_n, struct h2b_results_profile *out)
{
    struct h2b_results_profile sum;
    h2b_model_init(&h2b_results_profile_model, &sum);
    struct frame_stat *st = frame_stats(p);
    int rc = H2B_ERR_NOMEM;
    if (!st)
        goto out;
    /* the split's members in enum h2b_prof_dso's order */
    double *split[H2B_PROF_NDSO] = {&sum.dso_pct.kernel, &sum.dso_pct.nghttp2, &sum.dso_pct.tls,
                                    &sum.dso_pct.libc,   &sum.dso_pct.own,     &sum.dso_pct.other};
    uint64_t by_class[H2B_PROF_NDSO] = {0};
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct h2b__prof_stack *s = &p->stacks[i];
        by_class[p->frames[p->ids[s->off + s->len - 1]].cls] += s->count;
    }
    sum.base.present = true;
    sum.samples = (double)p->samples;
    sum.dso_pct.base.present = true;
    for (int c = 0; c < H2B_PROF_NDSO; c++)
        *split[c] = pct(by_class[c], p->samples);
    sort_prof = p;
    qsort(st, p->nframes, sizeof(*st), cmp_stat);
    sum.top.v = malloc(1); /* an empty array, not null, when no symbol has a self share */
    if (!sum.top.v)
        goto out;
    for (size_t i = 0; i < p->nframes && i < top_n && st[i].self > 0; i++) {
        const struct h2b__prof_frame *f = &p->frames[st[i].id];
        struct h2b_results_symbol *e;
        if (h2b_model_array_push(&h2b_results_symbol_model, &sum.top, (void **)&e) ||
            h2b_model_set_string(&e->symbol, f->name) || h2b_model_set_string(&e->dso, f->dso) ||
            h2b_model_set_string(&e->class_, dso_names[f->cls]))
            goto out;
        e->base.present = true;
        e->self_pct = pct(st[i].self, p->samples);
        e->total_pct = pct(st[i].total, p->samples);
    }
    *out = sum;
    h2b_model_init(&h2b_results_profile_model, &sum);
    rc = H2B_OK;
out:
    free(st);
    h2b_model_free(&h2b_results_profile_model, &sum);
    return rc;
}

int h2b_prof_summary_json(const struct h2b_prof *p, size_t top_n, json_t **out)
{
    struct h2b_results_profile sum;
    int rc = h2b_prof_summary(p, top_n, &sum);
    if (rc == H2B_OK) {
        rc = h2b_model_to_json(&h2b_results_profile_model, &sum, out);
        h2b_model_free(&h2b_results_profile_model, &sum);
    }
    return rc;
}
