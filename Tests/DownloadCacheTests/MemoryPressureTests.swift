import CacheTestSupport
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// The memory tier drops everything on a memory warning and shrinks on entering the background, through the
/// configured notifications; the disk tier keeps every stored response, so nothing is fetched again.
struct MemoryPressureTests {
    static let warning = Notification.Name("test.memory-warning")
    static let background = Notification.Name("test.background")

    /// A cache whose memory tier holds about ten 1 KB bodies, observing the test notifications on `center`.
    func makeCache(_ transport: ScriptedTransport, center: NotificationCenter) throws -> (DownloadCache, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-pressure-\(UUID().uuidString)")
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.transport = transport
        configuration.log = { _ in }
        configuration.maxMemoryBytes = 16_000
        configuration.notificationCenter = center
        configuration.memoryWarningNotifications = [Self.warning]
        configuration.backgroundNotifications = [Self.background]
        return (try DownloadCache(configuration: configuration), directory)
    }

    /// Stores `count` responses of 1,000 bytes each and returns their URLs.
    func fill(_ cache: DownloadCache, _ transport: ScriptedTransport, count: Int) async throws -> [URL] {
        var urls: [URL] = []
        for i in 0..<count {
            let url = try #require(URL(string: "http://example.test/item/\(i)"))
            transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=600")], body: String(repeating: "x", count: 1_000))
            _ = try await cache.response(for: CacheRequest(url: url))
            urls.append(url)
        }
        return urls
    }

    @Test func aMemoryWarningEmptiesTheMemoryTierAndTheDiskStillAnswers() async throws {
        let center = NotificationCenter()
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport, center: center)
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = try await fill(cache, transport, count: 3)
        #expect(cache.store.statistics.memoryEntries == 3)
        center.post(name: Self.warning, object: nil)
        #expect(cache.store.statistics.memoryEntries == 0)
        #expect(cache.store.statistics.memoryBytes == 0)
        for url in urls {
            let response = try await cache.response(for: CacheRequest(url: url))
            #expect(response.source == .cache && response.bodySize == 1_000)
        }
        #expect(transport.requests.count == 3)
        #expect(cache.store.statistics.memoryEntries == 3)
    }

    @Test func enteringTheBackgroundKeepsTheMostRecentQuarter() async throws {
        let center = NotificationCenter()
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport, center: center)
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = try await fill(cache, transport, count: 6)
        let before = cache.store.statistics
        #expect(before.memoryEntries == 6)
        center.post(name: Self.background, object: nil)
        let after = cache.store.statistics
        #expect(after.memoryBytes <= 4_000)
        #expect(after.memoryEntries >= 1 && after.memoryEntries < 6)
        // The newest entry is among those kept: reading it is a memory hit.
        let hitsBefore = after.memoryHits
        let newest = try await cache.response(for: CacheRequest(url: try #require(urls.last)))
        #expect(newest.source == .cache)
        #expect(cache.store.statistics.memoryHits == hitsBefore + 1)
        // The evicted ones still come from disk, not from the origin.
        let oldest = try await cache.response(for: CacheRequest(url: try #require(urls.first)))
        #expect(oldest.source == .cache && oldest.bodySize == 1_000)
        #expect(transport.requests.count == 6)
    }

    @Test func anUnobservedNotificationLeavesTheMemoryTierAlone() async throws {
        let center = NotificationCenter()
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport, center: center)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill(cache, transport, count: 2)
        center.post(name: Notification.Name("test.something-else"), object: nil)
        NotificationCenter.default.post(name: Self.warning, object: nil)
        #expect(cache.store.statistics.memoryEntries == 2)
    }

    @Test func theDefaultNotificationsAreUIKitsOrNone() {
        let configuration = DownloadCache.Configuration(directory: URL(fileURLWithPath: "/nonexistent"))
        #if canImport(UIKit)
        #expect(configuration.memoryWarningNotifications.map(\.rawValue) == ["UIApplicationDidReceiveMemoryWarningNotification"])
        #expect(configuration.backgroundNotifications.map(\.rawValue)
            == ["UIApplicationDidEnterBackgroundNotification", "UIApplicationWillTerminateNotification"])
        #else
        #expect(configuration.memoryWarningNotifications.isEmpty && configuration.backgroundNotifications.isEmpty)
        #endif
    }
}
