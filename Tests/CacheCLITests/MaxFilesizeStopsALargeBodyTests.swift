import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// `--max-filesize SIZE` (curl's option): a body announced larger fails before any of it is written, an endless
/// one once it grows past SIZE; exit 63, nothing stored, nothing left in `tmp/`. A body within it is fetched.
@Suite(.serialized) struct MaxFilesizeStopsALargeBodyTests {
    @Test func anAnnouncedBodyOverTheLimitFailsWithExit63() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: 3_000_000)
        let output = cli.directory.appendingPathComponent("big.bin")
        let run = await cli.run(["get", "--max-filesize", "1M", "-o", output.path, origin.url("/big").absoluteString])
        #expect(run.code == 63, "\(run.err)")
        #expect(run.err.contains("--max-filesize"), "\(run.err)")
        let written = (try? Data(contentsOf: output))?.count ?? 0
        #expect(written == 0)
        let left = try KeptPartialSetup.tmpFiles(cli)
        #expect(left.isEmpty, "\(left)")
        #expect(try #require(try await cli.run(["ls", "--json"]).json() as? [Any]).isEmpty)
        // Within the limit: fetched and stored as usual.
        let within = await cli.run(["get", "--max-filesize", "4M", "-o", output.path, origin.url("/big").absoluteString])
        #expect(within.code == 0, "\(within.err)")
        #expect(try Data(contentsOf: output).count == 3_000_000)
    }

    @Test func aKeptPartialOfABodyOverTheLimitIsNotResumedNorWritten() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let (output, _) = try await KeptPartialSetup.make(origin, cli)
        let run = await cli.run(["get", "--max-filesize", "1M", "-o", output.path, origin.url("/cut").absoluteString])
        #expect(run.code == 63, "\(run.err)")
        // Neither the held bytes nor any new one is written; no Range is sent; the partial stays for a later get.
        #expect(((try? Data(contentsOf: output))?.count ?? 0) == 0)
        #expect(try await origin.hits("/cut").ranged == 0)
        #expect(try KeptPartialSetup.tmpFiles(cli).count == 1)
    }

    @Test func anEndlessBodyStopsAtTheLimit() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/endless", headers: [("Cache-Control", "max-age=600")], rate: 8 << 20,
                                   endless: true)
        let output = cli.directory.appendingPathComponent("endless.bin")
        let run = await cli.run(["get", "--max-filesize", "1M", "--max-time", "60", "-o", output.path,
                                 origin.url("/endless").absoluteString])
        #expect(run.code == 63, "\(run.err)")
        let written = (try? Data(contentsOf: output))?.count ?? 0
        #expect(written <= 1 << 20)
        let left = try KeptPartialSetup.tmpFiles(cli)
        #expect(left.isEmpty, "\(left)")
    }
}
