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
 * The perf probe opens the counter and also counts a short loop: some hypervisors accept the
 * open and then count nothing, which would turn instructions/op into silent zeros.
 */
#include "core/env.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/version.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>
#include <sched.h>
#include <stdint.h>
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

/* Sets key to a string, or to null with a warning when value is NULL. */
static int set_string(json_t *env, json_t *warnings, const char *key, const char *value)
{
    if (value == NULL) {
        char w[128];
        snprintf(w, sizeof(w), "%s could not be determined", key);
        if (json_array_append_new(warnings, json_string(w)) != 0)
            return H2B_ERR_NOMEM;
        return json_object_set_new(env, key, json_null()) ? H2B_ERR_NOMEM : H2B_OK;
    }
    return json_object_set_new(env, key, json_string(value)) ? H2B_ERR_NOMEM : H2B_OK;
}

static int warn(json_t *warnings, const char *text)
{
    return json_array_append_new(warnings, json_string(text)) ? H2B_ERR_NOMEM : H2B_OK;
}

/* The sanitizer list "address,undefined" as a JSON array. */
static json_t *sanitizer_array(const char *list)
{
    json_t *a = json_array();
    while (a && *list) {
        size_t n = strcspn(list, ",;");
        if (n > 0 && json_array_append_new(a, json_stringn(list, n)) != 0) {
            json_decref(a);
            return NULL;
        }
        list += n;
        if (*list)
            list++;
    }
    return a;
}

int h2b_env_collect(json_t **out)
{
    json_t *env = json_object();
    json_t *warnings = json_array();
    int rv = H2B_ERR_NOMEM;
    if (env == NULL || warnings == NULL)
        goto out_free;

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

    if ((rv = set_string(env, warnings, "cpu_model", model_p)) != H2B_OK ||
        json_object_set_new(env, "cpus", json_integer(cpus)) != 0 ||
        (rv = set_string(env, warnings, "cpus_allowed", allowed_list[0] ? allowed_list : NULL)) !=
            H2B_OK ||
        (rv = set_string(env, warnings, "kernel", kernel_p)) != H2B_OK ||
        (rv = set_string(env, warnings, "compiler", h2b_version_compiler())) != H2B_OK ||
        (rv = set_string(env, warnings, "compiler_flags", h2b_version_c_flags())) != H2B_OK ||
        (rv = set_string(env, warnings, "build_type", build_type)) != H2B_OK ||
        json_object_set_new(env, "sanitizers", sanitizer_array(sanitizers)) != 0 ||
        (rv = set_string(env, warnings, "nghttp2", ng ? ng->version_str : NULL)) != H2B_OK ||
        (rv = set_string(env, warnings, "openssl", OpenSSL_version(OPENSSL_VERSION_STRING))) !=
            H2B_OK ||
        (rv = set_string(env, warnings, "jansson", jansson_version_str())) != H2B_OK ||
        (rv = set_string(env, warnings, "git_commit", h2b_version_git_commit())) != H2B_OK ||
        (rv = set_string(env, warnings, "hostname", host_p)) != H2B_OK ||
        json_object_set_new(env, "perf_counters", json_boolean(perf)) != 0 ||
        (rv = set_string(env, warnings, "perf_counters_reason", perf ? "" : reason)) != H2B_OK) {
        rv = H2B_ERR_NOMEM;
        goto out_free;
    }

    if (!perf) {
        if ((rv = warn(warnings, "no hardware performance counters (see perf_counters_reason): "
                                 "instructions_per_op comes from callgrind or is null")) != H2B_OK)
            goto out_free;
    }
    if (strcmp(build_type, "Release") != 0) {
        snprintf(buf, sizeof(buf),
                 "%s build: numbers are not comparable with Release results and must not feed "
                 "gates",
                 build_type[0] ? build_type : "unspecified");
        if ((rv = warn(warnings, buf)) != H2B_OK)
            goto out_free;
    }
    if (sanitizers[0]) {
        snprintf(buf, sizeof(buf),
                 "built with sanitizers (%s): timings are inflated and the counting allocator is "
                 "disabled",
                 sanitizers);
        if ((rv = warn(warnings, buf)) != H2B_OK)
            goto out_free;
    }
    if (cpus < 2 && (rv = warn(warnings, "fewer than 2 CPUs: server and client cannot be pinned "
                                         "to disjoint CPUs")) != H2B_OK)
        goto out_free;
    if (json_object_set_new(env, "warnings", warnings) != 0) {
        warnings = NULL; /* json_object_set_new consumed it even on failure */
        rv = H2B_ERR_NOMEM;
        goto out_free;
    }
    *out = env;
    return H2B_OK;

out_free:
    json_decref(warnings);
    json_decref(env);
    return rv;
}
