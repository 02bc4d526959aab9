import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// A hostile caller: request fields that frame the message (Content-Length, Transfer-Encoding, Connection ...),
/// a Host naming another authority, and control characters are refused by every transport and by the cache
/// before a byte is sent, so one request can never smuggle another onto a kept-alive connection.
@Suite(.serialized) struct RequestFramingTests {
    static let framingFields: [(String, String)] = [
        ("Content-Length", "0"), ("content-LENGTH", "5"), ("Transfer-Encoding", "chunked"), ("Connection", "close"),
        ("Upgrade", "websocket"), ("TE", "trailers"), ("Expect", "100-continue"), ("Keep-Alive", "timeout=5"),
        ("Proxy-Connection", "keep-alive"), ("Trailer", "X-Checksum"),
    ]

    static let malformedFields: [(String, String)] = [
        ("X-Split", "a\r\nX-Injected: 1"), ("X-LF", "a\nb"), ("X-NUL", "a\u{0}b"), ("X-Bell", "a\u{7}b"),
        ("Bad Name", "v"), ("Bad:Name", "v"), ("", "v"), ("X-\u{E9}", "v"),
    ]


    func isInvalidRequest(_ error: TransportError?) -> Bool {
        if error?.code == .invalidRequest { return true }
        return false
    }

    @Test(arguments: TransportKind.available)
    func transportRefusesCallerFramingFields(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/form", .http(body: "ok"))
        let transport = kind.make()
        for (name, value) in Self.framingFields {
            let request = TransportRequest(method: "POST", url: origin.url("/form"), headers: HTTPHeaders([(name, value)]),
                                           body: Data("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: 10)
            let error = await failure(request, via: transport)
            #expect(isInvalidRequest(error), "\(name) was not refused: \(String(describing: error))")
        }
        #expect(try origin.requests().isEmpty)
    }

    @Test(arguments: TransportKind.available)
    func transportRefusesControlCharactersAndNonTokenNames(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let transport = kind.make()
        for (name, value) in Self.malformedFields {
            let request = TransportRequest(url: origin.url("/a"), headers: HTTPHeaders([(name, value)]), timeout: 10)
            #expect(isInvalidRequest(await failure(request, via: transport)), "\(name.debugDescription) \(value.debugDescription)")
        }
        #expect(try origin.requests().isEmpty)
    }

    @Test(arguments: TransportKind.available)
    func transportRefusesAMethodThatIsNotAToken(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let request = TransportRequest(method: "GET /smuggled HTTP/1.1\r\nX:", url: origin.url("/a"), timeout: 10)
        #expect(isInvalidRequest(await failure(request, via: kind.make())))
        #expect(try origin.requests().isEmpty)
    }

    @Test(arguments: TransportKind.available)
    func hostNamingAnotherAuthorityIsRefusedAndTheURLsOwnIsSentOnce(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/h", .http(body: "ok"))
        let transport = kind.make()
        for other in ["evil.example", "127.0.0.1", "127.0.0.1:1", "127.0.0.1:\(origin.port)x", " "] {
            let request = TransportRequest(url: origin.url("/h"), headers: HTTPHeaders([("Host", other)]), timeout: 10)
            #expect(isInvalidRequest(await failure(request, via: transport)), "Host '\(other)' was not refused")
        }
        let twice = TransportRequest(url: origin.url("/h"), headers: HTTPHeaders([("Host", origin.authority),
                                                                                ("Host", origin.authority)]))
        #expect(isInvalidRequest(await failure(twice, via: transport)))
        #expect(try origin.requests().isEmpty)

        let same = TransportRequest(url: origin.url("/h"), headers: HTTPHeaders([("HOST", "127.0.0.1:\(origin.port)")]),
                                    timeout: 10)
        #expect(await failure(same, via: transport) == nil)
        let received = try origin.requests("/h")
        #expect(received.count == 1)
        #expect(received.first?.values("Host") == [origin.authority])
    }

    @Test func hostMatchingHonoursDefaultPortsCaseAndIPv6Brackets() throws {
        let plain = try #require(URL(string: "http://Example.COM/a"))
        let secure = try #require(URL(string: "https://example.com/a"))
        let v6 = try #require(URL(string: "http://[::1]:8080/a"))
        #expect(MessageFraming.requestProblem(method: "GET", url: plain, headers: [("Host", "example.com")]) == nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: plain, headers: [("Host", "EXAMPLE.com:80")]) == nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: secure, headers: [("Host", "example.com:443")]) == nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: secure, headers: [("Host", "example.com:80")]) != nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: v6, headers: [("Host", "[::1]:8080")]) == nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: v6, headers: [("Host", "[::1]")]) != nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: plain, headers: [("Host", "example.com.evil")]) != nil)
        #expect(MessageFraming.requestProblem(method: "GET", url: plain, headers: [("Host", "example.com:80:80")]) != nil)
    }

    /// Issue 10 item 1: a POST whose caller-set `Content-Length: 0` hides a second request in its body. Nothing
    /// reaches the origin, and the victim page is answered with its own content afterwards.
    @Test(arguments: [CacheMode.private, .shared])
    func smuggledRequestNeverReachesTheOriginNorPoisonsTheVictim(mode: CacheMode) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/form", .http(body: "ok", then: .keepAlive))
        try origin.script("/smuggled", .http(headers: [("Cache-Control", "max-age=600")], body: "SMUGGLED",
                                             then: .keepAlive))
        try origin.script("/victim-page", .http(headers: [("Cache-Control", "max-age=600")], body: "victim",
                                                then: .keepAlive))
        let directory = temporaryFile("framing")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.mode = mode
        configuration.maxConcurrentDownloads = 1
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let smuggling = "GET /smuggled HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n"
        var options = RequestOptions()
        options.body = Data(smuggling.utf8)
        do {
            _ = try await cache.response(for: CacheRequest(method: "POST", url: origin.url("/form"),
                                                           headers: [("Content-Length", "0")]), options: options)
            Issue.record("the smuggling POST was sent")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.description.contains("Content-Length"))
        }
        let victim = try await cache.response(for: CacheRequest(url: origin.url("/victim-page")))
        #expect(victim.text == "victim")
        let again = try await DownloadCache(configuration: configuration).response(for: CacheRequest(url: origin.url("/victim-page")))
        #expect(again.text == "victim")
        let received = try origin.requests()
        #expect(received.map(\.target) == ["/victim-page"])
    }

    /// Issue 10 item 9: a caller Host for another virtual host is refused, so nothing of that host is stored
    /// under the URL and a later plain request gets the URL's own content.
    @Test func callerHostForAnotherVirtualHostIsRefusedAndNothingIsStored() async throws {
        try await withHarness { harness in
            try await harness.origin.configure(path: "/vhost", headers: [("Cache-Control", "max-age=600")], body: "real")
            do throws(DownloadError) {
                _ = try await harness.get("/vhost", headers: [("Host", "evil.example")])
                Issue.record("a foreign Host was sent")
            } catch {
                #expect(error.code == .invalidRequest)
                #expect(error.description.contains("evil.example"))
            }
            #expect(try await harness.hits("/vhost").total == 0)
            #expect(harness.storedVariants("/vhost").isEmpty)
            let plain = try await harness.get("/vhost")
            #expect(plain.text == "real")
            let own = try await harness.get("/vhost", headers: [("Host", "127.0.0.1:\(harness.origin.port)")])
            #expect(own.text == "real" && own.source == .cache)
        }
    }
}
