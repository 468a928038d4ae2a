/*
 * fuzz_results_read.c - the results reader (JSON syntax, schema validation and the located
 * diagnostics) on arbitrary bytes.
 *
 * Whatever it rejects must come with a message and a position inside the text; whatever it
 * accepts must survive locating every top-level field, and decoding with every cell checked as
 * the report checks it (intervals and shape boundaries included), a refusal again with a
 * message.
 */
#include "core/error.h"
#include "fuzz_input.h"
#include "core/json.h"
#include "core/results.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_input_path(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    json_t *doc = NULL;
    struct h2b_diag diag = {0};
    int rv = h2b_results_read(path, &doc, &diag);
    if (rv == H2B_OK) {
        json_decref(doc);
        struct h2b_results_doc *d = NULL;
        char *dtext = NULL;
        if (h2b_results_doc_load(path, &d, &dtext, &diag) == H2B_OK) {
            struct h2b_json_src src = {path, dtext};
            for (size_t i = 0; i < d->matrix.n; i++) {
                char where[32];
                h2b_json_path_index(where, sizeof(where), "matrix", i);
                memset(&diag, 0, sizeof(diag));
                if (h2b_results_cell_check(h2b_results_doc_cell(d, i), &src, where, &diag) !=
                        H2B_OK &&
                    diag.message[0] == '\0')
                    abort();
            }
            h2b_results_doc_del(d);
            free(dtext);
        }
    } else if (diag.message[0] == '\0' || (diag.line != 0 && diag.line < 1) || diag.column < 0) {
        abort(); /* a rejection must say why, at a real place */
    }
    /* The locator on arbitrary text with paths of every shape. */
    char *text = fuzz_input_text(data, size);
    if (text != NULL) {
        static const char *paths[] = {
            "schema", "matrix[0].latency_ns.p99", "micro[3].name", "env", "a.b.c[10]", "[0]", ""};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
            int line = 0, column = 0;
            if (h2b_json_locate(text, paths[i], &line, &column) == H2B_OK &&
                (line < 1 || column < 1))
                abort();
        }
        free(text);
    }
    close(fd);
    return 0;
}
