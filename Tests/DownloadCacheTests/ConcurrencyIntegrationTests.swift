import CacheTestSupport
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Synchronization
import Testing

/// Coalescing, cancellation of one waiter, and the download limit (counted per origin).
@Suite struct ConcurrencyIntegrationTests {
    @Test func hundredConcurrentCallsCauseOneOriginRequest() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=60")], size: 10_000, delay: 0.3)
            let responses = try await withThrowingTaskGroup(of: CachedResponse.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await h.get("/c") }
                }
                return try await group.reduce(into: [CachedResponse]()) { $0.append($1) }
            }
            #expect(responses.count == 100 && responses.allSatisfy { $0.bodySize == 10_000 })
            #expect(try await h.hits("/c").total == 1)
            // Cache-Status (RFC 9211 §2.6): one caller's miss went to the origin; those that waited for it are
            // `collapsed`; any that came after it was stored are plain hits.
            let statuses = responses.map(\.cacheStatus)
            #expect(statuses.filter { !$0.hit && !$0.collapsed }.count == 1)
            #expect(statuses.contains { $0.collapsed })
            #expect(statuses.filter(\.collapsed).allSatisfy { $0.fieldValue.contains("; collapsed") })
        }
    }

    @Test func cancellingOneWaiterDoesNotCancelTheSharedDownload() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/w", headers: [("Cache-Control", "max-age=60")], body: "shared", delay: 3)
            let cancelled = Task { try await h.get("/w") }
            let kept = Task { try await h.get("/w") }
            // Both wait for the one download (polled, at most 10 s) before one of them is cancelled.
            for _ in 0..<10_000 where h.cache.coalescer.waiterCount < 2 { try await Task.sleep(for: .milliseconds(1)) }
            #expect(h.cache.coalescer.waiterCount == 2)
            cancelled.cancel()
            let cancelledResult = await cancelled.result
            if case .failure(let error as DownloadError) = cancelledResult {
                #expect(error.code == .cancelled)
            } else {
                Issue.record("the cancelled waiter should fail with .cancelled, got \(cancelledResult)")
            }
            let response = try await kept.value
            #expect(response.text == "shared" && response.source == .network)
            #expect(try await h.hits("/w").total == 1)
            #expect(try await h.get("/w").source == .cache)
        }
    }

    @Test func downloadLimitIsRespected() async throws {
        let gate = GateTransport()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-limit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.maxConcurrentDownloads = 2
        configuration.transport = gate
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let tasks = (0..<6).map { i in
            Task { try await cache.response(for: CacheRequest(url: URL(string: "http://example.invalid/\(i)")!)) }
        }
        // Wait (bounded: 60 s, 60,000 checks) for the first two to start, then give a third
        // one the chance to start wrongly before checking that none did.
        let deadline = ContinuousClock.now + .seconds(60)
        for _ in 0..<60_000 where gate.started < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(gate.started == 2)
        gate.openAll()
        for task in tasks { _ = try await task.value }
        #expect(gate.started == 6 && gate.maxInFlight == 2)
    }

    @Test func progressIsReportedWhileDownloading() async throws {
        try await withHarness { h in
            let seen = ProgressLog()
            let options = RequestOptions(progress: { seen.append($0) })
            let response = try await h.get("/size/3000000", options)
            #expect(response.bodySize == 3_000_000)
            let last = try #require(seen.values.last)
            #expect(last.bytesReceived == 3_000_000 && last.bytesExpected == 3_000_000)
            #expect(seen.values.allSatisfy { $0.url == h.origin.url("/size/3000000") })
        }
    }

    @Test func progressStreamForAURLFollowsItsDownloadAndFinishes() async throws {
        try await withHarness { h in
            let url = h.origin.url("/size/2500000")
            let stream = h.cache.progress(for: url)
            let collector = Task { () -> [DownloadProgress] in
                var seen: [DownloadProgress] = []
                for await value in stream { seen.append(value) }
                return seen
            }
            _ = try await h.get("/size/2500000")
            let seen = await collector.value
            #expect(seen.last?.bytesReceived == 2_500_000)
            #expect(seen.allSatisfy { $0.url == url })
        }
    }

    @Test func eventsTellWhetherDataCameFromTheCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/ev", headers: [("Cache-Control", "max-age=60")], body: "ev")
            let events = h.cache.events
            _ = try await h.get("/ev")
            _ = try await h.get("/ev")
            _ = try? await h.get("/ev", RequestOptions(policy: .dontLoad, readFromCache: false))
            var flags: [Bool] = []
            var failures = 0
            for await event in events {
                switch event.kind {
                case .succeeded: flags.append(event.isCachedData)
                case .failed: failures += 1
                default: break
                }
                if flags.count + failures == 3 { break }
            }
            #expect(flags == [false, true] && failures == 1)
        }
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
}

/// Thread-safe list of progress values.
final class ProgressLog: Sendable {
    private let storage = Mutex<[DownloadProgress]>([])
    func append(_ value: DownloadProgress) { storage.withLock { $0.append(value) } }
    var values: [DownloadProgress] { storage.withLock { $0 } }
}

/// A transport whose exchanges wait until the test opens the gate; it records how many ran at once.
final class GateTransport: HTTPTransport, Sendable {
    private struct State {
        var started = 0
        var inFlight = 0
        var maxInFlight = 0
        var open = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    var started: Int { state.withLock { $0.started } }
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }

    func openAll() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for w in waiting { w.resume() }
    }

    func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
              events: TransportEvents) async throws(TransportError) -> TransportResponse {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let proceed = state.withLock { s -> Bool in
                s.started += 1
                s.inFlight += 1
                s.maxInFlight = max(s.maxInFlight, s.inFlight)
                if s.open { return true }
                s.waiting.append(c)
                return false
            }
            if proceed { c.resume() }
        }
        state.withLock { $0.inFlight -= 1 }
        try bodyFile.write(Data("ok".utf8))
        return TransportResponse(url: request.url, status: 200, headers: [("Content-Length", "2")], bodySize: 2)
    }
}
