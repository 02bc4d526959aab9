import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Bodies: one origin request per GET whatever the size or framing, truncation is never stored and leaves no file,
/// large bodies stream to a file in the store's `tmp/` with bounded memory.
@Suite struct TransferIntegrationTests {
    @Test func truncatedBodyIsAnErrorAndIsNotStored() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], size: 200_000,
                                         truncate: true)
            do throws(DownloadError) {
                _ = try await h.get("/t")
                Issue.record("a truncated body must fail")
            } catch {
                #expect(error.code == .truncated)
            }
            #expect(h.storedVariants("/t").isEmpty)
            #expect(h.cache.store.statistics.entries == 0)
        }
    }

    @Test func truncatedTransferNeverReplacesAGoodEntry() async throws {
        // Not served stale instead (RFC 9111 §4.2.4 default), so the failure itself is seen.
        try await withHarness({ $0.servesStaleWhenDisconnected = false }) { h in
            try await h.origin.configure(path: "/g", headers: [("Cache-Control", "max-age=10")], body: "good body")
            _ = try await h.get("/g")
            let before = try #require(h.storedVariants("/g").first)
            try await h.advance(by: 60)
            try await h.origin.configure(path: "/g", headers: [("Cache-Control", "max-age=10")], size: 100_000,
                                         truncate: true)
            await #expect(throws: DownloadError.self) { _ = try await h.get("/g") }
            let after = try #require(h.storedVariants("/g").first)
            #expect(after.checksum == before.checksum && after.bodySize == before.bodySize)
            let cached = try await h.get("/g", RequestOptions(policy: .returnCacheDataDontLoad))
            #expect(cached.text == "good body")
        }
    }

    @Test func largeBodyStreamsToAFile() async throws {
        let size = 200_000_000
        // Above the default per-entry limit (1/8 of 1 GiB): raised so the body is stored.
        try await withHarness({ $0.maxEntryBytes = 256 << 20 }) { h in
            let response = try await h.get("/size/\(size)")
            #expect(response.bodySize == Int64(size))
            guard case .file(let file) = response.body else {
                Issue.record("a body above inMemoryBodyLimit must be returned as a file")
                return
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.size] as? NSNumber)?.int64Value == Int64(size))
            #expect(response.storedBodyURL == file)
            // Spot-check content: byte i of a generated body is i % 256.
            let handle = try FileHandle(forReadingFrom: file)
            try handle.seek(toOffset: 123_456_789)
            let bytes = try handle.read(upToCount: 4) ?? Data()
            try handle.close()
            #expect(Array(bytes) == (0..<4).map { UInt8((123_456_789 + $0) % 256) })
            let hit = try await h.get("/size/\(size)")
            #expect(hit.source == .cache && hit.bodySize == Int64(size))
        }
    }

    /// The memory bound is measured in a process of its own (`dlcache get`): the test process's resident size also
    /// holds whatever the tests running beside this one allocate. The peak comes from `/usr/bin/time -f %M`, not
    /// from the spawned child's own `ru_maxrss`, which on Linux starts at this test process's resident size
    /// (see ``ChildProcess/peakResidentBytes``).
    @Test(.enabled(if: CrashIntegrationTests.dlcacheBinary != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/time"),
                   "dlcache is not built next to the tests, or /usr/bin/time is missing"))
    func largeBodyDownloadKeepsMemoryBounded() async throws {
        let binary = try #require(CrashIntegrationTests.dlcacheBinary)
        let size = 200_000_000
        try await withHarness { h in
            func peakResidentBytes(_ path: String, _ name: String) async throws -> Int64 {
                let root = h.directory.appendingPathComponent("\(name)-root").path
                let output = h.directory.appendingPathComponent("\(name).body").path
                let report = h.directory.appendingPathComponent("\(name).maxrss").path
                let outcome = try await ChildProcess.run(["/usr/bin/time", "-f", "%M", "-o", report, binary.path, "get",
                                                          h.origin.url(path).absoluteString,
                                                          "--cache-dir", root, "-o", output], timeout: .seconds(120))
                #expect(outcome.status == 0, "dlcache get \(path): \(outcome.errorOutput)")
                #expect((try FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber)?.intValue
                        == Int(path.split(separator: "/").last ?? "") ?? -1)
                let kilobytes = try String(contentsOfFile: report, encoding: .utf8)
                    .split(whereSeparator: \.isNewline).last.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
                return try #require(kilobytes, "no peak size from /usr/bin/time") * 1024
            }
            let small = try await peakResidentBytes("/size/1000", "small")
            let large = try await peakResidentBytes("/size/\(size)", "large")
            let growth = large - small
            #expect(growth < 100_000_000, """
                a \(size / 1_000_000) MB download used \(growth / 1_000_000) MB more memory than a 1 KB one \
                (\(large / 1_000_000) MB vs \(small / 1_000_000) MB)
                """)
        }
    }

    /// One origin request per GET, whatever the body size or framing, with both transports.
    @Test(arguments: [false, true])
    func largeOrUnannouncedBodiesAreRequestedOnce(_ urlSession: Bool) async throws {
        try await withHarness({ if urlSession { $0.transport = URLSessionTransport(timeout: 20) } }) { h in
            let large = try await h.get("/size/3000000")
            #expect(large.bodySize == 3_000_000)
            #expect(try await h.hits("/size/3000000").total == 1)
            try await h.origin.configure(path: "/unannounced", headers: [("Cache-Control", "max-age=60")],
                                         size: 200_000, noContentLength: true)
            let unannounced = try await h.get("/unannounced")
            #expect(unannounced.bodySize == 200_000)
            #expect(try await h.hits("/unannounced").total == 1)
        }
    }

    /// Bodies are downloaded into the store's `tmp/` (cleaned by the store's recovery), and a
    /// truncated body's file is deleted at once.
    @Test(arguments: [false, true])
    func truncatedDownloadLeavesNoFile(_ urlSession: Bool) async throws {
        try await withHarness({ if urlSession { $0.transport = URLSessionTransport(timeout: 20) } }) { h in
            let temporary = h.cache.store.directoryURL.appendingPathComponent("tmp")
            try await h.origin.configure(path: "/cut", size: 3_000_000, truncate: true)
            await #expect(throws: DownloadError.self) { try await h.get("/cut") }
            let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
            #expect(left.isEmpty)
            // A large body that is not stored is handed over from the store's tmp/ directory.
            let notStored = try await h.get("/size/9000000?cc=no-store")
            guard case .file(let file) = notStored.body else {
                Issue.record("a 9 MB body should come back as a file")
                return
            }
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(file.deletingLastPathComponent().standardizedFileURL.path == temporary.standardizedFileURL.path)
        }
    }
}
