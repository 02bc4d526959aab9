// The one place where Linux and Apple platforms differ (see include/CacheSystem.h). Each function is the POSIX
// call plus, where the platforms disagree, an `#ifdef __APPLE__` branch of a few lines.
#ifndef __APPLE__
#define _GNU_SOURCE
#endif
#include "CacheSystem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef __APPLE__
#include <CommonCrypto/CommonDigest.h>
#include <CommonCrypto/CommonHMAC.h>
#else
#include <dlfcn.h>
#include <limits.h>
#include <sys/sendfile.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#endif

#ifndef O_DIRECTORY
#error "O_DIRECTORY is required"
#endif

int cs_errno(void) { return errno; }
void cs_set_errno(int err) { errno = err; }

// An error number this layer reports when a file is not a regular file (there is no portable one).
#ifdef __APPLE__
#define CS_ENOTREG EFTYPE
#else
#define CS_ENOTREG EMEDIUMTYPE
#endif

enum cs_error_class cs_classify_error(int err) {
    switch (err) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
        return CS_ERROR_NO_SPACE;
    case EACCES: case EPERM: case EROFS: return CS_ERROR_PERMISSION;
    case ENOENT: return CS_ERROR_NOT_FOUND;
    case EEXIST: return CS_ERROR_EXISTS;
#if ENOTEMPTY != EEXIST
    case ENOTEMPTY: return CS_ERROR_EXISTS;
#endif
    case ELOOP: return CS_ERROR_SYMLINK;
    case ENOTDIR: return CS_ERROR_NOT_DIRECTORY;
    case CS_ENOTREG: return CS_ERROR_NOT_REGULAR;
    case EINTR: return CS_ERROR_INTERRUPTED;
#if EAGAIN != EWOULDBLOCK
    case EAGAIN:
#endif
    case EWOULDBLOCK: return CS_ERROR_WOULD_BLOCK;
    default: return CS_ERROR_OTHER;
    }
}

int cs_error_number(enum cs_error_class error_class) {
    switch (error_class) {
    case CS_ERROR_NO_SPACE: return ENOSPC;
    case CS_ERROR_PERMISSION: return EACCES;
    case CS_ERROR_NOT_FOUND: return ENOENT;
    case CS_ERROR_EXISTS: return EEXIST;
    case CS_ERROR_SYMLINK: return ELOOP;
    case CS_ERROR_NOT_DIRECTORY: return ENOTDIR;
    case CS_ERROR_NOT_REGULAR: return CS_ENOTREG;
    case CS_ERROR_INTERRUPTED: return EINTR;
    case CS_ERROR_WOULD_BLOCK: return EWOULDBLOCK;
    default: return EIO;
    }
}

void cs_error_message(int err, char *buffer, size_t length) {
    if (length == 0) return;
    if (err == CS_ENOTREG) {
        snprintf(buffer, length, "not a regular file");
        return;
    }
#ifdef __APPLE__
    if (strerror_r(err, buffer, length) == 0) return;  // XSI strerror_r
#else
    const char *text = strerror_r(err, buffer, length);  // GNU strerror_r: returns the message, maybe not in buffer
    if (text != NULL) {
        if (text != buffer) snprintf(buffer, length, "%s", text);
        return;
    }
#endif
    snprintf(buffer, length, "error %d", err);
}

// MARK: Stat

static void fill_info(const struct stat *s, cs_file_info *info) {
    info->device = (uint64_t)s->st_dev;
    info->inode = (uint64_t)s->st_ino;
    info->size = (int64_t)s->st_size;
    info->permissions = (uint32_t)(s->st_mode & 07777);
    switch (s->st_mode & S_IFMT) {
    case S_IFREG: info->kind = CS_KIND_REGULAR; break;
    case S_IFDIR: info->kind = CS_KIND_DIRECTORY; break;
    case S_IFLNK: info->kind = CS_KIND_SYMLINK; break;
    case S_IFIFO: info->kind = CS_KIND_FIFO; break;
    default: info->kind = CS_KIND_OTHER; break;
    }
    info->owner = (uint32_t)s->st_uid;
    info->links = (uint64_t)s->st_nlink;
#ifdef __APPLE__
    info->modified_ns = (int64_t)s->st_mtimespec.tv_sec * 1000000000 + s->st_mtimespec.tv_nsec;
    info->changed_ns = (int64_t)s->st_ctimespec.tv_sec * 1000000000 + s->st_ctimespec.tv_nsec;
#else
    info->modified_ns = (int64_t)s->st_mtim.tv_sec * 1000000000 + s->st_mtim.tv_nsec;
    info->changed_ns = (int64_t)s->st_ctim.tv_sec * 1000000000 + s->st_ctim.tv_nsec;
#endif
}

int cs_stat_fd(int fd, cs_file_info *info) {
    struct stat s;
    if (fstat(fd, &s) != 0) return -1;
    fill_info(&s, info);
    return 0;
}

int cs_stat_at(int directory, const char *name, cs_file_info *info) {
    struct stat s;
    if (fstatat(directory, name, &s, AT_SYMLINK_NOFOLLOW) != 0) return -1;
    fill_info(&s, info);
    return 0;
}

int cs_stat_path(const char *path, int follow, cs_file_info *info) {
    struct stat s;
    if ((follow ? stat(path, &s) : lstat(path, &s)) != 0) return -1;
    fill_info(&s, info);
    return 0;
}

// MARK: Directories

int cs_current_directory(void) { return AT_FDCWD; }

int cs_open_directory_at(int directory, const char *name) {
    int fd;
    do {
        fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    // Linux reports a symbolic link met by O_NOFOLLOW|O_DIRECTORY as ENOTDIR or ELOOP; say ELOOP for both.
    if (fd < 0 && errno == ENOTDIR) {
        struct stat s;
        if (fstatat(directory, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(s.st_mode)) errno = ELOOP;
        else errno = ENOTDIR;
    }
    return fd;
}

int cs_open_directory(const char *path) {
    int fd;
    do {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int cs_make_directory_at(int directory, const char *name, uint32_t permissions) {
    return mkdirat(directory, name, (mode_t)permissions);
}

int cs_make_directory(const char *path, uint32_t permissions) { return mkdir(path, (mode_t)permissions); }

int cs_remove_directory_at(int directory, const char *name) { return unlinkat(directory, name, AT_REMOVEDIR); }

struct cs_listing {
    DIR *dir;
};

cs_listing *cs_listing_open_at(int directory, const char *name) {
    int fd = cs_open_directory_at(directory, name);
    if (fd < 0) return NULL;
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
        int err = errno;
        close(fd);
        errno = err;
        return NULL;
    }
    cs_listing *listing = malloc(sizeof *listing);
    if (listing == NULL) {
        closedir(dir);
        errno = ENOMEM;
        return NULL;
    }
    listing->dir = dir;
    return listing;
}

const char *cs_listing_next(cs_listing *listing) {
    struct dirent *entry;
    while ((entry = readdir(listing->dir)) != NULL) {
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) return entry->d_name;
    }
    return NULL;
}

void cs_listing_close(cs_listing *listing) {
    if (listing == NULL) return;
    closedir(listing->dir);
    free(listing);
}

// MARK: Files

// Opens `name` relative to `directory` with `flags` (retrying on EINTR) and checks with one fstat, stored in
// `s`, that it is a regular file. Returns the descriptor, or -1 with errno set: ELOOP for a symbolic link
// refused by O_NOFOLLOW, CS_ENOTREG for anything but a regular file (the descriptor is then closed).
static int open_regular_at(int directory, const char *name, int flags, mode_t permissions, struct stat *s) {
    int fd;
    do {
        fd = openat(directory, name, flags, permissions);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        // O_NOFOLLOW on a symbolic link: ELOOP on Linux and Apple platforms; some systems say EMLINK or EFTYPE.
        if (errno == EMLINK) errno = ELOOP;
        return -1;
    }
    if (fstat(fd, s) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    if (!S_ISREG(s->st_mode)) {
        close(fd);
        errno = CS_ENOTREG;
        return -1;
    }
    return fd;
}

int cs_open_file_at(int directory, const char *name, enum cs_open_access access, enum cs_open_creation creation, uint32_t permissions) {
    int flags = O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    switch (access) {
    case CS_OPEN_WRITE: flags |= O_WRONLY; break;
    case CS_OPEN_READ_WRITE: flags |= O_RDWR; break;
    default: flags |= O_RDONLY; break;
    }
    switch (creation) {
    case CS_OPEN_CREATE: case CS_OPEN_TRUNCATE: flags |= O_CREAT; break;  // truncated below, once known regular
    case CS_OPEN_CREATE_NEW: flags |= O_CREAT | O_EXCL; break;
    default: break;
    }
    if (creation == CS_OPEN_CREATE_NEW) {
        // O_CREAT | O_EXCL succeeds only by creating a new regular file (it fails on any existing name, a
        // symbolic link included): no FIFO to guard against, nothing to check, no flag to clear.
        int fd;
        do {
            fd = openat(directory, name, flags & ~O_NONBLOCK, (mode_t)permissions);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0 && errno == EMLINK) errno = ELOOP;
        return fd;
    }
    struct stat s;
    int fd = open_regular_at(directory, name, flags, (mode_t)permissions, &s);
    if (fd < 0) return -1;
    // The file is regular: O_NONBLOCK (there only to never wait on a FIFO) has no effect; clear it anyway.
    int status = fcntl(fd, F_GETFL);
    if (status >= 0) fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
    if (creation == CS_OPEN_TRUNCATE && ftruncate(fd, 0) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

int cs_create_unnamed_at(int directory, uint32_t permissions) {
#if defined(__APPLE__) || !defined(O_TMPFILE)
    (void)directory; (void)permissions;
    errno = EOPNOTSUPP;
    return -1;
#else
    int fd;
    do {
        fd = openat(directory, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)permissions);
    } while (fd < 0 && errno == EINTR);
    // Kernels and file systems without O_TMPFILE answer EISDIR, ENOENT or EOPNOTSUPP: one answer for all.
    if (fd < 0 && (errno == EISDIR || errno == ENOENT || errno == EINVAL)) errno = EOPNOTSUPP;
    return fd;
#endif
}

int cs_link_unnamed_at(int fd, int directory, const char *name) {
#if defined(__APPLE__) || !defined(O_TMPFILE)
    (void)fd; (void)directory; (void)name;
    errno = EOPNOTSUPP;
    return -1;
#else
    // Through /proc (no privilege needed; AT_EMPTY_PATH may need CAP_DAC_READ_SEARCH); AT_EMPTY_PATH when /proc
    // is not mounted. The magic link names this process's own descriptor, never a path another process controls.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, path, directory, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != ENOENT) return -1;
    return linkat(fd, "", directory, name, AT_EMPTY_PATH);
#endif
}

int cs_open_existing_for_reading_at(int directory, const char *name, cs_file_info *info) {
    struct stat s;
    int fd = open_regular_at(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0, &s);
    if (fd < 0) return -1;
    // O_NONBLOCK stays set: it is there only so that the open never waits on a FIFO, and reads of a regular
    // file ignore it (Linux and Apple platforms), so clearing it would cost two more system calls per read.
    fill_info(&s, info);
    return fd;
}

int cs_open_file(const char *path, enum cs_open_access access, enum cs_open_creation creation, uint32_t permissions) {
    return cs_open_file_at(AT_FDCWD, path, access, creation, permissions);
}

int cs_open_output(const char *path, uint32_t permissions) {
    int fd;
    do {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)permissions);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int cs_close(int fd) { return close(fd); }

int cs_unlink_at(int directory, const char *name) { return unlinkat(directory, name, 0); }

int cs_unlink(const char *path) { return unlink(path); }

int cs_rename_at(int from_directory, const char *from, int to_directory, const char *to) {
    return renameat(from_directory, from, to_directory, to);
}

int cs_rename(const char *from, const char *to) { return rename(from, to); }

int cs_set_permissions(int fd, uint32_t permissions) { return fchmod(fd, (mode_t)permissions); }

int cs_set_permissions_at(int directory, const char *name, uint32_t permissions) {
    // fchmodat(AT_SYMLINK_NOFOLLOW) is unsupported on Linux; open the directory or file without following instead.
    int fd = cs_open_directory_at(directory, name);
    if (fd < 0) fd = cs_open_file_at(directory, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0);
    if (fd < 0) return -1;
    int rc = fchmod(fd, (mode_t)permissions);
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}

int64_t cs_read(int fd, void *buffer, size_t count) {
    ssize_t n;
    do {
        n = read(fd, buffer, count);
    } while (n < 0 && errno == EINTR);
    return (int64_t)n;
}

int64_t cs_read_at(int fd, void *buffer, size_t count, int64_t offset) {
    ssize_t n;
    do {
        n = pread(fd, buffer, count, (off_t)offset);
    } while (n < 0 && errno == EINTR);
    return (int64_t)n;
}

int cs_write_all(int fd, const void *buffer, size_t count) {
    const char *bytes = buffer;
    size_t offset = 0;
    while (offset < count) {
        ssize_t n = write(fd, bytes + offset, count - offset);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        offset += (size_t)n;
    }
    return 0;
}

int cs_truncate(int fd, int64_t size) { return ftruncate(fd, (off_t)size); }

// The portable copy: pread into a 1 MiB buffer, write it all.
static int64_t copy_by_reading(int in_fd, int64_t offset, int out_fd, int64_t count) {
    enum { chunk = 1 << 20 };
    char *buffer = malloc(chunk);
    if (buffer == NULL) { errno = ENOMEM; return -1; }
    int64_t done = 0;
    while (done < count) {
        size_t want = (size_t)(count - done < chunk ? count - done : chunk);
        ssize_t n = pread(in_fd, buffer, want, (off_t)(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            free(buffer);
            return -1;
        }
        if (n == 0) break;
        if (cs_write_all(out_fd, buffer, (size_t)n) != 0) {
            int err = errno;
            free(buffer);
            errno = err;
            return -1;
        }
        done += n;
    }
    free(buffer);
    return done;
}

#ifndef __APPLE__
// Errors that mean "this kind of copy does not work for these two files": the next kind is tried.
static int copy_unsupported(int err) {
    return err == EINVAL || err == EXDEV || err == ENOSYS || err == EOPNOTSUPP || err == EBADF || err == ETXTBSY;
}
#endif

int64_t cs_copy_range(int in_fd, int64_t offset, int out_fd, int64_t count) {
    if (count <= 0) return 0;
#ifdef __APPLE__
    return copy_by_reading(in_fd, offset, out_fd, count);
#else
    int64_t done = 0;
    // copy_file_range: regular files only (an output pipe or terminal says EINVAL or EBADF).
    while (done < count) {
        off_t from = (off_t)(offset + done);
        size_t want = (size_t)(count - done < (1 << 30) ? count - done : (1 << 30));
        ssize_t n = copy_file_range(in_fd, &from, out_fd, NULL, want, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (done == 0 && copy_unsupported(errno)) break;
            return -1;
        }
        if (n == 0) return done;
        done += n;
    }
    if (done == count) return done;
    // sendfile: any output (a pipe, a terminal, a file opened for appending).
    while (done < count) {
        off_t from = (off_t)(offset + done);
        size_t want = (size_t)(count - done < (1 << 30) ? count - done : (1 << 30));
        ssize_t n = sendfile(out_fd, in_fd, &from, want);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            if (done == 0 && copy_unsupported(errno)) break;
            return -1;
        }
        if (n == 0) return done;
        done += n;
    }
    if (done == count) return done;
    int64_t rest = copy_by_reading(in_fd, offset + done, out_fd, count - done);
    return rest < 0 ? -1 : done + rest;
#endif
}

typedef uint32_t (*crc32_function)(uint32_t, const void *, size_t);
// NULL until the first call looks; then libdeflate's function, or `zlib_crc32` when it is not there.
static _Atomic(crc32_function) crc32_chosen = NULL;

static uint32_t zlib_crc32(uint32_t crc, const void *buffer, size_t count) {
    return (uint32_t)crc32_z((uLong)crc, (const Bytef *)buffer, (z_size_t)count);
}

static crc32_function choose_crc32(void) {
    crc32_function chosen = atomic_load_explicit(&crc32_chosen, memory_order_acquire);
    if (chosen != NULL) return chosen;
    chosen = zlib_crc32;
#ifndef __APPLE__
    // Loaded once per process and never closed; both functions give the same values (CRC-32/ISO-HDLC).
    void *library = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) {
        crc32_function found = (crc32_function)dlsym(library, "libdeflate_crc32");
        if (found != NULL) chosen = found;
    }
#endif
    atomic_store_explicit(&crc32_chosen, chosen, memory_order_release);
    return chosen;
}

uint32_t cs_crc32(uint32_t crc, const void *buffer, size_t count) {
    if (count == 0) return crc;
    return choose_crc32()(crc, buffer, count);
}

uint32_t cs_crc32_combine(uint32_t crc1, uint32_t crc2, int64_t count2) {
    if (count2 <= 0) return crc1;
    return (uint32_t)crc32_combine((uLong)crc1, (uLong)crc2, (z_off_t)count2);
}

int cs_crc32_is_accelerated(void) { return choose_crc32() != zlib_crc32; }

int cs_seek(int fd, int64_t offset) { return lseek(fd, (off_t)offset, SEEK_SET) < 0 ? -1 : 0; }
int64_t cs_tell(int fd) { off_t at = lseek(fd, 0, SEEK_CUR); return at < 0 ? -1 : (int64_t)at; }

int cs_sync(int fd) {
#ifdef __APPLE__
    // fsync on Apple platforms leaves data in the drive's volatile cache; F_FULLFSYNC flushes it. Some file
    // systems (network, FAT) refuse F_FULLFSYNC: fall back to fsync there.
    if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
    return fsync(fd);
#else
    int rc;
    do {
        rc = fsync(fd);
    } while (rc != 0 && errno == EINTR);
    return rc;
#endif
}

int cs_start_writeback(int fd) {
#ifdef __APPLE__
    (void)fd;
    return 0;
#else
    int rc;
    do {
        rc = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    } while (rc != 0 && errno == EINTR);
    return rc;
#endif
}

int cs_access(const char *path, int write) {
    return access(path, write ? (W_OK | X_OK) : (R_OK | X_OK));
}

int cs_access_directory(int directory, int write) {
    return faccessat(directory, ".", write ? (W_OK | X_OK) : (R_OK | X_OK), 0);
}

int64_t cs_available_bytes(int fd) {
    // POSIX fstatvfs on both platforms (Darwin's struct statvfs has the same two fields).
    struct statvfs s;
    if (fstatvfs(fd, &s) != 0) return -1;
    return (int64_t)s.f_bavail * (int64_t)s.f_frsize;
}

// MARK: Locks

int cs_lock(int fd, enum cs_lock_mode mode, int wait) {
    int operation = mode == CS_LOCK_EXCLUSIVE ? LOCK_EX : mode == CS_LOCK_SHARED ? LOCK_SH : LOCK_UN;
    if (!wait && operation != LOCK_UN) operation |= LOCK_NB;
    int rc;
    do {
        rc = flock(fd, operation);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

// MARK: Key locks

// A conflicting lock at most this long is a key lock (the kernel merges the adjacent bytes one description holds);
// a longer one (a whole-file lock, say) is no key lock of ours, and covering every key with short ranges would take
// more locks than a kernel keeps.
#define CS_KEY_LOCK_SPAN 4096

#ifdef __APPLE__
static void key_lock_name(uint64_t hash, char name[32]) {
    snprintf(name, 32, "k%016llx.lock", (unsigned long long)(hash & 0x7fffffffffffffffULL));
}
#endif

int cs_key_locks_open(int directory) {
#ifdef __APPLE__
    return fcntl(directory, F_DUPFD_CLOEXEC, 0);
#else
    return cs_open_file_at(directory, "keys.lock", CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0600);
#endif
}

int cs_key_locks_current(int root, int handle) {
    struct stat held, named;
    if (fstat(handle, &held) != 0) return 0;
    if (fstatat(root, "locks", &named, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(named.st_mode)) return 0;
#ifndef __APPLE__
    // `locks` was a real directory just now; its entry `keys.lock` is looked at without following a link.
    if (fstatat(root, "locks/keys.lock", &named, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(named.st_mode)) return 0;
#endif
    return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

#ifndef __APPLE__
// Sets (F_WRLCK) or clears (F_UNLCK) the one-byte open-file-description lock of `hash` (top bit cleared, so the
// offset is a valid off_t) without waiting, retrying EINTR; `range` holds the request afterwards. 0 or -1 (errno).
static int key_range_set(int handle, uint64_t hash, short type, struct flock *range) {
    memset(range, 0, sizeof *range);
    range->l_type = type;
    range->l_whence = SEEK_SET;
    range->l_start = (off_t)(hash & 0x7fffffffffffffffULL);
    range->l_len = 1;
    int rc;
    do {
        rc = fcntl(handle, F_OFD_SETLK, range);
    } while (rc != 0 && errno == EINTR);
    return rc;
}
#endif

enum cs_key_lock_result cs_key_lock_try(int handle, uint64_t hash, int *token) {
    *token = -1;
#ifdef __APPLE__
    char name[32];
    key_lock_name(hash, name);
    // The holder unlinks the file before unlocking it: a lock taken on a file no longer at the name is retried.
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = cs_open_file_at(handle, name, CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0600);
        if (fd < 0) return CS_KEY_LOCK_FAILED;
        int rc;
        do {
            rc = flock(fd, LOCK_EX | LOCK_NB);
        } while (rc != 0 && errno == EINTR);
        if (rc != 0) {
            int err = errno;
            close(fd);
            errno = err;
            return err == EWOULDBLOCK ? CS_KEY_LOCK_BUSY : CS_KEY_LOCK_FAILED;
        }
        struct stat opened, current;
        if (fstat(fd, &opened) == 0 && fstatat(handle, name, &current, AT_SYMLINK_NOFOLLOW) == 0 &&
            opened.st_dev == current.st_dev && opened.st_ino == current.st_ino) {
            *token = fd;
            return CS_KEY_LOCK_HELD;
        }
        close(fd);
    }
    return CS_KEY_LOCK_BUSY;
#else
    struct flock range;
    int rc = key_range_set(handle, hash, F_WRLCK, &range);
    if (rc == 0) return CS_KEY_LOCK_HELD;
    if (errno != EAGAIN && errno != EACCES) return CS_KEY_LOCK_FAILED;
    struct flock holder = range;
    holder.l_pid = 0;
    if (fcntl(handle, F_OFD_GETLK, &holder) != 0 || holder.l_type == F_UNLCK) return CS_KEY_LOCK_BUSY;
    return holder.l_len > 0 && holder.l_len <= CS_KEY_LOCK_SPAN ? CS_KEY_LOCK_BUSY : CS_KEY_LOCK_FOREIGN;
#endif
}

int cs_key_unlock(int handle, uint64_t hash, int token) {
#ifdef __APPLE__
    char name[32];
    key_lock_name(hash, name);
    unlinkat(handle, name, 0);
    return close(token);
#else
    (void)token;
    struct flock range;
    return key_range_set(handle, hash, F_UNLCK, &range);
#endif
}

// MARK: Shared mappings and their SIGBUS guard

void *cs_map_shared(int fd, size_t length, int writable) {
    void *address = mmap(NULL, length, writable ? (PROT_READ | PROT_WRITE) : PROT_READ, MAP_SHARED, fd, 0);
    return address == MAP_FAILED ? NULL : address;
}

int cs_unmap(void *address, size_t length) { return munmap(address, length); }

// Guarded pages live in blocks of slots chained by an atomic pointer: a block is allocated (outside any signal
// handler) when all slots are taken and never freed, so the handler only reads memory that stays valid. A slot
// number is block index * CS_GUARD_BLOCK + position.
#define CS_GUARD_BLOCK 256
struct guard_block {
    _Atomic(uintptr_t) pages[CS_GUARD_BLOCK];
    _Atomic(int) lost[CS_GUARD_BLOCK];
    _Atomic(struct guard_block *) next;
};
static struct guard_block first_block;
static struct sigaction previous_sigbus;
static _Atomic(int) guard_installed;
static uintptr_t page_size;

static void sigbus_handler(int signal_number, siginfo_t *info, void *context) {
    int saved = errno;
    uintptr_t page = (uintptr_t)info->si_addr & ~(page_size - 1);
    for (struct guard_block *block = &first_block; page != 0 && block != NULL; block = atomic_load(&block->next)) {
        for (int i = 0; i < CS_GUARD_BLOCK; i++) {
            if (atomic_load(&block->pages[i]) != page) continue;
            // The file under this mapping shrank: put a private zero page in its place and let the access retry.
            void *replaced = mmap((void *)page, page_size, PROT_READ | PROT_WRITE,
                                  MAP_FIXED | MAP_PRIVATE | MAP_ANON, -1, 0);
            if (replaced != MAP_FAILED) {
                atomic_store(&block->lost[i], 1);
                errno = saved;
                return;
            }
        }
    }
    errno = saved;
    // Not ours: hand it on as if this handler had never been installed.
    if (previous_sigbus.sa_flags & SA_SIGINFO) {
        if (previous_sigbus.sa_sigaction != NULL) {
            previous_sigbus.sa_sigaction(signal_number, info, context);
            return;
        }
    } else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
        previous_sigbus.sa_handler(signal_number);
        return;
    }
    // Default action: restore it and re-raise (delivered when this handler returns, or the access faults again).
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static int install_guard(void) {
    int expected = 0;
    if (atomic_load(&guard_installed) == 2) return 0;
    if (!atomic_compare_exchange_strong(&guard_installed, &expected, 1)) {
        while (atomic_load(&guard_installed) == 1) { /* another thread is installing */ }
        return atomic_load(&guard_installed) == 2 ? 0 : -1;
    }
    long size = sysconf(_SC_PAGESIZE);
    page_size = size > 0 ? (uintptr_t)size : 4096;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = sigbus_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &previous_sigbus) != 0) {
        atomic_store(&guard_installed, 0);
        return -1;
    }
    atomic_store(&guard_installed, 2);
    return 0;
}

int cs_guard_mapping(void *address) {
    if (address == NULL || install_guard() != 0) return -1;
    int base = 0;
    for (struct guard_block *block = &first_block; block != NULL; base += CS_GUARD_BLOCK) {
        for (int i = 0; i < CS_GUARD_BLOCK; i++) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong(&block->pages[i], &expected, (uintptr_t)address)) {
                atomic_store(&block->lost[i], 0);  // the mapping is not used before this returns
                return base + i;
            }
        }
        struct guard_block *next = atomic_load(&block->next);
        if (next == NULL) {
            struct guard_block *fresh = calloc(1, sizeof *fresh);
            if (fresh == NULL) {
                errno = ENOMEM;
                return -1;
            }
            struct guard_block *none = NULL;
            if (atomic_compare_exchange_strong(&block->next, &none, fresh)) next = fresh;
            else {
                free(fresh);
                next = none;
            }
        }
        block = next;
    }
    errno = ENOMEM;
    return -1;
}

static struct guard_block *block_of(int slot, int *position) {
    if (slot < 0) return NULL;
    struct guard_block *block = &first_block;
    for (int n = slot / CS_GUARD_BLOCK; n > 0 && block != NULL; n--) block = atomic_load(&block->next);
    *position = slot % CS_GUARD_BLOCK;
    return block;
}

void cs_unguard_mapping(int slot) {
    int position = 0;
    struct guard_block *block = block_of(slot, &position);
    if (block != NULL) atomic_store(&block->pages[position], 0);
}

int cs_detach_mapping(void *address, size_t length) {
    void *replaced = mmap(address, length, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANON, -1, 0);
    return replaced == MAP_FAILED ? -1 : 0;
}

int cs_mapping_lost(int slot) {
    if (slot >= 0 && slot < CS_GUARD_BLOCK) return atomic_load_explicit(&first_block.lost[slot], memory_order_acquire);
    int position = 0;
    struct guard_block *block = block_of(slot, &position);
    return block == NULL ? 1 : atomic_load_explicit(&block->lost[position], memory_order_acquire);
}

// MARK: Private temporary directories

int cs_make_private_directory(const char *parent, const char *prefix, char *path, size_t length) {
    int written = snprintf(path, length, "%s/%sXXXXXX", parent, prefix);
    if (written < 0 || (size_t)written >= length) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (mkdtemp(path) == NULL) return -1;
    // mkdtemp creates 0700; check what is there now (never trust a name in a shared directory).
    struct stat s;
    if (lstat(path, &s) != 0) return -1;
    if (!S_ISDIR(s.st_mode) || s.st_uid != geteuid() || (s.st_mode & 077) != 0) {
        rmdir(path);
        errno = EPERM;
        return -1;
    }
    return 0;
}

// MARK: Process and clocks

int32_t cs_process_id(void) { return (int32_t)getpid(); }

uint32_t cs_user_id(void) { return (uint32_t)geteuid(); }

int cs_signal_is_ignored(int number) {
    struct sigaction current;
    if (sigaction(number, NULL, &current) != 0) return 0;
    return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN;
}

double cs_coarse_now(void) {
    struct timespec spec;
#ifdef __APPLE__
    clock_gettime(CLOCK_REALTIME, &spec);
#else
    clock_gettime(CLOCK_REALTIME_COARSE, &spec);
#endif
    return (double)spec.tv_sec + (double)spec.tv_nsec * 1e-9;
}

void cs_sleep_microseconds(uint32_t microseconds) { usleep(microseconds); }

// MARK: Keyed hashes

// A non-NULL address for empty inputs (Swift passes NULL for an empty array; libraries differ on NULL).
static const uint8_t cs_empty_input[1] = {0};

int cs_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t data_length, uint8_t *out) {
    if (out == NULL || (key == NULL && key_length != 0) || (data == NULL && data_length != 0)) return -1;
    if (key == NULL) key = cs_empty_input;
    if (data == NULL) data = cs_empty_input;
#ifdef __APPLE__
    CCHmac(kCCHmacAlgSHA256, key, key_length, data, data_length, out);
    return 0;
#else
    if (key_length > (size_t)INT_MAX) return -1;
    unsigned int written = 0;
    if (HMAC(EVP_sha256(), key, (int)key_length, data, data_length, out, &written) == NULL) return -1;
    return written == 32 ? 0 : -1;
#endif
}

int cs_sha256(const uint8_t *data, size_t length, uint8_t *out) {
    if (out == NULL || (data == NULL && length != 0)) return -1;
    if (data == NULL) data = cs_empty_input;
#ifdef __APPLE__
    if (length > (size_t)UINT32_MAX) return -1;
    CC_SHA256(data, (CC_LONG)length, out);
    return 0;
#else
    return SHA256(data, length, out) == NULL ? -1 : 0;
#endif
}

int cs_pipe(int fds[2]) {
#ifdef __APPLE__
    if (pipe(fds) != 0) return -1;
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#else
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -1;
#endif
}

int cs_spawn(const char *path, char *const argv[], char *const envp[], int input, int output, int error, int32_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if ((errno = posix_spawn_file_actions_init(&actions)) != 0) return -1;
    if ((errno = posix_spawnattr_init(&attributes)) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    const int sources[3] = {input, output, error};
    for (int target = 0; target < 3; target++) {
        if (sources[target] < 0) {
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
        } else {
            posix_spawn_file_actions_adddup2(&actions, sources[target], target);
        }
    }
#if !defined(__APPLE__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    // The child starts with no signal blocked, as from a shell: a thread of this process (a dispatch worker, say)
    // may block signals, and a child inheriting that mask ignores SIGTERM or misses SIGCHLD (a shell's `wait`).
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK
#ifdef __APPLE__
                             | POSIX_SPAWN_CLOEXEC_DEFAULT
#endif
                             );
    pid_t child = 0;
    int result = posix_spawn(&child, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (result != 0) {
        errno = result;
        return -1;
    }
    *pid = (int32_t)child;
    return 0;
}
