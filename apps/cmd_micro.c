/*
 * cmd_micro.c - `h2bench micro`: the microbenchmark runner with the built-in HTTP/2 component
 * suite linked in (harness/micro/benches). It is h2b_micro_main itself, the same main a user's
 * benchmark executable gets, so both accept the same options.
 */
#include "commands.h"
#include "h2bench/micro.h"

int h2b_cmd_micro(int argc, char **argv)
{
    return h2b_micro_main(argc, argv);
}
