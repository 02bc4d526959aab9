import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// The byte bar of a resumed download counts what the 206 brings against what that 206 announced: the bytes
/// kept from the interrupted transfer are written out too, and counting them against the 206's length drew
/// `16.0 MB / 15.1 MB … ETA 0s` for the whole transfer.
@Suite struct AResumedDownloadsBarStaysWithinItsTotalTests {
    static let size = 12_000_000

    /// Every `<count> <unit> / <total> <unit>` pair the bar drew, in bytes.
    static func counts(_ err: String) -> [(Double, Double)] {
        let units: [String: Double] = ["B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9]
        var pairs: [(Double, Double)] = []
        for frame in err.split(whereSeparator: { $0 == "\r" || $0 == "\n" }) {
            let words = frame.split(separator: " ").map(String.init)
            guard let slash = words.firstIndex(of: "/"), slash >= 2, slash + 2 < words.count,
                  let count = Double(words[slash - 2]), let countUnit = units[words[slash - 1]],
                  let total = Double(words[slash + 1]), let totalUnit = units[words[slash + 2]] else { continue }
            pairs.append((count * countUnit, total * totalUnit))
        }
        return pairs
    }

    @Test func theBarOfAResumeNeverRunsPastItsTotal() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/r").absoluteString
        // Cut after half the body: the first half is kept as a partial.
        try await origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"r1\"", truncate: true)
        let output = cli.directory.appendingPathComponent("r.bin")
        let cut = await cli.run(["get", url, "-o", output.path])
        #expect(cut.code != 0)
        // Paced, so the bar is drawn while the rest arrives.
        try await origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"r1\"", rate: 12_000_000)
        let resumed = await cli.run(["get", url, "-o", output.path], terminal: true)
        #expect(resumed.code == 0, "\(resumed.err)")
        #expect(try await origin.hits("/r").partial == 1, "the second get resumed with a 206")
        let pairs = Self.counts(resumed.err)
        #expect(!pairs.isEmpty, "\(resumed.err.debugDescription)")
        for (count, total) in pairs { #expect(count <= total * 1.001, "\(count) of \(total)") }
    }
}
