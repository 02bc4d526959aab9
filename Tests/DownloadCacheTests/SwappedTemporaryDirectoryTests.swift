import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// A process with write access to the cache directory replaces `<ns>/tmp` by a symbolic link to another
/// directory while a cache is open: the body files are created by the store relative to its open `tmp/`
/// descriptor and written through their descriptors, so nothing appears in the link's target and the download
/// still succeeds with the right bytes.
@Suite(.serialized) struct SwappedTemporaryDirectoryTests {
    /// 3 MB: streamed through a body file by every transport.
    static let body = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test(arguments: TransportKind.available)
    func aTemporaryDirectorySwappedForALinkReceivesNothing(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let head = "HTTP/1.1 200 OK\r\nContent-Length: \(Self.body.count)\r\nCache-Control: max-age=600\r\n\r\n"
        try origin.script("/large", [HostileOrigin.Response(raw: Data(head.utf8) + Self.body),
                                     HostileOrigin.Response(raw: Data(head.utf8) + Self.body)])
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-swap-\(UUID().uuidString)")
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-outside-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: root)
            try? FileManager.default.removeItem(at: outside)
        }
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        var configuration = DownloadCache.Configuration(directory: root)
        configuration.log = { _ in }
        configuration.transport = kind.make()
        let cache = try DownloadCache(configuration: configuration)

        let tmp = root.appendingPathComponent("default/tmp")
        try FileManager.default.moveItem(at: tmp, to: root.appendingPathComponent("default/tmp-moved"))
        try FileManager.default.createSymbolicLink(at: tmp, withDestinationURL: outside)

        let served = try await cache.response(for: CacheRequest(url: origin.url("/large")))
        #expect(try served.data() == Self.body)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        let again = try await cache.response(for: CacheRequest(url: origin.url("/large")))
        #expect(try again.data() == Self.body)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }
}
