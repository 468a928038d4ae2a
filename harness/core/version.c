/*
 * version.c - the generated build facts behind functions, so that only this file depends on
 * the header that changes with every commit.
 */
#include "core/version.h"
#include "h2b_version.h"

#ifndef H2B_C_FLAGS
#define H2B_C_FLAGS ""
#endif

const char *h2b_version(void)
{
    return H2B_VERSION;
}

const char *h2b_version_git_commit(void)
{
    return H2B_GIT_COMMIT;
}

const char *h2b_version_build_type(void)
{
    return H2B_BUILD_TYPE;
}

const char *h2b_version_sanitizers(void)
{
    return H2B_SANITIZERS;
}

const char *h2b_version_compiler(void)
{
    return H2B_COMPILER;
}

const char *h2b_version_c_flags(void)
{
    return H2B_C_FLAGS;
}
