/*
 * fuzz_server_h2c.c - arbitrary bytes as the first bytes of an h2c connection (prior
 * knowledge): the preface check, then whatever frames follow, through the server's real
 * nghttp2 callbacks, routing and guards.
 */
#include "fuzz_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_server_run(NULL, 0, data, size);
    return 0;
}
