import Foundation
import Testing
import CacheStore
import CacheTestSupport

/// `dlcache get` (a real process each time) on a cache directory that cannot be used normally: a namespace or
/// index set to mode 000 (run as `nobody`: root ignores modes), a full disk, a write-ahead log deleted under a
/// running process. Every get must succeed — from what is stored when it can be read, else from the network,
/// uncached — and a fetching command never fails because of the cache.
@Suite(.serialized) struct UnusableCacheCommandTests {
    static let canRunAsNobody = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs the built dlcache (as uid/gid 65534 when `asNobody`); exit status, stdout, stderr. Waits without
    /// blocking a thread of the cooperative pool (other tests' tasks keep running), killed after 60 s.
    static func run(_ args: [String], directory: URL, asNobody: Bool = false) async throws -> (status: Int32, out: Data, err: String) {
        let binary = try #require(ExecutableTests.binary)
        let command = asNobody
            ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + args
            : [binary.path] + args
        let outcome = try await ChildProcess.run(
            command, environment: ["DLCACHE_DIR": directory.path, "HOME": directory.path, "TMPDIR": "/tmp"],
            timeout: .seconds(60))
        return (outcome.status, outcome.stdout, outcome.errorOutput)
    }

    func newDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-unusable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        chmod(dir.path, 0o755)
        return dir
    }

    @Test(.enabled(if: canRunAsNobody && ExecutableTests.binary != nil, "needs root, setpriv and the built dlcache"),
          arguments: ["default", "default/index.sqlite"])
    func aNamespaceOrIndexOfMode000NeverFailsADownload(target: String) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "the document")
        let dir = try newDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = origin.url("/doc").absoluteString
        #expect(try await Self.run(["get", url], directory: dir).status == 0)
        #expect(chmod(dir.path, 0o755) == 0)
        #expect(chmod(dir.appendingPathComponent(target).path, 0) == 0)
        for _ in 0..<2 {
            let result = try await Self.run(["get", url], directory: dir, asNobody: true)
            #expect(result.status == 0, "\(result.err)")
            #expect(String(decoding: result.out, as: UTF8.self) == "the document")
        }
        #expect(try await origin.hits("/doc").total == 3, "the unusable cache is bypassed, not served from")
    }

    @Test(.enabled(if: TestMounts.canMountTmpfs && ExecutableTests.binary != nil, "needs permission to mount a tmpfs and the built dlcache"))
    func aFullDiskServesWhatIsStoredAndDeliversNewResponsesUncached() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let dir = try newDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir.path]))
        defer { _ = TestMounts.run(["umount", "-l", dir.path]) }
        for i in 0..<4 {
            try await origin.configure(path: "/stored\(i)", headers: [("Cache-Control", "max-age=600")],
                                       body: String(repeating: "\(i)", count: 400_000))
            #expect(try await Self.run(["get", origin.url("/stored\(i)").absoluteString], directory: dir).status == 0)
        }
        let filler = dir.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        if let handle = try? FileHandle(forWritingTo: filler) {
            let chunk = Data(count: 64 << 10)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            try? handle.close()
        }
        for i in 0..<4 {
            let result = try await Self.run(["get", origin.url("/stored\(i)").absoluteString], directory: dir)
            #expect(result.status == 0, "\(result.err)")
            #expect(result.out == Data(String(repeating: "\(i)", count: 400_000).utf8))
            #expect(try await origin.hits("/stored\(i)").total == 1, "served from what is stored")
        }
        let fresh = try await Self.run(["get", origin.url("/size/1500000").absoluteString], directory: dir)
        #expect(fresh.status == 0, "\(fresh.err)")
        #expect(fresh.out.count == 1_500_000)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "needs the built dlcache"))
    func aWriteAheadLogDeletedUnderARunningProcessNeverFailsADownload() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "the document")
        let dir = try newDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = origin.url("/doc").absoluteString
        #expect(try await Self.run(["get", url], directory: dir).status == 0)
        // This test process keeps the namespace open and writes, then the WAL disappears.
        let running = try CacheStore(directory: dir)
        defer { running.close() }
        try running.store(Data(count: 100_000), metadata: Data(), for: StoreKey(primary: "other"))
        try FileManager.default.removeItem(at: dir.appendingPathComponent("default/index.sqlite-wal"))
        for _ in 0..<2 {
            let result = try await Self.run(["get", url], directory: dir)
            #expect(result.status == 0, "\(result.err)")
            #expect(String(decoding: result.out, as: UTF8.self) == "the document")
        }
    }
}
