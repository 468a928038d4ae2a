/*
 * fuzz_url_parse.c - the one URL parser (harness/core/url.c) on arbitrary bytes: as a whole URL
 * (plain and origin-only) and as an authority of exactly size bytes (no terminating NUL, so an
 * over-read shows under ASan). Beyond memory safety it checks the contracts: an accepted URL's
 * fields are in range, its path points into the input, its authority is the input's bytes after
 * "://", the origin form parses back to the same host and port, and a rejected one leaves
 * *out untouched with a message that ends in the byte it names.
 */
#include "fuzz_input.h"
#include "core/url.h"

#include "core/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const char *text, size_t size, const struct h2b_url *u)
{
    if (u->port == 0 || strlen(u->host) == 0 || strlen(u->host) > H2B_URL_HOST_MAX)
        abort();
    if ((unsigned long)u->port != strtoul(u->port_str, NULL, 10))
        abort();
    if (strcmp(u->scheme, u->tls ? "https" : "http") != 0)
        abort();
    const char *sep = strstr(text, "://");
    if (!sep || strncmp(sep + 3, u->authority, strlen(u->authority)) != 0)
        abort();
    if (strchr(u->authority, '@') || (u->ipv6 && u->authority[0] != '['))
        abort();
    if (u->path) {
        if (u->path < text || u->path + u->path_len > text + size || u->path_len == 0)
            abort();
        for (size_t i = 0; i < u->path_len; i++)
            if ((unsigned char)u->path[i] <= 0x20 || (unsigned char)u->path[i] >= 0x7f ||
                u->path[i] == '#')
                abort();
    } else if (u->path_len != 0) {
        abort();
    }
    char origin[16 + H2B_URL_AUTHORITY_MAX];
    struct h2b_url back;
    if (h2b_url_origin(u, origin, sizeof(origin)) != H2B_OK ||
        h2b_url_parse(origin, H2B_URL_ORIGIN, &back, NULL) != H2B_OK)
        abort();
    if (strcmp(back.host, u->host) != 0 || back.port != u->port || back.tls != u->tls ||
        back.ipv6 != u->ipv6)
        abort();
}

static void check_rejected(const struct h2b_url *u, const struct h2b_diag *d)
{
    static const struct h2b_url fill = {.port = 0x5a5a};
    if (u->port != fill.port || d->line != 0 || d->column < 1 ||
        !strstr(d->message, " of the URL)"))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_input_text(data, size);
    if (!text)
        return 0;
    size_t len = strlen(text); /* an embedded NUL ends the URL, as for any C string */
    for (unsigned flags = 0; flags <= H2B_URL_ORIGIN; flags++) {
        struct h2b_url u = {.port = 0x5a5a};
        struct h2b_diag d = {0};
        int rc = h2b_url_parse(text, flags, &u, &d);
        if (rc == H2B_OK) {
            check_accepted(text, len, &u);
            if ((flags & H2B_URL_ORIGIN) && u.path)
                abort();
        } else if (rc == H2B_ERR_PARSE) {
            check_rejected(&u, &d);
            if ((size_t)d.column > len + 1)
                abort();
        } else {
            abort();
        }
    }
    /* the authority alone, exactly size bytes with nothing after them */
    uint8_t *exact = malloc(size ? size : 1);
    if (exact) {
        memcpy(exact, data, size);
        struct h2b_url u = {.port = 0x5a5a};
        struct h2b_diag d = {0};
        int rc = h2b_url_parse_authority((const char *)exact, size, &u, &d);
        if (rc == H2B_OK) {
            if (strlen(u.authority) != size || memcmp(u.authority, exact, size) != 0 ||
                (u.port_given ? u.port == 0 : u.port != 0) || strlen(u.host) == 0)
                abort();
        } else if (rc == H2B_ERR_PARSE) {
            check_rejected(&u, &d);
        } else {
            abort();
        }
        free(exact);
    }
    free(text);
    return 0;
}
