/*
 * budget_server.c - a small h2c server with known per-request costs, for the budget tests.
 *
 * It is the user's "own server" of docs/scenarios.md: started as a command target, measured
 * through the LD_PRELOAD budget library, and its answers are known exactly:
 *   --allocs K        every request mallocs (and frees) K blocks of 777 bytes on top of whatever
 *                     the server and nghttp2 allocate, so K=5 costs exactly 5 allocations and
 *                     3,885 bytes per request more than K=0;
 *   --extra-writes W  every request makes W more write() calls (of 0 bytes) than the one write
 *                     per flush the server otherwise does.
 * Everything else is deliberately plain: one thread, level-triggered epoll, nghttp2_session
 * mem_recv/mem_send into a 64 KiB buffer, one write per flush, GET anything -> 200 "hello\n".
 * SIGTERM ends it cleanly. --exit-at-once and --never-listen make the bad-target tests' servers
 * (a command that exits at once, one that never listens).
 *
 * Rejected: making the knobs allocate through nghttp2 (their count would then depend on
 * nghttp2's version); sleeping in place of a write (it would change nothing countable).
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define OBUF 65536
#define MAX_EVENTS 64

struct conn {
    int fd;
    nghttp2_session *sess;
    uint8_t out[OBUF];
    size_t out_len;
};

static unsigned knob_allocs, knob_writes;
static volatile sig_atomic_t stop;
static void *volatile sink; /* keeps the compiler from eliding the knob's malloc/free pairs */
static const char body[] = "hello\n";

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static ssize_t read_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *arg)
{
    (void)s;
    (void)sid;
    (void)src;
    (void)arg;
    size_t n = sizeof(body) - 1 < len ? sizeof(body) - 1 : len;
    memcpy(buf, body, n);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *arg)
{
    struct conn *c = arg;
    if (f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM) ||
        f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    for (unsigned i = 0; i < knob_allocs; i++) {
        char *p = malloc(777);
        if (p) {
            p[0] = (char)i;
            sink = p;
        }
        free(sink);
    }
    for (unsigned i = 0; i < knob_writes; i++)
        if (write(c->fd, body, 0) < 0)
            break;
    static const nghttp2_nv hdrs[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-length", (uint8_t *)"6", 14, 1, NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider dp = {.read_callback = read_body};
    return nghttp2_submit_response(s, f->hd.stream_id, hdrs, 2, &dp) == 0
               ? 0
               : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static nghttp2_session_callbacks *callbacks;

/* One write per flush: gather everything nghttp2 has into the buffer, then write it. */
static int flush(struct conn *c)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n;
        while (c->out_len < OBUF && (n = nghttp2_session_mem_send(c->sess, &data)) > 0) {
            if ((size_t)n > OBUF - c->out_len)
                return -1; /* our frames are tiny; a bigger one is a bug here */
            memcpy(c->out + c->out_len, data, (size_t)n);
            c->out_len += (size_t)n;
        }
        if (c->out_len == 0)
            return 0;
        ssize_t w = write(c->fd, c->out, c->out_len);
        if (w < 0)
            return errno == EAGAIN ? 0 : -1;
        memmove(c->out, c->out + w, c->out_len - (size_t)w);
        c->out_len -= (size_t)w;
        if (c->out_len > 0)
            return 0;
    }
}

static void conn_close(int ep, struct conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    nghttp2_session_del(c->sess);
    free(c);
}

static void conn_open(int ep, int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct conn *c = calloc(1, sizeof(*c));
    if (!c || nghttp2_session_server_new(&c->sess, callbacks, c) != 0) {
        free(c);
        close(fd);
        return;
    }
    c->fd = fd;
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    nghttp2_submit_settings(c->sess, NGHTTP2_FLAG_NONE, iv, 1);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0 || flush(c) != 0)
        conn_close(ep, c);
}

static void conn_read(int ep, struct conn *c)
{
    uint8_t buf[16384];
    ssize_t n = read(c->fd, buf, sizeof(buf));
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0 || nghttp2_session_mem_recv(c->sess, buf, (size_t)n) < 0 || flush(c) != 0 ||
        (!nghttp2_session_want_read(c->sess) && !nghttp2_session_want_write(c->sess)))
        conn_close(ep, c);
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned port = 0;
    int never_listen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--exit-at-once") == 0) {
            fprintf(stderr, "budget_server: exiting at once, as asked\n");
            return 4;
        } else if (strcmp(a, "--never-listen") == 0) {
            never_listen = 1;
        } else if (v && strcmp(a, "--port") == 0 && parse_uint(v, 65535, &port) == 0) {
            i++;
        } else if (v && strcmp(a, "--allocs") == 0 && parse_uint(v, 1000, &knob_allocs) == 0) {
            i++;
        } else if (v && strcmp(a, "--extra-writes") == 0 &&
                   parse_uint(v, 1000, &knob_writes) == 0) {
            i++;
        } else {
            fprintf(stderr,
                    "usage: budget_server --port P [--allocs K] [--extra-writes W] "
                    "[--never-listen] [--exit-at-once]\n(bad argument '%s')\n",
                    a);
            return 2;
        }
    }
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (never_listen) {
        fprintf(stderr, "budget_server: not listening, as asked\n");
        while (!stop)
            pause();
        return 0;
    }
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 1024) != 0) {
        fprintf(stderr, "budget_server: cannot listen on 127.0.0.1:%u: %s\n", port,
                strerror(errno));
        return 3;
    }
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    fprintf(stderr, "budget_server: listening on 127.0.0.1:%u (allocs %u, extra writes %u)\n", port,
            knob_allocs, knob_writes);
    while (!stop) {
        struct epoll_event evs[MAX_EVENTS];
        int n = epoll_wait(ep, evs, MAX_EVENTS, 1000);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL)
                conn_open(ep, lfd);
            else
                conn_read(ep, evs[i].data.ptr);
        }
    }
    close(lfd);
    close(ep);
    nghttp2_session_callbacks_del(callbacks);
    return 0;
}
