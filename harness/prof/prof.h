/*
 * prof.h - CPU profiles of a running process: record with perf, fold the stacks, summarise,
 * draw flame graphs.
 *
 * A profile (struct h2b_prof) is a set of distinct call stacks, root first, each with the number
 * of cpu-clock samples that ended in it. Every frame is a symbol and the DSO it lives in; the DSO
 * falls into one class of the split (kernel, nghttp2, tls, libc, own, other) so that the shares
 * of one profile always add up to 100 %. The "own" class is the profiled program's executable,
 * named when the profile is created.
 *
 * Typical use (a server under load):
 *
 *     struct h2b_prof_rec *rec;
 *     struct h2b_prof_rec_opts ro = {.pid = pid, .max_s = 10, .dir = dir, .name = "cell-3"};
 *     h2b_prof_rec_start(&rec, &ro, &diag);         perf record runs beside the target
 *     ... the measured phase ...
 *     h2b_prof_rec_stop(rec, "h2bench", &prof, &diag);  perf script, parsed and folded
 *     h2b_prof_summary_json(prof, 12, &summary);
 *     h2b_prof_write_folded(prof, "cell-3.folded", &diag);
 *     h2b_prof_flame_svg(prof, "h2ref 100x10", "cell-3.svg", &diag);
 *
 * Bounds: a stack keeps its 256 leaf-most frames; a profile holds at most 1 << 20 distinct frames
 * and 1 << 20 distinct stacks (H2B_ERR_RANGE beyond). Nothing here is thread-safe; one profile
 * is used by one thread at a time. Libraries report through struct h2b_diag, never print.
 */
#ifndef H2B_PROF_PROF_H
#define H2B_PROF_PROF_H

#include "core/json.h"
#include "core/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2B_PROF_MAX_DEPTH 256
#define H2B_PROF_MAX_FRAMES (1u << 20)
#define H2B_PROF_MAX_STACKS (1u << 20)
/* Samples in one profile at most: 2^53, so every count and total is exact as a double (the
 * widths and shares are computed in doubles) and no sum of counts overflows. */
#define H2B_PROF_MAX_SAMPLES (1ull << 53)
#define H2B_PROF_MAX_TEXT (512u << 20) /* largest perf script output or folded file read */

/* The classes of the DSO split, in report order. */
enum h2b_prof_dso {
    H2B_PROF_DSO_KERNEL = 0, /* [kernel.kallsyms] and kernel modules */
    H2B_PROF_DSO_NGHTTP2,    /* libnghttp2 */
    H2B_PROF_DSO_TLS,        /* libssl and libcrypto */
    H2B_PROF_DSO_LIBC,       /* libc, libm, the dynamic loader */
    H2B_PROF_DSO_OWN,        /* the profiled program's executable */
    H2B_PROF_DSO_OTHER,      /* anything else: other libraries, [vdso], unknown */
    H2B_PROF_NDSO
};

/* "kernel", "nghttp2", "tls", "libc", "own", "other" (the JSON keys of the split). */
const char *h2b_prof_dso_name(enum h2b_prof_dso d);

/* The class of a DSO given by its path or basename ("[kernel.kallsyms]", "/usr/lib/.../libc.so.6"),
 * own_exe the profiled program's path or basename (may be NULL). */
enum h2b_prof_dso h2b_prof_dso_class(const char *dso, const char *own_exe);

struct h2b_prof;

/* An empty profile of the program own_exe (path or basename; NULL: nothing is "own").
 * Returns H2B_OK or H2B_ERR_NOMEM; *out untouched on failure. */
int h2b_prof_new(struct h2b_prof **out, const char *own_exe);

/* Frees p (NULL allowed). */
void h2b_prof_del(struct h2b_prof *p);

/* Adds count samples of one stack: names[i] and dsos[i] for frame i, root first (n frames; a
 * deeper stack keeps its leaf-most H2B_PROF_MAX_DEPTH). Names and DSOs are copied; characters
 * the folded format cannot hold (';', control characters) become '?'. n == 0 is an empty stack
 * (H2B_ERR_INVAL). Returns H2B_OK, H2B_ERR_INVAL, H2B_ERR_RANGE (too many frames or stacks,
 * or the total would pass H2B_PROF_MAX_SAMPLES; p is unchanged then) or H2B_ERR_NOMEM. */
int h2b_prof_add(struct h2b_prof *p, const char *const *names, const char *const *dsos, size_t n,
                 uint64_t count);

/* Parses the output of `perf script -F comm,tid,period,ip,sym,dso` (a sample header line, then
 * one "ADDR SYMBOL (DSO)" line per frame, leaf first, a blank line after each sample) and adds
 * every sample as one count. A symbol perf could not name becomes "[DSO-basename]", and runs of
 * such frames in one DSO fold into one. file names the text in diagnostics.
 * Returns H2B_OK, H2B_ERR_PARSE (diag says file:line and what was expected), H2B_ERR_RANGE,
 * H2B_ERR_NOMEM. */
int h2b_prof_parse_script(struct h2b_prof *p, const char *text, size_t len, const char *file,
                          struct h2b_diag *diag);

/* h2b_prof_parse_script on the file at path (at most H2B_PROF_MAX_TEXT bytes). Returns its
 * codes and H2B_ERR_IO. */
int h2b_prof_read_script(struct h2b_prof *p, const char *path, struct h2b_diag *diag);

/* Folded stacks: one line per stack, "FRAME;FRAME;... COUNT", root first, each FRAME
 * "SYMBOL [DSO]" (FlameGraph's folded format with the DSO in brackets). Writing is atomic.
 * Reading adds to p; a malformed line is H2B_ERR_PARSE with diag naming file:line.
 * Returns H2B_OK, H2B_ERR_IO, H2B_ERR_PARSE, H2B_ERR_RANGE or H2B_ERR_NOMEM. */
int h2b_prof_write_folded(const struct h2b_prof *p, const char *path, struct h2b_diag *diag);
int h2b_prof_read_folded(struct h2b_prof *p, const char *path, struct h2b_diag *diag);

/* Samples in the profile. */
uint64_t h2b_prof_samples(const struct h2b_prof *p);

/* Share (0-100) of the samples whose stack contains symbol name anywhere (its total share);
 * 0 when absent or the profile is empty. */
double h2b_prof_total_pct(const struct h2b_prof *p, const char *name);

/* The summary a results cell carries:
 *   {"samples": N, "dso_pct": {"kernel": %, "nghttp2": %, "tls": %, "libc": %, "own": %,
 *    "other": %}, "top": [{"symbol": S, "dso": D, "class": C, "self_pct": %, "total_pct": %}]}
 * dso_pct splits the samples by the class of their leaf frame (it adds up to 100 when there are
 * samples); top holds the top_n symbols by self share (ties by total, then name).
 * h2b_prof_summary fills the core results model's struct (exe, recorded_s, folded and svg
 * null: the caller's); h2b_prof_summary_json is its JSON. Returns H2B_OK or H2B_ERR_NOMEM; *out
 * untouched on failure (h2b_prof_summary: free it with h2b_model_free). */
int h2b_prof_summary(const struct h2b_prof *p, size_t top_n, struct h2b_results_profile *out);
int h2b_prof_summary_json(const struct h2b_prof *p, size_t top_n, json_t **out);

/* Writes a flame graph of p as SVG to path (atomically): frames coloured by DSO class, roots at
 * the bottom, a <title> on every frame (hover), click to zoom and a search box in plain
 * JavaScript inside the SVG; without scripts (an <img> in a markdown viewer) it is a complete
 * static picture with a legend. Every string from the profile is XML-escaped.
 * Returns H2B_OK, H2B_ERR_IO or H2B_ERR_NOMEM. */
int h2b_prof_flame_svg(const struct h2b_prof *p, const char *title, const char *path,
                       struct h2b_diag *diag);

/* A differential flame graph: the shape of b, each frame coloured by the change of its share of
 * the samples from a to b: red where b spends a larger share there, blue where smaller, white
 * where unchanged; the title of every frame gives both shares. Returns as h2b_prof_flame_svg. */
int h2b_prof_diff_svg(const struct h2b_prof *a, const struct h2b_prof *b, const char *title,
                      const char *path, struct h2b_diag *diag);

/* ---- recording ---- */

struct h2b_prof_rec;

struct h2b_prof_rec_opts {
    int pid;          /* the process to record (all its threads) */
    double max_s;     /* perf stops by itself after this long (> 0) */
    const char *dir;  /* where the perf.data and script text go */
    const char *name; /* file name stem inside dir: NAME.perf.data, NAME.perf.txt */
    const char *perf; /* perf program; NULL: $H2B_PERF or "perf" in PATH */
    unsigned freq;    /* samples per second per thread; 0: H2B_PROF_FREQ */
    const void *cpus; /* cpu_set_t * for perf itself; NULL: inherit */
};

#define H2B_PROF_FREQ 499   /* Hz: an odd rate does not beat with 1 ms timers */
#define H2B_PROF_STACK 8192 /* bytes of user stack copied per sample for DWARF unwinding */

/* Can perf record cpu-clock samples of a process here? When not, false and diag (may be NULL)
 * says why (perf missing, perf_event_paranoid too high for this user, perf_event_open not
 * allowed in this container). */
bool h2b_prof_available(const char *perf, struct h2b_diag *diag);

/* Starts `perf record -e cpu-clock -F FREQ --call-graph dwarf,8192 -p PID` for at most max_s.
 * Returns H2B_OK, H2B_ERR_UNSUPPORTED (perf cannot record here; diag says why), H2B_ERR_INVAL,
 * H2B_ERR_SYS or H2B_ERR_NOMEM; *out untouched on failure. */
int h2b_prof_rec_start(struct h2b_prof_rec **out, const struct h2b_prof_rec_opts *o,
                       struct h2b_diag *diag);

/* Stops the recording (SIGINT; perf writes its file), runs `perf script` on it into
 * NAME.perf.txt, parses that into a new profile of own_exe in *out and removes the perf.data
 * (the text and the folded stacks are the artefacts; perf.data is large and needs this
 * machine's binaries). Frees rec in every case. Returns H2B_OK, H2B_ERR_UNSUPPORTED (perf
 * recorded nothing: no samples, perf failed; diag says why), H2B_ERR_PARSE, H2B_ERR_IO,
 * H2B_ERR_SYS or H2B_ERR_NOMEM; *out untouched on failure. */
int h2b_prof_rec_stop(struct h2b_prof_rec *rec, const char *own_exe, struct h2b_prof **out,
                      struct h2b_diag *diag);

/* Stops and discards a recording (NULL allowed). */
void h2b_prof_rec_cancel(struct h2b_prof_rec *rec);

#endif
