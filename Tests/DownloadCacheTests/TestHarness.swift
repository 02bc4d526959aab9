import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// One test's world: a live origin, a fixed clock, a fresh cache directory and a cache over them.
struct Harness {
    let origin: OriginServer
    let clock: FixedClock
    let directory: URL
    let cache: DownloadCache
    /// The real instant the harness was made (the clock started there).
    let start: Date

    /// Builds a harness; `configure` may adjust the cache configuration (transport, limits ...).
    static func make(_ configure: (inout DownloadCache.Configuration) -> Void = { _ in }) async throws -> Harness {
        let origin = try await OriginServer.start()
        let start = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let clock = FixedClock(start)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-client-tests-\(UUID().uuidString)", isDirectory: true)
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.now = clock.now
        configuration.log = { _ in }
        configure(&configuration)
        let cache = try DownloadCache(configuration: configuration)
        return Harness(origin: origin, clock: clock, directory: directory, cache: cache, start: start)
    }

    /// Moves the test clock and the origin's Date headers forward by `seconds` together.
    func advance(by seconds: TimeInterval) async throws {
        clock.advance(by: seconds)
        try await origin.setClockOffset(clock.date.timeIntervalSince(start))
    }

    /// Another cache instance on the same directory (a "second process" or a reopen).
    func reopen() throws -> DownloadCache {
        try DownloadCache(configuration: cache.configuration)
    }

    /// Stops the origin and deletes the cache directory.
    func tearDown() {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// GET `path` through the cache.
    func get(_ path: String, _ options: RequestOptions = RequestOptions(),
             headers: HTTPHeaders = HTTPHeaders()) async throws(DownloadError) -> CachedResponse {
        try await cache.response(for: CacheRequest(url: origin.url(path), headers: headers), options: options)
    }

    /// The origin's counters for `path`.
    func hits(_ path: String) async throws -> OriginServer.Hits {
        try await origin.hits(path)
    }

    /// The stored entries for GET `path`.
    func storedVariants(_ path: String) -> [EntryInfo] {
        cache.store.variants(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: origin.url(path)))
    }
}

/// Runs `body` with a fresh harness and always tears it down.
func withHarness(_ configure: (inout DownloadCache.Configuration) -> Void = { _ in },
                 _ body: (Harness) async throws -> Void) async throws {
    let harness = try await Harness.make(configure)
    defer { harness.tearDown() }
    try await body(harness)
}

extension CachedResponse {
    /// The body as UTF-8 text ("" when unreadable).
    var text: String { (try? data()).map { String(decoding: $0, as: UTF8.self) } ?? "" }
}

/// The transport's error for `request`, or `nil` when it was sent; the body goes to a temporary file removed after.
func failure(_ request: TransportRequest, via transport: any HTTPTransport) async -> TransportError? {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-transport-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    do throws(TransportError) {
        _ = try await transport.send(request, bodyFile: file, progress: nil)
        return nil
    } catch {
        return error
    }
}

/// A path under the system's temporary directory that does not exist yet (`dlcache-<prefix>-<UUID>`); the caller
/// removes what it creates there.
func temporaryFile(_ prefix: String = "test") -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-\(prefix)-\(UUID().uuidString)")
}

/// Sends a GET through `transport` to a `HostileOrigin` path that answers only after 30 s, cancels the task as soon
/// as the origin has received the request (polled every 10 ms, at most 10 s), and returns the transport's error
/// (`nil` when the send succeeded).
func errorOfASendCancelledInFlight(via transport: any HTTPTransport) async throws -> TransportError? {
    let origin = try await HostileOrigin.start()
    defer { origin.stop() }
    try origin.script("/slow", .http(headers: [("Content-Type", "text/plain")], body: "late", delay: 30))
    let file = temporaryFile("cancel")
    defer { try? FileManager.default.removeItem(at: file) }
    let task = Task { () async throws(TransportError) -> TransportResponse in
        try await transport.send(TransportRequest(url: origin.url("/slow"), timeout: 60), bodyFile: file, progress: nil)
    }
    for _ in 0..<1_000 where try origin.requests("/slow").isEmpty {
        try await Task.sleep(for: .milliseconds(10))
    }
    #expect(try origin.requests("/slow").count == 1, "the request never reached the origin")
    task.cancel()
    if case .failure(let error) = await task.result { return error as? TransportError }
    return nil
}

/// A cache over `transport` (no network) with `clock`, in a fresh directory the caller removes (returned too).
func makeScriptedCache(_ transport: ScriptedTransport, clock: FixedClock = FixedClock()) throws -> (DownloadCache, URL) {
    var configuration = DownloadCache.Configuration(directory: temporaryFile("scripted"))
    configuration.transport = transport
    configuration.now = clock.now
    configuration.log = { _ in }
    return (try DownloadCache(configuration: configuration), configuration.directory)
}
