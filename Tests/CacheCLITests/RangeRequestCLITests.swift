import CacheTestSupport
import Foundation
import Testing
@testable import CacheCLI

/// `get -r/--range` (like curl's `-r`), `-H 'Range: ...'` and the driver's Range header: one range is cut from a
/// stored response without an origin request; the origin counts every request.
@Suite struct RangeRequestCLITests {
    @Test func getRangeIsCutFromTheStoredBody() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/t", headers: [("Cache-Control", "max-age=600")], body: "0123456789abcdef")
        let url = origin.url("/t").absoluteString
        #expect(await cli.run(["get", url]).out == "0123456789abcdef")
        let short = await cli.run(["get", "-r", "2-5", "-i", url])
        #expect(short.code == 0)
        #expect(short.out.hasPrefix("HTTP/1.1 206 Partial Content"))
        #expect(short.out.contains("Content-Range: bytes 2-5/16"))
        #expect(short.out.hasSuffix("2345"))
        let long = await cli.run(["get", "--range", "-3", url])
        #expect(long.out == "def")
        let header = await cli.run(["get", "-H", "Range: bytes=10-", url])
        #expect(header.out == "abcdef")
        let unsatisfiable = await cli.run(["get", "-f", "-r", "16-", url])
        #expect(unsatisfiable.code == 22)
        #expect(try await origin.hits("/t").total == 1)
    }

    @Test(arguments: ["", "5-3", "abc", "bytes=1-2"])
    func invalidRangeIsAUsageError(_ value: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-r", value, "http://127.0.0.1:9/x"])
        #expect(run.code == 64)
        #expect(run.err.contains("--range"))
    }

    @Test func rangeOptionAndRangeHeaderTogetherAreRefused() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-r", "0-1", "-H", "Range: bytes=2-3", "http://127.0.0.1:9/x"])
        #expect(run.code == 64)
    }

    @Test func driverRangeHeaderIsAnsweredFromTheCache() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/d", headers: [("Cache-Control", "max-age=3600")], body: "hello world")
            let first = try await driver.roundTrip(id: 1, path: "/d")
            #expect(first.status == 200)
            let part = try await driver.roundTrip(id: 2, path: "/d", headers: [["Range", "bytes=6-"]])
            #expect(part.status == 206)
            #expect(part.body == "world")
            #expect(part.header("Content-Range") == ["bytes 6-10/11"])
            let none = try await driver.roundTrip(id: 3, path: "/d", headers: [["Range", "bytes=11-"]])
            #expect(none.status == 416)
            #expect(none.header("Content-Range") == ["bytes */11"])
            #expect(try await driver.origin.hits("/d").total == 1)
        }
    }

    /// `-v` on a range of a URL with nothing stored says the range went to the origin, not that
    /// writing to the cache is off.
    @Test func verboseRangeOfAnUnstoredURLSaysItIsForwardedUncached() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-v", "-r", "0-3", origin.url("/size/100").absoluteString])
        #expect(run.code == 0)
        #expect(run.err.contains("a range of a URL with no stored response: forwarded to the origin, its 206 kept as partial content when it starts at byte 0"), "\(run.err)")
        #expect(!run.err.contains("writing to the cache is off"))
    }
}
