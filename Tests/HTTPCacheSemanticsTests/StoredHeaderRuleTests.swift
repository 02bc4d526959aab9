import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §3.1: hop-by-hop fields and the fields `Connection` names are not stored.
@Suite struct StoredHeaderRuleTests {
    @Test func hopByHopFieldsAreDropped() {
        let received = Fixture.headers([
            "Content-Type: text/plain", "connection: keep-alive, X-Hop, x-other-hop", "Keep-Alive: timeout=5",
            "TRANSFER-ENCODING: chunked", "TE: trailers", "Trailer: X-Checksum", "Upgrade: h2c",
            "Proxy-Connection: keep-alive", "X-Hop: 1", "X-OTHER-HOP: 2", "Proxy-Authenticate: Basic",
            "Proxy-Authentication-Info: x", "Cache-Control: max-age=60", "ETag: \"a\"", "X-End-To-End: kept",
        ])
        let stored = RFC9111.storedHeaders(received)
        #expect(stored.pairs == [["Content-Type", "text/plain"], ["Cache-Control", "max-age=60"], ["ETag", "\"a\""],
                                 ["X-End-To-End", "kept"]])
    }

    @Test func connectionCannotMakeTheCacheForgetItsOwnDirectives() {
        let received = Fixture.headers(["Connection: Cache-Control, Vary, ETag, Content-Length, X-A",
                                        "Cache-Control: private, no-cache", "Vary: Cookie", "ETag: \"a\"",
                                        "Content-Length: 5", "X-A: 1"])
        let stored = RFC9111.storedHeaders(received)
        #expect(stored.pairs == [["Cache-Control", "private, no-cache"], ["Vary", "Cookie"], ["ETag", "\"a\""],
                                 ["Content-Length", "5"]])
    }
}
