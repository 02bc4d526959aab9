import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// Over TLS a transfer may wait for a connection being set up to the same origin, to learn from its handshake
/// whether it multiplexes (HTTP/2); against an HTTP/1.1 origin it then opens its own connection, so a slow
/// response does not hold back a fast request to the same origin.
@Suite struct ASlowHTTPSResponseDoesNotHoldBackTheOriginsNextRequestTests {
    @Test func theFastAnswerComesFirst() async throws {
        let tlsDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tlsDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tlsDirectory) }
        let tls = try OriginServer(timeout: 30, tlsDirectory: tlsDirectory)
        defer { tls.stop() }
        // 15 s: on a loaded 2-core machine the fast request's two TLS handshakes with the Python origin (the first
        // connection's, which it waits for, then its own) took several seconds.
        try await tls.configure(path: "/slow", body: "slow", delay: 15)
        try await tls.configure(path: "/fast", body: "fast")
        let slow = try #require(tls.tlsURL("/slow")).absoluteString
        let fast = try #require(tls.tlsURL("/fast")).absoluteString
        let caFile = tlsDirectory.appendingPathComponent("ca.pem").path
        try await withDriver(configure: { $0.tlsTrust = TLSTrust(caFile: caFile) }) { driver in
            driver.send(#"{"id":"slow","url":"\#(slow)"}"#)
            driver.send(#"{"id":"fast","url":"\#(fast)"}"#)
            let answers = try await driver.waitForAnswers(2)
            #expect(answers.map(\.stringID) == ["fast", "slow"], "\(answers.map(\.raw))")
            #expect(answers.map(\.body) == ["fast", "slow"])
        }
    }
}
