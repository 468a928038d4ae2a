/*
 * token.c - the token character class table of token.h, built at compile time from the rule
 * itself (a macro applied to every byte value), so no hand-written row can be wrong.
 */
#include "core/token.h"

#define SYMBOL(c)                                                                                  \
    ((c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' || (c) == '\'' ||          \
     (c) == '*' || (c) == '+' || (c) == '-' || (c) == '.' || (c) == '^' || (c) == '_' ||           \
     (c) == '`' || (c) == '|' || (c) == '~')
#define CLS(c)                                                                                     \
    (((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') || SYMBOL(c)                         \
         ? H2B_TOKEN | H2B_TOKEN_LOWER                                                             \
     : ((c) >= 'A' && (c) <= 'Z') ? H2B_TOKEN                                                      \
                                  : 0)
#define R4(b) CLS(b), CLS((b) + 1), CLS((b) + 2), CLS((b) + 3)
#define R16(b) R4(b), R4((b) + 4), R4((b) + 8), R4((b) + 12)
#define R64(b) R16(b), R16((b) + 16), R16((b) + 32), R16((b) + 48)

const uint8_t h2b_token_class[256] = {R64(0), R64(64), R64(128), R64(192)};
