import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A running `Tests/Fixtures/origin.py`: the programmable loopback origin for integration tests.
///
/// Launched with `python3 -u`; it binds 127.0.0.1 on a free port and exits when its standard input closes,
/// so ``stop()`` (or deinit, or the test process dying) ends it.
public final class OriginServer: Sendable {
    /// Hit counters of one path, as counted by the origin.
    public struct Hits: Sendable, Hashable, Decodable {
        /// All requests to the path (any method).
        public var total: Int
        /// Requests that carried If-None-Match or If-Modified-Since.
        public var conditional: Int
        /// Requests answered 304 Not Modified.
        public var notModified: Int
        /// Requests per method, e.g. `["GET": 2, "HEAD": 1]`.
        public var methods: [String: Int]
        /// GET requests that carried a `Range` header.
        public var ranged: Int
        /// Requests answered 206 Partial Content.
        public var partial: Int

        enum CodingKeys: String, CodingKey {
            case total, conditional, methods, ranged, partial
            case notModified = "not_modified"
        }

        /// No hits at all.
        public static let zero = Hits(total: 0, conditional: 0, notModified: 0, methods: [:])

        /// Creates a counter value.
        public init(total: Int, conditional: Int, notModified: Int, methods: [String: Int] = [:],
                    ranged: Int = 0, partial: Int = 0) {
            self.total = total
            self.conditional = conditional
            self.notModified = notModified
            self.methods = methods
            self.ranged = ranged
            self.partial = partial
        }
    }

    /// Why the origin could not be started or driven.
    public struct OriginError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, in words.
        public var description: String
    }

    /// The TCP port the origin listens on (127.0.0.1).
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// `https://127.0.0.1:<tls-port>` serving the same paths when started with a TLS directory, else nil.
    public let tlsBaseURL: URL?
    private let child: ChildProcess
    private let session: URLSession

    /// The origin script: `<package root>/Tests/Fixtures/origin.py`, found from this source file's path.
    public static var scriptURL: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/origin.py")
    }

    /// Starts the origin and waits (at most `timeout` seconds) for its `LISTENING <port>` line.
    /// - Parameter tlsDirectory: when set, the origin also serves HTTPS (``tlsURL(_:)``) with a CA made there at
    ///   start (`ca.pem` in that directory trusts it) and a certificate for 127.0.0.1 and localhost.
    /// - Throws: `OriginError` when python3 or the script is missing or no port was announced in time.
    public init(timeout: TimeInterval = 10, tlsDirectory: URL? = nil) throws {
        let script = OriginServer.scriptURL
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw OriginError(description: "origin script not found at \(script.path)")
        }
        // posix_spawn, not Foundation's Process (see ChildProcess: Process.run can crash on Linux).
        let tlsArguments = tlsDirectory.map { ["--tls", $0.path] } ?? []
        let child: ChildProcess
        do {
            child = try ChildProcess(["/usr/bin/env", "python3", "-u", script.path] + tlsArguments)
        } catch {
            throw OriginError(description: "cannot launch python3: \(error)")
        }
        let ports = OriginServer.readPort(from: child.stdout ?? FileHandle.nullDevice,
                                          timeout: timeout)
        guard let port = ports?.plain, tlsDirectory == nil || ports?.tls != nil else {
            child.stop()
            throw OriginError(description: "origin did not print LISTENING within \(timeout) s")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        self.child = child
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        self.tlsBaseURL = ports?.tls.flatMap { URL(string: "https://127.0.0.1:\($0)") }
        self.session = URLSession(configuration: configuration)
    }

    /// Starts the origin from an async context without holding a cooperative thread: python's start-up (and
    /// the wait for its `LISTENING` line) runs on a thread of its own, so many tests starting origins at once
    /// cannot starve the 2-thread cooperative pool that every other test's task runs on.
    /// - Throws: `OriginError`, as ``init(timeout:)``.
    /// At most ``concurrentStarts`` origins start at once, so a whole suite starting together does not make every
    /// python wait past its `timeout` on a loaded machine.
    public static func start(timeout: TimeInterval = 30) async throws -> OriginServer {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                startSlots.wait()
                defer { startSlots.signal() }
                continuation.resume(with: Result { try OriginServer(timeout: timeout) })
            }
            thread.start()
        }
    }

    /// How many origins ``start(timeout:)`` launches at the same time.
    public static let concurrentStarts = 4
    private static let startSlots = DispatchSemaphore(value: concurrentStarts)

    deinit {
        stop()
    }

    /// Reads stdout until a `LISTENING <port> [TLS <port>]` line, bounded by `timeout` seconds.
    private static func readPort(from handle: FileHandle, timeout: TimeInterval) -> (plain: Int, tls: Int?)? {
        let found = Mutex<(plain: Int, tls: Int?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let reader = Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                if let text = String(data: buffer, encoding: .utf8), let line = text.split(separator: "\n").first,
                   line.hasPrefix("LISTENING "), text.contains("\n") {
                    let words = line.split(separator: " ")
                    if words.count >= 2, let plain = Int(words[1]) {
                        let tls = words.count >= 4 && words[2] == "TLS" ? Int(words[3]) : nil
                        found.withLock { $0 = (plain, tls) }
                    }
                    break
                }
            }
            done.signal()
        }
        reader.start()
        _ = done.wait(timeout: .now() + timeout)
        return found.withLock { $0 }
    }

    /// Stops the origin by closing its standard input (idempotent); waits briefly for it to exit.
    public func stop() {
        child.stop()
    }

    /// The absolute `https://` URL of `path` on this origin's TLS port (nil when started without TLS).
    public func tlsURL(_ path: String) -> URL? {
        tlsBaseURL.flatMap { URL(string: $0.absoluteString + path) }
    }

    /// The absolute URL of `path` (e.g. `"/a"`) on this origin.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path) ?? baseURL
    }

    /// How the origin answers a satisfiable single `Range` of a configured path (`origin.py`'s `range_mode`).
    public enum RangeMode: String, Sendable {
        /// A 206 with the asked bytes and a correct `Content-Range` (the default).
        case honor
        /// A 200 with the whole body, as an origin without range support.
        case ignore
        /// A 206 starting `rangeEarly` bytes (default 1,024) before the asked first byte.
        case early
        /// A 206 whose `Content-Range` total is 1,000 bytes too large.
        case wrongTotal = "wrong_total"
        /// A 206 without `Content-Range`.
        case noContentRange = "no_content_range"
        /// A correct 206 without `Content-Length` (ended by closing) whose body goes on past the range.
        case overrun
    }

    /// Programs the behaviour of `path`; every argument left `nil` is left out of the config.
    /// - Parameters: see `origin.py`'s docstring: `size` is in bytes, `delay` and `chunkDelay` (pause after
    ///   each 64 KiB chunk of a generated body) in seconds; `reason` replaces the status line's reason phrase;
    ///   `noContentLength` sends the body without `Content-Length`, ended by closing the connection; `interim`
    ///   lists 1xx interim responses (status, header fields) sent before the final response;
    ///   `notModifiedHeaders` answers every conditional GET/HEAD with a 304 carrying exactly these lines;
    ///   `etags` makes the n-th request (from 0) see `etags[min(n, count - 1)]` and a generated body shifted by
    ///   that index (a changed representation); `rate` paces a generated body (bytes per second); `endless`
    ///   sends a generated chunked body that never ends; `rangeMode` / `rangeEarly` pick a buggy answer to Range;
    ///   `claimedLength` announces that `Content-Length` (bytes) whatever is sent, then closes after the body;
    ///   `holdAfter` stops a generated body after that many bytes until ``release(path:)`` (or 60 s).
    /// - Throws: `OriginError` when the control request fails.
    public func configure(path: String, status: Int = 200, headers: [(String, String)] = [], body: String? = nil,
                          size: Int? = nil, etag: String? = nil, lastModified: String? = nil, delay: Double? = nil,
                          truncate: Bool = false, drop: Bool = false, gzip: Bool = false, redirect: String? = nil,
                          echoHeader: String? = nil, chunkDelay: Double? = nil, reason: String? = nil,
                          noContentLength: Bool = false, interim: [(Int, [(String, String)])] = [],
                          notModifiedHeaders: [(String, String)]? = nil, etags: [String] = [], rate: Int? = nil,
                          endless: Bool = false, rangeMode: RangeMode = .honor, rangeEarly: Int? = nil,
                          claimedLength: Int64? = nil, holdAfter: Int? = nil) async throws {
        var config: [String: Any] = ["path": path, "status": status, "headers": headers.map { [$0.0, $0.1] }]
        if let body { config["body"] = body }
        if let size { config["size"] = size }
        if let etag { config["etag"] = etag }
        if let lastModified { config["last_modified"] = lastModified }
        if let delay { config["delay"] = delay }
        if truncate { config["truncate"] = true }
        if drop { config["drop"] = true }
        if gzip { config["gzip"] = true }
        if let redirect { config["redirect"] = redirect }
        if let echoHeader { config["echo_header"] = echoHeader }
        if let chunkDelay { config["chunk_delay"] = chunkDelay }
        if let reason { config["reason"] = reason }
        if noContentLength { config["no_content_length"] = true }
        if !interim.isEmpty { config["interim"] = interim.map { [$0.0, $0.1.map { [$0.0, $0.1] }] as [Any] } }
        if let notModifiedHeaders { config["not_modified_headers"] = notModifiedHeaders.map { [$0.0, $0.1] } }
        if !etags.isEmpty { config["etags"] = etags }
        if let rate { config["rate"] = rate }
        if endless { config["endless"] = true }
        if rangeMode != .honor { config["range_mode"] = rangeMode.rawValue }
        if let rangeEarly { config["range_early"] = rangeEarly }
        if let claimedLength { config["claimed_length"] = claimedLength }
        if let holdAfter { config["hold_after"] = holdAfter }
        let data = try JSONSerialization.data(withJSONObject: config)
        _ = try await control("POST", "/__config", body: data)
    }

    /// The origin's hit counters for `path` (zero when never requested).
    /// - Throws: `OriginError` when the control request fails or the answer is not JSON.
    public func hits(_ path: String) async throws -> Hits {
        let data = try await control("GET", "/__hits", body: nil)
        let all = try JSONDecoder().decode([String: Hits].self, from: data)
        return all[path] ?? .zero
    }

    /// Makes the origin's `Date` headers read real time + `offset` seconds, so a test's ``FixedClock`` and the
    /// origin agree after the test moved its clock.
    /// - Throws: `OriginError` when the control request fails.
    public func setClockOffset(_ offset: TimeInterval) async throws {
        let data = try JSONSerialization.data(withJSONObject: ["offset": offset])
        _ = try await control("POST", "/__clock", body: data)
    }

    /// Lets every response of `path` held by `configure(holdAfter:)` send the rest of its body; later responses
    /// of `path` are not held until it is configured again.
    /// - Throws: `OriginError` when the control request fails.
    public func release(path: String) async throws {
        let data = try JSONSerialization.data(withJSONObject: ["path": path])
        _ = try await control("POST", "/__release", body: data)
    }

    /// Forgets every path config, every counter and the clock offset.
    /// - Throws: `OriginError` when the control request fails.
    public func reset() async throws {
        _ = try await control("POST", "/__reset", body: Data())
    }

    private func control(_ method: String, _ path: String, body: Data?) async throws -> Data {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 10
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw OriginError(description: "control \(method) \(path) failed: \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}
