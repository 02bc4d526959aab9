import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `pin` / `unpin` of a URL of which only a partial download (an interrupted transfer) is kept says so, instead
/// of "nothing stored", and says how to get it pinned.
@Suite struct PinOfAPartialSaysItIsPartialTests {
    @Test func pinOfAPartialSaysItIsPartial() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 6_000_000,
                                   etag: "\"v1\"", holdAfter: 2_000_000)
        let url = origin.url("/slow").absoluteString
        let output = cli.directory.appendingPathComponent("slow.bin")
        let interrupted = await cli.run(["get", "--max-time", "1", "-o", output.path, url])
        #expect(interrupted.code == 28, "\(interrupted.err)")
        let ls = await cli.run(["ls"])
        try #require(ls.out.contains("partial"), "\(ls.out)")
        let pin = await cli.run(["pin", url])
        #expect(pin.code != 0)
        #expect(pin.err.contains("not cached: only a partial download of \(url) is kept ("), "\(pin.err)")
        #expect(pin.err.contains("from an interrupted transfer); a partial cannot be pinned: `dlcache get --pin URL` "
                                 + "resumes it and pins the complete response"), "\(pin.err)")
        let absent = await cli.run(["pin", origin.url("/absent").absoluteString])
        #expect(absent.err.contains("not cached: nothing stored for"), "\(absent.err)")
    }
}

extension PinOfAPartialSaysItIsPartialTests {
    /// `get --pin` interrupted: the partial keeps no pin, and the message says so.
    @Test func anInterruptedPinnedGetSaysThePinIsNotKept() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 6_000_000,
                                   etag: "\"v1\"", holdAfter: 2_000_000)
        let output = cli.directory.appendingPathComponent("slow.bin")
        let run = await cli.run(["get", "--pin", "--max-time", "1", "-o", output.path, origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(run.err.contains("are kept and the next get resumes from there (not pinned: a partial keeps no pin, "
                                 + "so resume it with get --pin to pin the complete response)"), "\(run.err)")
    }
}
