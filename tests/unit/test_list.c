/*
 * test_list.c - the intrusive list (core/list.h): order of insertion at either end, unlinking
 * from the front, middle and end, removal while iterating, moving a whole list, and the
 * asserted misuses (unlinking a node that is in no list, inserting one twice; with
 * H2B_CHECK_SLOW, unlinking a stale copy) aborting.
 */
#include "core/list.h"
#include "test.h"

struct item {
    int v;
    struct h2b_list node;
};

/* The values of head's elements, in order, as digits ("" when empty). */
static const char *values(struct h2b_list *head)
{
    static char s[32];
    size_t n = 0;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, head)
    {
        if (n + 1 < sizeof s)
            s[n++] = (char)('0' + H2B_LIST_ENTRY(pos, struct item, node)->v);
    }
    s[n] = '\0';
    return s;
}

static void test_insert_unlink(void)
{
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it[5] = {{.v = 0}, {.v = 1}, {.v = 2}, {.v = 3}, {.v = 4}};
    CHECK(h2b_list_empty(&l));
    CHECK(H2B_LIST_FIRST(&l, struct item, node) == NULL);
    CHECK(!h2b_list_linked(&it[0].node));
    h2b_list_insert_tail(&l, &it[1].node);
    h2b_list_insert_tail(&l, &it[2].node);
    h2b_list_insert_head(&l, &it[0].node);
    h2b_list_insert_tail(&l, &it[3].node);
    h2b_list_insert_tail(&l, &it[4].node);
    CHECK_STR(values(&l), "01234");
    CHECK(!h2b_list_empty(&l));
    CHECK(h2b_list_linked(&it[2].node));
    CHECK(H2B_LIST_FIRST(&l, struct item, node) == &it[0]);
    h2b_list_unlink(&it[2].node); /* middle */
    CHECK(!h2b_list_linked(&it[2].node));
    CHECK_STR(values(&l), "0134");
    h2b_list_unlink(&it[0].node); /* front */
    h2b_list_unlink(&it[4].node); /* end */
    CHECK_STR(values(&l), "13");
    h2b_list_insert_head(&l, &it[2].node); /* an unlinked node goes in again */
    CHECK_STR(values(&l), "213");
    h2b_list_unlink(&it[1].node);
    h2b_list_unlink(&it[2].node);
    h2b_list_unlink(&it[3].node);
    CHECK(h2b_list_empty(&l));
    CHECK_STR(values(&l), "");
}

static void test_foreach_unlinks_current(void)
{
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it[6];
    for (int i = 0; i < 6; i++) {
        it[i] = (struct item){.v = i};
        h2b_list_insert_tail(&l, &it[i].node);
    }
    struct h2b_list *pos, *tmp;
    int seen = 0;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &l)
    {
        seen++;
        if (H2B_LIST_ENTRY(pos, struct item, node)->v % 2 == 0)
            h2b_list_unlink(pos);
    }
    CHECK_EQ_INT(seen, 6);
    CHECK_STR(values(&l), "135");
}

static void test_take(void)
{
    struct h2b_list a, b;
    h2b_list_init(&a);
    h2b_list_take(&b, &a); /* an empty list moves as an empty list */
    CHECK(h2b_list_empty(&b));
    CHECK(h2b_list_empty(&a));
    struct item it[3] = {{.v = 7}, {.v = 8}, {.v = 9}};
    for (int i = 0; i < 3; i++)
        h2b_list_insert_tail(&a, &it[i].node);
    h2b_list_take(&b, &a);
    CHECK(h2b_list_empty(&a));
    CHECK_STR(values(&b), "789");
    struct item five = {.v = 5};
    h2b_list_insert_tail(&a, &five.node); /* the emptied source is a list again */
    CHECK_STR(values(&a), "5");
    h2b_list_unlink(&five.node);
    h2b_list_unlink(&it[1].node); /* a node moved with the list unlinks from its new one */
    CHECK_STR(values(&b), "79");
    h2b_list_unlink(&it[0].node);
    h2b_list_unlink(&it[2].node);
    CHECK(h2b_list_empty(&b));
}

static void unlink_unlinked(void)
{
    struct item it = {.v = 1};
    h2b_list_unlink(&it.node);
}

static void unlink_twice(void)
{
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it = {.v = 1};
    h2b_list_insert_tail(&l, &it.node);
    h2b_list_unlink(&it.node);
    h2b_list_unlink(&it.node);
}

static void insert_twice(void)
{
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it = {.v = 1};
    h2b_list_insert_tail(&l, &it.node);
    h2b_list_insert_head(&l, &it.node);
}

static void unlink_stale(void)
{
    /* a copy of a linked node: its neighbours do not point back at it */
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it = {.v = 1};
    h2b_list_insert_tail(&l, &it.node);
    struct item copy = it;
    h2b_list_unlink(&copy.node);
}

static void well_used(void)
{
    struct h2b_list l;
    h2b_list_init(&l);
    struct item it = {.v = 1};
    h2b_list_insert_tail(&l, &it.node);
    h2b_list_unlink(&it.node);
}

static void test_misuse_aborts(void)
{
    CHECK(!test_aborts(well_used)); /* the harness itself tells a clean exit from an abort */
    CHECK(test_aborts(unlink_unlinked));
    CHECK(test_aborts(unlink_twice));
    CHECK(test_aborts(insert_twice));
    CHECK_EQ_INT(test_aborts(unlink_stale), H2B_CHECK_SLOW); /* back-pointers: debug builds */
}

int main(void)
{
    test_insert_unlink();
    test_foreach_unlinks_current();
    test_take();
    test_misuse_aborts();
    return test_report();
}
