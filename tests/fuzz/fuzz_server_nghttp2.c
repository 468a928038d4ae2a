/*
 * fuzz_server_nghttp2.c - arbitrary bytes as frames after a valid client preface and an empty
 * SETTINGS frame, into the nghttp2 engine (`--engine nghttp2`: conn.c's callbacks over an
 * nghttp2_session); fuzz_server_h2c and fuzz_server_frames run the default engine
 * (servers/h2ref/h2frame.c). Driven through conn.h like every server fuzzer (fuzz_server.h);
 * the seeds are those of fuzz_server_frames plus uploads, trailers, padding and window changes.
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                 "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_server_engine = H2B_ENGINE_NGHTTP2;
    fuzz_server_run(preface, sizeof(preface) - 1, data, size);
    return 0;
}
