/*
 * test_json.c - locating paths in JSON text (table-driven), syntax errors with line:column,
 * typed checks and their messages, and the atomic writer (round trip, key order, failures that
 * leave nothing behind).
 */
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static const char doc_text[] =
    "{\n"
    "  \"name\": \"demo\",\n"
    "  \"matrix\": {\n"
    "    \"connections\": [1, 10,\n"
    "                    100],\n"
    "    \"streams\": [ ]\n"
    "  },\n"
    "  \"targets\": [{\"name\": \"h2ref\"}, {\"name\": \"é\", \"x\": 3}],\n"
    "  \"esc\\\"aped\": \"a\\\"b\", \"after\": null\n"
    "}\n";

static const struct {
    const char *path;
    int rv, line, column;
} locate_cases[] = {
    {"", H2B_OK, 1, 1},
    {"name", H2B_OK, 2, 11},
    {"matrix", H2B_OK, 3, 13},
    {"matrix.connections", H2B_OK, 4, 20},
    {"matrix.connections[0]", H2B_OK, 4, 21},
    {"matrix.connections[1]", H2B_OK, 4, 24},
    {"matrix.connections[2]", H2B_OK, 5, 21},
    {"matrix.streams", H2B_OK, 6, 16},
    {"targets[0].name", H2B_OK, 8, 24},
    {"targets[1].name", H2B_OK, 8, 43},
    {"targets[1].x", H2B_OK, 8, 53}, /* "é" is one column */
    {"after", H2B_OK, 9, 33},
    {"matrix.connections[3]", H2B_ERR_NOTFOUND, 0, 0},
    {"matrix.streams[0]", H2B_ERR_NOTFOUND, 0, 0},
    {"nothing", H2B_ERR_NOTFOUND, 0, 0},
    {"name.sub", H2B_ERR_NOTFOUND, 0, 0},
    {"matrix[0]", H2B_ERR_NOTFOUND, 0, 0},
    {"matrix..x", H2B_ERR_INVAL, 0, 0},
    {"matrix[x]", H2B_ERR_INVAL, 0, 0},
    {"matrix[1", H2B_ERR_INVAL, 0, 0},
};

static char tmpdir[] = "/tmp/h2b_test_json.XXXXXX";

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static char *diag_string(const struct h2b_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    h2b_diag_print(d, f);
    fclose(f);
    return buf;
}

static void test_locate(void)
{
    for (size_t i = 0; i < sizeof(locate_cases) / sizeof(locate_cases[0]); i++) {
        int line = 0, column = 0;
        int rv = h2b_json_locate(doc_text, locate_cases[i].path, &line, &column);
        if (rv != locate_cases[i].rv || line != locate_cases[i].line ||
            column != locate_cases[i].column)
            fprintf(stderr, "locate '%s': rv %d at %d:%d\n", locate_cases[i].path, rv, line,
                    column);
        CHECK_EQ_INT(rv, locate_cases[i].rv);
        CHECK_EQ_INT(line, locate_cases[i].line);
        CHECK_EQ_INT(column, locate_cases[i].column);
    }
    int line, column;
    CHECK_EQ_INT(h2b_json_locate("{\"a\": [1, 2", "a[1]", &line, &column), H2B_OK);
    CHECK_EQ_INT(h2b_json_locate("{\"a\": [1, }", "a[2]", &line, &column), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_json_locate(NULL, "a", &line, &column), H2B_ERR_INVAL);
}

static const struct {
    const char *text;
    int line, column;
    const char *contains;
} syntax_cases[] = {
    {"{\"a\": x}", 1, 7, "invalid token near 'x'"},
    {"{\n  \"a\": 1,\n  \"b\": tru\n}", 3, 8, "near 'tru'"},
    {"{\"a\": 1,}", 1, 9, "string or '}' expected"},
    {"{\"a\": 1", 1, 8, "end of file"},
    {"{\"a\": 1, \"a\": 2}", 1, 10, "duplicate object key"},
    {"[1] x", 1, 5, "end of file expected"},
};

static void test_load(void)
{
    char path[256];
    path_in_tmp(path, sizeof(path), "bad.json");
    for (size_t i = 0; i < sizeof(syntax_cases) / sizeof(syntax_cases[0]); i++) {
        test_write_text(path, syntax_cases[i].text);
        json_t *doc = (json_t *)&doc; /* must stay untouched */
        char *text = (char *)&text;
        struct h2b_diag d;
        CHECK_EQ_INT(h2b_json_load(path, &doc, &text, &d), H2B_ERR_PARSE);
        CHECK(doc == (json_t *)&doc && text == (char *)&text);
        CHECK_STR(d.file, path);
        CHECK_EQ_INT(d.line, syntax_cases[i].line);
        CHECK_EQ_INT(d.column, syntax_cases[i].column);
        CHECK(strstr(d.message, syntax_cases[i].contains) != NULL);
        if (i == 1) {
            char *s = diag_string(&d);
            printf("syntax error reads: %s", s);
            CHECK(strncmp(s, path, strlen(path)) == 0 && strstr(s, ":3:8: invalid JSON: "));
            free(s);
        }
    }

    struct h2b_diag d;
    json_t *doc;
    char *text;
    path_in_tmp(path, sizeof(path), "missing.json");
    CHECK_EQ_INT(h2b_json_load(path, &doc, NULL, &d), H2B_ERR_IO);
    CHECK(strstr(d.message, "No such file") != NULL);
    CHECK_EQ_INT(h2b_json_load(tmpdir, &doc, NULL, &d), H2B_ERR_IO);

    path_in_tmp(path, sizeof(path), "good.json");
    test_write_text(path, doc_text);
    CHECK_EQ_INT(h2b_json_load(path, &doc, &text, &d), H2B_OK);
    CHECK_STR(text, doc_text);
    CHECK_STR(json_string_value(json_object_get(doc, "name")), "demo");
    json_decref(doc);
    free(text);
}

static void test_diag(void)
{
    struct h2b_diag d;
    h2b_diag_set(&d, "s.json", doc_text, "matrix.connections[2]", "expected %s", "more");
    CHECK_EQ_INT(d.line, 5);
    CHECK_EQ_INT(d.column, 21);
    CHECK_STR(d.message, "matrix.connections[2]: expected more");
    char *s = diag_string(&d);
    CHECK_STR(s, "s.json:5:21: matrix.connections[2]: expected more\n");
    free(s);

    /* A missing value is reported where its nearest existing ancestor starts. */
    h2b_diag_set(&d, "s.json", doc_text, "targets[0].port", "missing");
    CHECK_EQ_INT(d.line, 8);
    CHECK_EQ_INT(d.column, 15);
    h2b_diag_set(&d, "s.json", doc_text, "targets[7].name", "missing");
    CHECK_EQ_INT(d.line, 8);
    CHECK_EQ_INT(d.column, 14);
    h2b_diag_set(&d, "s.json", NULL, "a.b", "no text");
    CHECK_EQ_INT(d.line, 0);
    s = diag_string(&d);
    CHECK_STR(s, "s.json: a.b: no text\n");
    free(s);
    h2b_diag_at(&d, NULL, 0, 0, "plain %d", 7);
    s = diag_string(&d);
    CHECK_STR(s, "plain 7\n");
    free(s);
    h2b_diag_set(NULL, "x", doc_text, "", "ignored"); /* NULL diag is allowed */
}

static void test_checks(void)
{
    static const char text[] = "{\"n\": -3, \"ok\": 7, \"r\": 2.5, \"s\": \"\", \"b\": 1,\n"
                               " \"nul\": null, \"o\": {\"conections\": 1}, \"a\": [1]}";
    json_t *doc = json_loads(text, 0, NULL);
    struct h2b_json_src src = {"c.json", text};
    struct h2b_diag d;
    uint64_t u = 99;
    double x = 0;
    bool b = false;
    const char *s = NULL;
    json_t *o = NULL;

    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "ok", 0, 1, 10, &u, &d), H2B_OK);
    CHECK_EQ_U64(u, 7);
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "ok", 0, 1, 5, &u, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "ok: expected an integer in [1, 5], got 7");
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "n", 0, 1, INT64_MAX, &u, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "n: expected a positive integer, got -3");
    CHECK_EQ_INT(d.line, 1);
    CHECK_EQ_INT(d.column, 7);
    CHECK_EQ_U64(u, 7);
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "r", 0, 0, INT64_MAX, &u, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "r: expected a non-negative integer, got 2.5");
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "nul", H2B_JSON_NULLABLE, 0, 9, &u, &d),
                 H2B_JSON_ABSENT);
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "nul", 0, 0, 9, &u, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "nul: expected an integer in [0, 9], got null");
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "zz", H2B_JSON_OPTIONAL, 0, 9, &u, &d),
                 H2B_JSON_ABSENT);
    CHECK_EQ_INT(h2b_json_get_u64(&src, doc, "", "zz", 0, 0, 9, &u, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "zz: missing required field (expected an integer in [0, 9])");
    CHECK_EQ_INT(d.line, 1); /* at the object that lacks it */
    CHECK_EQ_INT(d.column, 1);

    CHECK_EQ_INT(h2b_json_get_double(&src, doc, "", "r", 0, 0, 1e300, &x, &d), H2B_OK);
    CHECK(x == 2.5);
    CHECK_EQ_INT(h2b_json_get_double(&src, doc, "", "ok", 0, 0, 1e300, &x, &d), H2B_OK);
    CHECK(x == 7.0);
    CHECK_EQ_INT(h2b_json_get_double(&src, doc, "", "n", 0, 0, 1e300, &x, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "n: expected a number in [0, 1e+300], got -3");
    CHECK_EQ_INT(h2b_json_get_double(&src, doc, "", "s", 0, -1e308 * 10, 1e308 * 10, &x, &d),
                 H2B_ERR_PARSE);
    CHECK_STR(d.message, "s: expected a number, got \"\"");

    CHECK_EQ_INT(h2b_json_get_bool(&src, doc, "", "b", 0, &b, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "b: expected true or false, got 1");
    CHECK_EQ_INT(h2b_json_get_string(&src, doc, "", "s", 0, &s, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "s: expected a non-empty string, got \"\"");
    CHECK_EQ_INT(h2b_json_get_object(&src, doc, "", "o", 0, &o, &d), H2B_OK);
    CHECK_EQ_INT(h2b_json_get_array(&src, doc, "", "o", 0, &o, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message, "o: expected an array, got an object");
    CHECK_EQ_INT(h2b_json_get_array(&src, doc, "", "a", 0, &o, &d), H2B_OK);
    CHECK_EQ_INT(json_array_size(o), 1);

    static const char *const allowed[] = {"connections", "streams", NULL};
    json_t *inner = json_object_get(doc, "o");
    CHECK_EQ_INT(h2b_json_check_keys(&src, inner, "o", allowed, &d), H2B_ERR_PARSE);
    CHECK_STR(d.message,
              "o.conections: unknown field 'conections'; expected one of: connections, streams");
    CHECK_EQ_INT(d.line, 2);
    CHECK_EQ_INT(d.column, 35);
    CHECK_EQ_INT(h2b_json_check_keys(&src, json_object_get(doc, "a"), "a", allowed, &d), H2B_OK);

    char path[64];
    h2b_json_path_key(path, sizeof(path), "", "x");
    CHECK_STR(path, "x");
    h2b_json_path_key(path, sizeof(path), "a[2]", "x");
    CHECK_STR(path, "a[2].x");
    h2b_json_path_index(path, sizeof(path), "matrix", 12);
    CHECK_STR(path, "matrix[12]");
    json_decref(doc);
}

static int count_temporaries(void)
{
    int n = 0;
    DIR *dir = opendir(tmpdir);
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (dir)
        closedir(dir);
    return n;
}

static void test_write_atomic(void)
{
    char path[256];
    struct h2b_diag d;
    path_in_tmp(path, sizeof(path), "out.json");
    json_t *doc = json_pack("{s:i, s:f, s:[s, n], s:{}, s:f}", "zeta", 1, "alpha", 0.1, "list", "x",
                            "empty", "ratio", 1.0 / 3.0);
    CHECK_EQ_INT(h2b_json_write_atomic(path, doc, &d), H2B_OK);
    json_t *back;
    char *text;
    CHECK_EQ_INT(h2b_json_load(path, &back, &text, &d), H2B_OK);
    CHECK_STR(text, "{\n  \"zeta\": 1,\n  \"alpha\": 0.1,\n  \"list\": [\n    \"x\",\n    null\n"
                    "  ],\n  \"empty\": {},\n  \"ratio\": 0.333333333333333\n}\n");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
    free(text);
    json_decref(back);

    /* Overwrite in place; then failures: a missing directory, and a directory in the way of the
     * rename. Neither leaves a temporary behind or touches an existing file. */
    CHECK_EQ_INT(h2b_json_write_atomic(path, doc, &d), H2B_OK);
    char bad[256];
    path_in_tmp(bad, sizeof(bad), "no/such/dir/out.json");
    CHECK_EQ_INT(h2b_json_write_atomic(bad, doc, &d), H2B_ERR_IO);
    CHECK(strstr(d.message, "cannot create a temporary file") != NULL);
    path_in_tmp(bad, sizeof(bad), "adir");
    mkdir(bad, 0755);
    char inside[300];
    snprintf(inside, sizeof(inside), "%s/keep", bad);
    test_write_text(inside, "x");
    CHECK_EQ_INT(h2b_json_write_atomic(bad, doc, &d), H2B_ERR_IO);
    CHECK(strstr(d.message, "cannot rename") != NULL);
    CHECK_EQ_INT(count_temporaries(), 0);
    unlink(inside);
    rmdir(bad);
    CHECK_EQ_INT(h2b_json_write_atomic(path, NULL, &d), H2B_ERR_INVAL);
    json_decref(doc);
    unlink(path);
}

/* Issue 13 defect 4: non-regular targets are written in place, a FIFO input does not hang,
 * and an output lock is exclusive. */
static void test_special_files(void)
{
    struct h2b_diag d;
    char fifo[256];
    path_in_tmp(fifo, sizeof(fifo), "fifo");
    CHECK(mkfifo(fifo, 0644) == 0);
    /* Input: nobody writes, so it reads as empty (a parse error) instead of blocking in open. */
    alarm(10);
    json_t *doc = NULL;
    char *text = NULL;
    CHECK(h2b_json_load(fifo, &doc, &text, &d) != H2B_OK);
    /* Output: a reader gets the bytes; the FIFO stays a FIFO. */
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(fifo, O_RDONLY);
        char buf[64];
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
        _exit(n == 5 && memcmp(buf, "hello", 5) == 0 ? 0 : 1);
    }
    CHECK_EQ_INT(h2b_file_write_atomic(fifo, "hello", 5, &d), H2B_OK);
    int status = -1;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    alarm(0);
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK_EQ_INT(count_temporaries(), 0);
    unlink(fifo);
    /* A character device is written, not replaced by a regular file: our own copy of
     * /dev/null (mknod needs root), so that the code before the fix could not break the real
     * one; elsewhere /dev/null itself, which an unprivileged writer could never replace. */
    char dev[256];
    path_in_tmp(dev, sizeof(dev), "null");
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0)
        snprintf(dev, sizeof(dev), "/dev/null");
    CHECK_EQ_INT(h2b_file_write_atomic(dev, "x", 1, &d), H2B_OK);
    CHECK(stat(dev, &st) == 0 && S_ISCHR(st.st_mode));
    if (strcmp(dev, "/dev/null") != 0)
        unlink(dev);
    CHECK_EQ_INT(count_temporaries(), 0);

    /* The output lock: a second holder is refused until the first releases it. */
    char out[256];
    path_in_tmp(out, sizeof(out), "locked.json");
    int a = -1, b = -1;
    CHECK_EQ_INT(h2b_file_lock(out, &a, &d), H2B_OK);
    CHECK_EQ_INT(h2b_file_lock(out, &b, &d), H2B_ERR_EXISTS);
    CHECK(strstr(d.message, "another h2bench is writing this file") != NULL);
    h2b_file_unlock(out, a);
    CHECK_EQ_INT(h2b_file_lock(out, &b, &d), H2B_OK);
    h2b_file_unlock(out, b);
    char lock[300];
    snprintf(lock, sizeof(lock), "%s.lock", out);
    CHECK(access(lock, F_OK) != 0);
}

int main(void)
{
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_locate();
    test_load();
    test_diag();
    test_checks();
    test_write_atomic();
    test_special_files();
    char path[256];
    path_in_tmp(path, sizeof(path), "bad.json");
    unlink(path);
    path_in_tmp(path, sizeof(path), "good.json");
    unlink(path);
    rmdir(tmpdir);
    return test_report();
}
