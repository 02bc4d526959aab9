import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// The hostile-origin fixture itself: exact scripted bytes out, every raw request recorded, sequences,
/// trickle and pipelining behave as its control plane documents (other security tests rely on it).
@Suite struct HostileOriginFixtureTests {
    func send(_ request: TransportRequest, via transport: any HTTPTransport) async throws -> (TransportResponse, Data) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-hostile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await transport.send(request, bodyFile: file, progress: nil)
        return (response, try response.inMemoryBody ?? Data(contentsOf: file))
    }

    @Test func scriptedBytesArriveExactlyAndRequestsAreRecorded() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/a", [.http(headers: [("X-Odd", "first")], body: "one"),
                                 .http(status: 299, reason: "Whatever", body: "two")])
        let transport = TransportKind.platformDefault.make()
        var request = TransportRequest(url: origin.url("/a?q=1"), timeout: 10)
        request.headers.add("X-Probe", "p1")
        let (first, firstBody) = try await send(request, via: transport)
        let (second, secondBody) = try await send(request, via: transport)
        let (third, _) = try await send(request, via: transport)
        #expect(first.status == 200 && first.headers.first("X-Odd") == "first" && firstBody == Data("one".utf8))
        #expect(second.status == 299 && secondBody == Data("two".utf8))
        #expect(third.status == 299)
        let received = try origin.requests("/a")
        #expect(received.count == 3)
        #expect(received.first?.target == "/a?q=1")
        #expect(received.first?.values("x-probe") == ["p1"])
        let rawText = String(decoding: received.first?.raw ?? Data(), as: UTF8.self)
        #expect(rawText.hasPrefix("GET /a?q=1 HTTP/1.1\r\n"))
        try origin.reset()
        #expect(try origin.requests().isEmpty)
    }

    @Test func pipelinedBytesOnAKeptAliveConnectionCountAsRequests() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/one", .http(body: "1", then: .keepAlive))
        let socket = try LoopbackSocket(port: origin.port)
        try socket.send("GET /one HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /two HTTP/1.1\r\n\r\n")
        _ = socket.receive(until: "not found\n")
        let received = try origin.requests()
        #expect(received.map(\.target) == ["/one", "/two"])
        #expect(received.first?.body == Data("abc".utf8))
        #expect(Set(received.map(\.connection)).count == 1)
    }
}

/// A blocking loopback TCP client for fixture tests that need bytes no HTTP client would send.
struct LoopbackSocket {
    struct Failure: Error {}
    let fd: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure()
        }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw Failure() }
    }

    /// Reads until `marker` appeared, the peer closed, or 5 s passed without data; closes the socket.
    func receive(until marker: String) -> String {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        close(fd)
        return String(decoding: received, as: UTF8.self)
    }
}

/// The transports every framing test runs against: each must enforce the same rules itself.
enum TransportKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case curl
    case urlSession

    /// The kinds available on this platform (libcurl only where CCurl is).
    static var available: [TransportKind] {
        #if canImport(CCurl)
        return [.curl, .urlSession]
        #else
        return [.urlSession]
        #endif
    }

    /// The transport DownloadCache uses by default on this platform.
    static var platformDefault: TransportKind {
        #if canImport(CCurl)
        return .curl
        #else
        return .urlSession
        #endif
    }

    var testDescription: String { rawValue }

    /// A fresh transport of this kind.
    func make() -> any HTTPTransport {
        switch self {
        case .curl:
            #if canImport(CCurl)
            return CurlTransport(connectTimeout: 5)
            #else
            return URLSessionTransport()
            #endif
        case .urlSession:
            return URLSessionTransport()
        }
    }
}
