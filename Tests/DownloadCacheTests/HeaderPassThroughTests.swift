import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Header fields as given, against the live origin: request fields go out unchanged (duplicates, order, nothing
/// added), response fields and the reason phrase come back unchanged from the network and from the store.
@Suite struct HeaderPassThroughTests {
    /// Request header fields go out as given (duplicates, order) with nothing added by the client.
    @Test func requestHeadersArePassedThroughUnchanged() async throws {
        try await withHarness { h in
            let headers: HTTPHeaders = [("X-A", "1"), ("X-B", "b"), ("X-A", "2")]
            let response = try await h.get("/echo-headers", headers: headers)
            let lines = response.text.split(separator: "\n").map(String.init)
            let sent = lines.filter { $0.hasPrefix("X-") }
            #expect(sent == ["X-A: 1", "X-B: b", "X-A: 2"])
            #expect(!lines.contains { $0.lowercased().hasPrefix("accept-language:") })
            #expect(!lines.contains { $0.lowercased().hasPrefix("accept-encoding:") })
        }
    }

    /// Response header fields keep order, duplicates and case, and the reason phrase is kept, from
    /// the network and again from the store.
    @Test func responseHeadersAndReasonSurviveTheStore() async throws {
        try await withHarness { h in
            let sent = [("X-A", "1"), ("Set-Cookie", "a=1"), ("X-A", "2"), ("Set-Cookie", "b=2"),
                        ("ETag", "\"v\""), ("Cache-Control", "max-age=600")]
            try await h.origin.configure(path: "/h", status: 299, headers: sent, body: "x", reason: "Custom Reason")
            for round in 0..<2 {
                let response = try await h.get("/h")
                #expect(response.source == (round == 0 ? .network : .cache))
                #expect(response.status == 299 && response.statusText == "Custom Reason")
                let interesting = response.headers.fields
                    .filter { ["x-a", "set-cookie", "etag", "cache-control"].contains($0.name.lowercased()) }
                    .map { [$0.name, $0.value] }
                #expect(interesting == sent.map { [$0.0, $0.1] })
            }
        }
    }

    /// A Latin-1 byte in a response header does not fail the fetch.
    @Test func latin1ResponseHeaderDoesNotFailTheFetch() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/latin", headers: [("X-Latin", "caf\u{E9}")], body: "ok")
            let response = try await h.get("/latin")
            #expect(response.status == 200 && response.text == "ok")
            #expect(response.headers.first("X-Latin")?.hasPrefix("caf") == true)
        }
    }
}
