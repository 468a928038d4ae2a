/*
 * version.h - what this build is: version, git commit, build type, compiler, sanitizers.
 *
 * The facts come from the generated h2b_version.h (cmake/version.cmake, refreshed on every
 * build); only version.c includes it, so a new commit recompiles one file.
 */
#ifndef H2B_CORE_VERSION_H
#define H2B_CORE_VERSION_H

/* All return static strings (never NULL). */
const char *h2b_version(void);            /* "0.1.0" */
const char *h2b_version_git_commit(void); /* "47031bc817a0", "-dirty" appended, or "unknown" */
const char *h2b_version_build_type(void); /* CMAKE_BUILD_TYPE: "Release", "Debug", ... */
const char *h2b_version_sanitizers(void); /* "address,undefined" or "" */
const char *h2b_version_compiler(void);   /* "GNU 12.2.0" */
const char *h2b_version_c_flags(void);    /* the build type's C flags, e.g. "-O3 -DNDEBUG" */

#endif
