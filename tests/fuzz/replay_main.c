/*
 * replay_main.c - runs a fuzz target over every file in the directories given, without libFuzzer.
 *
 * Used in ordinary (gcc, ASan) builds so the committed seeds and the regression inputs named after
 * past findings are exercised by every test run. Prints "N passed, 0 failed" when no input
 * crashed (a crash aborts the process, which fails the test).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
        fclose(f);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (data == NULL || fread(data, 1, size, f) != size) {
        free(data);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int replayed = 0, unreadable = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (d == NULL) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (replay_file(path) == 0)
                replayed++;
            else
                unreadable++;
        }
        closedir(d);
    }
    printf("%d passed, %d failed\n", replayed, unreadable);
    return unreadable || replayed == 0 ? 1 : 0;
}
