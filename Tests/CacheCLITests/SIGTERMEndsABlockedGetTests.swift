import Foundation
import Testing
import CacheCLI
import CacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `get -o FIFO` that no process reads blocks in the kernel (opening the FIFO waits for a reader), where the
/// cancellation a SIGTERM starts never reaches it: the process still ends, with 128 + 15, once
/// ``CommandLineTool/signalGraceSeconds`` have passed, instead of ignoring the signal for ever.
@Suite(.serialized) struct SIGTERMEndsABlockedGetTests {
    /// Whether a thread of `pid` waits in the kernel for a FIFO's other end (open) or for room in it (write).
    static func blockedOnTheFIFO(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? ""
            return wchan.contains("wait_for_partner") || wchan.contains("pipe_write")
        }
    }

    #if os(Linux)
    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func sigtermEndsAGetBlockedOnAFIFOWithoutAReader() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "for the fifo")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("out.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let binary = try #require(ExecutableTests.binary)
        let env = ["DLCACHE_DIR": directory.appendingPathComponent("cache").path, "HOME": directory.path]
        let child = try ChildProcess([binary.path, "get", "-sS", origin.url("/doc").absoluteString, "-o", fifo.path],
                                     environment: env, stdout: .discard)
        defer { child.killAndReap() }

        // Wait (at most 1,500 polls of 20 ms) until the get sits in the kernel on the FIFO.
        var blocked = false
        for _ in 0..<1_500 where child.termination == nil {
            if Self.blockedOnTheFIFO(child.pid) {
                blocked = true
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(blocked, "the get never blocked on the FIFO (ended: \(String(describing: child.termination)))")

        child.send(signal: SIGTERM)
        // The bound: the grace period plus a minute for a loaded machine; without the grace it never ends.
        let ended = child.wait(timeout: .seconds(CommandLineTool.signalGraceSeconds + 60))
        #expect(ended == .exited(128 + SIGTERM), "\(String(describing: ended))")
    }
    #endif
}
