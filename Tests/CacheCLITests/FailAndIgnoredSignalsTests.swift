import CacheTestSupport
import Foundation
import Testing

/// `get -f` streams a 2xx body as it arrives (an error status is known before its first byte), and a `get`
/// started with SIGINT ignored — as a shell starts a script's background job — is not interrupted by SIGINT.
@Suite(.serialized) struct FailAndIgnoredSignalsTests {
    /// 8 MB, of which the origin sends ``heldAfter`` and holds the rest until released: the output has grown while
    /// the child still runs, however loaded the machine.
    static let size = 8_000_000
    /// The bytes the origin sends before it holds the rest.
    static let heldAfter = 2_000_000

    static func environment(_ directory: URL) -> [String: String] {
        ["DLCACHE_DIR": directory.path, "HOME": directory.path]
    }

    /// The size of `url`'s file, 0 when it does not exist yet.
    static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Polls (20 ms, at most 60 s) until `output` has bytes or `child` has ended; whether the child was still
    /// running, with only part of the body in `output`, when the first bytes were seen.
    static func bytesAppearWhileRunning(_ output: URL, child: ChildProcess) async throws -> Bool {
        for _ in 0..<3_000 {
            let written = size(of: output)
            if written > 0 { return written < Self.size && child.wait(timeout: .zero) == nil }
            if child.wait(timeout: .zero) != nil { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func failWritesA2xxBodyWhileItArrivesAndNothingOfAnError() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-fail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = Self.environment(directory)
        let binary = try #require(ExecutableTests.binary)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("out")
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   holdAfter: Self.heldAfter)
        let child = try ChildProcess([binary.path, "get", "-fsS", origin.url("/big").absoluteString, "-o", output.path],
                                     environment: env, stdout: .discard)
        let streamed = try await Self.bytesAppearWhileRunning(output, child: child)
        try await origin.release(path: "/big")
        #expect(child.wait(timeout: .seconds(60)) == .exited(0))
        #expect(streamed, "the -o file had no bytes until get -f ended")
        #expect(try Data(contentsOf: output) == ResumeAfterInterruptedGetTests.generated(Self.size))

        try await origin.configure(path: "/missing", status: 404, headers: [("Content-Type", "text/plain")],
                                   body: "no such page\n")
        let missing = try await ChildProcess.run([binary.path, "get", "-fsS", origin.url("/missing").absoluteString],
                                                 environment: env)
        #expect(missing.termination == .exited(22))
        #expect(missing.stdout.isEmpty)
        #expect(String(decoding: missing.stderr, as: UTF8.self).contains("HTTP 404"))
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func aGetStartedWithSIGINTIgnoredIsNotInterruptedByIt() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-sigign-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = Self.environment(directory).merging(["PATH": "/usr/bin:/bin"]) { $1 }
        let binary = try #require(ExecutableTests.binary)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("out")
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   holdAfter: Self.heldAfter)
        // sh ignores SIGINT, then execs dlcache (same process), which inherits the ignored disposition.
        let child = try ChildProcess(["/bin/sh", "-c", "trap '' INT; exec \"$0\" \"$@\"", binary.path,
                                      "get", "-sS", origin.url("/big").absoluteString, "-o", output.path],
                                     environment: env, stdout: .discard)
        let running = try await Self.bytesAppearWhileRunning(output, child: child)
        #expect(running, "the download ended before SIGINT could be sent")
        child.send(signal: SIGINT)
        // Still held for a second: a child that SIGINT interrupts ends (exit 130) in it, before the body's end.
        _ = child.wait(timeout: .seconds(1))
        try await origin.release(path: "/big")
        #expect(child.wait(timeout: .seconds(60)) == .exited(0))
        #expect(try Data(contentsOf: output) == ResumeAfterInterruptedGetTests.generated(Self.size))
    }
}
