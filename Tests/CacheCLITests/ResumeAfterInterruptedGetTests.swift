import CacheStore
import CacheTestSupport
import Foundation
import HTTPCacheSemantics
import Testing

/// A `dlcache get` process that is killed (SIGKILL) or interrupted (SIGINT) mid-download leaves its verified bytes
/// as a partial entry; the next `get` asks the origin only for the rest (`Range` + `If-Range`) and writes the
/// whole body.
@Suite(.serialized) struct ResumeAfterInterruptedGetTests {
    /// 40 MB, of which the origin sends ``heldAfter`` and holds the rest: the get is signalled while its transfer
    /// runs, however loaded the machine. The resuming get's configuration ends the hold and is not held.
    static let size = 40_000_000
    /// The bytes the origin sends before it holds the rest: past the first checkpoint (4 MiB), short of the second.
    static let heldAfter = 6 << 20

    /// origin.py's generated body: byte i is i % 256.
    static func generated(_ count: Int) -> Data {
        let cycle = Data((0..<256).map { UInt8($0) })
        var data = Data(capacity: count + 256)
        while data.count < count { data.append(cycle) }
        return data.prefix(count)
    }

    /// The partial entries of the namespace at `directory`, read through a read-only store (nothing written).
    static func partials(_ directory: URL) -> [PartialEntryInfo] {
        var configuration = CacheStore.Configuration(directory: directory, namespace: "default")
        configuration.readOnly = true
        configuration.logger = { _ in }
        guard let store = try? CacheStore(configuration: configuration) else { return [] }
        defer { store.close() }
        return store.allPartials()
    }

    /// Starts `get` of the held body and waits (every 20 ms, at most 60 s) until at least `bytes` are kept.
    static func startedGet(_ origin: OriginServer, env: [String: String], output: URL,
                           keptAtLeast bytes: Int64) async throws -> (ChildProcess, Int64) {
        let binary = try #require(ExecutableTests.binary)
        let child = try ChildProcess([binary.path, "get", origin.url("/big").absoluteString, "-o", output.path],
                                     environment: env, stdout: .discard)
        let directory = URL(fileURLWithPath: try #require(env["DLCACHE_DIR"]))
        for _ in 0..<3_000 {
            if let kept = partials(directory).first?.verifiedBytes, kept >= bytes { return (child, kept) }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = child.killAndReap()
        Issue.record("no partial of \(bytes) bytes appeared")
        return (child, 0)
    }

    /// The second `get`, unpaced: exit 0, the whole body, one ranged request answered 206.
    static func expectResumed(_ origin: OriginServer, env: [String: String], output: URL) async throws {
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size, etag: "\"v1\"")
        let binary = try #require(ExecutableTests.binary)
        let child = try ChildProcess([binary.path, "get", origin.url("/big").absoluteString, "-o", output.path],
                                     environment: env, stdout: .discard)
        #expect(child.wait(timeout: .seconds(60)) == .exited(0))
        #expect(try Data(contentsOf: output) == generated(size))
        let hits = try await origin.hits("/big")
        #expect(hits.total == 2 && hits.ranged == 1 && hits.partial == 1, "\(hits)")
        #expect(partials(URL(fileURLWithPath: env["DLCACHE_DIR"] ?? "/")).isEmpty)
    }

    static func environment(_ directory: URL) -> [String: String] {
        ["DLCACHE_DIR": directory.path, "HOME": directory.path]
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func aKilledGetIsResumedFromItsLastCheckpoint() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = Self.environment(directory)
        let output = directory.appendingPathComponent("out")
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", holdAfter: Self.heldAfter)
        // A checkpoint comes every 4 MiB: wait for the first, then SIGKILL (no chance to clean up).
        let (child, kept) = try await Self.startedGet(origin, env: env, output: output, keptAtLeast: 4 << 20)
        child.send(signal: SIGKILL)
        #expect(child.wait(timeout: .seconds(30)) == .signalled(SIGKILL))
        #expect(kept >= 4 << 20 && kept < Int64(Self.size))
        // `ls` and `info` show what is kept and what the next get will ask for.
        let last = try #require(Self.partials(directory).first?.verifiedBytes)
        let listing = try ExecutableTests.run(["ls"], env: env)
        #expect(listing.status == 0)
        let listed = String(decoding: listing.out, as: UTF8.self)
        #expect(listed.contains("\(last)/\(Self.size)") && listed.contains("partial"), "\(listed)")
        let info = try ExecutableTests.run(["info", origin.url("/big").absoluteString], env: env)
        #expect(info.status == 0)
        #expect(String(decoding: info.out, as: UTF8.self).contains("Range: bytes=\(last)-, If-Range: \"v1\""))
        try await Self.expectResumed(origin, env: env, output: output)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func anInterruptedGetCancelsCleanlyAndKeepsEverythingItReceived() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-int-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = Self.environment(directory)
        let output = directory.appendingPathComponent("out")
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", holdAfter: Self.heldAfter)
        let (child, checkpointed) = try await Self.startedGet(origin, env: env, output: output, keptAtLeast: 4 << 20)
        child.send(signal: SIGINT)
        #expect(child.wait(timeout: .seconds(30)) == .exited(130))
        // The cancelled transfer counted every byte it had received, not only the last checkpoint's, and closed
        // the store: no session marker is left.
        let kept = try #require(Self.partials(directory).first)
        #expect(kept.verifiedBytes >= checkpointed && kept.verifiedBytes < Int64(Self.size))
        #expect(!kept.isInProgress)
        let sessions = directory.appendingPathComponent("default/sessions").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: sessions).isEmpty)
        try await Self.expectResumed(origin, env: env, output: output)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func twoSignalsAtOnceKeepAtLeastTheLastCheckpoint() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-int2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = Self.environment(directory)
        let output = directory.appendingPathComponent("out")
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", holdAfter: Self.heldAfter)
        let (child, checkpointed) = try await Self.startedGet(origin, env: env, output: output, keptAtLeast: 4 << 20)
        // `timeout -s INT` signals the child and its process group; an impatient user presses Ctrl-C twice.
        child.send(signal: SIGINT)
        child.send(signal: SIGINT)
        #expect(child.wait(timeout: .seconds(30)) == .exited(130))
        // The second signal exits at once, like a kill: nothing of what was checkpointed is deleted.
        let kept = try #require(Self.partials(directory).first)
        #expect(kept.verifiedBytes >= checkpointed && kept.verifiedBytes < Int64(Self.size))
        try await Self.expectResumed(origin, env: env, output: output)
    }
}
