// The portable system layer: every POSIX call the library makes goes through these functions, so the
// differences between Linux (glibc) and Apple platforms (Darwin) live in one C file (CacheSystem.c) with an
// `#ifdef __APPLE__` branch per function, and Swift sees one set of fixed-width types on every platform.
//
// Conventions: functions returning `int` return 0 (or a descriptor ≥ 0) on success and -1 on failure with the
// error number in `cs_errno()`. Every open refuses a symbolic link as the last component (O_NOFOLLOW), never
// blocks on a FIFO, and sets close-on-exec. Names given with a directory descriptor are single path components
// relative to that directory (openat/unlinkat/renameat), so a directory swapped for a symbolic link after it was
// opened is never followed.
#ifndef CACHE_SYSTEM_H
#define CACHE_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What kind of file a `cs_file_info` describes.
enum cs_file_kind {
    CS_KIND_OTHER = 0,
    CS_KIND_REGULAR = 1,
    CS_KIND_DIRECTORY = 2,
    CS_KIND_SYMLINK = 3,
    CS_KIND_FIFO = 4,
};

/// The fields of `struct stat` the library uses, with the same names and types on every platform
/// (Linux `st_mtim` / Darwin `st_mtimespec` become `modified_ns`).
typedef struct cs_file_info {
    uint64_t device;
    uint64_t inode;
    /// Bytes.
    int64_t size;
    /// Permission bits (`mode & 07777`).
    uint32_t permissions;
    /// A `cs_file_kind`.
    uint32_t kind;
    uint32_t owner;
    uint64_t links;
    /// Nanoseconds since 1970.
    int64_t modified_ns;
    /// Nanoseconds since 1970 (inode change time).
    int64_t changed_ns;
} cs_file_info;

/// Portable classes of error numbers (the library never compares raw `errno` values).
enum cs_error_class {
    CS_ERROR_OTHER = 0,
    CS_ERROR_NO_SPACE = 1,       // ENOSPC, EDQUOT
    CS_ERROR_PERMISSION = 2,     // EACCES, EPERM, EROFS
    CS_ERROR_NOT_FOUND = 3,      // ENOENT
    CS_ERROR_EXISTS = 4,         // EEXIST, ENOTEMPTY
    CS_ERROR_SYMLINK = 5,        // ELOOP (O_NOFOLLOW met a symbolic link; Linux) / EMLINK on some BSD paths
    CS_ERROR_NOT_DIRECTORY = 6,  // ENOTDIR
    CS_ERROR_NOT_REGULAR = 7,    // the file is not a regular file (FIFO, socket, device, directory)
    CS_ERROR_INTERRUPTED = 8,    // EINTR
    CS_ERROR_WOULD_BLOCK = 9,    // EWOULDBLOCK / EAGAIN (a non-blocking lock is held elsewhere)
};

/// The calling thread's last error number.
int cs_errno(void);
/// Sets the calling thread's error number.
void cs_set_errno(int err);
/// The class of error number `err`.
enum cs_error_class cs_classify_error(int err);
/// An error number of class `error_class` (for errors the library reports itself, e.g. ENOTDIR).
int cs_error_number(enum cs_error_class error_class);
/// Writes the system's message for `err` into `buffer` (always NUL-terminated).
void cs_error_message(int err, char *buffer, size_t length);

// MARK: Directories

/// Opens the directory at `path` for use as a directory descriptor, following symbolic links (for a location the
/// caller chose, such as the cache directory; everything inside it is opened with `cs_open_directory_at`).
int cs_open_directory(const char *path);
/// Opens the directory `name` inside `directory` (no symbolic link).
int cs_open_directory_at(int directory, const char *name);
/// Creates the directory `name` inside `directory` with `permissions`.
int cs_make_directory_at(int directory, const char *name, uint32_t permissions);
/// Creates the directory at `path` (one component, the parent must exist).
int cs_make_directory(const char *path, uint32_t permissions);
/// Removes the empty directory `name` inside `directory`.
int cs_remove_directory_at(int directory, const char *name);

/// An open directory listing.
typedef struct cs_listing cs_listing;
/// Lists `name` inside `directory` (`"."` lists `directory` itself); NULL on failure (see `cs_errno`).
cs_listing *cs_listing_open_at(int directory, const char *name);
/// The next entry's name (never "." or ".."); NULL at the end. Valid until the next call.
const char *cs_listing_next(cs_listing *listing);
void cs_listing_close(cs_listing *listing);

// MARK: Files

enum cs_open_access { CS_OPEN_READ = 0, CS_OPEN_WRITE = 1, CS_OPEN_READ_WRITE = 2 };
enum cs_open_creation { CS_OPEN_EXISTING = 0, CS_OPEN_CREATE = 1, CS_OPEN_CREATE_NEW = 2, CS_OPEN_TRUNCATE = 3 };

/// Opens the regular file `name` inside `directory` (`directory` may be `CS_CURRENT_DIRECTORY` for a path):
/// refuses a symbolic link (CS_ERROR_SYMLINK) and anything but a regular file (CS_ERROR_NOT_REGULAR) without
/// blocking on a FIFO. `creation` CS_OPEN_TRUNCATE creates or truncates. New files get `permissions`.
int cs_open_file_at(int directory, const char *name, enum cs_open_access access, enum cs_open_creation creation, uint32_t permissions);
/// Creates a new, unnamed regular file in `directory` open for writing (`O_TMPFILE` on Linux): no directory
/// entry, so creating it takes no lock of the directory and a process that dies before it is named leaves
/// nothing behind. Name it with `cs_link_unnamed_at`. Returns -1 with `errno` EOPNOTSUPP where the platform or
/// the file system has no unnamed files (always on Apple platforms): the caller then creates a named file.
int cs_create_unnamed_at(int directory, uint32_t permissions);
/// Gives the unnamed file `fd` (from `cs_create_unnamed_at`) the new name `name` in `directory` (`linkat(2)`;
/// fails with EEXIST on any existing name, a symbolic link included, which is never followed). Returns 0, or -1
/// with `errno` (EOPNOTSUPP on Apple platforms).
int cs_link_unnamed_at(int fd, int directory, const char *name);
/// `cs_open_file_at` for reading an existing file, filling `info` from the `fstat` that checks it is regular (so
/// the caller needs no second `fstat`). Two system calls on success: `openat` and `fstat`.
int cs_open_existing_for_reading_at(int directory, const char *name, cs_file_info *info);
/// `cs_open_file_at` for a path (relative to the working directory, or absolute).
int cs_open_file(const char *path, enum cs_open_access access, enum cs_open_creation creation, uint32_t permissions);
/// Opens a path a user named for output (`-o FILE`): write-only, created (with `permissions`) or truncated,
/// following symbolic links and accepting devices such as /dev/null — unlike every other open of this layer.
int cs_open_output(const char *path, uint32_t permissions);
/// The value meaning "the working directory" for `*_at` functions.
int cs_current_directory(void);
int cs_close(int fd);
/// Information about an open file.
int cs_stat_fd(int fd, cs_file_info *info);
/// Information about `name` inside `directory`, not following a symbolic link (lstat).
int cs_stat_at(int directory, const char *name, cs_file_info *info);
/// Information about the file at `path`; `follow` != 0 follows a final symbolic link.
int cs_stat_path(const char *path, int follow, cs_file_info *info);
/// Removes the non-directory `name` inside `directory` (a symbolic link itself, never its target).
int cs_unlink_at(int directory, const char *name);
/// Removes the non-directory at `path`.
int cs_unlink(const char *path);
/// Renames `from` inside `from_directory` to `to` inside `to_directory` (replacing a file there).
int cs_rename_at(int from_directory, const char *from, int to_directory, const char *to);
/// Renames the path `from` to the path `to`.
int cs_rename(const char *from, const char *to);
/// Sets an open file's permission bits.
int cs_set_permissions(int fd, uint32_t permissions);
/// Sets the permission bits of `name` inside `directory` without following a symbolic link.
int cs_set_permissions_at(int directory, const char *name, uint32_t permissions);

/// Reads up to `count` bytes (retrying on EINTR); returns bytes read, 0 at the end, -1 on error.
int64_t cs_read(int fd, void *buffer, size_t count);
/// Reads up to `count` bytes at `offset` (retrying on EINTR).
int64_t cs_read_at(int fd, void *buffer, size_t count, int64_t offset);
/// Writes all `count` bytes (retrying on EINTR and short writes); 0 or -1.
int cs_write_all(int fd, const void *buffer, size_t count);
/// Sets an open file's size in bytes.
int cs_truncate(int fd, int64_t size);
/// Copies up to `count` bytes of the regular file `in_fd` from byte `offset` to `out_fd` at its file position
/// (a regular file, a pipe or a terminal), in the kernel where it can: Linux `copy_file_range` (a regular output
/// file), then `sendfile` (any output), then `pread`/`write` through a 1 MiB buffer; Apple platforms `pread`/
/// `write` (`fcopyfile` copies whole files only). Retries on EINTR and short copies; returns the bytes copied
/// (fewer than `count` only when `in_fd` ends first), -1 with the error number (EPIPE, ENOSPC ...) on failure.
int64_t cs_copy_range(int in_fd, int64_t offset, int out_fd, int64_t count);
/// The crc32 of `count` bytes (zlib's polynomial and conventions: start with 0, pass the previous value to
/// continue). Linux: libdeflate's `libdeflate_crc32` (PCLMULQDQ folding, ≈6x zlib's speed here) when the system
/// has `libdeflate.so.0`, loaded on the first call; else, and on Apple platforms, zlib's `crc32_z`.
uint32_t cs_crc32(uint32_t crc, const void *buffer, size_t count);
/// The crc32 of the concatenation A·B from `crc1` (the crc32 of A), `crc2` (of B) and B's length `count2` in
/// bytes (zlib's `crc32_combine`, O(log count2)), so parts of one file can be checked separately and joined.
uint32_t cs_crc32_combine(uint32_t crc1, uint32_t crc2, int64_t count2);
/// 1 when ``cs_crc32`` uses libdeflate, 0 when it uses zlib.
int cs_crc32_is_accelerated(void);
/// Moves the file offset to `offset` bytes from the start.
int cs_seek(int fd, int64_t offset);
/// The descriptor's current file offset in bytes (lseek SEEK_CUR); -1 with errno set on failure.
int64_t cs_tell(int fd);
/// Makes an open file's data durable: `fsync` on Linux, `fcntl(F_FULLFSYNC)` on Apple platforms (plain
/// `fsync` there only reaches the drive's cache), falling back to `fsync` where F_FULLFSYNC is refused.
int cs_sync(int fd);
/// Starts writing an open file's dirty pages to the device without waiting (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE` on Linux), so that the writes of several files are in flight together before each is
/// `cs_sync`ed; does nothing on Apple platforms (each `cs_sync` there is a full flush). Returns 0, or -1 with
/// errno set.
int cs_start_writeback(int fd);

// MARK: Access checks

/// 0 when this process may search and read (`write` == 0) or search and write (`write` != 0) `path`.
int cs_access(const char *path, int write);
/// `cs_access` for the directory `directory` itself (a descriptor): no path is looked up.
int cs_access_directory(int directory, int write);

/// Bytes an unprivileged process may still write on the file system holding the open file `fd` (`fstatvfs`:
/// available blocks × fragment size, the same call on Darwin and Linux); -1 when it cannot be read.
int64_t cs_available_bytes(int fd);

// MARK: Locks (flock: whole file, per open description, released on close)

enum cs_lock_mode { CS_LOCK_UNLOCK = 0, CS_LOCK_SHARED = 1, CS_LOCK_EXCLUSIVE = 2 };
/// `wait` == 0 fails at once with CS_ERROR_WOULD_BLOCK when another holder conflicts.
int cs_lock(int fd, enum cs_lock_mode mode, int wait);

// MARK: Key locks (one exclusive lock per 63-bit key hash, held per open file description, released on close or exit)
//
// Linux: open-file-description byte-range locks (F_OFD_SETLK) on one file, at byte offset = the hash, length 1, so
// two keys contend only when their hashes collide. Apple platforms have no OFD locks (classic fcntl locks belong to
// the process and vanish when any descriptor of the file closes): there each key is a file `k<16 hex>.lock` in the
// directory, locked with flock and unlinked by its holder before the unlock, so at most the held keys have files.

/// The outcome of `cs_key_lock_try`.
enum cs_key_lock_result {
    CS_KEY_LOCK_HELD = 0,      // this handle now holds the key's lock
    CS_KEY_LOCK_BUSY = 1,      // another holder has this key (or a key whose hash collides with it)
    CS_KEY_LOCK_FOREIGN = 2,   // a lock that is no key lock covers the key (a range wider than a few bytes)
    CS_KEY_LOCK_FAILED = -1    // see cs_errno()
};
/// The key-lock handle of the directory open as `directory`: on Linux the regular
/// file `keys.lock` in it (created 0600 when missing, never through a symbolic link; anything but a regular file is refused with
/// CS_ERROR_NOT_REGULAR), on Apple platforms a descriptor of the directory. Close it with `cs_close` once no key
/// it holds is held any more (closing releases them).
int cs_key_locks_open(int directory);
/// 1 when `handle` (from `cs_key_locks_open` on `root`'s directory `locks`) is still what that name holds: `locks`
/// is a directory (not a symbolic link) and, on Linux, its `keys.lock` is the very file `handle` has open; on Apple
/// platforms `locks` is the very directory. Else 0 (then open the handle again). Follows no symbolic link.
int cs_key_locks_current(int root, int handle);
/// One attempt, never waiting, to lock the key whose 64-bit hash is `hash` (its top bit is ignored) through
/// `handle`. On CS_KEY_LOCK_HELD `*token` is what `cs_key_unlock` needs (-1 on Linux; the key file on Apple).
/// A handle that already holds `hash` is not refused again (the caller keeps one hold per hash).
enum cs_key_lock_result cs_key_lock_try(int handle, uint64_t hash, int *token);
/// Unlocks the key `hash` held through `handle` with `token` (from `cs_key_lock_try`).
int cs_key_unlock(int handle, uint64_t hash, int token);

// MARK: Shared mappings

/// Maps `length` bytes of `fd` shared (`writable` != 0: read and write); NULL on failure.
void *cs_map_shared(int fd, size_t length, int writable);
int cs_unmap(void *address, size_t length);
/// Guards the mapping at `address` (returned by `cs_map_shared`, one page at most) against the file being
/// truncated under it: an access past the new end of file, which would raise SIGBUS, instead finds a private
/// zero page, and `cs_mapping_lost(slot)` turns 1. SIGBUS signals for other addresses go to the handler that
/// was installed before (or the default action). Returns the guard's slot (≥ 0), or -1 when the handler cannot
/// be installed or no slot is free (the mapping is then unguarded and must not be used).
int cs_guard_mapping(void *address);
/// Stops guarding the mapping of `slot` (before unmapping it).
void cs_unguard_mapping(int slot);
/// Replaces the mapping at `address` with private zero memory in one step (the address stays valid, the file is no
/// longer mapped), for an owner that stops using the file while other threads may still load from the address.
int cs_detach_mapping(void *address, size_t length);
/// 1 when the guarded mapping of `slot` was replaced by a private page because its file shrank (one atomic load).
int cs_mapping_lost(int slot);

// MARK: Private temporary directories

/// Creates a new directory `<parent>/<prefix>XXXXXX` (mkdtemp) with mode 0700, checks it is a directory owned
/// by this user with no access for others, and writes its path into `path` (NUL-terminated). 0 or -1.
int cs_make_private_directory(const char *parent, const char *prefix, char *path, size_t length);

// MARK: Process and clocks

int32_t cs_process_id(void);
uint32_t cs_user_id(void);
/// Seconds since 1970 from a cheap clock of scheduler-tick resolution (Linux CLOCK_REALTIME_COARSE; Apple
/// platforms have no coarse realtime clock and use CLOCK_REALTIME).
double cs_coarse_now(void);

/// Whether signal `number`'s disposition is "ignore" (SIG_IGN), as a shell leaves SIGINT and SIGQUIT for a
/// background job (`cmd &` in a script): 1 yes, 0 no or unknown. POSIX sigaction on both platforms.
int cs_signal_is_ignored(int number);
/// Sleeps for `microseconds`.
void cs_sleep_microseconds(uint32_t microseconds);

// MARK: Keyed hashes (the platform's crypto library: CommonCrypto on Apple platforms, OpenSSL libcrypto on Linux)

/// Writes HMAC-SHA-256(key, data) (RFC 2104, FIPS 180-4) into the 32 bytes at `out`. `key` / `data` may be NULL
/// when their length is 0. 0, or -1 when the library fails or a length is beyond what it accepts.
int cs_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t data_length, uint8_t *out);
/// Writes SHA-256(data) (FIPS 180-4) into the 32 bytes at `out`. `data` may be NULL when `length` is 0. 0, or -1
/// when the library fails or `length` is beyond what it accepts.
int cs_sha256(const uint8_t *data, size_t length, uint8_t *out);

// MARK: Child processes (the test support's fixtures and the built tools run as children)

/// A pipe whose two ends are close-on-exec, so a child started at the same time by another thread never
/// inherits them: `fds[0]` reads, `fds[1]` writes. 0 or -1.
int cs_pipe(int fds[2]);
/// Starts the program at `path` (posix_spawn) with `argv` and `envp` (NULL-terminated) as a child whose
/// descriptors 0, 1 and 2 are `input`, `output` and `error` (-1: /dev/null) and which inherits no other
/// descriptor of this process (Linux: posix_spawn_file_actions_addclosefrom_np, glibc 2.34 and later; Apple
/// platforms: POSIX_SPAWN_CLOEXEC_DEFAULT), so a test's sockets and pipes never stay open in a child; it starts
/// with no signal blocked (POSIX_SPAWN_SETSIGMASK), whatever the calling thread blocks.
/// 0 with the child's process id in `*pid`, or -1.
int cs_spawn(const char *path, char *const argv[], char *const envp[], int input, int output, int error, int32_t *pid);

/// SQLite files opened relative to a directory descriptor (SQLiteHeldDirectories.c). Registers a duplicate of
/// the descriptor `directory` and writes into `prefix` (`size` bytes; 64 are enough) a path naming it for SQLite:
/// `<prefix>` is the directory and `<prefix>/<name>` the file `name` in it, for the database and every file SQLite
/// derives from its name (`-wal`, `-shm`, `-journal`, the directory it fsyncs). The unix VFS's system calls
/// (`open`, `access`, `stat`, `lstat`, `unlink`, `readlink`, `mkdir`, `rmdir`; `xSetSystemCall`) are replaced
/// once per process by ones that answer such paths with `openat`/`fstatat`/... on the descriptor, never following
/// a symbolic link, and pass every other path to the original call. So renaming the directory or putting a
/// symbolic link in its place changes nothing for a connection opened on the prefix. Returns 0; -1 with
/// `errno` (EBADF, EMFILE ...); -2 when the calls could not be replaced (the caller then opens by path). The registered
/// descriptor lives until `cs_sqlite_release_directory(prefix)`, which the caller calls once the connection is
/// closed; a prefix is never reused, so a path SQLite kept past that names nothing (ENOENT).
int cs_sqlite_hold_directory(int directory, char *prefix, size_t size);
/// Releases a prefix from `cs_sqlite_hold_directory` and closes its descriptor.
void cs_sqlite_release_directory(const char *prefix);
/// The VFS to open held paths with (`sqlite3_open_v2`'s last argument): NULL (the default) on Linux; on Apple
/// platforms "unix-posix" when registered (the default there picks locks by `statfs` of the path).
const char *cs_sqlite_vfs_name(void);

#ifdef __cplusplus
}
#endif

#endif
