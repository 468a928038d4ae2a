/*
 * model.c - the key-table engine behind every results document (model.h).
 *
 * One loop over a table decodes, one encodes, one frees: a document kind is data (its table),
 * not code. Type checks go through json.c's checkers, so a wrong value is reported exactly as
 * every other h2bench file reports it ("micro[2].p99_ns_forks[1]: expected a number ...", at
 * the value's line and column; an alias is reported under the key the file used).
 *
 * Rejected: code generation from a schema file (a build step for ~40 fields); jansson's
 * json_unpack format strings per reader (each reader then spells the keys again, which is how
 * the copies came to disagree); storing integers as uint64_t with a separate "has" flag (two
 * members per field, and every consumer wanted a double with NAN for "not measured" anyway).
 */
#include "core/model.h"
#include "core/check.h"
#include "core/error.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMBER(obj, f, type) ((type *)(void *)((char *)(obj) + (f)->offset))
#define CMEMBER(obj, f, type) ((const type *)(const void *)((const char *)(obj) + (f)->offset))

void h2b_model_init(const struct h2b_model *m, void *obj)
{
    memset(obj, 0, m->size);
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        switch (f->kind) {
        case H2B_MODEL_COUNT:
        case H2B_MODEL_POSITIVE:
        case H2B_MODEL_REAL:
            *MEMBER(obj, f, double) = NAN;
            break;
        case H2B_MODEL_BOOL:
            *MEMBER(obj, f, int) = H2B_MODEL_NULL_BOOL;
            break;
        case H2B_MODEL_OBJECT:
        case H2B_MODEL_INLINE:
            h2b_model_init(f->sub, MEMBER(obj, f, void));
            break;
        default:
            break; /* zeroed: NULL */
        }
    }
}

static void free_strs(struct h2b_model_strs *strs)
{
    for (size_t i = 0; i < strs->n; i++)
        free(strs->v[i]);
    free(strs->v);
    strs->v = NULL;
    strs->n = 0;
}

void h2b_model_free(const struct h2b_model *m, void *obj)
{
    if (!obj)
        return;
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        switch (f->kind) {
        case H2B_MODEL_STRING:
            free(*MEMBER(obj, f, char *));
            break;
        case H2B_MODEL_NUMBERS:
            free(MEMBER(obj, f, struct h2b_model_nums)->v);
            break;
        case H2B_MODEL_STRINGS:
            free_strs(MEMBER(obj, f, struct h2b_model_strs));
            break;
        case H2B_MODEL_JSON:
            json_decref(*MEMBER(obj, f, json_t *));
            break;
        case H2B_MODEL_OBJECT:
        case H2B_MODEL_INLINE:
            h2b_model_free(f->sub, MEMBER(obj, f, void));
            break;
        case H2B_MODEL_ARRAY:
            h2b_model_array_free(f->sub, MEMBER(obj, f, struct h2b_model_array));
            break;
        default:
            break;
        }
    }
    json_decref(((struct h2b_model_base *)obj)->extra);
    h2b_model_init(m, obj);
}

int h2b_model_set_string(char **member, const char *value)
{
    char *copy = NULL;
    if (value && !(copy = strdup(value)))
        return H2B_ERR_NOMEM;
    free(*member);
    *member = copy;
    return H2B_OK;
}

int h2b_model_set_nums(struct h2b_model_nums *member, const double *v, size_t n)
{
    double *copy = malloc((n ? n : 1) * sizeof(*copy));
    if (!copy)
        return H2B_ERR_NOMEM;
    if (n)
        memcpy(copy, v, n * sizeof(*copy));
    free(member->v);
    member->v = copy;
    member->n = n;
    return H2B_OK;
}

int h2b_model_strs_push(struct h2b_model_strs *strs, const char *s, size_t len)
{
    char *copy = strndup(s, len);
    char **v = copy ? realloc(strs->v, (strs->n + 1) * sizeof(*v)) : NULL;
    if (!v) {
        free(copy);
        return H2B_ERR_NOMEM;
    }
    v[strs->n++] = copy;
    strs->v = v;
    return H2B_OK;
}

int h2b_model_note_add(char **note, const char *metric, const char *reason)
{
    size_t old = *note ? strlen(*note) : 0;
    size_t len = old + strlen(metric) + strlen(reason) + 5;
    char *grown = realloc(*note, len);
    if (!grown)
        return H2B_ERR_NOMEM;
    snprintf(grown + old, len - old, "%s%s: %s", old ? "; " : "", metric, reason);
    *note = grown;
    return H2B_OK;
}

bool h2b_model_note_reason(const char *note, const char *metric, char *buf, size_t size)
{
    size_t klen = strlen(metric);
    for (const char *at = note; at && *at;) {
        if (strncmp(at, metric, klen) == 0 && at[klen] == ':') {
            at += klen + 1;
            at += strspn(at, " ");
            snprintf(buf, size, "%.*s", (int)strcspn(at, ";"), at);
            return true;
        }
        at = strstr(at, "; ");
        at = at ? at + 2 : NULL;
    }
    return false;
}

void *h2b_model_array_at(const struct h2b_model *m, const struct h2b_model_array *arr, size_t i)
{
    return (char *)arr->v + i * m->size;
}

void h2b_model_array_free(const struct h2b_model *m, struct h2b_model_array *arr)
{
    for (size_t i = 0; i < arr->n; i++)
        h2b_model_free(m, h2b_model_array_at(m, arr, i));
    free(arr->v);
    arr->v = NULL;
    arr->n = 0;
}

int h2b_model_array_push(const struct h2b_model *m, struct h2b_model_array *arr, void **elem)
{
    /* one realloc per element: arrays are built once, by writers of tens to thousands */
    void *v = realloc(arr->v, (arr->n + 1) * m->size);
    if (!v)
        return H2B_ERR_NOMEM;
    arr->v = v;
    void *e = h2b_model_array_at(m, arr, arr->n);
    h2b_model_init(m, e);
    arr->n++;
    *elem = e;
    return H2B_OK;
}

double h2b_model_number(const struct h2b_model *m, const void *obj, const char *key, bool *found)
{
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        if (f->kind == H2B_MODEL_INLINE) {
            bool in;
            double v = h2b_model_number(f->sub, CMEMBER(obj, f, void), key, &in);
            if (in) {
                *found = true;
                return v;
            }
            continue;
        }
        if (strcmp(f->key, key) != 0)
            continue;
        bool number = f->kind == H2B_MODEL_COUNT || f->kind == H2B_MODEL_POSITIVE ||
                      f->kind == H2B_MODEL_REAL;
        *found = number;
        return number ? *CMEMBER(obj, f, double) : NAN;
    }
    *found = false;
    return NAN;
}

const char *h2b_model_key_at(const struct h2b_model *m, size_t offset)
{
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        if (f->kind == H2B_MODEL_INLINE) {
            if (offset >= f->offset && offset < f->offset + f->sub->size &&
                offset != f->offset) /* the inline struct's base is no field */
                return h2b_model_key_at(f->sub, offset - f->offset);
        } else if (f->offset == offset) {
            return f->key;
        }
    }
    bool member_has_row = false; /* the caller named a member its model's table lacks */
    H2B_ASSERT(member_has_row);
    return NULL;
}

/* True when key is one of the table's keys or aliases (inline tables included). */
static bool known(const struct h2b_model *m, const char *key)
{
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        if (f->kind == H2B_MODEL_INLINE && known(f->sub, key))
            return true;
        if (strcmp(f->key, key) == 0 || (f->alias && strcmp(f->alias, key) == 0))
            return true;
    }
    return false;
}

static int decode_fields(const struct h2b_model *m, const json_t *obj,
                         const struct h2b_json_src *src, const char *path, unsigned mode, void *out,
                         struct h2b_diag *d);

/* One element of an array field of kind kind (ARRAY: a sub entry, NUMBERS: a double,
 * STRINGS: an owned copy of a non-empty string) at path into slot. */
static int decode_elem(enum h2b_model_kind kind, const struct h2b_model *sub, const json_t *e,
                       const struct h2b_json_src *src, const char *path, unsigned mode, void *slot,
                       struct h2b_diag *d)
{
    const char *s;
    int rv;
    switch (kind) {
    case H2B_MODEL_ARRAY:
        return h2b_model_from_json(sub, e, src, path, mode, slot, d);
    case H2B_MODEL_STRINGS:
        *(char **)slot = NULL;
        rv = h2b_json_check_string(src, e, path, H2B_JSON_REQUIRED, &s, d);
        return rv == H2B_OK ? h2b_model_set_string(slot, s) : rv;
    default:
        /* H2B_MODEL_INT shapes the writing; any number is read (legacy files wrote reals) */
        return h2b_json_check_double(src, e, path, H2B_JSON_REQUIRED, 0, DBL_MAX, slot, d);
    }
}

/* The elements of the array at path into a malloc'd vector *vals, each decoded by decode_elem.
 * *n counts the elements decoded, so after a failure the caller frees exactly those (and *vals,
 * which may be set). */
static int decode_elems(enum h2b_model_kind kind, const struct h2b_model *sub, const json_t *v,
                        const struct h2b_json_src *src, const char *path, unsigned flags,
                        unsigned mode, void **vals, size_t *n, struct h2b_diag *d)
{
    json_t *arr;
    int rv = h2b_json_check_array(src, v, path, flags, &arr, d);
    if (rv != H2B_OK)
        return rv;
    size_t len = json_array_size(arr);
    size_t size = kind == H2B_MODEL_ARRAY     ? sub->size
                  : kind == H2B_MODEL_STRINGS ? sizeof(char *)
                                              : sizeof(double);
    *vals = malloc((len ? len : 1) * size);
    *n = 0;
    if (!*vals)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < len; i++) {
        char item[600];
        h2b_json_path_index(item, sizeof(item), path, i);
        rv = decode_elem(kind, sub, json_array_get(arr, i), src, item, mode,
                         (char *)*vals + i * size, d);
        if (rv != H2B_OK)
            return rv;
        *n = i + 1;
    }
    return H2B_OK;
}

static int decode_array(const struct h2b_model_field *f, const json_t *v,
                        const struct h2b_json_src *src, const char *path, unsigned flags,
                        unsigned mode, struct h2b_model_array *out, struct h2b_diag *d)
{
    /* on failure the elements decoded so far are freed with the array */
    return decode_elems(H2B_MODEL_ARRAY, f->sub, v, src, path, flags, mode, &out->v, &out->n, d);
}

static int decode_nums(const json_t *v, const struct h2b_json_src *src, const char *path,
                       unsigned flags, struct h2b_model_nums *out, struct h2b_diag *d)
{
    void *vals = NULL;
    size_t n = 0;
    int rv = decode_elems(H2B_MODEL_NUMBERS, NULL, v, src, path, flags, 0, &vals, &n, d);
    if (rv != H2B_OK) {
        free(vals);
        return rv;
    }
    out->v = vals;
    out->n = n;
    return H2B_OK;
}

static int decode_strs(const json_t *v, const struct h2b_json_src *src, const char *path,
                       unsigned flags, struct h2b_model_strs *out, struct h2b_diag *d)
{
    void *vals = NULL;
    int rv = decode_elems(H2B_MODEL_STRINGS, NULL, v, src, path, flags, 0, &vals, &out->n, d);
    out->v = vals;
    if (rv != H2B_OK)
        free_strs(out); /* the strings decoded before the bad one */
    return rv;
}

/* Decodes one field whose value (NULL: absent) sits at path. */
static int decode_field(const struct h2b_model_field *f, const json_t *v,
                        const struct h2b_json_src *src, const char *path, unsigned mode, void *out,
                        struct h2b_diag *d)
{
    bool required = (mode & H2B_MODEL_CONTRACT) && (f->flags & H2B_MODEL_REQUIRED);
    unsigned flags = required ? H2B_JSON_REQUIRED : H2B_JSON_OPTIONAL | H2B_JSON_NULLABLE;
    uint64_t u;
    bool b;
    int rv;
    switch (f->kind) {
    case H2B_MODEL_STRING:
        if (!required && json_is_string(v)) {
            /* an optional string may be empty; a required one names something */
            return h2b_model_set_string(MEMBER(out, f, char *), json_string_value(v));
        } else {
            const char *s;
            rv = h2b_json_check_string(src, v, path, flags, &s, d);
            if (rv == H2B_OK)
                rv = h2b_model_set_string(MEMBER(out, f, char *), s);
        }
        break;
    case H2B_MODEL_COUNT:
    case H2B_MODEL_POSITIVE:
        rv = h2b_json_check_u64(src, v, path, flags, f->kind == H2B_MODEL_POSITIVE, INT64_MAX, &u,
                                d);
        if (rv == H2B_OK)
            *MEMBER(out, f, double) = (double)u;
        break;
    case H2B_MODEL_REAL:
        rv = h2b_json_check_double(src, v, path, flags, 0, DBL_MAX, MEMBER(out, f, double), d);
        break;
    case H2B_MODEL_BOOL:
        rv = h2b_json_check_bool(src, v, path, flags, &b, d);
        if (rv == H2B_OK)
            *MEMBER(out, f, int) = b;
        break;
    case H2B_MODEL_NUMBERS:
        rv = decode_nums(v, src, path, flags, MEMBER(out, f, struct h2b_model_nums), d);
        break;
    case H2B_MODEL_STRINGS:
        rv = decode_strs(v, src, path, flags, MEMBER(out, f, struct h2b_model_strs), d);
        break;
    case H2B_MODEL_OBJECT:
        rv = h2b_json_check_object(src, v, path, flags, &(json_t *){NULL}, d);
        if (rv == H2B_OK)
            rv = h2b_model_from_json(f->sub, v, src, path, mode, MEMBER(out, f, void), d);
        break;
    case H2B_MODEL_JSON:
        if (required && (rv = h2b_json_check_object(src, v, path, flags, &(json_t *){NULL}, d)))
            break;
        if (v)
            *MEMBER(out, f, json_t *) = json_incref((json_t *)v);
        rv = H2B_OK;
        break;
    case H2B_MODEL_ARRAY:
        rv = decode_array(f, v, src, path, flags, mode, MEMBER(out, f, struct h2b_model_array), d);
        break;
    default:
        rv = H2B_ERR_INVAL;
    }
    return rv < 0 ? rv : H2B_OK;
}

int h2b_model_from_json(const struct h2b_model *m, const json_t *value,
                        const struct h2b_json_src *src, const char *path, unsigned mode, void *out,
                        struct h2b_diag *d)
{
    h2b_model_init(m, out);
    json_t *obj;
    int rv = h2b_json_check_object(src, value, path ? path : "", H2B_JSON_REQUIRED, &obj, d);
    if (rv != H2B_OK)
        return rv;
    if ((rv = decode_fields(m, obj, src, path, mode, out, d)) != H2B_OK)
        goto fail;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        if (known(m, key))
            continue;
        struct h2b_model_base *base = out;
        if (!base->extra && !(base->extra = json_object())) {
            rv = H2B_ERR_NOMEM;
            goto fail;
        }
        if (json_object_set(base->extra, key, v) != 0) {
            rv = H2B_ERR_NOMEM;
            goto fail;
        }
    }
    ((struct h2b_model_base *)out)->present = true;
    return H2B_OK;
fail:
    h2b_model_free(m, out);
    return rv;
}

static int decode_fields(const struct h2b_model *m, const json_t *obj,
                         const struct h2b_json_src *src, const char *path, unsigned mode, void *out,
                         struct h2b_diag *d)
{
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        int rv;
        if (f->kind == H2B_MODEL_INLINE) {
            if ((rv = decode_fields(f->sub, obj, src, path, mode, MEMBER(out, f, void), d)))
                return rv;
            MEMBER(out, f, struct h2b_model_base)->present = true;
            continue;
        }
        const char *key = f->key;
        const json_t *v = json_object_get(obj, key);
        if (!v && f->alias && (v = json_object_get(obj, f->alias)))
            key = f->alias;
        char child[512];
        h2b_json_path_key(child, sizeof(child), path, key);
        if ((rv = decode_field(f, v, src, child, mode, out, d)) != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

static json_t *number(double v, bool integer)
{
    if (!isfinite(v))
        return json_null();
    return integer ? json_integer((json_int_t)v) : json_real(v);
}

/* Element i of member, the list of field f (NUMBERS, STRINGS or ARRAY), as a new JSON value;
 * NULL on allocation failure. */
static json_t *encode_elem(const struct h2b_model_field *f, const void *member, size_t i)
{
    json_t *e = NULL;
    switch (f->kind) {
    case H2B_MODEL_NUMBERS:
        return number(((const struct h2b_model_nums *)member)->v[i], f->flags & H2B_MODEL_INT);
    case H2B_MODEL_STRINGS:
        return json_string(((const struct h2b_model_strs *)member)->v[i]);
    default:
        return h2b_model_to_json(f->sub, h2b_model_array_at(f->sub, member, i), &e) == H2B_OK
                   ? e
                   : NULL;
    }
}

/* member, the list of field f whose vector is v (NULL: null) with n elements, as JSON: null or
 * an array of its elements. NULL on allocation failure. */
static json_t *encode_list(const struct h2b_model_field *f, const void *member, const void *v,
                           size_t n, bool *is_null)
{
    *is_null = v == NULL;
    if (*is_null)
        return json_null();
    json_t *j = json_array();
    for (size_t i = 0; j && i < n; i++) {
        if (json_array_append_new(j, encode_elem(f, member, i)) != 0) {
            json_decref(j);
            j = NULL;
        }
    }
    return j;
}

/* The JSON value of field f of obj; NULL on allocation failure. *is_null tells a null apart. */
static json_t *encode_field(const struct h2b_model_field *f, const void *obj, bool *is_null)
{
    json_t *j = NULL;
    const struct h2b_model_nums *nums;
    const struct h2b_model_strs *strs;
    const struct h2b_model_array *arr;
    const char *s;
    int bv;
    *is_null = false;
    switch (f->kind) {
    case H2B_MODEL_STRING:
        s = *CMEMBER(obj, f, char *);
        *is_null = s == NULL;
        return s ? json_string(s) : json_null();
    case H2B_MODEL_COUNT:
    case H2B_MODEL_POSITIVE:
    case H2B_MODEL_REAL:
        *is_null = !isfinite(*CMEMBER(obj, f, double));
        return number(*CMEMBER(obj, f, double), f->kind != H2B_MODEL_REAL);
    case H2B_MODEL_BOOL:
        bv = *CMEMBER(obj, f, int);
        *is_null = bv == H2B_MODEL_NULL_BOOL;
        return *is_null ? json_null() : json_boolean(bv);
    case H2B_MODEL_NUMBERS:
        nums = CMEMBER(obj, f, struct h2b_model_nums);
        return encode_list(f, nums, nums->v, nums->n, is_null);
    case H2B_MODEL_STRINGS:
        strs = CMEMBER(obj, f, struct h2b_model_strs);
        return encode_list(f, strs, strs->v, strs->n, is_null);
    case H2B_MODEL_OBJECT:
        *is_null = !CMEMBER(obj, f, struct h2b_model_base)->present;
        if (*is_null)
            return json_null();
        return h2b_model_to_json(f->sub, CMEMBER(obj, f, void), &j) == H2B_OK ? j : NULL;
    case H2B_MODEL_JSON:
        j = *(json_t *const *)(const void *)((const char *)obj + f->offset);
        *is_null = j == NULL;
        return j ? json_incref(j) : json_null();
    case H2B_MODEL_ARRAY:
        arr = CMEMBER(obj, f, struct h2b_model_array);
        return encode_list(f, arr, arr->v, arr->n, is_null);
    case H2B_MODEL_INLINE:
        break; /* encode_fields writes its fields into the enclosing object */
    }
    return NULL;
}

static int encode_fields(const struct h2b_model *m, const void *obj, json_t *o)
{
    for (const struct h2b_model_field *f = m->fields; f->key; f++) {
        if (f->kind == H2B_MODEL_INLINE) {
            if (encode_fields(f->sub, CMEMBER(obj, f, void), o) != H2B_OK)
                return H2B_ERR_NOMEM;
            continue;
        }
        bool is_null;
        json_t *v = encode_field(f, obj, &is_null);
        if (!v)
            return H2B_ERR_NOMEM;
        if (is_null && (f->flags & H2B_MODEL_OMIT)) {
            json_decref(v);
            continue;
        }
        if (json_object_set_new(o, f->key, v) != 0)
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

int h2b_model_to_json(const struct h2b_model *m, const void *obj, json_t **out)
{
    json_t *o = json_object();
    if (!o || encode_fields(m, obj, o) != H2B_OK)
        goto nomem;
    const json_t *extra = ((const struct h2b_model_base *)obj)->extra;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)extra, key, v)
    {
        if (!json_object_get(o, key) && json_object_set(o, key, v) != 0)
            goto nomem;
    }
    *out = o;
    return H2B_OK;
nomem:
    json_decref(o);
    return H2B_ERR_NOMEM;
}

int h2b_model_copy(const struct h2b_model *m, void *dst, const void *src)
{
    json_t *j;
    int rv = h2b_model_to_json(m, src, &j);
    if (rv != H2B_OK) {
        h2b_model_init(m, dst);
        return rv;
    }
    struct h2b_diag d;
    rv = h2b_model_from_json(m, j, NULL, "", 0, dst, &d);
    json_decref(j);
    /* present survives the round trip for sub-objects; the top level was present by definition */
    ((struct h2b_model_base *)dst)->present = ((const struct h2b_model_base *)src)->present;
    return rv;
}
