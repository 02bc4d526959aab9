import CacheStore
import CacheSystem
import Foundation
import Synchronization

/// A directory of this process in the system temporary directory, `<prefix>XXXXXX` made with `mkdtemp` on first
/// use (mode 0700, opened without following a link and checked to be a directory of this user with no access for
/// others), holding files named `<filePrefix>…`; deleted with everything in it by ``remove()`` or `deinit`.
///
/// A process killed before it removes its directory (SIGKILL, a crash, the second-signal exit) leaves it behind,
/// so the directory is held with an exclusive `flock` while it exists and, once that lock is held, marked with
/// the empty file ``lockedMarker``; the first creation by each instance removes the marked directories of its
/// prefix whose lock no live process holds (``removeStale(prefix:filePrefix:in:now:)``). A directory whose lock
/// could not be taken is never marked, so no sweep takes it for a dead one.
package final class PrivateDirectory: Sendable {
    /// Seconds a directory of the prefix must have been unchanged before a sweep may remove it even when no
    /// process holds its lock: a margin for `flock` emulations that do not see other machines' locks.
    package static let staleAge: Double = 60
    /// At most this many marked directories of the prefix owned by this user are examined by one sweep.
    package static let sweepLimit = 256
    /// At most this many names of the parent directory are read by one sweep.
    package static let listingLimit = 100_000
    /// The file an owner creates in its directory once it holds the directory's lock.
    package static let lockedMarker = ".dlcache-locked"

    /// Why the directory could not be made.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var description: String
    }

    private struct State {
        /// The directory's path and its descriptor (holding its `flock`); nil when none is made.
        var made: (path: String, fd: Int32)?
        var swept = false
    }

    /// How the names of the files this directory holds begin; a sweep deletes only those (and the marker).
    package let filePrefix: String
    private let prefix: String
    private let parent: String?
    private let clock: @Sendable () -> Double
    private let state = Mutex(State())

    /// - Parameters:
    ///   - prefix: the directory's name before mkdtemp's six random characters.
    ///   - filePrefix: how the names of the files put in it begin (``createFile(named:)`` is given such names).
    ///   - parent: where the directory is made; nil means the system temporary directory
    ///     (`PlatformIntegration.temporaryDirectory(environment:)`).
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

    /// The directory's path, created now (after a sweep of stale ones, the first time) when it does not exist
    /// yet, in ``safeParent(_:)`` of the configured parent.
    /// - Throws: ``Failure`` saying why the directory cannot be made (no safe parent, mkdtemp's error, or what was
    ///   found there).
    package func path() throws(Failure) -> String {
        let held = state.withLock { state -> String? in
            guard let made = state.made else { return nil }
            // Still the directory held (a name deleted and replaced, by a link or anything else, is not).
            if Self.name(made.path, in: cs_current_directory(), isTheDirectory: made.fd) { return made.path }
            _ = cs_close(made.fd)
            state.made = nil
            return nil
        }
        if let held { return held }
        let parent = try Self.safeParent(self.parent ?? PlatformIntegration.temporaryDirectory(environment: ProcessInfo.processInfo.environment))
        let sweeps = state.withLock { state -> Bool in
            defer { state.swept = true }
            return !state.swept
        }
        // Outside the lock: a sweep lists the parent directory, which may be large.
        if sweeps { Self.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent, now: clock()) }
        return try state.withLock { (state: inout State) throws(Failure) -> String in
            if let made = state.made { return made.path }  // made by another caller meanwhile
            let made = try Self.make(prefix: prefix, in: parent)
            state.made = made
            return made.path
        }
    }

    /// `parent` with its links resolved, when no other user can rename or replace anything on its way — every
    /// directory from `/` down to it is this user's or root's, and writable by others only with the sticky bit (as
    /// `/tmp` is) — else `/tmp` when that is so. Under a directory another user controls, the name of a private
    /// directory (and of every file in it) could be swapped for theirs between a check and a use, and a path handed
    /// to a caller could then lead to their bytes.
    /// - Throws: ``Failure`` naming the directory refused when neither is safe.
    static func safeParent(_ parent: String) throws(Failure) -> String {
        if let resolved = resolvedIfSafe(parent) { return resolved }
        if let resolved = resolvedIfSafe("/tmp") { return resolved }
        throw Failure(description: "\(parent) can be changed by another user (a directory on its way is not owned by "
                      + "this user or root, or is writable by others without the sticky bit): no private files are made there")
    }

    /// `path` with every link resolved (`realpath`), or nil when that fails or a directory on the way is unsafe.
    private static func resolvedIfSafe(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        let resolved = String(cString: pointer)
        free(pointer)
        guard resolved.hasPrefix("/") else { return nil }
        var prefix = ""
        for component in [""] + resolved.split(separator: "/").map(String.init) {
            prefix = component.isEmpty ? "/" : (prefix == "/" ? "/" : prefix + "/") + component
            var info = cs_file_info()
            guard cs_stat_path(prefix, 0, &info) == 0, info.kind == CS_KIND_DIRECTORY.rawValue,
                  info.owner == cs_user_id() || info.owner == 0,
                  info.permissions & 0o022 == 0 || info.permissions & 0o1000 != 0 else { return nil }
        }
        return resolved
    }

    /// Creates the new file `name` (mode 0600, no link followed) inside the directory, relative to its held
    /// descriptor (so a name swapped in the parent meanwhile is never written through), making the directory
    /// first when needed; returns its path and a descriptor open for writing (the caller closes it).
    /// - Throws: ``Failure`` when the directory cannot be made or the file cannot be created.
    package func createFile(named name: String) throws(Failure) -> (path: String, fd: Int32) {
        let directory = try path()
        let fd = state.withLock { state -> Int32 in
            guard let made = state.made else { return -1 }
            return cs_open_file_at(made.fd, name, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
        }
        guard fd >= 0 else {
            throw Failure(description: "cannot create \(directory)/\(name): \(ErrorWords.systemMessage(Int(cs_errno())))")
        }
        return (directory + "/" + name, fd)
    }

    /// Makes `<parent>/<prefix>XXXXXX`, opens it (no link followed), checks it, locks it and marks it locked.
    private static func make(prefix: String, in parent: String) throws(Failure) -> (path: String, fd: Int32) {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard cs_make_private_directory(parent, prefix, &buffer, buffer.count) == 0 else {
            throw Failure(description: "cannot create a private directory in \(parent): \(ErrorWords.systemMessage(Int(cs_errno())))")
        }
        let path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let name = (path as NSString).lastPathComponent
        let parentFD = cs_open_directory(parent)
        guard parentFD >= 0 else {
            let reason = ErrorWords.systemMessage(Int(cs_errno()))
            _ = rmdir(path)
            throw Failure(description: "cannot open \(parent): \(reason)")
        }
        defer { _ = cs_close(parentFD) }
        let fd = cs_open_directory_at(parentFD, name)
        var info = cs_file_info()
        guard fd >= 0, cs_stat_fd(fd, &info) == 0, info.kind == CS_KIND_DIRECTORY.rawValue,
              info.owner == cs_user_id(), info.permissions & 0o077 == 0 else {
            if fd >= 0 { _ = cs_close(fd) }
            _ = cs_remove_directory_at(parentFD, name)
            throw Failure(description: "\(path) is not the private directory mkdtemp made")
        }
        // Held until remove(); marked only once held, so a directory whose lock failed is never swept.
        if cs_lock(fd, CS_LOCK_EXCLUSIVE, 0) == 0 { mark(fd) }
        return (path, fd)
    }

    /// Creates ``lockedMarker`` in the directory `fd` (nothing when it is there already).
    private static func mark(_ fd: Int32) {
        let marker = cs_open_file_at(fd, lockedMarker, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
        if marker >= 0 { _ = cs_close(marker) }
    }

    /// Whether `name` in `parentFD` (or a path, with `cs_current_directory()`) names, without following a link,
    /// the very directory open as `fd` (same device and inode).
    private static func name(_ name: String, in parentFD: Int32, isTheDirectory fd: Int32) -> Bool {
        var named = cs_file_info()
        var held = cs_file_info()
        return cs_stat_at(parentFD, name, &named) == 0 && named.kind == CS_KIND_DIRECTORY.rawValue
            && cs_stat_fd(fd, &held) == 0 && named.device == held.device && named.inode == held.inode
    }

    /// Deletes the directory and its contents (nothing when it was never created), then releases its lock. The
    /// files are deleted through the directory's descriptor, so a name swapped for a link since is not followed.
    package func remove() {
        guard let made = state.withLock({ state -> (path: String, fd: Int32)? in
            defer { state.made = nil }
            return state.made
        }) else { return }
        Self.removeContents(of: made.fd) { _ in true }
        let parentFD = cs_open_directory((made.path as NSString).deletingLastPathComponent)
        if parentFD >= 0 {
            let name = (made.path as NSString).lastPathComponent
            if Self.name(name, in: parentFD, isTheDirectory: made.fd) { _ = cs_remove_directory_at(parentFD, name) }
            _ = cs_close(parentFD)
        }
        _ = cs_close(made.fd)
    }

    /// Unlinks the entries of the directory `fd` (at most ``listingLimit``) that `deleting` accepts and that are
    /// not directories (a symbolic link itself, never what it points to).
    private static func removeContents(of fd: Int32, _ deleting: (String) -> Bool) {
        guard let listing = cs_listing_open_at(fd, ".") else { return }
        var names: [String] = []
        while names.count < listingLimit, let next = cs_listing_next(listing) { names.append(String(cString: next)) }
        cs_listing_close(listing)
        for name in names where deleting(name) {
            var info = cs_file_info()
            guard cs_stat_at(fd, name, &info) == 0, info.kind != CS_KIND_DIRECTORY.rawValue else { continue }
            _ = cs_unlink_at(fd, name)
        }
    }

    /// Removes the directories `<prefix>XXXXXX` (six letters or digits, as mkdtemp makes them) in `parent` that a
    /// process of this user left behind: a directory (not a symbolic link) owned by this user with no access for
    /// others, marked with ``lockedMarker``, unchanged for ``staleAge`` seconds before `now` (seconds since 1970),
    /// whose exclusive `flock` can be taken at once (a live owner holds it; the kernel releases it when the owner
    /// dies). Inside, only entries whose names begin with `filePrefix` and that are not directories are deleted (a
    /// symbolic link itself, never what it points to), then the marker, and the directory only when that leaves it empty:
    /// nothing this library did not name is touched. Reads at most ``listingLimit`` names of `parent` and examines
    /// at most ``sweepLimit`` directories of this user.
    /// - Returns: how many directories were removed; 0 when `parent` cannot be listed.
    @discardableResult
    package static func removeStale(prefix: String, filePrefix: String, in parent: String, now: Double) -> Int {
        let parentFD = cs_open_directory(parent)
        guard parentFD >= 0 else { return 0 }
        defer { _ = cs_close(parentFD) }
        guard let listing = cs_listing_open_at(parentFD, ".") else { return 0 }
        var candidates: [(name: String, info: cs_file_info)] = []
        var read = 0
        while read < listingLimit, candidates.count < sweepLimit, let next = cs_listing_next(listing) {
            read += 1
            let name = String(cString: next)
            var info = cs_file_info()
            var marker = cs_file_info()
            guard isMkdtempName(name, prefix: prefix), cs_stat_at(parentFD, name, &info) == 0,
                  info.kind == CS_KIND_DIRECTORY.rawValue, info.owner == cs_user_id(),
                  info.permissions & 0o077 == 0,
                  cs_stat_at(parentFD, name + "/" + lockedMarker, &marker) == 0,
                  marker.kind == CS_KIND_REGULAR.rawValue else { continue }
            candidates.append((name, info))
        }
        cs_listing_close(listing)
        var removed = 0
        for candidate in candidates where removeIfStale(candidate.name, candidate.info, in: parentFD,
                                                         filePrefix: filePrefix, now: now) {
            removed += 1
        }
        return removed
    }

    /// Whether `name` is `prefix` followed by exactly six ASCII letters or digits.
    static func isMkdtempName(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let suffix = name.utf8.dropFirst(prefix.utf8.count)
        return suffix.count == 6 && suffix.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    /// ``removeStale(prefix:filePrefix:in:now:)`` for the directory `name` inside `parentFD`, which `named` (its
    /// lstat) says is a 0700 directory of this user.
    private static func removeIfStale(_ name: String, _ named: cs_file_info, in parentFD: Int32, filePrefix: String,
                                      now: Double) -> Bool {
        guard Double(max(named.modified_ns, named.changed_ns)) / 1e9 < now - staleAge else { return false }
        let fd = cs_open_directory_at(parentFD, name)
        guard fd >= 0 else { return false }
        defer { _ = cs_close(fd) }
        var opened = cs_file_info()
        var marker = cs_file_info()
        guard cs_stat_fd(fd, &opened) == 0, opened.device == named.device, opened.inode == named.inode,
              cs_stat_at(fd, lockedMarker, &marker) == 0, marker.kind == CS_KIND_REGULAR.rawValue,
              cs_lock(fd, CS_LOCK_EXCLUSIVE, 0) == 0 else { return false }
        removeContents(of: fd) { $0.hasPrefix(filePrefix) }
        // The name must still be the directory emptied (a process of this user may have renamed another there).
        guard self.name(name, in: parentFD, isTheDirectory: fd) else { return false }
        _ = cs_unlink_at(fd, lockedMarker)
        if cs_remove_directory_at(parentFD, name) == 0 { return true }
        // Not empty (files the library did not name): marked again, so a later sweep still finds it.
        mark(fd)
        return false
    }
}
