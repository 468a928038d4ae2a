/*
 * prof_int.h - the profile's storage, shared by fold.c (building, reading, summarising) and
 * flame.c (drawing). Not installed.
 *
 * Frames are interned (name, DSO basename) pairs; a stack is a run of frame ids, root first, in
 * one id pool; both have open-addressing hash tables (FNV-1a) of index + 1, 0 = empty.
 */
#ifndef H2B_PROF_PROF_INT_H
#define H2B_PROF_PROF_INT_H

#include "prof/prof.h"

#include <stdint.h>

#define H2B__PROF_MAX_IDS (1u << 24) /* frame ids in all stacks together (64 MiB) */

struct h2b__prof_frame {
    char *name;  /* symbol, or "[DSO]" when perf had none */
    char *dso;   /* basename without brackets: "libc.so.6", "kernel.kallsyms", "unknown" */
    uint8_t cls; /* enum h2b_prof_dso */
};

struct h2b__prof_stack {
    uint32_t off, len; /* into ids */
    uint64_t count;
};

struct h2b_prof {
    char *own; /* basename of the profiled executable, or NULL */
    struct h2b__prof_frame *frames;
    size_t nframes, capframes;
    uint32_t *fhash;
    size_t fhash_cap;
    uint32_t *ids;
    size_t nids, capids;
    struct h2b__prof_stack *stacks;
    size_t nstacks, capstacks;
    uint32_t *shash;
    size_t shash_cap;
    uint64_t samples;
};

/* The id of frame (name, dso) in p, or -1 if p has no such frame. */
long h2b__prof_find_frame(const struct h2b_prof *p, const char *name, const char *dso);

#endif
