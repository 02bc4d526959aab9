import Foundation
import Synchronization
import Testing
import CacheTestSupport

/// A running `dlcache driver` process with pipes on stdin/stdout/stderr.
final class DriverProcess: Sendable {
    /// The built `dlcache` executable next to the test bundle (`swift test` builds it), or `$DLCACHE_BINARY`.
    static var binaryURL: URL? {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["DLCACHE_BINARY"], !explicit.isEmpty {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        if let argv0 = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argv0).deletingLastPathComponent().appendingPathComponent("dlcache"))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("dlcache"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    private let child: ChildProcess
    private let lines = Mutex<[String]>([])
    private let stdoutDone = DispatchSemaphore(value: 0)

    /// Launches `dlcache driver <arguments>`.
    /// - Throws: when the binary is missing or cannot be started.
    init(arguments: [String]) throws {
        let binary = try #require(Self.binaryURL, "dlcache binary not found next to the test bundle")
        child = try ChildProcess([binary.path, "driver"] + arguments)
        let handle = child.stdout ?? FileHandle.nullDevice
        let thread = Thread { [self] in
            var splitter = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                splitter.append(chunk)
                while let newline = splitter.firstIndex(of: 0x0A) {
                    let line = String(decoding: splitter[splitter.startIndex..<newline], as: UTF8.self)
                    self.lines.withLock { $0.append(line) }
                    splitter = Data(splitter[splitter.index(after: newline)...])
                }
            }
            self.stdoutDone.signal()
        }
        thread.start()
    }

    /// Writes `line` and a newline to the driver's stdin.
    func send(_ line: String) {
        child.writeToStdin(Data((line + "\n").utf8))
    }

    /// Closes the driver's stdin (end of the session).
    func closeInput() {
        child.closeStdin()
    }

    /// The answer lines read so far.
    var answers: [String] { lines.withLock { $0 } }

    /// Polls (every 10 ms, at most `timeout` seconds) until `count` answer lines were read.
    /// - Throws: when they did not arrive in time.
    ///   The default of 120 s is far above what an answer needs alone: a full parallel test run on 2 cores keeps
    ///   hundreds of tests on the cooperative pool and has delayed first answers by over a minute.
    func waitForAnswers(_ count: Int, timeout: TimeInterval = 120) async throws -> [DriverAnswer] {
        let deadline = Date().addingTimeInterval(timeout)
        while answers.count < count && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        try #require(answers.count >= count, "only \(answers.count) of \(count) answers: \(answers)")
        return try answers.map(DriverAnswer.init)
    }

    /// Waits (at most `timeout` seconds, then kills the process) for stdout to close and the process to exit.
    /// - Returns: the exit status, or `nil` when the process had to be killed.
    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        if stdoutDone.wait(timeout: .now() + timeout) == .timedOut {
            child.killAndReap()
            return nil
        }
        guard let ended = child.wait(timeout: .seconds(timeout)) else {
            child.killAndReap()
            return nil
        }
        return ended.status
    }
}

/// `dlcache driver` through the real binary and pipes (skipped when the binary was not built).
@Suite(.serialized, .enabled(if: DriverProcess.binaryURL != nil, "dlcache binary not built next to the tests"))
struct DriverBinaryTests {
    static func line(id: Any, url: URL) -> String {
        let object: [String: Any] = ["id": id, "method": "GET", "url": url.absoluteString, "headers": [[String]](),
                                     "body": NSNull()]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Eight slow requests to one origin in flight do not hold back a ninth, fast one to the same origin (issue 6:
    /// a slow request must not block the next line). The library's default of 6 per origin would make the fast
    /// answer wait for a slow one; the driver runs up to `--max-connections` (default 64) per origin.
    @Test func slowRequestsToOneOriginDoNotHoldBackTheNextLine() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-driver-bin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for i in 0..<8 { try await origin.configure(path: "/slow\(i)", body: "slow", delay: 2.5) }
        try await origin.configure(path: "/fast", body: "fast")

        let driver = try DriverProcess(arguments: ["--cache-dir", directory.path])
        for i in 0..<8 { driver.send(Self.line(id: "slow\(i)", url: origin.url("/slow\(i)"))) }
        driver.send(Self.line(id: "fast", url: origin.url("/fast")))
        let first = try await driver.waitForAnswers(1)
        #expect(first[0].stringID == "fast", "first answer: \(driver.answers)")
        driver.closeInput()
        #expect(driver.waitForExit() == 0)
        #expect(try driver.answers.map(DriverAnswer.init).count == 9)
    }

    @Test func maxConnectionsIsValidated() throws {
        let driver = try DriverProcess(arguments: ["--max-connections", "0"])
        driver.closeInput()
        #expect(driver.waitForExit() == 64)
    }

    @Test func sessionThroughPipesAnswersAsLinesArriveAndExitsZeroAfterStdinCloses() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-driver-bin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], body: "cached")
        try await origin.configure(path: "/slow", body: "slow", delay: 1.5)
        try await origin.configure(path: "/fast", body: "fast")

        let driver = try DriverProcess(arguments: ["--cache-dir", directory.path, "--namespace", "drv"])
        // A conformance suite sends one request and waits for its answer before the next: answers must not wait
        // for stdin to close.
        driver.send(Self.line(id: 1, url: origin.url("/c")))
        let first = try await driver.waitForAnswers(1)
        #expect(first[0].id as? Int == 1)
        #expect(first[0].body == "cached")

        driver.send(Self.line(id: "slow", url: origin.url("/slow")))
        driver.send(Self.line(id: "fast", url: origin.url("/fast")))
        driver.send("{broken")
        driver.closeInput()
        let status = driver.waitForExit()
        #expect(status == 0)
        let answers = try driver.answers.map(DriverAnswer.init)
        #expect(answers.count == 4)
        let order = answers.map { $0.stringID ?? ($0.id is NSNull ? "null" : "other") }
        #expect(order.last == "slow")
        #expect(order.firstIndex(of: "fast").map { $0 < 3 } == true)
        #expect(answers.contains { $0.id is NSNull && $0.error != nil })

        // A second process on the same cache: the stored response is served with Age, no new origin request.
        let again = try DriverProcess(arguments: ["--cache-dir", directory.path, "--namespace", "drv"])
        again.send(Self.line(id: 2, url: origin.url("/c")))
        again.closeInput()
        #expect(again.waitForExit() == 0)
        let hit = try #require(try await again.waitForAnswers(1).first)
        #expect(hit.body == "cached")
        #expect(hit.header("Age").count == 1)
        #expect(try await origin.hits("/c").total == 1)
    }

    @Test func badModeIsAUsageError() throws {
        let driver = try DriverProcess(arguments: ["--mode", "public"])
        driver.closeInput()
        #expect(driver.waitForExit() == 64)
        #expect(driver.answers.isEmpty)
    }
}
