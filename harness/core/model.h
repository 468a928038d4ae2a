/*
 * model.h - JSON objects described by key tables: one table per struct, one decoder, one
 * encoder.
 *
 * A modelled struct begins with `struct h2b_model_base` and is described by a `struct
 * h2b_model`: a NULL-terminated table of fields, each with its JSON key, its kind, its flags and
 * the offset of its member. h2b_model_from_json fills the struct from an object (with located
 * diagnostics), h2b_model_to_json writes it back in table order. Adding a field to a document
 * is one table line plus one struct member; no reader or writer spells the key.
 *
 * Values and "null": numbers are stored as double and NAN means null or absent (a writer never
 * writes a non-finite number); strings are owned char * (NULL: null/absent); booleans are int
 * (H2B_MODEL_NULL_BOOL: null/absent); number arrays are struct h2b_model_nums (v NULL: absent),
 * string arrays struct h2b_model_strs (v NULL: absent);
 * H2B_MODEL_JSON members are an owned json_t * taken verbatim (NULL: absent); sub-objects are
 * embedded modelled structs whose base.present says whether the object was there (false: null
 * or absent).
 *
 * Unknown keys: a decoder keeps every key its table does not know in base.extra, verbatim, and
 * the encoder writes them after the known ones, so documents pass through a reader unchanged.
 * Legacy keys: a field may name one alias, read when the key itself is absent and never
 * written. Both rules live here and nowhere else.
 */
#ifndef H2B_CORE_MODEL_H
#define H2B_CORE_MODEL_H

#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>

enum h2b_model_kind {
    H2B_MODEL_STRING,   /* char *; a required string must be non-empty */
    H2B_MODEL_COUNT,    /* double; an integer >= 0 in JSON */
    H2B_MODEL_POSITIVE, /* double; an integer >= 1 in JSON */
    H2B_MODEL_REAL,     /* double; a number >= 0, written as a real */
    H2B_MODEL_BOOL,     /* int: 0, 1 or H2B_MODEL_NULL_BOOL */
    H2B_MODEL_NUMBERS,  /* struct h2b_model_nums: numbers >= 0 (integers with H2B_MODEL_INT) */
    H2B_MODEL_STRINGS,  /* struct h2b_model_strs: non-empty strings */
    H2B_MODEL_OBJECT,   /* an embedded struct described by field.sub */
    H2B_MODEL_JSON,     /* json_t *: any value, kept verbatim (REQUIRED: a required object) */
    H2B_MODEL_ARRAY,    /* struct h2b_model_array of structs described by field.sub */
    H2B_MODEL_INLINE,   /* an embedded struct described by field.sub whose fields sit in this
                           same JSON object (a document that extends another: load's output
                           is a matrix cell plus its own fields) */
};

/* Field flags. */
#define H2B_MODEL_REQUIRED 1u /* the contract: present and not null (checked with CONTRACT) */
#define H2B_MODEL_OMIT 2u     /* when null, the encoder leaves the key out instead of null */
#define H2B_MODEL_INT 4u      /* NUMBERS: elements are integers in JSON */

#define H2B_MODEL_NULL_BOOL (-1)

struct h2b_model_base {
    bool present;  /* sub-objects: the object was there (not null, not absent) */
    json_t *extra; /* keys the table does not know, verbatim; NULL when none */
};

struct h2b_model_nums {
    double *v; /* NULL: absent or null */
    size_t n;
};

struct h2b_model_strs {
    char **v; /* NULL: absent or null; each element owned */
    size_t n;
};

/* An array of modelled structs (element size: the sub model's size). */
struct h2b_model_array {
    void *v; /* NULL: absent or null */
    size_t n;
};

struct h2b_model;

struct h2b_model_field {
    const char *key;
    enum h2b_model_kind kind;
    unsigned flags;
    size_t offset;               /* of the member in the struct */
    const struct h2b_model *sub; /* H2B_MODEL_OBJECT */
    const char *alias;           /* a legacy key read when key is absent; NULL: none */
};

struct h2b_model {
    const char *what;                     /* "micro entry", for messages */
    size_t size;                          /* sizeof the struct */
    const struct h2b_model_field *fields; /* terminated by a field with key NULL */
};

/* Decoder modes. */
#define H2B_MODEL_CONTRACT 1u /* enforce H2B_MODEL_REQUIRED (results files) */

/* Sets every member of obj (m->size bytes) to null: NAN, NULL, H2B_MODEL_NULL_BOOL. */
void h2b_model_init(const struct h2b_model *m, void *obj);

/* Frees what obj owns and sets it to null again. NULL obj is fine. */
void h2b_model_free(const struct h2b_model *m, void *obj);

/* Fills out (initialised here) from the JSON object value found at path of the document src
 * (either may be NULL for in-memory documents). Types are checked for every known field; with
 * H2B_MODEL_CONTRACT required fields must be present and not null. Unknown keys go to
 * out->base.extra. On failure out is left initialised (nothing to free) and d says where and
 * what was expected. Returns H2B_OK, H2B_ERR_PARSE or H2B_ERR_NOMEM. */
int h2b_model_from_json(const struct h2b_model *m, const json_t *value,
                        const struct h2b_json_src *src, const char *path, unsigned mode, void *out,
                        struct h2b_diag *d);

/* Encodes obj as a new JSON object: known fields in table order (null ones as null, or left out
 * with H2B_MODEL_OMIT), then the extra keys. *out owns it. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_model_to_json(const struct h2b_model *m, const void *obj, json_t **out);

/* Deep copy of src into dst (initialised here). Returns H2B_OK or H2B_ERR_NOMEM (dst null). */
int h2b_model_copy(const struct h2b_model *m, void *dst, const void *src);

/* Sets a string member (copied; NULL sets null). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_model_set_string(char **member, const char *value);

/* Sets a number array member to a copy of v[0..n) (n 0: an empty array, not null). */
int h2b_model_set_nums(struct h2b_model_nums *member, const double *v, size_t n);

/* Appends a copy of s[0..len) to a string array member (an absent one becomes an array).
 * Returns H2B_OK or H2B_ERR_NOMEM (strs unchanged). */
int h2b_model_strs_push(struct h2b_model_strs *strs, const char *s, size_t len);

/* Appends a new initialised element to arr (of structs described by m); *elem points at it.
 * Returns H2B_OK or H2B_ERR_NOMEM (arr unchanged). */
int h2b_model_array_push(const struct h2b_model *m, struct h2b_model_array *arr, void **elem);

/* Element i of arr (of structs described by m). */
void *h2b_model_array_at(const struct h2b_model *m, const struct h2b_model_array *arr, size_t i);

/* Frees every element of arr (of structs described by m) and the array; arr is left empty. */
void h2b_model_array_free(const struct h2b_model *m, struct h2b_model_array *arr);

/* The number member of obj whose key is key (for readers that name metrics by their results
 * key, such as the ceilings): its value (NAN when null), or NAN with *found false. */
double h2b_model_number(const struct h2b_model *m, const void *obj, const char *key, bool *found);

/* The key of the member at offset of a struct described by m (inline tables included): for code
 * that must name a field by its key (a ceilings file's metric, a note's clause, a foreign
 * format's counter named after it) without spelling it. A member with no row is a programming
 * error (H2B_ASSERT). H2B_MODEL_KEY(h2b_results_micro_model, struct h2b_results_micro, p99_ns)
 * is "p99_ns", checked by the compiler against the struct and by the table at run time. */
const char *h2b_model_key_at(const struct h2b_model *m, size_t offset);
#define H2B_MODEL_KEY(model, type, member) h2b_model_key_at(&(model), offsetof(type, member))

/* Appends "metric: reason" to a "; "-separated note (the convention of every "note" field:
 * why a null metric is null). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_model_note_add(char **note, const char *metric, const char *reason);

/* The reason note gives for metric (its "metric: reason" clause), cut to buf. Returns false
 * (buf untouched) when note (may be NULL) has no clause for metric. */
bool h2b_model_note_reason(const char *note, const char *metric, char *buf, size_t size);

#endif
