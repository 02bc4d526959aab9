import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// In a shared cache a waiter coalesced onto another client's exchange receives that exchange's interim responses
/// (1xx, RFC 9110 §15.2) without the cookies sent with them to that client (RFC 9111 §3.1, §7.3): an `103 Early
/// Hints` may carry a `Set-Cookie` too. Its other fields are kept. A private cache serves one user: kept there.
@Suite struct ACoalescedWaiterGetsNoInterimCookieTests {
    static func threeAtOnce(_ h: Harness, _ path: String) async throws -> [CachedResponse] {
        try await withThrowingTaskGroup(of: CachedResponse.self) { group in
            for _ in 0..<3 { group.addTask { try await h.get(path) } }
            return try await group.reduce(into: [CachedResponse]()) { $0.append($1) }
        }
    }

    static let interim: [(Int, [(String, String)])] = [(103, [("Link", "</s.css>; rel=preload"), ("Set-Cookie", "early=1")])]

    @Test func aSharedCachesCoalescedWaiterGetsTheInterimResponsesWithoutTheirCookie() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/early", headers: [("Cache-Control", "public, max-age=600")], body: "e",
                                         delay: 0.5, interim: Self.interim)
            let responses = try await Self.threeAtOnce(h, "/early")
            #expect(try await h.hits("/early").total == 1)
            let collapsed = responses.filter { $0.cacheStatus.collapsed }
            #expect(!collapsed.isEmpty, "no request was coalesced: \(responses.map(\.cacheStatus))")
            for response in collapsed {
                #expect(response.interimResponses.map(\.status) == [103])
                #expect(response.interimResponses.allSatisfy { !RFC9111.setsCookie($0.headers) },
                        "a waiter got the leader's interim cookie: \(response.interimResponses)")
                #expect(response.interimResponses.first?.headers.values(for: "Link") == ["</s.css>; rel=preload"])
            }
            let leader = responses.filter { !$0.cacheStatus.collapsed && $0.source == .network }
            #expect(leader.count == 1)
            #expect(leader.first?.interimResponses.first?.headers.values(for: "Set-Cookie") == ["early=1"])
        }
    }

    @Test func aPrivateCachesCoalescedWaiterKeepsTheInterimCookie() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/early", headers: [("Cache-Control", "max-age=600")], body: "e",
                                         delay: 0.5, interim: Self.interim)
            let responses = try await Self.threeAtOnce(h, "/early")
            for response in responses where response.cacheStatus.collapsed {
                #expect(response.interimResponses.first?.headers.values(for: "Set-Cookie") == ["early=1"])
            }
        }
    }
}
