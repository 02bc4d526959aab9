import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// The age of a response fetched from the origin counts from when its head arrived (the response time of
/// RFC 9111 §4.2.3), not from the end of its body: a body that takes seconds to arrive is not seconds old.
@Suite struct TheAgeOfAFetchedResponseLeavesOutItsTransferTests {
    @Test func aSlowBodyIsNotAsOldAsItsTransfer() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-age-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)   // the real clock
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        // 4 MB at 1 MB/s: about 4 s between the head and the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 4_000_000,
                                   rate: 1_000_000)
        let started = Date()
        let response = try await cache.response(for: CacheRequest(url: origin.url("/slow")))
        let transfer = Date().timeIntervalSince(started)
        try #require(transfer > 3.5, "the body arrived in \(transfer) s: too fast to tell")
        // The origin's Date has one-second resolution; the head arrives a moment after it is sent.
        let age = try #require(response.age, "a network response carries its age")
        #expect(age < transfer - 1.5, "age \(age) s after a \(transfer) s transfer")
    }
}
