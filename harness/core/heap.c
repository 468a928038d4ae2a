/*
 * heap.c - intrusive binary min-heap (see heap.h).
 *
 * Approach: an array of node pointers, children of i at 2i+1 and 2i+2; every move writes the
 * node's new position back, which is what makes remove and rekey O(log n). Rejected: a timer
 * wheel (O(1), but its resolution would have to follow the smallest configured timeout and
 * the /delay milliseconds) and a sorted list (O(n) insertion, the defect this replaces).
 *
 * Invariants: every node in the array knows its place (v[i]->pos == i + 1) and no node's key is
 * below its parent's. The O(1) part (the node handed in is, or is not, where it says) is asserted
 * on every call; with H2B_CHECK_SLOW (core/check.h), after each change, a walk over the whole
 * array (up to SLOW_CHECK_MAX nodes; above, the moved node against its parent and children).
 */
#include "core/heap.h"

#include "core/check.h"
#include "core/error.h"

#include <stdlib.h>

/* Heaps up to this many nodes are checked whole after each change under H2B_CHECK_SLOW. */
#define SLOW_CHECK_MAX 256

void h2b_heap_init(struct h2b_heap *h)
{
    h->v = NULL;
    h->n = h->cap = 0;
}

void h2b_heap_free(struct h2b_heap *h)
{
    free(h->v);
    h2b_heap_init(h);
}

int h2b_heap_reserve(struct h2b_heap *h, uint32_t n)
{
    if (n > UINT32_MAX / 2 - h->n)
        return H2B_ERR_RANGE;
    if (h->n + n <= h->cap)
        return H2B_OK;
    uint32_t cap = h->cap ? h->cap : 16;
    while (cap < h->n + n)
        cap *= 2;
    struct h2b_heap_node **v = realloc(h->v, (size_t)cap * sizeof *v);
    if (!v)
        return H2B_ERR_NOMEM;
    h->v = v;
    h->cap = cap;
    return H2B_OK;
}

/* The invariants at index i: its node knows its place, and its key is between its parent's and
 * its children's. */
static bool ordered_at(const struct h2b_heap *h, uint32_t i)
{
    const struct h2b_heap_node *x = h->v[i];
    uint32_t c = 2 * i + 1;
    return x->pos == i + 1 && (i == 0 || h->v[(i - 1) / 2]->key <= x->key) &&
           (c >= h->n || x->key <= h->v[c]->key) && (c + 1 >= h->n || x->key <= h->v[c + 1]->key);
}

/* The invariants after a change that left a node at index i (UINT32_MAX: none): over the whole
 * array, O(n), while the heap is small; around i for a large one, where a walk per operation
 * would make the debug build's timers quadratic (a server's 15,000 /delay streams). */
static bool ordered(const struct h2b_heap *h, uint32_t i)
{
    if (h->n > h->cap)
        return false;
    if (h->n > SLOW_CHECK_MAX)
        return i >= h->n || ordered_at(h, i);
    for (uint32_t k = 0; k < h->n; k++)
        if (!ordered_at(h, k))
            return false;
    return true;
}

/* x is the node at its recorded place in h. */
static bool holds(const struct h2b_heap *h, const struct h2b_heap_node *x)
{
    return x->pos != 0 && x->pos <= h->n && h->v[x->pos - 1] == x;
}

static void place(struct h2b_heap *h, uint32_t i, struct h2b_heap_node *x)
{
    h->v[i] = x;
    x->pos = i + 1;
}

static void sift_up(struct h2b_heap *h, uint32_t i)
{
    struct h2b_heap_node *x = h->v[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (h->v[parent]->key <= x->key)
            break;
        place(h, i, h->v[parent]);
        i = parent;
    }
    place(h, i, x);
}

static void sift_down(struct h2b_heap *h, uint32_t i)
{
    struct h2b_heap_node *x = h->v[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && h->v[child + 1]->key < h->v[child]->key)
            child++;
        if (x->key <= h->v[child]->key)
            break;
        place(h, i, h->v[child]);
        i = child;
    }
    place(h, i, x);
}

int h2b_heap_push(struct h2b_heap *h, struct h2b_heap_node *x, uint64_t key)
{
    int rc = h2b_heap_reserve(h, 1);
    if (rc != H2B_OK)
        return rc;
    H2B_ASSERT(x->pos == 0); /* in no heap */
    x->key = key;
    place(h, h->n++, x);
    sift_up(h, h->n - 1);
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(ordered(h, x->pos - 1));
    return H2B_OK;
}

void h2b_heap_remove(struct h2b_heap *h, struct h2b_heap_node *x)
{
    if (x->pos == 0)
        return;
    H2B_ASSERT(holds(h, x)); /* in this heap, not another */
    uint32_t i = x->pos - 1;
    x->pos = 0;
    struct h2b_heap_node *last = h->v[--h->n];
    if (i == h->n)
        return;
    place(h, i, last);
    if (i > 0 && h->v[(i - 1) / 2]->key > last->key)
        sift_up(h, i);
    else
        sift_down(h, i);
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(ordered(h, last->pos - 1));
}

void h2b_heap_rekey(struct h2b_heap *h, struct h2b_heap_node *x, uint64_t key)
{
    H2B_ASSERT(holds(h, x));
    uint64_t old = x->key;
    x->key = key;
    if (key < old)
        sift_up(h, x->pos - 1);
    else if (key > old)
        sift_down(h, x->pos - 1);
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(ordered(h, x->pos - 1));
}
