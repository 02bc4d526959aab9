import CacheTestSupport
@testable import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// `DownloadCache.stream(_:options:)`: body bytes reach the caller while the transfer is still writing the file
/// that becomes the stored blob; a failure ends the stream with the call's error after the bytes written; a slow
/// consumer holds at most one chunk; a hit and a resumed transfer stream the whole body from byte 0.
@Suite struct BodyStreamsWhileItIsStoredTests {
    static let size = 3_000_000

    static func generated(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 256) }) }

    /// Every chunk of `stream`, or the bytes before the error and the error.
    static func drain(_ stream: ResponseStream) async -> (Data, DownloadError?) {
        var bytes = Data()
        var iterator = stream.makeAsyncIterator()
        do throws(DownloadError) {
            while let chunk = try await iterator.next() { bytes.append(chunk) }
            return (bytes, nil)
        } catch {
            return (bytes, error)
        }
    }

    @Test func theFirstChunkArrivesWhileTheOriginIsStillSending() async throws {
        try await withHarness { h in
            // The origin sends 1 MB, then holds the rest until released: a stream that handed over nothing before
            // the end would wait out the origin's 60 s hold and see all 3 MB received.
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         holdAfter: Self.size / 3)
            let received = Mutex<Int64>(0)
            var options = RequestOptions()
            options.progress = { progress in received.withLock { $0 = max($0, progress.bytesReceived) } }
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/slow")), options: options)
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            // Ordering by events: when the first chunk is in hand, the transport has not received the whole body.
            let receivedAtFirstChunk = received.withLock { $0 }
            try await h.origin.release(path: "/slow")
            #expect(receivedAtFirstChunk <= Int64(Self.size / 3))
            #expect(stream.headers?.first("cache-control") == "max-age=600")
            #expect((first?.count ?? 0) > 0 && (first?.count ?? 0) <= ResponseStream.chunkBytes)
            var bytes = first ?? Data()
            while let chunk = try await iterator.next() { bytes.append(chunk) }
            #expect(bytes == Self.generated(Self.size))
            let response = try await stream.response()
            #expect(response.source == .network && response.status == 200)
            #expect(h.storedVariants("/slow").count == 1)
            #expect(try await h.hits("/slow").total == 1)
        }
    }

    @Test func aDroppedConnectionDeliversThePrefixThenThrowsTheCallsError() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", truncate: true)
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/cut")))
            let (bytes, error) = await Self.drain(stream)
            #expect(bytes == Self.generated(Self.size / 2))  // origin.py cuts the body after half
            let thrown = try #require(error)
            var responseError: DownloadError?
            do throws(DownloadError) { _ = try await stream.response() } catch { responseError = error }
            #expect(responseError?.code == thrown.code)
            // The same failure without streaming.
            try await h.origin.configure(path: "/cut2", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         truncate: true)
            var plain: DownloadError?
            do throws(DownloadError) { _ = try await h.get("/cut2") } catch { plain = error }
            #expect(plain?.code == thrown.code)
            #expect(h.storedVariants("/cut").isEmpty)  // nothing complete stored; the partial is kept for resume
            let partials = h.cache.store.partials(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: h.origin.url("/cut")))
            #expect(partials.first?.verifiedBytes == Int64(Self.size / 2))
        }
    }

    @Test func aResumedTransferStreamsTheKeptBytesFirst() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", truncate: true)
            await #expect(throws: DownloadError.self) { try await h.get("/r") }
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"")
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/r")))
            let (bytes, error) = await Self.drain(stream)
            #expect(error == nil)
            #expect(bytes == Self.generated(Self.size))
            let hits = try await h.hits("/r")
            #expect(hits.ranged == 1 && hits.partial == 1)  // the rest came as a 206
        }
    }

    @Test func aResumedTransferWhose206StartsInsideTheKeptBytesStreamsTheWholeBody() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/o", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", truncate: true)
            await #expect(throws: DownloadError.self) { try await h.get("/o") }
            // The 206 starts 100,000 bytes before the asked byte (RFC 9110 §14.4 lets it): the overlap is rewritten.
            try await h.origin.configure(path: "/o", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", rangeMode: .early, rangeEarly: 100_000)
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/o")))
            let (bytes, error) = await Self.drain(stream)
            #expect(error == nil, "\(String(describing: error))")
            #expect(bytes == Self.generated(Self.size))
            #expect(try await stream.response().bodySize == Int64(Self.size))
            #expect(h.storedVariants("/o").count == 1)
            #expect(try await h.hits("/o").partial == 1)
        }
    }

    @Test func aSlowConsumerLagsBehindTheFileHoldingOneChunkAtMost() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/big")))
            var iterator = stream.makeAsyncIterator()
            var bytes = try await iterator.next() ?? Data()
            // The consumer stops reading until the whole transfer is done and stored.
            let response = try await stream.response()
            #expect(response.bodySize == Int64(Self.size))
            #expect(h.storedVariants("/big").count == 1)
            while let chunk = try await iterator.next() { bytes.append(chunk) }
            #expect(bytes == Self.generated(Self.size))
            #expect(stream.peakBufferedBytes <= ResponseStream.chunkBytes)
        }
    }

    @Test func aHitStreamsTheStoredBytesExactly() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hit", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            _ = try await h.get("/hit")
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/hit")))
            let (bytes, error) = await Self.drain(stream)
            #expect(error == nil)
            #expect(bytes == Self.generated(Self.size))
            #expect(try await stream.response().source == .cache)
            #expect(try await h.hits("/hit").total == 1)
            #expect(stream.peakBufferedBytes <= ResponseStream.chunkBytes)
        }
    }

    @Test func aSmallBodyAndAnErrorStatusStreamAfterTheCall() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/small", headers: [("Cache-Control", "max-age=600")], body: "hello")
            try await h.origin.configure(path: "/missing", status: 404, body: "not here")
            let (small, smallError) = await Self.drain(h.cache.stream(CacheRequest(url: h.origin.url("/small"))))
            #expect(smallError == nil && small == Data("hello".utf8))
            let missing = h.cache.stream(CacheRequest(url: h.origin.url("/missing")))
            let (body, error) = await Self.drain(missing)
            #expect(error == nil && body == Data("not here".utf8))
            #expect(try await missing.response().status == 404)
        }
    }
}
