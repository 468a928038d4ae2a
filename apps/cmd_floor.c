/*
 * cmd_floor.c - `h2bench floor-serve`: parse options, run the kernel's floor (servers/floor).
 */
#include "commands.h"
#include "core/cli.h"
#include "core/error.h"
#include "floor/floor.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench floor-serve --request-bytes N --response-bytes M [options]\n\n"
            "The kernel's floor: a raw-TCP server, one thread, one loop (epoll or io_uring).\n"
            "Every N bytes a connection sends (any content) are answered with M bytes in one\n"
            "write. Driven by `h2bench load --raw N:M` with the bytes an HTTP/2 request and its\n"
            "response take, it shows what the kernel's TCP work alone costs (the scenario\n"
            "target type \"floor\").\n"
            "Prints 'listening on http://HOST:PORT' when ready; SIGTERM or SIGINT closes every\n"
            "connection and exits 0.\n\n"
            "options:\n"
            "  --host HOST             address to bind (default 127.0.0.1)\n"
            "  --port N                port, 0 = ephemeral (default 0)\n"
            "  --request-bytes N       bytes of one request, 1..%u (required)\n"
            "  --response-bytes M      bytes of one response, 1..%u (required)\n"
            "  --max-connections N     open at once; more are closed (default 4096)\n"
            "  --io epoll|uring        epoll readiness with recv/send (the default), or io_uring\n"
            "                          (multishot accept and receive into provided buffers, one\n"
            "                          send per answer, one submit per loop turn); uring falls\n"
            "                          back to epoll, with one line on stderr, when io_uring is\n"
            "                          refused, and prints 'io: ...' before the ready line\n"
            "  --help                  this text\n",
            H2B_FLOOR_MSG_MAX, H2B_FLOOR_MSG_MAX);
}

enum { O_HOST = 256, O_PORT, O_REQ, O_RESP, O_MAX_CONNS, O_IO, O_HELP };

static const struct option options[] = {
    {"host", required_argument, NULL, O_HOST},
    {"port", required_argument, NULL, O_PORT},
    {"request-bytes", required_argument, NULL, O_REQ},
    {"response-bytes", required_argument, NULL, O_RESP},
    {"max-connections", required_argument, NULL, O_MAX_CONNS},
    {"io", required_argument, NULL, O_IO},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

int h2b_cmd_floor(int argc, char **argv)
{
    struct h2b_floor_config cfg = {
        .host = "127.0.0.1", .max_connections = 4096, .ready = stdout, .notice = stderr};
    uint64_t v = 0;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        int rc = H2B_OK;
        switch (opt) {
        case O_HOST:
            cfg.host = optarg;
            break;
        case O_PORT:
            rc = h2b_cli_parse_u64(optarg, 0, 65535, &v);
            cfg.port = (uint16_t)v;
            break;
        case O_REQ:
            rc = h2b_cli_parse_u64(optarg, 1, H2B_FLOOR_MSG_MAX, &v);
            cfg.request_bytes = (uint32_t)v;
            break;
        case O_RESP:
            rc = h2b_cli_parse_u64(optarg, 1, H2B_FLOOR_MSG_MAX, &v);
            cfg.response_bytes = (uint32_t)v;
            break;
        case O_MAX_CONNS:
            rc = h2b_cli_parse_u64(optarg, 1, 1000000, &v);
            cfg.max_connections = (uint32_t)v;
            break;
        case O_IO:
            if (strcmp(optarg, "epoll") == 0 || strcmp(optarg, "uring") == 0)
                cfg.uring = optarg[0] == 'u';
            else
                rc = H2B_ERR_INVAL;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("floor-serve", argv[optind - 1], options);
        }
        if (rc != H2B_OK) {
            fprintf(stderr, "h2bench floor-serve: invalid --%s '%s': %s\n",
                    options[opt - O_HOST].name, optarg, h2b_strerror(rc));
            return H2B_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "h2bench floor-serve: unexpected argument '%s'\n", argv[optind]);
        return H2B_EXIT_USAGE;
    }
    if (cfg.request_bytes == 0 || cfg.response_bytes == 0) {
        fprintf(stderr, "h2bench floor-serve: --request-bytes and --response-bytes are required\n");
        return H2B_EXIT_USAGE;
    }
    struct h2b_diag diag = {0};
    int rc = h2b_floor_serve(&cfg, &diag);
    if (rc != H2B_OK) {
        fprintf(stderr, "h2bench floor-serve: %s\n", diag.message);
        return H2B_EXIT_RUNTIME;
    }
    return H2B_EXIT_OK;
}
