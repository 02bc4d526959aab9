import Foundation
import Testing
import CacheTestSupport

/// `dlcache purge --all` (a real process) racing `dlcache get -o FILE` (a real process) of a body over 8 MiB: a get
/// that found the entry reads it through the blob it holds open, one that did not fetches it again; every get
/// writes the exact bytes and none fails with "cannot read cached body".
@Suite(.serialized) struct PurgeRacingGetCommandTests {
    /// Byte `i` of the origin's generated `/size/<n>` body is `i % 256`.
    static func generated(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0) }) }

    @Test func everyGetRacingAPurgeWritesTheExactBody() async throws {
        guard ExecutableTests.binary != nil else { return }
        let origin = try OriginServer()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-race-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = 8 * 1024 * 1024 + 511
        let url = origin.url("/size/\(size)").absoluteString
        let expected = Self.generated(size)
        let output = directory.appendingPathComponent("out.bin")
        let first = try await UnusableCacheCommandTests.run(["get", url, "-o", output.path], directory: directory)
        #expect(first.status == 0, "\(first.err)")
        for round in 0..<12 {
            try Data("previous".utf8).write(to: output)
            async let purge = UnusableCacheCommandTests.run(["purge", "--all"], directory: directory)
            let get = try await UnusableCacheCommandTests.run(["get", "-v", url, "-o", output.path], directory: directory)
            let purged = try await purge
            #expect(purged.status == 0, "round \(round): \(purged.err)")
            #expect(get.status == 0, "round \(round): \(get.err)")
            #expect(!get.err.contains("cannot read cached body"), "round \(round): \(get.err)")
            #expect(try Data(contentsOf: output) == expected, "round \(round)")
            // Between rounds the entry is stored again, so the next get can find it while the purge runs.
            let refill = try await UnusableCacheCommandTests.run(["get", url, "-o", "/dev/null"], directory: directory)
            #expect(refill.status == 0, "\(refill.err)")
        }
    }
}
