/*
 * cmd_serve.c - `h2bench serve`: parse options, run the reference server (servers/h2ref).
 *
 * The shape of every command: serve_parse(argv) -> struct serve_opts (one option at a time in
 * serve_option, then the checks between options), serve_run(opts) -> the exit code.
 */
#include "core/cli.h"
#include "commands.h"
#include "core/cpu.h"
#include "core/error.h"
#include "h2ref/server.h"
#ifdef H2B_HAVE_H3
#include "h3/h3server.h"
#endif

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: h2bench serve [options]\n\n"
        "Run the reference HTTP/2 server (h2c with prior knowledge, or TLS with ALPN h2), with\n"
        "HTTP/1.1 beside it (told from h2c by the first bytes; ALPN http/1.1 over TLS).\n"
        "Prints 'listening on http://HOST:PORT' when ready; SIGTERM or SIGINT shuts it down\n"
        "gracefully (GOAWAY, in-flight streams finish) and exits 0.\n\n"
        "options:\n"
        "  --host HOST             address to bind (default 127.0.0.1)\n"
        "  --port N                port, 0 = ephemeral (default 0)\n"
        "  --threads N             worker threads (default: online CPUs, or CPUs in --cpus)\n"
        "  --cpus LIST             pin worker i to the i-th CPU of LIST (e.g. 0 or 0-3);\n"
        "                          the --h3 thread shares the first one\n"
        "  --max-streams N         SETTINGS_MAX_CONCURRENT_STREAMS (default 256)\n"
        "  --window SIZE           stream receive window, e.g. 1M (default 1M)\n"
        "  --conn-window SIZE      connection receive window (default 16M)\n"
        "  --frame-size SIZE       SETTINGS_MAX_FRAME_SIZE accepted (default 16384)\n"
        "  --header-table-size SIZE  SETTINGS_HEADER_TABLE_SIZE (default 4096)\n"
        "  --max-header-list SIZE  per-request header budget, name+value+32 (default 64K)\n"
        "  --max-connections N     open connections at once; more are refused (default "
        "4096)\n"
        "  --echo-buffer SIZE      /echo bytes held per stream before it is reset\n"
        "                          (default 1M)\n"
        "  --echo-conn-buffer SIZE /echo bytes held per connection (default 4M; HTTP/3:\n"
        "                          an /echo past it is answered 503)\n"
        "  --memory-budget SIZE    body and output buffers held server-wide, HTTP/3's /echo\n"
        "                          included; beyond it new streams get REFUSED_STREAM\n"
        "                          (HTTP/3 /echo: 503) (default 1G, 0: none)\n"
        "  --max-connections-per-ip N  open connections per client address (default 0: no\n"
        "                          limit; loopback benchmarks open thousands from one)\n"
        "  --idle-timeout DUR      close connections idle this long, e.g. 30s (default 60s)\n"
        "  --slow-timeout DUR      close clients making no progress (default 10s)\n"
        "  --drain-timeout DUR     on shutdown, wait this long for streams (default 3s)\n"
        "  --docroot DIR           also serve files from DIR\n"
        "  --max-open-files N      docroot files open at once server-wide (default: 1024, less\n"
        "                          if the descriptor limit is short); 32 per connection;\n"
        "                          requests beyond them get 503\n"
        "  --engine NAME           HTTP/2 engine: fast (our own framing and libnghttp2's HPACK\n"
        "                          decoder, the default) or nghttp2 (libnghttp2's session)\n"
        "  --tls                   TLS 1.2/1.3, ALPN h2 or http/1.1 (self-signed unless --cert)\n"
        "  --cert FILE --key FILE  PEM certificate chain and key for --tls\n"
        "  --h3                    also HTTP/3 (QUIC) on the same port number over UDP;\n"
        "                          implies --tls\n"
        "  --h3-no-retry           accept QUIC connections without a Retry round trip\n"
        "                          (default: every new connection proves its address)\n"
        "  --io epoll|uring        how workers move bytes: epoll readiness with recv/send (the\n"
        "                          default), or io_uring (multishot accept and receive into\n"
        "                          provided buffers, sends batched per loop turn; TLS\n"
        "                          connections poll through the ring); uring falls back to\n"
        "                          epoll, with one line on stderr, when io_uring is refused\n"
        "  --help                  this text\n\n"
        "endpoints: / and /hello, /bytes/N, POST /sink, POST /echo, /status/NNN, "
        "/delay/MS,\n"
        "           /stats (JSON counters), docroot files, anything else 404.\n");
}

enum {
    O_HOST = 256,
    O_PORT,
    O_THREADS,
    O_CPUS,
    O_MAX_STREAMS,
    O_WINDOW,
    O_CONN_WINDOW,
    O_FRAME_SIZE,
    O_HTS,
    O_MAX_HDR,
    O_MAX_CONNS,
    O_MAX_CONNS_IP,
    O_MAX_FILES,
    O_ECHO_BUF,
    O_ECHO_CONN_BUF,
    O_MEM_BUDGET,
    O_IDLE,
    O_SLOW,
    O_DRAIN,
    O_DOCROOT,
    O_TLS,
    O_CERT,
    O_KEY,
    O_HELP,
    O_H3,
    O_H3_NO_RETRY,
    O_ENGINE,
    O_IO
};

static const struct option options[] = {
    {"host", required_argument, NULL, O_HOST},
    {"port", required_argument, NULL, O_PORT},
    {"threads", required_argument, NULL, O_THREADS},
    {"cpus", required_argument, NULL, O_CPUS},
    {"max-streams", required_argument, NULL, O_MAX_STREAMS},
    {"window", required_argument, NULL, O_WINDOW},
    {"conn-window", required_argument, NULL, O_CONN_WINDOW},
    {"frame-size", required_argument, NULL, O_FRAME_SIZE},
    {"header-table-size", required_argument, NULL, O_HTS},
    {"max-header-list", required_argument, NULL, O_MAX_HDR},
    {"max-connections", required_argument, NULL, O_MAX_CONNS},
    {"max-connections-per-ip", required_argument, NULL, O_MAX_CONNS_IP},
    {"max-open-files", required_argument, NULL, O_MAX_FILES},
    {"echo-buffer", required_argument, NULL, O_ECHO_BUF},
    {"echo-conn-buffer", required_argument, NULL, O_ECHO_CONN_BUF},
    {"memory-budget", required_argument, NULL, O_MEM_BUDGET},
    {"idle-timeout", required_argument, NULL, O_IDLE},
    {"slow-timeout", required_argument, NULL, O_SLOW},
    {"drain-timeout", required_argument, NULL, O_DRAIN},
    {"docroot", required_argument, NULL, O_DOCROOT},
    {"tls", no_argument, NULL, O_TLS},
    {"cert", required_argument, NULL, O_CERT},
    {"key", required_argument, NULL, O_KEY},
    {"help", no_argument, NULL, O_HELP},
    {"h3", no_argument, NULL, O_H3},
    {"h3-no-retry", no_argument, NULL, O_H3_NO_RETRY},
    {"engine", required_argument, NULL, O_ENGINE},
    {"io", required_argument, NULL, O_IO},
    {NULL, 0, NULL, 0},
};

static int bad(const char *opt, const char *val, int rc)
{
    fprintf(stderr, "h2bench serve: invalid --%s '%s': %s\n\n", opt, val, h2b_strerror(rc));
    usage(stderr);
    return H2B_EXIT_USAGE;
}

/* Parses a 32-bit size option into *out. */
static int size32(const char *val, uint64_t min, uint64_t max, uint32_t *out)
{
    uint64_t v;
    int rc = h2b_cli_parse_size(val, min, max, &v);
    if (rc == H2B_OK)
        *out = (uint32_t)v;
    return rc;
}

/* What the command line asks for: the server's configuration and the HTTP/3 listener beside it. */
struct serve_opts {
    struct h2b_server_config cfg;
    bool threads_set;
    bool h3, h3_retry;
};

/* Applies one option to o. Returns H2B_OK, a parse error for arg, or 1 for --help. */
static int serve_option(struct serve_opts *o, int opt, const char *arg)
{
    struct h2b_server_config *cfg = &o->cfg;
    uint64_t v = 0;
    int rc = H2B_OK;
    switch (opt) {
    case O_HOST:
        cfg->host = arg;
        break;
    case O_PORT:
        rc = h2b_cli_parse_u64(arg, 0, 65535, &v);
        cfg->port = (uint16_t)v;
        break;
    case O_THREADS:
        rc = h2b_cli_parse_u64(arg, 1, 1024, &v);
        cfg->threads = (int)v;
        o->threads_set = true;
        break;
    case O_CPUS:
        rc = h2b_cpu_parse_list(arg, &cfg->cpus);
        if (rc == H2B_OK && CPU_COUNT(&cfg->cpus) == 0)
            rc = H2B_ERR_RANGE;
        cfg->pin = true;
        break;
    case O_MAX_STREAMS:
        rc = h2b_cli_parse_u64(arg, 1, 0x7fffffff, &v);
        cfg->conn.max_streams = (uint32_t)v;
        break;
    case O_WINDOW:
        rc = size32(arg, 1, 0x7fffffff, &cfg->conn.window);
        break;
    case O_CONN_WINDOW:
        rc = size32(arg, 65535, 0x7fffffff, &cfg->conn.conn_window);
        break;
    case O_FRAME_SIZE:
        rc = size32(arg, 16384, 16777215, &cfg->conn.frame_size);
        break;
    case O_HTS:
        rc = size32(arg, 0, 0x7fffffff, &cfg->conn.header_table_size);
        break;
    case O_MAX_HDR:
        rc = size32(arg, 1024, 0x7fffffff, &cfg->conn.max_header_list);
        break;
    case O_MAX_CONNS:
        rc = h2b_cli_parse_u64(arg, 1, 1000000, &v);
        cfg->max_connections = (uint32_t)v;
        break;
    case O_MAX_FILES:
        rc = h2b_cli_parse_u64(arg, 1, 1000000, &v);
        cfg->max_open_files = (uint32_t)v;
        break;
    case O_ECHO_BUF:
        rc = h2b_cli_parse_size(arg, 16384, 1ull << 40, &cfg->conn.echo_stream_max);
        break;
    case O_ECHO_CONN_BUF:
        rc = h2b_cli_parse_size(arg, 16384, 1ull << 40, &cfg->conn.echo_conn_max);
        break;
    case O_MEM_BUDGET:
        rc = h2b_cli_parse_size(arg, 0, 1ull << 50, &cfg->conn.memory_budget);
        break;
    case O_MAX_CONNS_IP:
        rc = h2b_cli_parse_u64(arg, 0, 1000000, &v);
        cfg->max_connections_per_ip = (uint32_t)v;
        break;
    case O_IDLE:
        rc = h2b_cli_parse_duration_ns(arg, 1000000, 86400ull * 1000000000, &v);
        cfg->conn.idle_timeout_ns = v;
        break;
    case O_SLOW:
        rc = h2b_cli_parse_duration_ns(arg, 1000000, 86400ull * 1000000000, &v);
        cfg->conn.slow_timeout_ns = v;
        break;
    case O_DRAIN:
        rc = h2b_cli_parse_duration_ns(arg, 0, 3600ull * 1000000000, &v);
        cfg->drain_ns = v;
        break;
    case O_DOCROOT:
        cfg->docroot = arg;
        break;
    case O_TLS:
        cfg->tls = true;
        break;
    case O_CERT:
        cfg->cert_file = arg;
        break;
    case O_KEY:
        cfg->key_file = arg;
        break;
    case O_H3:
        o->h3 = true;
        break;
    case O_H3_NO_RETRY:
        o->h3_retry = false;
        break;
    case O_ENGINE:
        if (strcmp(arg, "nghttp2") == 0)
            cfg->conn.engine = H2B_ENGINE_NGHTTP2;
        else if (strcmp(arg, "fast") == 0)
            cfg->conn.engine = H2B_ENGINE_FAST;
        else
            rc = H2B_ERR_INVAL;
        break;
    case O_IO:
        if (strcmp(arg, "epoll") == 0)
            cfg->io = H2B_IO_EPOLL;
        else if (strcmp(arg, "uring") == 0)
            cfg->io = H2B_IO_URING;
        else
            rc = H2B_ERR_INVAL;
        break;
    default: /* 'h', O_HELP */
        return 1;
    }
    return rc;
}

/* Parses argv into o. Returns -1 to go on and serve, or the exit code (help, bad input). */
static int serve_parse(int argc, char **argv, struct serve_opts *o)
{
    h2b_server_config_defaults(&o->cfg);
    o->cfg.ready = stdout;
    o->cfg.notice = stderr;
    o->threads_set = o->h3 = false;
    o->h3_retry = true;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt != 'h' && (opt < O_HOST || opt > O_IO))
            return h2b_cmd_bad_option("serve", argv[optind - 1], options);
        int rc = serve_option(o, opt, optarg);
        if (rc == 1) {
            usage(stdout);
            return H2B_EXIT_OK;
        }
        if (rc != H2B_OK)
            return bad(options[opt - O_HOST].name, optarg, rc);
    }
    if (optind < argc) {
        fprintf(stderr, "h2bench serve: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    struct h2b_server_config *cfg = &o->cfg;
    if (o->h3)
        cfg->tls = true;
    if ((cfg->cert_file || cfg->key_file) && !cfg->tls) {
        fprintf(stderr, "h2bench serve: --cert and --key need --tls\n");
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_input("serve", "--cert", cfg->cert_file) ||
        h2b_cmd_check_input("serve", "--key", cfg->key_file))
        return H2B_EXIT_USAGE;
    if (cfg->pin && !o->threads_set)
        cfg->threads = CPU_COUNT(&cfg->cpus);
    return -1;
}

#ifdef H2B_HAVE_H3
/* Starts the HTTP/3 listener of o on its port (cfg's, which a port 0 sets), sharing one
 * --memory-budget counter with the TCP workers. Returns an exit code, H2B_EXIT_OK on success. */
static int serve_h3_start(struct serve_opts *o, _Atomic uint64_t *mem_used,
                          struct h2b_h3_server **h3s)
{
    struct h2b_server_config *cfg = &o->cfg;
    cfg->conn.memory_used = mem_used;
    struct h2b_h3_server_config hc;
    h2b_h3_server_config_defaults(&hc);
    hc.host = cfg->host;
    hc.port = cfg->port;
    hc.cert_file = cfg->cert_file;
    hc.key_file = cfg->key_file;
    hc.max_connections = cfg->max_connections;
    hc.max_streams = cfg->conn.max_streams;
    hc.idle_timeout_ns = cfg->conn.idle_timeout_ns;
    hc.max_body = cfg->conn.max_body;
    hc.echo_conn_max = cfg->conn.echo_conn_max;
    hc.memory_budget = cfg->conn.memory_budget;
    hc.memory_used = mem_used;
    hc.drain_ns = cfg->drain_ns;
    hc.retry = o->h3_retry;
    if (cfg->pin)
        hc.cpu = h2b_cpu_nth(&cfg->cpus, 0); /* beside the first worker */
    struct h2b_diag d3 = {0};
    int rc = h2b_h3_server_start(h3s, &hc, &cfg->port, &d3);
    if (rc != H2B_OK) {
        fprintf(stderr, "h2bench serve: --h3: %s\n", d3.message[0] ? d3.message : h2b_strerror(rc));
        return h2b_exit_code(rc);
    }
    return H2B_EXIT_OK;
}
#endif

/* Serves what o asks for until a signal drains it. Returns the exit code. */
static int serve_run(struct serve_opts *o)
{
#ifdef H2B_HAVE_H3
    struct h2b_h3_server *h3s = NULL;
    _Atomic uint64_t mem_used = 0; /* one --memory-budget for TCP's workers and HTTP/3 */
    if (o->h3) {
        int ec = serve_h3_start(o, &mem_used, &h3s);
        if (ec != H2B_EXIT_OK)
            return ec;
    }
#else
    if (o->h3) {
        fprintf(stderr, "h2bench serve: --h3: HTTP/3 is not available in this build "
                        "(configured with -DH2B_H3=OFF)\n");
        return H2B_EXIT_USAGE;
    }
#endif
    struct h2b_diag d = {0};
    int rc = h2b_server_run(&o->cfg, &d);
#ifdef H2B_HAVE_H3
    h2b_h3_server_stop(h3s);
#endif
    if (rc != H2B_OK) {
        fprintf(stderr, "h2bench serve: %s\n", d.message[0] ? d.message : h2b_strerror(rc));
        return h2b_exit_code(rc);
    }
    return H2B_EXIT_OK;
}

int h2b_cmd_serve(int argc, char **argv)
{
    struct serve_opts o;
    int ec = serve_parse(argc, argv, &o);
    return ec >= 0 ? ec : serve_run(&o);
}
