/*
 * budget_attach.c - the target's side of the budget page: map it from $H2B_BUDGET_PAGE.
 *
 * Compiled into both the LD_PRELOAD library and h2bench's own interposer (h2bench::alloc),
 * which run inside the measured process, often from a constructor before anything else: so it
 * uses only getenv, open, fstat, mmap and close, never malloc or stdio. The mapping is never
 * unmapped; it lives as long as the process and is inherited across fork.
 */
#include "core/budget_page.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct h2b_budget_page *h2b__budget_page_attach(void)
{
    const char *path = getenv(H2B_BUDGET_ENV);
    if (path == NULL || path[0] == '\0')
        return NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)H2B_BUDGET_PAGE_SIZE)
        m = mmap(NULL, H2B_BUDGET_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    struct h2b_budget_page *p = m;
    if (p->magic != H2B_BUDGET_MAGIC || p->version != H2B_BUDGET_VERSION) {
        munmap(m, H2B_BUDGET_PAGE_SIZE);
        return NULL;
    }
    int32_t none = 0;
    __atomic_compare_exchange_n(&p->pid, &none, (int32_t)getpid(), false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    return p;
}
