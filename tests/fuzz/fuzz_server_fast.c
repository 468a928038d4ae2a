/*
 * fuzz_server_fast.c - arbitrary bytes as frames after a valid client preface and an empty
 * SETTINGS frame, into the own-framing HTTP/2 engine (servers/h2ref/h2frame.c, `--engine
 * fast`): its frame reader, stream states, flow control, header checks and guards, with
 * libnghttp2's HPACK decoder, named explicitly (it is also the default that fuzz_server_h2c
 * and fuzz_server_frames run). Driven through conn.h like every server fuzzer (fuzz_server.h);
 * the seeds are those of fuzz_server_frames plus uploads, trailers, padding and window changes.
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                 "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_server_engine = H2B_ENGINE_FAST;
    fuzz_server_run(preface, sizeof(preface) - 1, data, size);
    return 0;
}
