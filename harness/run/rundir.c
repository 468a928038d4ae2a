/*
 * rundir.c - where a run keeps its files: the private run directory (docroot, certificate,
 * request body, per-cell outputs and logs) and the results path it writes at the end.
 *
 * Approach: the run directory is mkdtemp()'d in /tmp and removed after a clean run; a run with
 * failed cells keeps it and says where, since its logs are the evidence. The results path is
 * claimed before anything is measured: its directory is created and must be writable, and the
 * file is locked, so a run never measures for minutes and then has nowhere to write, and two
 * runs never write one file. The results themselves are written atomically by the core
 * (h2b_results_write: temporary file, then rename()).
 *
 * Rejected: a run directory beside the results (results/runs/ would fill with logs and
 * docroots); removing any directory named by the caller (only /tmp/h2bench-run-* is removed).
 */
#include "run/runner_int.h"

#include "core/clock.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/tlscert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_pattern_file(const char *path, uint64_t size, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return H2B_ERR_IO;
    if (text) {
        fputs(text, f);
    } else {
        char chunk[4096];
        for (size_t i = 0; i < sizeof(chunk); i++)
            chunk[i] = (char)('a' + i % 26);
        for (uint64_t left = size; left > 0;) {
            size_t n = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);
            fwrite(chunk, 1, n, f);
            left -= n;
        }
    }
    return fclose(f) == 0 ? H2B_OK : H2B_ERR_IO;
}

/* Peers serve files: give them the matrix path as a file. /bytes/N gets N bytes (the bundled
 * server's endpoint); anything else gets the bundled server's 13-byte "Hello, World!". */
static int make_docroot(struct run *r)
{
    char file[600];
    const char *path = r->s->matrix.path;
    snprintf(r->docroot, sizeof(r->docroot), "%s/docroot", r->dir);
    if (mkdir(r->docroot, 0755) != 0)
        return H2B_ERR_IO;
    size_t plen = strcspn(path, "?#");
    bool dir = plen > 0 && path[plen - 1] == '/';
    snprintf(file, sizeof(file), "%s%.*s%s", r->docroot, (int)plen, path, dir ? "index.html" : "");
    if (h2b_fs_mkdir_parent(file, 0755))
        return H2B_ERR_IO;
    uint64_t n = 0;
    const char *bytes = "/bytes/";
    if (strncmp(path, bytes, strlen(bytes)) == 0 &&
        sscanf(path + strlen(bytes), "%" SCNu64, &n) == 1)
        return write_pattern_file(file, n, NULL);
    return write_pattern_file(file, 0, "Hello, World!");
}

/* Only the run directory we created: configuration, logs, outputs, the docroot. */
void h2b__run_dir_remove(const char *dir, FILE *log)
{
    if (strncmp(dir, "/tmp/h2bench-run-", 17) != 0)
        return;
    if (h2b_fs_remove_tree(dir) != H2B_OK && log)
        fprintf(log, "h2bench run: could not remove %s: %s\n", dir, strerror(errno));
}

/* The results path: --out or results/runs/NAME-STAMP.json. Its directory is created now and
 * must be writable, so a run never measures for minutes and then has nowhere to write. */
static int out_path_ready(const struct run *r, char *buf, size_t size)
{
    if (r->o->out) {
        snprintf(buf, size, "%s", r->o->out);
    } else {
        char stamp[32];
        h2b_clock_utc_string(stamp, sizeof(stamp));
        for (char *p = stamp; *p; p++)
            if (*p == ':')
                *p = '-';
        snprintf(buf, size, "results/runs/%s-%s.json", r->s->name, stamp);
    }
    struct stat sb;
    if (strcmp(buf, "-") == 0 ||
        (stat(buf, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)))
        return H2B_OK; /* stdout, a device or a FIFO: written in place */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", buf);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        slash[1] = '\0';
        if (h2b_fs_mkdir_p(dir, 0755) != H2B_OK) {
            h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot create the directory of %s: %s", buf,
                         strerror(errno));
            return H2B_ERR_IO;
        }
    }
    if (access(dir, W_OK) != 0) {
        h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot write results into %s: %s", dir,
                     strerror(errno));
        return H2B_ERR_IO;
    }
    return H2B_OK;
}

int h2b__run_dir_prepare(struct run *r)
{
    const struct h2b_matrix_spec *m = &r->s->matrix;
    snprintf(r->dir, sizeof(r->dir), "/tmp/h2bench-run-XXXXXX");
    if (!mkdtemp(r->dir)) {
        h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot create a run directory in /tmp: %s",
                     strerror(errno));
        return H2B_ERR_IO;
    }
    if (!r->s->has_matrix)
        return H2B_OK;
    if (make_docroot(r)) {
        h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot write the docroot in %s", r->dir);
        return H2B_ERR_IO;
    }
    bool tls = false;
    for (size_t i = 0; i < m->ntls; i++)
        tls = tls || m->tls[i];
    if (tls) {
        snprintf(r->cert, sizeof(r->cert), "%s/cert.pem", r->dir);
        snprintf(r->key, sizeof(r->key), "%s/key.pem", r->dir);
        if (h2b_tlscert_write(r->cert, r->key) != H2B_OK) {
            h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot write a certificate into %s", r->dir);
            return H2B_ERR_IO;
        }
    }
    if (m->body_bytes > 0) {
        snprintf(r->body_file, sizeof(r->body_file), "%s/body", r->dir);
        if (write_pattern_file(r->body_file, m->body_bytes, NULL)) {
            h2b_diag_set(r->diag, NULL, NULL, NULL, "cannot write %s", r->body_file);
            return H2B_ERR_IO;
        }
    }
    return H2B_OK;
}

int h2b__run_out_claim(const struct run *r, char *buf, size_t size, int *lock)
{
    *lock = -1;
    int rc = out_path_ready(r, buf, size);
    if (rc)
        return rc;
    /* Two runs writing one results file would lose one silently: the second is refused. A
     * device, a FIFO or stdout is written in place and needs no lock. */
    struct stat ob;
    if (strcmp(buf, "-") != 0 && !(stat(buf, &ob) == 0 && !S_ISREG(ob.st_mode)))
        return h2b_file_lock(buf, lock, r->diag);
    return H2B_OK;
}
