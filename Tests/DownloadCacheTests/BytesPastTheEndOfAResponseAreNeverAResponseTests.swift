import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// RFC 9112 §6.3: bytes an origin sends past the end of a response (its Content-Length) are not a response. The
/// connection holding them is never reused, so they are never taken as the answer to a later request and stored
/// under its URL — whether they came with the body or while the connection sat idle. (Bytes that arrive only
/// after the next request was sent on the connection cannot be told from the origin's answer to it.)
@Suite(.serialized) struct BytesPastTheEndOfAResponseAreNeverAResponseTests {
    static let injected = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nCache-Control: max-age=600\r\n\r\nEVIL\n"

    /// `/x`: a 100 KB body then, in the same write or `laterBy` seconds afterwards, a whole extra response;
    /// `/a`, `/b`: plain answers. Every connection is kept alive.
    static func scriptOrigin(_ origin: HostileOrigin, laterBy delay: Double?) throws {
        let body = String(repeating: "x", count: 100_000)
        let first = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nCache-Control: max-age=600\r\n\r\n" + body
        let trickle = delay.map { (from: Optional(first.utf8.count), bytes: injected.utf8.count, interval: $0) }
        try origin.script("/x", HostileOrigin.Response(first + injected, trickle: trickle, then: .keepAlive))
        for name in ["a", "b"] {
            try origin.script("/\(name)", .http(headers: [("Cache-Control", "max-age=600")], body: "body of /\(name)\n",
                                                then: .keepAlive))
        }
    }

    /// One connection per origin, so a reusable connection is reused.
    static func cache(_ directory: URL) throws -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.maxConcurrentDownloads = 1
        configuration.log = { _ in }
        return try DownloadCache(configuration: configuration)
    }

    static func text(_ response: CachedResponse) throws -> String {
        String(decoding: try response.data(), as: UTF8.self)
    }

    @Test func bytesSentWithTheBodyAreNotTheNextResponse() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try Self.scriptOrigin(origin, laterBy: nil)
        let directory = temporaryFile("past-the-end")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try Self.cache(directory)
        #expect(try await cache.response(for: CacheRequest(url: origin.url("/x"))).bodySize == 100_000)
        #expect(try Self.text(try await cache.response(for: CacheRequest(url: origin.url("/a")))) == "body of /a\n")
        #expect(try Self.text(try await cache.response(for: CacheRequest(url: origin.url("/b")))) == "body of /b\n")
        // What was stored is what each URL's own request was answered with.
        var stored = RequestOptions()
        stored.policy = .returnCacheDataDontLoad
        #expect(try Self.text(try await cache.response(for: CacheRequest(url: origin.url("/a")), options: stored)) == "body of /a\n")
        let x = try origin.requests("/x")
        let a = try origin.requests("/a")
        #expect(x.count == 1 && a.count == 1)
        #expect(a.first?.connection != x.first?.connection, "the connection holding the extra bytes was reused")
        await cache.close()
    }

    /// `occupied`: descriptors held open first, so the connection's socket gets a number above 4,096 (every socket
    /// is checked, whatever its number).
    @Test(arguments: [0, 4_200])
    func bytesArrivingWhileTheConnectionIsIdleAreNotTheNextResponse(occupied: Int) async throws {
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        if occupied > 0 {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            try #require(limit.rlim_max >= rlim_t(occupied + 1_024), "the hard descriptor limit is \(limit.rlim_max)")
            if limit.rlim_cur < rlim_t(occupied + 1_024) {
                limit.rlim_cur = rlim_t(occupied + 1_024)
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
            for _ in 0..<occupied {
                let fd = open("/dev/null", O_RDONLY)
                if fd >= 0 { held.append(fd) }
            }
        }
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try Self.scriptOrigin(origin, laterBy: 0.3)
        let directory = temporaryFile("past-the-end")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try Self.cache(directory)
        #expect(try await cache.response(for: CacheRequest(url: origin.url("/x"))).bodySize == 100_000)
        // Past the origin's 0.3 s: the extra bytes wait in the idle connection's socket when /a is asked for.
        try await Task.sleep(for: .seconds(1.5))
        #expect(try Self.text(try await cache.response(for: CacheRequest(url: origin.url("/a")))) == "body of /a\n")
        #expect(try Self.text(try await cache.response(for: CacheRequest(url: origin.url("/b")))) == "body of /b\n")
        let x = try origin.requests("/x")
        let answered = try origin.requests("/a")
        #expect(!answered.isEmpty && answered.allSatisfy { $0.connection != x.first?.connection },
                "/a was answered on the connection holding the extra bytes")
        await cache.close()
    }
}
