/*
 * uring.h - the load client's io_uring backend (load --io uring): one ring per worker in place of
 * its epoll set, and one struct h2b__load_uio per TCP connect (uring.c).
 *
 * The engines keep their byte handling; what differs is who moves the bytes. On epoll the
 * worker reports readiness (engine on_event) and the engine calls read/send. On io_uring a
 * cleartext connection that is set up (h2b__load_uio_stream) receives with a multishot receive
 * into the worker's provided-buffer ring, and each completion is handed to the engine as bytes
 * (engine on_input); the engine's sends are copied into the connection's send buffer and go out
 * as one IORING_OP_SEND in flight per connection, submitted with the next loop turn's
 * submit-and-wait. Connects, TLS handshakes and TLS connections stay readiness-based: a oneshot
 * IORING_OP_POLL_ADD feeds the engine's on_event as epoll's events would, and the engine calls
 * connect's SO_ERROR, SSL_do_handshake, SSL_read and SSL_write itself.
 *
 * Not installed: the public surface is load.h. Every function runs on the worker's thread except
 * _new and _del (the thread that sets the worker up and frees it, before and after its run).
 */
#ifndef H2B_LOAD_URING_H
#define H2B_LOAD_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct h2b__load_worker;
struct h2b__load_ring; /* one worker's ring (w->ring; NULL on epoll) */
struct h2b__load_uio;  /* one connect's operations; the engine's connection holds it */

/* Sets up w->ring. H2B_OK, or an error with a one-line reason in why[0..cap) (io_uring refused or
 * missing, an old kernel, a build without liburing); w->ring stays NULL. H2B_URING_FAIL=1 in the
 * environment forces the failure (tests). */
int h2b__load_ring_new(struct h2b__load_worker *w, char *why, size_t cap);

/* Frees w->ring (NULL: nothing), after every connection was closed (the engine's free): what is
 * still in flight is cancelled and its connection state freed. */
void h2b__load_ring_del(struct h2b__load_worker *w);

/* The worker's ring is its thread's alone (h2b_uring_start): called first thing in that thread.
 * H2B_OK or H2B_ERR_SYS. */
int h2b__load_ring_start(struct h2b__load_worker *w);

/* Submits what the turn queued and waits at most ns (the turn's deadline) for a completion.
 * Returns the completions ready (0: the deadline came), or a negative errno when the ring
 * failed. */
int h2b__load_ring_wait(struct h2b__load_worker *w, uint64_t ns);

/* Submits what the turn queued and returns how many connections have input ready (receive and
 * poll completions; a send's completion is not counted), without waiting (--coalesce's look
 * before and after a nap); a negative errno when the ring failed. */
int h2b__load_ring_peek(struct h2b__load_worker *w);

/* Hands the completions to the engine (on_input, on_event), after w->now was read; then re-arms
 * the receives that ran out of buffers and frees the connections whose last operation ended. */
void h2b__load_ring_dispatch(struct h2b__load_worker *w);

/* A connect on fd began for the engine's connection conn: waits for EPOLLOUT through a poll.
 * H2B_OK or H2B_ERR_NOMEM (*out untouched). */
int h2b__load_uio_open(struct h2b__load_worker *w, void *conn, int fd, struct h2b__load_uio **out);

/* The events the engine waits for, as it would register them with epoll (level-triggered): a
 * poll while the connection is not streaming; once it is, only EPOLLOUT counts (delivered when
 * the send buffer has drained). */
void h2b__load_uio_watch(struct h2b__load_uio *u, uint32_t events);

/* The cleartext connection is set up: from now on its input comes as on_input bytes. */
void h2b__load_uio_stream(struct h2b__load_uio *u);

/* Takes up to len bytes of p into the connection's send buffer (a send goes out with the next
 * turn): the bytes taken, 0 when the buffer is full (a send is in flight; on_event(EPOLLOUT)
 * follows once it has drained, if watched), or H2B__LOAD_EIO when an earlier send failed. */
ssize_t h2b__load_uio_send(struct h2b__load_uio *u, const uint8_t *p, size_t len);

/* The connection is closed (*u NULL: nothing): its operations are cancelled; its socket (which
 * u owns from now on), its state and the send buffer the kernel may still read go once the last
 * one has completed. *u becomes NULL. */
void h2b__load_uio_close(struct h2b__load_uio **u);

#endif
