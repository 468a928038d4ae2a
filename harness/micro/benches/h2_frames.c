/*
 * h2_frames.c - h2/frame-read-validate-discard: a mix of connection-level frames read and
 * validated by the session, answered where the protocol says so, otherwise discarded.
 *
 * One op feeds SETTINGS (one parameter), PING, WINDOW_UPDATE (connection, +1), an unknown
 * extension frame (type 0xfa, 32 bytes, which a peer must ignore) and a second PING, then
 * drains the answers: SETTINGS ACK and two PING ACKs, exactly 43 bytes (checked every op).
 */
#include "h2bench/micro.h"
#include "micro/benches/h2conn.h"

#include <stdlib.h>
#include <string.h>

struct frames {
    struct h2c_conn conn;
    uint8_t mix[128];
    size_t len;
};

static int frames_setup(struct h2b_micro_state *st)
{
    struct frames *f = calloc(1, sizeof *f);
    if (!f || h2c_open(&f->conn, 65535, 0, H2C_BODY_FIXED) != 0) {
        free(f);
        h2b_micro_fail(st, "cannot open the nghttp2 session");
        return -1;
    }
    uint8_t *p = f->mix;
    h2c_frame_header(p, 6, NGHTTP2_SETTINGS, 0, 0);
    const uint8_t setting[6] = {0, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 0, 1, 0, 0};
    memcpy(p + 9, setting, 6);
    p += 15;
    h2c_frame_header(p, 8, NGHTTP2_PING, 0, 0);
    memcpy(p + 9, "h2bench1", 8);
    p += 17;
    h2c_window_update(p, 0, 1);
    p += 13;
    h2c_frame_header(p, 32, 0xfa, 0, 0);
    memset(p + 9, 0x5a, 32);
    p += 41;
    h2c_frame_header(p, 8, NGHTTP2_PING, 0, 0);
    memcpy(p + 9, "h2bench2", 8);
    p += 17;
    f->len = (size_t)(p - f->mix);
    h2b_micro_set_data(st, f);
    return 0;
}

static void frames_teardown(struct h2b_micro_state *st)
{
    struct frames *f = h2b_micro_data(st);
    if (!f)
        return;
    h2c_close(&f->conn);
    free(f);
}

static void frames_run(struct h2b_micro_state *st, uint64_t n)
{
    struct frames *f = h2b_micro_data(st);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t before = f->conn.out_bytes;
        if (h2c_feed(&f->conn, f->mix, f->len) != 0 || h2c_drain(&f->conn) != 0 ||
            f->conn.out_bytes - before != 43) {
            h2b_micro_fail(st, "frame mix: session rejected it or answered %llu bytes",
                           (unsigned long long)(f->conn.out_bytes - before));
            return;
        }
    }
}

H2B_MICRO_BENCH(frames, .name = "h2/frame-read-validate-discard", .fn = frames_run,
                .setup = frames_setup, .teardown = frames_teardown)
