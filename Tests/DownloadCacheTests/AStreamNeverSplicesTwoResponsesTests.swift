import CacheTestSupport
@testable import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// A streamed 2xx whose transfer fails after some of its bytes were delivered, when the call then answers with
/// the stored (stale) copy (RFC 9111 §4.2.4 fallback): the stream ends with an error after the new response's
/// bytes, and never continues them with the stored copy's bytes from the same offset.
@Suite struct AStreamNeverSplicesTwoResponsesTests {
    @Test(.timeLimit(.minutes(5)))
    func aFailedRefetchAnsweredWithTheStaleCopyEndsTheStreamInsteadOfSplicing() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let size = 2 << 20
        let stored = String(repeating: "A", count: size)
        let cut = String(repeating: "B", count: size * 3 / 4)
        try origin.script("/splice", [
            .http(headers: [("Cache-Control", "max-age=0"), ("ETag", "\"a\"")], body: stored),
            // Declares the whole length, trickles three quarters of it, then closes: a truncated 200.
            .init("HTTP/1.1 200 OK\r\nCache-Control: max-age=0\r\nETag: \"b\"\r\nContent-Length: \(size)\r\n\r\n" + cut,
                  trickle: (from: nil, bytes: 256 << 10, interval: 0.05), then: .close),
        ])
        var configuration = DownloadCache.Configuration(directory: temporaryFile("splice"))
        configuration.log = { _ in }
        defer { try? FileManager.default.removeItem(at: configuration.directory) }
        let cache = try DownloadCache(configuration: configuration)
        let request = CacheRequest(url: origin.url("/splice"))
        let first = try await cache.response(for: request)
        #expect(first.status == 200 && first.bodySize == Int64(size))

        var options = RequestOptions()
        options.fallbackToCacheIfLoadFails = true
        let stream = cache.stream(request, options: options)
        let (bytes, error) = await BodyStreamsWhileItIsStoredTests.drain(stream)
        let answered = try await stream.response()
        #expect(answered.source == .stale)
        #expect(try origin.requests("/splice").count == 2)
        let sawNew = bytes.contains(UInt8(ascii: "B")), sawStored = bytes.contains(UInt8(ascii: "A"))
        #expect(!(sawNew && sawStored), "the stream spliced the new response's bytes with the stored copy's")
        if let error {
            #expect(error.code == .truncated, "\(error)")
            #expect(sawNew && bytes.count < size)
        } else {
            #expect(bytes == Data(stored.utf8))
        }
    }
}
