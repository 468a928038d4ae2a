/*
 * fuzz_scenario_parse.c - the scenario validator on arbitrary JSON text.
 *
 * A rejected scenario must come with a message; an accepted one must be freed cleanly. The
 * located diagnostics (json.c's scanner) run on the same text.
 */
#include "core/error.h"
#include "fuzz_input.h"
#include "core/json.h"
#include "run/scenario.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    json_t *doc = fuzz_input_json(data, size, &text);
    if (doc != NULL) {
        static const char *const peers[] = {"nghttpd", "h2o", "nginx", NULL};
        struct h2b_json_src src = {.file = "fuzz.json", .text = text};
        struct h2b_scenario *s = NULL;
        struct h2b_diag diag = {0};
        int rv = h2b_scenario_load(doc, &src, peers, &s, &diag);
        if (rv == H2B_OK)
            h2b_scenario_del(s);
        else if (diag.message[0] == '\0' || s != NULL)
            abort();
        json_decref(doc);
    }
    free(text);
    return 0;
}
