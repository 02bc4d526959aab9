import Foundation
import Testing
import CacheTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `dlcache verify` reads the verified prefix of every partial download kept to resume, as it reads every stored
/// body: a damaged one is a problem (`partial-body`, exit 1), `--repair` drops it and its file, and the next
/// `get` downloads the URL whole.
@Suite(.serialized) struct VerifyChecksThePartialsKeptToResumeTests {
    @Test func aDamagedPartialIsFoundAndRepaired() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        _ = try await KeptPartialSetup.make(origin, cli)
        let healthy = await cli.run(["verify"])
        #expect(healthy.code == 0, "\(healthy.out)")
        #expect(healthy.out.contains("checked 0 entries and 1 partial download: ok"), "\(healthy.out)")

        // One byte inside the verified prefix changed.
        let name = try #require(try KeptPartialSetup.tmpFiles(cli).first)
        let path = cli.directory.appendingPathComponent("default/tmp/\(name)").path
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        var byte: UInt8 = 0xEE
        #expect(pwrite(fd, &byte, 1, 1_000) == 1)
        close(fd)

        let damaged = await cli.run(["verify", "--json"])
        #expect(damaged.code == 1)
        let problems = try #require(try damaged.object()["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] as? String == "partial-body")
        #expect((problems.first?["detail"] as? String)?.contains("fail their checksum") == true, "\(problems)")
        #expect(try damaged.object()["checkedPartials"] as? Int == 1)

        let repaired = await cli.run(["verify", "--repair"])
        #expect(repaired.code == 0, "\(repaired.out)")
        #expect(try KeptPartialSetup.tmpFiles(cli).isEmpty)
        #expect((await cli.run(["verify"])).out.contains("checked 0 entries: ok"))

        // Nothing is resumed from the dropped partial: the whole body again, exactly.
        let output = cli.directory.appendingPathComponent("whole.bin")
        let whole = await cli.run(["get", "-o", output.path, origin.url("/cut").absoluteString])
        #expect(whole.code == 0, "\(whole.err)")
        #expect(try Data(contentsOf: output) == Data((0..<KeptPartialSetup.size).map { UInt8($0 % 256) }))
        #expect(try await origin.hits("/cut").ranged == 0)
    }
}
