import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// Requests to an HTTP/2 origin share one connection; a transfer paced by `maxReceiveBytesPerSecond` runs on a
/// connection of its own, so it never holds back the other streams (libcurl paces a transfer by not reading its
/// connection: on a shared one every other stream waited until the paced one had ended).
@Suite(.enabled(if: NginxServer.binary != nil, "needs nginx (Scripts/bootstrap.sh installs it)"))
struct APacedTransferDoesNotHoldBackOtherStreamsOfAnHTTP2ConnectionTests {
    @Test func smallRequestsFinishWhileAPacedOneRuns() async throws {
        let nginx = try NginxServer { www in
            // 100 MB paced at 50 KB/s: about half an hour, so it is still running whatever the machine's load.
            let big = www.appendingPathComponent("big")
            _ = FileManager.default.createFile(atPath: big.path, contents: nil)
            let handle = try FileHandle(forWritingTo: big)
            try handle.truncate(atOffset: 100_000_000)
            try handle.close()
            for i in 0..<8 { try Data("small \(i)".utf8).write(to: www.appendingPathComponent("s\(i)")) }
        }
        defer { nginx.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-paced-h2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.tlsTrust = TLSTrust(caFile: nginx.caFile)
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        var paced = RequestOptions()
        paced.maxReceiveBytesPerSecond = 50_000
        let bigURL = try #require(URL(string: nginx.url("/big")))
        let big = Task { _ = try await cache.response(for: CacheRequest(url: bigURL), options: paced).data() }
        // The paced stream under way first, so the small ones would join its connection if they could.
        try await Task.sleep(for: .milliseconds(300))
        let urls = try (0..<8).map { try #require(URL(string: nginx.url("/s\($0)"))) }
        let smalls = Task { () -> [Data] in
            var bodies: [Data] = []
            for url in urls { bodies.append(try await cache.response(for: CacheRequest(url: url)).data()) }
            return bodies
        }
        // Bounded: held back behind the paced transfer they would take about half an hour.
        let finished = await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask { (try? await smalls.value) != nil }
            group.addTask {
                try? await Task.sleep(for: .seconds(120))
                return false
            }
            let first = await group.next() ?? false
            smalls.cancel()
            group.cancelAll()
            return first
        }
        #expect(finished, "the small requests did not finish while the paced one ran")
        if finished { #expect(try await smalls.value == (0..<8).map { Data("small \($0)".utf8) }) }
        big.cancel()
        _ = await big.result
        await cache.close()
        let log = nginx.accessLog(atLeast: 8)
        let small = log.filter { $0.contains(" /s") }
        #expect(small.count == 8 && small.allSatisfy { $0.contains(" HTTP/2.0 200 ") }, "\(log)")
    }
}
