import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `Tests/Fixtures/hostile_origin.py`: a loopback origin whose responses are the exact bytes a
/// test scripts (status line, header fields, framing, body), and which records every raw request it received.
///
/// Launched with `python3 -u`; it binds 127.0.0.1 on a free port and exits when its standard input closes, so
/// ``stop()`` (or deinit, or the test process dying) ends it. Commands travel over its standard input and
/// output, never over the port under test, so every recorded request came from the code under test.
public final class HostileOrigin: Sendable {
    /// One scripted response: the raw bytes written to the socket and how they are written.
    public struct Response: Sendable {
        /// What the origin does after writing the bytes.
        public enum Then: String, Sendable {
            /// Shut the connection down (FIN).
            case close
            /// Read the next request from the same connection (pipelined bytes count as the next request).
            case keepAlive = "keep-alive"
            /// Write nothing more and keep the connection open until the client closes it.
            case hold
            /// Close with SO_LINGER 0: the client sees a connection reset.
            case reset
        }

        /// The exact bytes written: status line, header lines, blank line, body. Nothing is added.
        public var raw: Data
        /// Seconds slept before the first byte is written; `nil` for none.
        public var delay: Double?
        /// Trickle: `from` (byte offset; `nil` = end of the head) is written at once, then `bytes` at a time
        /// every `interval` seconds. `nil` writes everything at once.
        public var trickle: (from: Int?, bytes: Int, interval: Double)?
        /// What happens after the bytes are written.
        public var then: Then

        /// A response of exactly `raw`.
        public init(raw: Data, delay: Double? = nil, trickle: (from: Int?, bytes: Int, interval: Double)? = nil,
                    then: Then = .close) {
            self.raw = raw
            self.delay = delay
            self.trickle = trickle
            self.then = then
        }

        /// A response of exactly `raw` (ISO Latin-1 text, so every byte 0–255 can be written as one scalar).
        public init(_ raw: String, delay: Double? = nil, trickle: (from: Int?, bytes: Int, interval: Double)? = nil,
                    then: Then = .close) {
            self.init(raw: HostileOrigin.latin1(raw), delay: delay, trickle: trickle, then: then)
        }

        /// A response built from parts: `HTTP/1.1 <status> <reason>`, the `headers` in order as `Name: value`,
        /// a correct `Content-Length` appended when `contentLength` is true, the blank line, then `body`.
        public static func http(status: Int = 200, reason: String = "OK", headers: [(String, String)] = [],
                                body: String = "", contentLength: Bool = true, delay: Double? = nil,
                                trickle: (from: Int?, bytes: Int, interval: Double)? = nil,
                                then: Then = .close) -> Response {
            var head = "HTTP/1.1 \(status) \(reason)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let bodyBytes = HostileOrigin.latin1(body)
            if contentLength { head += "Content-Length: \(bodyBytes.count)\r\n" }
            head += "\r\n"
            return Response(raw: HostileOrigin.latin1(head) + bodyBytes, delay: delay, trickle: trickle, then: then)
        }

        fileprivate var json: [String: Any] {
            var object: [String: Any] = ["raw_b64": raw.base64EncodedString(), "then": then.rawValue]
            if let delay { object["delay"] = delay }
            if let trickle {
                var spec: [String: Any] = ["bytes": trickle.bytes, "interval": trickle.interval]
                if let from = trickle.from { spec["from"] = from }
                object["trickle"] = spec
            }
            return object
        }
    }

    /// One request as the origin received and framed it.
    public struct ReceivedRequest: Sendable, Hashable {
        /// Ordinal of the TCP connection it arrived on (0, 1, ... in accept order).
        public var connection: Int
        /// The request line's method.
        public var method: String
        /// The request line's target (path and query as sent).
        public var target: String
        /// The request line's protocol version, e.g. `HTTP/1.1`.
        public var version: String
        /// The header fields as received (values trimmed), in order, duplicates kept.
        public var headers: [[String]]
        /// Every byte of the request: head and body as read.
        public var raw: Data
        /// The body bytes (chunked framing removed).
        public var body: Data

        /// The values of every field named `name` (case-insensitive), in order.
        public func values(_ name: String) -> [String] {
            headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
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
    private let child: ChildProcess
    private let lines: LineQueue
    private let commandLock = Mutex(())

    /// The origin script: `<package root>/Tests/Fixtures/hostile_origin.py`, found from this source file's path.
    public static var scriptURL: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/hostile_origin.py")
    }

    /// Starts the origin and waits (at most `timeout` seconds) for its `LISTENING <port>` line.
    ///
    /// Launched with posix_spawn rather than Foundation's `Process`, whose `run()` on Linux can crash while the
    /// test process has many descriptors open (swift-corelibs-foundation #5472, not in this toolchain).
    /// - Throws: `OriginError` when python3 or the script is missing or no port was announced in time.
    public init(timeout: TimeInterval = 10) throws {
        let script = HostileOrigin.scriptURL
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw OriginError(description: "hostile origin script not found at \(script.path)")
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(["/usr/bin/env", "python3", "-u", script.path])
        } catch {
            throw OriginError(description: "cannot launch python3: \(error)")
        }
        let lines = LineQueue(reading: child.stdout ?? FileHandle.nullDevice)
        guard let first = lines.next(timeout: timeout), first.hasPrefix("LISTENING "),
              let port = Int(first.dropFirst("LISTENING ".count)) else {
            child.stop()
            throw OriginError(description: "hostile origin did not print LISTENING within \(timeout) s")
        }
        self.child = child
        self.lines = lines
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// Starts an origin like ``init(timeout:)`` without blocking a thread of Swift's cooperative pool while
    /// python starts (slow on a loaded machine): prefer it in async tests.
    /// - Throws: `OriginError`, as ``init(timeout:)``.
    public static func start(timeout: TimeInterval = 10) async throws -> HostileOrigin {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try HostileOrigin(timeout: timeout) })
            }
        }
    }

    deinit {
        stop()
    }

    /// Stops the origin by closing its standard input (idempotent); waits briefly for it to exit.
    public func stop() {
        child.stop()
    }

    /// The absolute URL of `target` (e.g. `"/a?x=1"`) on this origin.
    public func url(_ target: String) -> URL {
        URL(string: baseURL.absoluteString + target) ?? baseURL
    }

    /// `host:port` of this origin, as a Host header for its URLs says it.
    public var authority: String { "127.0.0.1:\(port)" }

    /// Scripts the answers for `target`: `responses` in order, the last one repeating. A target without `?`
    /// also matches that path with any query. Replaces an earlier script of the same target.
    /// - Throws: `OriginError` when the origin rejects the command or does not answer.
    public func script(_ target: String, _ responses: [Response]) throws {
        _ = try command(["op": "script", "target": target, "responses": responses.map(\.json)])
    }

    /// Scripts one response for `target`, used for every request to it.
    /// - Throws: `OriginError` when the origin rejects the command or does not answer.
    public func script(_ target: String, _ response: Response) throws {
        try script(target, [response])
    }

    /// Every request received so far, in arrival order; only those whose path is `target`'s path when given.
    /// - Throws: `OriginError` when the origin does not answer or the answer cannot be read.
    public func requests(_ target: String? = nil) throws -> [ReceivedRequest] {
        var message: [String: Any] = ["op": "requests"]
        if let target { message["target"] = target }
        let reply = try command(message)
        guard let list = reply["requests"] as? [[String: Any]] else {
            throw OriginError(description: "hostile origin: no request list in the reply")
        }
        return list.map { item in
            ReceivedRequest(connection: item["connection"] as? Int ?? -1,
                            method: item["method"] as? String ?? "",
                            target: item["target"] as? String ?? "",
                            version: item["version"] as? String ?? "",
                            headers: item["headers"] as? [[String]] ?? [],
                            raw: Data(base64Encoded: item["raw_b64"] as? String ?? "") ?? Data(),
                            body: Data(base64Encoded: item["body_b64"] as? String ?? "") ?? Data())
        }
    }

    /// Forgets every script and every recorded request.
    /// - Throws: `OriginError` when the origin does not answer.
    public func reset() throws {
        _ = try command(["op": "reset"])
    }

    /// Sends one command line and waits (at most 10 s) for its reply line.
    private func command(_ message: [String: Any]) throws -> [String: Any] {
        try commandLock.withLock { _ in
            var line = try JSONSerialization.data(withJSONObject: message)
            line.append(0x0A)
            guard child.writeToStdin(line) else {
                throw OriginError(description: "hostile origin is gone: \(String(cString: strerror(errno)))")
            }
            guard let reply = lines.next(timeout: 10) else {
                throw OriginError(description: "hostile origin did not answer \(message["op"] ?? "")")
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
                throw OriginError(description: "hostile origin answered something that is not JSON: \(reply)")
            }
            guard object["ok"] as? Bool == true else {
                throw OriginError(description: "hostile origin refused: \(object["error"] ?? reply)")
            }
            return object
        }
    }

    /// `text`'s scalars as bytes (each scalar up to U+00FF is one byte; anything above becomes `?`).
    static func latin1(_ text: String) -> Data {
        Data(text.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : UInt8(ascii: "?") })
    }
}

/// The lines a child process writes to its standard output, collected by a reader thread.
private final class LineQueue: Sendable {
    private let state = Mutex<(lines: [String], buffer: Data, closed: Bool)>(([], Data(), false))
    private let available = DispatchSemaphore(value: 0)

    init(reading handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                let newLines = state.withLock { state -> Int in
                    if chunk.isEmpty {
                        state.closed = true
                        return 1
                    }
                    state.buffer.append(chunk)
                    var count = 0
                    while let newline = state.buffer.firstIndex(of: 0x0A) {
                        let line = state.buffer[state.buffer.startIndex..<newline]
                        state.lines.append(String(decoding: line, as: UTF8.self))
                        state.buffer = Data(state.buffer[state.buffer.index(after: newline)...])
                        count += 1
                    }
                    return count
                }
                for _ in 0..<newLines { available.signal() }
                if chunk.isEmpty { break }
            }
        }
        thread.name = "hostile-origin.stdout"
        thread.start()
    }

    /// The next line, waiting at most `timeout` seconds; `nil` when none came or the stream closed.
    func next(timeout: TimeInterval) -> String? {
        guard available.wait(timeout: .now() + timeout) == .success else { return nil }
        return state.withLock { state in
            if state.lines.isEmpty {
                if state.closed { available.signal() }
                return nil
            }
            return state.lines.removeFirst()
        }
    }
}
