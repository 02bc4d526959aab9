import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// What the client sends and keeps, against the live origin: stored bodies checked against the index, one origin
/// request per GET, request and response fields passed through as given, downloads in the store's tmp/, URL
/// validation, per-origin limits, HEAD from a stored GET.
@Suite struct MessageFidelityTests {
    /// How a stored blob gets damaged on disk.
    enum Damage: String, CaseIterable, Sendable {
        case truncated, bitFlipped, emptied
    }

    /// Damages the file at `url` in place.
    static func damage(_ url: URL, _ kind: Damage) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        switch kind {
        case .truncated: try handle.truncate(atOffset: 100_000)
        case .emptied: try handle.truncate(atOffset: 0)
        case .bitFlipped:
            try handle.seek(toOffset: 150_000)
            let original = try handle.read(upToCount: 4) ?? Data()
            try handle.seek(toOffset: 150_000)
            try handle.write(contentsOf: Data(original.map { $0 ^ 0xFF }))
        }
    }

    /// A file-backed stored body (above `inMemoryBodyLimit`) whose size or crc32 no longer matches
    /// the index is never served: the entry is dropped and the body fetched again.
    @Test(arguments: Damage.allCases)
    func damagedBlobServedByFileIsRefetched(_ kind: Damage) async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10 }) { h in
            let first = try await h.get("/size/300000")
            let blob = try #require(first.storedBodyURL)
            let hit = try await h.get("/size/300000")
            #expect(hit.source == .cache && hit.body == .file(blob))
            #expect(try await h.hits("/size/300000").total == 1)

            try Self.damage(blob, kind)
            let again = try await h.get("/size/300000")
            #expect(again.source == .network)
            #expect(try await h.hits("/size/300000").total == 2)
            let data = try again.data()
            #expect(data.count == 300_000 && data[150_001] == UInt8(150_001 % 256))
            // The refetched body is stored again and served (verified) from then on.
            let third = try await h.get("/size/300000")
            #expect(third.source == .cache)
            #expect(try third.data() == data)
            #expect(try await h.hits("/size/300000").total == 2)
        }
    }

    /// In a second process: damage after a verified hit in one instance is still caught by a new instance.
    @Test func damagedBlobIsCaughtByAnotherInstance() async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10 }) { h in
            let first = try await h.get("/size/300000")
            let blob = try #require(first.storedBodyURL)
            try Self.damage(blob, .bitFlipped)
            let other = try h.reopen()
            let response = try await other.response(for: CacheRequest(url: h.origin.url("/size/300000")))
            #expect(response.source == .network)
            #expect(try response.data()[150_000] == UInt8(150_000 % 256))
        }
    }

    /// A network response's `isFresh`/`age` describe the response as just received (§4.2, §4.2.3).
    @Test(arguments: [
        ("max-age=60", "100", false, 100.0),
        ("max-age=600", "100", true, 100.0),
        ("no-cache, max-age=600", nil, false, 0.0),
        ("max-age=600", nil, true, 0.0),
    ] as [(String, String?, Bool, Double)])
    func networkResponseFreshnessIsTheStoredResponses(_ cacheControl: String, _ ageHeader: String?,
                                                      _ fresh: Bool, _ age: Double) async throws {
        try await withHarness { h in
            var headers = [("Cache-Control", cacheControl)]
            if let ageHeader { headers.append(("Age", ageHeader)) }
            try await h.origin.configure(path: "/f", headers: headers, body: "x")
            let response = try await h.get("/f")
            #expect(response.source == .network)
            #expect(response.isFresh == fresh)
            #expect(response.age == age)
        }
    }

    /// Credentials in the URL never reach the stored metadata.
    @Test func storedMetadataURLHasNoUserInfo() async throws {
        try await withHarness { h in
            var components = try #require(URLComponents(url: h.origin.url("/size/10"), resolvingAgainstBaseURL: false))
            components.user = "user"
            components.password = "secret"
            let url = try #require(components.url)
            _ = try await h.cache.response(for: CacheRequest(url: url))
            let stored = h.storedVariants("/size/10")
            #expect(stored.count == 1)
            let metadata = try #require(stored.first.flatMap { StoredEntryMetadata.decode($0.metadata) })
            #expect(!metadata.url.contains("secret") && !metadata.url.contains("user@"))
            #expect(metadata.url == h.origin.url("/size/10").absoluteString)
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

    /// A download cut short by a kill (its file left in the store's `tmp/`) is removed when the cache
    /// is next opened by a process alone.
    @Test func leftoverDownloadIsRemovedAtTheNextOpen() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-leftover-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        var leftover: URL?
        do {
            let cache = try DownloadCache(configuration: configuration)
            let file = cache.store.directoryURL.appendingPathComponent("tmp/download-killed")
            #expect(FileManager.default.createFile(atPath: file.path, contents: Data(count: 1_000)))
            leftover = file
        }
        let file = try #require(leftover)
        #expect(FileManager.default.fileExists(atPath: file.path))
        _ = try DownloadCache(configuration: configuration)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// A slow origin does not hold back requests to another origin (the limit counts per origin).
    @Test func slowOriginDoesNotBlockAnotherOrigin() async throws {
        try await withHarness({ $0.maxConcurrentDownloads = 2 }) { h in
            let other = try await OriginServer.start()
            defer { other.stop() }
            // Counted at once, then 20 s between its 64 KiB chunks: these transfers only end when cancelled
            // (if the other origin's request had to wait for one of their slots, one would complete first).
            try await h.origin.configure(path: "/slow", size: 3 * 65_536, chunkDelay: 20)
            let slow = (0..<2).map { index in
                Task { () -> Bool in
                    do {
                        _ = try await h.get("/slow?\(index)")
                        return true
                    } catch {
                        return false
                    }
                }
            }
            // Wait (bounded) until both slow requests reached the origin and hold both slots of their origin.
            for _ in 0..<300 {
                if try await h.hits("/slow").total >= 2 { break }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            #expect(try await h.hits("/slow").total == 2)
            let fast = try await h.cache.response(for: CacheRequest(url: other.url("/size/10")))
            #expect(fast.bodySize == 10)
            for task in slow { task.cancel() }
            var completed: [Bool] = []
            for task in slow { completed.append(await task.value) }
            // Neither slow transfer had to complete for the other origin's answer to arrive.
            #expect(completed == [false, false])
        }
    }

    /// Request header fields go out as given (duplicates, order) with nothing added by the client.
    @Test func requestHeadersArePassedThroughUnchanged() async throws {
        try await withHarness { h in
            let headers: HTTPHeaders = [("X-A", "1"), ("X-B", "b"), ("X-A", "2")]
            let response = try await h.get("/echo-headers", headers: headers)
            let lines = response.text.split(separator: "\n").map(String.init)
            let sent = lines.filter { $0.hasPrefix("X-") }
            #expect(sent == ["X-A: 1", "X-B: b", "X-A: 2"])
            #expect(!lines.contains { $0.lowercased().hasPrefix("accept-language:") })
            #expect(!lines.contains { $0.lowercased().hasPrefix("accept-encoding:") })
        }
    }

    /// Response header fields keep order, duplicates and case, and the reason phrase is kept, from
    /// the network and again from the store.
    @Test func responseHeadersAndReasonSurviveTheStore() async throws {
        try await withHarness { h in
            let sent = [("X-A", "1"), ("Set-Cookie", "a=1"), ("X-A", "2"), ("Set-Cookie", "b=2"),
                        ("ETag", "\"v\""), ("Cache-Control", "max-age=600")]
            try await h.origin.configure(path: "/h", status: 299, headers: sent, body: "x", reason: "Custom Reason")
            for round in 0..<2 {
                let response = try await h.get("/h")
                #expect(response.source == (round == 0 ? .network : .cache))
                #expect(response.status == 299 && response.statusText == "Custom Reason")
                let interesting = response.headers.fields
                    .filter { ["x-a", "set-cookie", "etag", "cache-control"].contains($0.name.lowercased()) }
                    .map { [$0.name, $0.value] }
                #expect(interesting == sent.map { [$0.0, $0.1] })
            }
        }
    }

    /// A Latin-1 byte in a response header does not fail the fetch.
    @Test func latin1ResponseHeaderDoesNotFailTheFetch() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/latin", headers: [("X-Latin", "caf\u{E9}")], body: "ok")
            let response = try await h.get("/latin")
            #expect(response.status == 200 && response.text == "ok")
            #expect(response.headers.first("X-Latin")?.hasPrefix("caf") == true)
        }
    }

    /// A port outside 1...65535 is an invalid URL, reported before any connection attempt.
    @Test(arguments: ["http://127.0.0.1:99999/x", "http://127.0.0.1:0/x", "http://[::1]:70000/x"])
    func outOfRangePortIsAnInvalidURL(_ text: String) async throws {
        try await withHarness { h in
            let url = try #require(URL(string: text))
            do throws(DownloadError) {
                _ = try await h.cache.response(for: CacheRequest(url: url))
                Issue.record("\(text) must be refused")
            } catch {
                #expect(error.code == .invalidURL)
            }
        }
    }

    /// An IPv6 literal URL is a valid URL: an unreachable one fails as a connection failure, not
    /// as an invalid URL (with the default transport; see the report for URLSessionTransport).
    @Test(arguments: [false, true])
    func ipv6LiteralURLIsAccepted(_ urlSession: Bool) async throws {
        try await withHarness({ if urlSession { $0.transport = URLSessionTransport(timeout: 20) } }) { h in
            let url = try #require(URL(string: "http://[::1]:9/x"))
            do throws(DownloadError) {
                _ = try await h.cache.response(for: CacheRequest(url: url))
                Issue.record("nothing listens on [::1]:9")
            } catch {
                if urlSession {
                    // FoundationNetworking cannot reach IPv6 literals (swift-corelibs-foundation #5496): a clear
                    // refusal instead of "NSURLErrorDomain error -1000".
                    #expect(error.code == .other && error.detail.contains("IPv6"), "\(error)")
                } else {
                    #expect(error.code == .connectionFailed, "\(error)")
                }
            }
        }
    }
}

extension MessageFidelityTests {
    /// HEAD is answered from a fresh stored GET response (RFC 9111 §4.3.5) and goes to the origin once stale.
    @Test func headIsAnsweredFromAFreshStoredGet() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hg", headers: [("Cache-Control", "max-age=600")], body: "body",
                                         etag: "\"g\"")
            _ = try await h.get("/hg")
            let head = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/hg")))
            #expect(head.source == .cache && head.status == 200 && head.bodySize == 0 && head.isFresh)
            #expect(head.headers.first("ETag") == "\"g\"" && head.headers.first("Content-Length") == "4")
            #expect(try await h.hits("/hg").methods["HEAD"] == nil)
            try await h.advance(by: 700)
            let late = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/hg")))
            #expect(late.source == .network)
            #expect(try await h.hits("/hg").methods["HEAD"] == 1)
        }
    }
}

