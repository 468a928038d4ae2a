/*
 * fuzz_server_frames.c - arbitrary bytes as frames after a valid client preface and an empty
 * SETTINGS frame, so the fuzzer spends its time on frame parsing, HPACK, streams, flow control
 * and the flood guards instead of on the preface. Driven through conn.h like every server fuzzer
 * (fuzz_server.h).
 *
 * One source, three targets (tests/fuzz/CMakeLists.txt), told apart by H2B_FUZZ_ENGINE:
 * server_frames (unset: the server's default engine), server_fast (H2B_ENGINE_FAST, the
 * own-framing engine servers/h2ref/h2_fast.c) and server_nghttp2 (H2B_ENGINE_NGHTTP2,
 * h2_nghttp2.c's callbacks over an nghttp2_session). The last two seed with server_frames' inputs
 * plus uploads, trailers, padding and window changes. Rejected: a source per engine (they differed
 * in one line).
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                 "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_server_run(preface, sizeof(preface) - 1, data, size);
    return 0;
}
