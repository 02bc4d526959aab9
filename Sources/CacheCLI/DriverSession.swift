import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Synchronization

/// How a driver session answers: how many lines run at once and which bodies are answered as files.
package struct DriverSessionOptions: Sendable {
    /// Default of ``maxInFlight``.
    package static let defaultMaxInFlight = 64
    /// Default of ``inlineBodyLimit``: the library's in-memory body limit (8 MiB), so a body above it (already a
    /// file in the cache) is never loaded into memory.
    package static let defaultInlineBodyLimit: Int64 = 8 << 20

    /// Request lines being answered at once (at least 1); while that many answers are pending or not yet
    /// written, the session reads no further line.
    package var maxInFlight = defaultMaxInFlight
    /// Bodies larger than this many bytes are answered with `"bodyFile"` instead of inline.
    package var inlineBodyLimit = defaultInlineBodyLimit
    /// Bytes the answer lines being encoded or waiting to be written may take at once (each counted as 8 × its
    /// inline body + 4 KiB, over what escaping and `bodyBase64` can make of it); an answer that would go over
    /// waits until earlier ones are written (one alone always proceeds). Default 256 MiB.
    package var answerMemoryBudget: Int64 = 256 << 20
    /// `--max-time` / `--stall-timeout` for every request of the session (default: the library's).
    package var limits = FetchLimits()

    /// Creates options with the defaults.
    package init() {}
}

/// Serves one `dlcache driver` session: reads request lines, answers each one concurrently through the cache's
/// public API, and writes one JSON answer line per request line.
///
/// - Every request goes through `DownloadCache.response(for:options:)` with the default options (policy
///   use-protocol, RFC 9111) except `followRedirects = false` (a 3xx is returned as is) and the request body.
/// - A slow request never blocks the next line; answers come out in completion order and are matched by id.
/// - At most ``DriverSessionOptions/maxInFlight`` lines are in flight; an answer counts until it is written, so
///   a reader that stops reading the answers stops the session from reading requests (back-pressure).
/// - Lines are written whole, one at a time, by a single writer; they are never interleaved.
/// - Blank lines are ignored; any other line that is not a valid request gets an error line.
/// - A request the cache may not send to the origin and cannot answer from storage (`only-if-cached`,
///   `DownloadError.notCached`) is answered as HTTP does it: a synthesized 504 with no headers and an empty body
///   (RFC 9111 §5.2.1.7). Every other failure is an error line.
/// - `"bodyFile": true`, or a body over ``DriverSessionOptions/inlineBodyLimit``, is answered with
///   `"bodyFile": "<path>"`: the stored blob when the body is stored as a file (immutable; it disappears when
///   the entry is replaced or evicted, an already opened file stays readable), else a private file (0600 in a
///   0700 directory) that stays until the session ends.
package final class DriverSession: Sendable {
    /// The cache every request goes through.
    package let cache: DownloadCache
    /// The session's limits.
    package let options: DriverSessionOptions
    private let output: DriverOutput
    private let bodyFiles = DriverBodyFiles()
    private let answerMemory: DriverByteBudget

    /// Creates a session over `cache` that writes each answer line (JSON + `\n`) with one call of `write`, which
    /// returns 0 or the `errno` of a failed write.
    ///
    /// `write` is never called concurrently with itself; it should write every byte before returning
    /// (``Console``'s writers do, unbuffered). It may block (a full pipe): the session then stops reading. Once it
    /// has failed (the reader went away: `EPIPE`; a full disk), the session stops: it reads no further line,
    /// cancels the requests in flight and writes nothing more.
    package init(cache: DownloadCache, options: DriverSessionOptions = DriverSessionOptions(),
                write: @escaping @Sendable (Data) -> Int32) {
        self.cache = cache
        self.options = options
        self.output = DriverOutput(write: write)
        self.answerMemory = DriverByteBudget(limit: max(1, options.answerMemoryBudget))
    }

    /// Creates a session whose `write` cannot fail (a capture in memory).
    package convenience init(cache: DownloadCache, options: DriverSessionOptions = DriverSessionOptions(),
                            write: @escaping @Sendable (Data) -> Void) {
        self.init(cache: cache, options: options, write: { (data: Data) -> Int32 in
            write(data)
            return 0
        })
    }

    /// The `errno` of the failed write that stopped the session, or 0.
    package var outputFailure: Int32 { output.failure }

    /// Number of answer lines written so far.
    package var linesWritten: Int { output.count }

    /// Reads `lines` until the sequence ends, answering each as soon as its request completes; returns when
    /// every request has been answered (stdin closing never drops an in-flight request).
    package func serve(_ lines: AsyncStream<String>) async {
        let (bytes, continuation) = AsyncStream<[UInt8]>.makeStream()
        let forwarding = Task {
            for await line in lines { continuation.yield(Array(line.utf8)) }
            continuation.finish()
        }
        await serve(bytes, limit: nil)
        forwarding.cancel()
    }

    /// Reads byte lines until the sequence ends (see ``serve(_:)``); `limit`'s slot, taken by the reader for
    /// each line, is given back once the line's answer is written (or at once for a blank line). A failed write
    /// ends the session early: the reading stops and the requests in flight are cancelled.
    func serve(_ lines: AsyncStream<[UInt8]>, limit: DriverInFlightLimit?) async {
        let serving = Task { [self] in await answerAll(lines, limit: limit) }
        output.onFailure { serving.cancel() }
        await withTaskCancellationHandler {
            await serving.value
        } onCancel: {
            serving.cancel()
        }
        output.finish()
    }

    private func answerAll(_ lines: AsyncStream<[UInt8]>, limit: DriverInFlightLimit?) async {
        let maxInFlight = max(1, options.maxInFlight)
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await line in lines {
                guard output.failure == 0 else {
                    limit?.release()
                    break
                }
                guard !Self.isBlank(line) else {
                    limit?.release()
                    continue
                }
                if running >= maxInFlight {
                    await group.next()
                    running -= 1
                }
                running += 1
                group.addTask { [self] in
                    let answer = await self.answer(bytes: line)
                    // Encoded only once its line's memory is free: the lines in flight cannot add up past the budget.
                    let cost = answerMemory.acquire(answer.encodingCost)
                    await cost.ready()
                    await self.output.writeLine(answer.jsonBytes(terminator: [0x0A]))
                    answerMemory.release(cost)
                    limit?.release()
                }
            }
            if output.failure != 0 { group.cancelAll() }
            await group.waitForAll()
        }
    }

    /// Removes the private body files the session's answers named (call when the session is over).
    package func removeBodyFiles() {
        bodyFiles.removeAll()
    }

    /// The answer to one request line: the response, or an error line for a malformed line or a failed request.
    package func answer(_ line: String) async -> DriverResponse {
        await answer(bytes: Array(line.utf8))
    }

    /// The answer to one request line given as bytes.
    func answer(bytes line: [UInt8]) async -> DriverResponse {
        if line == DriverLineSplitter.oversizedLine {
            return .error(id: nil, message: "malformed line: longer than \(DriverLineSplitter.maxLineBytes) bytes (not read)")
        }
        let request: DriverRequest
        let parsed = line.withUnsafeBytes { raw in
            Result { () throws(DriverLineError) in try DriverRequest.parse(bytes: raw) }
        }
        switch parsed {
        case .success(let value): request = value
        case .failure(let error): return .error(id: error.id, message: error.message)
        }
        var requestOptions = RequestOptions()
        requestOptions.followRedirects = false
        requestOptions.body = request.body
        options.limits.apply(to: &requestOptions)
        do {
            let response = try await cache.response(for: request.cacheRequest, options: requestOptions)
            return try answer(response, to: request)
        } catch let error as DriverLineError {
            return .error(id: error.id, message: error.message)
        } catch let error as DownloadError where error.code == .notCached {
            // RFC 9111 §5.2.1.7: a cache that cannot satisfy only-if-cached responds 504 (Gateway Timeout).
            return .response(id: request.id, status: 504, statusText: "Gateway Timeout", headers: [], body: "")
        } catch {
            return .error(id: request.id, message: ResponseDescription.failureMessage(error, url: request.url))
        }
    }

    /// The answer line for `response`: inline body, or a body file when asked or when the body is large.
    /// - Throws: ``DriverLineError`` when the body cannot be read or its file cannot be written.
    private func answer(_ response: CachedResponse, to request: DriverRequest) throws(DriverLineError) -> DriverResponse {
        let asFile = request.wantsBodyFile || response.bodySize > options.inlineBodyLimit
        switch response.body {
        case .file(let url) where asFile:
            if url != response.storedBodyURL { bodyFiles.adopt(url.path) }
            return DriverResponse.from(response, id: request.id, body: .file(path: url.path))
        case .file(let url):
            defer { if url != response.storedBodyURL { unlink(url.path) } }
            return try DriverResponse.from(response, id: request.id)
        case .data(let data) where asFile:
            // A body held in memory may still be stored file-backed: its verified blob, rather than a copy (named
            // by the response when it was just stored; else found by size and crc32 among the URL's variants).
            if let stored = response.storedBodyURL
                ?? (request.cacheRequest.method == "GET"
                    ? cache.store.storedBodyFile(holding: data, forPrimaryKey: RFC9111.primaryKey(method: "GET", url: response.url))
                    : nil) {
                return DriverResponse.from(response, id: request.id, body: .file(path: stored.path))
            }
            do {
                return DriverResponse.from(response, id: request.id, body: .file(path: try bodyFiles.write(data)))
            } catch {
                throw DriverLineError(id: request.id, "cannot write the body file of \(response.url.absoluteString): \(ErrorText.describe(error))")
            }
        case .data(let data):
            return DriverResponse.from(response, id: request.id, body: .bytes(data))
        }
    }

    /// Whether `line` holds only spaces, tabs or a carriage return.
    static func isBlank(_ line: String) -> Bool {
        isBlank(Array(line.utf8))
    }

    /// Whether the bytes of `line` are only spaces, tabs or carriage returns.
    static func isBlank(_ line: [UInt8]) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}

/// The driver's single output writer: one line at a time, each written whole with its `\n`, by a dedicated
/// thread (started with the first line, ended by ``finish()``), so a sink that blocks (a full pipe) blocks only
/// that thread — never a Swift concurrency or dispatch worker thread; the lines waiting for it keep their slots.
final class DriverOutput: Sendable {
    private struct Pending {
        var line: Data
        var written: CheckedContinuation<Void, Never>?
    }
    private struct State {
        var queue: [Pending] = []
        var started = false
        var finished = false
        var count = 0
        var failure: Int32 = 0
        var onFailure: (@Sendable () -> Void)?
    }
    private let write: @Sendable (Data) -> Int32
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    init(write: @escaping @Sendable (Data) -> Int32) {
        self.write = write
    }

    /// Lines written so far.
    var count: Int { state.withLock { $0.count } }

    /// The `errno` of the first write that failed, or 0; after one, no line is written any more (the lines
    /// queued or still to come are dropped, their callers resumed at once).
    var failure: Int32 { state.withLock { $0.failure } }

    /// Calls `handler` once, when a write fails (at once when one already has).
    func onFailure(_ handler: @escaping @Sendable () -> Void) {
        let failed = state.withLock { state -> Bool in
            if state.failure != 0 { return true }
            state.onFailure = handler
            return false
        }
        if failed { handler() }
    }

    /// Writes `line` (newline included) as one call of the sink; returns once it is written.
    func writeLine(_ line: [UInt8]) async {
        let data = Data(line)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let start = state.withLock { state -> Bool in
                state.queue.append(Pending(line: data, written: continuation))
                defer { state.started = true }
                return !state.started
            }
            if start { startThread() }
            available.signal()
        }
    }

    /// Ends the writer thread once every queued line is written (later lines start a new one).
    func finish() {
        let running = state.withLock { state -> Bool in
            guard state.started else { return false }
            state.finished = true
            return true
        }
        if running { available.signal() }
    }

    private func startThread() {
        let thread = Thread { [self] in
            while true {
                available.wait()
                // Each line signals once and `finish()` once more, so the queue is empty only after every line
                // queued before `finish()` was taken; then this thread ends (a later line starts a new one).
                let taken = state.withLock { state -> (line: Pending, dropped: Bool)? in
                    if state.queue.isEmpty {
                        state.started = false
                        state.finished = false
                        return nil
                    }
                    return (state.queue.removeFirst(), state.failure != 0)
                }
                guard let (next, dropped) = taken else { return }
                let failure = dropped ? 0 : write(next.line)
                let handler = state.withLock { state -> (@Sendable () -> Void)? in
                    if failure == 0 {
                        if !dropped { state.count += 1 }
                        return nil
                    }
                    state.failure = failure
                    defer { state.onFailure = nil }
                    return state.onFailure
                }
                next.written?.resume()
                handler?()
            }
        }
        thread.name = "dlcache-driver-stdout"
        thread.start()
    }
}

extension DriverResponse {
    /// Bytes encoding this answer may take at most, for ``DriverSessionOptions/answerMemoryBudget``: 8 × an inline
    /// body (kept, escaped up to 6 ×, base64 4/3 ×) + 4 KiB for the rest of the line.
    var encodingCost: Int64 {
        if case .response(_, _, _, _, .bytes(let data), _) = self { return Int64(data.count) * 8 + 4_096 }
        return 4_096
    }
}

/// A budget of bytes shared by the answers of a session, granted in arrival order; a request larger than the
/// whole budget is granted once nothing else holds any.
final class DriverByteBudget: Sendable {
    /// One request: its size and, once granted, nothing more to wait for.
    final class Grant: Sendable {
        let bytes: Int64
        private let state = Mutex<(granted: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
        init(bytes: Int64) { self.bytes = bytes }

        /// Whether the grant is made.
        var isGranted: Bool { state.withLock { $0.granted } }

        /// Returns once the grant is made.
        func ready() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.granted { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }

        fileprivate func grant() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.granted = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    private let limit: Int64
    private let state = Mutex<(used: Int64, waiting: [Grant])>((0, []))

    init(limit: Int64) { self.limit = limit }

    /// Asks for `bytes` (at most the whole budget is counted); wait for ``Grant/ready()``, then ``release(_:)``.
    func acquire(_ bytes: Int64) -> Grant {
        let grant = Grant(bytes: min(max(0, bytes), limit))
        let now = state.withLock { state -> Bool in
            guard state.waiting.isEmpty, state.used + grant.bytes <= limit else {
                state.waiting.append(grant)
                return false
            }
            state.used += grant.bytes
            return true
        }
        if now { grant.grant() }
        return grant
    }

    /// Gives `grant`'s bytes back and grants the waiting requests that now fit, in order.
    func release(_ grant: Grant) {
        let granted = state.withLock { state -> [Grant] in
            state.used -= grant.bytes
            var granted: [Grant] = []
            while let next = state.waiting.first, state.used + next.bytes <= limit {
                state.waiting.removeFirst()
                state.used += next.bytes
                granted.append(next)
            }
            return granted
        }
        for next in granted { next.grant() }
    }
}
