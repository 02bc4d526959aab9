import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// The production transport against the live origin: streaming, classification of failures, gzip trap.
@Suite struct URLSessionTransportTests {
    let transport = URLSessionTransport(timeout: 10)

    func bodyFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-transport-\(UUID().uuidString)")
    }

    @Test func streamsTheBodyIntoTheFileAndKeepsHeaderValues() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/b", headers: [("Cache-Control", "max-age=5"), ("X-Thing", "One")],
                                   size: 300_000, etag: "\"tag\"")
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await transport.send(TransportRequest(url: origin.url("/b")), bodyFile: file, progress: nil)
        #expect(response.status == 200 && response.bodySize == 300_000)
        // 300 KB is below the 1 MiB small-body limit: it comes back in memory.
        #expect(try (response.inMemoryBody ?? Data(contentsOf: file)).count == 300_000)
        #expect(response.headers.first("etag") == "\"tag\"" && response.headers.first("x-thing") == "One")
        #expect(response.decodedContentEncoding == nil)
    }

    @Test func bodyAboveTheSmallLimitStreamsIntoTheFile() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let small = URLSessionTransport(smallBodyLimit: 1_000)
        let response = try await small.send(TransportRequest(url: origin.url("/size/5000")), bodyFile: file, progress: nil)
        #expect(response.inMemoryBody == nil && response.bodySize == 5_000)
        let data = try Data(contentsOf: file)
        #expect(data.count == 5_000 && data[4_999] == UInt8(4_999 % 256))
        // Streamed to the file by the same data task: exactly one request reached the origin.
        #expect(try await origin.hits("/size/5000").total == 1)
    }

    @Test func gzipTrapHeadersAreCorrectedToMatchTheDecodedBody() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let text = String(repeating: "abcdefgh", count: 2_000)
        try await origin.configure(path: "/gz", body: text, gzip: true)
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await transport.send(TransportRequest(url: origin.url("/gz")), bodyFile: file, progress: nil)
        #expect(try String(decoding: response.inMemoryBody ?? Data(contentsOf: file), as: UTF8.self) == text)
        #expect(response.decodedContentEncoding == "gzip")
        #expect(response.headers.first("Content-Encoding") == nil)
        #expect(response.headers.first("Content-Length") == String(text.utf8.count))
    }
}

extension Result {
    /// The failure, or `nil` on success.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
