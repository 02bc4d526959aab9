import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9211: this cache's Cache-Status member, serialised as an RFC 8941 List member.
@Suite struct CacheStatusTests {
    @Test func serialisesTheParametersInOrder() {
        #expect(CacheStatus(hit: true, ttl: 3590).fieldValue == "dlcache; hit; ttl=3590")
        #expect(CacheStatus(hit: false, forward: .uriMiss, forwardStatus: 200, ttl: 3600, stored: true).fieldValue
                == "dlcache; fwd=uri-miss; fwd-status=200; ttl=3600; stored")
        #expect(CacheStatus(hit: false, forward: .varyMiss, forwardStatus: 200, collapsed: true,
                            key: "GET https://a/\"x\"", detail: "caf\u{E9}").fieldValue
                == #"dlcache; fwd=vary-miss; fwd-status=200; collapsed; key="GET https://a/\"x\""; detail="caf?""#)
        #expect(CacheStatus(hit: false, forward: .stale, ttl: -40, detail: "served stale while disconnected").description
                == #"dlcache; fwd=stale; ttl=-40; detail="served stale while disconnected""#)
    }

    @Test func theValueIsAValidStructuredFieldMember() throws {
        // A List member is an Item with parameters; parsed here as a one-member Dictionary value.
        let value = CacheStatus(hit: false, forward: .stale, forwardStatus: 304, ttl: 60, stored: true,
                                detail: "a \"quoted\" \\ detail").fieldValue
        let dictionary = try #require(StructuredFieldDictionary(parsing: "m=" + value.dropFirst("dlcache".count)
            .replacingOccurrences(of: "; ", with: ";").trimmingCharacters(in: .whitespaces).drop(while: { $0 == ";" })
            .split(separator: ";").map(String.init).reduce("x") { $0 + ";" + $1 }))
        guard case .item(.token("x"), let parameters)? = dictionary["m"] else {
            Issue.record("not an item: \(value)")
            return
        }
        #expect(parameters.map(\.key) == ["fwd", "fwd-status", "ttl", "stored", "detail"])
        #expect(parameters.last?.value == .string("a \"quoted\" \\ detail"))
    }

    @Test func ttlIsWholeSecondsRemaining() {
        #expect(CacheStatus.ttl(lifetime: 60, age: 10.5) == 49)
        #expect(CacheStatus.ttl(lifetime: 10, age: 50) == -40)
        #expect(CacheStatus.ttl(lifetime: .infinity, age: 0) == nil)
    }
}
