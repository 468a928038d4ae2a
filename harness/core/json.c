/*
 * json.c - loading, locating, validating and atomically writing JSON files.
 *
 * jansson parses and reports syntax errors with a line and column, but a parsed json_t carries
 * no positions, so a well-formed file with a wrong value ("connections": -3) would otherwise get
 * an error without a place. Rather than writing a second full parser that records positions for
 * every node, we keep the file's text and, only when something is wrong, re-scan it with a small
 * skip-only scanner that walks the path ("matrix.connections[2]") to the value's first byte.
 * Errors are rare, so the cost of re-scanning is irrelevant, and jansson remains the parser of
 * record. Columns count characters (UTF-8 lead bytes), as jansson does.
 *
 * jansson reports syntax errors at the token's last character; we move the column back to the
 * token's first character when jansson quotes the token ("near 'tru'"), which is where an editor
 * should put the cursor.
 */
#include "core/json.h"
#include "core/error.h"
#include "core/fs.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 512
#define SCAN_MAX_DEPTH 2048 /* jansson's own nesting limit */

/* Line and column (1-based, characters) of byte offset in text. */
static void offset_position(const char *text, size_t offset, int *line, int *column)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < offset && text[i]; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *column = c;
}

/* ---- the locating scanner ---------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p at '"'; returns the byte after the closing quote, or NULL. */
static const char *skip_string(const char *p)
{
    p++;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1])
            p++;
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *skip_value(const char *p, int depth);

/* p at '{' or '['; returns the byte after the matching close, or NULL. */
static const char *skip_container(const char *p, int depth)
{
    char close = *p == '{' ? '}' : ']';
    bool object = *p == '{';
    p = skip_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (*p != '"' || (p = skip_string(p)) == NULL)
                return NULL;
            p = skip_ws(p);
            if (*p != ':')
                return NULL;
            p++;
        }
        if ((p = skip_value(p, depth + 1)) == NULL)
            return NULL;
        p = skip_ws(p);
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = skip_ws(p + 1);
    }
}

static const char *skip_value(const char *p, int depth)
{
    if (depth > SCAN_MAX_DEPTH)
        return NULL;
    p = skip_ws(p);
    if (*p == '"')
        return skip_string(p);
    if (*p == '{' || *p == '[')
        return skip_container(p, depth);
    const char *start = p; /* number, true, false, null */
    while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '-' || *p == '+' ||
           *p == '.' || *p == 'E')
        p++;
    return p > start ? p : NULL;
}

/* One step of a path: a key (key != NULL, klen bytes) or an array index. */
struct step {
    const char *key;
    size_t klen;
    size_t index;
};

/* Parses the step at *s and advances *s. Returns H2B_OK or H2B_ERR_INVAL. */
static int next_step(const char **s, bool first, struct step *st)
{
    const char *p = *s;
    if (*p == '[') {
        p++;
        if (*p < '0' || *p > '9')
            return H2B_ERR_INVAL;
        size_t v = 0;
        while (*p >= '0' && *p <= '9') {
            if (v > SIZE_MAX / 10 - 10)
                return H2B_ERR_INVAL;
            v = v * 10 + (size_t)(*p++ - '0');
        }
        if (*p++ != ']')
            return H2B_ERR_INVAL;
        st->key = NULL;
        st->index = v;
    } else {
        if (*p == '.' && !first)
            p++;
        size_t n = strcspn(p, ".[]");
        if (n == 0)
            return H2B_ERR_INVAL;
        st->key = p;
        st->klen = n;
        p += n;
    }
    *s = p;
    return H2B_OK;
}

/* p at the value to descend into; returns the start of its member/element for st, NULL if
 * absent, or sets *err on malformed text. */
static const char *descend(const char *p, const struct step *st, int *err)
{
    if (st->key ? *p != '{' : *p != '[')
        return NULL;
    p = skip_ws(p + 1);
    for (size_t i = 0;; i++) {
        if (*p == (st->key ? '}' : ']'))
            return NULL;
        if (st->key) {
            const char *k = p + 1, *after;
            if (*p != '"' || (after = skip_string(p)) == NULL)
                goto malformed;
            bool match = (size_t)(after - 1 - k) == st->klen && memcmp(k, st->key, st->klen) == 0;
            p = skip_ws(after);
            if (*p != ':')
                goto malformed;
            p = skip_ws(p + 1);
            if (match)
                return p;
        } else if (i == st->index) {
            return p;
        }
        if ((p = skip_value(p, 0)) == NULL)
            goto malformed;
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != (st->key ? '}' : ']'))
            goto malformed;
    }
malformed:
    *err = H2B_ERR_PARSE;
    return NULL;
}

int h2b_json_locate(const char *text, const char *path, int *line, int *column)
{
    if (text == NULL)
        return H2B_ERR_INVAL;
    const char *p = skip_ws(text);
    const char *s = path ? path : "";
    for (bool first = true; *s; first = false) {
        struct step st = {NULL, 0, 0};
        if (next_step(&s, first, &st) != H2B_OK)
            return H2B_ERR_INVAL;
        int err = H2B_OK;
        p = descend(p, &st, &err);
        if (p == NULL)
            return err ? err : H2B_ERR_NOTFOUND;
    }
    if (*p == '\0')
        return H2B_ERR_PARSE;
    offset_position(text, (size_t)(p - text), line, column);
    return H2B_OK;
}

/* Shortens path to its parent in place ("a.b[2]" -> "a.b" -> "a" -> ""). */
static void path_parent(char *path)
{
    size_t n = strlen(path);
    if (n == 0)
        return;
    if (path[n - 1] == ']') {
        char *open = strrchr(path, '[');
        *(open ? open : path) = '\0';
        return;
    }
    char *dot = strrchr(path, '.');
    char *open = strrchr(path, ']');
    if (dot && (!open || dot > open))
        *dot = '\0';
    else if (open)
        open[1] = '\0';
    else
        path[0] = '\0';
}

void h2b_diag_set(struct h2b_diag *d, const char *file, const char *text, const char *path,
                  const char *fmt, ...)
{
    if (d == NULL)
        return;
    int line = 0, column = 0;
    if (text) {
        char where[PATH_MAX_LEN];
        snprintf(where, sizeof(where), "%s", path ? path : "");
        for (;;) {
            int rv = h2b_json_locate(text, where, &line, &column);
            if (rv == H2B_OK)
                break;
            line = column = 0;
            if (rv != H2B_ERR_NOTFOUND || where[0] == '\0')
                break;
            path_parent(where);
        }
    }
    va_list ap;
    va_start(ap, fmt);
    h2b_diag_vat(d, file, line, column, path, fmt, ap);
    va_end(ap);
}

/* ---- loading ----------------------------------------------------------------------------- */

/* Where jansson's error starts: its position is the byte after the offending token. */
static void syntax_error_position(const char *text, const json_error_t *e, int *line, int *column)
{
    size_t end = e->position > 0 ? (size_t)e->position : 0;
    const char *near = strstr(e->text, "near '");
    if (near) {
        const char *tok = near + 6;
        const char *close = strrchr(tok, '\'');
        size_t toklen = close ? (size_t)(close - tok) : 0;
        if (toklen <= end)
            end -= toklen;
    }
    offset_position(text, end, line, column);
}

int h2b_json_load(const char *path, json_t **out, char **text_out, struct h2b_diag *diag)
{
    char *text;
    size_t len;
    int rv = h2b_fs_read_file(path, H2B_JSON_MAX_FILE, &text, &len, diag);
    if (rv != H2B_OK)
        return rv == H2B_ERR_NOTFOUND ? H2B_ERR_IO : rv; /* json.h: cannot open is IO */
    json_error_t err;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        int line, column;
        syntax_error_position(text, &err, &line, &column);
        h2b_diag_at(diag, path, line, column, "invalid JSON: %s", err.text);
        free(text);
        return H2B_ERR_PARSE;
    }
    *out = doc;
    if (text_out)
        *text_out = text;
    else
        free(text);
    return H2B_OK;
}

/* ---- writing ----------------------------------------------------------------------------- */

int h2b_json_write_atomic(const char *path, const json_t *doc, struct h2b_diag *diag)
{
    if (path == NULL || doc == NULL) {
        h2b_diag_at(diag, path, 0, 0, "nothing to write");
        return H2B_ERR_INVAL;
    }
    char *data = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
    if (data == NULL) {
        h2b_diag_at(diag, path, 0, 0, "cannot encode the document");
        return H2B_ERR_NOMEM;
    }
    size_t len = strlen(data);
    char *text = realloc(data, len + 2);
    if (text == NULL) {
        free(data);
        h2b_diag_at(diag, path, 0, 0, "cannot encode the document");
        return H2B_ERR_NOMEM;
    }
    text[len] = '\n';
    text[len + 1] = '\0';
    int rv = h2b_file_write_atomic(path, text, len + 1, diag);
    free(text);
    return rv;
}

/* ---- paths and typed checks -------------------------------------------------------------- */

void h2b_json_path_key(char *buf, size_t size, const char *parent, const char *key)
{
    if (parent && parent[0])
        snprintf(buf, size, "%s.%s", parent, key);
    else
        snprintf(buf, size, "%s", key);
}

void h2b_json_path_index(char *buf, size_t size, const char *parent, size_t index)
{
    snprintf(buf, size, "%s[%zu]", parent ? parent : "", index);
}

/* A short rendering of value for messages: "-3", "\"abc\"", "an object". */
static const char *describe(const json_t *value, char *buf, size_t size)
{
    if (json_is_object(value))
        return "an object";
    if (json_is_array(value))
        return "an array";
    char *s = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    if (s == NULL)
        return "a value";
    if (strlen(s) > 40)
        snprintf(buf, size, "%.37s...", s);
    else
        snprintf(buf, size, "%s", s);
    free(s);
    return buf;
}

/* Handles absent and null values. Returns true if the check is finished, with *rv set. */
static bool absent_or_null(const struct h2b_json_src *src, const json_t *value, const char *path,
                           unsigned flags, const char *what, int *rv, struct h2b_diag *d)
{
    const char *file = src ? src->file : NULL, *text = src ? src->text : NULL;
    if (value == NULL) {
        *rv = (flags & H2B_JSON_OPTIONAL) ? H2B_JSON_ABSENT : H2B_ERR_PARSE;
        if (*rv < 0)
            h2b_diag_set(d, file, text, path, "missing required field (expected %s)", what);
        return true;
    }
    if (json_is_null(value)) {
        *rv = (flags & H2B_JSON_NULLABLE) ? H2B_JSON_ABSENT : H2B_ERR_PARSE;
        if (*rv < 0)
            h2b_diag_set(d, file, text, path, "expected %s, got null", what);
        return true;
    }
    return false;
}

static int type_error(const struct h2b_json_src *src, const json_t *value, const char *path,
                      const char *what, struct h2b_diag *d)
{
    char buf[64];
    h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, path, "expected %s, got %s",
                 what, describe(value, buf, sizeof(buf)));
    return H2B_ERR_PARSE;
}

int h2b_json_check_u64(const struct h2b_json_src *src, const json_t *value, const char *path,
                       unsigned flags, uint64_t min, uint64_t max, uint64_t *out,
                       struct h2b_diag *d)
{
    char what[96];
    if (min == 0 && max >= INT64_MAX)
        snprintf(what, sizeof(what), "a non-negative integer");
    else if (min == 1 && max >= INT64_MAX)
        snprintf(what, sizeof(what), "a positive integer");
    else
        snprintf(what, sizeof(what), "an integer in [%llu, %llu]", (unsigned long long)min,
                 (unsigned long long)max);
    int rv;
    if (absent_or_null(src, value, path, flags, what, &rv, d))
        return rv;
    if (!json_is_integer(value))
        return type_error(src, value, path, what, d);
    json_int_t v = json_integer_value(value);
    if (v < 0 || (uint64_t)v < min || (uint64_t)v > max)
        return type_error(src, value, path, what, d);
    *out = (uint64_t)v;
    return H2B_OK;
}

int h2b_json_check_double(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, double min, double max, double *out, struct h2b_diag *d)
{
    char what[96];
    bool unbounded_hi = !(max < DBL_MAX);
    if (!(min > -DBL_MAX) && unbounded_hi)
        snprintf(what, sizeof(what), "a number");
    else if (min == 0 && unbounded_hi)
        snprintf(what, sizeof(what), "a non-negative number");
    else
        snprintf(what, sizeof(what), "a number in [%g, %g]", min, max);
    int rv;
    if (absent_or_null(src, value, path, flags, what, &rv, d))
        return rv;
    if (!json_is_number(value))
        return type_error(src, value, path, what, d);
    double v = json_number_value(value);
    if (!(v >= min && v <= max))
        return type_error(src, value, path, what, d);
    *out = v;
    return H2B_OK;
}

int h2b_json_check_bool(const struct h2b_json_src *src, const json_t *value, const char *path,
                        unsigned flags, bool *out, struct h2b_diag *d)
{
    int rv;
    if (absent_or_null(src, value, path, flags, "true or false", &rv, d))
        return rv;
    if (!json_is_boolean(value))
        return type_error(src, value, path, "true or false", d);
    *out = json_is_true(value);
    return H2B_OK;
}

int h2b_json_check_string(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, const char **out, struct h2b_diag *d)
{
    int rv;
    if (absent_or_null(src, value, path, flags, "a non-empty string", &rv, d))
        return rv;
    if (!json_is_string(value) || json_string_length(value) == 0)
        return type_error(src, value, path, "a non-empty string", d);
    *out = json_string_value(value);
    return H2B_OK;
}

int h2b_json_check_object(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, json_t **out, struct h2b_diag *d)
{
    int rv;
    if (absent_or_null(src, value, path, flags, "an object", &rv, d))
        return rv;
    if (!json_is_object(value))
        return type_error(src, value, path, "an object", d);
    *out = (json_t *)value;
    return H2B_OK;
}

int h2b_json_check_array(const struct h2b_json_src *src, const json_t *value, const char *path,
                         unsigned flags, json_t **out, struct h2b_diag *d)
{
    int rv;
    if (absent_or_null(src, value, path, flags, "an array", &rv, d))
        return rv;
    if (!json_is_array(value))
        return type_error(src, value, path, "an array", d);
    *out = (json_t *)value;
    return H2B_OK;
}

/* obj's member key (NULL if absent or obj is not an object), and its path in child. */
static const json_t *member(const json_t *obj, const char *path, const char *key, char *child,
                            size_t size)
{
    h2b_json_path_key(child, size, path, key);
    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

int h2b_json_get_u64(const struct h2b_json_src *src, const json_t *obj, const char *path,
                     const char *key, unsigned flags, uint64_t min, uint64_t max, uint64_t *out,
                     struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_u64(src, v, child, flags, min, max, out, d);
}

int h2b_json_get_double(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, double min, double max, double *out,
                        struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_double(src, v, child, flags, min, max, out, d);
}

int h2b_json_get_bool(const struct h2b_json_src *src, const json_t *obj, const char *path,
                      const char *key, unsigned flags, bool *out, struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_bool(src, v, child, flags, out, d);
}

int h2b_json_get_string(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, const char **out, struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_string(src, v, child, flags, out, d);
}

int h2b_json_get_object(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, json_t **out, struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_object(src, v, child, flags, out, d);
}

int h2b_json_get_array(const struct h2b_json_src *src, const json_t *obj, const char *path,
                       const char *key, unsigned flags, json_t **out, struct h2b_diag *d)
{
    char child[PATH_MAX_LEN];
    const json_t *v = member(obj, path, key, child, sizeof(child));
    return h2b_json_check_array(src, v, child, flags, out, d);
}

int h2b_json_check_keys(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *const *allowed, struct h2b_diag *d)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, key) == 0;
        if (known)
            continue;
        char list[256] = "", child[PATH_MAX_LEN];
        size_t n = 0;
        for (const char *const *a = allowed; *a && n < sizeof(list); a++) {
            int w = snprintf(list + n, sizeof(list) - n, "%s%s", a == allowed ? "" : ", ", *a);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        h2b_json_path_key(child, sizeof(child), path, key);
        h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, child,
                     "unknown field '%s'; expected one of: %s", key, list);
        return H2B_ERR_PARSE;
    }
    return H2B_OK;
}
