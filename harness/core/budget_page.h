/*
 * budget_page.h - the shared counter page through which a target process reports its
 * allocations and socket calls to the runner (per-request budgets, docs/scenarios.md).
 *
 * The runner creates a one-page file (h2b_budget_page_create) and names it in the target's
 * environment as H2B_BUDGET_PAGE. Inside the target, the counting preload (h2bench-budget.so,
 * injected with LD_PRELOAD) and h2bench's own malloc interposer (alloc.c, for executables that
 * link it and so shadow the preload's malloc) map the same file MAP_SHARED and add to its
 * counters with relaxed atomic adds, from every thread and every forked child. The runner reads
 * them whenever it likes: a snapshot is a copy, nothing is ever reset, so a budget is the
 * difference of two snapshots taken while the target is idle.
 *
 * The layout is a contract between separately built binaries: change it only together with
 * H2B_BUDGET_VERSION.
 */
#ifndef H2B_CORE_BUDGET_PAGE_H
#define H2B_CORE_BUDGET_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_diag; /* core/json.h */

#define H2B_BUDGET_ENV "H2B_BUDGET_PAGE"
#define H2B_BUDGET_MAGIC 0x4732424755444232ULL /* "2BDUGB2G", any fixed value */
#define H2B_BUDGET_VERSION 1u
#define H2B_BUDGET_PAGE_SIZE 4096u

/* Who counts the allocations (alloc_source). */
enum h2b_budget_alloc_source {
    H2B_BUDGET_ALLOC_NONE = 0,       /* nobody: see alloc_why */
    H2B_BUDGET_ALLOC_PRELOAD = 1,    /* the LD_PRELOAD library's malloc family */
    H2B_BUDGET_ALLOC_INTERPOSER = 2, /* the executable's own h2bench interposer (alloc.c) */
};

/* The counters, in the order they sit in the page. */
struct h2b_budget_counts {
    uint64_t allocs;      /* successful malloc/calloc/realloc/aligned allocations */
    uint64_t frees;       /* frees of non-NULL blocks (realloc's old block included) */
    uint64_t bytes;       /* bytes requested by those allocations */
    uint64_t reads;       /* read/readv/recv/recvfrom/recvmsg/recvmmsg calls (EAGAIN included) */
    uint64_t reads_data;  /* of those, calls that returned data (> 0) */
    uint64_t writes;      /* write/writev/send/sendto/sendmsg/sendmmsg/sendfile calls */
    uint64_t read_bytes;  /* bytes those reads returned */
    uint64_t write_bytes; /* bytes those writes accepted */
};

struct h2b_budget_page {
    uint64_t magic;        /* H2B_BUDGET_MAGIC, written by the runner */
    uint32_t version;      /* H2B_BUDGET_VERSION */
    uint32_t alloc_source; /* enum h2b_budget_alloc_source */
    uint32_t io_source;    /* 1 once the preload counts the socket calls */
    int32_t pid;           /* the first process that attached */
    char alloc_why[512];   /* alloc_source NONE: why (e.g. "malloc resolves to /usr/bin/x") */
    uint64_t pad[8];       /* counters start on their own cache line */
    struct h2b_budget_counts c;
};

_Static_assert(sizeof(struct h2b_budget_page) <= H2B_BUDGET_PAGE_SIZE, "one page");

/* Inside a target: maps the page named by $H2B_BUDGET_PAGE, or returns NULL (no variable, not
 * a budget page, or the wrong version). Async-signal-unsafe, allocation-free (open, mmap,
 * close), so it can run from a constructor before the allocator is ready. */
struct h2b_budget_page *h2b__budget_page_attach(void);

/* Adds n to a counter of the page (relaxed atomic; any thread, any process). */
static inline void h2b__budget_add(uint64_t *counter, uint64_t n)
{
    __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* ---- the runner's side ---- */

struct h2b_budget_reader;

/* Creates (truncating) the page file at path, initialised and empty. *out untouched on failure.
 * Returns H2B_OK, H2B_ERR_IO or H2B_ERR_NOMEM. */
int h2b_budget_page_create(const char *path, struct h2b_budget_reader **out);

/* Unmaps and frees (the file stays for inspection); NULL is fine. */
void h2b_budget_page_del(struct h2b_budget_reader *r);

/* Copies the counters now (each read atomically). */
void h2b_budget_page_read(const struct h2b_budget_reader *r, struct h2b_budget_counts *out);

/* What the target reported about itself: *alloc_source, *io_source, the attaching pid (0: the
 * preload never loaded) and, in diag's message, the reason allocations are not counted ("" when
 * the target gave none; the target's text, bounded to its field). */
void h2b_budget_page_status(const struct h2b_budget_reader *r, uint32_t *alloc_source,
                            uint32_t *io_source, int32_t *pid, struct h2b_diag *diag);

/* Reads the snapshot until it stays the same for stable_ns (the target finished the work the
 * last response triggered: frees, the read that returns EAGAIN), at most max_ns. Returns true
 * if it settled; *out holds the last snapshot either way. */
bool h2b_budget_page_settle(const struct h2b_budget_reader *r, uint64_t stable_ns, uint64_t max_ns,
                            struct h2b_budget_counts *out);

/* True if path is an ELF executable without a program interpreter (statically linked: no
 * dynamic loader, so LD_PRELOAD is never honoured). False for anything else or on error. */
bool h2b_budget_is_static_elf(const char *path);

#endif
