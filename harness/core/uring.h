/*
 * uring.h - what the two io_uring backends share (servers/h2ref/io_uring.c under the server,
 * harness/load/uring.c under the load client): opening a ring with a provided-buffer ring for
 * multishot receives, the checks that decide whether this machine can run it at all, the next
 * SQE without dropping one, and giving a receive buffer back. Each backend keeps its own loop,
 * connection states and buffer sizes. Built only with liburing (H2B_HAVE_URING, the h2b_uring
 * library in harness/core/CMakeLists.txt).
 */
#ifndef H2B_CORE_URING_H
#define H2B_CORE_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_uring {
    struct io_uring ring;
    struct io_uring_buf_ring *br; /* the provided-buffer ring of group bgid */
    uint8_t *bufs;                /* nbufs x bufsize, buffer i at bufs + i * bufsize */
    unsigned nbufs;               /* a power of 2 */
    size_t bufsize;
    unsigned short bgid;
    bool disabled; /* opened for one thread: h2b_uring_start enables it there */
    bool polled;   /* under valgrind: h2b_uring_wait sleeps in poll(2) (below) */
};

/* Opens u: a ring of sq_entries SQEs and cq_entries CQEs (IORING_SETUP_CQSIZE, SUBMIT_ALL,
 * COOP_TASKRUN; below, one_thread) whose kernel keeps overflowing completions (IORING_FEAT_NODROP)
 * and takes a wait timeout (EXT_ARG), copies what an SQE points to when it takes the SQE
 * (SUBMIT_STABLE: a sendmsg's msghdr may be reused once submitted), and nbufs receive buffers of
 * bufsize bytes registered as group bgid, all given to the kernel. H2B_OK; H2B_ERR_UNSUPPORTED with
 * why (what refused: H2B_URING_FAIL=1, a kernel before 6.0, io_uring_queue_init's error, a missing
 * feature, the buffer ring), which the backends report as their fallback to epoll; H2B_ERR_NOMEM.
 * On failure nothing is left open.
 */
int h2b_uring_open(struct h2b_uring *u, unsigned sq_entries, unsigned cq_entries, unsigned nbufs,
                   size_t bufsize, unsigned short bgid, bool one_thread, char *why, size_t cap);

/* one_thread: the ring is for the one thread that calls h2b_uring_start, and only it submits
 * (IORING_SETUP_SINGLE_ISSUER, R_DISABLED until then). Its completions' task work then waits
 * until that thread enters the ring for events (DEFER_TASKRUN, Linux 6.1+), where COOP_TASKRUN
 * still ends the thread's other sleeps: a completion during the load client's --coalesce nap
 * interrupted the nanosleep, ran, and restarted it, each time: 38 % of the client's samples at
 * 10 x 10, 18 % with this.
 * A kernel without DEFER_TASKRUN gets the ring without it (and h2b_uring_start does nothing).
 * H2B_OK, or the kernel's refusal as H2B_ERR_SYS (errno set). */
int h2b_uring_start(struct h2b_uring *u);

int h2b__uring_wait_polled(struct h2b_uring *u, struct __kernel_timespec *ts);

/* One loop turn's submit and wait: submits everything queued and sleeps until a completion is
 * ready or ts (NULL: no limit) has passed. Returns io_uring_submit_and_wait_timeout's result
 * (-ETIME, -EINTR and -EBUSY are a turn with nothing new, not errors).
 * Under valgrind (Debian 12's 3.19), io_uring_enter is not a call that may block: a thread
 * waiting in it holds valgrind's one lock, and every other thread of the process waits with it
 * (the server's main thread never printed its ready line, a test program hangs the same way). So
 * there the ring is opened without DEFER_TASKRUN (its task work would not end a poll) and a turn
 * submits, then sleeps in poll(2) on the ring's fd: the budgets' callgrind pass counts that wait
 * (a submit, a poll and the checks around them, in place of one submit-and-wait), the same in
 * every run, and nothing else of the loop differs. */
static inline int h2b_uring_wait(struct h2b_uring *u, struct __kernel_timespec *ts)
{
    if (__builtin_expect(u->polled, 0))
        return h2b__uring_wait_polled(u, ts);
    struct io_uring_cqe *first;
    return io_uring_submit_and_wait_timeout(&u->ring, &first, 1, ts, NULL);
}

/* Tears the ring down (cancelling and waiting for what is in flight) and frees the buffers. */
void h2b_uring_close(struct h2b_uring *u);

/* The next SQE; a full queue is submitted first, never dropped. A kernel that refuses to submit
 * while completions overflowed (-EBUSY) gets them flushed into the CQ ring first (both loops
 * consume each batch of completions before handling it, so there is room). */
static inline struct io_uring_sqe *h2b_uring_sqe(struct h2b_uring *u)
{
    struct io_uring_sqe *sqe;
    while ((sqe = io_uring_get_sqe(&u->ring)) == NULL) {
        if (io_uring_submit(&u->ring) == -EBUSY)
            io_uring_get_events(&u->ring);
    }
    return sqe;
}

/* Buffer bid's bytes. */
static inline uint8_t *h2b_uring_buf(const struct h2b_uring *u, unsigned bid)
{
    return u->bufs + (size_t)bid * u->bufsize;
}

/* Gives buffer bid back to the kernel. */
static inline void h2b_uring_buf_return(struct h2b_uring *u, unsigned bid)
{
    io_uring_buf_ring_add(u->br, h2b_uring_buf(u, bid), (unsigned)u->bufsize, (unsigned short)bid,
                          io_uring_buf_ring_mask(u->nbufs), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

#endif
