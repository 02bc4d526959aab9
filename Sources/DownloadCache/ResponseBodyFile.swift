import CacheSystem
import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// An open, owner-only file one response body is streamed into: what ``HTTPTransport/send(_:bodyFile:events:)``
/// writes to. The transport writes through the open descriptor and never opens the file by its path, so a
/// directory swapped for a symbolic link after the file was created cannot redirect the body anywhere else.
///
/// The cache creates its body files inside the store's open `tmp/` directory (relative to its descriptor), on the
/// first write; ``init(creatingAt:)`` names one by path (tests, tools). Either way a body the transport returns
/// in memory creates no file. Thread-safe; one writer at a time.
public final class ResponseBodyFile: Sendable {
    /// A file made on first use by the one who made this value: its open descriptor (write access), where it is,
    /// and whether this value closes the descriptor.
    struct Created: Sendable {
        var descriptor: Int32
        var url: URL
        var ownsDescriptor: Bool
    }

    private struct State {
        var fd: Int32
        var url: URL
        var ownsDescriptor: Bool
    }

    /// Bytes appended through `write`, the limit on them, and who is told of each write.
    private struct Counter {
        var written: Int64 = 0
        var limit: Int64?
        /// The limit is the length the response's own framing announced (``lowerLimit(toAtMost:)``), not the cache's.
        var framing = false
        /// Why the limit is what it is when the caller's cap set it (``cap(atMost:reason:)``); nil otherwise.
        var capReason: String?
        var observer: (@Sendable (Int64) -> Void)?
        /// The store's writer whose file this is: told of each write's bytes and offset, so it checksums them
        /// while they are in memory (``BodyWriter/countWritten(_:at:)``).
        var checksummer: BodyWriter?
        /// The error a refused write threw (over the limit, or another version's bytes): the transport words a
        /// failed write its own way, so the caller reports this one (``refusal``).
        var refusal: TransportError?
    }
    private let counter = Mutex(Counter())

    private let state: Mutex<State>
    /// Makes the file on first use; `nil` for a file named by path (``init(creatingAt:)``) or already open.
    private let create: (@Sendable () throws(TransportError) -> Created)?

    /// Where the file is, for messages; the transport does not open it.
    public var url: URL { state.withLock { $0.url } }

    /// Wraps an open descriptor created by the cache; `ownsDescriptor` closes it with this value.
    init(url: URL, descriptor: Int32, ownsDescriptor: Bool) {
        self.state = Mutex(State(fd: descriptor, url: url, ownsDescriptor: ownsDescriptor))
        self.create = nil
    }

    /// A file `create` makes on the first write or ``open()`` (at `url` unless it says otherwise).
    init(url: URL, create: @escaping @Sendable () throws(TransportError) -> Created) {
        self.state = Mutex(State(fd: -1, url: url, ownsDescriptor: false))
        self.create = create
    }

    /// A body file at `url`, created (or emptied, when a regular file is there) on the first write or
    /// ``open()`` — mode 0600 for a new file, never through a symbolic link at its name — so a body the
    /// transport returns in memory creates no file.
    public convenience init(creatingAt url: URL) {
        self.init(url: url, descriptor: -1, ownsDescriptor: true)
    }

    deinit {
        let (descriptor, owned) = state.withLock { ($0.fd, $0.ownsDescriptor) }
        if owned, descriptor >= 0 { _ = cs_close(descriptor) }
    }

    /// The open descriptor, creating the file first when it is not yet created.
    /// - Throws: ``TransportError/other(_:)`` naming the path and the system's reason.
    @discardableResult
    public func open() throws(TransportError) -> Int32 {
        try state.withLock { (state: inout State) throws(TransportError) -> Int32 in
            if state.fd >= 0 { return state.fd }
            if let create {
                let created = try create()
                state = State(fd: created.descriptor, url: created.url, ownsDescriptor: created.ownsDescriptor)
                return created.descriptor
            }
            let url = state.url
            let opened = cs_open_file(url.path, CS_OPEN_WRITE, CS_OPEN_CREATE, 0o600)
            guard opened >= 0 else {
                throw TransportError.other("cannot create body file \(url.path): \(ErrorWords.systemMessage(Int(cs_errno())))")
            }
            if cs_truncate(opened, 0) != 0 {
                let reason = ErrorWords.systemMessage(Int(cs_errno()))
                _ = cs_close(opened)
                throw TransportError.other("cannot empty body file \(url.path): \(reason)")
            }
            state.fd = opened
            return opened
        }
    }

    /// Appends `bytes` (all of them, retrying short writes).
    /// - Throws: ``TransportError/other(_:)`` with the system's reason (e.g. no space left on the device);
    ///   ``TransportError/bodyTooLarge(limit:)`` when the bytes would take the file over the cache's limit
    ///   (none of them is written); `invalidResponse` when they rewrite bytes the store's writer has counted
    ///   (a 206 starting before the bytes held) with other bytes (none of them is written).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {
        let descriptor = try open()
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let (refused, checksummer): (TransportError?, BodyWriter?) = counter.withLock { counter in
            guard let limit = counter.limit, counter.written + Int64(bytes.count) > limit else {
                return (nil, counter.checksummer)
            }
            let refusal: TransportError = if let reason = counter.capReason {
                .bodyTooLarge(limit: limit, detail: reason)
            } else if counter.framing {
                .invalidResponse("the 206 body goes on past the \(limit) bytes its Content-Range encloses")
            } else {
                .bodyTooLarge(limit: limit)
            }
            counter.refusal = refusal
            return (refusal, nil)
        }
        if let refused { throw refused }
        let offset = checksummer == nil ? -1 : cs_tell(descriptor)
        if offset >= 0, let checksummer, !checksummer.overlapMatches(bytes, at: offset) {
            // A 206 that starts before the bytes held must repeat them: other bytes are another version.
            let refusal = TransportError.invalidResponse(
                "the 206 repeats the bytes held from offset \(offset) differently: another version of the resource")
            counter.withLock { $0.refusal = refusal }
            throw refusal
        }
        if cs_write_all(descriptor, base, bytes.count) != 0 {
            throw TransportError.other("cannot write body file \(url.path): \(ErrorWords.systemMessage(Int(cs_errno())))")
        }
        if offset >= 0 { checksummer?.countWritten(bytes, at: offset) }
        let (written, observer) = counter.withLock { counter in
            counter.written += Int64(bytes.count)
            return (counter.written, counter.observer)
        }
        observer?(written)
    }

    /// Tells `writer` of every write from now on (the file must be `writer`'s own, written through its
    /// descriptor), so it checksums the bytes from memory instead of reading them back.
    func checksumWrites(into writer: BodyWriter) {
        counter.withLock { $0.checksummer = writer }
    }

    /// The error a refused write threw, nil when none was refused: `bodyTooLarge` over the cache's limit or the
    /// caller's cap (with its words), `invalidResponse` past a 206's Content-Range or for another version's bytes.
    /// The transport words a failed write its own way; the caller reports this instead.
    var refusal: TransportError? { counter.withLock { $0.refusal } }

    /// Limits the bytes `write` may append, in bytes (`nil` = unlimited).
    func limitBytes(to limit: Int64?) {
        counter.withLock { $0.limit = limit.map { max(0, $0) } }
    }

    /// Raises the limit to at least `bytes` (nothing changes when unlimited or already higher).
    func raiseLimit(toAtLeast bytes: Int64) {
        counter.withLock { counter in
            if let limit = counter.limit { counter.limit = max(limit, bytes) }
        }
    }

    /// Lowers the limit to at most `bytes`, the length the response itself announced (sets it when unlimited):
    /// going over it is then a framing error of the response (``refusal`` is `invalidResponse`), not a body too large.
    func lowerLimit(toAtMost bytes: Int64) {
        counter.withLock { counter in
            let bytes = max(0, bytes)
            if bytes < counter.limit ?? .max {
                counter.limit = bytes
                counter.framing = true
                counter.capReason = nil
            }
        }
    }

    /// Lowers the limit to at most `bytes` for the caller's own cap on the body (`maxResponseBodyBytes`), with
    /// the words saying so when a write goes over it (``refusal`` is `bodyTooLarge` with `reason`).
    func cap(atMost bytes: Int64, reason: String) {
        counter.withLock { counter in
            let bytes = max(0, bytes)
            if bytes <= counter.limit ?? .max {
                counter.limit = bytes
                counter.framing = false
                counter.capReason = reason
            }
        }
    }

    /// The byte limit in force (`nil` = unlimited).
    var byteLimit: Int64? { counter.withLock { $0.limit } }

    /// Calls `observer` with the bytes appended so far after every write (on the writer's thread; keep it short).
    func observeWrites(_ observer: (@Sendable (Int64) -> Void)?) {
        counter.withLock { $0.observer = observer }
    }

    /// Appends `data`.
    /// - Throws: ``TransportError/other(_:)`` with the system's reason.
    public func write(_ data: Data) throws(TransportError) {
        var failure: TransportError?
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            do throws(TransportError) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Appends the whole content of the file at `source` (read in 1 MiB chunks), e.g. a download task's
    /// temporary file, so the body ends up in this owner-only file whatever the source's mode.
    /// - Throws: ``TransportError/other(_:)`` when `source` cannot be read or the copy cannot be written.
    public func append(contentsOf source: URL) throws(TransportError) {
        let input = cs_open_file(source.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        guard input >= 0 else {
            throw TransportError.other("cannot read \(source.path): \(ErrorWords.systemMessage(Int(cs_errno())))")
        }
        defer { _ = cs_close(input) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            guard let base = buffer.baseAddress else { return }
            let count = cs_read(input, base, chunk)
            if count < 0 {
                throw TransportError.other("cannot read \(source.path): \(ErrorWords.systemMessage(Int(cs_errno())))")
            }
            if count == 0 { return }
            try write(UnsafeRawBufferPointer(start: base, count: Int(count)))
        }
    }

    /// The file's size in bytes (from the open descriptor); `nil` before the file exists or when it cannot be read.
    public var size: Int64? {
        let descriptor = state.withLock { $0.fd }
        var info = cs_file_info()
        return descriptor >= 0 && cs_stat_fd(descriptor, &info) == 0 ? info.size : nil
    }
}
