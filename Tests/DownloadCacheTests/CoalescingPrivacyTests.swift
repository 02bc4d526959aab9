import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Concurrent identical requests share one origin exchange only for a response the cache could have stored and
/// served to each of them; a `no-store` / `private` (shared mode) response goes to the caller that asked.
@Suite struct CoalescingPrivacyTests {
    static func concurrentGets(_ h: Harness, _ path: String, count: Int) async throws -> [CachedResponse] {
        try await withThrowingTaskGroup(of: CachedResponse.self) { group in
            for _ in 0..<count { group.addTask { try await h.get(path) } }
            return try await group.reduce(into: [CachedResponse]()) { $0.append($1) }
        }
    }

    @Test(arguments: [CacheMode.shared, .private])
    func noStorePrivateResponseIsNotHandedToOtherWaiters(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/me", headers: [("Cache-Control", "no-store, private"),
                                                               ("Set-Cookie", "session=first-client")],
                                         body: "yours", delay: 0.5)
            let responses = try await Self.concurrentGets(h, "/me", count: 3)
            #expect(responses.count == 3 && responses.allSatisfy { $0.status == 200 && $0.text == "yours" })
            #expect(try await h.hits("/me").total == 3)
        }
    }

    @Test func privateResponseInSharedModeIsNotHandedOn() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/pm", headers: [("Cache-Control", "private, max-age=60"),
                                                               ("Set-Cookie", "session=first-client")],
                                         body: "private", delay: 0.5)
            _ = try await Self.concurrentGets(h, "/pm", count: 3)
            #expect(try await h.hits("/pm").total == 3)
        }
    }

    @Test(arguments: [CacheMode.shared, .private])
    func storableResponseIsStillCoalesced(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/pub", headers: [("Cache-Control", "max-age=60")], body: "all", delay: 0.5)
            let responses = try await Self.concurrentGets(h, "/pub", count: 3)
            #expect(responses.allSatisfy { $0.text == "all" })
            #expect(try await h.hits("/pub").total == 1)
        }
    }

    /// `no-cache="Set-Cookie"` (RFC 9111 §5.2.2.4): the response is shared, its cookie is not — a waiter gets
    /// the response without the named field, as a stored hit would be served. (`public`, since a shared cache
    /// stores a response that sets a cookie only then.)
    @Test(arguments: [CacheMode.shared, .private])
    func fieldsNamedByQualifiedNoCacheStayWithTheCallerThatAsked(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/nc", headers: [("Cache-Control", "public, max-age=60, no-cache=\"Set-Cookie\""),
                                                               ("Set-Cookie", "session=first-client")],
                                         body: "shared", delay: 0.5)
            let responses = try await Self.concurrentGets(h, "/nc", count: 3)
            #expect(responses.allSatisfy { $0.text == "shared" })
            #expect(try await h.hits("/nc").total == 1)
            let cookies = responses.map { response in (response.headers.values(for: "Set-Cookie"), response.cacheStatus.collapsed) }
            #expect(cookies.filter { !$0.0.isEmpty }.count == 1, "\(cookies)")
            #expect(cookies.allSatisfy { $0.0.isEmpty || !$0.1 }, "only the caller that asked gets the cookie: \(cookies)")
        }
    }

    @Test func differentUserInfoIsNeverCoalesced() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/u", headers: [("Cache-Control", "max-age=60")], body: "u",
                                         delay: 0.5, echoHeader: "Authorization")
            let texts = try await withThrowingTaskGroup(of: String.self) { group in
                for user in ["alice:1", "bob:2", "carol:3"] {
                    group.addTask {
                        let url = try #require(URL(string: "http://\(user)@127.0.0.1:\(h.origin.port)/u"))
                        return try await h.cache.response(for: CacheRequest(url: url)).text
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(texts.count == 3)
            #expect(try await h.hits("/u").total == 3)
        }
    }
}
