import CacheTestSupport
import Foundation
import Testing
@testable import CacheCLI

/// `--max-disk SIZE` / `--max-entry SIZE` (K/M/G suffixes, given on each run), `stats` showing the limits in
/// force, and `get --no-store` leaving nothing in the store's tmp/.
@Suite struct StorageLimitOptionTests {
    @Test(arguments: [("65536", Int64(65_536)), ("1K", 1_024), ("500m", 500 << 20), ("2G", 2 << 30), ("0", 0)])
    func sizesParse(_ text: String, _ bytes: Int64) throws {
        #expect(try StorageLimitOptions.size(text, option: "max-disk") == bytes)
    }

    @Test(arguments: ["", "M", "1.5G", "-1", "1T", "1 G", "99999999999G", "12KB"])
    func badSizesAreUsageErrors(_ text: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["stats", "--max-disk", text])
        #expect(run.code == 64, "\(text)")
        #expect(run.err.contains("--max-disk"), "\(text)")
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
        #expect(given.out.contains("max disk 2.1 GB (2147483648 bytes)"), "\(given.out)")
        #expect(given.out.contains("max entry 629.1 MB (629145600 bytes)"), "\(given.out)")
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
