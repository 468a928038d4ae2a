/*
 * config.c - `h2bench load` options: h2load's flags with h2load's meaning, plus ours.
 *
 * getopt_long gives h2load's spellings for free (-n1000, -n 1000, --requests=1000). Values go
 * through the strict core parsers, so "-c 10x" is an error instead of 10. The -d body and the -i
 * URI list are read here, once, so the engine never touches a file during the run.
 */
#include "core/cli.h"
#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/fs.h"
#include "load/engine.h"
#include "load/slo.h"
#include "core/url.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <openssl/ssl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_BODY (256ULL << 20)    /* -d files are held in memory once */
#define MAX_URI_FILE (64ULL << 20) /* -i */
#define MAX_DURATION (30ULL * 24 * 3600 * 1000000000ULL)

void h2b_load_config_init(struct h2b_load_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->requests = 1;
    cfg->connections = 1;
    cfg->streams = 1;
    cfg->threads = 1;
    cfg->window_bits = 30;
    cfg->conn_window_bits = 30;
    cfg->header_table_size = 4096;
    cfg->encoder_table_size = 4096;
    cfg->max_frame_size = 16384;
    cfg->timeout_ns = 30ULL * 1000000000ULL;
    cfg->coalesce_ns = 100ULL * 1000ULL;
    cfg->arrival = H2B_ARRIVAL_CONSTANT;
    cfg->seed = 1;
    cfg->progress = H2B_LOAD_PROGRESS_AUTO;
    cfg->rate_period_ns = 1000000000ULL;
    cfg->log_fd = -1;
    cfg->engine = H2B_LOAD_ENGINE_FAST;
    cfg->find_max_step_ns = 5 * H2B_NS_PER_SEC;
    cfg->find_max_warmup_ns = H2B_NS_PER_SEC;
    cfg->find_max_start = 100;
    cfg->find_max_precision = 0.02;
    cfg->find_max_limit = 1e6;
    cfg->find_max_retries = 1;
    cfg->grpc_messages = 1;
    cfg->grpc_expect = -1;
}

void h2b_load_uri_free(struct h2b_load_uri *u)
{
    if (!u)
        return;
    free(u->scheme);
    free(u->host);
    free(u->port);
    free(u->authority);
    free(u->path);
    memset(u, 0, sizeof(*u));
}

void h2b_load_config_free(struct h2b_load_config *cfg)
{
    for (size_t i = 0; i < cfg->nuris; i++)
        h2b_load_uri_free(&cfg->uris[i]);
    free(cfg->uris);
    for (size_t i = 0; i < cfg->nheaders; i++) {
        free(cfg->headers[i].name);
        free(cfg->headers[i].value);
    }
    free(cfg->headers);
    free(cfg->data_path);
    free(cfg->body);
    free(cfg->cpus_text);
    free(cfg->json_path);
    free(cfg->hdr_log_path);
    free(cfg->shape_text);
    free(cfg->conn_shape_text);
    free(cfg->interval_json_path);
    free(cfg->slo_text);
    free(cfg->grpc_method);
    free(cfg->grpc_data_path);
    h2b_load_grpc_reply_free(&cfg->grpc_reply);
    if (cfg->slo) {
        h2b_slo_free(cfg->slo);
        free(cfg->slo);
    }
    h2b_shape_free(&cfg->shape);
    h2b_shape_free(&cfg->conn_shape);
    free(cfg->script_ns);
    free(cfg->script_path);
    free(cfg->base_unix);
    free(cfg->base_uri);
    free(cfg->connect_host);
    free(cfg->connect_port);
    free(cfg->log_path);
    if (cfg->log_fd >= 0)
        close(cfg->log_fd);
    free(cfg->ciphers);
    free(cfg->alpn);
    free(cfg->tls13_ciphers);
    free(cfg->groups);
    memset(cfg, 0, sizeof(*cfg));
    cfg->log_fd = -1;
}

static char *dup_range(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

int h2b_load_uri_parse(const char *text, struct h2b_load_uri *out, struct h2b_diag *diag)
{
    struct h2b_url url;
    int rv = h2b_url_parse(text, 0, &url, diag);
    if (rv != H2B_OK)
        return rv;
    struct h2b_load_uri u = {.tls = url.tls};
    u.scheme = strdup(url.scheme);
    u.host = strdup(url.host);
    u.port = strdup(url.port_str);
    u.authority = strdup(url.authority);
    if (url.path && url.path[0] == '/') {
        u.path = dup_range(url.path, url.path_len);
    } else {
        /* "http://h" has no path and "http://h?q" a query but no path: "/" goes in front. */
        u.path = malloc(url.path_len + 2);
        if (u.path) {
            u.path[0] = '/';
            memcpy(u.path + 1, url.path ? url.path : "", url.path_len);
            u.path[url.path_len + 1] = '\0';
        }
    }
    if (!u.scheme || !u.host || !u.port || !u.authority || !u.path) {
        h2b_load_uri_free(&u);
        return H2B_ERR_NOMEM;
    }
    *out = u;
    return H2B_OK;
}

void h2b_load_usage(FILE *f)
{
    fprintf(
        f,
        "usage: h2bench load [options] URI...\n"
        "\n"
        "HTTP/2 load generator: h2load's flags and output, plus an open-loop rate whose latency\n"
        "stays honest when the server stalls. URIs are used round-robin per connection; the\n"
        "first one's scheme, host and port count (http:// is h2c prior knowledge, https:// is\n"
        "TLS with ALPN h2).\n"
        "\n"
        "h2load's options:\n"
        "  -n, --requests=N        requests over all connections (default 1; ignored with -D)\n"
        "  -c, --clients=N         connections (default 1)\n"
        "  -m, --max-concurrent-streams=N\n"
        "                          streams in flight per connection (default 1); clamped to\n"
        "                          the server's SETTINGS_MAX_CONCURRENT_STREAMS\n"
        "  -t, --threads=N         worker threads (default 1)\n"
        "  -D, --duration=DUR      measure for DUR (10, 1.5s, 500ms) instead of -n\n"
        "      --warm-up-time=DUR  unmeasured warm-up before -D (connections kept)\n"
        "  -H, --header='NAME: VALUE'  add or override a request header (repeatable)\n"
        "  -d, --data=FILE         POST FILE as the request body\n"
        "  -i, --input-file=FILE   URIs, one per line ('-' reads stdin)\n"
        "  -T, --connection-active-timeout=DUR    longest life of a connection\n"
        "  -N, --connection-inactivity-timeout=DUR longest silence with requests in flight\n"
        "  -w, --window-bits=N     stream window 2^N-1 (default 30)\n"
        "  -W, --connection-window-bits=N  connection window 2^N-1 (default 30)\n"
        "      --header-table-size=SIZE    HPACK decoder table size (default 4K)\n"
        "      --encoder-header-table-size=SIZE  HPACK encoder table size (default 4K)\n"
        "  -f, --max-frame-size=SIZE  largest frame we accept (default 16K)\n"
        "  -r, --rate=N            connection ramp: start N connections per --rate-period, up\n"
        "                          to -c (not a request rate; see --total-rps)\n"
        "      --rate-period=DUR   period of -r (default 1s)\n"
        "      --rps=R             R requests/s per connection; latency from each request's\n"
        "                          intended send time (no coordinated omission)\n"
        "      --timing-script-file=FILE  lines 'OFFSET_MS<TAB>URI' replayed by every\n"
        "                          connection at those offsets from its start; -n per client\n"
        "  -B, --base-uri=URI|unix:PATH  connect there instead of the first URI's authority\n"
        "      --connect-to=HOST[:PORT]  connect there; :authority and SNI unchanged\n"
        "      --log-file=FILE     one line per measured request: start (us since epoch), status\n"
        "                          (-1 if failed), duration (us), tab-separated, as h2load\n"
        "      --ciphers=LIST      TLS 1.2 cipher list (OpenSSL syntax)\n"
        "      --tls13-ciphers=LIST  TLS 1.3 cipher suites\n"
        "      --groups=LIST       TLS key exchange groups (X25519:P-256)\n"
        "      --ktls              kernel TLS where OpenSSL and the kernel have it\n"
        "  -v, --verbose           every frame sent and received, on stderr\n"
        "      --version           version and exit\n"
        "      --raw=REQ:RESP      no HTTP: per request write REQ bytes, read RESP bytes (one\n"
        "                          in flight per connection; http:// only), for the kernel's\n"
        "                          floor (h2bench floor-serve); a whole response counts as 200\n"
        "      --h1                HTTP/1.1 (keep-alive, one request in flight per connection;\n"
        "                          -m is not a pipelining depth here), ALPN http/1.1 over TLS\n"
        "  -p, --no-tls-proto=PROTO  protocol for http://: h2c (default) or http/1.1\n"
        "      --npn-list=LIST     ALPN list for https:// (alias --alpn-list), e.g.\n"
        "                          h2,http/1.1; the server's choice picks HTTP/2 or HTTP/1.1\n"
        "                          (default: h2 only, unlike h2load's h2,h2-16,h2-14,http/1.1)\n"
        "  (--qlog-file-base, --no-udp-gso, --max-udp-payload-size: QUIC knobs --h3 does not\n"
        "   have)\n"
        "\n"
        "h2bench's options:\n"
        "      --engine=fast|nghttp2  HTTP/2 client engine: fast (default: our framing,\n"
        "                          nghttp2's HPACK) or nghttp2 (one nghttp2_session per\n"
        "                          connection, the reference)\n"
        "      --io=epoll|uring    how workers move bytes: epoll readiness with read/send\n"
        "                          (default) or io_uring (multishot receive into provided\n"
        "                          buffers, sends batched per loop turn; TLS stays readiness-\n"
        "                          based); falls back to epoll, saying why on stderr, where\n"
        "                          io_uring is refused and for --h3\n"
        "      --total-rps=R       open loop: R requests/s over all connections, latency measured\n"
        "                          from each request's intended send time (no coordinated\n"
        "                          omission); h2bench's old --rate\n"
        "      --stages=LIST       open loop shaped: DUR:RATE,... ramps linearly from\n"
        "                          --total-rps (or 0) to each RATE over its DUR; the run lasts\n"
        "                          the stages (no -D), e.g. 10s:1000,30s:5000,10s:0\n"
        "      --step=R+S/DUR      open loop staircase: R req/s, R+S after DUR, R+2S ... (-D)\n"
        "      --conn-stages=LIST  closed loop, connections shaped: DUR:N,... ramps the open\n"
        "                          connections linearly from 0 to each N over its DUR (each\n"
        "                          with -m streams); the run lasts the stages (no -D); -c is\n"
        "                          the most (default: the peak), e.g. 10s:50,30s:50,10s:5\n"
        "      --conn-step=N+S/DUR  closed loop staircase: N connections, N+S after DUR ... (-D)\n"
        "      --interval=DUR      length of the per-interval results (default 1s)\n"
        "      --interval-json=FILE  one JSON line per interval: offered and achieved rate,\n"
        "                          errors, that interval's exact latency percentiles\n"
        "      --slo=LIST          objectives, e.g. 'p99<5ms,p999<20ms,errors<0.1%%,\n"
        "                          rps>0.98*offered' (pNN max mean: durations; errors: %% or\n"
        "                          ratio; rps: req/s or K*offered): exit 1 on a breach\n"
        "      --slo-window=DUR    also judge every window of DUR (whole intervals)\n"
        "      --slo-abort         stop at the first breached window\n"
        "      --slo-grace=DUR     no --slo-abort in the measurement's first DUR\n"
        "      --find-max          capacity search with --slo: the highest --total-rps whose\n"
        "                          steps pass (doubling, then bisection); prints the last\n"
        "                          passing and the first failing step and the search time\n"
        "      --find-max-step=DUR   each step's judged hold (default 5s)\n"
        "      --find-max-warm-up=DUR  each step's unjudged warm-up (default 1s)\n"
        "      --find-max-start=R  the first step's rate (default 100 req/s)\n"
        "      --find-max-precision=PCT  stop when the first failing rate is within PCT\n"
        "                          of the last passing one (default 2)\n"
        "      --find-max-limit=R  never try above R req/s (default 1e6)\n"
        "      --find-max-retries=N  try a failing step N more times before it fails\n"
        "                          (default 1: a stall can fail a step, never pass one)\n"
        "      --arrival=KIND      constant (default) or poisson\n"
        "      --seed=N            seed of the poisson schedule (default 1)\n"
        "      --timeout=DUR       per-request timeout, 0 = none (default 30s)\n"
        "      --coalesce=DUR      closed loop: when nothing is ready, nap up to DUR before\n"
        "                          sleeping in epoll (adaptive; 0 = never, default 100us)\n"
        "      --cpus=LIST         pin worker i to the i-th CPU of LIST (0,2-3)\n"
        "      --json=FILE         write the results as JSON (written atomically)\n"
        "      --latency           print the latency percentile spectrum (wrk2's layout)\n"
        "      --hdr-log=FILE      write the histograms as an HdrHistogram interval log (V2\n"
        "                          compressed, readable by HdrHistogram's tools)\n"
        "      --fail-on-error     exit 1 if any request failed, errored or timed out\n"
        "      --progress          one line a second on stderr even when it is not a terminal\n"
        "      --no-progress       no progress lines\n"
        "      --h3                HTTP/3 over QUIC (h2load's flag; ngtcp2 + GnuTLS), https://\n"
        "                          URIs; -m is clamped to the server's initial_max_streams_bidi\n"
        "      --grpc=METHOD       every request is a gRPC call of METHOD (/h2bench.Echo/Unary):\n"
        "                          a POST of length-prefixed messages (h2c or TLS, both\n"
        "                          engines); it succeeds only with grpc-status 0, and the\n"
        "                          statuses are counted by code\n"
        "      --grpc-size=N       each message an EchoMessage of N payload bytes (default 0)\n"
        "      --grpc-data=FILE    each message FILE, an encoded protobuf message, sent as is\n"
        "      --grpc-messages=N   messages per call (default 1; ServerStream: asked for)\n"
        "  -h, --help              this text\n"
        "\n"
        "Exit codes: 0 ok, 1 --fail-on-error and a request failed, --slo breached or not\n"
        "shown, or --find-max found no passing step, 2 usage error, 3 runtime failure (no\n"
        "connection could be made, interrupted, -D run ended early: every connection\n"
        "closed or failed).\n");
}

/* The whole file at path ("-": stdin), at most max bytes. */
static int read_file(const char *path, uint64_t max, uint8_t **out, size_t *len)
{
    bool in = strcmp(path, "-") == 0;
    int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return H2B_ERR_IO;
    char *buf;
    int rv = h2b_fd_read_all(fd, (size_t)max, 0, &buf, len);
    int e = errno;
    if (!in)
        close(fd);
    errno = e;
    if (rv == H2B_OK)
        *out = (uint8_t *)buf;
    return rv;
}

static int add_uri(struct h2b_load_config *cfg, const char *text, struct h2b_diag *err)
{
    struct h2b_load_uri u;
    struct h2b_diag d = {0};
    int rv = h2b_load_uri_parse(text, &u, &d);
    if (rv == H2B_ERR_PARSE)
        return h2b__load_errf(err, H2B_ERR_INVAL, "bad URI '%s': %s", text, d.message);
    if (rv != H2B_OK)
        return h2b__load_errf(err, rv, "out of memory");
    struct h2b_load_uri *nu = realloc(cfg->uris, (cfg->nuris + 1) * sizeof(*nu));
    if (!nu) {
        h2b_load_uri_free(&u);
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    }
    cfg->uris = nu;
    cfg->uris[cfg->nuris++] = u;
    return H2B_OK;
}

static int add_header(struct h2b_load_config *cfg, const char *text, struct h2b_diag *err)
{
    /* "name: value"; a leading ':' belongs to the name (":authority: x"). */
    const char *colon = strchr(text[0] == ':' ? text + 1 : text, ':');
    if (!colon || colon == text)
        return h2b__load_errf(err, H2B_ERR_INVAL, "-H: expected 'NAME: VALUE', got '%s'", text);
    const char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    struct h2b_load_header *nh = realloc(cfg->headers, (cfg->nheaders + 1) * sizeof(*nh));
    if (!nh)
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    cfg->headers = nh;
    char *name = dup_range(text, (size_t)(colon - text));
    char *value = strdup(v);
    if (!name || !value) {
        free(name);
        free(value);
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    }
    for (char *p = name; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    cfg->headers[cfg->nheaders].name = name;
    cfg->headers[cfg->nheaders].value = value;
    cfg->nheaders++;
    return H2B_OK;
}

static int set_string(char **dst, const char *src, struct h2b_diag *err)
{
    char *s = strdup(src);
    if (!s)
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = s;
    return H2B_OK;
}

/* Reads a line-oriented input file (-i, --timing-script-file) and calls fn for each non-empty
 * line (NUL-terminated, trailing CR and blanks removed) with its number; stops at the first
 * error fn returns. option names the flag in an I/O error. */
static int for_each_line(struct h2b_load_config *cfg, const char *path, const char *option,
                         int (*fn)(struct h2b_load_config *, char *, const char *, unsigned,
                                   struct h2b_diag *),
                         struct h2b_diag *err)
{
    uint8_t *buf;
    size_t len;
    int rv = read_file(path, MAX_URI_FILE, &buf, &len);
    if (rv != H2B_OK)
        return h2b__load_errf(err, H2B_ERR_NOTFOUND, "%s %s: %s", option, path,
                              rv == H2B_ERR_IO ? strerror(errno) : h2b_strerror(rv));
    char *line = (char *)buf;
    unsigned lineno = 0;
    rv = H2B_OK;
    while (*line && rv == H2B_OK) {
        lineno++;
        char *eol = strchr(line, '\n');
        char *next = eol ? eol + 1 : line + strlen(line);
        if (eol)
            *eol = '\0';
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        if (n > 0)
            rv = fn(cfg, line, path, lineno, err);
        line = next;
    }
    free(buf);
    return rv;
}

/* add_uri's message, prefixed with file:line:column */
static int add_uri_at(struct h2b_load_config *cfg, const char *uri, const char *path,
                      unsigned lineno, size_t column, struct h2b_diag *err)
{
    int rv = add_uri(cfg, uri, err);
    if (rv != H2B_OK && err) {
        snprintf(err->file, sizeof(err->file), "%s", path);
        err->line = (int)lineno;
        err->column = (int)column;
    }
    return rv;
}

static int uri_line(struct h2b_load_config *cfg, char *line, const char *path, unsigned lineno,
                    struct h2b_diag *err)
{
    return add_uri_at(cfg, line, path, lineno, 1, err);
}

/* --timing-script-file: lines "OFFSET_MS<TAB>URI" (h2load's format; offsets in ms with us
 * resolution, from the start of each client). Errors name file:line:column. */
static int script_line(struct h2b_load_config *cfg, char *line, const char *path, unsigned lineno,
                       struct h2b_diag *err)
{
    char *tab = strchr(line, '\t');
    double ms;
    if (!tab)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s:%u:1: expected 'OFFSET_MS<TAB>URI', found no tab", path, lineno);
    *tab = '\0';
    if (h2b_cli_parse_double(line, 0, 1e12, &ms) != H2B_OK)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s:%u:1: expected an offset in milliseconds (like 10 or 2.5), got "
                              "'%.40s'",
                              path, lineno, line);
    uint64_t *ns = realloc(cfg->script_ns, (cfg->nscript + 1) * sizeof(*ns));
    if (!ns)
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    cfg->script_ns = ns;
    int rv = add_uri_at(cfg, tab + 1, path, lineno, (size_t)(tab - line) + 2, err);
    if (rv == H2B_OK)
        cfg->script_ns[cfg->nscript++] = (uint64_t)(ms * 1e6 + 0.5);
    return rv;
}

/* HOST[:PORT], [IPv6][:PORT] */
static int parse_connect_to(struct h2b_load_config *cfg, const char *a, struct h2b_diag *err)
{
    struct h2b_url u;
    struct h2b_diag d = {0};
    if (h2b_url_parse_authority(a, strlen(a), &u, &d) != H2B_OK)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--connect-to '%s': %s (expected HOST[:PORT] or [IPV6][:PORT])", a,
                              d.message);
    free(cfg->connect_host);
    free(cfg->connect_port);
    cfg->connect_host = strdup(u.host);
    cfg->connect_port = u.port_given ? strdup(u.port_str) : NULL;
    if (!cfg->connect_host || (u.port_given && !cfg->connect_port))
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    return H2B_OK;
}

/* -B: as in h2load, the base URI's scheme, host and port replace the first URI's (which are the
 * ones that count); "unix:PATH" keeps them and connects to a UNIX socket. */
static int apply_base_uri(struct h2b_load_config *cfg, struct h2b_diag *err)
{
    const char *b = cfg->base_uri;
    if (strncmp(b, "unix:", 5) == 0) {
        if (b[5] == '\0' || strlen(b + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path))
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "-B '%s': expected unix:PATH with a path shorter than %zu bytes",
                                  b, sizeof(((struct sockaddr_un *)0)->sun_path));
        return set_string(&cfg->base_unix, b + 5, err);
    }
    struct h2b_load_uri u;
    struct h2b_diag d = {0};
    int rv = h2b_load_uri_parse(b, &u, &d);
    if (rv == H2B_ERR_PARSE)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-B '%s': %s (expected http://host[:port], https://... or unix:PATH)",
                              b, d.message);
    if (rv != H2B_OK)
        return h2b__load_errf(err, rv, "out of memory");
    struct h2b_load_uri *f = &cfg->uris[0];
    free(u.path);
    u.path = f->path;
    f->path = NULL;
    h2b_load_uri_free(f);
    *f = u;
    return H2B_OK;
}

/* --ciphers, --tls13-ciphers, --groups: checked against OpenSSL now, so a typo is a usage error
 * and not a failed run. */
static int check_tls_options(const struct h2b_load_config *cfg, struct h2b_diag *err)
{
    if (!cfg->ciphers && !cfg->tls13_ciphers && !cfg->groups)
        return H2B_OK;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return h2b__load_errf(err, H2B_ERR_NOMEM, "cannot set up TLS (OpenSSL)");
    const char *bad = NULL, *what = NULL;
    if (cfg->ciphers && SSL_CTX_set_cipher_list(ctx, cfg->ciphers) != 1)
        bad = "--ciphers", what = cfg->ciphers;
    else if (cfg->tls13_ciphers && SSL_CTX_set_ciphersuites(ctx, cfg->tls13_ciphers) != 1)
        bad = "--tls13-ciphers", what = cfg->tls13_ciphers;
    else if (cfg->groups && SSL_CTX_set1_groups_list(ctx, cfg->groups) != 1)
        bad = "--groups", what = cfg->groups;
    SSL_CTX_free(ctx);
    if (bad)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s '%s': OpenSSL accepts none of it (expected a ':'-separated list "
                              "OpenSSL knows, see `openssl ciphers -v`)",
                              bad, what);
    return H2B_OK;
}

enum {
    OPT_WARMUP = 256,
    OPT_HEADER_TABLE,
    OPT_ENCODER_TABLE,
    OPT_RATE,
    OPT_ARRIVAL,
    OPT_SEED,
    OPT_TIMEOUT,
    OPT_COALESCE,
    OPT_CPUS,
    OPT_JSON,
    OPT_FAIL_ON_ERROR,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_H3,
    OPT_RATE_PERIOD,
    OPT_RPS,
    OPT_SCRIPT,
    OPT_CONNECT_TO,
    OPT_LOG_FILE,
    OPT_VERSION,
    OPT_CIPHERS,
    OPT_TLS13_CIPHERS,
    OPT_GROUPS,
    OPT_KTLS,
    OPT_H1,
    OPT_RAW,
    OPT_ENGINE,
    OPT_IO,
    OPT_NPN,
    OPT_QUIC,
    OPT_HDR_LOG,
    OPT_LATENCY,
    OPT_STAGES,
    OPT_STEP,
    OPT_CONN_STAGES,
    OPT_CONN_STEP,
    OPT_INTERVAL,
    OPT_INTERVAL_JSON,
    OPT_SLO,
    OPT_SLO_WINDOW,
    OPT_SLO_ABORT,
    OPT_SLO_GRACE,
    OPT_FIND_MAX,
    OPT_FIND_MAX_STEP,
    OPT_FIND_MAX_WARMUP,
    OPT_FIND_MAX_START,
    OPT_FIND_MAX_PRECISION,
    OPT_FIND_MAX_LIMIT,
    OPT_FIND_MAX_RETRIES,
    OPT_GRPC,
    OPT_GRPC_DATA,
    OPT_GRPC_SIZE,
    OPT_GRPC_MESSAGES
};

static const struct option long_options[] = {
    {"requests", required_argument, NULL, 'n'},
    {"clients", required_argument, NULL, 'c'},
    {"max-concurrent-streams", required_argument, NULL, 'm'},
    {"threads", required_argument, NULL, 't'},
    {"duration", required_argument, NULL, 'D'},
    {"warm-up-time", required_argument, NULL, OPT_WARMUP},
    {"header", required_argument, NULL, 'H'},
    {"data", required_argument, NULL, 'd'},
    {"input-file", required_argument, NULL, 'i'},
    {"connection-active-timeout", required_argument, NULL, 'T'},
    {"connection-inactivity-timeout", required_argument, NULL, 'N'},
    {"window-bits", required_argument, NULL, 'w'},
    {"connection-window-bits", required_argument, NULL, 'W'},
    {"header-table-size", required_argument, NULL, OPT_HEADER_TABLE},
    {"encoder-header-table-size", required_argument, NULL, OPT_ENCODER_TABLE},
    {"max-frame-size", required_argument, NULL, 'f'},
    {"total-rps", required_argument, NULL, OPT_RATE},
    {"rate", required_argument, NULL, 'r'},
    {"rate-period", required_argument, NULL, OPT_RATE_PERIOD},
    {"rps", required_argument, NULL, OPT_RPS},
    {"timing-script-file", required_argument, NULL, OPT_SCRIPT},
    {"base-uri", required_argument, NULL, 'B'},
    {"connect-to", required_argument, NULL, OPT_CONNECT_TO},
    {"log-file", required_argument, NULL, OPT_LOG_FILE},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"ciphers", required_argument, NULL, OPT_CIPHERS},
    {"tls13-ciphers", required_argument, NULL, OPT_TLS13_CIPHERS},
    {"groups", required_argument, NULL, OPT_GROUPS},
    {"ktls", no_argument, NULL, OPT_KTLS},
    {"h1", no_argument, NULL, OPT_H1},
    {"raw", required_argument, NULL, OPT_RAW},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"io", required_argument, NULL, OPT_IO},
    {"no-tls-proto", required_argument, NULL, 'p'},
    {"npn-list", required_argument, NULL, OPT_NPN},
    {"alpn-list", required_argument, NULL, OPT_NPN},
    {"qlog-file-base", required_argument, NULL, OPT_QUIC},
    {"no-udp-gso", no_argument, NULL, OPT_QUIC},
    {"max-udp-payload-size", required_argument, NULL, OPT_QUIC},
    {"arrival", required_argument, NULL, OPT_ARRIVAL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"coalesce", required_argument, NULL, OPT_COALESCE},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"json", required_argument, NULL, OPT_JSON},
    {"hdr-log", required_argument, NULL, OPT_HDR_LOG},
    {"latency", no_argument, NULL, OPT_LATENCY},
    {"fail-on-error", no_argument, NULL, OPT_FAIL_ON_ERROR},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"h3", no_argument, NULL, OPT_H3},
    {"stages", required_argument, NULL, OPT_STAGES},
    {"step", required_argument, NULL, OPT_STEP},
    {"conn-stages", required_argument, NULL, OPT_CONN_STAGES},
    {"conn-step", required_argument, NULL, OPT_CONN_STEP},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"interval-json", required_argument, NULL, OPT_INTERVAL_JSON},
    {"slo", required_argument, NULL, OPT_SLO},
    {"slo-window", required_argument, NULL, OPT_SLO_WINDOW},
    {"slo-abort", no_argument, NULL, OPT_SLO_ABORT},
    {"slo-grace", required_argument, NULL, OPT_SLO_GRACE},
    {"find-max", no_argument, NULL, OPT_FIND_MAX},
    {"find-max-step", required_argument, NULL, OPT_FIND_MAX_STEP},
    {"find-max-warm-up", required_argument, NULL, OPT_FIND_MAX_WARMUP},
    {"find-max-start", required_argument, NULL, OPT_FIND_MAX_START},
    {"find-max-precision", required_argument, NULL, OPT_FIND_MAX_PRECISION},
    {"find-max-limit", required_argument, NULL, OPT_FIND_MAX_LIMIT},
    {"find-max-retries", required_argument, NULL, OPT_FIND_MAX_RETRIES},
    {"grpc", required_argument, NULL, OPT_GRPC},
    {"grpc-data", required_argument, NULL, OPT_GRPC_DATA},
    {"grpc-size", required_argument, NULL, OPT_GRPC_SIZE},
    {"grpc-messages", required_argument, NULL, OPT_GRPC_MESSAGES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int bad_value(struct h2b_diag *err, int rv, const char *opt, const char *val,
                     const char *what)
{
    return h2b__load_errf(err, H2B_ERR_INVAL, "%s '%s': %s (expected %s)", opt, val,
                          rv == H2B_ERR_RANGE ? "out of range" : "not a valid value", what);
}

/* --npn-list "h2,http/1.1" as ALPN wire format (length-prefixed names). */
/* --raw REQ:RESP: two byte counts, each 1..H2B_LOAD_RAW_MAX. */
static int parse_raw(const char *a, struct h2b_load_config *cfg, struct h2b_diag *err)
{
    char req[24], resp[24];
    const char *colon = strchr(a, ':');
    size_t n = colon ? (size_t)(colon - a) : 0;
    uint64_t q = 0, r = 0;
    if (!colon || n >= sizeof req || strlen(colon + 1) >= sizeof resp)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--raw '%s': expected REQ:RESP, two byte counts (e.g. 20:40)", a);
    memcpy(req, a, n);
    req[n] = '\0';
    snprintf(resp, sizeof resp, "%s", colon + 1);
    if (h2b_cli_parse_u64(req, 1, H2B_LOAD_RAW_MAX, &q) != H2B_OK ||
        h2b_cli_parse_u64(resp, 1, H2B_LOAD_RAW_MAX, &r) != H2B_OK)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--raw '%s': REQ and RESP must be byte counts 1..%u", a,
                              H2B_LOAD_RAW_MAX);
    cfg->raw_request = (uint32_t)q;
    cfg->raw_response = (uint32_t)r;
    return H2B_OK;
}

/* --raw speaks no HTTP and no TLS: the options that only mean something for HTTP are refused. */
static int check_raw(const struct h2b_load_config *cfg, struct h2b_diag *err)
{
    if (!cfg->raw_request)
        return H2B_OK;
    if (cfg->h1 || cfg->h3 || cfg->uris[0].tls)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--raw is plain TCP: not with --h1, --h3 or an https:// URI");
    if (cfg->conn_rate || cfg->rps > 0 || cfg->nscript || cfg->log_path)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--raw: -r, --rps, --timing-script-file and --log-file are "
                              "h2-engine features the raw engine does not have");
    return H2B_OK;
}

static int alpn_wire(struct h2b_load_config *cfg, const char *list, struct h2b_diag *err)
{
    size_t n = strlen(list);
    uint8_t *w = malloc(n + 1);
    if (!w)
        return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
    size_t o = 0;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 0 || k > 255) {
            free(w);
            return bad_value(err, H2B_ERR_PARSE, "--npn-list", list,
                             "comma-separated protocol names of 1 to 255 bytes");
        }
        w[o++] = (uint8_t)k;
        memcpy(w + o, p, k);
        o += k;
        if (!e)
            break;
        p = e + 1;
    }
    free(cfg->alpn);
    cfg->alpn = w;
    cfg->alpn_len = o;
    return H2B_OK;
}

/* --stages or --step (cfg->shape_text) into cfg->shape, once every other option is known: the
 * stages set the run's length, the staircase fills -D (and the warm-up); rate becomes the
 * shape's mean. */
static int build_shape(struct h2b_load_config *cfg, bool step, struct h2b_diag *err)
{
    const char *flag = step ? "--step" : "--stages";
    int rv;
    if (cfg->rps > 0 || cfg->nscript)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s shapes the open loop (--total-rps): not with --rps or "
                              "--timing-script-file",
                              flag);
    if (step) {
        double rate, inc;
        uint64_t dur;
        if (cfg->rate > 0)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--step gives its own start rate: drop --total-rps");
        if (!cfg->duration_ns)
            return h2b__load_errf(err, H2B_ERR_INVAL, "--step needs -D (how long the stairs go)");
        if ((rv = h2b_shape_parse_step(cfg->shape_text, &rate, &inc, &dur, err)) != H2B_OK)
            return rv;
        rv = h2b_shape_steps(&cfg->shape, rate, inc, dur, cfg->warmup_ns + cfg->duration_ns);
        if (rv == H2B_ERR_INVAL)
            return h2b__load_errf(err, rv, "--step '%s': more than %d steps in -D", cfg->shape_text,
                                  H2B_SHAPE_MAX_SEGMENTS);
        if (rv != H2B_OK)
            return h2b__load_errf(err, rv, "out of memory");
    } else {
        if (cfg->duration_ns || cfg->warmup_ns)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--stages sets the run's length: no -D or --warm-up-time");
        if ((rv = h2b_shape_parse_stages(&cfg->shape, cfg->shape_text, cfg->rate, err)) != H2B_OK)
            return rv;
        cfg->duration_ns = cfg->shape.total_ns;
    }
    cfg->rate = cfg->shape.total / ((double)cfg->shape.total_ns / 1e9);
    return H2B_OK;
}

/* --conn-stages or --conn-step (cfg->conn_shape_text) into cfg->conn_shape: a closed-loop run
 * whose number of connections follows the shape, -c its most (by default the peak). Refuses the
 * open loop's rates, -n and -r, which say otherwise how much load there is. */
static int build_conn_shape(struct h2b_load_config *cfg, bool step, bool connections_given,
                            struct h2b_diag *err)
{
    const char *flag = step ? "--conn-step" : "--conn-stages";
    int rv;
    if (cfg->rate > 0 || cfg->rps > 0 || cfg->shape_text || cfg->find_max || cfg->nscript)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s shapes the closed loop's connections: not with an open-loop "
                              "rate (--total-rps, --rps, --stages, --step, --find-max, "
                              "--timing-script-file)",
                              flag);
    if (cfg->requests_given || cfg->conn_rate)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s: not with -n (the shape sets the run's length) or -r (the "
                              "shape ramps the connections)",
                              flag);
    if (step) {
        double n, inc;
        uint64_t dur;
        if (!cfg->duration_ns)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--conn-step needs -D (how long the stairs go)");
        if ((rv = h2b_shape_parse_conn_step(cfg->conn_shape_text, &n, &inc, &dur, err)) != H2B_OK)
            return rv;
        rv = h2b_shape_steps(&cfg->conn_shape, n, inc, dur, cfg->warmup_ns + cfg->duration_ns);
        if (rv == H2B_ERR_INVAL)
            return h2b__load_errf(err, rv, "--conn-step '%s': more than %d steps in -D",
                                  cfg->conn_shape_text, H2B_SHAPE_MAX_SEGMENTS);
        if (rv != H2B_OK)
            return h2b__load_errf(err, rv, "out of memory");
    } else {
        if (cfg->duration_ns || cfg->warmup_ns)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--conn-stages sets the run's length: no -D or --warm-up-time");
        if ((rv = h2b_shape_parse_conn_stages(&cfg->conn_shape, cfg->conn_shape_text, err)) !=
            H2B_OK)
            return rv;
        cfg->duration_ns = cfg->conn_shape.total_ns;
    }
    double peak = round(h2b_shape_peak(&cfg->conn_shape));
    if (peak < 1 || peak > H2B_SHAPE_MAX_CONNS)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s '%s': its peak rounds to %.0f connections (expected 1..%d)", flag,
                              cfg->conn_shape_text, peak, H2B_SHAPE_MAX_CONNS);
    if (!connections_given)
        cfg->connections = (uint32_t)peak;
    else if (cfg->connections < peak)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-c %u is below the peak of %s '%s' (%.0f connections): -c is the "
                              "most connections open",
                              cfg->connections, flag, cfg->conn_shape_text, peak);
    return H2B_OK;
}

#define NOT_MINE 1   /* an option group's answer for an option of another group */
#define PARSE_STOP 2 /* an option group's answer for --version: the rest is not read */

/* What the option groups share while one command line is parsed. */
struct parse_state {
    bool shape_is_step, slo_abort, slo_grace_given;
    bool grpc_size_given, grpc_messages_given;
    bool conn_shape_is_step, connections_given;
    uint64_t slo_window, slo_grace;
    struct h2b_slo *slo;
    bool h1_clear; /* -p http/1.1 */
    bool input_file;
};

/* Options of one group: requests, connections, streams, threads, length, headers, body, URIs,
 * timeouts and HTTP/2 windows. Returns H2B_OK, an error (said in err), or NOT_MINE for another
 * group's option. */
static int opt_workload(struct h2b_load_config *cfg, struct parse_state *ps, int c, const char *a,
                        const char *name, struct h2b_diag *err)
{
    uint64_t v;
    int rv;
    (void)name;
    switch (c) {
    case 'n':
        if ((rv = h2b_cli_parse_u64(a, 1, UINT64_MAX / 2, &v)) != H2B_OK)
            return bad_value(err, rv, "-n", a, "a count >= 1");
        cfg->requests = v;
        cfg->requests_given = true;
        return H2B_OK;
    case 'c':
        if ((rv = h2b_cli_parse_u64(a, 1, 1000000, &v)) != H2B_OK)
            return bad_value(err, rv, "-c", a, "1..1000000");
        cfg->connections = (uint32_t)v;
        ps->connections_given = true;
        return H2B_OK;
    case 'm':
        if ((rv = h2b_cli_parse_u64(a, 1, 1000000, &v)) != H2B_OK)
            return bad_value(err, rv, "-m", a, "1..1000000");
        cfg->streams = (uint32_t)v;
        return H2B_OK;
    case 't':
        if ((rv = h2b_cli_parse_u64(a, 1, 1024, &v)) != H2B_OK)
            return bad_value(err, rv, "-t", a, "1..1024");
        cfg->threads = (uint32_t)v;
        return H2B_OK;
    case 'D':
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "-D", a, "a duration >= 1ms, like 10 or 1.5s");
        cfg->duration_ns = v;
        return H2B_OK;
    case OPT_WARMUP:
        if ((rv = h2b_cli_parse_duration_ns(a, 0, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--warm-up-time", a, "a duration");
        cfg->warmup_ns = v;
        return H2B_OK;
    case 'H':
        if ((rv = add_header(cfg, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case 'd': {
        uint8_t *body;
        size_t len;
        if ((rv = set_string(&cfg->data_path, a, err)) != H2B_OK)
            return rv;
        rv = read_file(a, MAX_BODY, &body, &len);
        if (rv != H2B_OK)
            return h2b__load_errf(err, H2B_ERR_NOTFOUND, "-d %s: %s", a,
                                  rv == H2B_ERR_IO ? strerror(errno) : h2b_strerror(rv));
        free(cfg->body);
        cfg->body = body;
        cfg->body_len = len;
        return H2B_OK;
    }
    case 'i':
        if ((rv = for_each_line(cfg, a, "-i", uri_line, err)) != H2B_OK)
            return rv;
        ps->input_file = true;
        return H2B_OK;
    case 'T':
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "-T", a, "a duration >= 1ms");
        cfg->conn_active_timeout_ns = v;
        return H2B_OK;
    case 'N':
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "-N", a, "a duration >= 1ms");
        cfg->conn_inactivity_timeout_ns = v;
        return H2B_OK;
    case 'w':
    case 'W':
        if ((rv = h2b_cli_parse_u64(a, 0, 30, &v)) != H2B_OK)
            return bad_value(err, rv, c == 'w' ? "-w" : "-W", a, "0..30");
        if (c == 'w')
            cfg->window_bits = (int)v;
        else
            cfg->conn_window_bits = (int)v;
        return H2B_OK;
    case OPT_HEADER_TABLE:
        if ((rv = h2b_cli_parse_size(a, 0, UINT32_MAX, &v)) != H2B_OK)
            return bad_value(err, rv, "--header-table-size", a, "a size like 4K");
        cfg->header_table_size = (uint32_t)v;
        return H2B_OK;
    case OPT_ENCODER_TABLE:
        if ((rv = h2b_cli_parse_size(a, 0, UINT32_MAX, &v)) != H2B_OK)
            return bad_value(err, rv, "--encoder-header-table-size", a, "a size like 4K");
        cfg->encoder_table_size = (uint32_t)v;
        return H2B_OK;
    case 'f':
        if ((rv = h2b_cli_parse_size(a, 16384, 16777215, &v)) != H2B_OK)
            return bad_value(err, rv, "-f", a, "a size in 16K..16M-1");
        cfg->max_frame_size = (uint32_t)v;
        return H2B_OK;
    default:
        return NOT_MINE;
    }
}

/* Options of one group: the open loop and its shapes, objectives and capacity search, and h2load's
 * -r, --rps and scripts. Returns H2B_OK, an error (said in err), or NOT_MINE for another group's
 * option. */
static int opt_rate(struct h2b_load_config *cfg, struct parse_state *ps, int c, const char *a,
                    const char *name, struct h2b_diag *err)
{
    uint64_t v;
    int rv;
    switch (c) {
    case OPT_RATE: {
        double r;
        if ((rv = h2b_cli_parse_double(a, 0.001, 1e9, &r)) != H2B_OK)
            return bad_value(err, rv, "--rate", a, "requests/s in 0.001..1e9");
        cfg->rate = r;
        return H2B_OK;
    }
    case OPT_STAGES:
    case OPT_STEP:
        if (cfg->shape_text)
            return h2b__load_errf(err, H2B_ERR_INVAL, "--stages and --step: give one shape, once");
        if ((rv = set_string(&cfg->shape_text, a, err)) != H2B_OK)
            return rv;
        ps->shape_is_step = c == OPT_STEP;
        return H2B_OK;
    case OPT_CONN_STAGES:
    case OPT_CONN_STEP:
        if (cfg->conn_shape_text)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--conn-stages and --conn-step: give one shape, once");
        if ((rv = set_string(&cfg->conn_shape_text, a, err)) != H2B_OK)
            return rv;
        ps->conn_shape_is_step = c == OPT_CONN_STEP;
        return H2B_OK;
    case OPT_INTERVAL:
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--interval", a, "a duration >= 1ms");
        cfg->interval_ns = v;
        return H2B_OK;
    case OPT_INTERVAL_JSON:
        if ((rv = set_string(&cfg->interval_json_path, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_SLO:
        if (!ps->slo && !(ps->slo = calloc(1, sizeof(*ps->slo))))
            return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
        cfg->slo = ps->slo;
        if ((rv = set_string(&cfg->slo_text, a, err)) != H2B_OK)
            return rv;
        if ((rv = h2b_slo_parse(ps->slo, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_FIND_MAX:
        cfg->find_max = true;
        return H2B_OK;
    case OPT_FIND_MAX_STEP:
    case OPT_FIND_MAX_WARMUP:
        if ((rv = h2b_cli_parse_duration_ns(a, c == OPT_FIND_MAX_STEP ? 100000000 : 0, MAX_DURATION,
                                            &v)) != H2B_OK)
            return bad_value(err, rv, name, a,
                             c == OPT_FIND_MAX_STEP ? "a duration >= 100ms" : "a duration");
        *(c == OPT_FIND_MAX_STEP ? &cfg->find_max_step_ns : &cfg->find_max_warmup_ns) = v;
        return H2B_OK;
    case OPT_FIND_MAX_RETRIES:
        if ((rv = h2b_cli_parse_u64(a, 0, 10, &v)) != H2B_OK)
            return bad_value(err, rv, "--find-max-retries", a, "0..10");
        cfg->find_max_retries = (uint32_t)v;
        return H2B_OK;
    case OPT_FIND_MAX_START:
    case OPT_FIND_MAX_LIMIT:
    case OPT_FIND_MAX_PRECISION: {
        double x;
        bool prec = c == OPT_FIND_MAX_PRECISION;
        if ((rv = h2b_cli_parse_double(a, prec ? 0.01 : 1, prec ? 100 : 1e9, &x)) != H2B_OK)
            return bad_value(err, rv, name, a,
                             prec ? "a percentage in 0.01..100" : "requests/s in 1..1e9");
        if (prec)
            cfg->find_max_precision = x / 100;
        else
            *(c == OPT_FIND_MAX_START ? &cfg->find_max_start : &cfg->find_max_limit) = x;
        return H2B_OK;
    }
    case OPT_SLO_WINDOW:
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--slo-window", a, "a duration >= 1ms");
        ps->slo_window = v;
        return H2B_OK;
    case OPT_SLO_ABORT:
        ps->slo_abort = true;
        return H2B_OK;
    case OPT_SLO_GRACE:
        if ((rv = h2b_cli_parse_duration_ns(a, 0, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--slo-grace", a, "a duration");
        ps->slo_grace = v;
        ps->slo_grace_given = true;
        return H2B_OK;
    case OPT_ARRIVAL:
        if (h2b_arrival_parse_kind(a, &cfg->arrival) != H2B_OK)
            return bad_value(err, H2B_ERR_PARSE, "--arrival", a, "constant or poisson");
        return H2B_OK;
    case OPT_SEED:
        if ((rv = h2b_cli_parse_u64(a, 0, UINT64_MAX, &v)) != H2B_OK)
            return bad_value(err, rv, "--seed", a, "an unsigned integer");
        cfg->seed = v;
        return H2B_OK;
    case OPT_TIMEOUT:
        if ((rv = h2b_cli_parse_duration_ns(a, 0, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--timeout", a, "a duration, 0 = none");
        cfg->timeout_ns = v;
        return H2B_OK;
    case OPT_COALESCE:
        if ((rv = h2b_cli_parse_duration_ns(a, 0, H2B_NS_PER_MS, &v)) != H2B_OK)
            return bad_value(err, rv, "--coalesce", a, "a duration up to 1ms, 0 = never");
        cfg->coalesce_ns = v;
        return H2B_OK;
    case 'r':
        if ((rv = h2b_cli_parse_u64(a, 1, 1000000, &v)) != H2B_OK)
            return bad_value(err, rv, "-r/--rate", a,
                             "connections per period, 1..1000000 (request rates: --rps, "
                             "--total-rps)");
        cfg->conn_rate = (uint32_t)v;
        return H2B_OK;
    case OPT_RATE_PERIOD:
        if ((rv = h2b_cli_parse_duration_ns(a, 1000000, MAX_DURATION, &v)) != H2B_OK)
            return bad_value(err, rv, "--rate-period", a, "a duration >= 1ms");
        cfg->rate_period_ns = v;
        return H2B_OK;
    case OPT_RPS: {
        double r;
        if ((rv = h2b_cli_parse_double(a, 0.001, 1e9, &r)) != H2B_OK)
            return bad_value(err, rv, "--rps", a, "requests/s per client, 0.001..1e9");
        cfg->rps = r;
        return H2B_OK;
    }
    case OPT_SCRIPT:
        if ((rv = set_string(&cfg->script_path, a, err)) != H2B_OK ||
            (rv = for_each_line(cfg, a, "--timing-script-file", script_line, err)) != H2B_OK)
            return rv;
        if (cfg->nscript == 0)
            return h2b__load_errf(err, H2B_ERR_INVAL, "%s: no script line", a);
        return H2B_OK;
    default:
        return NOT_MINE;
    }
}

/* Options of one group: CPUs, output files, progress and the text's extras. Returns H2B_OK, an
 * error (said in err), or NOT_MINE for another group's option. */
static int opt_output(struct h2b_load_config *cfg, struct parse_state *ps, int c, const char *a,
                      const char *name, struct h2b_diag *err)
{
    int rv;
    (void)ps;
    (void)name;
    switch (c) {
    case OPT_CPUS:
        if ((rv = h2b_cpu_parse_list(a, &cfg->cpus)) != H2B_OK || CPU_COUNT(&cfg->cpus) == 0)
            return bad_value(err, rv, "--cpus", a, "a CPU list like 1 or 0,2-3");
        if ((rv = set_string(&cfg->cpus_text, a, err)) != H2B_OK)
            return rv;
        cfg->pin = true;
        return H2B_OK;
    case OPT_JSON:
        if ((rv = set_string(&cfg->json_path, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_HDR_LOG:
        if ((rv = set_string(&cfg->hdr_log_path, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_LATENCY:
        cfg->latency_spectrum = true;
        return H2B_OK;
    case OPT_FAIL_ON_ERROR:
        cfg->fail_on_error = true;
        return H2B_OK;
    case OPT_PROGRESS:
        cfg->progress = H2B_LOAD_PROGRESS_ON;
        return H2B_OK;
    case OPT_NO_PROGRESS:
        cfg->progress = H2B_LOAD_PROGRESS_OFF;
        return H2B_OK;
    case 'B':
        if ((rv = set_string(&cfg->base_uri, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_CONNECT_TO:
        if ((rv = parse_connect_to(cfg, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_LOG_FILE:
        if ((rv = set_string(&cfg->log_path, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case 'v':
        cfg->verbose = true;
        return H2B_OK;
    case OPT_VERSION:
        cfg->version = true;
        return PARSE_STOP; /* the rest is not read, as after --help */
    default:
        return NOT_MINE;
    }
}

/* Options of one group: --grpc and its messages. Returns H2B_OK, an error (said in err), or
 * NOT_MINE for another group's option. */
static int opt_grpc(struct h2b_load_config *cfg, struct parse_state *ps, int c, const char *a,
                    struct h2b_diag *err)
{
    uint64_t v;
    int rv;
    switch (c) {
    case OPT_GRPC:
        free(cfg->grpc_method);
        cfg->grpc_method = NULL;
        rv = h2b_load_grpc_method(a, &cfg->grpc_method, &cfg->grpc_kind);
        if (rv == H2B_ERR_NOMEM)
            return h2b__load_errf(err, rv, "out of memory");
        if (rv != H2B_OK)
            return bad_value(err, H2B_ERR_PARSE, "--grpc", a,
                             "/SERVICE/METHOD, like /h2bench.Echo/Unary");
        return H2B_OK;
    case OPT_GRPC_DATA:
        return set_string(&cfg->grpc_data_path, a, err);
    case OPT_GRPC_SIZE:
        if ((rv = h2b_cli_parse_size(a, 0, MAX_BODY, &v)) != H2B_OK)
            return bad_value(err, rv, "--grpc-size", a, "payload bytes, 0..256M");
        cfg->grpc_size = v;
        ps->grpc_size_given = true;
        return H2B_OK;
    case OPT_GRPC_MESSAGES:
        if ((rv = h2b_cli_parse_u64(a, 1, H2B_LOAD_GRPC_MAX_MESSAGES, &v)) != H2B_OK)
            return bad_value(err, rv, "--grpc-messages", a, "1..1000000");
        cfg->grpc_messages = (uint32_t)v;
        ps->grpc_messages_given = true;
        return H2B_OK;
    default:
        return NOT_MINE;
    }
}

/* --grpc once every other option is known: what it cannot go with, the path of every URI, the
 * request headers gRPC needs (first, so that -H can still replace them) and the body of every
 * call, built here once. */
static int build_grpc(struct h2b_load_config *cfg, const struct parse_state *ps,
                      struct h2b_diag *err)
{
    if (!cfg->grpc_method) {
        if (cfg->grpc_data_path || ps->grpc_size_given || ps->grpc_messages_given)
            return h2b__load_errf(
                err, H2B_ERR_INVAL,
                "--grpc-data, --grpc-size and --grpc-messages need --grpc METHOD");
        return H2B_OK;
    }
    if (cfg->h1 || cfg->h3 || cfg->raw_request || cfg->alpn)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--grpc: gRPC runs over HTTP/2 (h2c or TLS): not with --h1, -p "
                              "http/1.1, --h3, --raw or --npn-list");
    if (cfg->body || ps->input_file || cfg->nscript)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--grpc: the method is every call's path and the messages its body: "
                              "not with -d, -i or --timing-script-file");
    if (cfg->grpc_data_path && ps->grpc_size_given)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--grpc-data and --grpc-size both give the message: use one");
    for (size_t i = 0; i < cfg->nuris; i++) {
        struct h2b_load_uri *u = &cfg->uris[i];
        if (strcmp(u->path, "/") != 0)
            return h2b__load_errf(err, H2B_ERR_INVAL,
                                  "--grpc %s gives the path: the URI '%s://%s%s' must have none",
                                  cfg->grpc_method, u->scheme, u->authority, u->path);
        char *p = strdup(cfg->grpc_method);
        if (!p)
            return h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
        free(u->path);
        u->path = p;
    }
    uint8_t *msg = NULL;
    size_t msg_len = 0;
    int rv;
    if (cfg->grpc_data_path) {
        rv = read_file(cfg->grpc_data_path, MAX_BODY, &msg, &msg_len);
        if (rv != H2B_OK)
            return h2b__load_errf(err, H2B_ERR_NOTFOUND, "--grpc-data %s: %s", cfg->grpc_data_path,
                                  rv == H2B_ERR_IO ? strerror(errno) : h2b_strerror(rv));
    }
    rv = h2b_load_grpc_body(cfg->grpc_kind, cfg->grpc_data_path ? msg : NULL, msg_len,
                            cfg->grpc_size, cfg->grpc_messages, MAX_BODY, &cfg->body,
                            &cfg->body_len, &cfg->grpc_expect);
    free(msg);
    if (rv == H2B_ERR_RANGE)
        return h2b__load_errf(err, rv,
                              "--grpc: %u messages of that size are over the 256 MiB a request "
                              "body may have",
                              cfg->grpc_messages);
    if (rv == H2B_OK)
        rv = h2b_load_grpc_reply(cfg->grpc_kind, cfg->grpc_size, cfg->grpc_messages, cfg->body,
                                 cfg->body_len, cfg->grpc_expect, &cfg->grpc_reply);
    if (rv != H2B_OK)
        return h2b__load_errf(err, rv, "out of memory");
    /* gRPC's request fields go first: a later -H with the same name replaces them (build_nva) */
    size_t n = cfg->nheaders;
    if ((rv = add_header(cfg, "content-type: application/grpc", err)) != H2B_OK ||
        (rv = add_header(cfg, "te: trailers", err)) != H2B_OK)
        return rv;
    struct h2b_load_header g[2] = {cfg->headers[n], cfg->headers[n + 1]};
    memmove(cfg->headers + 2, cfg->headers, n * sizeof(*cfg->headers));
    cfg->headers[0] = g[0];
    cfg->headers[1] = g[1];
    return H2B_OK;
}

/* Options of one group: the protocol, the engine and TLS. Returns H2B_OK, an error (said in err),
 * or NOT_MINE for another group's option. */
static int opt_protocol(struct h2b_load_config *cfg, struct parse_state *ps, int c, const char *a,
                        const char *name, struct h2b_diag *err)
{
    int rv;
    switch (c) {
    case OPT_H3:
#ifdef H2B_HAVE_H3
        cfg->h3 = true;
        return H2B_OK;
#else
        return h2b__load_errf(err, H2B_ERR_UNSUPPORTED,
                              "--h3: HTTP/3 is not available in this build (configured "
                              "with -DH2B_H3=OFF)");
#endif
    case OPT_CIPHERS:
    case OPT_TLS13_CIPHERS:
    case OPT_GROUPS:
        if ((rv = set_string(c == OPT_CIPHERS         ? &cfg->ciphers
                             : c == OPT_TLS13_CIPHERS ? &cfg->tls13_ciphers
                                                      : &cfg->groups,
                             a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_KTLS:
        cfg->ktls = true;
        return H2B_OK;
    case OPT_H1:
        cfg->h1 = true;
        return H2B_OK;
    case OPT_RAW:
        if ((rv = parse_raw(a, cfg, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_ENGINE:
        if (strcmp(a, "fast") == 0)
            cfg->engine = H2B_LOAD_ENGINE_FAST;
        else if (strcmp(a, "nghttp2") == 0)
            cfg->engine = H2B_LOAD_ENGINE_NGHTTP2;
        else
            return bad_value(err, H2B_ERR_PARSE, "--engine", a, "fast or nghttp2");
        return H2B_OK;
    case OPT_IO:
        if (strcmp(a, "epoll") == 0)
            cfg->io = H2B_LOAD_IO_EPOLL;
        else if (strcmp(a, "uring") == 0)
            cfg->io = H2B_LOAD_IO_URING;
        else
            return bad_value(err, H2B_ERR_PARSE, "--io", a, "epoll or uring");
        return H2B_OK;
    case 'p':
        if (strcmp(a, "http/1.1") == 0)
            ps->h1_clear = true;
        else if (strcmp(a, "h2c") == 0)
            ps->h1_clear = false;
        else
            return bad_value(err, H2B_ERR_PARSE, "-p", a, "h2c or http/1.1");
        return H2B_OK;
    case OPT_NPN:
        if ((rv = alpn_wire(cfg, a, err)) != H2B_OK)
            return rv;
        return H2B_OK;
    case OPT_QUIC:
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%s: an h2load QUIC knob that h2bench load's --h3 does not have",
                              name);
    default:
        return NOT_MINE;
    }
}

/* The load model, protocol and TLS options given together: what h2load refuses, and what an
 * engine here does not have. Also resolves --base-uri. */
static int check_models(struct h2b_load_config *cfg, const struct parse_state *ps,
                        struct h2b_diag *err)
{
    int rv;
    if (cfg->h3 && (cfg->conn_rate || cfg->rps > 0 || cfg->nscript || cfg->log_path))
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--h3: -r, --rps, --timing-script-file and --log-file are h2-engine "
                              "features the HTTP/3 engine does not have yet");
    if (cfg->h3 && !cfg->uris[0].tls)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--h3 needs an https:// URI (QUIC is always encrypted)");
    if (ps->h1_clear && !cfg->uris[0].tls)
        cfg->h1 = true; /* h2load: -p applies to http:// only */
    if (cfg->h1 && cfg->h3)
        return h2b__load_errf(err, H2B_ERR_INVAL, "--h1 and --h3: pick one protocol");
    if ((rv = check_raw(cfg, err)) != H2B_OK)
        return rv;
    if (cfg->h1 && (cfg->conn_rate || cfg->rps > 0 || cfg->nscript || cfg->log_path))
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--h1: -r, --rps, --timing-script-file and --log-file are h2-engine "
                              "features the HTTP/1.1 engine does not have yet");
    if (ps->input_file && cfg->nscript)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-i and --timing-script-file both give the URIs: use one");
    if (cfg->nscript && cfg->rps > 0)
        return h2b__load_errf(
            err, H2B_ERR_INVAL,
            "--timing-script-file and --rps are mutually exclusive (as in h2load)");
    if ((cfg->rate > 0) + (cfg->rps > 0) + (cfg->nscript > 0) > 1)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--total-rps, --rps and --timing-script-file are different load "
                              "models: give one");
    if (cfg->conn_shape_text &&
        (rv = build_conn_shape(cfg, ps->conn_shape_is_step, ps->connections_given, err)) != H2B_OK)
        return rv;
    /* h2load's rules for -r (a connection ramp) */
    if (cfg->conn_rate && cfg->duration_ns)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-r, -D: they are mutually exclusive (as in h2load)");
    if (cfg->conn_rate && cfg->conn_rate < cfg->threads)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-r %u is below -t %u: the connection rate must be at least the "
                              "number of threads",
                              cfg->conn_rate, cfg->threads);
    if (cfg->conn_rate > cfg->connections)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-r %u is above -c %u: the connection rate must be at most the "
                              "number of clients",
                              cfg->conn_rate, cfg->connections);
    if (cfg->base_uri && (rv = apply_base_uri(cfg, err)) != H2B_OK)
        return rv;
    if ((rv = check_tls_options(cfg, err)) != H2B_OK)
        return rv;
    return H2B_OK;
}

/* The shape, the objectives and the capacity search given together, and the intervals they
 * need. */
static int check_objectives(struct h2b_load_config *cfg, const struct parse_state *ps,
                            struct h2b_diag *err)
{
    int rv;
    if (cfg->shape_text && (rv = build_shape(cfg, ps->shape_is_step, err)) != H2B_OK)
        return rv;
    if (cfg->warmup_ns && !cfg->duration_ns)
        return h2b__load_errf(err, H2B_ERR_INVAL, "--warm-up-time needs -D");
    if (cfg->find_max && (!cfg->slo || ps->slo_window || cfg->rate > 0 || cfg->shape_text ||
                          cfg->rps > 0 || cfg->nscript || cfg->duration_ns || cfg->warmup_ns))
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--find-max needs --slo and sets the rate and the length of each "
                              "step itself: no --total-rps, --stages, --step, --rps, "
                              "--timing-script-file, -D, --warm-up-time or --slo-window");
    if (cfg->find_max && cfg->find_max_limit < cfg->find_max_start)
        return h2b__load_errf(err, H2B_ERR_INVAL, "--find-max-limit is below --find-max-start");
    if (cfg->find_max)
        cfg->duration_ns = cfg->find_max_step_ns; /* -n is not used: each step is timed */
    if (!cfg->slo && (ps->slo_window || ps->slo_abort || ps->slo_grace_given))
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--slo-window, --slo-abort and --slo-grace need --slo");
    if (ps->slo_abort && !ps->slo_window)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--slo-abort judges windows: give --slo-window too");
    if (ps->slo_window && !cfg->interval_ns)
        cfg->interval_ns = ps->slo_window < H2B_NS_PER_SEC ? ps->slo_window : H2B_NS_PER_SEC;
    if (ps->slo_window && ps->slo_window % cfg->interval_ns)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--slo-window must be a whole number of --interval (%.3fs)",
                              (double)cfg->interval_ns / 1e9);
    if (cfg->slo) {
        cfg->slo->window_ns = ps->slo_window;
        cfg->slo->abort = ps->slo_abort;
        cfg->slo->grace_ns = ps->slo_grace;
    }
    return H2B_OK;
}

int h2b_load_config_parse(struct h2b_load_config *cfg, int argc, char **argv, struct h2b_diag *err)
{
    struct parse_state ps = {.slo = cfg->slo};
    int rv = H2B_OK;
    optind = 0; /* glibc: full re-initialisation, so tests can parse repeatedly */
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, ":n:c:m:t:D:H:d:i:T:N:w:W:f:r:B:p:vh", long_options, NULL);
        if (c == -1)
            break;
        const char *a = optarg;
        const char *name = argv[optind - 1];
        int g = opt_workload(cfg, &ps, c, a, name, err);
        if (g == NOT_MINE)
            g = opt_rate(cfg, &ps, c, a, name, err);
        if (g == NOT_MINE)
            g = opt_output(cfg, &ps, c, a, name, err);
        if (g == NOT_MINE)
            g = opt_protocol(cfg, &ps, c, a, name, err);
        if (g == NOT_MINE)
            g = opt_grpc(cfg, &ps, c, a, err);
        if (g == PARSE_STOP)
            return H2B_OK;
        if (g != NOT_MINE) {
            if (g != H2B_OK)
                return g;
            continue;
        }
        switch (c) {
        case 'h':
            cfg->help = true;
            return H2B_OK;
        case ':':
            return h2b__load_errf(err, H2B_ERR_INVAL, "option '%s' needs a value",
                                  argv[optind - 1]);
        default: {
            bool needs_value;
            const char *near = h2b_cli_suggest(argv[optind - 1], long_options, &needs_value);
            if (near) /* "Did you mean", as h2load says it */
                return h2b__load_errf(err, H2B_ERR_INVAL,
                                      "unknown option '%s' (did you mean --%s?)", argv[optind - 1],
                                      near);
            return h2b__load_errf(err, H2B_ERR_INVAL, "unknown option '%s'", argv[optind - 1]);
        }
        }
    }
    /* As in h2load, -i and --timing-script-file replace the URIs of the command line. */
    if (!ps.input_file && !cfg->nscript) {
        for (int i = optind; i < argc; i++)
            if ((rv = add_uri(cfg, argv[i], err)) != H2B_OK)
                return rv;
    }
    if (cfg->nuris == 0)
        return h2b__load_errf(err, H2B_ERR_INVAL, "no URI given");
    if ((rv = check_models(cfg, &ps, err)) != H2B_OK)
        return rv;
    if ((rv = build_grpc(cfg, &ps, err)) != H2B_OK)
        return rv;
    if (cfg->nscript) {
        /* h2load: -n per client, at most the script's length, which is the default */
        if (!cfg->requests_given || cfg->requests > cfg->nscript)
            cfg->requests = cfg->nscript;
        cfg->requests *= cfg->connections;
    }
    if (cfg->threads > cfg->connections)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-t %u is more than -c %u: every thread needs a connection",
                              cfg->threads, cfg->connections);
    if ((rv = check_objectives(cfg, &ps, err)) != H2B_OK)
        return rv;
    if (!cfg->interval_ns &&
        (cfg->interval_json_path || cfg->hdr_log_path || cfg->shape.nseg || cfg->conn_shape.nseg))
        cfg->interval_ns = H2B_NS_PER_SEC;
    if (!cfg->duration_ns && cfg->rate == 0 && cfg->requests < cfg->connections)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-n %llu is less than -c %u: every connection needs a request",
                              (unsigned long long)cfg->requests, cfg->connections);
    if (cfg->duration_ns)
        cfg->requests = 0; /* h2load: -n is ignored with -D */
    if (cfg->rate > 0 && cfg->rate < cfg->threads && !cfg->shape.nseg)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--total-rps %g is below -t %u: each thread needs at least 1 "
                              "request/s",
                              cfg->rate, cfg->threads);
    /* Last, after every other check, so a usage error never truncates an earlier log. */
    if (cfg->log_path) {
        cfg->log_fd = open(cfg->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (cfg->log_fd < 0)
            return h2b__load_errf(err, H2B_ERR_INVAL, "--log-file %s: %s", cfg->log_path,
                                  strerror(errno));
    }
    return H2B_OK;
}
