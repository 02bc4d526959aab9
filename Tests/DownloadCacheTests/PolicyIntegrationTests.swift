import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Apple's and ASI's cache policies against the live origin (a stale stored response with an ETag).
@Suite struct PolicyIntegrationTests {
    struct Case: Sendable, CustomStringConvertible {
        var policy: CachePolicy
        var source: ResponseSource
        var originRequests: Int
        var conditional: Int
        var description: String { "\(policy)" }
    }

    static let staleCases: [Case] = [
        Case(policy: .useProtocolCachePolicy, source: .revalidated, originRequests: 1, conditional: 1),
        Case(policy: .reloadIgnoringLocalCacheData, source: .network, originRequests: 1, conditional: 0),
        Case(policy: .returnCacheDataElseLoad, source: .cache, originRequests: 0, conditional: 0),
        Case(policy: .returnCacheDataDontLoad, source: .cache, originRequests: 0, conditional: 0),
        Case(policy: .reloadRevalidatingCacheData, source: .revalidated, originRequests: 1, conditional: 1),
        Case(policy: .onlyLoadIfNotCached, source: .cache, originRequests: 0, conditional: 0),
        Case(policy: .dontLoad, source: .cache, originRequests: 0, conditional: 0),
    ]

    @Test(arguments: staleCases)
    func policyOnStaleStoredResponse(_ c: Case) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=10")], body: "body", etag: "\"e\"")
            _ = try await h.get("/p")
            try await h.advance(by: 60)
            let response = try await h.get("/p", RequestOptions(policy: c.policy))
            #expect(response.source == c.source)
            #expect(response.text == "body")
            let hits = try await h.hits("/p")
            #expect(hits.total == 1 + c.originRequests)
            #expect(hits.conditional == c.conditional)
        }
    }

    @Test func revalidatingPolicyValidatesEvenAFreshResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], body: "r", etag: "\"r\"")
            _ = try await h.get("/r")
            let response = try await h.get("/r", RequestOptions(policy: .reloadRevalidatingCacheData))
            #expect(response.source == .revalidated)
            #expect(try await h.hits("/r").conditional == 1)
        }
    }

    @Test(arguments: [CachePolicy.returnCacheDataDontLoad, .dontLoad])
    func dontLoadWithNothingStoredIsNotCached(_ policy: CachePolicy) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/none", body: "x")
            await #expect(throws: DownloadError.self) { _ = try await h.get("/none", RequestOptions(policy: policy)) }
            do throws(DownloadError) {
                _ = try await h.get("/none", RequestOptions(policy: policy))
            } catch {
                #expect(error.code == .notCached)
            }
            #expect(try await h.hits("/none").total == 0)
        }
    }

    @Test func doNotReadFromCacheAlwaysDownloadsButStillStores() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/dr", headers: [("Cache-Control", "max-age=600")], body: "dr")
            _ = try await h.get("/dr")
            let fresh = try await h.get("/dr", RequestOptions(readFromCache: false))
            #expect(fresh.source == .network)
            #expect(try await h.hits("/dr").total == 2)
            #expect(try await h.get("/dr").source == .cache)
        }
    }

    @Test func doNotWriteToCacheNeverStores() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/dw", headers: [("Cache-Control", "max-age=600")], body: "dw")
            _ = try await h.get("/dw", RequestOptions(writeToCache: false))
            #expect(h.storedVariants("/dw").isEmpty)
            #expect(try await h.get("/dw").source == .network)
        }
    }

    @Test func ignoringServerCacheControlStoresNoStoreResponses() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/ig", headers: [("Cache-Control", "no-store")], body: "ig")
            let options = RequestOptions(ignoreServerCacheControl: true, expiration: .seconds(60))
            _ = try await h.get("/ig", options)
            #expect(try await h.get("/ig", options).source == .cache)
            #expect(try await h.hits("/ig").total == 1)
        }
    }

    @Test func sessionStorageIsRecordedOnTheEntry() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/sess", headers: [("Cache-Control", "max-age=600")], body: "s")
            _ = try await h.get("/sess", RequestOptions(storage: .session))
            _ = try await h.get("/perm")
            #expect(h.storedVariants("/sess").first?.storageClass == .session)
            try h.cache.store.clearSession()
            #expect(h.storedVariants("/sess").isEmpty)
        }
    }
}
