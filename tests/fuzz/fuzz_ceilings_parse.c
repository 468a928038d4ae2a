/*
 * fuzz_ceilings_parse.c - the ceilings validator on arbitrary JSON text.
 *
 * Whatever it accepts must serialise and validate again (what the gate writes for --propose
 * must be readable by the gate).
 */
#include "gates/ceilings.h"
#include "core/error.h"
#include "fuzz_input.h"
#include "core/json.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    json_t *doc = fuzz_input_json(data, size, &text);
    if (doc != NULL) {
        struct h2b_json_src src = {.file = "fuzz.json", .text = text};
        struct h2b_ceilings *c = NULL;
        if (h2b_ceilings_from_json(doc, &src, &c, NULL, NULL) == H2B_OK) {
            char *again = NULL;
            if (h2b_ceilings_to_json(c, &again) == H2B_OK) {
                json_error_t err;
                json_t *doc2 = json_loads(again, 0, &err);
                struct h2b_json_src src2 = {.file = "again.json", .text = again};
                struct h2b_ceilings *c2 = NULL;
                if (doc2 == NULL || h2b_ceilings_from_json(doc2, &src2, &c2, NULL, NULL) != H2B_OK)
                    abort();
                h2b_ceilings_del(c2);
                json_decref(doc2);
                free(again);
            }
            h2b_ceilings_del(c);
        }
        json_decref(doc);
    }
    free(text);
    return 0;
}
