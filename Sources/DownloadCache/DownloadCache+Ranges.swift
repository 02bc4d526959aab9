import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

/// Range requests (RFC 9110 §14) answered from complete stored responses.
///
/// A GET with one valid byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`) for which a stored response exists is
/// answered from that stored response: the `Range` and `If-Range` fields are taken off, the request goes through
/// the cache as usual (a fresh stored response is used without contacting the origin, a stale one is revalidated
/// or refetched and stored), and the 200 that results is cut to a 206 with `Content-Range`, or becomes a 416 with
/// `Content-Range: bytes */<length>` when the range is unsatisfiable (`RFC9110.rangeAnswer`). An `If-Range` that
/// does not match the stored validator gives the whole 200.
///
/// Everything else keeps its `Range` and is sent to the origin as is, bypassing the cache (nothing is read from
/// it; the origin's 206, 416 or 200 is delivered as received): several ranges (this cache builds no
/// `multipart/byteranges` body, and stores nothing of the answer), a range for a URL with no stored response
/// (the whole body is not fetched to answer a part of it; a 206 that starts at byte 0 or continues the bytes
/// kept for the URL is kept as partial content and completed into a stored 200 by later pieces,
/// `DownloadCache+PartialContent.swift`), and methods other than GET. An invalid `Range` (`bytes=5-3`, another unit) is
/// ignored as RFC 9110 §14.2 allows: the request is answered whole, through the cache.
extension DownloadCache {
    /// ``followingRedirects`` with the Range handling above applied to `request`.
    func answeringRanges(_ request: CacheRequest, options: RequestOptions,
                         following: (CacheRequest, RequestOptions) async throws(DownloadError) -> CachedResponse)
        async throws(DownloadError) -> CachedResponse {
        guard request.method.uppercased() == "GET", request.headers.contains("Range") else {
            return try await following(request, options)
        }
        var whole = request
        whole.headers.remove("Range")
        whole.headers.remove("If-Range")
        switch RFC9110.rangeRequest(request.headers) {
        case nil:
            return try await following(whole, options)
        case .multiple?:
            var response = try await following(request, Self.bypassingCache(options))
            response.reason = "several ranges: forwarded to the origin uncached (no multipart/byteranges body is built from the cache, RFC 9110 §14.6)"
            return response
        case .single?:
            guard options.readFromCache, !candidates(for: whole).isEmpty else {
                var response = try await following(request, Self.bypassingCache(options))
                response.reason = options.readFromCache
                    ? "a range of a URL with no stored response: forwarded to the origin, its 206 kept as partial content when it starts at byte 0 (RFC 9110 §14.2, RFC 9111 §3.3)"
                    : "a range with the cache not read: forwarded to the origin uncached (RFC 9110 §14.2)"
                // A piece reached through a redirect is another URL's bytes: never kept under this one.
                if response.redirects.isEmpty { keepPartialContent(response, request: whole, options: options) }
                return response
            }
            let response = try await following(whole, options)
            return try partialAnswer(response, request: request)
        }
    }

    /// `options` with the cache neither read nor written.
    static func bypassingCache(_ options: RequestOptions) -> RequestOptions {
        var bypass = options
        bypass.readFromCache = false
        bypass.writeToCache = false
        return bypass
    }

    /// `response` (the whole representation) cut to what `request`'s single range asks for (RFC 9110 §14.2):
    /// a 206 with `Content-Range`, a 416, or `response` unchanged (not a 200, or `If-Range` did not match).
    /// - Throws: `DownloadError.storage` when the stored body cannot be read for the slice.
    func partialAnswer(_ response: CachedResponse, request: CacheRequest) throws(DownloadError) -> CachedResponse {
        let answer = RFC9110.rangeAnswer(request: request, status: response.status, headers: response.headers,
                                         length: response.bodySize)
        var cut = response
        switch answer {
        case .whole, .forwardToOrigin:
            return response
        case .unsatisfiable(let contentRange):
            cut.status = 416
            cut.statusText = HTTPStatusText.text(for: 416)
            cut.headers = RFC9110.rangeNotSatisfiableHeaders(response.headers, contentRange: contentRange)
            cut.body = .data(Data())
            cut.bodySize = 0
        case .partial(let range, let contentRange):
            cut.status = 206
            cut.statusText = HTTPStatusText.text(for: 206)
            cut.headers = RFC9110.partialContentHeaders(response.headers, contentRange: contentRange)
            cut.body = try sliceBody(response, range: range)
            cut.bodySize = range.count
        }
        cut.storedBodyURL = nil
        cut.storedBody = nil
        return cut
    }

    /// The bytes of `range` from `response`'s body: in memory up to `Configuration.inMemoryBodyLimit`, else in a
    /// new file the caller owns (``BodySink``: in the store's `tmp/`, or the private temporary directory).
    /// - Throws: `DownloadError.storage` when the body cannot be read or the slice cannot be written.
    func sliceBody(_ response: CachedResponse, range: ByteRange) throws(DownloadError) -> ResponseBody {
        if case .data(let data) = response.body {
            let start = data.startIndex + Int(range.first)
            return .data(Data(data[start..<(start + Int(range.count))]))
        }
        do {
            let reader = try BodySliceReader(response)
            if range.count <= Int64(configuration.inMemoryBodyLimit) {
                return .data(try reader.read(from: range.first, count: Int(range.count)))
            }
            // A new body file like a download's (BodySink: owner-only, created by the store without following
            // a link), kept for the caller.
            let sink = try BodySink(cache: self)
            var offset = range.first
            do {
                while offset <= range.last {
                    let chunk = try reader.read(from: offset, count: Int(min(1 << 20, range.last - offset + 1)))
                    if chunk.isEmpty { throw DownloadError(.storage, "the body ended before byte \(range.last)") }
                    try sink.file.write(chunk)
                    offset += Int64(chunk.count)
                }
            } catch {
                sink.discard()
                throw error
            }
            guard let url = sink.keep() else {
                sink.discard()
                throw DownloadError(.storage, "the range's body file could not be kept")
            }
            return .file(url)
        } catch let error as DownloadError {
            throw error
        } catch {
            throw DownloadError(.storage, "cannot read the range of \(response.url.absoluteString): \(ErrorWords.describe(error))")
        }
    }
}

/// Reads parts of a file body: through the held-open stored blob when there is one, else the file itself.
private struct BodySliceReader {
    let opened: OpenedBody?
    let file: FileHandle?

    init(_ response: CachedResponse) throws {
        if let stored = response.storedBody {
            opened = stored
            file = nil
        } else if case .file(let url) = response.body {
            opened = nil
            file = try FileHandle(forReadingFrom: url)
        } else {
            opened = nil
            file = nil
        }
    }

    /// Up to `count` bytes from `offset` (fewer only at the end of the body).
    func read(from offset: Int64, count: Int) throws -> Data {
        if let opened {
            var data = Data()
            while data.count < count {
                let chunk = try opened.read(from: offset + Int64(data.count), upToCount: count - data.count)
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            return data
        }
        guard let file else { return Data() }
        try file.seek(toOffset: UInt64(offset))
        var data = Data()
        while data.count < count, let chunk = try file.read(upToCount: count - data.count), !chunk.isEmpty {
            data.append(chunk)
        }
        return data
    }
}
