import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// A body over the disk limit in force keeps no partial, whether its transfer starts fresh or would resume one
/// kept under larger limits: that partial is dropped and the body fetched whole, without a Range.
@Suite struct APartialOverTheDiskLimitIsNotResumedTests {
    @Test func aKeptPartialOfABodyOverTheDiskLimitIsDroppedAndTheBodyFetchedWhole() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let (output, _) = try await KeptPartialSetup.make(origin, cli)
        // The partial (1.5 MB) fits under 2 MiB, the body (3 MB) does not: a fresh transfer of it would keep
        // nothing, so a resumed one keeps nothing either.
        let run = await cli.run(["get", "--max-disk", "2M", "-o", output.path, origin.url("/cut").absoluteString])
        #expect(run.code == 0, "\(run.err)")
        #expect(try Data(contentsOf: output).count == 3_000_000)
        #expect(try await origin.hits("/cut").ranged == 0)
        #expect(try KeptPartialSetup.tmpFiles(cli).isEmpty)
    }
}
