import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9111 freshness and validation against the live origin, proven with its hit counters.
@Suite struct FreshnessIntegrationTests {
    @Test func freshHitCausesNoOriginRequest() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=60")], body: "hello")
            let first = try await h.get("/a")
            #expect(first.source == .network && first.text == "hello" && !first.isFromCache)
            try await h.advance(by: 30)
            let second = try await h.get("/a")
            #expect(second.source == .cache && second.isFromCache && second.text == "hello")
            #expect(second.age == 30)
            #expect(second.headers.first("Age") == "30")
            #expect(try await h.hits("/a").total == 1)
        }
    }

    @Test func expiredEntryIsRevalidatedWithOneConditionalRequestAnswered304() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/e", headers: [("Cache-Control", "max-age=60")], size: 50_000,
                                         etag: "\"v1\"")
            _ = try await h.get("/e")
            let blobBefore = h.storedVariants("/e").first
            try await h.advance(by: 120)
            let revalidated = try await h.get("/e")
            #expect(revalidated.source == .revalidated)
            #expect(revalidated.bodySize == 50_000)
            #expect(try revalidated.data().count == 50_000)
            let hits = try await h.hits("/e")
            #expect(hits.total == 2 && hits.conditional == 1 && hits.notModified == 1)
            // Freshened, not rewritten: same body checksum and creation time, fresh again for 60 s.
            let blobAfter = h.storedVariants("/e").first
            #expect(blobAfter?.checksum == blobBefore?.checksum && blobAfter?.createdAt == blobBefore?.createdAt)
            try await h.advance(by: 30)
            let hit = try await h.get("/e")
            #expect(hit.source == .cache)
            #expect(try await h.hits("/e").total == 2)
        }
    }

    @Test func lastModifiedValidatorIsUsedWhenThereIsNoETag() async throws {
        try await withHarness { h in
            let lastModified = HTTPDate.format(Date().addingTimeInterval(-86_400))
            try await h.origin.configure(path: "/lm", headers: [("Cache-Control", "max-age=10")], body: "lm",
                                         lastModified: lastModified)
            _ = try await h.get("/lm")
            try await h.advance(by: 20)
            let again = try await h.get("/lm")
            #expect(again.source == .revalidated && again.text == "lm")
            let hits = try await h.hits("/lm")
            #expect(hits.conditional == 1 && hits.notModified == 1)
        }
    }

    @Test func slidingExpiryRenewsOnEachHit() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/s", headers: [("Cache-Control", "max-age=5")], body: "sliding")
            let url = h.origin.url("/s")
            _ = try await h.cache.download(url, expiration: .sliding(100))
            try await h.advance(by: 80)
            #expect(try await h.cache.download(url, expiration: .sliding(100)).source == .cache)
            try await h.advance(by: 80)   // 160 s after download: only fresh because the hit at 80 s renewed it
            #expect(try await h.cache.download(url, expiration: .sliding(100)).source == .cache)
            #expect(try await h.hits("/s").total == 1)
            try await h.advance(by: 101)  // no hit for 101 s: expired
            #expect(try await h.cache.download(url, expiration: .sliding(100)).source == .network)
            #expect(try await h.hits("/s").total == 2)
        }
    }

    @Test func fixedExpiryWithoutRenewalExpires() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/f", headers: [("Cache-Control", "max-age=5")], body: "fixed")
            let url = h.origin.url("/f")
            _ = try await h.cache.download(url, expiration: .seconds(100))
            try await h.advance(by: 80)
            #expect(try await h.cache.download(url, expiration: .seconds(100)).source == .cache)
            try await h.advance(by: 80)
            #expect(try await h.cache.download(url, expiration: .seconds(100)).source == .network)
            #expect(try await h.hits("/f").total == 2)
        }
    }

    @Test func neverExpiringResponsesStayFreshForYears() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/n", headers: [("Cache-Control", "max-age=5")], body: "never")
            let url = h.origin.url("/n")
            _ = try await h.cache.download(url, expiration: .never)
            try await h.advance(by: 10 * 365 * 86_400)
            let later = try await h.cache.download(url)
            #expect(later.source == .cache && later.isFresh)
            #expect(try await h.hits("/n").total == 1)
        }
    }

    /// Policy `reload` is `readFromCache: false` in policy form: neither reads the cache, both store.
    @Test(arguments: [RequestOptions(policy: .reload), RequestOptions(readFromCache: false)])
    func reloadAndNotReadingTheCacheAreOneBehaviour(options: RequestOptions) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], body: "r")
            _ = try await h.get("/r")
            h.origin.stop()
            var fallback = options
            fallback.fallbackToCacheIfLoadFails = true
            await #expect(throws: DownloadError.self) { try await h.get("/r", fallback) }
            #expect(try await h.get("/r").source == .cache)
        }
    }

    @Test func varyKeepsOneVariantPerRequestHeaderValue() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")],
                                         body: "lang", echoHeader: "Accept-Language")
            let en = try await h.get("/v", headers: [("Accept-Language", "en")])
            let fr = try await h.get("/v", headers: [("Accept-Language", "fr")])
            let enAgain = try await h.get("/v", headers: [("Accept-Language", "en")])
            #expect(en.text == "lang|Accept-Language=en" && fr.text == "lang|Accept-Language=fr")
            #expect(enAgain.source == .cache && enAgain.text == "lang|Accept-Language=en")
            #expect(try await h.hits("/v").total == 2)
            #expect(h.storedVariants("/v").count == 2)
        }
    }

    /// A stored entry never contradicts its body: libcurl under URLSession decodes gzip (then the headers must
    /// drop Content-Encoding and give the decoded length); CurlTransport keeps the coded bytes as sent (then
    /// Content-Encoding stays and Content-Length is the coded length). Either way the hit matches too.
    @Test func gzipBodyIsStoredWithHeadersThatMatchIt() async throws {
        try await withHarness { h in
            let text = String(repeating: "compress me ", count: 500)
            try await h.origin.configure(path: "/gz", headers: [("Cache-Control", "max-age=60")], body: text, gzip: true)
            let first = try await h.get("/gz")
            let hit = try await h.get("/gz")
            #expect(hit.source == .cache)
            for response in [first, hit] {
                let body = try response.data()
                #expect(response.headers.first("Content-Length") == String(body.count))
                if response.headers.first("Content-Encoding") == "gzip" {
                    #expect(Array(body.prefix(2)) == [0x1f, 0x8b])
                } else {
                    #expect(response.headers.first("Content-Encoding") == nil)
                    #expect(String(decoding: body, as: UTF8.self) == text)
                }
            }
            #expect(try first.data() == hit.data())
        }
    }

    @Test func urlSessionTransportDrivesTheClientToo() async throws {
        try await withHarness({ $0.transport = URLSessionTransport() }) { h in
            let text = String(repeating: "zipped ", count: 300)
            try await h.origin.configure(path: "/us", headers: [("Cache-Control", "max-age=10")], body: text,
                                         etag: "\"u\"", gzip: true)
            let first = try await h.get("/us")
            #expect(first.text == text && first.headers.first("Content-Encoding") == nil)
            try await h.advance(by: 20)
            let again = try await h.get("/us")
            #expect(again.source == .revalidated && again.text == text)
            #expect(again.headers.first("Content-Length") == String(text.utf8.count))
            let hits = try await h.hits("/us")
            #expect(hits.total == 2 && hits.notModified == 1)
        }
    }

    @Test func noStoreResponseIsNeverStored() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/ns", headers: [("Cache-Control", "no-store")], body: "secret")
            #expect(try await h.get("/ns").text == "secret")
            #expect(try await h.get("/ns").source == .network)
            #expect(h.storedVariants("/ns").isEmpty)
            #expect(try await h.hits("/ns").total == 2)
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
}

/// A caller-given expiration against response `no-cache`.
extension FreshnessIntegrationTests {
    /// A caller's expiration replaces the lifetime only; response `no-cache` still revalidates (RFC 9111
    /// §5.2.2.4) unless `ignoreServerCacheControl` is set too.
    @Test(arguments: [false, true])
    func expiresInDoesNotLiftNoCacheUnlessCacheControlIsIgnored(_ ignore: Bool) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/nc", headers: [("Cache-Control", "no-cache")], body: "nc")
            let options = RequestOptions(ignoreServerCacheControl: ignore, expiration: .sliding(60))
            let first = try await h.get("/nc", options)
            #expect(first.source == .network)
            try await h.advance(by: 1)
            let second = try await h.get("/nc", options)
            #expect(second.text == "nc")
            if ignore {
                #expect(second.source == .cache)
                #expect(try await h.hits("/nc").total == 1)
            } else {
                #expect(second.source == .network)
                #expect(try await h.hits("/nc").total == 2)
            }
        }
    }

    /// The convenience call `download(_:expiration:)` keeps revalidating `no-cache`.
    @Test func downloadExpiresInRevalidatesNoCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/nc2", headers: [("Cache-Control", "no-cache")], body: "x")
            _ = try await h.cache.download(h.origin.url("/nc2"), expiration: .sliding(60))
            let again = try await h.cache.download(h.origin.url("/nc2"), expiration: .sliding(60))
            #expect(again.source == .network)
            #expect(try await h.hits("/nc2").total == 2)
        }
    }
}
