import CacheSystem
import Foundation
import Synchronization

/// A cross-process lock on one opaque key of a namespace, held by this process until ``release()``.
///
/// Backed by an exclusive `flock(2)` on `<namespace>/locks/<hash of the key>`: the kernel releases it when the
/// holder exits or dies, so a crashed holder never blocks the others. Different keys whose hashes collide only
/// share a lock (a waiter waits a little longer), never an entry.
public final class KeyLock: Sendable {
    private let directory: Int32
    private let descriptor: Int32
    private let name: String
    private let released = Mutex(false)

    fileprivate init(directory: Int32, descriptor: Int32, name: String) {
        self.directory = directory
        self.descriptor = descriptor
        self.name = name
    }

    deinit {
        release()
    }

    /// Removes the lock file and unlocks (idempotent). The file is unlinked while still locked, so a process
    /// that opened it meanwhile notices (its descriptor no longer names the path) and opens the new one.
    public func release() {
        let first = released.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        _ = cs_unlink_at(directory, name)
        _ = cs_lock(descriptor, CS_LOCK_UNLOCK, 0)
        _ = cs_close(descriptor)
        _ = cs_close(directory)
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
        let name = KeyLockFile.name(for: key)
        let deadline = Date().addingTimeInterval(max(0, timeout))
        var waited = false
        var pause: UInt64 = 2_000_000
        while true {
            // The root descriptor is valid only while the store is open (closing it mid-wait gives up).
            guard !isClosed else { return .unavailable }
            switch KeyLockFile.tryLock(root: files.handles.root, name: name) {
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

    /// One non-blocking attempt: open `locks/` and the lock file in it (never through a symlink), take
    /// `flock(LOCK_EX | LOCK_NB)`, then make sure the locked file is still the one at the path (a releasing holder
    /// unlinks it); a stale descriptor is retried at once.
    static func tryLock(root: Int32, name: String) -> Attempt {
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
                return .locked(KeyLock(directory: directory, descriptor: descriptor, name: name))
            }
            _ = cs_lock(descriptor, CS_LOCK_UNLOCK, 0)
            _ = cs_close(descriptor)
            _ = cs_close(directory)
        }
        return .busy
    }

    /// 32 hex digits: two FNV-1a 64-bit hashes of the key's UTF-8 bytes (a file name of fixed length and charset).
    static func name(for key: String) -> String {
        func fnv(_ seed: UInt64) -> String {
            var hash = seed
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            let digits = String(hash, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return fnv(0xcbf2_9ce4_8422_2325) + fnv(0xcbf2_9ce4_8422_2325 ^ 0x9e37_79b9_7f4a_7c15) + ".lock"
    }
}
