@testable import DownloadCache
import CacheSystem
import CacheTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process killed before it removes its private temporary directory (`dlcache-downloads-XXXXXX`,
/// `dlcache-driver-XXXXXX`) leaves it behind; the next instance that makes one removes the directories marked as
/// locked that no live process holds, and nothing else: not a held one, an unmarked one (its owner could not lock
/// it), a young one, a symbolic link, another user's, one with other permissions, a name mkdtemp did not make, or
/// a file the library did not name.
@Suite struct PrivateDirectoriesLeftByKilledProcessesAreRemovedTests {
    let prefix = "dlcache-downloads-"
    let filePrefix = "download-"

    func makeParent() throws -> URL {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-private-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        return parent
    }

    /// A directory as a dead process leaves it: `parent/name`, mode 0700, with `files` in it and, when `marked`,
    /// the marker its owner made once it held the lock.
    @discardableResult
    func leftover(_ parent: URL, _ name: String, files: [String] = ["download-1", "download-2"],
                  marked: Bool = true) throws -> URL {
        let directory = parent.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        for file in files { try Data("partial body".utf8).write(to: directory.appendingPathComponent(file)) }
        if marked { try Data().write(to: directory.appendingPathComponent(PrivateDirectory.lockedMarker)) }
        return directory
    }

    func exists(_ url: URL) -> Bool {
        var info = cs_file_info()
        return cs_stat_path(url.path, 0, &info) == 0
    }

    var later: Double { Date().timeIntervalSince1970 + PrivateDirectory.staleAge + 5 }

    @Test func anUnheldOldDirectoryIsRemovedWithItsFiles() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let left = try leftover(parent, prefix + "Ab3dE9")
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 1)
        #expect(!exists(left))
    }

    @Test func theFirstCreationSweepsAndLaterOnesDoNot() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let first = try leftover(parent, prefix + "aaaaaa")
        let offset = PrivateDirectory.staleAge + 5
        let directory = PrivateDirectory(prefix: prefix, filePrefix: filePrefix, parent: parent.path,
                                         clock: { Date().timeIntervalSince1970 + offset })
        let made = try directory.path()
        #expect(!exists(first), "removed by the first creation")
        #expect(made.hasPrefix(parent.path + "/" + prefix) && exists(URL(fileURLWithPath: made)))
        // Made again after its directory vanished: no second sweep.
        let second = try leftover(parent, prefix + "bbbbbb")
        try FileManager.default.removeItem(atPath: made)
        let again = try directory.path()
        #expect(again != made && exists(second))
        directory.remove()
        #expect(!exists(URL(fileURLWithPath: again)))
    }

    @Test func aDirectoryHeldByALiveInstanceIsKept() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let live = PrivateDirectory(prefix: prefix, filePrefix: filePrefix, parent: parent.path)
        let path = try live.path()
        try Data("in use".utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent("download-x"))
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 0)
        #expect(FileManager.default.fileExists(atPath: path + "/download-x"))
        live.remove()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aDirectoryWhoseOwnerWasKilledIsRemovedOnlyAfterTheKill() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let left = try leftover(parent, prefix + "K1lled")
        // Another process holds the directory's flock, as a live owner does; SIGKILL releases it.
        let holder = try ChildProcess(["/usr/bin/env", "python3", "-c", """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            print("held", flush=True)
            time.sleep(60)
            """, left.path], stdout: .pipe)
        defer { _ = holder.killAndReap() }
        let line = try #require(holder.stdout).readData(ofLength: 5)
        #expect(String(decoding: line, as: UTF8.self) == "held\n")
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 0)
        #expect(exists(left.appendingPathComponent("download-1")))
        _ = holder.killAndReap()
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 1)
        #expect(!exists(left))
    }

    @Test func anUnmarkedDirectoryIsKept() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let left = try leftover(parent, prefix + "n0Mark", marked: false)
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 0)
        #expect(exists(left.appendingPathComponent("download-1")))
    }

    @Test func aMadeDirectoryIsMarkedOnlyOnceLockedAndRemovedThroughItsDescriptor() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = PrivateDirectory(prefix: prefix, filePrefix: filePrefix, parent: parent.path)
        let path = try directory.path()
        #expect(FileManager.default.fileExists(atPath: path + "/" + PrivateDirectory.lockedMarker))
        let created = try directory.createFile(named: filePrefix + "1")
        let file = URL(fileURLWithPath: created.path)
        #expect(file.deletingLastPathComponent().path == path)
        #expect(write(created.fd, "body", 4) == 4)
        close(created.fd)
        // Another descriptor cannot take the lock while the directory lives.
        let other = cs_open_directory(path)
        defer { _ = cs_close(other) }
        #expect(other >= 0 && cs_lock(other, CS_LOCK_EXCLUSIVE, 0) != 0)
        directory.remove()
        #expect(!exists(URL(fileURLWithPath: path)) && !exists(file))
    }

    /// Listing order is the file system's: with eight times the sweep's quota of another user's directories,
    /// ours comes after the first quota's worth in most runs, so counting theirs would leave it.
    @Test(.enabled(if: getuid() == 0, "needs root to make another user's directories"))
    func anotherUsersDirectoriesDoNotUseUpTheSweep() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let ours = try leftover(parent, prefix + "zzzzzz")
        for i in 0..<(PrivateDirectory.sweepLimit * 8) {
            let foreign = try leftover(parent, prefix + String(format: "f%05d", i), files: [])
            #expect(chown(foreign.path, 12_345, 12_345) == 0)
        }
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 1)
        #expect(!exists(ours))
    }

    /// As ``anotherUsersDirectoriesDoNotUseUpTheSweep()``, with unmarked directories of this user.
    @Test func unmarkedDirectoriesDoNotUseUpTheSweep() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let ours = try leftover(parent, prefix + "zzzzzz")
        for i in 0..<(PrivateDirectory.sweepLimit * 8) {
            try leftover(parent, prefix + String(format: "u%05d", i), files: [], marked: false)
        }
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 1)
        #expect(!exists(ours))
    }

    @Test func aDirectoryReplacedByALinkIsNotUsed() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let victim = parent.appendingPathComponent("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let directory = PrivateDirectory(prefix: prefix, filePrefix: filePrefix, parent: parent.path)
        defer { directory.remove() }
        let first = try directory.path()
        try FileManager.default.removeItem(atPath: first)
        try FileManager.default.createSymbolicLink(atPath: first, withDestinationPath: victim.path)
        let second = try directory.path()
        #expect(second != first)
        var info = cs_file_info()
        #expect(cs_stat_at(cs_current_directory(), second, &info) == 0 && info.kind == CS_KIND_DIRECTORY.rawValue)
        directory.remove()
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty)
        #expect(exists(URL(fileURLWithPath: first)), "the link is left alone")
    }

    @Test func aYoungDirectoryIsKept() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let left = try leftover(parent, prefix + "y0ung1")
        let now = Date().timeIntervalSince1970
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: now) == 0)
        #expect(exists(left.appendingPathComponent("download-1")))
    }

    @Test func onlyFilesTheLibraryNamesAreDeleted() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let left = try leftover(parent, prefix + "f0reig", files: ["download-1", "notes.txt"])
        try FileManager.default.createDirectory(at: left.appendingPathComponent("download-dir"),
                                                withIntermediateDirectories: false)
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 0)
        #expect(!exists(left.appendingPathComponent("download-1")))
        #expect(exists(left.appendingPathComponent("notes.txt")) && exists(left.appendingPathComponent("download-dir")))
        #expect(exists(left.appendingPathComponent(PrivateDirectory.lockedMarker)), "marked again for a later sweep")
    }

    @Test func aSymbolicLinkIsNeitherFollowedNorRemoved() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let victim = try leftover(parent, "victim")
        let link = parent.appendingPathComponent(prefix + "L1nked")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        // Inside a real leftover, a link named like a body file goes, and what it points to stays.
        let left = try leftover(parent, prefix + "w1thLn", files: [])
        try FileManager.default.createSymbolicLink(at: left.appendingPathComponent("download-9"),
                                                   withDestinationURL: victim.appendingPathComponent("download-2"))
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 1)
        #expect(exists(link) && !exists(left))
        #expect(exists(victim.appendingPathComponent("download-1")) && exists(victim.appendingPathComponent("download-2")))
    }

    @Test func otherPermissionsOtherOwnersAndOtherNamesAreKept() throws {
        let parent = try makeParent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let open = try leftover(parent, prefix + "0pen00")
        #expect(chmod(open.path, 0o755) == 0)
        let names = [prefix + "tests-\(UUID().uuidString)", prefix + "abc", prefix + "abcdefg", prefix + "ab-de_"]
        for name in names { try leftover(parent, name) }
        var kept = [open] + names.map { parent.appendingPathComponent($0) }
        if getuid() == 0 {
            let foreign = try leftover(parent, prefix + "0ther0")
            #expect(chown(foreign.path, 12_345, 12_345) == 0)
            kept.append(foreign)
        }
        #expect(PrivateDirectory.removeStale(prefix: prefix, filePrefix: filePrefix, in: parent.path, now: later) == 0)
        for directory in kept { #expect(exists(directory.appendingPathComponent("download-1")), "\(directory.path)") }
    }

    @Test func mkdtempNamesAreRecognised() {
        #expect(PrivateDirectory.isMkdtempName("dlcache-driver-aZ09xY", prefix: "dlcache-driver-"))
        #expect(!PrivateDirectory.isMkdtempName("dlcache-driver-aZ09x", prefix: "dlcache-driver-"))
        #expect(!PrivateDirectory.isMkdtempName("dlcache-driver-aZ09xé", prefix: "dlcache-driver-"))
        #expect(!PrivateDirectory.isMkdtempName("dlcache-downloads-aZ09xY", prefix: "dlcache-driver-"))
    }
}
