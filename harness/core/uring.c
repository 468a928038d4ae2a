/*
 * uring.c - opening and closing an io_uring with a provided-buffer ring, for both backends
 * (uring.h). Own code over liburing 2.3, which has no io_uring_setup_buf_ring (2.4): the buffer
 * ring is mmap'ed here and registered with io_uring_register_buf_ring.
 */
#include "core/uring.h"

#include "core/error.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

/* Why this kernel cannot run the backends, or NULL: multishot receive needs Linux 6.0. */
static const char *kernel_too_old(void)
{
    struct utsname un;
    unsigned major = 0, minor = 0;
    if (uname(&un) != 0 || sscanf(un.release, "%u.%u", &major, &minor) != 2)
        return NULL; /* unknown: let the ring setup decide */
    return major < 6 ? "multishot receive needs Linux 6.0 or later" : NULL;
}

int h2b_uring_open(struct h2b_uring *u, unsigned sq_entries, unsigned cq_entries, unsigned nbufs,
                   size_t bufsize, unsigned short bgid, bool one_thread, char *why, size_t cap)
{
    const char *env = getenv("H2B_URING_FAIL");
    if (env && strcmp(env, "1") == 0) {
        snprintf(why, cap, "io_uring_queue_init: disabled by H2B_URING_FAIL=1");
        return H2B_ERR_UNSUPPORTED;
    }
    const char *old = kernel_too_old();
    if (old) {
        snprintf(why, cap, "%s", old);
        return H2B_ERR_UNSUPPORTED;
    }
    *u = (struct h2b_uring){
        .nbufs = nbufs, .bufsize = bufsize, .bgid = bgid, .polled = RUNNING_ON_VALGRIND != 0};
    if (u->polled) /* h2b_uring_wait's poll(2): task work deferred to io_uring_enter would not
                    * end it */
        one_thread = false;
    const unsigned base = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN;
    const unsigned one =
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED;
    struct io_uring_params p = {.flags = base | (one_thread ? one : 0), .cq_entries = cq_entries};
    int rc = io_uring_queue_init_params(sq_entries, &u->ring, &p);
    if (rc == -EINVAL && one_thread) { /* before Linux 6.1: no DEFER_TASKRUN */
        p = (struct io_uring_params){.flags = base, .cq_entries = cq_entries};
        rc = io_uring_queue_init_params(sq_entries, &u->ring, &p);
    }
    u->disabled = rc >= 0 && (p.flags & IORING_SETUP_R_DISABLED);
    if (rc < 0) { /* ENOSYS, EPERM (io_uring_disabled, seccomp), EINVAL (old kernel) */
        snprintf(why, cap, "io_uring_queue_init: %s", strerror(-rc));
        return H2B_ERR_UNSUPPORTED;
    }
    int ret = H2B_ERR_UNSUPPORTED;
    if (!(p.features & IORING_FEAT_NODROP) || !(p.features & IORING_FEAT_EXT_ARG) ||
        !(p.features & IORING_FEAT_SUBMIT_STABLE)) {
        snprintf(why, cap,
                 "the kernel's io_uring lacks NODROP, EXT_ARG or SUBMIT_STABLE (Linux 5.11+)");
        goto out_ring;
    }
    size_t brsize = nbufs * sizeof(struct io_uring_buf);
    void *br = mmap(NULL, brsize, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (br == MAP_FAILED) {
        snprintf(why, cap, "mmap of the buffer ring: %s", strerror(errno));
        goto out_ring;
    }
    u->br = br;
    u->bufs = malloc(nbufs * bufsize);
    if (!u->bufs) {
        snprintf(why, cap, "out of memory");
        ret = H2B_ERR_NOMEM;
        goto out_br;
    }
    io_uring_buf_ring_init(u->br);
    struct io_uring_buf_reg reg = {
        .ring_addr = (uint64_t)(uintptr_t)u->br, .ring_entries = nbufs, .bgid = bgid};
    rc = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (rc < 0) {
        snprintf(why, cap, "io_uring_register_buf_ring: %s", strerror(-rc));
        goto out_bufs;
    }
    for (unsigned i = 0; i < nbufs; i++)
        h2b_uring_buf_return(u, i);
    return H2B_OK;
out_bufs:
    free(u->bufs);
out_br:
    munmap(u->br, brsize);
out_ring:
    io_uring_queue_exit(&u->ring);
    return ret;
}

int h2b__uring_wait_polled(struct h2b_uring *u, struct __kernel_timespec *ts)
{
    int rc = io_uring_submit(&u->ring);
    if (rc < 0)
        return rc;
    if (io_uring_cq_ready(&u->ring))
        return 0;
    int ms = -1;
    if (ts) { /* rounded up: never a turn early */
        long long t = ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
        ms = t > INT_MAX ? INT_MAX : (int)t;
    }
    struct pollfd p = {.fd = u->ring.ring_fd, .events = POLLIN};
    int n = poll(&p, 1, ms);
    if (n < 0)
        return -errno;
    return n == 0 ? -ETIME : 0;
}

int h2b_uring_start(struct h2b_uring *u)
{
    if (!u->disabled)
        return H2B_OK;
    /* liburing 2.3 declares io_uring_enable_rings but does not export it */
    if (syscall(__NR_io_uring_register, u->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
        return H2B_ERR_SYS;
    u->disabled = false;
    return H2B_OK;
}

void h2b_uring_close(struct h2b_uring *u)
{
    io_uring_queue_exit(&u->ring); /* cancels and waits for what is in flight */
    munmap(u->br, u->nbufs * sizeof(struct io_uring_buf));
    free(u->bufs);
}
