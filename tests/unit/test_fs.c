/*
 * test_fs.c - h2b_find_program: a name looked up on $PATH (first match wins, directories and
 * non-executable files skipped, an empty entry is the current directory), a path taken as it
 * is, and the failures (not found, buffer too small); h2b_fs_mkdir_p; h2b_fd_read_all;
 * h2b_fs_read_file (missing, a directory, over the bound, a FIFO with no writer) and
 * h2b_fs_last_line and h2b_fs_tail; h2b_fs_output_check.
 */
#include "core/error.h"
#include "core/json.h"
#include "core/fs.h"
#include "test.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/h2b-test-fs-XXXXXX";

static void make_file(const char *rel, mode_t mode)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK_EQ_INT(f != NULL, 1);
    if (f)
        fclose(f);
    chmod(path, mode);
}

static void test_find_program(void)
{
    char dirs[4][256], path[2048], buf[PATH_MAX], want[PATH_MAX];
    const char *names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", root, names[i]);
        CHECK_EQ_INT(mkdir(dirs[i], 0755), 0);
    }
    make_file("a/tool", 0644); /* not executable: skipped */
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/b/tool", root); /* a directory: skipped */
    CHECK_EQ_INT(mkdir(sub, 0755), 0);
    make_file("c/tool", 0755); /* the first real one */
    make_file("d/tool", 0755);
    snprintf(path, sizeof(path), "%s:%s:%s:%s", dirs[0], dirs[1], dirs[2], dirs[3]);
    setenv("PATH", path, 1);
    CHECK_EQ_INT(h2b_find_program("tool", buf, sizeof(buf)), H2B_OK);
    snprintf(want, sizeof(want), "%s/tool", dirs[2]);
    CHECK_STR(buf, want);
    CHECK_EQ_INT(h2b_find_program("missing", buf, sizeof(buf)), H2B_ERR_NOTFOUND);
    CHECK_EQ_INT(h2b_find_program("", buf, sizeof(buf)), H2B_ERR_NOTFOUND);
    char tiny[8];
    CHECK_EQ_INT(h2b_find_program(want, tiny, sizeof(tiny)), H2B_ERR_RANGE);
    /* a path is taken as it is, not looked up */
    CHECK_EQ_INT(h2b_find_program(want, buf, sizeof(buf)), H2B_OK);
    CHECK_STR(buf, want);
    snprintf(want, sizeof(want), "%s/a/tool", root);
    CHECK_EQ_INT(h2b_find_program(want, buf, sizeof(buf)), H2B_ERR_NOTFOUND);
    /* an empty entry is the current directory */
    char cwd[PATH_MAX];
    CHECK_EQ_INT(getcwd(cwd, sizeof(cwd)) != NULL, 1);
    CHECK_EQ_INT(chdir(dirs[3]), 0);
    setenv("PATH", ":/nonexistent", 1);
    CHECK_EQ_INT(h2b_find_program("tool", buf, sizeof(buf)), H2B_OK);
    CHECK_STR(buf, "./tool");
    CHECK_EQ_INT(chdir(cwd), 0);
}

/* mkdir -p: parents made, an existing directory fine, a file in the way is ENOTDIR. */
static void test_mkdir_p(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/m/a/b", root);
    CHECK_EQ_INT(h2b_fs_mkdir_p(path, 0755), H2B_OK);
    struct stat st;
    CHECK_EQ_INT(stat(path, &st) == 0 && S_ISDIR(st.st_mode), 1);
    CHECK_EQ_INT(h2b_fs_mkdir_p(path, 0755), H2B_OK);
    make_file("m/file", 0644);
    snprintf(path, sizeof(path), "%s/m/file", root);
    errno = 0;
    CHECK_EQ_INT(h2b_fs_mkdir_p(path, 0755), H2B_ERR_IO);
    CHECK_EQ_INT(errno, ENOTDIR);
    snprintf(path, sizeof(path), "%s/m/file/below", root);
    CHECK_EQ_INT(h2b_fs_mkdir_p(path, 0755), H2B_ERR_IO);
}

/* Reads pipe content n bytes long with h2b_fd_read_all(max, hint); returns its code. */
static int read_n(size_t n, size_t max, size_t hint, size_t *len_out)
{
    int fds[2];
    CHECK_EQ_INT(pipe(fds), 0);
    char chunk[512];
    memset(chunk, 'x', sizeof(chunk));
    for (size_t left = n; left > 0;) { /* n stays below the 64 KiB pipe buffer */
        size_t k = left < sizeof(chunk) ? left : sizeof(chunk);
        CHECK_EQ_INT(write(fds[1], chunk, k) == (ssize_t)k, 1);
        left -= k;
    }
    close(fds[1]);
    char *buf = NULL;
    size_t len = 0;
    int rc = h2b_fd_read_all(fds[0], max, hint, &buf, &len);
    close(fds[0]);
    if (rc == H2B_OK) {
        CHECK_EQ_INT(buf[len] == '\0', 1);
        CHECK_EQ_INT(len > 0 ? buf[len - 1] == 'x' : 1, 1);
        *len_out = len;
        free(buf);
    }
    return rc;
}

/* A whole descriptor, bounded: empty, below, exactly at and one byte over the bound, growing
 * past the 4 KiB start and from a size hint. */
static void test_fd_read_all(void)
{
    size_t len = 99;
    CHECK_EQ_INT(read_n(0, 100, 0, &len), H2B_OK);
    CHECK_EQ_INT(len == 0, 1);
    CHECK_EQ_INT(read_n(100, 100, 0, &len), H2B_OK);
    CHECK_EQ_INT(len == 100, 1);
    CHECK_EQ_INT(read_n(101, 100, 0, &len), H2B_ERR_RANGE);
    CHECK_EQ_INT(read_n(20000, 60000, 0, &len), H2B_OK);
    CHECK_EQ_INT(len == 20000, 1);
    CHECK_EQ_INT(read_n(20000, 60000, 100, &len), H2B_OK); /* a hint below the truth */
    CHECK_EQ_INT(len == 20000, 1);
    CHECK_EQ_INT(read_n(8193, 8192, 8192, &len), H2B_ERR_RANGE);
    char *buf = NULL;
    CHECK_EQ_INT(h2b_fd_read_all(-1, 100, 0, &buf, &len), H2B_ERR_IO);
    CHECK_EQ_INT(buf == NULL, 1);
}

/* write_text REL TEXT: a file under root holding text. */
static void write_text(const char *rel, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* h2b_fs_read_file: the text, the codes, and diag's messages naming the path. */
static void test_read_file(void)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    struct h2b_diag d = {0};
    write_text("ten", "0123456789", path, sizeof(path));
    CHECK_EQ_INT(h2b_fs_read_file(path, 10, &text, &len, &d), H2B_OK);
    CHECK_STR(text, "0123456789");
    CHECK_EQ_INT(len == 10, 1);
    free(text);
    text = NULL;
    CHECK_EQ_INT(h2b_fs_read_file(path, 9, &text, &len, &d), H2B_ERR_RANGE);
    CHECK(text == NULL);
    CHECK(strstr(d.message, "larger than 9 bytes") != NULL);
    CHECK(strstr(d.file, "/ten") != NULL);

    snprintf(path, sizeof(path), "%s/nosuch", root);
    CHECK_EQ_INT(h2b_fs_read_file(path, 100, &text, &len, &d), H2B_ERR_NOTFOUND);
    CHECK(strstr(d.message, "cannot open: No such file or directory") != NULL);
    CHECK(text == NULL);
    CHECK_EQ_INT(h2b_fs_read_file(root, 100, &text, &len, &d), H2B_ERR_IO);
    CHECK(strstr(d.message, "is a directory") != NULL);
    CHECK(text == NULL);

    /* a FIFO nobody writes to: empty at once, no wait for a writer */
    snprintf(path, sizeof(path), "%s/fifo", root);
    CHECK_EQ_INT(mkfifo(path, 0600), 0);
    CHECK_EQ_INT(h2b_fs_read_file(path, 100, &text, &len, NULL), H2B_OK);
    CHECK_EQ_INT(len == 0, 1);
    free(text);
}

/* h2b_fs_last_line: the last non-empty line, trailing newlines, CRs and spaces off. */
static void test_last_line(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"first\nsecond\n", "second"},
        {"first\r\nsecond  \r\n\n\n", "second"},
        {"only", "only"},
        {"", ""},
        {"\n\n", ""},
    };
    char path[PATH_MAX], line[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_text("log", cases[i].text, path, sizeof(path));
        h2b_fs_last_line(path, line, sizeof(line));
        CHECK_STR(line, cases[i].want);
    }
    write_text("log", "a\n0123456789abcdef\n", path, sizeof(path));
    h2b_fs_last_line(path, line, 5);
    CHECK_STR(line, "0123");
    snprintf(path, sizeof(path), "%s/nosuch", root);
    h2b_fs_last_line(path, line, sizeof(line));
    CHECK_STR(line, "");
}

/* h2b_fs_tail: the end of the file, several lines if they fit, the same trimming. */
static void test_tail(void)
{
    static const struct {
        const char *text;
        size_t size;
        const char *want;
    } cases[] = {
        {"line 3: plot x\n       ^\nundefined variable: x\n\n", 64,
         "line 3: plot x\n       ^\nundefined variable: x"},
        {"first\r\nsecond  \r\n", 64, "first\r\nsecond"},
        {"0123456789abcdef\n", 5, "cdef"},
        {"abc", 4, "abc"},
        {"", 64, ""},
    };
    char path[PATH_MAX], tail[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_text("log", cases[i].text, path, sizeof(path));
        h2b_fs_tail(path, tail, cases[i].size);
        CHECK_STR(tail, cases[i].want);
    }
    snprintf(path, sizeof(path), "%s/nosuch", root);
    h2b_fs_tail(path, tail, sizeof(tail));
    CHECK_STR(tail, "");
}

/* h2b_fs_output_check: what each kind of output accepts, and the message naming the culprit. */
static void test_output_check(void)
{
    static const struct {
        const char *rel; /* under root; "-" taken as is */
        enum h2b_fs_output kind;
        int rv;
        const char *pre, *culprit, *post; /* the message: pre root/culprit post; or NULL */
    } cases[] = {
        {"-", H2B_FS_OUT_FILE, H2B_OK, NULL, NULL, NULL},
        {"out.json", H2B_FS_OUT_FILE, H2B_OK, NULL, NULL, NULL},
        {"oc/new.json", H2B_FS_OUT_FILE, H2B_ERR_INVAL, "directory ", "oc", " does not exist"},
        {"oc/new.json", H2B_FS_OUT_FILE_MKDIR, H2B_OK, NULL, NULL, NULL},
        {"oc/a/b", H2B_FS_OUT_DIR, H2B_OK, NULL, NULL, NULL},
        {"ofile/x.json", H2B_FS_OUT_FILE, H2B_ERR_INVAL, "", "ofile", " is not a directory"},
        {"ofile/a/x.json", H2B_FS_OUT_FILE_MKDIR, H2B_ERR_INVAL, "", "ofile",
         " is not a directory"},
        {"ofile", H2B_FS_OUT_DIR, H2B_ERR_INVAL, "", "ofile", " is a file, not a directory"},
        {"odir", H2B_FS_OUT_FILE, H2B_ERR_INVAL, "", "odir", " is a directory, not a file"},
        {"odir", H2B_FS_OUT_DIR, H2B_OK, NULL, NULL, NULL},
    };
    make_file("ofile", 0644);
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/odir", root);
    CHECK_EQ_INT(mkdir(dir, 0755), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[PATH_MAX], want[PATH_MAX + 64];
        if (strcmp(cases[i].rel, "-") == 0)
            snprintf(path, sizeof(path), "-");
        else
            snprintf(path, sizeof(path), "%s/%s", root, cases[i].rel);
        struct h2b_diag d = {0};
        CHECK_EQ_INT(h2b_fs_output_check(path, cases[i].kind, &d), cases[i].rv);
        if (cases[i].culprit) {
            snprintf(want, sizeof(want), "%s%s/%s%s", cases[i].pre, root, cases[i].culprit,
                     cases[i].post);
            CHECK_STR(d.message, want);
        }
    }
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_fs_output_check("", H2B_FS_OUT_FILE, &d), H2B_ERR_INVAL);
    snprintf(dir, sizeof(dir), "%s/oc", root);
    CHECK_EQ_INT(access(dir, F_OK) != 0, 1); /* nothing created */
}

int main(void)
{
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_find_program();
    test_mkdir_p();
    test_fd_read_all();
    test_read_file();
    test_last_line();
    test_tail();
    test_output_check();
    h2b_fs_remove_tree(root);
    return test_report();
}
