/*
 * list.h - the one intrusive doubly-linked list: a node embedded in the element, a circular
 * list through a head that is its own sentinel.
 *
 * An element carries a struct h2b_list and is found again from it with H2B_LIST_ENTRY
 * (container_of). A node whose next is NULL is in no list, so a zeroed element (calloc) starts
 * unlinked and h2b_list_linked answers "is it queued?" without a flag beside it. Insert and
 * unlink are O(1) and need no head: unlinking from the middle is what the server's connection,
 * stream and queue lists do on every close. The circular head (as h2o's linklist and Linux's
 * list_head) takes the branches of a NULL-terminated list with separate head and tail pointers
 * off the path. Rejected: a singly-linked list, whose unlink walks from the head (the dirty
 * queue did, O(n) in the queue's length), and one list type per use (eight hand-written
 * unlinks, issue 31).
 *
 * One list is not this one, by measurement: the fast engine's send queue (h2_fast.c), a FIFO
 * pushed and popped once a frame, two or three times a request. On this list it cost 13
 * instructions a request more than its singly-linked FIFO with a tail pointer (callgrind,
 * 20,000 requests at 1x10; the budgets gate failed with it), and its middle unlink, the one
 * thing this list does better, happens only when a stream is reset while queued.
 *
 * The invariants are asserted (core/check.h): in every build, a node is inserted only while
 * unlinked and unlinked only while linked; with H2B_CHECK_SLOW also that its neighbours point
 * back at it (two more loads per operation: the per-request budget of the reference server
 * could not carry them, these lists being on its request path). A head is initialized with
 * h2b_list_init before use. Not thread-safe: one owner, as everything per worker.
 */
#ifndef H2B_CORE_LIST_H
#define H2B_CORE_LIST_H

#include "core/check.h"

#include <stdbool.h>
#include <stddef.h>

/* A list's head, or an element's place in one (the same type: the head is the sentinel). */
struct h2b_list {
    struct h2b_list *next, *prev; /* next is NULL in a node that is in no list */
};

/* The element of type type whose member member is node. */
#define H2B_LIST_ENTRY(node, type, member) ((type *)h2b__list_at((node), offsetof(type, member)))

/* The first element of the list head, or NULL when it is empty. */
#define H2B_LIST_FIRST(head, type, member)                                                         \
    (h2b_list_empty(head) ? NULL : H2B_LIST_ENTRY((head)->next, type, member))

/* Takes the first element of the list head out of it and returns it; NULL when it is empty. */
#define H2B_LIST_POP(head, type, member)                                                           \
    ((type *)h2b__list_container(h2b_list_pop(head), offsetof(type, member)))

/* Visits each node of head in order; the loop's body unlinks none. pos is a struct h2b_list
 * pointer the caller declares. */
#define H2B_LIST_FOREACH(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* Visits each node of head in order; the loop's body may unlink (or free) the node it is on,
 * but no other. pos and tmp are struct h2b_list pointers the caller declares. */
#define H2B_LIST_FOREACH_SAFE(pos, tmp, head)                                                      \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                               \
         (pos) = (tmp), (tmp) = (pos)->next)

/* The element at offset off before node (H2B_LIST_ENTRY). */
static inline void *h2b__list_at(struct h2b_list *node, size_t off)
{
    return (char *)node - off;
}

/* An empty list. */
static inline void h2b_list_init(struct h2b_list *head)
{
    head->next = head->prev = head;
}

static inline bool h2b_list_empty(const struct h2b_list *head)
{
    return head->next == head;
}

/* True while node is in a list. */
static inline bool h2b_list_linked(const struct h2b_list *node)
{
    return node->next != NULL;
}

/* Puts node (in no list) between prev and next, neighbours in one list. */
static inline void h2b__list_insert(struct h2b_list *prev, struct h2b_list *next,
                                    struct h2b_list *node)
{
    H2B_ASSERT(node->next == NULL); /* in no list */
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(prev->next == next && next->prev == prev);
    node->prev = prev;
    node->next = next;
    prev->next = node;
    next->prev = node;
}

/* Appends node (in no list) at the end of head. */
static inline void h2b_list_insert_tail(struct h2b_list *head, struct h2b_list *node)
{
    h2b__list_insert(head->prev, head, node);
}

/* Puts node (in no list) at the front of head. */
static inline void h2b_list_insert_head(struct h2b_list *head, struct h2b_list *node)
{
    h2b__list_insert(head, head->next, node);
}

/* Takes node out of the list it is in; aborts if it is in none. */
static inline void h2b_list_unlink(struct h2b_list *node)
{
    H2B_ASSERT(node->next != NULL); /* in a list */
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(node->next->prev == node && node->prev->next == node);
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->next = NULL; /* prev is left stale: next alone says "in no list" */
}

/* Takes the first node out of head and returns it; NULL when head is empty. No assert: the node
 * is linked by construction (the queues' pop, on the request path). */
static inline struct h2b_list *h2b_list_pop(struct h2b_list *head)
{
    struct h2b_list *node = head->next;
    if (node == head)
        return NULL;
    head->next = node->next;
    node->next->prev = head;
    node->next = NULL;
    return node;
}

/* The element at offset off before node, or NULL for NULL (H2B_LIST_POP). */
static inline void *h2b__list_container(struct h2b_list *node, size_t off)
{
    return node ? (void *)((char *)node - off) : NULL;
}

/* Moves every node of src, in order, to dst (whose old content is forgotten: pass an empty or
 * uninitialized head); src is left empty. */
static inline void h2b_list_take(struct h2b_list *dst, struct h2b_list *src)
{
    if (h2b_list_empty(src)) {
        h2b_list_init(dst);
        return;
    }
    *dst = *src;
    dst->next->prev = dst;
    dst->prev->next = dst;
    h2b_list_init(src);
}

#endif
