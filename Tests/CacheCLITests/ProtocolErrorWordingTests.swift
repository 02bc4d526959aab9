import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// Broken origin heads end as protocol errors in plain words: a response head over libcurl's 300 KB limit, and an
/// unsolicited 101 Switching Protocols to a plain GET (never a success whose "body" is the other protocol).
@Suite(.serialized) struct ProtocolErrorWordingTests {
    @Test func aHeadOverThreeHundredKilobytesIsAProtocolError() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let filler = String(repeating: "x", count: 1000)
        let headers = (0..<400).map { ("X-Filler-\($0)", filler) }
        try origin.script("/fat", .http(headers: headers, body: "body"))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", origin.url("/fat").absoluteString])
        #expect(run.code == 1, "\(run.code) \(run.err)")
        #expect(run.err.hasPrefix("Error: protocol error:"), "\(run.err)")
        #expect(run.err.contains("response header too large (more than 300 KB of header lines"))
        #expect(run.out.isEmpty)
    }

    @Test func anUnsolicitedSwitchingProtocolsIsAProtocolError() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/switch", HostileOrigin.Response(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nOTHER-PROTOCOL-BYTES"))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", origin.url("/switch").absoluteString])
        #expect(run.code == 1, "\(run.code) \(run.err)")
        #expect(run.err.contains("unsolicited 101 Switching Protocols"), "\(run.err)")
        #expect(!run.out.contains("OTHER-PROTOCOL"))
        let again = await cli.run(["get", "--policy", "dont-load", origin.url("/switch").absoluteString])
        #expect(again.code == 1)
    }
}
