import CacheStore
import CacheSystem
import Foundation
import HTTPCacheSemantics
import Synchronization

/// Resuming interrupted transfers (RFC 9110 §14, §13.1.5; RFC 9111 §3.3–3.4).
///
/// A GET whose 200 could be resumed later — storable, a strong validator (`RFC9110.ifRangeValidator`: a strong
/// `ETag`, or a `Last-Modified` at least 60 s before `Date`), a known `Content-Length` within the store's
/// `partialByteLimit` (`maxDiskBytes`: a body over the per-entry limit, delivered without being stored, is resumed
/// as well), no
/// content coding removed by the transport, at least ``smallestResumableBytes`` long — is registered as a partial entry of the store as soon as its head
/// arrives, and its verified prefix is recorded every ``partialCheckpointBytes`` (`CacheStore+Partials.swift`).
/// When the transfer then fails (connection lost, truncated, timed out, stalled, cancelled) the verified bytes
/// stay; a SIGKILL keeps those of the last checkpoint.
///
/// The next GET of that URL with nothing usable stored sends `Range: bytes=<kept>-` with `If-Range: <validator>`:
/// - a 206 whose `Content-Range` continues the kept bytes (`RFC9110.partialCombination`: it starts at or before
///   them, its total equals the stored length, the same strong validator) is appended — a 206 that starts earlier
///   is written over the overlap — and the whole body is committed as a normal stored 200 whose header fields are
///   the kept ones updated by the 206's (`RFC9111.combinedPartial`, RFC 9111 §3.4);
/// - a 200 (the origin ignored the range, or `If-Range` failed because the representation changed) replaces the
///   kept bytes: the file starts again from byte 0;
/// - anything else (a gap, a wrong total, no `Content-Range`, a changed validator, another status) is thrown away
///   with the kept bytes, and the URL is fetched whole once more. Bytes of two representations are never joined.
/// A partial that cannot be resumed (no strong validator, unknown length) is removed when it is found.
extension DownloadCache {
    /// Body bytes received between two checkpoints of a partial entry (4 MiB).
    static let partialCheckpointBytes: Int64 = 4 << 20
    /// The smallest complete length kept as a partial while it arrives (1 MiB): a smaller body is cheaper to fetch
    /// again than two index writes per download, and transports hand such bodies over in memory anyway.
    static let smallestResumableBytes: Int64 = 1 << 20

    /// The request fields that make a GET the caller's own conditional or range request: such a request never
    /// resumes a partial.
    static let callerConditionalFields = ["Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match",
                                          "If-Unmodified-Since"]

    /// The partial of `original` this exchange may continue, claimed and open for appending; nil when there is
    /// none, the request or options forbid it, or the partial cannot be resumed (then it is removed).
    func resumablePartial(_ sent: CacheRequest, original: CacheRequest, stored: StoredCandidate?,
                          options: RequestOptions) -> ResumedPartial? {
        guard stored == nil, options.readsCache, options.writeToCache, !store.isReadOnly,
              sent.method.uppercased() == "GET",
              !Self.callerConditionalFields.contains(where: { sent.headers.contains($0) }) else { return nil }
        let primary = RFC9111.primaryKey(method: "GET", url: original.url)
        for info in store.partials(forPrimaryKey: primary) where !info.isInProgress {
            guard let metadata = StoredEntryMetadata.decodeUsable(info.metadata) else {
                try? store.removePartial(for: info.key)
                continue
            }
            guard RFC9111.matches(stored: metadata.stored, request: original, secret: keySecret) else { continue }
            let headers = metadata.stored.response.headers
            guard let validator = RFC9110.ifRangeValidator(headers), let total = RFC9110.completeLength(headers),
                  info.verifiedBytes < total else {
                configuration.log("partial body of \(original.url.absoluteString) cannot be resumed: removed")
                try? store.removePartial(for: info.key)
                continue
            }
            // A body over the partial limit in force (max-disk) keeps nothing, resumed or not, as a fresh transfer
            // of it does: the partial (kept under larger limits) goes and the body is fetched whole.
            if let limit = store.configuration.partialByteLimit, total > limit {
                configuration.log("partial body of \(original.url.absoluteString) is over the disk limit: removed")
                try? store.removePartial(for: info.key)
                continue
            }
            // Over the caller's cap on a body (--max-filesize): not resumed, so none of the held bytes is delivered;
            // the request then fails at its first byte on the announced length. The partial stays.
            if let cap = configuration.maxResponseBodyBytes, total > cap { return nil }
            guard let writer = try? store.resumePartial(for: info.key) else { continue }
            return ResumedPartial(key: info.key, metadata: metadata, held: writer.bytesWritten, validator: validator,
                                  total: total, writer: writer)
        }
        return nil
    }

    /// `sent` asking for the bytes after `resumed`'s (RFC 9110 §14.2, §13.1.5).
    static func resumeRequest(_ sent: CacheRequest, _ resumed: ResumedPartial) -> CacheRequest {
        var request = sent
        request.headers.set("Range", "bytes=\(resumed.held)-")
        request.headers.set("If-Range", resumed.validator)
        return request
    }

    /// The key and metadata under which a response with `head` to `original` is kept as a partial while its
    /// body arrives; nil when it could not be resumed later (see the type's comment) or is not storable.
    func partialRegistration(_ head: TransportResponseHead, original: CacheRequest, options: RequestOptions,
                             requestTime: Date) -> (key: StoreKey, metadata: Data)? {
        guard head.status == 200, head.decodedContentEncoding == nil, options.writeToCache, !store.isReadOnly,
              // The length first: most responses are too small to resume, and it costs less than storability.
              let length = RFC9110.completeLength(head.headers), length >= Self.smallestResumableBytes,
              length <= store.configuration.partialByteLimit ?? .max else { return nil }
        let response = CacheResponse(status: head.status, headers: head.headers)
        guard RFC9111.storability(request: original, response: response, mode: configuration.mode,
                                  ignoreServerCacheControl: options.ignoreServerCacheControl,
                                  targetedFields: configuration.effectiveTargetedFields).isStorable,
              let secondary = RFC9111.secondaryKey(vary: head.headers, request: original.headers, secret: keySecret) else {
            return nil
        }
        let received = TransportResponse(url: head.url, status: head.status, statusText: head.statusText,
                                         headers: head.headers, bodySize: 0)
        let timing = ExchangeTiming(requestTime: requestTime, responseTime: configuration.now(), options: options)
        guard let entry = partialEntryHead(received, request: original, secondaryKey: secondary, timing: timing) else {
            return nil
        }
        return (entry.key, entry.metadata)
    }

    /// The key, stored head and encoded ``StoredEntryMetadata`` a partial entry of `received` (a GET response
    /// to `request`, whose `Vary` gave `secondaryKey`) is kept under; nil when the stored head has no `If-Range`
    /// validator (RFC 9110 §13.1.5: its bytes could never be resumed or joined) or the metadata does not encode.
    func partialEntryHead(_ received: TransportResponse, request: CacheRequest, secondaryKey: String,
                          timing: ExchangeTiming) -> (key: StoreKey, stored: StoredResponse, metadata: Data)? {
        let stored = storedResponse(received, request: request, timing: timing)
        guard RFC9110.ifRangeValidator(stored.response.headers) != nil else { return nil }
        let variant = RFC9111.variantKey(secondaryKey: secondaryKey, credentialPartition: stored.credentialPartition)
        let key = StoreKey(primary: RFC9111.primaryKey(method: "GET", url: request.url), variant: variant)
        let metadata = StoredEntryMetadata(url: request.url.absoluteString, method: "GET",
                                           statusText: received.statusText, stored: stored)
        guard let encoded = try? metadata.encoded() else { return nil }
        return (key, stored, encoded)
    }
}

/// A partial entry claimed for resuming: its key and stored head, the verified bytes held, the `If-Range` value,
/// the representation's complete length, and the writer continuing its file.
struct ResumedPartial: Sendable {
    var key: StoreKey
    var metadata: StoredEntryMetadata
    var held: Int64
    var validator: String
    var total: Int64
    var writer: BodyWriter
}

/// What became of the held bytes of one exchange, decided when its head arrived.
enum PartialOutcome: Sendable {
    /// No partial is involved (or the head has not arrived).
    case none
    /// A 206 continues the held bytes (`RFC9110.partialCombination` said append); its bytes are written from
    /// byte `from` of the body file (the held count, or earlier when the 206 starts inside the held bytes).
    case appending(headers: HTTPHeaders, from: Int64)
    /// The answer cannot be combined with the held bytes: they and the answer are thrown away.
    case rejected(reason: String)
}

/// One exchange's body as a possible partial entry: registers it when the head arrives, checkpoints its verified
/// prefix as bytes arrive, and says afterwards whether the held bytes may be kept. Callbacks run on the
/// transport's thread; the state is behind a mutex.
final class PartialTransfer: Sendable {
    private struct State {
        /// A partial row names the writer's file and this transfer owns it.
        var kept = false
        var outcome = PartialOutcome.none
        var headArrived = false
        var lastCheckpoint: Int64 = 0
    }

    private let cache: DownloadCache
    private let writer: BodyWriter?
    private let original: CacheRequest
    private let options: RequestOptions
    private let requestTime: Date
    let resumed: ResumedPartial?
    private let state: Mutex<State>

    init(cache: DownloadCache, writer: BodyWriter?, original: CacheRequest, options: RequestOptions,
         requestTime: Date, resumed: ResumedPartial?) {
        self.cache = cache
        self.writer = writer
        self.original = original
        self.options = options
        self.requestTime = requestTime
        self.resumed = resumed
        self.state = Mutex(State(kept: resumed != nil))
    }

    /// What the head decided about the held bytes.
    var outcome: PartialOutcome { state.withLock { $0.outcome } }

    /// Whether a partial row names the body file (so a failure keeps its verified bytes).
    var isKept: Bool { state.withLock { $0.kept } }

    /// The final response head: decides between appending, replacing and rejecting (resumed transfer) and
    /// registers a new body as a partial (see `DownloadCache+Resume.swift`).
    func receivedHead(_ head: TransportResponseHead) {
        guard let writer, !state.withLock({ $0.headArrived }) else { return }
        state.withLock { $0.headArrived = true }
        if let resumed {
            if head.status == 206 {
                let response = CacheResponse(status: 206, headers: head.headers)
                switch RFC9110.partialCombination(held: resumed.held, stored: resumed.metadata.stored.response.headers,
                                                  response: response) {
                case .append(let contentRange, let skip) where head.decodedContentEncoding == nil:
                    // A 206 starting before the held count rewrites the overlap: the same representation's bytes.
                    var from = resumed.held
                    if skip > 0, let first = contentRange.range?.first {
                        _ = cs_seek(writer.fileDescriptor, first)
                        from = first
                    }
                    state.withLock { $0.outcome = .appending(headers: head.headers, from: from) }
                case .append:
                    state.withLock { $0.outcome = .rejected(reason: "206 with a content coding removed by the transport") }
                case .replace(let reason), .reject(let reason):
                    state.withLock { $0.outcome = .rejected(reason: reason) }
                }
                return
            }
            guard head.status == 200 else {
                state.withLock { $0.outcome = .rejected(reason: "status \(head.status) to a resumed request") }
                return
            }
            // The whole representation (the origin ignored Range, or If-Range failed): the held bytes go.
            cache.store.forgetPartial(writer)
            state.withLock { $0.kept = false }
            writer.restart()
        }
        guard let (key, metadata) = cache.partialRegistration(head, original: original, options: options,
                                                               requestTime: requestTime) else { return }
        do {
            // Not kept when another live transfer is writing this URL's partial: that one is left alone.
            let kept = try cache.store.beginPartial(writer, metadata: metadata, for: key)
            state.withLock { $0.kept = kept }
        } catch {
            cache.configuration.log("cannot keep a partial body of \(original.url.absoluteString): \(ErrorWords.describe(error))")
        }
    }

    /// Body progress: records a checkpoint every ``DownloadCache/partialCheckpointBytes``.
    func receivedBytes(_ received: Int64) {
        guard let writer else { return }
        let due = state.withLock { state -> Bool in
            guard state.kept, received - state.lastCheckpoint >= DownloadCache.partialCheckpointBytes else { return false }
            if case .rejected = state.outcome { return false }
            state.lastCheckpoint = received
            return true
        }
        guard due else { return }
        let verified = try? cache.store.checkpointPartial(writer)
        if verified == nil { state.withLock { $0.kept = false } }
    }

    /// After the exchange: the row no longer names the body file (it was committed, delivered or discarded).
    func forget() {
        guard let writer, state.withLock({ $0.kept }) else { return }
        cache.store.forgetPartial(writer)
        state.withLock { $0.kept = false }
    }
}

extension DownloadCache {
    /// Whether a failed transfer's bytes must not be kept: the origin broke HTTP's framing (nothing it sent can
    /// be trusted). Every other failure after the head — connection lost, truncated, timed out, stalled,
    /// cancelled, a write error — keeps what was verified.
    static func discardsPartial(_ error: TransportError) -> Bool {
        error.code == .invalidResponse
    }

    /// The complete response a 206 that continued `resumed` makes: its body the whole file (a 206 body the
    /// transport held in memory is appended first), checked to be exactly the complete length, its header
    /// fields combined by `RFC9111.combinedPartial` (RFC 9111 §3.4), plus in a shared cache the 206's cookies
    /// (for this caller only), status 200.
    /// - Returns: `.truncated` when the file is shorter than the complete length (the 206 covered less than the
    ///   rest), `.other` when it cannot be written or is longer.
    func combinedResponse(_ received: TransportResponse, partialHeaders: HTTPHeaders, resumed: ResumedPartial,
                          sink: BodySink, requestTime: Date, responseTime: Date,
                          options: RequestOptions) -> Result<TransportResponse, TransportError> {
        if let body = received.inMemoryBody {
            do { try sink.file.write(body) } catch { return .failure(error) }
        }
        let size = sink.file.size ?? -1
        guard size == resumed.total else {
            return .failure(size < resumed.total ? .truncated(expected: resumed.total, received: max(0, size))
                                                 : .other("the resumed body is \(size) bytes, not \(resumed.total)"))
        }
        let combined = RFC9111.combinedPartial(resumed.metadata.stored, with: CacheResponse(status: 206, headers: partialHeaders),
                                               completeLength: resumed.total, requestTime: requestTime,
                                               responseTime: responseTime, options: evaluationOptions(options))
        // In a shared cache the combination keeps no cookie (`RFC9111.freshen`), but the 206's cookies are this
        // caller's: the response it gets carries them, so the storability decision sees them too (a response
        // setting a cookie without public/s-maxage is not stored), and the stored copy drops them
        // (`RFC9111.makeStoredResponse`).
        let headers = RFC9111.headersForTheRevalidatingClient(combined.response.headers, notModified: partialHeaders,
                                                              mode: evaluationOptions(options).mode)
        var whole = TransportResponse(url: received.url, status: 200, statusText: HTTPStatusText.text(for: 200),
                                      headers: headers, bodySize: resumed.total)
        whole.interimResponses = received.interimResponses
        return .success(whole)
    }
}

/// The kept bytes of an interrupted transfer, described for people and tools (`dlcache ls` and `dlcache info`).
public struct PartialDownloadDescription: Sendable {
    /// The request URL.
    public var url: String
    /// The key the complete response will be stored under (RFC 9111 §2, §4.1).
    public var key: StoreKey
    /// Bytes kept: on disk and checksummed; the next request asks for the bytes after them.
    public var bytesKept: Int64
    /// The representation's complete length in bytes (its `Content-Length`), nil when unknown.
    public var completeLength: Int64?
    /// The `If-Range` value a resume sends (strong `ETag` or `Last-Modified`), nil when it cannot be resumed.
    public var validator: String?
    /// True while a transfer (of this or another process) is still receiving it.
    public var isInProgress: Bool
    /// When its transfer last recorded progress.
    public var lastAccessedAt: Date
}

extension DownloadCache {
    /// Every partial entry (interrupted transfer) of this namespace, most recently used first.
    public func partialDescriptions() -> [PartialDownloadDescription] {
        store.allPartials().compactMap(describe).sorted { $0.lastAccessedAt > $1.lastAccessedAt }
    }

    /// The partial entries of GET `url`.
    public func partialDescriptions(for url: URL) -> [PartialDownloadDescription] {
        store.partials(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: url)).compactMap(describe)
    }

    private func describe(_ info: PartialEntryInfo) -> PartialDownloadDescription? {
        guard let metadata = StoredEntryMetadata.decodeUsable(info.metadata) else { return nil }
        let headers = metadata.stored.response.headers
        return PartialDownloadDescription(url: metadata.url, key: info.key, bytesKept: info.verifiedBytes,
                                          completeLength: RFC9110.completeLength(headers),
                                          validator: RFC9110.ifRangeValidator(headers), isInProgress: info.isInProgress,
                                          lastAccessedAt: info.lastAccessedAt)
    }
}
