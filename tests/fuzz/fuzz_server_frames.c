/*
 * fuzz_server_frames.c - arbitrary bytes as frames after a valid client preface and an empty
 * SETTINGS frame, so the fuzzer spends its time on frame parsing, HPACK, streams, flow control
 * and the flood guards instead of on the preface.
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
