@testable import DownloadCache
import CacheSystem
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The private directories (`dlcache-driver-XXXXXX`, `dlcache-downloads-XXXXXX`) are made only in a temporary
/// directory no other user can rename things in — this user's or root's, and writable by others only with the
/// sticky bit — else in `/tmp`; and their files are created relative to the held directory, never by a path.
@Suite struct PrivateFilesAreNeverMadeWhereAnotherUserCanSwapThemTests {
    func makeParent(mode: mode_t) throws -> URL {
        let parent = URL(fileURLWithPath: "/tmp").appendingPathComponent("dlcache-parent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        #expect(chmod(parent.path, mode) == 0)
        return parent
    }

    @Test func aParentOthersCanWriteWithoutTheStickyBitIsNotUsed() throws {
        let parent = try makeParent(mode: 0o777)
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = PrivateDirectory(prefix: "dlcache-driver-", filePrefix: "body-", parent: parent.path)
        defer { directory.remove() }
        let path = try directory.path()
        #expect(path.hasPrefix("/tmp/dlcache-driver-"), "\(path)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty)
    }

    @Test(arguments: [mode_t(0o1777), 0o700, 0o755])
    func aParentOnlyThisUserCanRenameInIsUsed(mode: mode_t) throws {
        let parent = try makeParent(mode: mode)
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = PrivateDirectory(prefix: "dlcache-driver-", filePrefix: "body-", parent: parent.path)
        defer { directory.remove() }
        let path = try directory.path()
        #expect(path.hasPrefix(parent.path + "/dlcache-driver-"), "\(path)")
    }

    /// As root: a parent owned by another user (`nobody`) is refused even when its mode looks private.
    @Test(.enabled(if: geteuid() == 0, "needs root to give a directory to another user"))
    func aParentOwnedByAnotherUserIsNotUsed() throws {
        let parent = try makeParent(mode: 0o755)
        defer { try? FileManager.default.removeItem(at: parent) }
        #expect(chown(parent.path, 65534, 65534) == 0)
        #expect((try? PrivateDirectory.safeParent(parent.path)) == "/tmp")
    }

    /// As root: a directory of this user inside one another user owns is refused too — that user can rename the
    /// directory on the way; a link (which may be anyone's) is resolved, and the path handed out is the target's.
    @Test(.enabled(if: geteuid() == 0, "needs root to give a directory to another user"))
    func everyDirectoryOnTheWayIsChecked() throws {
        let hostile = try makeParent(mode: 0o755)
        defer { try? FileManager.default.removeItem(at: hostile) }
        let inside = hostile.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: false)
        #expect(chown(hostile.path, 65534, 65534) == 0)
        #expect((try? PrivateDirectory.safeParent(inside.path)) == "/tmp")

        let safe = try makeParent(mode: 0o700)
        defer { try? FileManager.default.removeItem(at: safe) }
        let link = URL(fileURLWithPath: "/tmp/dlcache-link-\(UUID().uuidString)")
        #expect(symlink(safe.path, link.path) == 0)
        defer { unlink(link.path) }
        #expect(lchown(link.path, 65534, 65534) == 0)
        #expect((try? PrivateDirectory.safeParent(link.path)) == safe.path)
    }

    /// The file a body is written to is created inside the directory held open: a name swapped for a link in the
    /// parent after the directory was made is not followed.
    @Test func aFileIsCreatedInTheHeldDirectoryEvenWhenItsNameIsSwapped() throws {
        let parent = try makeParent(mode: 0o700)
        defer { try? FileManager.default.removeItem(at: parent) }
        let victim = try makeParent(mode: 0o700)
        defer { try? FileManager.default.removeItem(at: victim) }
        let directory = PrivateDirectory(prefix: "dlcache-driver-", filePrefix: "body-", parent: parent.path)
        defer { directory.remove() }
        let path = try directory.path()
        let moved = parent.appendingPathComponent("moved").path
        #expect(rename(path, moved) == 0)
        #expect(symlink(victim.path, path) == 0)
        // path() sees the name no longer holds its directory and makes a new one; a file made through the old
        // name would land in the victim.
        let created = try directory.createFile(named: "body-1")
        close(created.fd)
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty)
        #expect(created.path != path + "/body-1")
        #expect(FileManager.default.fileExists(atPath: created.path))
        try? FileManager.default.removeItem(atPath: moved)
        unlink(path)
    }
}
