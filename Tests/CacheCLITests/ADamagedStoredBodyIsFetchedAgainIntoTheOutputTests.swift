import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `get -o FILE` of a stored body copies it in the kernel while its crc32 is checked on another thread. A body
/// damaged on disk after it was stored is never left in FILE as the good body: FILE is emptied and the URL fetched
/// again from the origin (FILE ends with the origin's bytes), or — the origin gone — the run fails.
@Suite struct ADamagedStoredBodyIsFetchedAgainIntoTheOutputTests {
    /// Over the 8 MiB in-memory limit: a hit is served from the blob file.
    static let size = 10_000_000

    static func generated(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 256) }) }

    /// The largest file under `directory` (the stored blob).
    static func blob(under directory: URL) throws -> URL {
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])?
            .compactMap { $0 as? URL } ?? []
        let sized = files.map { ($0, (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        let largest = try #require(sized.max { $0.1 < $1.1 })
        #expect(largest.1 == size)
        return largest.0
    }

    @Test func theOutputEndsWithTheOriginsBytes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size)
        let url = origin.url("/big").absoluteString
        let output = cli.directory.appendingPathComponent("big.bin")
        #expect(await cli.run(["get", "-o", output.path, url]).code == 0)
        // An intact stored body: a hit, checked while copied.
        let hit = await cli.run(["get", "-o", output.path, url])
        #expect(hit.code == 0, "\(hit.err)")
        #expect(try Data(contentsOf: output) == Self.generated(Self.size))
        #expect(try await origin.hits("/big").total == 1)

        try FileDamage.flipByte(of: try Self.blob(under: cli.directory.appendingPathComponent("default")), at: 7_000_000)
        let run = await cli.run(["get", "-v", "-o", output.path, url])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.err.contains("the stored body turned out damaged after"), "\(run.err)")
        #expect(try Data(contentsOf: output) == Self.generated(Self.size))
        #expect(try await origin.hits("/big").total == 2)
        // The refetched body is stored again, intact.
        let after = await cli.run(["get", "-o", output.path, url])
        #expect(after.code == 0)
        #expect(try Data(contentsOf: output) == Self.generated(Self.size))
        #expect(try await origin.hits("/big").total == 2)
    }

    @Test func withTheOriginGoneTheRunFailsAndTheOutputHoldsNoneOfIt() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size)
        let url = origin.url("/big").absoluteString
        let first = cli.directory.appendingPathComponent("first.bin")
        #expect(await cli.run(["get", "-o", first.path, url]).code == 0)
        origin.stop()
        try FileDamage.flipByte(of: try Self.blob(under: cli.directory.appendingPathComponent("default")), at: 9_999_999)
        let output = cli.directory.appendingPathComponent("second.bin")
        let run = await cli.run(["get", "-o", output.path, url])
        #expect(run.code != 0, "\(run.err)")
        let left = (try? Data(contentsOf: output)) ?? Data()
        #expect(left.isEmpty, "\(left.count) bytes left in the output")
    }
}
