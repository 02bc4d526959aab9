import Foundation
import CacheSystem
import CSQLite

/// A storage failure reported by `CacheStore`: a code to switch on plus a human-readable detail.
///
/// Every disk, index or argument problem surfaces as one of these (never a crash). Lookups of stored entries
/// never throw: a lookup (`entry(for:)`, `verifiedBodyFileURL(for:matching:)`, ...) that cannot read an entry drops
/// it and reports a miss, counted in `CacheStoreStatistics`; reading a body already opened
/// (`OpenedBody.read(from:upToCount:)`) throws when its file fails. Writes, removals, pinning, limits and the
/// partial-entry calls (`resumePartial(for:)` included) throw.
public struct CacheStoreError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure happened. A struct with static members rather than an enum, so kinds can be added
    /// without breaking a caller's `switch` (which needs a `default`); compare with `==` or match with `case`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case diskFull, permissionDenied, corruptIndex, io, invalidNamespace, notFound, busy, invalidArgument
            case unsafeFile, entryTooLarge
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// The file system or the index reported that the disk is full (`ENOSPC`, `EDQUOT`, `SQLITE_FULL`).
        public static let diskFull = Code(.diskFull)
        /// The cache directory or a file in it may not be read or written (`EACCES`, `EPERM`, `EROFS`,
        /// `SQLITE_READONLY`), or the store was opened read-only and the call writes.
        public static let permissionDenied = Code(.permissionDenied)
        /// `index.sqlite` is damaged or not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
        public static let corruptIndex = Code(.corruptIndex)
        /// Any other input/output failure of the file system or SQLite.
        public static let io = Code(.io)
        /// The namespace name is not 1–64 characters of `[A-Za-z0-9._-]` or is `.` / `..`.
        public static let invalidNamespace = Code(.invalidNamespace)
        /// The key, namespace or file asked for does not exist.
        public static let notFound = Code(.notFound)
        /// Another process held the index locked for longer than the busy timeout.
        public static let busy = Code(.busy)
        /// An argument was unusable (e.g. a body writer from another store, or one already committed).
        public static let invalidArgument = Code(.invalidArgument)
        /// A file or directory of the store is a symbolic link, a FIFO or another non-regular file where the store
        /// keeps its own files: someone else put it there, and the store refuses to follow or use it.
        public static let unsafeFile = Code(.unsafeFile)
        /// The body is larger than the store's per-entry limit (`Configuration.entryByteLimit`): it was not stored
        /// and nothing was evicted for it.
        public static let entryTooLarge = Code(.entryTooLarge)

        /// The failure class in words, for messages: `disk full`, `permission denied`, `damaged index`,
        /// `I/O error`, `invalid namespace`, `not found`, `cache busy (locked by another process)`,
        /// `invalid argument`, `unsafe file in the cache directory`, `entry too large`.
        public var description: String {
            switch kind {
            case .diskFull: return "disk full"
            case .permissionDenied: return "permission denied"
            case .corruptIndex: return "damaged index"
            case .io: return "I/O error"
            case .invalidNamespace: return "invalid namespace"
            case .notFound: return "not found"
            case .busy: return "cache busy (locked by another process)"
            case .invalidArgument: return "invalid argument"
            case .unsafeFile: return "unsafe file in the cache directory"
            case .entryTooLarge: return "entry too large"
            }
        }
    }

    /// What kind of failure happened.
    public var code: Code
    /// Details for logs: the operation, the path and the system's message.
    public var detail: String

    /// Creates an error from a code and a detail string.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `"<code in words>: <detail>"`, e.g. `disk full: write blobs/12: No space left on device (errno 28)`;
    /// the code's words alone when there is no detail.
    public var description: String { detail.isEmpty ? code.description : "\(code): \(detail)" }

    /// Maps an error number from a failed system call to an error (`ENOSPC` → `.diskFull`, `EACCES` →
    /// `.permissionDenied`, `ENOENT` → `.notFound`, a symbolic link or non-regular file refused by an open →
    /// `.unsafeFile`, everything else → `.io`).
    static func posix(_ err: Int32, _ operation: String) -> CacheStoreError {
        let text = "\(operation): \(BlobFiles.message(err)) (errno \(err))"
        switch cs_classify_error(err) {
        case CS_ERROR_NO_SPACE: return CacheStoreError(.diskFull, text)
        case CS_ERROR_PERMISSION: return CacheStoreError(.permissionDenied, text)
        case CS_ERROR_NOT_FOUND: return CacheStoreError(.notFound, text)
        case CS_ERROR_SYMLINK, CS_ERROR_NOT_REGULAR: return CacheStoreError(.unsafeFile, text)
        default: return CacheStoreError(.io, text)
        }
    }

    /// Maps an SQLite result code (primary or extended) to an error.
    static func sqlite(_ rc: Int32, _ message: String) -> CacheStoreError {
        switch rc & 0xFF {
        case SQLITE_FULL: return CacheStoreError(.diskFull, message)
        case SQLITE_CORRUPT, SQLITE_NOTADB: return CacheStoreError(.corruptIndex, message)
        case SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH: return CacheStoreError(.permissionDenied, message)
        case SQLITE_BUSY, SQLITE_LOCKED: return CacheStoreError(.busy, message)
        case SQLITE_NOTFOUND: return CacheStoreError(.notFound, message)
        default: return CacheStoreError(.io, message)
        }
    }
}
