/*
 * results_check.c - validates a results file with h2b_results_read and prints one line per
 * matrix cell ("target connections requested effective status failed-requests reason"), so
 * integration scripts can assert on results without a JSON tool. Exit 0 valid, 2 invalid.
 */
#include "core/error.h"
#include "core/results.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    struct h2b_diag diag;
    json_t *doc = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: results_check FILE\n");
        return 2;
    }
    if (h2b_results_read(argv[1], &doc, &diag) != H2B_OK) {
        h2b_diag_print(&diag, stderr);
        return 2;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "matrix"), i, e)
    {
        json_t *reason = json_object_get(e, "reason");
        json_t *failed = json_object_get(e, "failed");
        printf("%s %lld %lld %lld %s %s %s\n", json_string_value(json_object_get(e, "target")),
               (long long)json_integer_value(json_object_get(e, "connections")),
               (long long)json_integer_value(json_object_get(e, "streams_requested")),
               (long long)json_integer_value(json_object_get(e, "streams_effective")),
               json_string_value(json_object_get(e, "status")),
               json_is_integer(failed) ? "counted" : "null",
               json_is_string(reason) ? json_string_value(reason) : "-");
        if (json_is_integer(failed))
            printf("  failed_requests %lld\n", (long long)json_integer_value(failed));
    }
    printf("micro %zu\n", json_array_size(json_object_get(doc, "micro")));
    json_decref(doc);
    return 0;
}
