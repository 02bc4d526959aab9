import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// `--limit-rate SPEED` paces the transfer (libcurl's receive limit) and the body written out, with curl's
/// 1024-based suffixes; `0` means no limit.
@Suite struct LimitRateTests {
    @Test func speedsUseCurlsSuffixes() throws {
        func rate(_ text: String) throws -> Int64? {
            try RateLimit.parse(ArgumentParser.parse(["--limit-rate", text], options: [RateLimit.spec], positionals: []))
        }
        #expect(try rate("100K") == 102_400)
        #expect(try rate("1.5M") == 1_572_864)
        #expect(try rate("2g") == 2 << 30)
        #expect(try rate("4096") == 4096)
        #expect(try rate("0") == nil)
        #expect(throws: UsageError.self) { try rate("fast") }
        #expect(throws: UsageError.self) { try rate("-1K") }
    }

    @Test func thePauseKeepsTheAverageAtTheRate() {
        #expect(RateLimit.pause(written: 100_000, elapsed: 0, rate: 100_000) == 1)
        #expect(RateLimit.pause(written: 100_000, elapsed: 0.25, rate: 100_000) == 0.75)
        #expect(RateLimit.pause(written: 100_000, elapsed: 2, rate: 100_000) == 0)
        #expect(RateLimit.piece(rate: 100) == 1024)
        #expect(RateLimit.piece(rate: 1_000_000) == 100_000)
        #expect(RateLimit.piece(rate: 1 << 30) == 256 << 10)
    }

    /// 20 MB at 100 KiB/s needs minutes (libcurl 7.88 lets the first megabytes through at once, then paces): with a
    /// 3 s limit the paced transfer times out, the unpaced one does not.
    @Test func theTransferFromTheOriginIsPaced() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/20000000").absoluteString
        let paced = await cli.run(["get", "--no-store", "--limit-rate", "100K", "--max-time", "3", "-o", "/dev/null", url])
        #expect(paced.code == 28, "\(paced.err)")
        let free = await cli.run(["get", "--no-store", "--max-time", "20", "-o", "/dev/null", url])
        #expect(free.code == 0, "\(free.err)")
    }

    @Test func aPacedBodyFromTheCacheIsWrittenWhole() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/300000").absoluteString
        let first = await cli.run(["get", "-o", "/dev/null", url])
        #expect(first.code == 0)
        let output = cli.directory.appendingPathComponent("paced.bin")
        let hit = await cli.run(["get", "--limit-rate", "4M", "-o", output.path, "-w", "%{cache_status}", url])
        #expect(hit.code == 0 && hit.out == "HIT")
        let bytes = try Data(contentsOf: output)
        #expect(bytes.count == 300_000)
        #expect(bytes.enumerated().allSatisfy { $0.element == UInt8($0.offset % 256) })
        #expect(try await origin.hits("/size/300000").total == 1)
    }
}
