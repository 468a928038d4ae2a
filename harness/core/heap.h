/*
 * heap.h - an intrusive binary min-heap of 64-bit keys (deadlines, in practice).
 *
 * The element embeds a struct h2b_heap_node; the heap holds pointers to nodes and keeps each
 * node's position in it, so remove and rekey are O(log n) without a search. Insertion order
 * does not matter (a scan of a sorted list from its tail made a decreasing sequence of
 * deadlines quadratic). Not thread-safe: one owner, as everything per worker.
 */
#ifndef H2B_CORE_HEAP_H
#define H2B_CORE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_heap_node {
    uint64_t key;
    uint32_t pos; /* 1 + index in the heap; 0 while not in one */
};

struct h2b_heap {
    struct h2b_heap_node **v;
    uint32_t n, cap;
};

/* An empty heap (no allocation until the first reserve or push). */
void h2b_heap_init(struct h2b_heap *h);

/* Frees the heap's array (not the elements). */
void h2b_heap_free(struct h2b_heap *h);

/* Makes room for n more nodes, so that the next n pushes cannot fail. Returns H2B_OK,
 * H2B_ERR_NOMEM or H2B_ERR_RANGE (more than 2^31 nodes). */
int h2b_heap_reserve(struct h2b_heap *h, uint32_t n);

/* Inserts x (not in a heap) with key. Returns H2B_OK or what h2b_heap_reserve returns. */
int h2b_heap_push(struct h2b_heap *h, struct h2b_heap_node *x, uint64_t key);

/* Removes x if it is in h (a no-op otherwise). */
void h2b_heap_remove(struct h2b_heap *h, struct h2b_heap_node *x);

/* Changes the key of x, which is in h. */
void h2b_heap_rekey(struct h2b_heap *h, struct h2b_heap_node *x, uint64_t key);

/* The node with the smallest key, or NULL. */
static inline struct h2b_heap_node *h2b_heap_top(const struct h2b_heap *h)
{
    return h->n ? h->v[0] : NULL;
}

static inline bool h2b_heap_contains(const struct h2b_heap_node *x)
{
    return x->pos != 0;
}

#endif
