/* test_error.c - every code has its own description, unknown codes are safe. */
#include "core/error.h"
#include "test.h"

int main(void)
{
    static const int codes[] = {
        H2B_OK,         H2B_ERR_INVAL,       H2B_ERR_NOMEM,  H2B_ERR_IO,         H2B_ERR_PARSE,
        H2B_ERR_RANGE,  H2B_ERR_UNSUPPORTED, H2B_ERR_SYS,    H2B_ERR_TIMEOUT,    H2B_ERR_PROTO,
        H2B_ERR_CLOSED, H2B_ERR_NOTFOUND,    H2B_ERR_EXISTS, H2B_ERR_INTERRUPTED};
    size_t n = sizeof(codes) / sizeof(codes[0]);
    for (size_t i = 0; i < n; i++) {
        CHECK(codes[i] <= 0);
        CHECK(strcmp(h2b_strerror(codes[i]), "unknown error") != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(h2b_strerror(codes[i]), h2b_strerror(codes[j])) != 0);
    }
    CHECK_STR(h2b_strerror(-9999), "unknown error");
    CHECK_STR(h2b_strerror(5), "unknown error");
    /* one mapping to exit statuses: input problems 2, runtime problems 3 */
    CHECK_EQ_INT(h2b_exit_code(H2B_OK), 0);
    CHECK_EQ_INT(h2b_exit_code(1), 1);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_INVAL), 2);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_PARSE), 2);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_NOTFOUND), 2);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_IO), 3);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_NOMEM), 3);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_SYS), 3);
    CHECK_EQ_INT(h2b_exit_code(H2B_ERR_INTERRUPTED), 3);
    CHECK_EQ_INT(h2b_exit_code(-9999), 3);
    return test_report();
}
