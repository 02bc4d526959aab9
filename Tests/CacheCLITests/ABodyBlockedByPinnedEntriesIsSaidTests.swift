import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `get` of a body that does not fit beside the pinned entries within `--max-disk` (though within `--max-entry`)
/// delivers it, exits 0, evicts nothing and says why it was not stored.
@Suite struct ABodyBlockedByPinnedEntriesIsSaidTests {
    @Test func itIsDeliveredWithAWarningAndEvictsNothing() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let limits = ["--max-disk", "1M", "--max-entry", "1M"]
        try await origin.configure(path: "/pinned", headers: [("Cache-Control", "max-age=600")], size: 1_020_000)
        try await origin.configure(path: "/small", headers: [("Cache-Control", "max-age=600")], size: 5_000)
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: 300_000)
        let output = cli.directory.appendingPathComponent("out.bin")
        #expect(await cli.run(["get", "--pin", "-o", output.path] + limits + [origin.url("/pinned").absoluteString]).code == 0)
        #expect(await cli.run(["get", "-o", output.path] + limits + [origin.url("/small").absoluteString]).code == 0)
        let url = origin.url("/big").absoluteString
        let big = await cli.run(["get", "--json", "-o", output.path] + limits + [url])
        #expect(big.code == 0, "\(big.err)")
        #expect(try Data(contentsOf: output).count == 300_000)
        #expect(try big.object()["stored"] as? Bool == false)
        #expect(big.err == "Warning: not stored: the 300.0 KB body of \(url) does not fit beside the pinned entries "
                + "within the disk limit (--max-disk; `dlcache unpin` frees room); it was delivered, nothing was "
                + "evicted, and the next get downloads it again\n", "\(big.err)")
        let small = await cli.run(["get", "--json", "-o", output.path] + limits + [origin.url("/small").absoluteString])
        #expect(try small.object()["source"] as? String == "cache")
        #expect(try await origin.hits("/small").total == 1)
    }
}
