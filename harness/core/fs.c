/*
 * fs.c - mkdir -p, remove-tree, the executable's own path, PATH search, a bounded read of a
 * whole descriptor or file, a file's last line or end, atomic writes and output locks (fs.h).
 *
 * Approach: mkdir -p walks the path once, creating each prefix and accepting EEXIST; remove-tree
 * is nftw(FTW_DEPTH | FTW_PHYS) so children go before their directory and symbolic links are
 * removed as links. Rejected: handing "rm -rf PATH" to a shell (a shell parsing a path is an
 * injection waiting for a quote; the project bans shell calls), and a hand-written recursive
 * opendir walk (nftw already handles deep trees and file-descriptor limits).
 */
#include "core/fs.h"
#include "core/error.h"
#include "core/json.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int h2b_fs_mkdir_p(const char *dir, mode_t mode)
{
    char path[PATH_MAX];
    size_t len = strlen(dir);
    if (len == 0)
        return H2B_OK;
    if (len >= sizeof(path))
        return H2B_ERR_RANGE;
    memcpy(path, dir, len + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, mode);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return H2B_ERR_IO;
    }
    if (mkdir(path, mode) != 0 && errno != EEXIST)
        return H2B_ERR_IO;
    struct stat st; /* EEXIST is fine only for a directory */
    if (stat(path, &st) != 0)
        return H2B_ERR_IO;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return H2B_ERR_IO;
    }
    return H2B_OK;
}

int h2b_fs_mkdir_parent(const char *path, mode_t mode)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return H2B_OK;
    size_t len = (size_t)(slash - path);
    if (len >= sizeof(dir))
        return H2B_ERR_RANGE;
    memcpy(dir, path, len);
    dir[len] = '\0';
    return h2b_fs_mkdir_p(dir, mode);
}

static int first_errno; /* nftw has no user argument; one removal at a time per process */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
    if (rc != 0 && errno != ENOENT && first_errno == 0)
        first_errno = errno;
    return 0; /* keep going: remove what can be removed */
}

int h2b_fs_remove_tree(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? H2B_OK : H2B_ERR_IO;
    first_errno = 0;
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && first_errno == 0)
        first_errno = errno ? errno : EIO;
    if (first_errno) {
        errno = first_errno;
        return H2B_ERR_IO;
    }
    return H2B_OK;
}

int h2b_self_exe(char *buf, size_t size)
{
    if (size < 2)
        return H2B_ERR_RANGE;
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n < 0)
        return H2B_ERR_SYS;
    if ((size_t)n >= size - 1)
        return H2B_ERR_RANGE; /* possibly truncated */
    buf[n] = '\0';
    return H2B_OK;
}

static bool is_program(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int h2b_find_program(const char *name, char *buf, size_t size)
{
    if (!name || !*name)
        return H2B_ERR_NOTFOUND;
    if (strchr(name, '/')) {
        if (!is_program(name))
            return H2B_ERR_NOTFOUND;
        return (size_t)snprintf(buf, size, "%s", name) < size ? H2B_OK : H2B_ERR_RANGE;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        /* an empty entry is the current directory, as in execvp */
        int n = snprintf(buf, size, "%.*s/%s", len ? (int)len : 1, len ? p : ".", name);
        if (n > 0 && (size_t)n < size && is_program(buf))
            return H2B_OK;
        if (!colon)
            break;
        p = colon + 1;
    }
    return H2B_ERR_NOTFOUND;
}

int h2b_self_dir(char *buf, size_t size)
{
    int rc = h2b_self_exe(buf, size);
    if (rc != H2B_OK)
        return rc;
    char *slash = strrchr(buf, '/');
    if (slash == buf)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    return H2B_OK;
}

int h2b_fd_read_all(int fd, size_t max, size_t hint, char **out, size_t *len)
{
    size_t cap = hint > 0 && hint < max ? hint + 1 : (max < 4096 ? max + 1 : 4096), n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return H2B_ERR_NOMEM;
    for (;;) {
        if (n + 1 == cap) {
            if (n >= max) { /* one more byte would be over the bound: is there one? */
                char extra;
                ssize_t r;
                do
                    r = read(fd, &extra, 1);
                while (r < 0 && errno == EINTR);
                if (r == 0)
                    break;
                int e = errno;
                free(buf);
                errno = e;
                return r < 0 ? H2B_ERR_IO : H2B_ERR_RANGE;
            }
            size_t ncap = cap * 2 < max + 1 ? cap * 2 : max + 1;
            char *bigger = realloc(buf, ncap);
            if (!bigger) {
                free(buf);
                return H2B_ERR_NOMEM;
            }
            buf = bigger;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return H2B_ERR_IO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return H2B_OK;
}

int h2b_fs_absolute(const char *path, char *buf, size_t size)
{
    if (path[0] == '/') {
        if (strlen(path) >= size)
            return H2B_ERR_RANGE;
        memcpy(buf, path, strlen(path) + 1);
        return H2B_OK;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return errno == ERANGE ? H2B_ERR_RANGE : H2B_ERR_SYS;
    int n = snprintf(buf, size, "%s/%s", cwd, path);
    return n < 0 || (size_t)n >= size ? H2B_ERR_RANGE : H2B_OK;
}

/* The directory part of path into buf ("." when it has no '/', "/" for a path right under it). */
static void dir_part(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(buf, size, ".");
        return;
    }
    size_t n = (size_t)(slash - path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    snprintf(buf, size, "%.*s", n ? (int)n : 1, n ? path : "/");
}

int h2b_fs_output_check(const char *path, enum h2b_fs_output kind, struct h2b_diag *diag)
{
    struct stat st;
    char dir[PATH_MAX];
    if (!path || !path[0]) {
        h2b_diag_at(diag, NULL, 0, 0, "an empty path");
        return H2B_ERR_INVAL;
    }
    if (kind != H2B_FS_OUT_DIR && strcmp(path, "-") == 0)
        return H2B_OK;
    if (strlen(path) >= sizeof(dir)) {
        h2b_diag_at(diag, NULL, 0, 0, "path longer than %d bytes", PATH_MAX - 1);
        return H2B_ERR_INVAL;
    }
    if (stat(path, &st) == 0) {
        bool is_dir = S_ISDIR(st.st_mode);
        if (kind == H2B_FS_OUT_DIR ? !is_dir : is_dir) {
            h2b_diag_at(diag, NULL, 0, 0, "%s is %s", path,
                        is_dir ? "a directory, not a file" : "a file, not a directory");
            return H2B_ERR_INVAL;
        }
        if (kind == H2B_FS_OUT_DIR) {
            snprintf(dir, sizeof(dir), "%s", path);
            goto writable;
        }
    }
    /* the nearest existing ancestor: the directory part itself for FILE */
    dir_part(path, dir, sizeof(dir));
    while (stat(dir, &st) != 0) {
        /* a missing part is created (not for FILE); a part under a regular file (ENOTDIR) is
         * walked past, so that the message names the file */
        if ((errno != ENOENT && errno != ENOTDIR) || (errno == ENOENT && kind == H2B_FS_OUT_FILE)) {
            if (errno == ENOENT)
                h2b_diag_at(diag, NULL, 0, 0, "directory %s does not exist", dir);
            else
                h2b_diag_at(diag, NULL, 0, 0, "%s: %s", dir, strerror(errno));
            return H2B_ERR_INVAL;
        }
        char up[PATH_MAX];
        dir_part(dir, up, sizeof(up));
        if (strcmp(up, dir) == 0)
            break; /* "." or "/" missing: stat says why below */
        snprintf(dir, sizeof(dir), "%s", up);
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        h2b_diag_at(diag, NULL, 0, 0, "%s is not a directory", dir);
        return H2B_ERR_INVAL;
    }
writable:
    if (access(dir, W_OK | X_OK) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "directory %s is not writable: %s", dir, strerror(errno));
        return H2B_ERR_INVAL;
    }
    return H2B_OK;
}

int h2b_fs_read_file(const char *path, size_t max, char **out, size_t *len, struct h2b_diag *diag)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait forever for a writer. Once
     * open, reads block again; a FIFO nobody writes to then reads as empty (EOF). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        h2b_diag_at(diag, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_NOTFOUND;
    }
    int rv = H2B_ERR_IO;
    struct stat st;
    int fl;
    if (fstat(fd, &st) != 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        h2b_diag_at(diag, path, 0, 0, "cannot read: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        h2b_diag_at(diag, path, 0, 0, "is a directory, expected a file");
    } else {
        size_t hint = S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max ? (size_t)st.st_size : 0;
        /* To EOF: the file may be shorter or longer than stat said, never longer than max. */
        rv = h2b_fd_read_all(fd, max, hint, out, len);
        if (rv == H2B_ERR_RANGE)
            h2b_diag_at(diag, path, 0, 0, "larger than %zu bytes", max);
        else if (rv == H2B_ERR_NOMEM)
            h2b_diag_at(diag, path, 0, 0, "out of memory");
        else if (rv != H2B_OK)
            h2b_diag_at(diag, path, 0, 0, "cannot read: %s", strerror(errno));
    }
    close(fd);
    return rv;
}

/* The end of the file at path (read up to 16 MiB: a log's end is what a reason quotes), trailing
 * newlines, carriage returns and spaces off, into buf: its last line cut to size - 1 bytes
 * (line), or its last size - 1 bytes. "" when it cannot be read. */
static void file_end(const char *path, bool line, char *buf, size_t size)
{
    char *text;
    size_t len;
    if (size == 0)
        return;
    buf[0] = '\0';
    if (h2b_fs_read_file(path, 16u << 20, &text, &len, NULL) != H2B_OK)
        return;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    size_t start = len;
    if (line) {
        while (start > 0 && text[start - 1] != '\n')
            start--;
    } else {
        start = len - (len < size - 1 ? len : size - 1);
    }
    snprintf(buf, size, "%s", text + start);
    free(text);
}

void h2b_fs_last_line(const char *path, char *buf, size_t size)
{
    file_end(path, true, buf, size);
}

void h2b_fs_tail(const char *path, char *buf, size_t size)
{
    file_end(path, false, buf, size);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes to something that is not a regular file (stdout for "-", a device, a FIFO, a
 * socket) in place: renaming over it would replace /dev/null with a regular file. */
static int write_direct(const char *path, const char *data, size_t len, struct h2b_diag *diag)
{
    bool out = strcmp(path, "-") == 0;
    int fd = out ? STDOUT_FILENO : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        h2b_diag_at(diag, path, 0, 0, "cannot open: %s", strerror(errno));
        return H2B_ERR_IO;
    }
    int rv = write_all(fd, data, len) == 0 ? H2B_OK : H2B_ERR_IO;
    if (rv != H2B_OK)
        h2b_diag_at(diag, path, 0, 0, "cannot write: %s", strerror(errno));
    if (!out && close(fd) != 0 && rv == H2B_OK) {
        h2b_diag_at(diag, path, 0, 0, "cannot close: %s", strerror(errno));
        rv = H2B_ERR_IO;
    }
    return rv;
}

int h2b_file_write_atomic(const char *path, const char *data, size_t len, struct h2b_diag *diag)
{
    if (path == NULL || data == NULL) {
        h2b_diag_at(diag, path, 0, 0, "nothing to write");
        return H2B_ERR_INVAL;
    }
    struct stat sb;
    if (strcmp(path, "-") == 0 ||
        (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)))
        return write_direct(path, data, len, diag);
    /* The temporary lives in the target's directory so that rename() is atomic. */
    char dir[PATH_MAX], tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof(dir), ".");
    int rv = H2B_ERR_IO;
    int n = snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.XXXXXX", dir, base);
    if (base[0] == '\0' || n < 0 || (size_t)n >= sizeof(tmp)) {
        h2b_diag_at(diag, path, 0, 0, "not a file name");
        return H2B_ERR_INVAL;
    }
    const char *step = "create a temporary file";
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        goto out_fail;
    step = "write";
    if (fchmod(fd, 0644) != 0 || write_all(fd, data, len) != 0)
        goto out_unlink;
    step = "fsync";
    if (fsync(fd) != 0)
        goto out_unlink;
    step = "close";
    int closed = close(fd);
    fd = -1;
    if (closed != 0)
        goto out_unlink;
    step = "rename the temporary file";
    if (rename(tmp, path) != 0)
        goto out_unlink;
    /* Make the rename itself durable; failure here leaves a complete file, so it is not an
     * error worth reporting. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return H2B_OK;

out_unlink:;
    int saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
out_fail:
    h2b_diag_at(diag, path, 0, 0, "cannot %s: %s", step, strerror(errno));
    return rv;
}

int h2b_file_lock(const char *path, int *fd_out, struct h2b_diag *diag)
{
    char lock[PATH_MAX];
    int n = snprintf(lock, sizeof(lock), "%s.lock", path);
    if (n < 0 || (size_t)n >= sizeof(lock)) {
        h2b_diag_at(diag, path, 0, 0, "not a file name");
        return H2B_ERR_INVAL;
    }
    /* The holder unlinks the lock file when it is done; a locker that opened the old file just
     * before that holds a lock on nothing, so it checks that the path still names its file. */
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
            h2b_diag_at(diag, lock, 0, 0, "cannot create the lock file: %s", strerror(errno));
            return H2B_ERR_IO;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (e == EWOULDBLOCK) {
                h2b_diag_at(diag, path, 0, 0,
                            "another h2bench is writing this file (it holds %s); use another "
                            "--out or wait for it",
                            lock);
                return H2B_ERR_EXISTS;
            }
            h2b_diag_at(diag, lock, 0, 0, "cannot lock: %s", strerror(e));
            return H2B_ERR_IO;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lock, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            *fd_out = fd;
            return H2B_OK;
        }
        close(fd);
    }
    h2b_diag_at(diag, lock, 0, 0, "cannot lock: the lock file keeps changing");
    return H2B_ERR_IO;
}

void h2b_file_unlock(const char *path, int fd)
{
    if (fd < 0)
        return;
    char lock[PATH_MAX];
    int n = snprintf(lock, sizeof(lock), "%s.lock", path);
    if (n > 0 && (size_t)n < sizeof(lock))
        unlink(lock); /* while still locked: nobody can hold the name we remove */
    close(fd);
}
