/*
 * test_url.c - the one URL parser (harness/core/url.c): names, IPv4, IPv6 with and without a
 * zone, default and explicit ports, paths, queries and fragments, the origin-only form, and bad
 * input (each with the column and the words of its message).
 */
#include "test.h"
#include "core/url.h"

#include "core/error.h"

struct good {
    const char *text;
    unsigned flags;
    const char *scheme, *host, *port, *authority, *path; /* path NULL: none written */
    bool tls, ipv6, port_given;
};

static const struct good goods[] = {
    {"http://example.org", 0, "http", "example.org", "80", "example.org", NULL, 0, 0, 0},
    {"https://example.org", 0, "https", "example.org", "443", "example.org", NULL, 1, 0, 0},
    {"HTTPS://Example.org:8443/", 0, "https", "Example.org", "8443", "Example.org:8443", "/", 1, 0,
     1},
    {"http://127.0.0.1:8080/hello", 0, "http", "127.0.0.1", "8080", "127.0.0.1:8080", "/hello", 0,
     0, 1},
    {"http://[::1]:8080/path", 0, "http", "::1", "8080", "[::1]:8080", "/path", 0, 1, 1},
    {"http://[::1]", H2B_URL_ORIGIN, "http", "::1", "80", "[::1]", NULL, 0, 1, 0},
    {"https://[fe80::1%25lo]:443", H2B_URL_ORIGIN, "https", "fe80::1%lo", "443",
     "[fe80::1%25lo]:443", NULL, 1, 1, 1},
    {"http://[2001:db8::192.0.2.1]/", 0, "http", "2001:db8::192.0.2.1", "80",
     "[2001:db8::192.0.2.1]", "/", 0, 1, 0},
    {"http://h?x=1#frag", 0, "http", "h", "80", "h", "?x=1", 0, 0, 0},
    {"https://example.org/a/b?x=1#frag", 0, "https", "example.org", "443", "example.org",
     "/a/b?x=1", 1, 0, 0},
    {"http://h:0080/", 0, "http", "h", "80", "h:0080", "/", 0, 0, 1},
    {"http://h:65535", 0, "http", "h", "65535", "h:65535", NULL, 0, 0, 1},
    {"http://my_host.local-1~x:1", 0, "http", "my_host.local-1~x", "1", "my_host.local-1~x:1", NULL,
     0, 0, 1},
};

struct bad {
    const char *text;
    unsigned flags;
    int column;
    const char *words; /* a part of the message */
};

static const struct bad bads[] = {
    {"", 0, 1, "expected http:// or https://"},
    {"example.org/x", 0, 1, "expected http:// or https://"},
    {"//h/", 0, 1, "expected http:// or https://"},
    {"ftp://h/", 0, 1, "unsupported scheme"},
    {"http:/x://h", 0, 1, "expected http:// or https://"},
    {"http://", 0, 8, "expected a host"},
    {"http:///", 0, 8, "expected a host"},
    {"http://:80/", 0, 8, "expected a host before ':'"},
    {"http://h:/", 0, 10, "expected a port number"},
    {"http://h:0/", 0, 10, "port 0"},
    {"http://h:65536/", 0, 10, "out of range"},
    {"http://h:99999999999999999999/", 0, 10, "out of range"},
    {"http://h:8a/", 0, 11, "expected a port number"},
    {"http://h:1:2/", 0, 11, "in brackets"},
    {"http://::1:8080/", 0, 8, "expected a host before ':'"},
    {"http://fe80::1/", 0, 13, "in brackets"},
    {"http://[::1", 0, 12, "expected ']'"},
    {"http://[::1]x/", 0, 13, "after ']'"},
    {"http://[]/", 0, 9, "inside the brackets"},
    {"http://[::g]/", 0, 9, "inside the brackets"},
    {"http://[1.2.3.4]/", 0, 9, "inside the brackets"},
    {"http://[fe80::1%lo]/", 0, 16, "%25"},
    {"http://[fe80::1%25]/", 0, 19, "zone id"},
    {"http://[fe80::1%25l/o]/", 0, 20, "expected ']'"},
    {"http://[fe80::1%25l:o]/", 0, 20, "zone id"},
    {"http://user@h/", 0, 12, "user information"},
    {"http://user:pw@h:80/", 0, 15, "user information"},
    {"http://h o/", 0, 9, "host name"},
    {"http://h%41/", 0, 9, "host name"},
    {"http://h/a b", 0, 11, "printable ASCII"},
    {"http://h/a\tb", 0, 11, "printable ASCII"},
    {"http://h/\x80", 0, 10, "printable ASCII"},
    {"http://h/x", H2B_URL_ORIGIN, 9, "without a path"},
    {"http://h:1/", H2B_URL_ORIGIN, 11, "without a path"},
    {"http://h?q", H2B_URL_ORIGIN, 9, "without a path"},
    {"http://h#f", H2B_URL_ORIGIN, 9, "without a path"},
};

static void parses(void)
{
    for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
        const struct good *g = &goods[i];
        struct h2b_url u;
        struct h2b_diag d = {0};
        int rc = h2b_url_parse(g->text, g->flags, &u, &d);
        CHECK_EQ_INT(rc, H2B_OK);
        if (rc != H2B_OK) {
            fprintf(stderr, "  %s: %s\n", g->text, d.message);
            continue;
        }
        CHECK_STR(u.scheme, g->scheme);
        CHECK_STR(u.host, g->host);
        CHECK_STR(u.port_str, g->port);
        CHECK_EQ_U64(u.port, strtoul(g->port, NULL, 10));
        CHECK_STR(u.authority, g->authority);
        CHECK_EQ_INT(u.tls, g->tls);
        CHECK_EQ_INT(u.ipv6, g->ipv6);
        CHECK_EQ_INT(u.port_given, g->port_given);
        if (g->path) {
            CHECK(u.path != NULL && u.path >= g->text);
            CHECK_EQ_U64(u.path_len, strlen(g->path));
            CHECK(u.path && memcmp(u.path, g->path, u.path_len) == 0);
        } else {
            CHECK(u.path == NULL);
            CHECK_EQ_U64(u.path_len, 0);
        }
    }
}

static void rejects(void)
{
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        const struct bad *b = &bads[i];
        struct h2b_url u;
        memset(&u, 0x5a, sizeof(u));
        struct h2b_diag d = {0};
        CHECK_EQ_INT(h2b_url_parse(b->text, b->flags, &u, &d), H2B_ERR_PARSE);
        CHECK_EQ_INT(d.column, b->column);
        CHECK_EQ_INT(d.line, 0);
        CHECK_STR(d.file, "");
        bool has = strstr(d.message, b->words) != NULL;
        CHECK(has);
        if (!has || d.column != b->column)
            fprintf(stderr, "  '%s': column %d: %s\n", b->text, d.column, d.message);
        CHECK(strstr(d.message, "(byte ") != NULL);
        CHECK_EQ_INT(u.port, 0x5a5a); /* untouched on failure */
        /* no diag: the same code, nothing to write */
        CHECK_EQ_INT(h2b_url_parse(b->text, b->flags, &u, NULL), H2B_ERR_PARSE);
    }
}

static void authorities(void)
{
    struct h2b_url u;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_url_parse_authority("localhost", 9, &u, &d), H2B_OK);
    CHECK_STR(u.host, "localhost");
    CHECK(!u.port_given);
    CHECK_EQ_INT(u.port, 0);
    CHECK_STR(u.port_str, "");
    CHECK_STR(u.scheme, "");
    CHECK_EQ_INT(h2b_url_parse_authority("[::1]:9000", 10, &u, &d), H2B_OK);
    CHECK_STR(u.host, "::1");
    CHECK(u.ipv6 && u.port_given);
    CHECK_STR(u.port_str, "9000");
    /* only n bytes count */
    CHECK_EQ_INT(h2b_url_parse_authority("h:81/rest", 4, &u, &d), H2B_OK);
    CHECK_STR(u.authority, "h:81");
    CHECK_EQ_INT(h2b_url_parse_authority("", 0, &u, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_url_parse_authority("::1", 3, &u, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_url_parse_authority("h:1:2", 5, &u, &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "brackets") != NULL);
    CHECK_EQ_INT(h2b_url_parse_authority("h\0x", 3, &u, &d), H2B_ERR_PARSE);
}

static void limits(void)
{
    char text[400], origin[64];
    struct h2b_url u;
    struct h2b_diag d = {0};
    /* a 255-byte host is a host; 256 bytes is not */
    memcpy(text, "http://", 7);
    memset(text + 7, 'a', 255);
    text[7 + 255] = '\0';
    CHECK_EQ_INT(h2b_url_parse(text, 0, &u, &d), H2B_OK);
    CHECK_EQ_U64(strlen(u.host), 255);
    text[7 + 255] = 'a';
    text[7 + 256] = '\0';
    CHECK_EQ_INT(h2b_url_parse(text, 0, &u, &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "longer than 255") != NULL);
    /* origin: scheme://authority as written */
    CHECK_EQ_INT(h2b_url_parse("HTTP://[::1]:8080/x", 0, &u, &d), H2B_OK);
    CHECK_EQ_INT(h2b_url_origin(&u, origin, sizeof(origin)), H2B_OK);
    CHECK_STR(origin, "http://[::1]:8080");
    CHECK_EQ_INT(h2b_url_origin(&u, origin, 8), H2B_ERR_RANGE);
    CHECK_STR(origin, "http://");
}

int main(void)
{
    parses();
    rejects();
    authorities();
    limits();
    return test_report();
}
