import CacheSystem
import CacheTestSupport
@testable import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// `ResponseStream.Iterator.nextRegion(maxBytes:)` with `BodyRegion.write(to:)`: regions copied into a file
/// descriptor (in the kernel) add up to exactly the body, while it is being received and from a stored blob; a
/// region never exceeds the bytes asked for; an output that refuses the bytes is told apart from the body's file.
@Suite struct StreamRegionsCopyTheWholeBodyTests {
    static let size = 3_000_000

    /// Copies every region of `stream` (at most `maxBytes` each) into a new file; returns its bytes, the number
    /// of regions and the largest one.
    static func copyRegions(_ stream: ResponseStream, maxBytes: Int) async throws -> (Data, regions: Int, largest: Int) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("regions-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = cs_open_output(url.path, 0o600)
        #expect(fd >= 0)
        var iterator = stream.makeAsyncIterator()
        var regions = 0, largest = 0
        while let region = try await iterator.nextRegion(maxBytes: maxBytes) {
            regions += 1
            largest = max(largest, region.count)
            try region.write(to: fd)
        }
        _ = cs_close(fd)
        return (try Data(contentsOf: url), regions, largest)
    }

    @Test func regionsOfABodyBeingReceivedAddUpToTheBody() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         rate: 3_000_000)
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/slow")))
            let (bytes, regions, largest) = try await Self.copyRegions(stream, maxBytes: 1 << 20)
            #expect(bytes == BodyStreamsWhileItIsStoredTests.generated(Self.size))
            #expect(regions >= 3 && largest <= 1 << 20)
            #expect(try await stream.response().source == .network)
            #expect(h.storedVariants("/slow").count == 1)
        }
    }

    @Test func regionsOfAStoredBodyAddUpToTheBody() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hit", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            _ = try await h.get("/hit")
            let stream = h.cache.stream(CacheRequest(url: h.origin.url("/hit")))
            let (bytes, regions, largest) = try await Self.copyRegions(stream, maxBytes: 1 << 20)
            #expect(bytes == BodyStreamsWhileItIsStoredTests.generated(Self.size))
            #expect(regions == 3 && largest == 1 << 20)
            #expect(try await stream.response().source == .cache)
            #expect(try await h.hits("/hit").total == 1)
            #expect(stream.peakBufferedBytes == 0)
        }
    }

    @Test func anOutputThatRefusesTheBytesIsReportedAsTheOutput() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hit", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            _ = try await h.get("/hit")
            var iterator = h.cache.stream(CacheRequest(url: h.origin.url("/hit"))).makeAsyncIterator()
            let region = try #require(try await iterator.nextRegion(maxBytes: 1 << 20))
            // A descriptor open for reading only: every kind of copy into it fails.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-ro-\(UUID().uuidString)")
            #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))
            defer { try? FileManager.default.removeItem(at: file) }
            let readOnly = cs_open_file(file.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            defer { _ = cs_close(readOnly) }
            #expect(readOnly >= 0)
            var failure: BodyRegion.WriteFailure?
            do throws(BodyRegion.WriteFailure) { try region.write(to: readOnly) } catch { failure = error }
            #expect(failure?.isOutput == true && (failure?.systemError ?? 0) != 0)
        }
    }
}
