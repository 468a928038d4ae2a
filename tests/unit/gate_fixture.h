/*
 * gate_fixture.h - results documents built in memory for the gate's unit tests (test_gate.c,
 * test_ab.c): a document measured in a Release build without sanitizers, as the runner writes
 * one, whose micro entries a test fills field by field before a gate set takes it. The gate's
 * observations are views of these entries (gates/gate.h), so a test writes the model, never an
 * observation.
 */
#ifndef H2B_TESTS_GATE_FIXTURE_H
#define H2B_TESTS_GATE_FIXTURE_H

#include "core/error.h"
#include "core/model.h"
#include "core/results.h"
#include "gates/gate.h"

#include <stdlib.h>

/* A new document with an env the gate can judge (Release, no sanitizers), no entries; NULL when
 * out of memory. Free it with h2b_results_doc_del, or hand it to h2b_gate_set_take. */
static inline struct h2b_results_doc *fixture_doc(void)
{
    struct h2b_results_doc *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    h2b_model_init(&h2b_results_doc_model, d);
    d->env.base.present = true;
    d->env.sanitizers.v = calloc(1, sizeof(char *)); /* present and empty: none */
    if (!d->env.sanitizers.v || h2b_model_set_string(&d->env.build_type, "Release") != H2B_OK) {
        h2b_results_doc_del(d);
        return NULL;
    }
    return d;
}

/* Appends a micro entry named name (every metric null) to d; NULL when out of memory. */
static inline struct h2b_results_micro *fixture_micro(struct h2b_results_doc *d, const char *name)
{
    void *e = NULL;
    if (h2b_model_array_push(&h2b_results_micro_model, &d->micro, &e) != H2B_OK)
        return NULL;
    struct h2b_results_micro *m = e;
    return h2b_model_set_string(&m->name, name) == H2B_OK ? m : NULL;
}

/* A gate set that owns d (also when it fails: NULL then), read from "memory". */
static inline struct h2b_gate_set *fixture_set(struct h2b_results_doc *d)
{
    struct h2b_gate_set *s = NULL;
    if (!d)
        return NULL;
    if (h2b_gate_set_new(&s) != H2B_OK) {
        h2b_results_doc_del(d);
        return NULL;
    }
    if (h2b_gate_set_take(s, "memory", d) != H2B_OK) {
        h2b_gate_set_del(s);
        return NULL;
    }
    return s;
}

#endif
