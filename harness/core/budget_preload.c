/*
 * budget_preload.c - h2bench-budget.so: counts a server's allocations and socket calls for the
 * per-request budgets, injected with LD_PRELOAD into a process we did not build.
 *
 * What it interposes: the whole malloc family (malloc, free, calloc, realloc, reallocarray,
 * memalign, aligned_alloc, posix_memalign, valloc, pvalloc, malloc_usable_size) and C++'s
 * operator new/delete, each forwarded to the next definition (dlsym RTLD_NEXT): the process's
 * own allocator, glibc's or jemalloc (nghttpd links it), so a block always goes back to the
 * allocator that made it; and the read family (read, readv, recv,
 * recvfrom, recvmsg, recvmmsg and the _FORTIFY_SOURCE __read_chk, __recv_chk, __recvfrom_chk)
 * and the write family (write, writev, send, sendto, sendmsg, sendmmsg, sendfile, sendfile64),
 * forwarded to the next definition found with dlsym(RTLD_NEXT) at load time. Each call adds to
 * the shared page of budget_page.h; the runner reads it between the two measured phases.
 *
 * Counting is process-wide (every thread, and forked workers, which inherit the MAP_SHARED
 * page) with relaxed atomic adds: a server's budget is the sum over its threads, and the cost
 * is one locked add per call, which the allocation/syscall pass pays but the timed and the
 * instruction passes never see (they run without the preload).
 *
 * Honesty checks, reported through the page instead of a silent 0:
 *  - at load time the library asks the dynamic linker what "malloc" resolves to; if it is not
 *    this library (the executable defines its own allocator, or another preload came first),
 *    alloc_why names the object that won. h2bench's own interposer then claims the page itself
 *    (alloc_source INTERPOSER); anything else stays NONE and the runner reports null;
 *  - a statically linked target never loads the library at all: the page keeps pid 0.
 *
 * Rejected: forwarding to glibc's __libc_malloc as alloc.c does (no bootstrap arena needed,
 * but a process that links jemalloc then frees glibc blocks into jemalloc: nghttpd aborted with
 * "free(): invalid pointer"); the /proc/PID/io syscr/syscw counters (they count every read and
 * write, of files and pipes too, and nothing about allocations); ptrace/strace (slow, and it
 * perturbs the timing of the very requests being counted); counting only sockets with an fstat per
 * call (a syscall per counted call; servers do not read files per request on this path, and if one
 * does, that read is part of what a request costs it).
 */
#undef _FORTIFY_SOURCE /* our definitions of read & co. must not meet glibc's inline wrappers */
#include "core/budget_page.h"
#include "core/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* The fortified entry points, declared by glibc only under _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
                       socklen_t *addrlen);

static struct h2b_budget_page *page; /* NULL until attached (or when not measuring) */

#define PAGE() __builtin_expect(page != NULL, 0)

/* Calls made inside our operator new/delete: the allocator they forward to may call malloc,
 * which must not count a second time. Initial-exec: the library is loaded at start-up. */
static __thread int nested __attribute__((tls_model("initial-exec")));

/* ---- the allocator: count, then forward to the next definition ---- */

/* The process's own allocator (glibc's, or jemalloc that nghttpd links, ...): found with
 * dlsym(RTLD_NEXT) on first use, so memory is always handed out and taken back by the same
 * allocator. dlsym itself may allocate before the table is filled: those few blocks come from
 * a static bootstrap arena and are never freed. */
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*memalign)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable_size)(void *);
} real;

/* dlsym returns void *; going through uintptr_t is how POSIX gets a function pointer out. */
#define NEXT(name) ((uintptr_t)dlsym(RTLD_NEXT, name))

static _Alignas(64) unsigned char boot[65536];
static size_t boot_used;
static int resolving;

static bool in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof(boot);
}

/* 16-byte aligned blocks with their size in the 16 bytes before them. */
static void *boot_alloc(size_t size)
{
    size_t need = 16 + ((size + 15) & ~(size_t)15);
    size_t at = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    if (at + need > sizeof(boot))
        return NULL;
    *(size_t *)(boot + at) = size;
    return boot + at + 16;
}

static void resolve_alloc(void)
{
    if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
        return; /* dlsym re-entered us: the caller falls back to the bootstrap arena */
    real.free = (void (*)(void *))NEXT("free");
    real.calloc = (void *(*)(size_t, size_t))NEXT("calloc");
    real.realloc = (void *(*)(void *, size_t))NEXT("realloc");
    real.memalign = (void *(*)(size_t, size_t))NEXT("memalign");
    real.posix_memalign = (int (*)(void **, size_t, size_t))NEXT("posix_memalign");
    real.aligned_alloc = (void *(*)(size_t, size_t))NEXT("aligned_alloc");
    real.valloc = (void *(*)(size_t))NEXT("valloc");
    real.pvalloc = (void *(*)(size_t))NEXT("pvalloc");
    real.usable_size = (size_t(*)(void *))NEXT("malloc_usable_size");
    void *(*m)(size_t) = (void *(*)(size_t))NEXT("malloc");
    __atomic_store_n(&real.malloc, m, __ATOMIC_RELEASE);
    __atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
}

static bool alloc_ready(void)
{
    if (__builtin_expect(__atomic_load_n(&real.malloc, __ATOMIC_ACQUIRE) != NULL, 1))
        return true;
    resolve_alloc();
    return __atomic_load_n(&real.malloc, __ATOMIC_ACQUIRE) != NULL;
}

static void count_alloc(const void *p, size_t size)
{
    if (p != NULL && PAGE() && !nested) {
        h2b__budget_add(&page->c.allocs, 1);
        h2b__budget_add(&page->c.bytes, size);
    }
}

static void count_free(const void *p)
{
    if (p != NULL && PAGE() && !nested)
        h2b__budget_add(&page->c.frees, 1);
}

void *malloc(size_t size)
{
    if (!alloc_ready())
        return boot_alloc(size);
    void *p = real.malloc(size);
    count_alloc(p, size);
    return p;
}

void free(void *ptr)
{
    if (ptr == NULL || in_boot(ptr))
        return;
    if (!alloc_ready())
        return; /* cannot happen: only the arena hands out memory before resolution */
    count_free(ptr);
    real.free(ptr);
}

void *calloc(size_t nmemb, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(nmemb, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!alloc_ready() || !real.calloc)
        return boot_alloc(total); /* static storage is zeroed */
    void *p = real.calloc(nmemb, size);
    count_alloc(p, total);
    return p;
}

void *realloc(void *ptr, size_t size)
{
    if (in_boot(ptr)) {
        size_t old = *(size_t *)((unsigned char *)ptr - 16);
        void *p = malloc(size);
        if (p)
            memcpy(p, ptr, old < size ? old : size);
        return p;
    }
    if (!alloc_ready())
        return boot_alloc(size);
    void *p = real.realloc(ptr, size);
    /* Same semantics as alloc.h: a new block of size plus a free of the old one; a failure
     * counts nothing; realloc(ptr, 0) returning NULL freed ptr. */
    if (p != NULL || (ptr != NULL && size == 0)) {
        count_free(ptr);
        count_alloc(p, size);
    }
    return p;
}

H2B_INTERPOSE_REALLOCARRAY()

void *memalign(size_t alignment, size_t size)
{
    if (!alloc_ready() || !real.memalign)
        return alignment <= 16 ? boot_alloc(size) : NULL;
    void *p = real.memalign(alignment, size);
    count_alloc(p, size);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    if (!alloc_ready() || !real.aligned_alloc)
        return memalign(alignment, size);
    void *p = real.aligned_alloc(alignment, size);
    count_alloc(p, size);
    return p;
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
    if (!alloc_ready() || !real.posix_memalign) {
        void *p = memalign(alignment, size);
        if (!p)
            return ENOMEM;
        *memptr = p;
        return 0;
    }
    int rc = real.posix_memalign(memptr, alignment, size);
    if (rc == 0)
        count_alloc(*memptr, size);
    return rc;
}

void *valloc(size_t size)
{
    if (!alloc_ready() || !real.valloc)
        return NULL;
    void *p = real.valloc(size);
    count_alloc(p, size);
    return p;
}

void *pvalloc(size_t size)
{
    if (!alloc_ready() || !real.pvalloc)
        return NULL;
    void *p = real.pvalloc(size);
    count_alloc(p, size);
    return p;
}

size_t malloc_usable_size(void *ptr)
{
    if (ptr == NULL)
        return 0;
    if (in_boot(ptr))
        return *(size_t *)((unsigned char *)ptr - 16);
    return alloc_ready() && real.usable_size ? real.usable_size(ptr) : 0;
}

/* ---- C++ operator new and delete ----
 * A C++ server's allocations mostly arrive here, and an allocator linked beside libstdc++
 * (jemalloc's C++ build) defines them without going through malloc: interpose them too, count
 * each as one allocation (or free), and mark the call nested so that libstdc++'s own versions,
 * which call malloc, are not counted twice. Each forwards to the next definition. */

typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_al_fn)(void *, size_t);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);

#define DEFINE_NEW(sym, args, call, size)                                                          \
    void *sym args;                                                                                \
    void *sym args                                                                                 \
    {                                                                                              \
        static void *next_fn;                                                                      \
        if (!next_fn)                                                                              \
            next_fn = dlsym(RTLD_NEXT, #sym);                                                      \
        nested++;                                                                                  \
        void *p = call;                                                                            \
        nested--;                                                                                  \
        count_alloc(p, size);                                                                      \
        return p;                                                                                  \
    }

#define DEFINE_DEL(sym, args, call)                                                                \
    void sym args;                                                                                 \
    void sym args                                                                                  \
    {                                                                                              \
        static void *next_fn;                                                                      \
        if (!next_fn)                                                                              \
            next_fn = dlsym(RTLD_NEXT, #sym);                                                      \
        count_free(p);                                                                             \
        nested++;                                                                                  \
        call;                                                                                      \
        nested--;                                                                                  \
    }

/* std::nothrow_t and std::align_val_t as the C ABI sees them: a reference and a size_t. */
DEFINE_NEW(_Znwm, (size_t n), ((new_fn)(uintptr_t)next_fn)(n), n)
DEFINE_NEW(_Znam, (size_t n), ((new_fn)(uintptr_t)next_fn)(n), n)
DEFINE_NEW(_ZnwmRKSt9nothrow_t, (size_t n, const void *nt),
           ((void *(*)(size_t, const void *))(uintptr_t)next_fn)(n, nt), n)
DEFINE_NEW(_ZnamRKSt9nothrow_t, (size_t n, const void *nt),
           ((void *(*)(size_t, const void *))(uintptr_t)next_fn)(n, nt), n)
DEFINE_NEW(_ZnwmSt11align_val_t, (size_t n, size_t al), ((new_al_fn)(uintptr_t)next_fn)(n, al), n)
DEFINE_NEW(_ZnamSt11align_val_t, (size_t n, size_t al), ((new_al_fn)(uintptr_t)next_fn)(n, al), n)
DEFINE_DEL(_ZdlPv, (void *p), ((del_fn)(uintptr_t)next_fn)(p))
DEFINE_DEL(_ZdaPv, (void *p), ((del_fn)(uintptr_t)next_fn)(p))
DEFINE_DEL(_ZdlPvm, (void *p, size_t n), ((del_sz_fn)(uintptr_t)next_fn)(p, n))
DEFINE_DEL(_ZdaPvm, (void *p, size_t n), ((del_sz_fn)(uintptr_t)next_fn)(p, n))
DEFINE_DEL(_ZdlPvRKSt9nothrow_t, (void *p, const void *nt),
           ((void (*)(void *, const void *))(uintptr_t)next_fn)(p, nt))
DEFINE_DEL(_ZdaPvRKSt9nothrow_t, (void *p, const void *nt),
           ((void (*)(void *, const void *))(uintptr_t)next_fn)(p, nt))
DEFINE_DEL(_ZdlPvSt11align_val_t, (void *p, size_t al), ((del_al_fn)(uintptr_t)next_fn)(p, al))
DEFINE_DEL(_ZdaPvSt11align_val_t, (void *p, size_t al), ((del_al_fn)(uintptr_t)next_fn)(p, al))
DEFINE_DEL(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t al),
           ((del_sz_al_fn)(uintptr_t)next_fn)(p, n, al))
DEFINE_DEL(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t al),
           ((del_sz_al_fn)(uintptr_t)next_fn)(p, n, al))

/* ---- the socket calls ---- */

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
typedef int (*recvmmsg_fn)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*recv_chk_fn)(int, void *, size_t, size_t, int);
typedef ssize_t (*recvfrom_chk_fn)(int, void *, size_t, size_t, int, struct sockaddr *,
                                   socklen_t *);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*sendmmsg_fn)(int, struct mmsghdr *, unsigned int, int);
typedef ssize_t (*sendfile_fn)(int, int, off_t *, size_t);
typedef ssize_t (*sendfile64_fn)(int, int, off64_t *, size_t);

static struct {
    read_fn read;
    readv_fn readv;
    recv_fn recv;
    recvfrom_fn recvfrom;
    recvmsg_fn recvmsg;
    recvmmsg_fn recvmmsg;
    read_chk_fn read_chk;
    recv_chk_fn recv_chk;
    recvfrom_chk_fn recvfrom_chk;
    write_fn write;
    writev_fn writev;
    send_fn send;
    sendto_fn sendto;
    sendmsg_fn sendmsg;
    sendmmsg_fn sendmmsg;
    sendfile_fn sendfile;
    sendfile64_fn sendfile64;
} next;

static void resolve_next(void)
{
    next.read = (read_fn)NEXT("read");
    next.readv = (readv_fn)NEXT("readv");
    next.recv = (recv_fn)NEXT("recv");
    next.recvfrom = (recvfrom_fn)NEXT("recvfrom");
    next.recvmsg = (recvmsg_fn)NEXT("recvmsg");
    next.recvmmsg = (recvmmsg_fn)NEXT("recvmmsg");
    next.read_chk = (read_chk_fn)NEXT("__read_chk");
    next.recv_chk = (recv_chk_fn)NEXT("__recv_chk");
    next.recvfrom_chk = (recvfrom_chk_fn)NEXT("__recvfrom_chk");
    next.write = (write_fn)NEXT("write");
    next.writev = (writev_fn)NEXT("writev");
    next.send = (send_fn)NEXT("send");
    next.sendto = (sendto_fn)NEXT("sendto");
    next.sendmsg = (sendmsg_fn)NEXT("sendmsg");
    next.sendmmsg = (sendmmsg_fn)NEXT("sendmmsg");
    next.sendfile = (sendfile_fn)NEXT("sendfile");
    next.sendfile64 = (sendfile64_fn)NEXT("sendfile64");
}

/* A call made before the constructor resolved the table (another library's constructor):
 * resolve now. dlsym may allocate, which is safe: malloc here never depends on dlsym. */
#define READY(fn) (__builtin_expect(next.fn == NULL, 0) ? resolve_next() : (void)0)

static ssize_t counted_read(ssize_t r)
{
    if (PAGE()) {
        int saved = errno; /* the atomics cannot touch errno; this documents that they must not */
        h2b__budget_add(&page->c.reads, 1);
        if (r > 0) {
            h2b__budget_add(&page->c.reads_data, 1);
            h2b__budget_add(&page->c.read_bytes, (uint64_t)r);
        }
        errno = saved;
    }
    return r;
}

static ssize_t counted_write(ssize_t r)
{
    if (PAGE()) {
        h2b__budget_add(&page->c.writes, 1);
        if (r > 0)
            h2b__budget_add(&page->c.write_bytes, (uint64_t)r);
    }
    return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
    READY(read);
    return counted_read(next.read(fd, buf, n));
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    READY(read_chk);
    return counted_read(next.read_chk(fd, buf, n, buflen));
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    READY(readv);
    return counted_read(next.readv(fd, iov, iovcnt));
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    READY(recv);
    return counted_read(next.recv(fd, buf, n, flags));
}

ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    READY(recv_chk);
    return counted_read(next.recv_chk(fd, buf, n, buflen, flags));
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *addrlen)
{
    READY(recvfrom);
    return counted_read(next.recvfrom(fd, buf, n, flags, addr, addrlen));
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
                       socklen_t *addrlen)
{
    READY(recvfrom_chk);
    return counted_read(next.recvfrom_chk(fd, buf, n, buflen, flags, addr, addrlen));
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    READY(recvmsg);
    return counted_read(next.recvmsg(fd, msg, flags));
}

int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, struct timespec *tmo)
{
    READY(recvmmsg);
    int r = next.recvmmsg(fd, vec, vlen, flags, tmo);
    ssize_t bytes = 0;
    for (int i = 0; i < r; i++)
        bytes += (ssize_t)vec[i].msg_len;
    counted_read(r > 0 ? (bytes > 0 ? bytes : 1) : r);
    return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    READY(write);
    return counted_write(next.write(fd, buf, n));
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    READY(writev);
    return counted_write(next.writev(fd, iov, iovcnt));
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    READY(send);
    return counted_write(next.send(fd, buf, n, flags));
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
               socklen_t addrlen)
{
    READY(sendto);
    return counted_write(next.sendto(fd, buf, n, flags, addr, addrlen));
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    READY(sendmsg);
    return counted_write(next.sendmsg(fd, msg, flags));
}

int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
    READY(sendmmsg);
    int r = next.sendmmsg(fd, vec, vlen, flags);
    ssize_t bytes = 0;
    for (int i = 0; i < r; i++)
        bytes += (ssize_t)vec[i].msg_len;
    counted_write(r > 0 ? bytes : r);
    return r;
}

ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
    READY(sendfile);
    return counted_write(next.sendfile(out_fd, in_fd, offset, count));
}

ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    READY(sendfile64);
    return counted_write(next.sendfile64(out_fd, in_fd, offset, count));
}

/* ---- start-up ---- */

__attribute__((constructor(101))) static void attach_at_startup(void)
{
    resolve_next();
    (void)alloc_ready();
    struct h2b_budget_page *p = h2b__budget_page_attach();
    if (p == NULL)
        return;
    /* Which object does the process-wide "malloc" live in: this library or another? */
    void *winner = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info, self;
    bool known = winner && dladdr(winner, &info) != 0;
    if (known && dladdr((void *)(uintptr_t)attach_at_startup, &self) != 0 &&
        info.dli_fbase == self.dli_fbase) {
        p->alloc_source = H2B_BUDGET_ALLOC_PRELOAD;
    } else if (p->alloc_source == H2B_BUDGET_ALLOC_NONE) {
        const char *who =
            known && info.dli_fname && info.dli_fname[0] ? info.dli_fname : "an unknown object";
        snprintf(p->alloc_why, sizeof(p->alloc_why),
                 "the target's malloc resolves to %s, not to the preload (its own allocator "
                 "ignores LD_PRELOAD)",
                 who);
    }
    __atomic_store_n(&p->io_source, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&page, p, __ATOMIC_RELEASE);
}
