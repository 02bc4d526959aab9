import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// `DownloadError` and `TransportError` descriptions: the words a caller shows to a person.
@Suite struct DownloadErrorDescriptionTests {
    /// Error descriptions read as words (status reason phrases, byte counts, policy names), never Swift case
    /// names or type names.
    @Test func errorDescriptionsAreWords() async throws {
        #expect(DownloadError(.http(status: 404), "").description == "HTTP 404 Not Found")
        // One reason-phrase table serves error words and transports' status text (RFC 9110 §15).
        #expect(DownloadError(.http(status: 412), "").description == "HTTP 412 Precondition Failed")
        #expect(HTTPStatusText.text(for: 416) == "Range Not Satisfiable")
        #expect(HTTPStatusText.text(for: 299) == "Status 299")
        #expect(!DownloadError(.timedOut, "timed out").description.contains("DownloadError"))
        #expect(TransportError.truncatedChunked(received: 4196).description
                    == "truncated body: connection closed after 4196 bytes of a chunked body")
        #expect(!TransportError.truncated(expected: -1, received: 4196).description.contains("chunked"))
        #expect(TransportError.truncated(expected: 10, received: 4).description.contains("after 4 of 10 bytes"))
        try await withHarness { h in
            do throws(DownloadError) {
                _ = try await h.get("/never", RequestOptions(policy: .dontLoad))
                Issue.record("expected notCached")
            } catch {
                #expect(error.code == .notCached)
                #expect(error.description.hasPrefix("not cached: "))
                #expect(error.description.contains("policy return-cache-dont-load"))
                #expect(!error.description.contains("dontLoad") && !error.description.contains("DownloadError"))
            }
        }
    }
}
