import CacheStore
import Foundation
import HTTPCacheSemantics

/// The origin's 206 to a caller's own range request kept as partial content (RFC 9111 §3.3–3.4).
///
/// A caller's single-range GET for a URL with no complete stored response goes to the origin (see
/// `DownloadCache+Ranges.swift`); its 206 is delivered as received and, when it starts at byte 0 or continues
/// the bytes kept for the URL, is also written into the URL's partial entry (the one an interrupted transfer
/// leaves, `DownloadCache+Resume.swift`):
/// - it must be storable as the 200 it is part of, carry one valid `Content-Range` with the complete length, and
///   a strong validator (`RFC9110.ifRangeValidator`); a piece that continues kept bytes must pass
///   `RFC9110.partialCombination` against them (same strong validator, same total, no gap; an overlap is skipped);
/// - once the pieces reach the complete length, the body is stored as a complete 200 whose header fields are
///   the kept response's updated by the last 206's (`RFC9111.combinedPartial`): the new fields win, the
///   unupdated stored ones are kept.
/// A piece that starts later than the kept bytes (or later than 0 with nothing kept), or that came from the target
/// of a followed redirect (another URL's bytes), is not kept; a later plain
/// GET of the URL resumes from the kept bytes with `Range` + `If-Range`. Ranges are not served from a partial
/// entry: only a complete stored response answers a range by itself.
extension DownloadCache {
    /// Keeps `response` (the origin's answer to `request`, the caller's GET without its `Range`) as described above;
    /// every failure is logged and leaves the cache as it was.
    func keepPartialContent(_ response: CachedResponse, request: CacheRequest, options: RequestOptions) {
        guard response.status == 206, response.source == .network, options.writeToCache, !store.isReadOnly,
              let piece = partialPiece(response, request: request, options: options) else { return }
        let kept = store.partial(for: piece.key)
        var writer: BodyWriter?
        var base = piece.stored
        var skip: Int64 = 0
        if let kept, !kept.isInProgress, let metadata = StoredEntryMetadata.decodeUsable(kept.metadata) {
            let headers = metadata.stored.response.headers
            if case .append(_, let overlap) = RFC9110.partialCombination(
                held: kept.verifiedBytes, stored: headers, response: CacheResponse(status: 206, headers: response.headers)) {
                writer = try? store.resumePartial(for: piece.key)
                base = metadata.stored
                skip = overlap
            }
        }
        if writer == nil {
            guard piece.range.first == 0, let fresh = try? store.makeBodyWriter() else { return }
            do {
                // false: a live transfer of this URL owns its partial, which a piece never replaces.
                guard try store.beginPartial(fresh, metadata: piece.metadata, for: piece.key) else {
                    fresh.abort()
                    return
                }
            } catch {
                fresh.abort()
                return
            }
            writer = fresh
        }
        guard let writer else { return }
        do {
            try append(response.body, skipping: skip, to: writer)
        } catch {
            configuration.log("cannot keep the partial content of \(request.url.absoluteString): \(ErrorWords.describe(error))")
            _ = store.keepPartial(writer)
            return
        }
        guard writer.bytesWritten == piece.total else {
            _ = store.keepPartial(writer)
            return
        }
        let now = configuration.now()
        let combined = RFC9111.combinedPartial(base, with: CacheResponse(status: 206, headers: piece.stored.response.headers),
                                               completeLength: piece.total, requestTime: now, responseTime: now,
                                               options: evaluationOptions(options))
        let metadata = StoredEntryMetadata(url: request.url.absoluteString, method: "GET",
                                           statusText: HTTPStatusText.text(for: 200), stored: combined)
        do {
            try store.commit(writer, metadata: try metadata.encoded(), for: piece.key, storageClass: options.storage,
                             pinned: options.pin)
        } catch {
            configuration.log("cannot store the combined body of \(request.url.absoluteString): \(ErrorWords.describe(error))")
            store.forgetPartial(writer)
            writer.abort()
        }
    }

    /// One piece of partial content that could be kept: its key, stored head, range, complete length.
    private struct PartialPiece {
        var key: StoreKey
        var stored: StoredResponse
        var metadata: Data
        var range: ByteRange
        var total: Int64
    }

    /// The piece `response` is, or nil when it cannot be kept (see the type's comment).
    private func partialPiece(_ response: CachedResponse, request: CacheRequest, options: RequestOptions) -> PartialPiece? {
        let lines = response.headers.values(for: "Content-Range")
        guard lines.count == 1, let contentRange = ContentRange(parsing: lines[0]), let range = contentRange.range,
              let total = contentRange.completeLength, range.count == response.bodySize,
              total <= store.configuration.entryByteLimit ?? .max else { return nil }
        var whole = response.headers
        whole.remove("Content-Range")
        whole.set("Content-Length", String(total))
        guard RFC9111.storability(request: request, response: CacheResponse(status: 200, headers: whole),
                                  mode: configuration.mode, ignoreServerCacheControl: options.ignoreServerCacheControl,
                                  targetedFields: configuration.effectiveTargetedFields).isStorable,
              let secondary = RFC9111.secondaryKey(vary: response.headers, request: request.headers, secret: keySecret) else {
            return nil
        }
        let now = configuration.now()
        let received = TransportResponse(url: request.url, status: 206, statusText: response.statusText,
                                         headers: response.headers, bodySize: response.bodySize)
        let timing = ExchangeTiming(requestTime: now, responseTime: now, options: options)
        guard let entry = partialEntryHead(received, request: request, secondaryKey: secondary, timing: timing) else {
            return nil
        }
        return PartialPiece(key: entry.key, stored: entry.stored, metadata: entry.metadata, range: range, total: total)
    }

    /// Appends `body` without its first `skip` bytes to `writer` (a file body in 1 MiB chunks).
    /// - Throws: `CacheStoreError` from the writer, or the file system's error reading a file body.
    private func append(_ body: ResponseBody, skipping skip: Int64, to writer: BodyWriter) throws {
        switch body {
        case .data(let data):
            let start = data.startIndex + Int(min(skip, Int64(data.count)))
            try writer.write(Data(data[start...]))
        case .file(let url):
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(skip))
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try writer.write(chunk)
            }
        }
    }
}
