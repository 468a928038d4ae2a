/*
 * test_token.c - the token class table (harness/core/token.h) against RFC 9110's tchar rule
 * written out again here, for all 256 byte values: letters, digits and the 15 symbols are
 * token characters; uppercase letters are not HTTP/2 name characters; everything else
 * (controls, space, separators, DEL, bytes >= 0x80) is neither.
 */
#include "core/token.h"
#include "test.h"

#include <string.h>

int main(void)
{
    static const char symbols[] = "!#$%&'*+-.^_`|~";
    int tokens = 0, lower = 0, wrong = 0;
    for (int c = 0; c < 256; c++) {
        bool upper = c >= 'A' && c <= 'Z';
        bool want = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || upper ||
                    (c != 0 && memchr(symbols, c, sizeof symbols - 1) != NULL);
        bool want_lower = want && !upper;
        tokens += h2b_token_char((uint8_t)c);
        lower += h2b_token_lower((uint8_t)c);
        if (h2b_token_char((uint8_t)c) != want || h2b_token_lower((uint8_t)c) != want_lower)
            wrong++;
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(tokens, 26 + 26 + 10 + 15);
    CHECK_EQ_INT(lower, 26 + 10 + 15);
    CHECK(!h2b_token_char(' ') && !h2b_token_char(':') && !h2b_token_char(0x7f));
    CHECK(!h2b_token_char(0x80) && !h2b_token_char(0xff) && !h2b_token_char(0));
    CHECK(h2b_token_char('Z') && !h2b_token_lower('Z') && h2b_token_lower('~'));
    return test_report();
}
