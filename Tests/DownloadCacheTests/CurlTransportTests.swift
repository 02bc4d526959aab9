#if canImport(CCurl)
import CacheTestSupport
@testable import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// The libcurl transport against the live origin: exact heads and bodies, failure classes, concurrency.
@Suite struct CurlTransportTests {
    let transport = CurlTransport(connectTimeout: 5, idleTimeout: 10)

    func bodyFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-curl-\(UUID().uuidString)")
    }

    /// Sends `request`, returning the response and its body (in memory, or else the body file's bytes).
    func fetch(_ request: TransportRequest, via transport: CurlTransport? = nil,
               progress: (@Sendable (Int64, Int64?) -> Void)? = nil) async throws -> (TransportResponse, Data) {
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        var request = request
        if request.timeout == nil { request.timeout = 20 }
        let response = try await (transport ?? self.transport).send(request, bodyFile: file, progress: progress)
        if let inMemory = response.inMemoryBody {
            // A body returned in memory never creates the body file (no file created and deleted per request).
            #expect(!FileManager.default.fileExists(atPath: file.path))
            return (response, inMemory)
        }
        return (response, try Data(contentsOf: file))
    }

    /// The error `request` fails with, or `nil` when it succeeded.
    func failure(_ request: TransportRequest) async -> TransportError? {
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        do throws(TransportError) {
            _ = try await transport.send(request, bodyFile: file, progress: nil)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [(200, "OK"), (299, ""), (404, "Not Found"), (418, "I'm a Teapot")])
    func statusAndReceivedReasonPhrase(status: Int, phrase: String) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/s", status: status, body: "x")
        let (response, body) = try await fetch(TransportRequest(url: origin.url("/s")))
        #expect(response.status == status)
        #expect(response.statusText == phrase)
        #expect(body == Data("x".utf8))
    }

    @Test func duplicateHeadersKeepOrderAndNameCase() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/h", headers: [("Set-Cookie", "a=1; Path=/"), ("X-Dup", "one"),
                                                          ("Set-Cookie", "b=2, c"), ("x-MiXeD", "v"), ("X-Dup", "two")],
                                   body: "ok", etag: "\"v1\"")
        let (response, _) = try await fetch(TransportRequest(url: origin.url("/h")))
        let names = response.headers.map(\.name)
        #expect(names.contains("ETag") && !names.contains("Etag"))
        #expect(names.contains("x-MiXeD"))
        #expect(response.headers.values(for: "set-cookie") == ["a=1; Path=/", "b=2, c"])
        #expect(response.headers.values(for: "x-dup") == ["one", "two"])
        let interesting = response.headers.fields.filter { ["Set-Cookie", "X-Dup"].contains($0.name) }.map(\.value)
        #expect(interesting == ["a=1; Path=/", "one", "b=2, c", "two"])
        #expect(response.decodedContentEncoding == nil)
    }

    @Test func obsFoldedHeaderLinesAreJoined() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/fold", headers: [("X-Folded", "first\r\n\tsecond"), ("X-After", "1")],
                                   body: "ok")
        let (response, _) = try await fetch(TransportRequest(url: origin.url("/fold")))
        #expect(response.headers.first("X-Folded") == "first second")
        #expect(response.headers.first("X-After") == "1")
    }

    @Test(arguments: [Int64(0), 1 << 20])
    func smallBodiesComeInMemoryUnlessTheLimitSaysFile(limit: Int64) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let transport = CurlTransport(smallBodyLimit: limit)
        let (response, body) = try await fetch(TransportRequest(url: origin.url("/size/70000")), via: transport)
        #expect((response.inMemoryBody != nil) == (limit > 0))
        #expect(response.bodySize == 70_000 && body.count == 70_000)
        #expect(body.enumerated().allSatisfy { $0.element == UInt8($0.offset % 256) })
    }

    @Test func postBodyReachesTheOriginWithoutInventedHeaders() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/len", body: "got", echoHeader: "Content-Length")
        try await origin.configure(path: "/type", body: "got", echoHeader: "Content-Type")
        let payload = Data(repeating: 7, count: 12_345)
        let (lengthResponse, lengthBody) = try await fetch(TransportRequest(method: "POST", url: origin.url("/len"),
                                                                            body: payload))
        #expect(lengthResponse.status == 200)
        #expect(String(decoding: lengthBody, as: UTF8.self) == "got|Content-Length=12345")
        let (_, typeBody) = try await fetch(TransportRequest(method: "POST", url: origin.url("/type"), body: payload))
        #expect(String(decoding: typeBody, as: UTF8.self) == "got|Content-Type=")
        #expect(try await origin.hits("/len").methods == ["POST": 1])
    }

    @Test func requestHeadersAndDefaultsReachTheOrigin() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/accept", body: "a", echoHeader: "Accept")
        try await origin.configure(path: "/agent", body: "a", echoHeader: "User-Agent")
        try await origin.configure(path: "/lang", body: "a", echoHeader: "Accept-Language")
        let (_, noAccept) = try await fetch(TransportRequest(url: origin.url("/accept")))
        #expect(String(decoding: noAccept, as: UTF8.self) == "a|Accept=")
        let (_, accept) = try await fetch(TransportRequest(url: origin.url("/accept"), headers: [("Accept", "text/x")]))
        #expect(String(decoding: accept, as: UTF8.self) == "a|Accept=text/x")
        let (_, agent) = try await fetch(TransportRequest(url: origin.url("/agent")))
        #expect(String(decoding: agent, as: UTF8.self) == "a|User-Agent=\(CurlTransport.defaultUserAgent)")
        let (_, lang) = try await fetch(TransportRequest(url: origin.url("/lang"), headers: [("accept-language", "fr")]))
        #expect(String(decoding: lang, as: UTF8.self) == "a|Accept-Language=fr")
    }

    @Test(arguments: ["PATCH", "DELETE"])
    func customMethodTokensAreSent(method: String) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/m", body: "done")
        let (response, body) = try await fetch(TransportRequest(method: method, url: origin.url("/m"),
                                                                body: method == "PATCH" ? Data("p".utf8) : nil))
        #expect(response.status == 200 && body == Data("done".utf8))
        #expect(try await origin.hits("/m").methods == [method: 1])
    }

    @Test func unknownMethodTokenReachesTheOrigin() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        // origin.py has no handler for PURGE: Python's server answers 501 naming the method it received.
        let (response, body) = try await fetch(TransportRequest(method: "PURGE", url: origin.url("/p")))
        #expect(response.status == 501)
        #expect(String(decoding: body, as: UTF8.self).contains("PURGE"))
    }

    @Test func gzipBodyArrivesStillCompressedWithMatchingHeaders() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let text = String(repeating: "abcdefgh", count: 4_000)
        try await origin.configure(path: "/gz", body: text, gzip: true)
        let (response, body) = try await fetch(TransportRequest(url: origin.url("/gz"),
                                                                headers: [("Accept-Encoding", "gzip")]))
        #expect(response.headers.first("Content-Encoding") == "gzip")
        #expect(response.headers.first("Content-Length") == String(body.count))
        #expect(response.bodySize == Int64(body.count) && body.count < text.utf8.count)
        #expect(Array(body.prefix(2)) == [0x1f, 0x8b])
        #expect(response.decodedContentEncoding == nil)
    }

    @Test func alreadyCancelledTaskNeverSends() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let file = bodyFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = self.transport
        let task = Task { () async throws(TransportError) -> TransportResponse in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(TransportRequest(url: origin.url("/size/10")), bodyFile: file,
                                            progress: nil)
        }
        let result = await task.result
        #expect((result.failureValue as? TransportError) == .cancelled)
        #expect(try await origin.hits("/size/10").total == 0)
    }

    @Test func twoHundredConcurrentRequestsSucceedOverKeptAliveConnections() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let transport = CurlTransport(maxConnectionsPerHost: 6, connectTimeout: 5, idleTimeout: 20)
        let sizes = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<200 {
                let url = origin.url("/size/\(16_384 + index)")
                let file = bodyFile()
                group.addTask {
                    defer { try? FileManager.default.removeItem(at: file) }
                    let response = try await transport.send(TransportRequest(url: url, timeout: 30), bodyFile: file,
                                                            progress: nil)
                    return response.status == 200 ? response.bodySize : -1
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(Set(sizes) == Set((0..<200).map { Int64(16_384 + $0) }))
        #expect(transport.connectionsOpened >= 1 && transport.connectionsOpened <= 12)
    }

    @Test func shortWriteFailsTheTransfer() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        // /dev/full accepts open(2) but every write(2) fails with ENOSPC.
        let transport = CurlTransport(smallBodyLimit: 0)
        do throws(TransportError) {
            _ = try await transport.send(TransportRequest(url: origin.url("/size/70000"), timeout: 20),
                                         bodyFile: URL(fileURLWithPath: "/dev/full"), progress: nil)
            Issue.record("expected a write failure")
        } catch {
            guard error.code == .other else {
                Issue.record("expected .other, got \(error)")
                return
            }
            #expect(error.detail.hasPrefix("write failed:"))
        }
    }

    @Test func nonHTTPSchemesAndBadHeaderFieldsAreRefused() async {
        let ftp = await failure(TransportRequest(url: URL(fileURLWithPath: "/etc/hostname")))
        guard ftp?.code == .other else {
            Issue.record("expected .other, got \(String(describing: ftp))")
            return
        }
        let injected = await failure(TransportRequest(url: URL(string: "http://127.0.0.1:9/") ?? URL(fileURLWithPath: "/"),
                                                      headers: [("X-A", "b\r\nX-Injected: 1")]))
        guard injected?.code == .invalidRequest else {
            Issue.record("expected .invalidRequest, got \(String(describing: injected))")
            return
        }
    }
}

/// The raw-header-line parser behind ``CurlTransport``, fed lines as libcurl delivers them.
@Suite struct CurlResponseHeadTests {
    func parse(_ lines: [String]) -> CurlResponseHead {
        var head = CurlResponseHead()
        for line in lines { head.consume(line: line) }
        return head
    }

    @Test(arguments: [("HTTP/1.1 299 Whatever\r\n", 299, "Whatever"), ("HTTP/1.1 200 OK\r\n", 200, "OK"),
                      ("HTTP/1.1 404 \r\n", 404, "Not Found"), ("HTTP/2 200 \r\n", 200, "OK"),
                      ("HTTP/1.0 999 Very Odd Status\r\n", 999, "Very Odd Status"), ("HTTP/1.1 418\r\n", 418, "")])
    func statusLine(line: String, status: Int, text: String) {
        let head = parse([line, "\r\n"])
        #expect(head.status == status && head.statusText == text && head.isComplete)
    }

    @Test func onlyTheLastBlockIsKept() {
        let head = parse(["HTTP/1.1 100 Continue\r\n", "X-Interim: 1\r\n", "\r\n",
                          "HTTP/1.1 301 Moved\r\n", "Location: /b\r\n", "\r\n",
                          "HTTP/1.1 200 OK\r\n", "ETag: \"x\"\r\n", "Set-Cookie: a\r\n", "set-cookie: b\r\n",
                          "\r\n", "X-Trailer: t\r\n", "\r\n"])
        #expect(head.status == 200 && head.statusText == "OK")
        #expect(head.headers.pairs == [["ETag", "\"x\""], ["Set-Cookie", "a"], ["set-cookie", "b"]])
    }

    @Test func foldsContentLengthAndOddLines() {
        let head = parse(["HTTP/1.1 200 OK\r\n", "X-Long: one\r\n", "   two  \r\n", "\tthree\r\n",
                          "no colon here\r\n", "Content-Length: 12\r\n", "Empty:\r\n", "\r\n"])
        #expect(head.headers.pairs == [["X-Long", "one two three"], ["Content-Length", "12"], ["Empty", ""]])
        #expect(head.contentLength == 12)
        #expect(parse(["HTTP/1.1 200 OK\r\n", "Content-Length: -5\r\n", "\r\n"]).contentLength == nil)
        #expect(parse(["HTTP/1.1 200 OK\r\n", "Content-Length: 9x\r\n", "\r\n"]).contentLength == nil)
    }

    @Test func latin1BytesAreKept() {
        var head = CurlResponseHead()
        let lines: [[UInt8]] = [Array("HTTP/1.1 200 OK\r\n".utf8), Array("X-Name: caf".utf8) + [0xE9, 13, 10], [13, 10]]
        for line in lines { line.withUnsafeBytes { head.consume($0) } }
        #expect(head.headers.first("X-Name") == "caf\u{E9}")
    }
}
#endif
