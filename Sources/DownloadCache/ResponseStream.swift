import CacheStore
import CacheSystem
import Foundation
import HTTPCacheSemantics
import Synchronization

extension DownloadCache {
    /// Starts answering `request` as ``response(for:options:)`` does and returns at once with a stream of the
    /// response body's bytes, delivered while they are being received and stored.
    ///
    /// The stream reads the body file the transport writes into (the same file that becomes the stored blob,
    /// so storing and streaming share one copy) as each write lands; a stored response (a hit, a revalidated
    /// or stale one) streams the stored blob; a transfer resumed from a kept partial (a 206 after
    /// `Range`/`If-Range`, RFC 9110 §14) streams from byte 0: the kept bytes first, then the rest.
    /// Only the body of a 2xx answer to a GET without `Range` is followed live; any other answer (3xx with
    /// redirects off, 4xx, 5xx, a range served 206 or 416, HEAD, unsafe methods) and a request that joined an
    /// identical download already in flight deliver their body once the call has completed. So does a body whose
    /// `Content-Length` announces at most the transport's `smallBodyLimit` (1 MiB by default, ``CurlTransport``
    /// and ``URLSessionTransport``): the transport collects it in memory, so it arrives in one go once complete,
    /// and a failed transfer of it delivers no bytes before the error and keeps nothing to resume. A transport
    /// made with `smallBodyLimit: 0` streams every body through the file.
    ///
    /// The chunks are the body of whatever the origin answered: check ``ResponseStream/status`` (known once the
    /// first chunk or the end is returned) before treating them as the resource (a 404's chunks are its error page).
    ///
    /// Back-pressure: bytes are read from the file only when the consumer asks for the next chunk, so a slow
    /// consumer only lags behind the file; the stream holds no more than the chunk it is returning
    /// (≤ ``ResponseStream/chunkBytes``), whatever the body's size.
    /// - Returns: the stream; ``ResponseStream/response()`` gives the status, header fields and source.
    public func stream(_ request: CacheRequest, options: RequestOptions = RequestOptions()) -> ResponseStream {
        let tap = BodyTap()
        var options = options
        let method = request.method.uppercased()
        if method == "GET", !request.headers.contains("Range") { options.bodyTap = tap }
        let task = Task { [self] () -> Result<CachedResponse, DownloadError> in
            do throws(DownloadError) {
                return .success(try await response(for: request, options: options))
            } catch {
                return .failure(error)
            }
        }
        tap.attach(task)
        return ResponseStream(tap: tap)
    }

    /// Lets `tap` follow `sink`'s file once `head` (a 2xx) is accepted as the response whose body it carries:
    /// from byte 0 of the file, which for an appended 206 starts with the `resumed` bytes already held.
    static func tapBody(_ tap: BodyTap?, head: TransportResponseHead, sink: BodySink, resumed: ResumedPartial?,
                        transfer: PartialTransfer) {
        // A body the transport decoded on the way is described by the completed response, not by this head.
        guard let tap, (200..<300).contains(head.status), head.decodedContentEncoding == nil else { return }
        var prefix: Int64 = 0
        switch transfer.outcome {
        case .rejected: return
        case .appending(_, let from): prefix = from
        case .none: break
        }
        tap.begin(sink, prefix: prefix, status: head.status, headers: head.headers)
    }
}

/// The body of one response as an `AsyncSequence` of byte chunks (`Data`, each 1…``chunkBytes`` bytes, in
/// order), returned by ``DownloadCache/stream(_:options:)``.
///
/// Bytes arrive while the transfer is still running (except a body announced as at most the transport's
/// `smallBodyLimit`, delivered once complete; see ``DownloadCache/stream(_:options:)``). When the call fails, the
/// sequence first delivers every byte that was written before the failure, then throws the `DownloadError` that
/// ``DownloadCache/response(for:options:)`` would have thrown (`.connectionFailed`, `.timedOut`, `.truncated`,
/// `.cancelled`, ...); the interrupted transfer is kept as a partial entry for a later resume as without
/// streaming, and nothing incomplete is stored as complete. Each iterator starts at byte 0 and reads on demand.
/// The file being read is the store's temporary body file, then its blob (held open, so an eviction,
/// replacement or purge meanwhile does not cut the stream); it is closed when the stream and its iterators
/// are released. Cancelling the consuming task cancels the download (the iterator throws `.cancelled`).
public struct ResponseStream: AsyncSequence, Sendable {
    /// A chunk of body bytes (1…``chunkBytes``).
    public typealias Element = Data
    /// What iterating throws: the call's error, `.cancelled`, or `.storage` when the body file cannot be read.
    public typealias Failure = DownloadError

    /// The largest chunk a `next()` returns, in bytes (256 KiB).
    public static let chunkBytes = 256 << 10

    let tap: BodyTap

    /// The complete response (status, header fields, source, `CachedResponse.body`) once the call has finished.
    /// - Throws: the `DownloadError` of ``DownloadCache/response(for:options:)``.
    /// With ``StoredBodyCheck/whileStreaming``, returns only once the stored body's check passed.
    /// - Throws: `.storedBodyDamaged` when it did not (the entry was removed).
    public func response() async throws(DownloadError) -> CachedResponse {
        let response = try await tap.result().get()
        if let check = response.storedBodyCheck, case .damaged(let why) = await check.verdict() {
            throw BodyTap.damaged(why, url: response.url)
        }
        return response
    }

    /// The header fields of the response whose body the chunks are (`Content-Type`, `Content-Encoding` ...,
    /// names case-insensitive): the origin's fields of the 2xx being followed, else the completed response's;
    /// nil until an iterator has returned its first chunk or the end (an empty body).
    public var headers: HTTPHeaders? { tap.headers }

    /// The status code of the response whose body the chunks are (a 2xx being followed, else the completed
    /// response's), known when ``headers`` is: nil until an iterator has returned its first chunk or the end.
    /// A caller can decide on it before writing the first chunk anywhere (`dlcache get --retry` on a 503).
    public var status: Int? { tap.status }

    /// Cancels the download; iterators then end by throwing `.cancelled` after the bytes already written.
    public func cancel() { tap.cancel() }

    /// The body's size in bytes once the call has completed (the response's ``CachedResponse/bodySize``: a stored
    /// body served from the cache is complete before its first chunk); nil while the body is still arriving or
    /// when the call failed.
    public var completedBodySize: Int64? { tap.completedBodySize }

    /// The most bytes the stream held at once (the largest chunk read for a consumer), for tests of the bound.
    var peakBufferedBytes: Int { tap.peakBufferedBytes }


    /// A new iterator from byte 0 of the body.
    public func makeAsyncIterator() -> Iterator { Iterator(tap: tap) }

    /// Reads the next chunk when asked; ``next()`` waits for bytes to be written or the call to end.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of body bytes (1…``ResponseStream/chunkBytes``).
        public typealias Element = Data
        /// The error ``next()`` throws.
        public typealias Failure = DownloadError
        let tap: BodyTap
        var offset: Int64 = 0
        var generation = 0

        /// The next chunk from the current offset; nil after the last byte of a completed response.
        /// - Throws: the call's `DownloadError` once the bytes written before the failure were delivered;
        ///   `.cancelled` when the consuming task is cancelled; `.storage` when the body file cannot be read.
        public mutating func next() async throws(DownloadError) -> Data? {
            guard let region = try await tap.region(from: offset, maxBytes: ResponseStream.chunkBytes,
                                                    generation: &generation) else { return nil }
            let chunk = try region.read()
            tap.record(chunk.count)
            offset += Int64(chunk.count)
            return chunk
        }

        /// The next run of bytes from the current offset, not read yet: at most `maxBytes` (≥ 1) of what the
        /// file holds now, or of the completed response's body; nil after its last byte. The iterator moves past
        /// the region, so the caller copies it (``BodyRegion/write(to:)``, in the kernel where it can) before
        /// asking for the next one. Waits, fails and orders like ``next()``; a region holds no body bytes in
        /// memory (except a body the call returned in memory).
        /// - Throws: as ``next()``.
        public mutating func nextRegion(maxBytes: Int) async throws(DownloadError) -> BodyRegion? {
            let region = try await tap.region(from: offset, maxBytes: Swift.max(1, maxBytes), generation: &generation)
            if let region { offset += Int64(region.count) }
            return region
        }
    }
}

/// A run of body bytes still in the file (or memory) that holds them, from
/// ``ResponseStream/Iterator/nextRegion(maxBytes:)``: a caller writing the body to a file descriptor copies it
/// with ``write(to:)`` (`copy_file_range`/`sendfile` on Linux) instead of reading it through a `Data`.
/// The file stays readable while the region exists, even when the entry is replaced or purged meanwhile.
public struct BodyRegion: Sendable {
    /// Where the bytes are: a descriptor reading the body file, a stored blob held open, or memory.
    enum Source: Sendable {
        case file(FileDescriptorHandle)
        case stored(OpenedBody)
        case data(Data)
    }

    /// Where the region starts in the body, in bytes.
    public let offset: Int64
    /// Its length in bytes (≥ 1).
    public let count: Int
    let source: Source

    /// Why ``write(to:)`` stopped: the body's file could not be read (or ended early), or the output refused.
    public struct WriteFailure: Error, Sendable {
        /// Whether the output descriptor failed (disk full, a closed pipe); false: reading the body failed.
        public var isOutput: Bool
        /// The system's error number (0 when the body's file ended before the region's end).
        public var systemError: Int32
    }

    /// The region's bytes in memory.
    /// - Throws: `DownloadError` `.storage` when the body's file cannot be read or ends before the region does.
    public func read() throws(DownloadError) -> Data {
        switch source {
        case .data(let data):
            return data
        case .stored(let body):
            do {
                let data = try body.read(from: offset, upToCount: count)
                guard !data.isEmpty else { throw DownloadError(.storage, "the stored body \(body.url.path) ended at byte \(offset)") }
                return data
            } catch let error as DownloadError {
                throw error
            } catch {
                throw DownloadError(.storage, "cannot read the stored body \(body.url.path): \(error)")
            }
        case .file(let handle):
            var data = Data(count: count)
            let got = data.withUnsafeMutableBytes { raw -> Int64 in
                guard let base = raw.baseAddress else { return 0 }
                return cs_read_at(handle.fd, base, count, offset)
            }
            guard got > 0 else { throw DownloadError(.storage, "cannot read the body file at byte \(offset)") }
            if Int(got) < count { data.removeSubrange(Int(got)...) }
            return data
        }
    }

    /// Writes the region's bytes to `descriptor` at its current position (all of them), copied in the kernel
    /// where the system can (``cs_copy_range``: `copy_file_range`, then `sendfile`; else `pread`/`write`).
    /// - Throws: ``WriteFailure``; after it the descriptor may hold part of the region.
    public func write(to descriptor: Int32) throws(WriteFailure) {
        switch source {
        case .data(let data):
            let failed = data.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress, raw.count > 0 else { return false }
                return cs_write_all(descriptor, base, raw.count) != 0
            }
            if failed { throw WriteFailure(isOutput: true, systemError: cs_errno()) }
        case .stored(let body):
            try body.withDescriptor { (fd: Int32) throws(WriteFailure) in try Self.copy(fd, from: offset, count: count, to: descriptor) }
        case .file(let handle):
            try Self.copy(handle.fd, from: offset, count: count, to: descriptor)
        }
    }

    private static func copy(_ input: Int32, from offset: Int64, count: Int, to output: Int32) throws(WriteFailure) {
        var done: Int64 = 0
        while done < Int64(count) {
            let n = cs_copy_range(input, offset + done, output, Int64(count) - done)
            if n > 0 {
                done += n
                continue
            }
            let err = n < 0 ? cs_errno() : 0
            // Which side stopped it: when the body's file still reads where the copy stopped, the output refused.
            var probe: UInt8 = 0
            let readable = cs_read_at(input, &probe, 1, offset + done) == 1
            throw WriteFailure(isOutput: n < 0 && readable, systemError: err)
        }
    }
}

/// An open descriptor, closed when the last holder releases it (so a region being copied keeps its file open
/// while the stream moves on to another file).
final class FileDescriptorHandle: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { _ = cs_close(fd) }
}

/// The shared state of a ``ResponseStream``: the body file being written (a reading descriptor), how many of
/// its bytes are written, the call's result, and consumers waiting for more.
final class BodyTap: Sendable {
    private struct State {
        var reader: FileDescriptorHandle?
        /// Bytes of the file that are written (kept prefix + written by this transfer).
        var available: Int64 = 0
        /// Counts ``begin(_:prefix:)`` calls: an iterator that read from an earlier file cannot go on.
        var generation = 0
        var result: Result<CachedResponse, DownloadError>?
        var waiters: [CheckedContinuation<Void, Never>] = []
        var task: Task<Result<CachedResponse, DownloadError>, Never>?
        var peakBuffered = 0
        /// The head of the body being delivered, known once a chunk or the end was returned.
        var headers: HTTPHeaders?
        var followedHeaders: HTTPHeaders?
        /// The status code that goes with ``headers``, and the one of the 2xx being followed.
        var status: Int?
        var followedStatus: Int?
    }
    private let state = Mutex(State())

    /// Runs `task` (the call) and records its result when it ends.
    func attach(_ task: Task<Result<CachedResponse, DownloadError>, Never>) {
        state.withLock { $0.task = task }
        Task { [self] in
            let result = await task.value
            let waiters = state.withLock { state in
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    func cancel() { state.withLock { $0.task }?.cancel() }

    var peakBufferedBytes: Int { state.withLock { $0.peakBuffered } }

    var headers: HTTPHeaders? { state.withLock { $0.headers } }

    var status: Int? { state.withLock { $0.status } }
    /// The completed response's body size; nil until the call has completed with a response.
    var completedBodySize: Int64? {
        state.withLock { state in
            if case .success(let response)? = state.result { return response.bodySize }
            return nil
        }
    }

    /// Follows `sink`'s file from now on; its first `prefix` bytes are already there (a resumed partial).
    /// Called on the transport's thread when the head is accepted, before any body byte is written.
    func begin(_ sink: BodySink, prefix: Int64, status: Int, headers: HTTPHeaders) {
        let opened = prefix > 0 ? sink.openReader() : -1
        let reader = opened >= 0 ? FileDescriptorHandle(opened) : nil
        state.withLock { state in
            state.reader = reader
            state.available = reader != nil ? prefix : 0
            state.generation += 1
            state.followedHeaders = headers
            state.followedStatus = status
        }
        let generation = state.withLock { $0.generation }
        sink.file.observeWrites { [self] written in
            wrote(prefix + written, sink: sink, generation: generation)
        }
    }

    /// The file now holds `total` bytes (on the writer's thread, right after its write).
    private func wrote(_ total: Int64, sink: BodySink, generation: Int) {
        let needsReader = state.withLock { $0.generation == generation && $0.reader == nil }
        let opened = needsReader ? sink.openReader() : -1
        let handle = opened >= 0 ? FileDescriptorHandle(opened) : nil
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.generation == generation else { return [] }
            if state.reader == nil, let handle { state.reader = handle }
            guard state.reader != nil else { return [] }
            state.available = total
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The call's result, once it ended.
    func result() async -> Result<CachedResponse, DownloadError> {
        let task = state.withLock { $0.task }
        guard let task else { return .failure(DownloadError(.other, "stream without a call")) }
        return await task.value
    }

    /// What the iterator at `offset` delivers next (at most `maxBytes`): file bytes written so far, then the rest
    /// of the completed response's body, then nil; or the call's error once the written bytes are delivered.
    func region(from offset: Int64, maxBytes: Int, generation: inout Int) async throws(DownloadError) -> BodyRegion? {
        while true {
            if Task.isCancelled {
                cancel()
                throw DownloadError(.cancelled, "the download was interrupted before it completed (the task reading the stream was cancelled)")
            }
            enum Step { case read(FileDescriptorHandle, Int), finished(Result<CachedResponse, DownloadError>), wait }
            let step = state.withLock { state -> Step in
                // The followed 2xx did not become the answer (its transfer failed and a stored copy was served
                // instead): its bytes in the file are not that copy's, so they are never read on from.
                if state.generation > 0, case .success(let response)? = state.result, response.source != .network {
                    return .finished(offset == 0 ? .success(response) : .failure(DownloadError(.truncated,
                        "the response being streamed ended after \(offset) bytes and a stored copy was answered "
                        + "instead; its bytes are not appended to another response's")))
                }
                if let reader = state.reader, state.available > offset {
                    return .read(reader, Int(min(Int64(maxBytes), state.available - offset)))
                }
                if let result = state.result { return .finished(result) }
                return .wait
            }
            switch step {
            case .read(let reader, let count):
                if offset > 0, generation != 0, generation != state.withLock({ $0.generation }) {
                    throw DownloadError(.other, "the response body started again after \(offset) bytes were delivered")
                }
                generation = state.withLock { state in
                    if state.headers == nil {
                        state.headers = state.followedHeaders
                        state.status = state.followedStatus
                    }
                    return state.generation
                }
                return BodyRegion(offset: offset, count: count, source: .file(reader))
            case .finished(let result):
                let response = try result.get()
                state.withLock { state in
                    if state.headers == nil || offset == 0 {
                        state.headers = response.headers
                        state.status = response.status
                    }
                }
                guard let check = response.storedBodyCheck else {
                    return try Self.region(of: response, from: offset, maxBytes: maxBytes)
                }
                // A stored body checked while it is streamed: a mismatch found already stops the copy at once; the
                // end comes only after the verdict.
                if let why = check.damage { throw Self.damaged(why, url: response.url) }
                if let region = try Self.region(of: response, from: offset, maxBytes: maxBytes) { return region }
                if case .damaged(let why) = await check.verdict() { throw Self.damaged(why, url: response.url) }
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state -> Bool in
                            if state.result != nil || (state.reader != nil && state.available > offset) { return true }
                            state.waiters.append(continuation)
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: { [self] in
                    cancel()
                    let waiters = state.withLock { state in
                        defer { state.waiters = [] }
                        return state.waiters
                    }
                    for waiter in waiters { waiter.resume() }
                }
            }
        }
    }

    /// The error of a stored body whose check failed after (some of) it was streamed.
    static func damaged(_ why: String, url: URL) -> DownloadError {
        DownloadError(.storedBodyDamaged, "the stored body of \(url.absoluteString) did not match its entry (\(why)); "
            + "the bytes delivered are not the stored response: the entry was removed, the next request fetches it again")
    }

    /// Records a chunk of `count` bytes read for a consumer (the bound ``peakBufferedBytes`` reports).
    func record(_ count: Int) {
        state.withLock { $0.peakBuffered = max($0.peakBuffered, count) }
    }

    /// The completed response's body from `offset` on, at most `maxBytes`; nil at its end.
    private static func region(of response: CachedResponse, from offset: Int64,
                               maxBytes: Int) throws(DownloadError) -> BodyRegion? {
        guard offset < response.bodySize else { return nil }
        let count = Int(min(Int64(maxBytes), response.bodySize - offset))
        switch response.body {
        case .data(let data):
            let start = data.startIndex + Int(offset)
            guard start < data.endIndex else { return nil }
            let end = min(data.endIndex, start + count)
            return BodyRegion(offset: offset, count: end - start, source: .data(Data(data[start..<end])))
        case .file(let url):
            if let stored = response.storedBody {
                return BodyRegion(offset: offset, count: count, source: .stored(stored))
            }
            let reader = cs_open_file(url.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            guard reader >= 0 else { throw DownloadError(.storage, "cannot open the body file \(url.path)") }
            return BodyRegion(offset: offset, count: count, source: .file(FileDescriptorHandle(reader)))
        }
    }
}
