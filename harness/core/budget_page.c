/*
 * budget_page.c - the runner's side of the budget page: create it, snapshot it, wait for it to
 * settle, and tell a statically linked target from one that ignored the preload.
 *
 * Snapshots are copies taken with atomic loads; the page is never reset, so a reader needs no
 * cooperation from the target and two readers cannot disturb each other. Settling exists
 * because "the client has every response" happens before "the server finished the request":
 * after its last write a server still frees the stream and reads once more to get EAGAIN.
 */
#include "core/budget_page.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct h2b_budget_reader {
    struct h2b_budget_page *page;
};

int h2b_budget_page_create(const char *path, struct h2b_budget_reader **out)
{
    struct h2b_budget_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return H2B_ERR_NOMEM;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(r);
        return H2B_ERR_IO;
    }
    void *m = MAP_FAILED;
    if (ftruncate(fd, H2B_BUDGET_PAGE_SIZE) == 0)
        m = mmap(NULL, H2B_BUDGET_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        free(r);
        return H2B_ERR_IO;
    }
    r->page = m;
    memset(r->page, 0, H2B_BUDGET_PAGE_SIZE);
    r->page->version = H2B_BUDGET_VERSION;
    snprintf(r->page->alloc_why, sizeof(r->page->alloc_why),
             "the preload was never loaded into the target");
    __atomic_store_n(&r->page->magic, H2B_BUDGET_MAGIC, __ATOMIC_RELEASE);
    *out = r;
    return H2B_OK;
}

void h2b_budget_page_del(struct h2b_budget_reader *r)
{
    if (!r)
        return;
    munmap(r->page, H2B_BUDGET_PAGE_SIZE);
    free(r);
}

void h2b_budget_page_read(const struct h2b_budget_reader *r, struct h2b_budget_counts *out)
{
    const struct h2b_budget_counts *c = &r->page->c;
    out->allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED);
    out->frees = __atomic_load_n(&c->frees, __ATOMIC_RELAXED);
    out->bytes = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    out->reads = __atomic_load_n(&c->reads, __ATOMIC_RELAXED);
    out->reads_data = __atomic_load_n(&c->reads_data, __ATOMIC_RELAXED);
    out->writes = __atomic_load_n(&c->writes, __ATOMIC_RELAXED);
    out->read_bytes = __atomic_load_n(&c->read_bytes, __ATOMIC_RELAXED);
    out->write_bytes = __atomic_load_n(&c->write_bytes, __ATOMIC_RELAXED);
}

void h2b_budget_page_status(const struct h2b_budget_reader *r, uint32_t *alloc_source,
                            uint32_t *io_source, int32_t *pid, struct h2b_diag *diag)
{
    *alloc_source = __atomic_load_n(&r->page->alloc_source, __ATOMIC_ACQUIRE);
    *io_source = __atomic_load_n(&r->page->io_source, __ATOMIC_ACQUIRE);
    *pid = __atomic_load_n(&r->page->pid, __ATOMIC_ACQUIRE);
    /* The target wrote the reason; it may be anything, so bound it to its field. */
    h2b_diag_at(diag, NULL, 0, 0, "%.*s", (int)sizeof(r->page->alloc_why), r->page->alloc_why);
}

bool h2b_budget_page_settle(const struct h2b_budget_reader *r, uint64_t stable_ns, uint64_t max_ns,
                            struct h2b_budget_counts *out)
{
    uint64_t start = h2b_clock_now_ns(), since = start;
    h2b_budget_page_read(r, out);
    for (;;) {
        h2b_clock_sleep_ns(stable_ns / 5 ? stable_ns / 5 : 1);
        struct h2b_budget_counts now;
        h2b_budget_page_read(r, &now);
        uint64_t t = h2b_clock_now_ns();
        if (memcmp(&now, out, sizeof(now)) != 0) {
            *out = now;
            since = t;
        } else if (t - since >= stable_ns) {
            return true;
        }
        if (t - start >= max_ns)
            return false;
    }
}

bool h2b_budget_is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr eh;
    bool is_static = false;
    if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 256) {
        is_static = true;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            off_t at = (off_t)eh.e_phoff + (off_t)i * (off_t)sizeof(ph);
            if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph) || ph.p_type == PT_INTERP) {
                is_static = false;
                break;
            }
        }
    }
    close(fd);
    return is_static;
}
