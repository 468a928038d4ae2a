/*
 * token.h - RFC 9110's token characters (tchar, section 5.6.2) as one class table, for every
 * check of a field name or a method: the HTTP/1.1 parser (h1parse.c), the server's HTTP/2
 * request check (servers/h2ref/h2_reqcheck.h) and the load client's response check
 * (harness/load/h2conn.h).
 *
 * Approach: one 256-entry table of class bits, looked up once per byte. A token character is
 * a letter, a digit or one of !#$%&'*+-.^_`|~; HTTP/2 field names are the lowercase ones
 * (RFC 9113 section 8.2.1).
 * Rejected: testing ranges and then strchr over the 15 symbols, as the three parsers did each in
 * their own way: a response field name cost the load client ~115 instructions (callgrind, 1000
 * connections x 4 streams against nghttpd), against ~40 with the table.
 */
#ifndef H2B_CORE_TOKEN_H
#define H2B_CORE_TOKEN_H

#include <stdbool.h>
#include <stdint.h>

enum {
    H2B_TOKEN = 1,       /* a token character */
    H2B_TOKEN_LOWER = 2, /* a token character that is not an uppercase letter */
};

extern const uint8_t h2b_token_class[256];

static inline bool h2b_token_char(uint8_t c)
{
    return (h2b_token_class[c] & H2B_TOKEN) != 0;
}

/* A character of an HTTP/2 field name: a token character, not uppercase. */
static inline bool h2b_token_lower(uint8_t c)
{
    return (h2b_token_class[c] & H2B_TOKEN_LOWER) != 0;
}

#endif
