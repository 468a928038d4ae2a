/*
 * fuzz_input.h - hands a fuzz input to readers that take a path or a C string.
 *
 * The readers under test (results, scenarios, ceilings) open files by name, as users call them.
 * A memfd gives the input a path (/proc/self/fd/N) without touching the disk, so the fuzzer
 * exercises the real open/read path at full speed.
 */
#ifndef H2B_FUZZ_INPUT_H
#define H2B_FUZZ_INPUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a new memfd and its path into path; returns the fd (close it after) or -1. */
static inline int fuzz_input_path(const uint8_t *data, size_t size, char *path, size_t path_size)
{
    int fd = memfd_create("fuzz-input", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, path_size, "/proc/self/fd/%d", fd);
    return fd;
}

/* A NUL-terminated copy of the input (the caller frees it), or NULL when out of memory. */
static inline char *fuzz_input_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text != NULL) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    return text;
}

/* Parses the input as JSON the way h2b_json_load does (duplicate keys rejected). *text gets the
 * NUL-terminated copy that diagnostics locate fields in (the caller frees it; NULL when out of
 * memory). Returns the document (the caller decrefs it) or NULL for invalid JSON. */
static inline json_t *fuzz_input_json(const uint8_t *data, size_t size, char **text)
{
    *text = fuzz_input_text(data, size);
    if (*text == NULL)
        return NULL;
    json_error_t err;
    return json_loadb(*text, size, JSON_REJECT_DUPLICATES, &err);
}

#endif
