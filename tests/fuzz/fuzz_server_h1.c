/*
 * fuzz_server_h1.c - arbitrary bytes as the first bytes of a cleartext connection whose protocol
 * the server detects (H2B_PROTO_DETECT, as `h2bench serve` does): anything but the h2c preface
 * goes to the HTTP/1.1 side (servers/h2ref/h1.c) with its parser, routes, chunked bodies,
 * pipelining, limits and timers.
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_server_proto = H2B_PROTO_DETECT;
    fuzz_server_run(NULL, 0, data, size);
    return 0;
}
