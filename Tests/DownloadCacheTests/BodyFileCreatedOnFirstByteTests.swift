import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// The body file of an exchange is created in the store's `tmp/` on the first byte the transport writes: a
/// response whose body the transport returns in memory (a small announced body) creates no file at all, and a
/// streamed body still lands in the store's `tmp/` and is stored.
@Suite struct BodyFileCreatedOnFirstByteTests {
    /// Answers every request with `body`, returned in memory (`inMemory`) or written to the body file, and records
    /// how many files the store's `tmp/` held while the exchange was in the transport's hands.
    final class ProbingTransport: HTTPTransport, Sendable {
        let body: Data
        let inMemory: Bool
        let temporaryDirectory: Mutex<URL?> = Mutex(nil)
        let filesSeen = Mutex<[Int]>([])

        init(body: Data, inMemory: Bool) {
            self.body = body
            self.inMemory = inMemory
        }

        func tmpCount() -> Int {
            guard let tmp = temporaryDirectory.withLock({ $0 }) else { return -1 }
            return ((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).count
        }

        func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
                  events: TransportEvents) async throws(TransportError) -> TransportResponse {
            var headers = HTTPHeaders()
            headers.add("Cache-Control", "max-age=600")
            headers.add("Content-Length", String(body.count))
            if !inMemory { try bodyFile.write(body) }
            filesSeen.withLock { $0.append(tmpCount()) }
            return TransportResponse(url: request.url, status: 200, headers: headers, bodySize: Int64(body.count),
                                     inMemoryBody: inMemory ? body : nil)
        }
    }

    func makeCache(_ transport: ProbingTransport, directory: URL) throws -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.transport = transport
        configuration.inMemoryBodyLimit = 64 << 10
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        transport.temporaryDirectory.withLock { $0 = cache.store.directoryURL.appendingPathComponent("tmp") }
        return cache
    }

    @Test(arguments: [4_000, 20_000])
    func aBodyReturnedInMemoryCreatesNoBodyFile(size: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lazy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let transport = ProbingTransport(body: body, inMemory: true)
        let cache = try makeCache(transport, directory: directory)
        let url = URL(string: "http://example.test/small")!
        let fetched = try await cache.response(for: CacheRequest(url: url))
        #expect(fetched.source == .network)
        #expect(try fetched.data() == body)
        #expect(transport.filesSeen.withLock { $0 } == [0], "no file in tmp/ during the exchange")
        let hit = try await cache.response(for: CacheRequest(url: url))
        #expect(hit.source == .cache)
        #expect(try hit.data() == body)
        #expect(transport.tmpCount() == 0)
        await cache.close()
    }

    @Test func aStreamedBodyIsWrittenIntoTheStoresTemporaryDirectoryAndStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lazy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let transport = ProbingTransport(body: body, inMemory: false)
        let cache = try makeCache(transport, directory: directory)
        let url = URL(string: "http://example.test/large")!
        let fetched = try await cache.response(for: CacheRequest(url: url))
        #expect(try fetched.data() == body)
        #expect(transport.filesSeen.withLock { $0 } == [1], "the body file is in the store's tmp/")
        let hit = try await cache.response(for: CacheRequest(url: url))
        #expect(hit.source == .cache)
        #expect(try hit.data() == body)
        #expect(transport.tmpCount() == 0)
        await cache.close()
    }

    /// The store's `tmp/` deleted after the cache opened: the streamed body goes to the private directory and the
    /// download still succeeds with the right bytes.
    @Test func aStreamedBodyFallsBackToThePrivateDirectoryWhenTmpIsGone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-lazy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })
        let transport = ProbingTransport(body: body, inMemory: false)
        let cache = try makeCache(transport, directory: directory)
        let tmp = cache.store.directoryURL.appendingPathComponent("tmp")
        try FileManager.default.removeItem(at: tmp)
        let fetched = try await cache.response(for: CacheRequest(url: URL(string: "http://example.test/large")!))
        #expect(try fetched.data() == body)
        guard case .file(let file) = fetched.body else {
            Issue.record("a 3 MB body was expected as a file")
            return
        }
        #expect(file.deletingLastPathComponent().lastPathComponent.hasPrefix("dlcache-downloads-"), "\(file.path)")
        await cache.close()
    }
}
