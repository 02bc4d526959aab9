import Foundation
import Testing
import CacheTestSupport

/// A URL's fragment (`#…`) is never sent to the origin and is not part of the cache key, and a token may travel in
/// it (`#access_token=…`): the stored URL has none, so `dlcache ls`, `ls --json` and `info` never show it and no
/// file of the cache holds it.
@Suite struct ListShowsNoFragmentTests {
    @Test func theStoredURLHasNoFragment() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/page", headers: [("Cache-Control", "max-age=600")], body: "page")
        let plain = origin.url("/page").absoluteString
        let secret = "access_token=s3cr3t-fragment-token"
        let got = await cli.run(["get", plain + "?q=1#" + secret])
        #expect(got.code == 0, "\(got.err)")
        #expect(got.out == "page")

        let list = await cli.run(["ls"])
        #expect(list.code == 0)
        #expect(list.out.contains(plain + "?q=1"), "\(list.out)")
        #expect(!list.out.contains("#") && !list.out.contains(secret), "\(list.out)")

        let json = await cli.run(["ls", "--json"])
        let entries = try #require(try json.json() as? [[String: Any]])
        #expect(entries.map { $0["url"] as? String } == [plain + "?q=1"])

        let info = await cli.run(["info", plain + "?q=1"])
        #expect(info.code == 0, "\(info.err)")
        #expect(!info.out.contains("#") && !info.out.contains(secret), "\(info.out)")

        // Not in the index or any other file of the cache either.
        let needle = Data(secret.utf8)
        for path in FileManager.default.subpaths(atPath: cli.directory.path) ?? [] {
            let file = cli.directory.appendingPathComponent(path)
            guard let data = try? Data(contentsOf: file) else { continue }
            #expect(data.range(of: needle) == nil, "\(path) holds the fragment")
        }
    }
}
