/*
 * fs.h - the filesystem helpers every engine needs once: mkdir -p, remove a tree, the path of
 * this executable, the one bounded whole-file reader, atomic writes and output locks.
 *
 * No shell: trees are removed with nftw(3) bottom-up without following symbolic links, so a
 * link inside a run directory removes the link, never what it points at.
 */
#ifndef H2B_CORE_FS_H
#define H2B_CORE_FS_H

#include "core/diag.h"

#include <stddef.h>
#include <sys/types.h>

struct h2b_diag;

/* Creates dir and its missing parents with mode (minus the umask), like mkdir -p; an existing
 * directory is fine. Returns H2B_OK, H2B_ERR_RANGE (path too long) or H2B_ERR_IO (errno says
 * why; dir exists and is not a directory: ENOTDIR). */
int h2b_fs_mkdir_p(const char *dir, mode_t mode);

/* Creates the directories leading to the file at path (everything before its last '/'). */
int h2b_fs_mkdir_parent(const char *path, mode_t mode);

/* What an output path is to be (h2b_fs_output_check). */
enum h2b_fs_output {
    H2B_FS_OUT_FILE,       /* a file in a directory that exists ("-": standard output) */
    H2B_FS_OUT_FILE_MKDIR, /* a file; the directories leading to it are created */
    H2B_FS_OUT_DIR,        /* a directory, created with its missing parents */
};

/* Whether path can take an output of the given kind, checked before a command does its work,
 * so a run is not thrown away for a mistyped directory. FILE: the directory part exists and is a
 * writable directory, and path is not a directory. FILE_MKDIR and DIR: the nearest existing
 * ancestor is a writable directory, and no existing component is a file; a FILE_MKDIR path is
 * not a directory, a DIR path is not a file. Returns H2B_OK or H2B_ERR_INVAL with diag's message
 * naming the directory or file at fault (no file:line). Nothing is created. */
int h2b_fs_output_check(const char *path, enum h2b_fs_output kind, struct h2b_diag *diag);

/* Removes dir and everything below it. A missing dir is fine. Returns H2B_OK or H2B_ERR_IO
 * (errno of the first entry that could not be removed; the rest is still attempted). */
int h2b_fs_remove_tree(const char *dir);

/* path made absolute against the current directory (unchanged when it starts with '/'; no
 * symlink resolved, no "." or ".." folded), into buf, so it means the same to a program run
 * with another directory (git -C). Returns H2B_OK, H2B_ERR_SYS (getcwd) or H2B_ERR_RANGE. */
int h2b_fs_absolute(const char *path, char *buf, size_t size);

/* The absolute path of the running executable (/proc/self/exe) into buf. Returns H2B_OK,
 * H2B_ERR_SYS or H2B_ERR_RANGE (buf too small). */
int h2b_self_exe(char *buf, size_t size);

/* Finds an executable program: name itself when it contains a '/', else the first directory
 * of $PATH that holds an executable regular file called name. Writes the path into buf.
 * Returns H2B_OK, H2B_ERR_NOTFOUND or H2B_ERR_RANGE (buf too small). */
int h2b_find_program(const char *name, char *buf, size_t size);

/* Reads fd to its end into a new NUL-terminated buffer (*out, malloc'd; *len bytes before the
 * NUL), growing it by doubling from 4 KiB (or from hint + 1 when hint > 0, e.g. a file's size)
 * and never beyond max bytes. EINTR is retried. The caller keeps and closes fd. Returns H2B_OK,
 * H2B_ERR_RANGE (more than max bytes), H2B_ERR_NOMEM, or H2B_ERR_IO (errno says why); *out is
 * untouched on failure. */
int h2b_fd_read_all(int fd, size_t max, size_t hint, char **out, size_t *len);

/* Reads the file at path into a new NUL-terminated buffer (*out, malloc'd; *len bytes before the
 * NUL), at most max bytes. Opening never waits: a FIFO with no writer reads as empty, and a
 * directory is refused. On failure diag (may be NULL) names path and says why ("cannot open:
 * REASON", "is a directory, expected a file", "larger than N bytes", "out of memory", "cannot
 * read: REASON"), and *out is untouched. Returns H2B_OK, H2B_ERR_NOTFOUND (cannot open it:
 * missing, or not permitted), H2B_ERR_IO (a directory, or stat or read failed), H2B_ERR_RANGE
 * (over max) or
 * H2B_ERR_NOMEM. The one whole-file reader: JSON documents, profiles, stores and logs. */
int h2b_fs_read_file(const char *path, size_t max, char **out, size_t *len, struct h2b_diag *diag);

/* The last non-empty line of the file at path into buf (truncated to size - 1 bytes), trailing
 * newlines, carriage returns and spaces removed; "" when the file cannot be read or holds no
 * line. Reads at most 16 MiB (a log's tail is what a reason quotes). */
void h2b_fs_last_line(const char *path, char *buf, size_t size);

/* The end of the file at path into buf: its last size - 1 bytes (all of it when shorter), after
 * the same trimming as h2b_fs_last_line; "" when it cannot be read. For a program's log whose
 * error may span its last few lines (gnuplot's: the line quoted, a caret, the message). */
void h2b_fs_tail(const char *path, char *buf, size_t size);

/* The directory of the running executable into buf (h2b_self_exe without its last
 * component). Same codes. */
int h2b_self_dir(char *buf, size_t size);

/* Writes len bytes of data to path atomically: a temporary file in the same directory (mode
 * 0644), fsync, rename over path, fsync of the directory. On any failure path is unchanged and
 * no temporary is left behind. Returns H2B_OK, H2B_ERR_INVAL, H2B_ERR_NOMEM or H2B_ERR_IO (diag
 * says which step failed and why). Every output a command writes goes through it.
 * Only a regular file (or a new name) is replaced that way. "-" is stdout; an existing
 * device, FIFO or socket (also through a symlink) is opened and written in place, never
 * replaced (a FIFO waits for its reader, as a shell redirection does). */
int h2b_file_write_atomic(const char *path, const char *data, size_t len, struct h2b_diag *diag);

/* Takes an exclusive lock that names path (flock on "path.lock", created if needed) so that
 * two processes never write the same output. Sets *fd_out; release it with h2b_file_unlock.
 * Returns H2B_OK, H2B_ERR_EXISTS when another process holds it (diag says so), H2B_ERR_IO or
 * H2B_ERR_INVAL. The lock dies with the process. */
int h2b_file_lock(const char *path, int *fd_out, struct h2b_diag *diag);

/* Removes path's lock file and releases the lock taken by h2b_file_lock. Accepts fd -1. */
void h2b_file_unlock(const char *path, int fd);

#endif
