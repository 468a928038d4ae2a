/*
 * fuzz_json_locate.c - the position scanner behind file:line:column diagnostics, on arbitrary
 * text and paths.
 *
 * Input: a path, a newline, then JSON text. The scanner must never read out of bounds, and it
 * must agree with jansson: when jansson parses the text and the path names a value in the
 * parsed document, the scanner finds it at a valid line and column. (Texts with backslashes are
 * left out of the agreement check: paths compare raw key bytes, jansson decodes escapes.)
 */
#include "core/error.h"
#include "core/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value at path in doc, walking the same syntax as h2b_json_locate; NULL if none. */
static json_t *walk(json_t *doc, const char *path)
{
    const char *s = path;
    while (doc && *s) {
        if (*s == '[') {
            char *end;
            unsigned long i = strtoul(s + 1, &end, 10);
            if (end == s + 1 || *end != ']')
                return NULL;
            doc = json_is_array(doc) ? json_array_get(doc, i) : NULL;
            s = end + 1;
        } else {
            if (*s == '.' && s != path)
                s++;
            size_t n = strcspn(s, ".[]");
            if (n == 0)
                return NULL;
            doc = json_is_object(doc) ? json_object_getn(doc, s, n) : NULL;
            s += n;
        }
    }
    return doc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (nl == NULL)
        return 0;
    size_t plen = (size_t)(nl - data), tlen = size - plen - 1;
    char *path = malloc(plen + 1), *text = malloc(tlen + 1);
    if (path == NULL || text == NULL)
        goto out;
    memcpy(path, data, plen);
    path[plen] = '\0';
    memcpy(text, nl + 1, tlen);
    text[tlen] = '\0';
    int line = 0, column = 0;
    int rv = h2b_json_locate(text, path, &line, &column);
    if (rv == H2B_OK && (line < 1 || column < 1))
        abort();
    json_t *doc = json_loads(text, JSON_DECODE_ANY, NULL);
    if (doc && memchr(text, '\\', tlen) == NULL && strlen(path) == plen && walk(doc, path) &&
        rv != H2B_OK && rv != H2B_ERR_INVAL)
        abort();
    json_decref(doc);
out:
    free(path);
    free(text);
    return 0;
}
