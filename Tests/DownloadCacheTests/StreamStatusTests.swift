import CacheTestSupport
@testable import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// `ResponseStream.status` names the status of the body being streamed once the first chunk (or the end) is
/// returned, so a caller can decide before writing the body anywhere (a 2xx followed live, a 503 delivered after
/// its call ended).
@Suite struct StreamStatusTests {
    @Test func theStatusIsKnownWithTheFirstChunk() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/ok", headers: [("Cache-Control", "max-age=600")], size: 600_000)
            try await h.origin.configure(path: "/busy", status: 503, body: "busy")
            let ok = h.cache.stream(CacheRequest(url: h.origin.url("/ok")))
            #expect(ok.status == nil)
            var iterator = ok.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(ok.status == 200)
            while try await iterator.next() != nil {}
            let busy = h.cache.stream(CacheRequest(url: h.origin.url("/busy")))
            var busyIterator = busy.makeAsyncIterator()
            #expect(try await busyIterator.next() == Data("busy".utf8))
            #expect(busy.status == 503)
            #expect(try await busy.response().status == 503)
        }
    }
}
