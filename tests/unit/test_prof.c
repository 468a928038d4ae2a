/*
 * test_prof.c - harness/prof: perf script parsing, folding, the summary's shares, folded files
 * round trip, hostile names in the SVG, and the errors bad input gets.
 */
#include "core/error.h"
#include "prof/prof.h"
#include "test.h"

#include <math.h>
#include <unistd.h>

/* Three samples the way `perf script -F comm,tid,period,ip,sym,dso` prints them: two identical
 * stacks through libnghttp2 (one unnamed frame, twice, which folds into one), one in the kernel
 * under libc. */
static const char script[] =
    "h2b-w0 100     250000 \n"
    "\t           14746 [unknown] (/usr/lib/x86_64-linux-gnu/libnghttp2.so.14.24.1)\n"
    "\t           14700 [unknown] (/usr/lib/x86_64-linux-gnu/libnghttp2.so.14.24.1)\n"
    "\t           11d96 nghttp2_session_mem_recv "
    "(/usr/lib/x86_64-linux-gnu/libnghttp2.so.14.24.1)\n"
    "\t           29339 worker_main (/opt/bin/h2bench)\n"
    "\t           891f4 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "h2b-w0 100     250000 \n"
    "\t           14746 [unknown] (/usr/lib/x86_64-linux-gnu/libnghttp2.so.14.24.1)\n"
    "\t           11d96 nghttp2_session_mem_recv "
    "(/usr/lib/x86_64-linux-gnu/libnghttp2.so.14.24.1)\n"
    "\t           29339 worker_main (/opt/bin/h2bench)\n"
    "\t           891f4 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "h2b-w0 100     250000 \n"
    "\tffffffff81b6c5e0 _copy_from_iter ([kernel.kallsyms])\n"
    "\t           fde9d __GI___writev (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t           285ba conn_flush (/opt/bin/h2bench)\n"
    "\t           29339 worker_main (/opt/bin/h2bench)\n"
    "\t           891f4 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "h2b-w0 100     250000 \n"
    "\t            7777 SSL_read (/usr/lib/x86_64-linux-gnu/libssl.so.3)\n"
    "\t           29339 worker_main (/opt/bin/h2bench)\n"
    "\n";

static const json_t *top_entry(const json_t *s, const char *symbol)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(s, "top"), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "symbol")), symbol) == 0)
            return e;
    }
    return NULL;
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void test_parse_and_summary(const char *dir)
{
    struct h2b_prof *p = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_prof_new(&p, "/opt/bin/h2bench"), H2B_OK);
    CHECK_EQ_INT(h2b_prof_parse_script(p, script, sizeof(script) - 1, "s.txt", &d), H2B_OK);
    CHECK_EQ_U64(h2b_prof_samples(p), 4);
    CHECK(fabs(h2b_prof_total_pct(p, "nghttp2_session_mem_recv") - 50.0) < 1e-9);
    CHECK(fabs(h2b_prof_total_pct(p, "worker_main") - 100.0) < 1e-9);

    json_t *s = NULL;
    CHECK_EQ_INT(h2b_prof_summary_json(p, 10, &s), H2B_OK);
    CHECK_EQ_INT(json_integer_value(json_object_get(s, "samples")), 4);
    const json_t *split = json_object_get(s, "dso_pct");
    CHECK(fabs(num(split, "nghttp2") - 50) < 1e-9);
    CHECK(fabs(num(split, "kernel") - 25) < 1e-9);
    CHECK(fabs(num(split, "tls") - 25) < 1e-9);
    CHECK(fabs(num(split, "libc") - 0) < 1e-9);
    double sum = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)split, k, v) sum += json_number_value(v);
    CHECK(fabs(sum - 100) < 1e-9);
    /* the run of unnamed frames is one frame named after its DSO, 2 of 4 samples */
    const json_t *u = top_entry(s, "[libnghttp2.so.14.24.1]");
    CHECK(u && fabs(num(u, "self_pct") - 50) < 1e-9);
    CHECK(u && strcmp(json_string_value(json_object_get(u, "class")), "nghttp2") == 0);
    /* worker_main: own code, self 0 so not in the top list (by self) */
    CHECK(top_entry(s, "worker_main") == NULL);
    const json_t *first = json_array_get(json_object_get(s, "top"), 0);
    CHECK(first && strcmp(json_string_value(json_object_get(first, "symbol")),
                          "[libnghttp2.so.14.24.1]") == 0);
    json_decref(s);

    /* folded round trip: same samples, same shares */
    char path[512];
    snprintf(path, sizeof(path), "%s/p.folded", dir);
    CHECK_EQ_INT(h2b_prof_write_folded(p, path, &d), H2B_OK);
    struct h2b_prof *q = NULL;
    CHECK_EQ_INT(h2b_prof_new(&q, "h2bench"), H2B_OK);
    CHECK_EQ_INT(h2b_prof_read_folded(q, path, &d), H2B_OK);
    CHECK_EQ_U64(h2b_prof_samples(q), 4);
    CHECK(fabs(h2b_prof_total_pct(q, "nghttp2_session_mem_recv") - 50.0) < 1e-9);
    json_t *s2 = NULL;
    CHECK_EQ_INT(h2b_prof_summary_json(q, 10, &s2), H2B_OK);
    CHECK(fabs(num(json_object_get(s2, "dso_pct"), "nghttp2") - 50) < 1e-9);
    json_decref(s2);
    h2b_prof_del(q);
    h2b_prof_del(p);
}

static void test_bad_input(const char *dir)
{
    struct h2b_prof *p = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_prof_new(&p, NULL), H2B_OK);
    static const char orphan[] = "\t  1234 foo (/lib/x.so)\n";
    CHECK_EQ_INT(h2b_prof_parse_script(p, orphan, sizeof(orphan) - 1, "o.txt", &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.line, 1);
    static const char noframe[] = "comm 1 1\n\t  zz not a frame\n";
    CHECK_EQ_INT(h2b_prof_parse_script(p, noframe, sizeof(noframe) - 1, "n.txt", &d),
                 H2B_ERR_PARSE);
    CHECK_EQ_INT(d.line, 2);
    CHECK(strstr(d.message, "ADDRESS SYMBOL (DSO)") != NULL);

    char path[512];
    snprintf(path, sizeof(path), "%s/bad.folded", dir);
    FILE *f = fopen(path, "w");
    fputs("a [x];b [y] 3\nc [z] many\n", f);
    fclose(f);
    CHECK_EQ_INT(h2b_prof_read_folded(p, path, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.line, 2);
    CHECK(strstr(d.file, "bad.folded") != NULL);
    snprintf(path, sizeof(path), "%s/missing.folded", dir);
    CHECK_EQ_INT(h2b_prof_read_folded(p, path, &d), H2B_ERR_NOTFOUND);
    h2b_prof_del(p);
}

static void test_hostile_names_svg(const char *dir)
{
    struct h2b_prof *p = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_prof_new(&p, NULL), H2B_OK);
    const char *names[] = {"main", "<script>alert(1)</script>&\"'", "x;y\nz"};
    const char *dsos[] = {"prog", "lib]<evil>.so", "prog"};
    CHECK_EQ_INT(h2b_prof_add(p, names, dsos, 3, 5), H2B_OK);
    CHECK_EQ_INT(h2b_prof_add(p, names, dsos, 0, 1), H2B_ERR_INVAL);
    char path[512];
    snprintf(path, sizeof(path), "%s/h.svg", dir);
    CHECK_EQ_INT(h2b_prof_flame_svg(p, "title <&>", path, &d), H2B_OK);
    FILE *f = fopen(path, "r");
    static char text[1 << 16];
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    CHECK(n > 0);
    CHECK(strstr(text, "<script>alert") == NULL);
    CHECK(strstr(text, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&apos;") != NULL ||
          strstr(text, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;") != NULL);
    CHECK(strstr(text, "lib]&lt;evil&gt;.so") != NULL);
    CHECK(strstr(text, "title &lt;&amp;&gt;") != NULL);
    /* ';' and the newline became '?', so the folded file stays one stack a line */
    CHECK(strstr(text, "x?y?z") != NULL);
    h2b_prof_del(p);
}

/* Symbol names come from the profiled binary: bytes that are not UTF-8 (a fuzz-found crash of
 * the summary, which jansson refuses) become '?', and well-formed UTF-8 stays as it is. */
static void test_non_utf8_names(const char *dir)
{
    struct h2b_prof *p = NULL;
    CHECK_EQ_INT(h2b_prof_new(&p, NULL), H2B_OK);
    const char *names[] = {"b (\xb5)", "caf\xc3\xa9", "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"};
    const char *dsos[] = {"lib\xff.so", "prog", "prog"};
    CHECK_EQ_INT(h2b_prof_add(p, names, dsos, 3, 2), H2B_OK);
    CHECK_EQ_INT(h2b_prof_add(p, names, dsos, 2, 1), H2B_OK);
    json_t *s = NULL;
    CHECK_EQ_INT(h2b_prof_summary_json(p, 12, &s), H2B_OK);
    json_t *top = json_object_get(s, "top");
    CHECK_EQ_INT((int)json_array_size(top), 2);
    CHECK_STR(json_string_value(json_object_get(json_array_get(top, 0), "symbol")), "?????????");
    CHECK_STR(json_string_value(json_object_get(json_array_get(top, 1), "symbol")), "caf\xc3\xa9");
    json_decref(s);
    char path[512];
    snprintf(path, sizeof(path), "%s/u.folded", dir);
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_prof_write_folded(p, path, &d), H2B_OK);
    FILE *f = fopen(path, "r");
    char text[512];
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    CHECK(strstr(text, "b (?) [lib?.so];caf\xc3\xa9 [prog] 1\n") != NULL);
    unlink(path);
    h2b_prof_del(p);
}

static void test_classes(void)
{
    CHECK_EQ_INT(h2b_prof_dso_class("[kernel.kallsyms]", NULL), H2B_PROF_DSO_KERNEL);
    CHECK_EQ_INT(h2b_prof_dso_class("kernel.kallsyms", NULL), H2B_PROF_DSO_KERNEL);
    CHECK_EQ_INT(h2b_prof_dso_class("/lib/x86_64-linux-gnu/libnghttp2.so.14", NULL),
                 H2B_PROF_DSO_NGHTTP2);
    CHECK_EQ_INT(h2b_prof_dso_class("libcrypto.so.3", NULL), H2B_PROF_DSO_TLS);
    CHECK_EQ_INT(h2b_prof_dso_class("libssl.so.3", NULL), H2B_PROF_DSO_TLS);
    CHECK_EQ_INT(h2b_prof_dso_class("libc.so.6", NULL), H2B_PROF_DSO_LIBC);
    CHECK_EQ_INT(h2b_prof_dso_class("ld-linux-x86-64.so.2", NULL), H2B_PROF_DSO_LIBC);
    CHECK_EQ_INT(h2b_prof_dso_class("/usr/sbin/nghttpd", "nghttpd"), H2B_PROF_DSO_OWN);
    CHECK_EQ_INT(h2b_prof_dso_class("/usr/sbin/nghttpd", NULL), H2B_PROF_DSO_OTHER);
    CHECK_EQ_INT(h2b_prof_dso_class("libjansson.so.4", "h2bench"), H2B_PROF_DSO_OTHER);
    CHECK_EQ_INT(h2b_prof_dso_class("unknown", "h2bench"), H2B_PROF_DSO_OTHER);
}

int main(void)
{
    char dir[] = "/tmp/test_prof.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_classes();
    test_parse_and_summary(dir);
    test_bad_input(dir);
    test_hostile_names_svg(dir);
    test_non_utf8_names(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "%s/p.folded", dir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/bad.folded", dir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/h.svg", dir);
    unlink(cmd);
    rmdir(dir);
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed != 0;
}
