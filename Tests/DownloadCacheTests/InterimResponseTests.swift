#if canImport(CCurl)
import Foundation
import Testing
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// 1xx interim responses (RFC 9110 §15.2) in libcurl's header lines: kept apart from the final response's fields,
/// in order; a final response of an earlier hop (followed redirect) clears them; at most 16 are kept.
@Suite struct InterimResponseTests {
    func parse(_ lines: [String]) -> CurlResponseHead {
        var head = CurlResponseHead()
        for line in lines { head.consume(line: line) }
        return head
    }

    @Test func interimBlocksAreRecordedApartFromTheFinalOne() {
        let head = parse(["HTTP/1.1 102 Processing\r\n", "\r\n",
                          "HTTP/1.1 103 Early Hints\r\n", "Link: </a.css>; rel=preload\r\n", "X-My-Header: test\r\n", "\r\n",
                          "HTTP/1.1 200 OK\r\n", "Cache-Control: max-age=60\r\n", "\r\n"])
        #expect(head.status == 200)
        #expect(head.headers.pairs == [["Cache-Control", "max-age=60"]])
        #expect(head.interim == [InterimResponse(status: 102, headers: []),
                                 InterimResponse(status: 103, headers: [("Link", "</a.css>; rel=preload"),
                                                                        ("X-My-Header", "test")])])
    }

    @Test func aFinalResponseOfAnEarlierHopClearsThem() {
        let head = parse(["HTTP/1.1 103 Early Hints\r\n", "Link: <x>\r\n", "\r\n", "HTTP/1.1 301 Moved\r\n",
                          "Location: /b\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(head.interim.isEmpty)
    }

    @Test func atMostSixteenAreKept() {
        let lines = Array(repeating: ["HTTP/1.1 102 Processing\r\n", "\r\n"], count: 40).flatMap { $0 }
            + ["HTTP/1.1 200 OK\r\n", "\r\n"]
        #expect(parse(lines).interim.count == InterimResponse.maximumKept)
    }
}
#endif
