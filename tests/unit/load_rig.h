/*
 * load_rig.h - what the unit tests that run a load worker thread by hand share
 * (test_load_engines.c, test_h3_engine.c): joining it with a guard against a hang.
 */
#ifndef H2B_TEST_LOAD_RIG_H
#define H2B_TEST_LOAD_RIG_H

#include "core/error.h"
#include "load/worker.h"
#include "test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* Waits up to guard_s for worker thread th (running w) to end by itself. One that has not is a
 * failed check: *stop is set, unstick(arg) (if given) kicks it off a socket, and it is joined.
 * Either way its end must be clean: no error, nothing in flight. */
static inline void load_rig_join(pthread_t th, const struct h2b__load_worker *w, atomic_int *stop,
                                 int guard_s, void (*unstick)(void *), void *arg)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += guard_s;
    if (pthread_timedjoin_np(th, NULL, &until) != 0) {
        CHECK(!"the worker ends by itself");
        atomic_store(stop, 1);
        if (unstick)
            unstick(arg);
        pthread_join(th, NULL);
    }
    CHECK_EQ_INT(w->rc, H2B_OK);
    CHECK_EQ_U64(w->inflight, 0);
}

#endif
