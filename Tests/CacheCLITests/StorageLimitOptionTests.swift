import CacheTestSupport
import Foundation
import Testing
@testable import CacheCLI

/// `--max-disk SIZE` / `--max-entry SIZE` (K/M/G suffixes, given on each run), `stats` showing the limits in
/// force, and `get --no-store` leaving nothing in the store's tmp/.
@Suite struct StorageLimitOptionTests {
    static let sizes: [(String, Int64)] = [
        ("65536", 65_536), ("1K", 1_024), ("500m", 524_288_000), ("2G", 2_147_483_648),
        ("1.5G", 1_610_612_736), ("10MB", 10_485_760), ("10MiB", 10_485_760), ("512k", 524_288),
        ("0.5kib", 512), ("12KB", 12_288), ("100b", 100),
    ]

    @Test(arguments: Self.sizes)
    func sizesParse(_ text: String, _ bytes: Int64) throws {
        #expect(try StorageLimitOptions.size(text, option: "max-disk") == bytes)
    }

    @Test(arguments: ["", "M", "1.5", "1T", "1 G", "99999999999G", "1.G", ".5G", "1.5.1G", "10iB", "10MBB", "1e3"])
    func badSizesAreUsageErrors(_ text: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["stats", "--max-disk", text])
        #expect(run.code == 64, "\(text)")
        #expect(run.err.contains("--max-disk"), "\(text)")
    }

    @Test(arguments: ["0", "-1", "-2G", "0K", "0.0001K"])
    func zeroAndNegativeSizesAreRefusedWithTheReason(_ text: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["stats", "--max-disk", text])
        #expect(run.code == 64, "\(text)")
        #expect(run.err.contains("--max-disk") && run.err.contains("must be greater than 0"), "\(text): \(run.err)")
    }

    @Test func limitsAreShownInTheBinaryUnitsTheyAreGivenIn() {
        #expect(StatsCommand.limitText(3 << 29) == "1.5 GiB (1610612736 bytes)")
        #expect(StatsCommand.limitText(10 << 20) == "10.0 MiB (10485760 bytes)")
        #expect(StatsCommand.limitText(512) == "512 B (512 bytes)")
    }

    @Test func statsPrintsTheLimitsInForce() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/a", headers: [("Cache-Control", "max-age=60")], body: "x")
        _ = await cli.run(["get", origin.url("/a").absoluteString])
        let defaults = await cli.run(["stats", "--json"])
        let object = try defaults.object()
        #expect(object["maxDiskBytes"] as? Int == 1 << 30)
        #expect(object["maxEntryBytes"] as? Int == (1 << 30) / 8)
        let given = await cli.run(["stats", "--max-disk", "2G", "--max-entry", "600M"])
        #expect(given.code == 0)
        #expect(given.out.contains("max disk 2.0 GiB (2147483648 bytes)"), "\(given.out)")
        #expect(given.out.contains("max entry 600.0 MiB (629145600 bytes)"), "\(given.out)")
    }

    @Test func maxEntryKeepsALargeBodyOutOfTheCache() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=60")], size: 200_000)
        let url = origin.url("/big").absoluteString
        let first = await cli.run(["get", "--max-entry", "100K", "-o", "big.bin", url])
        #expect(first.code == 0)
        #expect(try Data(contentsOf: cli.directory.appendingPathComponent("big.bin")).count == 200_000)
        _ = await cli.run(["get", "--max-entry", "100K", "-o", "big.bin", url])
        #expect(try await origin.hits("/big").total == 2)
        _ = await cli.run(["get", "--max-entry", "1M", "-o", "big.bin", url])
        _ = await cli.run(["get", "--max-entry", "1M", "-o", "big.bin", url])
        #expect(try await origin.hits("/big").total == 3)
    }

    @Test func theDriverTakesTheStorageLimits() async throws {
        let bad = try DriverProcess(arguments: ["--max-disk", "1T"])
        bad.closeInput()
        #expect(bad.waitForExit() == 64)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=60")], size: 200_000)
        try await origin.configure(path: "/small", headers: [("Cache-Control", "max-age=60")], size: 50_000)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-driver-limits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let driver = try DriverProcess(arguments: ["--cache-dir", directory.path, "--max-entry", "100K"])
        for (id, path) in [(1, "/big"), (2, "/small")] { driver.send(DriverBinaryTests.line(id: id, url: origin.url(path))) }
        _ = try await driver.waitForAnswers(2)
        for (id, path) in [(3, "/big"), (4, "/small")] { driver.send(DriverBinaryTests.line(id: id, url: origin.url(path))) }
        driver.closeInput()
        #expect(driver.waitForExit() == 0)
        #expect(try driver.answers.map(DriverAnswer.init).allSatisfy { $0.status == 200 })
        // Over --max-entry: delivered, not stored, fetched again; under it: stored once.
        #expect(try await origin.hits("/big").total == 2)
        #expect(try await origin.hits("/small").total == 1)
    }

    @Test func noStoreLeavesNothingInTmp() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/n", headers: [("Cache-Control", "max-age=60")], size: 20 << 20)
        let run = await cli.run(["get", "--no-store", "-o", "n.bin", origin.url("/n").absoluteString])
        #expect(run.code == 0)
        let tmp = cli.directory.appendingPathComponent("default/tmp")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty)
        #expect(try Data(contentsOf: cli.directory.appendingPathComponent("n.bin")).count == 20 << 20)
    }
}
