import Foundation
import Testing
import CacheTestSupport

/// Runs the built `dlcache` executable (next to the test bundle) to check what only a real process shows:
/// exit codes through `exit()`, and that a closed stdout pipe ends the run quietly instead of killing it (SIGPIPE).
@Suite(.serialized) struct ExecutableTests {
    /// `<bin dir>/dlcache`, where `<bin dir>` holds the running test bundle; nil when not built.
    static var binary: URL? {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("dlcache")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs the binary with `args`; returns its exit status and stdout (read up to `readLimit` bytes, then closed).
    static func run(_ args: [String], env: [String: String], readLimit: Int? = nil) throws -> (status: Int32, out: Data) {
        let binary = try #require(binary)
        let child = try ChildProcess([binary.path] + args, environment: env)
        var data = Data()
        if let readLimit {
            data = (try child.stdout?.read(upToCount: readLimit)) ?? Data()
            try child.stdout?.close()
        } else {
            data = child.stdout?.readDataToEndOfFile() ?? Data()
        }
        guard let ended = child.wait(timeout: .seconds(30)) else {
            child.killAndReap()
            return (-1, data)
        }
        return (ended.status, data)
    }

    @Test(.enabled(if: binary != nil, "dlcache is not built next to the test bundle"))
    func exitCodesThroughTheRealProcess() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-exe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        let version = try Self.run(["--version"], env: env)
        #expect(version.status == 0)
        #expect(String(decoding: version.out, as: UTF8.self).hasPrefix("dlcache "))
        #expect(try Self.run(["get"], env: env).status == 64)
        #expect(try Self.run(["get", "--policy", "dont-load", "http://127.0.0.1:9/x"], env: env).status == 1)
    }

    @Test(.enabled(if: binary != nil, "dlcache is not built next to the test bundle"))
    func closedStdoutDoesNotKillTheProcess() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-exe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        let url = origin.url("/size/4000000").absoluteString
        let result = try Self.run(["get", url], env: env, readLimit: 10)
        #expect(result.out.count == 10)
        #expect(result.status != 141 && result.status != SIGPIPE)
        // A reader that went away is a write error on the output, as for curl: exit 23, the download stopped.
        #expect(result.status == 23)
        // What was received is kept: a second run gets the body whole (resumed or fetched again).
        let whole = try Self.run(["get", url], env: env)
        #expect(whole.status == 0)
        #expect(whole.out.count == 4_000_000)
    }

    /// A normal exit is a clean shutdown: every opened cache is closed before `exit`, so no live-session marker is
    /// left in `sessions/` and the next open runs no unclean-shutdown recovery (checked over several runs against a slow
    /// origin used to leave the marker). Each run also sees the previous run's stored response.
    @Test(.enabled(if: binary != nil, "dlcache is not built next to the test bundle"))
    func normalExitLeavesNoSessionMarker() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "no-cache"), ("ETag", "\"v1\"")],
                                   body: "slow body", etag: "\"v1\"", delay: 0.3)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-exe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        let sessions = dir.appendingPathComponent("default/sessions")
        for _ in 0..<6 {
            let result = try Self.run(["get", origin.url("/slow").absoluteString], env: env)
            #expect(result.status == 0)
            #expect(String(decoding: result.out, as: UTF8.self) == "slow body")
            let markers = (try? FileManager.default.contentsOfDirectory(atPath: sessions.path)) ?? []
            #expect(markers.isEmpty, "session markers left after a normal exit: \(markers)")
        }
        // One full download, then only conditional requests answered 304 (the stored response was kept each time).
        let hits = try await origin.hits("/slow")
        #expect(hits.total == 6)
        #expect(hits.notModified == 5)
    }
    /// A `get` answered from the cache in a fresh process leaves the namespace's files as they were (no session
    /// marker, no `-wal` / `-shm`), and its hit and access time are still in the cache once it has exited.
    @Test(.enabled(if: binary != nil, "dlcache is not built next to the test bundle"))
    func aCachedGetLeavesTheNamespaceFilesAsTheyWere() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/fresh", headers: [("Cache-Control", "max-age=3600")], body: "fresh body")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-exe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        let url = origin.url("/fresh").absoluteString
        #expect(try Self.run(["get", url], env: env).status == 0)
        let namespace = dir.appendingPathComponent("default").path
        func files() -> Set<String> {
            var result = Set<String>()
            if let walker = FileManager.default.enumerator(atPath: namespace) {
                while let path = walker.nextObject() as? String { result.insert(path) }
            }
            return result
        }
        let before = files()
        #expect(before.contains("index.sqlite"))
        for round in 1...2 {
            let hit = try Self.run(["get", url], env: env)
            #expect(hit.status == 0)
            #expect(String(decoding: hit.out, as: UTF8.self) == "fresh body")
            #expect(files() == before, "round \(round): \(files().symmetricDifference(before).sorted())")
        }
        #expect(try await origin.hits("/fresh").total == 1)
        let stats = try Self.run(["stats"], env: env)
        let text = String(decoding: stats.out, as: UTF8.self)
        #expect(text.contains("hits:       2 (0 memory, 2 disk"), "\(text)")
        #expect(text.contains("misses:     1 "), "\(text)")
    }
}

