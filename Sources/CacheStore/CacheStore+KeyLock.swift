import CacheSystem
import Foundation
import Synchronization

/// A cross-process lock on one opaque key of a namespace, held by this process until ``release()``.
///
/// Keyed by a 63-bit hash of the key (``KeyLockFile/hash(for:)``), so two keys contend only when their hashes
/// collide. On Linux it is an open-file-description lock (`F_OFD_SETLK`) on byte `hash` (length 1) of the one file
/// `<namespace>/locks/keys.lock`; on Apple platforms a `flock` on `<namespace>/locks/k<16 hex>.lock`, a file its
/// holder unlinks before unlocking (see `cs_key_lock_try`). The kernel releases it when the holder exits or dies, so
/// a crashed holder never blocks the others. Inside one store a hash is held at most once.
public final class KeyLock: Sendable {
    private let table: KeyLockTable
    private let hash: UInt64
    private let released = Mutex(false)

    fileprivate init(table: KeyLockTable, hash: UInt64) {
        self.table = table
        self.hash = hash
    }

    deinit {
        release()
    }

    /// Unlocks (idempotent).
    public func release() {
        let first = released.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        table.release(hash)
    }
}

/// The key hashes a store holds locked, through one key-lock handle for the whole store. The handle stays open
/// between holds (no open and close per fetch); the first hold after an idle spell checks that `locks/` still
/// names it (`cs_key_locks_current`) and opens it again when not, so a lock file replaced or removed meanwhile is
/// never locked through a stale descriptor. ``close()`` (the store closing) closes it.
final class KeyLockTable: Sendable {
    struct Held {
        /// The handle of `cs_key_locks_open`, -1 before the first hold and after ``close()``.
        var handle: Int32 = -1
        /// Each held hash with its `cs_key_unlock` token.
        var tokens: [UInt64: Int32] = [:]
    }

    private let held = Mutex(Held())

    /// One non-blocking attempt to hold the key of `hash` (in `root`'s `locks/`).
    func tryHold(_ hash: UInt64, root: Int32) -> KeyLockFile.Attempt {
        held.withLock { held -> KeyLockFile.Attempt in
            guard held.tokens[hash] == nil else { return .busy }
            if held.handle >= 0, held.tokens.isEmpty, cs_key_locks_current(root, held.handle) == 0 {
                _ = cs_close(held.handle)
                held.handle = -1
            }
            var handle = held.handle
            if handle < 0 {
                if cs_make_directory_at(root, "locks", 0o700) != 0, cs_classify_error(cs_errno()) != CS_ERROR_EXISTS {
                    return .failed
                }
                let directory = cs_open_directory_at(root, "locks")
                guard directory >= 0 else { return .failed }
                handle = cs_key_locks_open(directory)
                _ = cs_close(directory)
                guard handle >= 0 else { return .failed }
            }
            var token: Int32 = -1
            let result = cs_key_lock_try(handle, hash, &token)
            if result == CS_KEY_LOCK_HELD {
                held.handle = handle
                held.tokens[hash] = token
                return .locked(KeyLock(table: self, hash: hash))
            }
            if held.handle < 0 { _ = cs_close(handle) }
            switch result {
            case CS_KEY_LOCK_BUSY: return .busy
            case CS_KEY_LOCK_FOREIGN: return .foreign
            default: return .failed
            }
        }
    }

    /// Unlocks `hash` (the handle stays open for the next hold).
    func release(_ hash: UInt64) {
        held.withLock { held in
            guard let token = held.tokens.removeValue(forKey: hash) else { return }
            _ = cs_key_unlock(held.handle, hash, token)
        }
    }

    /// Closes the handle unless a key is still held through it (then the table's end closes it).
    func close() {
        held.withLock { held in
            guard held.handle >= 0, held.tokens.isEmpty else { return }
            _ = cs_close(held.handle)
            held.handle = -1
        }
    }

    deinit {
        held.withLock { held in
            if held.handle >= 0 { _ = cs_close(held.handle) }
        }
    }
}

/// The outcome of ``CacheStore/acquireKeyLock(_:timeout:)``.
public enum KeyLockAcquisition: Sendable {
    /// The lock is held; `waited` is true when another process held it first (its work may now be in the store).
    case acquired(KeyLock, waited: Bool)
    /// Another process still held it after the timeout (or the task was cancelled while waiting).
    case timedOut
    /// Locks cannot be taken here (read-only store, the lock directory or file is a symbolic link or not of its
    /// kind), or a lock that is no key lock covers the key (another key's holder never makes a caller wait).
    case unavailable
}

extension CacheStore {
    /// Takes the cross-process lock for the opaque `key` of this namespace, waiting at most `timeout` seconds
    /// while another process holds it (polled, so waiting is cancellable).
    ///
    /// Only another holder of the same key (or of a key whose 63-bit hash collides) makes it wait. The lock
    /// directory `<namespace>/locks/` is created owner-only; it and the lock file are opened with `O_NOFOLLOW` and
    /// must be a directory and a regular file, so a symlink or anything else planted there makes locking
    /// `.unavailable` (the caller fetches without the lock), never a write elsewhere. `onWait` is called once,
    /// when the first try finds the lock held by another holder (before the first pause).
    public func acquireKeyLock(_ key: String, timeout: TimeInterval,
                               onWait: (@Sendable () -> Void)? = nil) async -> KeyLockAcquisition {
        guard !isReadOnly, !isClosed, files.handles.root >= 0 else { return .unavailable }
        let hash = KeyLockFile.hash(for: key)
        let deadline = Date().addingTimeInterval(max(0, timeout))
        var waited = false
        var pause: UInt64 = 2_000_000
        while true {
            // The root descriptor is valid only while the store is open (closing it mid-wait gives up).
            guard !isClosed else { return .unavailable }
            switch keyLocks.tryHold(hash, root: files.handles.root) {
            case .locked(let lock):
                return .acquired(lock, waited: waited)
            case .failed, .foreign:
                return .unavailable
            case .busy:
                if !waited { onWait?() }
                waited = true
                if Date() >= deadline || Task.isCancelled { return .timedOut }
                try? await Task.sleep(nanoseconds: pause)
                pause = min(pause * 2, 25_000_000)
            }
        }
    }
}

/// The key hashes of the lock files under `<namespace>/locks/`.
enum KeyLockFile {
    enum Attempt {
        case locked(KeyLock)
        /// Another holder has the key (or one whose hash collides with it).
        case busy
        /// A lock that is no key lock covers the key: waiting for it would not wait for another fetch of the key.
        case foreign
        case failed
    }

    /// The lock hash of `key`: FNV-1a 64-bit of its UTF-8 bytes, top bit cleared (a byte offset is a signed 64-bit
    /// number), so two keys share a lock only when these 63 bits collide.
    static func hash(for key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash & 0x7fff_ffff_ffff_ffff
    }
}
