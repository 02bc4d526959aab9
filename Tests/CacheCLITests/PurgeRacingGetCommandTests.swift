import Foundation
import Testing
import CacheTestSupport

/// `dlcache purge --all` (a real process) racing `dlcache get -o FILE` (a real process) of a body over 8 MiB: a get
/// that found the entry reads it through the blob it holds open, one that did not fetches it again; every get
/// writes the exact bytes and none fails with "cannot read cached body".
@Suite(.serialized) struct PurgeRacingGetCommandTests {
    /// Whether the file at `url` holds the origin's generated `/size/<size>` body (byte `i` is `i % 256`), read
    /// in 1 MiB chunks so the test never holds 8 MiB copies.
    static func holdsGenerated(_ url: URL, size: Int) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let pattern = Data((0..<((1 << 20) + 256)).map { UInt8(truncatingIfNeeded: $0) })
        var offset = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            let start = offset % 256
            if chunk != pattern[start..<(start + chunk.count)] { return false }
            offset += chunk.count
        }
        return offset == size
    }

    @Test func everyGetRacingAPurgeWritesTheExactBody() async throws {
        guard ExecutableTests.binary != nil else { return }
        let origin = try OriginServer()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-race-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = 8 * 1024 * 1024 + 511
        let url = origin.url("/size/\(size)").absoluteString
        let output = directory.appendingPathComponent("out.bin")
        let first = try await UnusableCacheCommandTests.run(["get", url, "-o", output.path], directory: directory)
        #expect(first.status == 0, "\(first.err)")
        for round in 0..<6 {
            try Data("previous".utf8).write(to: output)
            async let purge = UnusableCacheCommandTests.run(["purge", "--all"], directory: directory)
            let get = try await UnusableCacheCommandTests.run(["get", "-v", url, "-o", output.path], directory: directory)
            let purged = try await purge
            #expect(purged.status == 0, "round \(round): \(purged.err)")
            #expect(get.status == 0, "round \(round): \(get.err)")
            #expect(!get.err.contains("cannot read cached body"), "round \(round): \(get.err)")
            #expect(try Self.holdsGenerated(output, size: size), "round \(round)")
            // Between rounds the entry is stored again, so the next get can find it while the purge runs.
            let refill = try await UnusableCacheCommandTests.run(["get", url, "-o", "/dev/null"], directory: directory)
            #expect(refill.status == 0, "\(refill.err)")
        }
    }
}
