/*
 * fmt.c - the report's path helper. Its number formatting moved to core/fmt.c, so the A/B tables
 * of gates/ (abtable.c) print numbers exactly as the report does.
 */
#include "report/report_int.h"

#include <string.h>

const char *h2b__basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
