// SQLite files reached relative to a directory descriptor (see `cs_sqlite_hold_directory` in CacheSystem.h).
//
// SQLite's unix VFS opens the database, its `-wal`, `-shm` and `-journal` files and (for fsync) their
// directory by path, and resolves that path component by component (lstat/readlink) first. A store that checked
// its namespace directory through a descriptor would still have SQLite use whatever the path names at each of
// those calls: a directory renamed away and replaced (or swapped for a symbolic link) between them hands SQLite
// another index, or makes it create files elsewhere. The unix VFS lets a program replace the system calls it
// makes (`xSetSystemCall`, documented in sqlite3.h), and every path it uses goes through them. The replacements
// installed here recognise one reserved path form,
//
//     /.cache-system-held-directory/<token>            the held directory itself
//     /.cache-system-held-directory/<token>/<name>     the file <name> in it (one component)
//
// and answer it with openat/fstatat/unlinkat/faccessat/readlinkat/mkdirat on the descriptor registered under
// <token>, never following a symbolic link; every other path goes to the call SQLite had, unchanged. The prefix
// names nothing that exists, so a malformed path, a released token or replacements that could not be installed
// all end in ENOENT: nothing is ever reached by the path's own meaning.
//
// Tokens count up from 1 and are never reused, so a path kept by SQLite after its connection closed (the shared
// memory node of another connection to the same file keeps its first opener's name) names nothing rather than a
// directory registered later. The registry holds its own duplicate of each descriptor.
#ifndef __APPLE__
#define _GNU_SOURCE
#endif
#include "CacheSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define HELD_PREFIX "/.cache-system-held-directory"

#ifdef __APPLE__
#define HELD_ENOTREG EFTYPE
#else
#define HELD_ENOTREG EMEDIUMTYPE
#endif

typedef struct {
    uint64_t token;
    int fd;
} held_slot;

static pthread_rwlock_t held_lock = PTHREAD_RWLOCK_INITIALIZER;
static held_slot *held_slots;
static size_t held_count;
static size_t held_capacity;
static uint64_t held_next_token = 1;

// The calls SQLite made before the replacements (NULL where its build has none).
static int (*real_open)(const char *, int, int);
static int (*real_access)(const char *, int);
static int (*real_stat)(const char *, struct stat *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_unlink)(const char *);
static ssize_t (*real_readlink)(const char *, char *, size_t);
static int (*real_mkdir)(const char *, mode_t);
static int (*real_rmdir)(const char *);

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

enum held_kind {
    HELD_NOT_OURS = 0,   // any other path: the original call
    HELD_INVALID = 1,    // under the prefix but not a form above (or an unknown token): ENOENT
    HELD_DIRECTORY = 2,  // the held directory itself
    HELD_FILE = 3,       // one name inside it
};

// Classifies `path`; for HELD_DIRECTORY and HELD_FILE sets `*token`, and for HELD_FILE `*name` (a pointer into
// `path`: one component, not empty, ".", or "..").
static enum held_kind classify(const char *path, uint64_t *token, const char **name) {
    size_t prefix = sizeof(HELD_PREFIX) - 1;
    if (path == NULL || strncmp(path, HELD_PREFIX, prefix) != 0) return HELD_NOT_OURS;
    const char *p = path + prefix;
    if (*p == '\0') return HELD_INVALID;
    if (*p != '/') return HELD_NOT_OURS;  // "/.cache-system-held-directoryX": another name
    p++;
    uint64_t value = 0;
    const char *digits = p;
    while (*p >= '0' && *p <= '9') {
        uint64_t digit = (uint64_t)(*p - '0');
        if (value > (UINT64_MAX - digit) / 10) return HELD_INVALID;
        value = value * 10 + digit;
        p++;
    }
    if (p == digits || value == 0 || (digits[0] == '0')) return HELD_INVALID;
    *token = value;
    if (*p == '\0') return HELD_DIRECTORY;
    if (*p != '/') return HELD_INVALID;
    p++;
    if (*p == '\0' || strchr(p, '/') != NULL || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) return HELD_INVALID;
    *name = p;
    return HELD_FILE;
}

// The descriptor registered under `token`, or -1 (call with `held_lock` held).
static int lookup(uint64_t token) {
    for (size_t i = 0; i < held_count; i++) {
        if (held_slots[i].token == token) return held_slots[i].fd;
    }
    return -1;
}

// Resolves `path` for a replacement: HELD_NOT_OURS, or (with the read lock taken, which the caller releases
// with `done`) the descriptor in `*fd`; -1 with errno ENOENT for a path under the prefix that names nothing.
static int resolve(const char *path, enum held_kind *kind, int *fd, const char **name) {
    uint64_t token = 0;
    *name = NULL;
    *kind = classify(path, &token, name);
    if (*kind == HELD_NOT_OURS) return 0;
    if (*kind == HELD_INVALID) {
        errno = ENOENT;
        return -1;
    }
    pthread_rwlock_rdlock(&held_lock);
    *fd = lookup(token);
    if (*fd < 0) {
        pthread_rwlock_unlock(&held_lock);
        errno = ENOENT;
        return -1;
    }
    return 0;
}

static void done(void) {
    int err = errno;
    pthread_rwlock_unlock(&held_lock);
    errno = err;
}

static int no_call(void) {
    errno = ENOSYS;
    return -1;
}

static int held_open(const char *path, int flags, int mode) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_open ? real_open(path, flags, mode) : no_call();
    int fd;
    if (kind == HELD_DIRECTORY) {
        // SQLite opens a file's directory only to fsync it (read-only).
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) {
            done();
            errno = EISDIR;
            return -1;
        }
        do {
            fd = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        done();
        return fd;
    }
    // O_NONBLOCK: a FIFO under the name never blocks the open; cleared again for the regular file SQLite gets.
    do {
        fd = openat(directory, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, (mode_t)mode);
    } while (fd < 0 && errno == EINTR);
    done();
    if (fd < 0) return -1;
    struct stat s;
    int err = 0;
    if (fstat(fd, &s) != 0) {
        err = errno;
    } else if (!S_ISREG(s.st_mode)) {
        err = HELD_ENOTREG;
    } else if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        err = errno;
    }
    if (err != 0) {
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

static int held_stat_any(const char *path, struct stat *buffer, int (*real)(const char *, struct stat *)) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real ? real(path, buffer) : no_call();
    // `stat` too is answered without following a symbolic link: the open that follows refuses one anyway.
    int rc = kind == HELD_DIRECTORY ? fstat(directory, buffer) : fstatat(directory, name, buffer, AT_SYMLINK_NOFOLLOW);
    done();
    return rc;
}

static int held_stat(const char *path, struct stat *buffer) { return held_stat_any(path, buffer, real_stat); }
static int held_lstat(const char *path, struct stat *buffer) { return held_stat_any(path, buffer, real_lstat); }

static int held_access(const char *path, int mode) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_access ? real_access(path, mode) : no_call();
    int rc;
    struct stat s;
    if (kind == HELD_DIRECTORY) {
        rc = faccessat(directory, ".", mode, 0);
    } else if (fstatat(directory, name, &s, AT_SYMLINK_NOFOLLOW) != 0) {
        rc = -1;
    } else if (S_ISLNK(s.st_mode)) {
        errno = ELOOP;
        rc = -1;
    } else {
        rc = faccessat(directory, name, mode, 0);
    }
    done();
    return rc;
}

static int held_unlink(const char *path) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_unlink ? real_unlink(path) : no_call();
    int rc;
    if (kind == HELD_DIRECTORY) {
        errno = EPERM;
        rc = -1;
    } else {
        rc = unlinkat(directory, name, 0);
    }
    done();
    return rc;
}

static ssize_t held_readlink(const char *path, char *buffer, size_t size) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_readlink ? real_readlink(path, buffer, size) : no_call();
    ssize_t rc;
    if (kind == HELD_DIRECTORY) {
        errno = EINVAL;
        rc = -1;
    } else {
        rc = readlinkat(directory, name, buffer, size);
    }
    done();
    return rc;
}

static int held_mkdir(const char *path, mode_t mode) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_mkdir ? real_mkdir(path, mode) : no_call();
    int rc;
    if (kind == HELD_DIRECTORY) {
        errno = EEXIST;
        rc = -1;
    } else {
        rc = mkdirat(directory, name, mode);
    }
    done();
    return rc;
}

static int held_rmdir(const char *path) {
    enum held_kind kind;
    int directory = -1;
    const char *name;
    if (resolve(path, &kind, &directory, &name) != 0) return -1;
    if (kind == HELD_NOT_OURS) return real_rmdir ? real_rmdir(path) : no_call();
    int rc;
    if (kind == HELD_DIRECTORY) {
        errno = EBUSY;
        rc = -1;
    } else {
        rc = unlinkat(directory, name, AT_REMOVEDIR);
    }
    done();
    return rc;
}

typedef struct {
    const char *name;
    sqlite3_syscall_ptr replacement;
    void *original;  // where the call SQLite had is kept (a pointer to one of the real_* variables)
    int required;    // the VFS uses it on every database path
} hook;

static void install(void) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(cs_sqlite_vfs_name());
    if (vfs == NULL || vfs->iVersion < 3 || vfs->xSetSystemCall == NULL || vfs->xGetSystemCall == NULL) return;
    // "lstat" and "readlink" resolve symbolic links in the path (an SQLite without them resolves nothing, and
    // the real lstat finds nothing under the prefix); "mkdir"/"rmdir" only serve dot-file locking.
    hook hooks[] = {
        { "open", (sqlite3_syscall_ptr)held_open, &real_open, 1 },
        { "access", (sqlite3_syscall_ptr)held_access, &real_access, 1 },
        { "stat", (sqlite3_syscall_ptr)held_stat, &real_stat, 1 },
        { "unlink", (sqlite3_syscall_ptr)held_unlink, &real_unlink, 1 },
        { "lstat", (sqlite3_syscall_ptr)held_lstat, &real_lstat, 0 },
        { "readlink", (sqlite3_syscall_ptr)held_readlink, &real_readlink, 0 },
        { "mkdir", (sqlite3_syscall_ptr)held_mkdir, &real_mkdir, 0 },
        { "rmdir", (sqlite3_syscall_ptr)held_rmdir, &real_rmdir, 0 },
    };
    size_t count = sizeof(hooks) / sizeof(hooks[0]);
    for (size_t i = 0; i < count; i++) {
        sqlite3_syscall_ptr current = vfs->xGetSystemCall(vfs, hooks[i].name);
        if (current == NULL && hooks[i].required) return;
        // Every real_* variable is a function pointer; sqlite3_syscall_ptr is the VFS's generic one.
        memcpy(hooks[i].original, &current, sizeof(current));
    }
    size_t set = 0;
    for (; set < count; set++) {
        if (vfs->xSetSystemCall(vfs, hooks[set].name, hooks[set].replacement) != SQLITE_OK && hooks[set].required) break;
    }
    if (set == count) {
        installed = 1;
        return;
    }
    // A required call could not be replaced: put back the ones that were, and use no held paths.
    for (size_t i = 0; i < set; i++) {
        sqlite3_syscall_ptr original;
        memcpy(&original, hooks[i].original, sizeof(original));
        if (original != NULL) vfs->xSetSystemCall(vfs, hooks[i].name, original);
    }
}

const char *cs_sqlite_vfs_name(void) {
#ifdef __APPLE__
    // Apple's SQLite picks a locking style per file from `statfs(path)`, a call the VFS cannot have replaced;
    // "unix-posix" is that style on a local file system (POSIX advisory locks), chosen without the path.
    return sqlite3_vfs_find("unix-posix") != NULL ? "unix-posix" : NULL;
#else
    return NULL;
#endif
}

int cs_sqlite_hold_directory(int directory, char *prefix, size_t size) {
    pthread_once(&install_once, install);
    if (!installed) return -2;
    int fd = fcntl(directory, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -1;
    pthread_rwlock_wrlock(&held_lock);
    if (held_count == held_capacity) {
        size_t capacity = held_capacity ? held_capacity * 2 : 16;
        held_slot *grown = realloc(held_slots, capacity * sizeof(held_slot));
        if (grown == NULL) {
            pthread_rwlock_unlock(&held_lock);
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        held_slots = grown;
        held_capacity = capacity;
    }
    uint64_t token = held_next_token++;
    int written = snprintf(prefix, size, "%s/%llu", HELD_PREFIX, (unsigned long long)token);
    if (written < 0 || (size_t)written >= size) {
        pthread_rwlock_unlock(&held_lock);
        close(fd);
        errno = ENAMETOOLONG;
        return -1;
    }
    held_slots[held_count].token = token;
    held_slots[held_count].fd = fd;
    held_count++;
    pthread_rwlock_unlock(&held_lock);
    return 0;
}

void cs_sqlite_release_directory(const char *prefix) {
    uint64_t token = 0;
    const char *name = NULL;
    if (classify(prefix, &token, &name) != HELD_DIRECTORY) return;
    int fd = -1;
    pthread_rwlock_wrlock(&held_lock);
    for (size_t i = 0; i < held_count; i++) {
        if (held_slots[i].token == token) {
            fd = held_slots[i].fd;
            held_slots[i] = held_slots[held_count - 1];
            held_count--;
            break;
        }
    }
    pthread_rwlock_unlock(&held_lock);
    if (fd >= 0) close(fd);
}
