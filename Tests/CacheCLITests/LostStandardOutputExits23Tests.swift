import CacheTestSupport
import Foundation
import Synchronization
import Testing
import DownloadCache
@testable import CacheCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command whose standard output could not be written (the reader went away, the disk is full) does not claim
/// success: it exits 23 with one error line, as curl does, and the driver stops reading requests and cancels the
/// ones in flight instead of fetching for a reader that is gone.
@Suite struct LostStandardOutputExits23Tests {
    static func run(_ arguments: [String], stdoutError: Int32, directory: URL) async -> (code: Int32, err: String) {
        let capture = CapturedConsole(stdoutError: stdoutError)
        let environment = CommandEnvironment(console: capture.console,
                                             variables: ["DLCACHE_DIR": directory.path, "HOME": "/nonexistent"],
                                             currentDirectory: directory)
        let code = await CommandLineTool.run(arguments: ["dlcache"] + arguments, environment: environment)
        return (code, capture.stderr)
    }

    /// A fresh directory for one test's cache and input (the caller removes it).
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes one request line per URL (ids 0, 1, …) to `directory/lines.jsonl`; returns that file.
    static func writeRequestLines(_ urls: [URL], in directory: URL) throws -> URL {
        var lines = ""
        for (i, url) in urls.enumerated() { lines += #"{"id":\#(i),"url":"\#(url.absoluteString)"}"# + "\n" }
        let input = directory.appendingPathComponent("lines.jsonl")
        try Data(lines.utf8).write(to: input)
        return input
    }

    @Test(arguments: [["--version"], ["help"], ["ls", "--json"], ["stats"]])
    func aCommandWhoseOutputFailsExits23(arguments: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        await (try DownloadCache(configuration: configuration)).close()  // a cache for `ls` and `stats` to read
        let full = await Self.run(arguments, stdoutError: ENOSPC, directory: directory)
        #expect(full.code == 23, "\(arguments): \(full.err)")
        #expect(full.err.contains("cannot write to standard output: No space left on device"), "\(full.err)")
        let fine = await Self.run(arguments, stdoutError: 0, directory: directory)
        #expect(fine.code == 0, "\(arguments): \(fine.err)")
    }

    /// In process: the first answer's write fails; the session returns although its input stays open, having
    /// asked the origin for few of the lines it was given.
    @Test func aDriverSessionStopsWhenAnAnswerCannotBeWritten() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let total = 40
        for i in 0..<total {
            try await origin.configure(path: "/slow\(i)", headers: [("Cache-Control", "max-age=600")], body: "x",
                                       delay: 0.3)
        }
        var options = DriverSessionOptions()
        options.maxInFlight = 2
        let attempts = Atomic<Int>(0)
        let session = DriverSession(cache: cache, options: options, write: { (_: Data) -> Int32 in
            attempts.add(1, ordering: .relaxed)
            return EPIPE
        })
        let (input, feed) = AsyncStream<String>.makeStream()
        for i in 0..<total {
            feed.yield(#"{"id":\#(i),"url":"\#(origin.url("/slow\(i)").absoluteString)"}"#)
        }
        // The input is never finished: only the failed write can end the session.
        let serving = Task { await session.serve(input) }
        let deadline = ContinuousClock.now + .seconds(60)
        while session.outputFailure == 0 || attempts.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let ended = await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask { await serving.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(60)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        feed.finish()
        await cache.close()
        #expect(ended, "the session went on after its output failed")
        #expect(session.outputFailure == EPIPE)
        #expect(attempts.load(ordering: .relaxed) == 1, "lines were written after the failure")
        var asked = 0
        for i in 0..<total { asked += try await origin.hits("/slow\(i)").total }
        #expect(asked < 10, "\(asked) of \(total) requests reached the origin after the output failed")
    }

    /// A limit freed while lines still hold slots (a session that stopped early) is no crash: libdispatch traps
    /// when a semaphore is freed below the value it was made with.
    @Test func anInFlightLimitFreedWithSlotsTakenIsFine() {
        var limit: DriverInFlightLimit? = DriverInFlightLimit(slots: 4)
        for _ in 0..<3 { limit?.acquire() }
        limit = nil
        #expect(limit == nil)
    }

    /// The real binary writing to a full disk with more lines than `--max-in-flight` read ahead: exit 23 with the
    /// error line (the limit's semaphore, freed with slots still taken, crashed the process with SIGILL).
    @Test(.enabled(if: DriverProcess.binaryURL != nil, "dlcache binary not built next to the tests"))
    func aDriverWritingToAFullDiskExits23() async throws {
        let binary = try #require(DriverProcess.binaryURL)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "no-store")], body: "x", delay: 0.2)
        let input = try Self.writeRequestLines((0..<100).map { origin.url("/slow?\($0)") }, in: directory)
        for _ in 0..<3 {
            let run = try await ChildProcess.run(["/bin/sh", "-c", "exec \"$0\" driver --cache-dir \"$1\" < \"$2\" > /dev/full",
                                                  binary.path, directory.appendingPathComponent("cache").path, input.path],
                                                 timeout: .seconds(120))
            #expect(run.status == 23, "\(run.termination) \(run.errorOutput)")
            #expect(run.errorOutput.contains("cannot write to standard output: No space left on device"), "\(run.errorOutput)")
        }
    }

    /// The real binary behind `| head -c 10`: exit 23, soon, without fetching every line.
    @Test(.enabled(if: DriverProcess.binaryURL != nil, "dlcache binary not built next to the tests"))
    func aDriverPipedIntoHeadExits23WithoutFetchingEverything() async throws {
        let binary = try #require(DriverProcess.binaryURL)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let total = 60
        for i in 0..<total {
            try await origin.configure(path: "/slow\(i)", headers: [("Cache-Control", "max-age=600")], body: "x",
                                       delay: 0.5)
        }
        let input = try Self.writeRequestLines((0..<total).map { origin.url("/slow\($0)") }, in: directory)
        let script = "\"$0\" driver --cache-dir \"$1\" --max-in-flight 4 < \"$2\" | head -c 10 > /dev/null; "
            + "echo \"status ${PIPESTATUS[0]}\""
        let run = try await ChildProcess.run(["/bin/bash", "-c", script, binary.path,
                                              directory.appendingPathComponent("cache").path, input.path],
                                             timeout: .seconds(120))
        #expect(run.output.contains("status 23"), "\(run.output) \(run.errorOutput)")
        #expect(run.errorOutput.contains("cannot write to standard output: Broken pipe"), "\(run.errorOutput)")
        var asked = 0
        for i in 0..<total { asked += try await origin.hits("/slow\(i)").total }
        #expect(asked < 20, "\(asked) of \(total) requests reached the origin after head went away")
    }
}
