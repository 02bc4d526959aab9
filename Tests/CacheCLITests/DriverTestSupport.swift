import Foundation
import Synchronization
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// One parsed answer line of the driver.
struct DriverAnswer {
    let object: [String: Any]
    let raw: String

    init(_ line: String) throws {
        raw = line
        object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                              "not a JSON object: \(line)")
    }

    var id: Any? { object["id"] }
    var stringID: String? { object["id"] as? String }
    var status: Int? { object["status"] as? Int }
    var statusText: String? { object["statusText"] as? String }
    var body: String? { object["body"] as? String }
    var error: String? { object["error"] as? String }
    var headerPairs: [[String]] { (object["headers"] as? [[String]]) ?? [] }

    /// Every value of header `name` (case-insensitive), in order.
    func header(_ name: String) -> [String] {
        headerPairs.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }
}

/// Records what the driver writes; checks that every write is exactly one whole line ending in `\n`.
final class DriverOutputCapture: Sendable {
    private let state = Mutex<(lines: [String], allWhole: Bool)>(([], true))

    var sink: @Sendable (Data) -> Void {
        { [self] data in
            let text = String(decoding: data, as: UTF8.self)
            let whole = text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1
            self.state.withLock { state in
                state.lines.append(String(text.dropLast()))
                if !whole { state.allWhole = false }
            }
        }
    }

    /// The lines written so far, in order.
    var lines: [String] { state.withLock { $0.lines } }
    /// Whether every write was one complete line.
    var allWritesWereWholeLines: Bool { state.withLock { $0.allWhole } }
}

/// An in-process driver session against the loopback origin, with a fixed clock and a temp cache directory.
final class DriverHarness: Sendable {
    let origin: OriginServer
    let clock: FixedClock
    let directory: URL
    let session: DriverSession
    let capture = DriverOutputCapture()
    private let input: AsyncStream<String>.Continuation
    private let serving: Task<Void, Never>

    init(mode: CacheMode = .private, options: DriverSessionOptions = DriverSessionOptions(),
         inMemoryBodyLimit: Int? = nil, configure: (inout DownloadCache.Configuration) -> Void = { _ in }) async throws {
        origin = try await OriginServer.start()
        // A whole second: Date survives the metadata's seconds-since-1970 round trip exactly, so a resident time
        // of 40 s reads 40, not 39.9999999 (floored to 39 in Age).
        clock = FixedClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-driver-tests-\(UUID().uuidString)", isDirectory: true)
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.mode = mode
        configuration.now = clock.now
        configuration.log = { _ in }
        if let inMemoryBodyLimit { configuration.inMemoryBodyLimit = inMemoryBodyLimit }
        configure(&configuration)
        let cache = try DownloadCache(configuration: configuration)
        let session = DriverSession(cache: cache, options: options, write: capture.sink)
        self.session = session
        let (stream, continuation) = AsyncStream<String>.makeStream()
        input = continuation
        serving = Task { await session.serve(stream) }
    }

    /// `{"id": id, "method": method, "url": <origin>/path, "headers": headers, "body": body}` as one line
    /// (plus `"bodyFile": true` when `bodyFile`).
    func requestLine(id: Any, path: String, method: String = "GET", headers: [[String]] = [], body: String? = nil,
                     bodyFile: Bool = false) -> String {
        var object: [String: Any] = ["id": id, "method": method, "url": origin.url(path).absoluteString,
                                     "headers": headers, "body": body ?? NSNull()]
        if bodyFile { object["bodyFile"] = true }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Feeds one raw input line to the driver.
    func send(_ line: String) { input.yield(line) }

    /// Feeds a request line for `path`.
    func send(id: Any, path: String, method: String = "GET", headers: [[String]] = [], body: String? = nil) {
        send(requestLine(id: id, path: path, method: method, headers: headers, body: body))
    }

    /// Waits (polling every 10 ms, at most `timeout` seconds) until at least `count` answers were written.
    ///
    /// The default is generous: at the start of a full parallel run on 2 cores, dozens of tests block the
    /// cooperative pool in `OriginServer.init` (a synchronous wait for python's LISTENING line), and an in-process
    /// session's first answer was seen to wait more than 60 s for a thread.
    /// - Throws: when they did not arrive in time.
    @discardableResult
    func waitForAnswers(_ count: Int, timeout: TimeInterval = 180) async throws -> [DriverAnswer] {
        let deadline = Date().addingTimeInterval(timeout)
        while capture.lines.count < count && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let lines = capture.lines
        try #require(lines.count >= count, "only \(lines.count) of \(count) answers arrived: \(lines)")
        return try lines.map(DriverAnswer.init)
    }

    /// Sends one request and waits for its answer (the answers so far must be exactly the earlier ones).
    func roundTrip(id: Any, path: String, method: String = "GET", headers: [[String]] = [],
                   body: String? = nil) async throws -> DriverAnswer {
        let before = capture.lines.count
        send(id: id, path: path, method: method, headers: headers, body: body)
        let answers = try await waitForAnswers(before + 1)
        return answers[before]
    }

    /// Closes the input and waits until the session has answered everything and returned.
    func closeInput() async {
        input.finish()
        await serving.value
    }

    /// Closes the input, stops the origin and removes the cache directory.
    func tearDown() async {
        await closeInput()
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh driver harness and always tears it down.
func withDriver(mode: CacheMode = .private, options: DriverSessionOptions = DriverSessionOptions(),
                inMemoryBodyLimit: Int? = nil, configure: (inout DownloadCache.Configuration) -> Void = { _ in },
                _ body: (DriverHarness) async throws -> Void) async throws {
    let harness = try await DriverHarness(mode: mode, options: options, inMemoryBodyLimit: inMemoryBodyLimit,
                                    configure: configure)
    do {
        try await body(harness)
    } catch {
        await harness.tearDown()
        throw error
    }
    await harness.tearDown()
}
