import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §6.4.1 (which responses have content), §8.6 (Content-Length) and RFC 9111 §3.3 (an incomplete
/// response is never stored as complete).
@Suite struct ResponseCompletenessTests {
    @Test(arguments: [(nil, 10, true), ("100", 100, true), ("100", 99, false), ("abc", 0, true), ("0", 0, true)] as [(String?, Int64, Bool)])
    func completeness(contentLength: String?, received: Int64, complete: Bool) {
        var headers = HTTPHeaders()
        if let contentLength { headers.add("Content-Length", contentLength) }
        #expect(RFC9111.isComplete(method: "GET", response: CacheResponse(status: 200, headers: headers), receivedBodyBytes: received) == complete)
    }

    /// (method, status, has content)
    @Test(arguments: [
        ("GET", 200, true), ("POST", 201, true), ("GET", 404, true), ("HEAD", 200, false), ("head", 200, false),
        ("GET", 100, false), ("GET", 103, false), ("GET", 204, false), ("GET", 304, false),
        ("CONNECT", 200, false), ("CONNECT", 407, true),
    ] as [(String, Int, Bool)])
    func whichResponsesHaveContent(method: String, status: Int, hasContent: Bool) {
        #expect(RFC9111.responseHasContent(method: method, status: status) == hasContent)
    }

    /// A response without content is complete whatever its Content-Length says (HEAD, 304 describe another body).
    @Test(arguments: [("HEAD", 200), ("GET", 304), ("GET", 204)] as [(String, Int)])
    func aResponseWithoutContentIsComplete(method: String, status: Int) {
        let response = CacheResponse(status: status, headers: [("Content-Length", "500")])
        #expect(RFC9111.isComplete(method: method, response: response, receivedBodyBytes: 0))
        #expect(RFC9111.announcedContentLength(method: method, response: response) == nil)
    }

    @Test func moreBytesThanAnnouncedAreNotTheAnnouncedContent() {
        let response = CacheResponse(status: 200, headers: [("Content-Length", "5")])
        #expect(!RFC9111.isComplete(method: "GET", response: response, receivedBodyBytes: 6))
    }

    /// (Content-Length field values, announced length)
    @Test(arguments: [
        (["5"], 5), (["5", "5"], 5), (["5, 5"], 5), (["5", "6"], nil), (["+5"], nil), (["-1"], nil),
        (["1e3"], nil), (["0x10"], nil), (["99999999999999999999999"], nil), ([], nil),
    ] as [([String], Int64?)])
    func announcedContentLength(values: [String], length: Int64?) {
        let response = CacheResponse(status: 200, headers: HTTPHeaders(values.map { ("Content-Length", $0) }))
        #expect(RFC9111.announcedContentLength(method: "GET", response: response) == length)
    }
}
