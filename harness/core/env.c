/*
 * env.c - the environment fingerprint: machine, build, library versions, counters.
 *
 * Everything is read at run time where it can differ from build time: the nghttp2, OpenSSL and
 * jansson versions are those of the loaded libraries (a distribution upgrade changes them under
 * an unchanged binary), the CPU model and kernel those of the machine running now. Each fact
 * that makes numbers less comparable (no hardware counters, a non-Release or sanitized build,
 * fewer than two CPUs) also becomes a plain-language line in "warnings", so a report can show it
 * without knowing every field.
 *
 * The facts fill struct h2b_results_env and the results model writes it, so the keys are the
 * table's (results.c) for the writer and every reader alike; a fact's warning names it by its
 * row's key.
 *
 * The perf probe opens the counter and also counts a short loop: some hypervisors accept the
 * open and then count nothing, which would turn instructions/op into silent zeros.
 */
#include "core/env.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/results.h"
#include "core/version.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *errno_hint(int err)
{
    switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
        return "the CPU or hypervisor exposes no hardware counter for this event";
    case EACCES:
    case EPERM:
        return "not permitted: see kernel.perf_event_paranoid or the container's seccomp policy";
    case ENOSYS:
        return "the kernel has no perf_event_open";
    default:
        return "";
    }
}

bool h2b_env_perf_counters(char *reason, size_t size)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof(attr);
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        const char *hint = errno_hint(err);
        snprintf(reason, size, "perf_event_open(PERF_COUNT_HW_INSTRUCTIONS, user space): %s%s%s",
                 strerror(err), hint[0] ? " - " : "", hint);
        return false;
    }
    uint64_t count = 0;
    volatile uint64_t spin = 0;
    ioctl((int)fd, PERF_EVENT_IOC_RESET, 0);
    ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0);
    for (int i = 0; i < 10000; i++)
        spin = spin + (uint64_t)i;
    ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
    ssize_t n = read((int)fd, &count, sizeof(count));
    close((int)fd);
    if (n != (ssize_t)sizeof(count) || count == 0) {
        snprintf(reason, size,
                 "perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) opened but counted nothing "
                 "(virtualised PMU without counters)");
        return false;
    }
    if (size > 0)
        reason[0] = '\0';
    return true;
}

/* "model name" of the first CPU in /proc/cpuinfo into buf; false if not found. */
static bool read_cpu_model(char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (f == NULL)
        return false;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(buf, size, "%.*s", (int)strcspn(colon, "\n"), colon);
        found = buf[0] != '\0';
    }
    fclose(f);
    return found;
}

#define FACT(member) offsetof(struct h2b_results_env, member)

/* Sets the string member at offset of env to a copy of value, or leaves it null with a warning
 * naming its key when value is NULL. */
static int set_fact(struct h2b_results_env *env, size_t offset, const char *value)
{
    if (value == NULL) {
        char w[128];
        int n = snprintf(w, sizeof(w), "%s could not be determined",
                         h2b_model_key_at(&h2b_results_env_model, offset));
        return h2b_model_strs_push(&env->warnings, w, (size_t)n);
    }
    return h2b_model_set_string((char **)(void *)((char *)env + offset), value);
}

static int warn(struct h2b_results_env *env, const char *text)
{
    return h2b_model_strs_push(&env->warnings, text, strlen(text));
}

/* The sanitizer list "address,undefined" (or ';'-separated) into env->sanitizers: an array,
 * empty for a normal build. */
static int set_sanitizers(struct h2b_results_env *env, const char *list)
{
    if (!(env->sanitizers.v = calloc(1, sizeof(char *))))
        return H2B_ERR_NOMEM;
    while (*list) {
        size_t n = strcspn(list, ",;");
        if (n > 0 && h2b_model_strs_push(&env->sanitizers, list, n) != H2B_OK)
            return H2B_ERR_NOMEM;
        list += n;
        if (*list)
            list++;
    }
    return H2B_OK;
}

/* The facts of this machine and build into env (initialised; the caller frees it). */
static int collect(struct h2b_results_env *env)
{
    char buf[512], model[256], kernel[300];
    const char *model_p = read_cpu_model(model, sizeof(model)) ? model : NULL;
    struct utsname uts;
    const char *kernel_p = NULL;
    if (uname(&uts) == 0) {
        snprintf(kernel, sizeof(kernel), "%s %s %s", uts.sysname, uts.release, uts.machine);
        kernel_p = kernel;
    }
    cpu_set_t allowed;
    char allowed_list[256] = "";
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        h2b_cpu_format_list(&allowed, allowed_list, sizeof(allowed_list));
    char host[256];
    const char *host_p = gethostname(host, sizeof(host)) == 0 ? host : NULL;
    host[sizeof(host) - 1] = '\0';
    const nghttp2_info *ng = nghttp2_version(0);
    char reason[256];
    bool perf = h2b_env_perf_counters(reason, sizeof(reason));
    const char *build_type = h2b_version_build_type();
    const char *sanitizers = h2b_version_sanitizers();
    int cpus = h2b_cpu_online();

    env->warnings.v = calloc(1, sizeof(char *)); /* present, and empty until a warning */
    env->cpus = cpus;
    env->perf_counters = perf;
    if (!env->warnings.v || set_fact(env, FACT(cpu_model), model_p) ||
        set_fact(env, FACT(cpus_allowed), allowed_list[0] ? allowed_list : NULL) ||
        set_fact(env, FACT(kernel), kernel_p) ||
        set_fact(env, FACT(compiler), h2b_version_compiler()) ||
        set_fact(env, FACT(compiler_flags), h2b_version_c_flags()) ||
        set_fact(env, FACT(build_type), build_type) || set_sanitizers(env, sanitizers) ||
        set_fact(env, FACT(nghttp2), ng ? ng->version_str : NULL) ||
        set_fact(env, FACT(openssl), OpenSSL_version(OPENSSL_VERSION_STRING)) ||
        set_fact(env, FACT(jansson), jansson_version_str()) ||
        set_fact(env, FACT(git_commit), h2b_version_git_commit()) ||
        set_fact(env, FACT(hostname), host_p) ||
        set_fact(env, FACT(perf_counters_reason), perf ? "" : reason))
        return H2B_ERR_NOMEM;

    if (!perf && warn(env, "no hardware performance counters (see perf_counters_reason): "
                           "instructions_per_op comes from callgrind or is null") != H2B_OK)
        return H2B_ERR_NOMEM;
    if (strcmp(build_type, "Release") != 0) {
        snprintf(buf, sizeof(buf),
                 "%s build: numbers are not comparable with Release results and must not feed "
                 "gates",
                 build_type[0] ? build_type : "unspecified");
        if (warn(env, buf) != H2B_OK)
            return H2B_ERR_NOMEM;
    }
    if (sanitizers[0]) {
        snprintf(buf, sizeof(buf),
                 "built with sanitizers (%s): timings are inflated and the counting allocator is "
                 "disabled",
                 sanitizers);
        if (warn(env, buf) != H2B_OK)
            return H2B_ERR_NOMEM;
    }
    if (cpus < 2 &&
        warn(env, "fewer than 2 CPUs: server and client cannot be pinned to disjoint CPUs") !=
            H2B_OK)
        return H2B_ERR_NOMEM;
    return H2B_OK;
}

int h2b_env_collect(json_t **out)
{
    struct h2b_results_env env;
    h2b_model_init(&h2b_results_env_model, &env);
    int rv = collect(&env);
    if (rv == H2B_OK)
        rv = h2b_model_to_json(&h2b_results_env_model, &env, out);
    h2b_model_free(&h2b_results_env_model, &env);
    return rv;
}
