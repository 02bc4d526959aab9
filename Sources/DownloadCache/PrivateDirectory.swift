import CacheSystem
import Foundation
import Synchronization

/// A directory of this process in the system temporary directory, `<prefix>XXXXXX` made with `mkdtemp` on first
/// use (mode 0700, checked to be a directory of this user with no access for others), holding files named
/// `<filePrefix>…`; deleted with everything in it by ``remove()`` or `deinit`.
///
/// A process killed before it removes its directory (SIGKILL, a crash, the second-signal exit) leaves it behind,
/// so the directory is held with an exclusive `flock` while it exists, and the first creation by each instance
/// removes the directories of its prefix that no live process holds (``removeStale(prefix:filePrefix:in:now:)``).
package final class PrivateDirectory: Sendable {
    /// Seconds a directory of the prefix must have been unchanged before a sweep may remove it when no process
    /// holds it: covers the instant between `mkdtemp` and the owner's lock, and directories of processes that
    /// could not lock (a file system without `flock`, whose sweeps cannot lock either and so remove nothing).
    package static let staleAge: Double = 60
    /// At most this many directories of the prefix are examined by one sweep.
    package static let sweepLimit = 256

    private struct State {
        var path: String?
        /// The directory's descriptor, holding its `flock`; -1 when none is open.
        var lock: Int32 = -1
        var swept = false
    }

    private let prefix: String
    private let filePrefix: String
    private let parent: String?
    private let clock: @Sendable () -> Double
    private let state = Mutex(State())

    /// - Parameters:
    ///   - prefix: the directory's name before mkdtemp's six random characters.
    ///   - filePrefix: how the names of the files this directory holds begin; a sweep deletes only those.
    ///   - parent: where the directory is made; nil means the system temporary directory (`TMPDIR`).
    ///   - clock: seconds since 1970, for the sweep's ``staleAge``.
    package init(prefix: String, filePrefix: String, parent: String? = nil,
                 clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.prefix = prefix
        self.filePrefix = filePrefix
        self.parent = parent
        self.clock = clock
    }

    deinit {
        remove()
    }

    /// The directory, created now (after a sweep of stale ones, the first time) when it does not exist yet; nil
    /// when it cannot be created.
    package func url() -> URL? {
        path().map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    /// ``url()`` as a path.
    package func path() -> String? {
        state.withLock { state -> String? in
            if let existing = state.path, cs_access(existing, 1) == 0 { return existing }
            if state.lock >= 0 {
                _ = cs_close(state.lock)
                state.lock = -1
            }
            let parent = self.parent ?? FileManager.default.temporaryDirectory.standardizedFileURL.path
            if !state.swept {
                state.swept = true
                Self.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent, now: clock())
            }
            var buffer = [CChar](repeating: 0, count: 4096)
            guard cs_make_private_directory(parent, prefix, &buffer, buffer.count) == 0 else { return nil }
            let made = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fd = cs_open_directory(made)
            var info = cs_file_info()
            guard fd >= 0, cs_stat_fd(fd, &info) == 0, info.kind == CS_KIND_DIRECTORY.rawValue,
                  info.owner == cs_user_id(), info.permissions & 0o077 == 0 else {
                if fd >= 0 { _ = cs_close(fd) }
                _ = rmdir(made)
                return nil
            }
            // Held until remove(): a sweep by another process (or instance) sees the directory is in use. Where
            // the file system refuses flock the directory is used unlocked; sweeps there cannot lock it either.
            _ = cs_lock(fd, CS_LOCK_EXCLUSIVE, 0)
            state.path = made
            state.lock = fd
            return made
        }
    }

    /// Deletes the directory and its contents (nothing when it was never created), then releases its lock.
    package func remove() {
        let (existing, lock) = state.withLock { state -> (String?, Int32) in
            defer { state.path = nil; state.lock = -1 }
            return (state.path, state.lock)
        }
        if let existing { try? FileManager.default.removeItem(atPath: existing) }
        if lock >= 0 { _ = cs_close(lock) }
    }

    /// Removes the directories `<prefix>XXXXXX` (six letters or digits, as mkdtemp makes them) in `parent` that a
    /// process of this user left behind: a directory (not a symbolic link) owned by this user with no access for
    /// others, unchanged for ``staleAge`` seconds before `now` (seconds since 1970), whose exclusive `flock` can be
    /// taken at once (a live owner holds it; the kernel releases it when the owner dies). Inside, only regular
    /// files and symbolic links whose names begin with `filePrefix` are deleted (a link itself, never what it
    /// points to), and the directory only when that leaves it empty: nothing this library did not name is
    /// touched. Examines at most ``sweepLimit`` directories.
    /// - Returns: how many directories were removed; 0 when `parent` cannot be listed.
    @discardableResult
    package static func removeStale(prefix: String, filePrefix: String, in parent: String, now: Double) -> Int {
        let parentFD = cs_open_directory(parent)
        guard parentFD >= 0 else { return 0 }
        defer { _ = cs_close(parentFD) }
        guard let listing = cs_listing_open_at(parentFD, ".") else { return 0 }
        var candidates: [String] = []
        while candidates.count < sweepLimit, let next = cs_listing_next(listing) {
            let name = String(cString: next)
            if isMkdtempName(name, prefix: prefix) { candidates.append(name) }
        }
        cs_listing_close(listing)
        return candidates.reduce(0) { $0 + (removeIfStale($1, in: parentFD, filePrefix: filePrefix, now: now) ? 1 : 0) }
    }

    /// Whether `name` is `prefix` followed by exactly six ASCII letters or digits.
    static func isMkdtempName(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let suffix = name.utf8.dropFirst(prefix.utf8.count)
        return suffix.count == 6 && suffix.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// ``removeStale(prefix:filePrefix:in:now:)`` for one directory `name` inside `parentFD`.
    private static func removeIfStale(_ name: String, in parentFD: Int32, filePrefix: String, now: Double) -> Bool {
        var named = cs_file_info()
        guard cs_stat_at(parentFD, name, &named) == 0, named.kind == CS_KIND_DIRECTORY.rawValue,
              named.owner == cs_user_id(), named.permissions & 0o077 == 0,
              Double(max(named.modified_ns, named.changed_ns)) / 1e9 < now - staleAge else { return false }
        let fd = cs_open_directory_at(parentFD, name)
        guard fd >= 0 else { return false }
        defer { _ = cs_close(fd) }
        var opened = cs_file_info()
        guard cs_stat_fd(fd, &opened) == 0, opened.device == named.device, opened.inode == named.inode,
              cs_lock(fd, CS_LOCK_EXCLUSIVE, 0) == 0 else { return false }
        if let listing = cs_listing_open_at(fd, ".") {
            var names: [String] = []
            while names.count < 100_000, let next = cs_listing_next(listing) { names.append(String(cString: next)) }
            cs_listing_close(listing)
            for entry in names where entry.hasPrefix(filePrefix) {
                var info = cs_file_info()
                guard cs_stat_at(fd, entry, &info) == 0,
                      info.kind == CS_KIND_REGULAR.rawValue || info.kind == CS_KIND_SYMLINK.rawValue else { continue }
                _ = cs_unlink_at(fd, entry)
            }
        }
        return cs_remove_directory_at(parentFD, name) == 0
    }
}
