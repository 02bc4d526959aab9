import CacheSystem
import Foundation
import Synchronization

/// A cross-process lock on one opaque key of a namespace, held by this process until ``release()``.
///
/// Backed by an exclusive `flock(2)` on one of ``KeyLockFile/bucketCount`` lock files
/// `<namespace>/locks/<bucket>.lock`, chosen by a hash of the key: the kernel releases it when the holder exits
/// or dies, so a crashed holder never blocks the others. The files stay (a namespace has at most that many), so
/// taking a lock creates no file once its bucket's file exists, and deletes none. Keys that share a bucket share
/// the lock between processes (a waiter in another process waits a little longer, never for an entry of another
/// key); inside one store they do not block each other, while one key is held at most once.
public final class KeyLock: Sendable {
    private let table: KeyLockTable
    private let bucket: String
    private let key: String
    private let released = Mutex(false)

    fileprivate init(table: KeyLockTable, bucket: String, key: String) {
        self.table = table
        self.bucket = bucket
        self.key = key
    }

    deinit {
        release()
    }

    /// Unlocks (idempotent): the bucket's `flock` is dropped when no other key of this store holds it.
    public func release() {
        let first = released.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        table.release(key, in: bucket)
    }
}

/// The buckets a store holds locked, with the keys held in each (one `flock` per bucket for the whole store).
final class KeyLockTable: Sendable {
    struct Held {
        var directory: Int32
        var descriptor: Int32
        var keys: Set<String>
    }

    private let held = Mutex<[String: Held]>([:])

    /// One non-blocking attempt to hold `key` (in the bucket file `bucket` under `root`'s `locks/`).
    func tryHold(_ key: String, in bucket: String, root: Int32) -> KeyLockFile.Attempt {
        held.withLock { held -> KeyLockFile.Attempt in
            if var entry = held[bucket] {
                guard entry.keys.insert(key).inserted else { return .busy }
                held[bucket] = entry
                return .locked(KeyLock(table: self, bucket: bucket, key: key))
            }
            switch KeyLockFile.tryLock(root: root, name: bucket) {
            case .locked(let directory, let descriptor):
                held[bucket] = Held(directory: directory, descriptor: descriptor, keys: [key])
                return .locked(KeyLock(table: self, bucket: bucket, key: key))
            case .busy:
                return .busy
            case .failed:
                return .failed
            }
        }
    }

    /// Drops `key`; the last key of a bucket unlocks and closes its file.
    func release(_ key: String, in bucket: String) {
        held.withLock { held in
            guard var entry = held[bucket] else { return }
            entry.keys.remove(key)
            guard entry.keys.isEmpty else {
                held[bucket] = entry
                return
            }
            held[bucket] = nil
            _ = cs_lock(entry.descriptor, CS_LOCK_UNLOCK, 0)
            _ = cs_close(entry.descriptor)
            _ = cs_close(entry.directory)
        }
    }
}

/// The outcome of ``CacheStore/acquireKeyLock(_:timeout:)``.
public enum KeyLockAcquisition: Sendable {
    /// The lock is held; `waited` is true when another process held it first (its work may now be in the store).
    case acquired(KeyLock, waited: Bool)
    /// Another process still held it after the timeout (or the task was cancelled while waiting).
    case timedOut
    /// Locks cannot be taken here (read-only store, the lock directory is not ours or not a directory).
    case unavailable
}

extension CacheStore {
    /// Takes the cross-process lock for the opaque `key` of this namespace, waiting at most `timeout` seconds
    /// while another process holds it (polled, so waiting is cancellable).
    ///
    /// The lock directory `<namespace>/locks/` is created owner-only; it and the lock file are opened with
    /// `O_NOFOLLOW`, so a symlink planted there makes locking `.unavailable`, never a write elsewhere.
    public func acquireKeyLock(_ key: String, timeout: TimeInterval) async -> KeyLockAcquisition {
        guard !isReadOnly, !isClosed, files.handles.root >= 0 else { return .unavailable }
        if cs_make_directory_at(files.handles.root, "locks", 0o700) != 0, cs_classify_error(cs_errno()) != CS_ERROR_EXISTS {
            return .unavailable
        }
        let bucket = KeyLockFile.name(for: key)
        let deadline = Date().addingTimeInterval(max(0, timeout))
        var waited = false
        var pause: UInt64 = 2_000_000
        while true {
            // The root descriptor is valid only while the store is open (closing it mid-wait gives up).
            guard !isClosed else { return .unavailable }
            switch keyLocks.tryHold(key, in: bucket, root: files.handles.root) {
            case .locked(let lock):
                return .acquired(lock, waited: waited)
            case .failed:
                return .unavailable
            case .busy:
                waited = true
                if Date() >= deadline || Task.isCancelled { return .timedOut }
                try? await Task.sleep(nanoseconds: pause)
                pause = min(pause * 2, 25_000_000)
            }
        }
    }
}

/// The lock files under `<namespace>/locks/`.
enum KeyLockFile {
    enum Attempt {
        case locked(KeyLock)
        case busy
        case failed
    }

    enum FileAttempt {
        /// The open `locks/` directory and the locked file in it.
        case locked(directory: Int32, descriptor: Int32)
        case busy
        case failed
    }

    /// How many lock files a namespace has at most: few enough that filling a cache creates few files, many
    /// enough that two processes fetching different resources rarely share one.
    static let bucketCount: UInt64 = 256

    /// One non-blocking attempt: open `locks/` and the lock file in it (never through a symlink), take
    /// `flock(LOCK_EX | LOCK_NB)`, then make sure the locked file is still the one at the path (a process of an
    /// older version unlinks its lock files when it releases them); a stale descriptor is retried at once.
    static func tryLock(root: Int32, name: String) -> FileAttempt {
        for _ in 0..<8 {
            let directory = cs_open_directory_at(root, "locks")
            guard directory >= 0 else { return .failed }
            let descriptor = cs_open_file_at(directory, name, CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0o600)
            guard descriptor >= 0 else {
                _ = cs_close(directory)
                return .failed
            }
            if cs_lock(descriptor, CS_LOCK_EXCLUSIVE, 0) != 0 {
                let busy = cs_classify_error(cs_errno()) == CS_ERROR_WOULD_BLOCK
                _ = cs_close(descriptor)
                _ = cs_close(directory)
                return busy ? .busy : .failed
            }
            var opened = cs_file_info(), current = cs_file_info()
            if cs_stat_fd(descriptor, &opened) == 0, cs_stat_at(directory, name, &current) == 0,
               opened.device == current.device, opened.inode == current.inode {
                return .locked(directory: directory, descriptor: descriptor)
            }
            _ = cs_lock(descriptor, CS_LOCK_UNLOCK, 0)
            _ = cs_close(descriptor)
            _ = cs_close(directory)
        }
        return .busy
    }

    /// The bucket file of `key`: an FNV-1a 64-bit hash of its UTF-8 bytes modulo ``bucketCount``, as
    /// `k<2 hex digits>.lock` (a file name of fixed length and charset).
    static func name(for key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash % bucketCount, radix: 16)
        return "k" + String(repeating: "0", count: 2 - digits.count) + digits + ".lock"
    }
}
