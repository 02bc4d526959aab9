import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// A hostile origin that trickles: the stall rule (fewer than N bytes in a window of T seconds) fails the
/// exchange as timed out in every transport, and nothing partial is stored. Tests use a 1 s / 1 KiB window and
/// check the failure kind, never a duration.
@Suite(.serialized) struct StallTimeoutTests {
    static let shortRule = StallRule(minimumBytes: 1024, seconds: 1)


    func isStalled(_ error: TransportError?) -> Bool {
        if error?.code == .stalled { return true }
        return false
    }

    @Test func defaultRuleIsOneKibibyteInThirtySeconds() {
        #expect(StallRule.default == StallRule(minimumBytes: 1024, seconds: 30))
        #expect(StallRule(minimumBytes: 1024, within: .seconds(30)) == .default)
        #expect(DownloadCache.Configuration(directory: URL(fileURLWithPath: "/tmp")).stallRule == .default)
        #expect(TransportRequest(url: URL(fileURLWithPath: "/")).stallRule == .default)
        #expect(TransportError.stalled(minimumBytes: 1024, seconds: 30).isOriginUnreachable)
        #expect(DownloadError(TransportError.stalled(minimumBytes: 1024, seconds: 30)).code == .timedOut)
    }

    /// Issue 10 item 7: a body trickling a few bytes per window passes libcurl's 1 B/s low-speed check; the
    /// stall rule fails it.
    @Test(arguments: TransportKind.available)
    func tricklingBodyFailsAsStalled(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/slow", .http(body: String(repeating: "x", count: 40), trickle: (nil, 1, 0.25)))
        let request = TransportRequest(url: origin.url("/slow"), timeout: 30, stallRule: Self.shortRule)
        let error = await failure(request, via: kind.make())
        #expect(isStalled(error), "\(String(describing: error))")
    }

    @Test(arguments: TransportKind.available)
    func anOriginThatNeverAnswersFailsAsStalled(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/silent", HostileOrigin.Response(raw: Data(), then: .hold))
        let request = TransportRequest(url: origin.url("/silent"), timeout: 30, stallRule: Self.shortRule)
        #expect(isStalled(await failure(request, via: kind.make())))
    }

    @Test(arguments: TransportKind.available)
    func aQuickBodyIsNotStalledByAShortWindow(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/quick", .http(body: String(repeating: "q", count: 100)))
        let request = TransportRequest(url: origin.url("/quick"), timeout: 30, stallRule: Self.shortRule)
        #expect(await failure(request, via: kind.make()) == nil)
    }

    /// Through the cache: `Configuration.stallRule` applies, the failure is `.timedOut` carrying `.stalled`, and
    /// nothing of the trickled body is stored (the next request goes to the origin again).
    @Test func theCachesStallRuleFailsAsTimedOutAndStoresNothing() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/slow", .http(headers: [("Cache-Control", "max-age=600")],
                                         body: String(repeating: "x", count: 40), trickle: (nil, 1, 0.25)))
        let directory = temporaryFile("stall")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.stallRule = Self.shortRule
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        do {
            _ = try await cache.response(for: CacheRequest(url: origin.url("/slow")))
            Issue.record("a stalled body was delivered")
        } catch {
            #expect(error.code == .timedOut)
            #expect(isStalled(error.transportError))
        }
        #expect(cache.store.variants(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: origin.url("/slow"))).isEmpty)
        // A per-request rule that needs no bytes switches the rule off: the same body then arrives whole.
        var options = RequestOptions()
        options.stallRule = StallRule(minimumBytes: 0, seconds: 1)
        try origin.script("/slow", .http(headers: [("Cache-Control", "max-age=600")], body: "xyz",
                                         trickle: (nil, 1, 0.6)))
        let whole = try await cache.response(for: CacheRequest(url: origin.url("/slow")), options: options)
        #expect(whole.text == "xyz")
    }

    /// `RequestOptions.timeout` (the CLI's `--max-time`) still bounds an exchange that never stalls.
    @Test func totalTimeoutStillFailsAsTimedOut() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/steady", .http(body: String(repeating: "s", count: 200_000), trickle: (nil, 4096, 0.2)))
        let request = TransportRequest(url: origin.url("/steady"), timeout: 1, stallRule: Self.shortRule)
        let error = await failure(request, via: TransportKind.platformDefault.make())
        #expect(error == .timedOut, "\(String(describing: error))")
    }
}
