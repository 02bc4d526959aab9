import Foundation
import Testing
import CacheTestSupport

/// `dlcache get` run as `nobody` on a namespace another user (uid 65533) owns and `nobody` may read but not write:
/// the write open fails (no `sessions/` can be made), and the fallback that reads such a store read-only refuses it
/// too (another user's namespace may hold responses that user planted). Every get goes to the origin.
@Suite(.serialized) struct APlantedNamespaceIsNotServedByTheCommandTests {
    @Test(.enabled(if: UnusableCacheCommandTests.canRunAsNobody && ExecutableTests.binary != nil,
                   "needs root, setpriv and the built dlcache"))
    func anotherUsersReadableNamespaceIsNotServed() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "planted")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-planted-ns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(chmod(dir.path, 0o755) == 0)
        let url = origin.url("/doc").absoluteString
        #expect(try await UnusableCacheCommandTests.run(["get", url], directory: dir).status == 0)
        // Hand the namespace to uid 65533, readable by everyone, without sessions/ (so a writer must create it).
        let namespace = dir.appendingPathComponent("default")
        try? FileManager.default.removeItem(at: namespace.appendingPathComponent("sessions"))
        let paths = [namespace.path] + (FileManager.default.subpaths(atPath: namespace.path) ?? []).map { namespace.path + "/" + $0 }
        for path in paths {
            #expect(lchown(path, 65533, 65533) == 0)
            var info = stat()
            #expect(lstat(path, &info) == 0)
            #expect(chmod(path, (info.st_mode & S_IFMT) == S_IFDIR ? 0o755 : 0o644) == 0)
        }
        try await origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "origin")
        for _ in 0..<2 {
            let result = try await UnusableCacheCommandTests.run(["get", url], directory: dir, asNobody: true)
            #expect(result.status == 0, "\(result.err)")
            #expect(String(decoding: result.out, as: UTF8.self) == "origin", "the planted namespace was served")
        }
        #expect(try await origin.hits("/doc").total == 3)
    }
}
