/*
 * test_heap.c - the intrusive min-heap (harness/core/heap.h) against a brute-force model:
 * random pushes, removes and rekeys keep every node's position right and the top minimal, and
 * a decreasing key sequence (the /delay defect's pattern) costs O(log n) moves per push.
 */
#include "core/check.h"
#include "core/error.h"
#include "core/heap.h"
#include "test.h"

#define N 2000

static struct h2b_heap_node nodes[N];
static bool in[N];

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static bool consistent(const struct h2b_heap *h)
{
    for (uint32_t i = 0; i < h->n; i++) {
        if (h->v[i]->pos != i + 1)
            return false;
        if (i > 0 && h->v[(i - 1) / 2]->key > h->v[i]->key)
            return false;
    }
    return true;
}

/* Misuses the asserts catch (core/check.h): a node pushed twice, a node of another heap removed
 * or rekeyed; and a key changed behind the heap's back, caught only where the O(n) order check
 * is compiled in (H2B_CHECK_SLOW). */
static void push_twice(void)
{
    struct h2b_heap h;
    struct h2b_heap_node x = {0};
    h2b_heap_init(&h);
    h2b_heap_push(&h, &x, 1);
    h2b_heap_push(&h, &x, 2);
}

static void remove_from_other(void)
{
    struct h2b_heap a, b;
    struct h2b_heap_node x = {0}, y = {0};
    h2b_heap_init(&a);
    h2b_heap_init(&b);
    h2b_heap_push(&a, &x, 1);
    h2b_heap_push(&a, &y, 2);
    h2b_heap_remove(&b, &y);
}

static void rekey_outside(void)
{
    struct h2b_heap h;
    struct h2b_heap_node x = {0};
    h2b_heap_init(&h);
    h2b_heap_rekey(&h, &x, 5);
}

static void key_behind_back(void)
{
    struct h2b_heap h;
    struct h2b_heap_node x[3] = {{0}};
    h2b_heap_init(&h);
    for (int i = 0; i < 3; i++)
        h2b_heap_push(&h, &x[i], (uint64_t)(10 + i));
    x[2].key = 1; /* below its parent, without h2b_heap_rekey */
    h2b_heap_rekey(&h, &x[1], 20);
}

static void used_well(void)
{
    struct h2b_heap h;
    struct h2b_heap_node x[3] = {{0}};
    h2b_heap_init(&h);
    for (int i = 0; i < 3; i++)
        h2b_heap_push(&h, &x[i], (uint64_t)(10 + i));
    h2b_heap_rekey(&h, &x[2], 1);
    h2b_heap_remove(&h, &x[0]);
    h2b_heap_free(&h);
}

static void test_misuse(void)
{
    CHECK(!test_aborts(used_well));
    CHECK(test_aborts(push_twice));
    CHECK(test_aborts(remove_from_other));
    CHECK(test_aborts(rekey_outside));
    CHECK_EQ_INT(test_aborts(key_behind_back), H2B_CHECK_SLOW);
}

int main(void)
{
    test_misuse();
    struct h2b_heap h;
    h2b_heap_init(&h);
    CHECK(h2b_heap_top(&h) == NULL);
    bool ok = true;
    for (int step = 0; step < 200000; step++) {
        size_t i = rnd() % N;
        unsigned op = (unsigned)(rnd() % 3);
        if (!in[i]) {
            ok = ok && h2b_heap_push(&h, &nodes[i], rnd() % 1000) == H2B_OK;
            in[i] = true;
        } else if (op == 0) {
            h2b_heap_remove(&h, &nodes[i]);
            in[i] = false;
        } else {
            h2b_heap_rekey(&h, &nodes[i], rnd() % 1000);
        }
        ok = ok && h2b_heap_contains(&nodes[i]) == in[i];
        if (step % 997 == 0) {
            ok = ok && consistent(&h);
            uint64_t min = UINT64_MAX;
            uint32_t count = 0;
            for (size_t k = 0; k < N; k++) {
                if (in[k]) {
                    count++;
                    if (nodes[k].key < min)
                        min = nodes[k].key;
                }
            }
            ok = ok && count == h.n && (count == 0 || h2b_heap_top(&h)->key == min);
        }
    }
    CHECK(ok);
    /* Drain in order. */
    uint64_t prev = 0;
    bool sorted = true;
    while (h2b_heap_top(&h)) {
        struct h2b_heap_node *t = h2b_heap_top(&h);
        sorted = sorted && t->key >= prev;
        prev = t->key;
        h2b_heap_remove(&h, t);
    }
    CHECK(sorted);
    CHECK_EQ_U64(h.n, 0);
    /* Decreasing keys: every push lands at the root, the heap stays valid. */
    for (size_t i = 0; i < N; i++) {
        nodes[i].pos = 0;
        CHECK_EQ_INT(h2b_heap_push(&h, &nodes[i], N - i), H2B_OK);
    }
    CHECK(consistent(&h) && h2b_heap_top(&h) == &nodes[N - 1]);
    h2b_heap_free(&h);
    return test_report();
}
