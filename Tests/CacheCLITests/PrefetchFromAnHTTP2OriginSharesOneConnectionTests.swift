import CacheTestSupport
import Foundation
import Testing

/// Against an origin that offers HTTP/2 (nginx with TLS, ALPN h2), the transfers of a prefetch run as streams of
/// one connection, as `curl --parallel` does: each new transfer waits to learn whether the connection being set
/// up multiplexes instead of opening its own. The bodies are stored and a second prefetch asks the origin nothing.
@Suite(.enabled(if: NginxServer.binary != nil, "needs nginx (Scripts/bootstrap.sh installs it)"))
struct PrefetchFromAnHTTP2OriginSharesOneConnectionTests {
    static let count = 24

    @Test func concurrentTransfersShareOneMultiplexedConnection() async throws {
        let nginx = try NginxServer { www in
            for i in 0..<Self.count { try Data("document \(i)\n".utf8).write(to: www.appendingPathComponent("\(i).txt")) }
        }
        defer { nginx.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let list = cli.directory.appendingPathComponent("urls.txt")
        try (0..<Self.count).map { nginx.url("/\($0).txt") }.joined(separator: "\n")
            .write(to: list, atomically: true, encoding: .utf8)

        let first = await cli.run(["prefetch", "--cacert", nginx.caFile, "--concurrency", "6", list.path])
        #expect(first.code == 0, "\(first.err)")
        let log = nginx.accessLog(atLeast: Self.count)
        #expect(log.count == Self.count, "\(log)")
        #expect(log.allSatisfy { $0.contains(" HTTP/2.0 200 ") }, "\(log)")
        let connections = Set(log.compactMap { $0.split(separator: " ").first })
        #expect(connections.count == 1, "\(connections.count) connections: \(log)")

        let get = await cli.run(["get", "--cacert", nginx.caFile, nginx.url("/7.txt")])
        #expect(get.code == 0 && get.out == "document 7\n", "\(get.err)")
        let second = await cli.run(["prefetch", "--cacert", nginx.caFile, "--concurrency", "6", list.path])
        #expect(second.code == 0, "\(second.err)")
        #expect(nginx.accessLog().count == Self.count, "the get and the second prefetch were answered from the cache")
    }
}
