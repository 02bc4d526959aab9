import CacheTestSupport
@testable import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// The behaviour every transport owes the cache, run against each transport available here (libcurl and
/// URLSession on Linux): bodies streamed exactly with progress, methods and bodies sent as given, no
/// decompression the caller did not ask for, failures classified the same way, redirects only when asked.
@Suite struct TransportContractTests {
    /// Sends `request` through a fresh transport of `kind`: the response and its body bytes (from memory or
    /// the body file).
    func fetch(_ kind: TransportKind, _ request: TransportRequest,
               progress: (@Sendable (Int64, Int64?) -> Void)? = nil) async throws -> (TransportResponse, Data) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-contract-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        var request = request
        if request.timeout == nil { request.timeout = 20 }
        let response = try await kind.make().send(request, bodyFile: file, progress: progress)
        if let inMemory = response.inMemoryBody { return (response, inMemory) }
        return (response, try Data(contentsOf: file))
    }

    @Test(arguments: TransportKind.available)
    func aMultiMegabyteBodyArrivesExactlyWithProgress(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let size = 3 * 1_048_576 + 123
        let reports = Mutex<[(Int64, Int64?)]>([])
        let (response, body) = try await fetch(kind, TransportRequest(url: origin.url("/size/\(size)"))) { done, total in
            reports.withLock { $0.append((done, total)) }
        }
        #expect(response.status == 200 && response.bodySize == Int64(size))
        #expect(body.count == size && body.enumerated().allSatisfy { $0.element == UInt8($0.offset % 256) })
        let seen = reports.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(seen.last?.0 == Int64(size))
        #expect(try await origin.hits("/size/\(size)").total == 1)
    }

    @Test(arguments: TransportKind.available)
    func theHeadIsReportedOnceBeforeAnyBodyProgress(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let size = 2 * 1_048_576
        let seen = Mutex<[String]>([])
        let heads = Mutex<[TransportResponseHead]>([])
        let events = TransportEvents(head: { head in
            heads.withLock { $0.append(head) }
            seen.withLock { $0.append("head") }
        }, progress: { _, _ in seen.withLock { $0.append("progress") } })
        let file = temporaryFile("contract-head")
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await kind.make().send(TransportRequest(url: origin.url("/size/\(size)"), timeout: 20),
                                                  bodyFile: file, events: events)
        let order = seen.withLock { $0 }
        #expect(order.first == "head" && order.filter { $0 == "head" }.count == 1 && order.count > 1)
        let head = try #require(heads.withLock { $0.first })
        #expect(head.status == response.status && head.url == response.url)
        #expect(head.headers.first("Content-Length") == String(size))
        #expect(head.headers.first("Content-Length") == response.headers.first("Content-Length"))
    }

    @Test(arguments: TransportKind.available)
    func theHeadOfABodyThatNeverEndsIsReportedWhileItStreams(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        // Paced, so the body file stays small however long a loaded machine takes to get here.
        try await origin.configure(path: "/endless", rate: 256 * 1024, endless: true)
        let (heads, continuation) = AsyncStream.makeStream(of: TransportResponseHead.self)
        let file = temporaryFile("contract-endless")
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = kind.make()
        let task = Task { () async throws(TransportError) -> TransportResponse in
            defer { continuation.finish() }
            let events = TransportEvents(head: { continuation.yield($0) })
            return try await transport.send(TransportRequest(url: origin.url("/endless"), timeout: 120),
                                            bodyFile: file, events: events)
        }
        var first: TransportResponseHead?
        for await head in heads {
            first = head
            break
        }
        // The body never ends, so a head seen here was reported before the body was complete.
        task.cancel()
        #expect(first?.status == 200)
        if case .failure(let error) = await task.result {
            #expect(error as? TransportError == .cancelled)
        } else {
            Issue.record("an endless body completed")
        }
    }

    @Test(arguments: TransportKind.available)
    func headAnswersTheHeadWithoutABody(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let (response, body) = try await fetch(kind, TransportRequest(method: "HEAD", url: origin.url("/size/5000")))
        #expect(response.status == 200 && response.bodySize == 0 && body.isEmpty)
        #expect(response.headers.first("Content-Length") == "5000")
        #expect(try await origin.hits("/size/5000").methods == ["HEAD": 1])
    }

    @Test(arguments: TransportKind.available)
    func aRequestBodyAndMethodReachTheOriginAsGiven(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/len", body: "got", echoHeader: "Content-Length")
        try await origin.configure(path: "/m", body: "done")
        let payload = Data(repeating: 7, count: 12_345)
        let (posted, postedBody) = try await fetch(kind, TransportRequest(method: "POST", url: origin.url("/len"), body: payload))
        #expect(posted.status == 200 && String(decoding: postedBody, as: UTF8.self) == "got|Content-Length=12345")
        #expect(try await origin.hits("/len").methods == ["POST": 1])
        let (patched, _) = try await fetch(kind, TransportRequest(method: "PATCH", url: origin.url("/m"), body: Data("p".utf8)))
        #expect(patched.status == 200)
        #expect(try await origin.hits("/m").methods == ["PATCH": 1])
    }

    @Test(arguments: TransportKind.available)
    func nothingIsDecompressedOrAskedForUnlessTheCallerAsked(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let text = String(repeating: "abcdefgh", count: 4_000)
        try await origin.configure(path: "/ae", body: "a", echoHeader: "Accept-Encoding")
        let (_, echoed) = try await fetch(kind, TransportRequest(url: origin.url("/ae")))
        // No coding asked for: none requested (libcurl) or only the identity one (URLSession would ask for all).
        #expect(["a|Accept-Encoding=", "a|Accept-Encoding=identity"].contains(String(decoding: echoed, as: UTF8.self)))
        // Asked for gzip: what arrives and what the head says agree, decoded or not.
        try await origin.configure(path: "/gz", body: text, gzip: true)
        let (response, body) = try await fetch(kind, TransportRequest(url: origin.url("/gz"), headers: [("Accept-Encoding", "gzip")]))
        #expect(response.bodySize == Int64(body.count))
        if let decoded = response.decodedContentEncoding {
            #expect(decoded == "gzip" && body == Data(text.utf8))
            #expect(response.headers.first("Content-Encoding") == nil)
        } else {
            #expect(response.headers.first("Content-Encoding") == "gzip" && Array(body.prefix(2)) == [0x1f, 0x8b])
        }
        if let length = response.headers.first("Content-Length") { #expect(length == String(body.count)) }
    }

    @Test(arguments: TransportKind.available)
    func aBodyShorterThanItsContentLengthIsTruncated(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/t", size: 100_000, truncate: true)
        let error = await failure(TransportRequest(url: origin.url("/t"), timeout: 20), via: kind.make())
        guard let error, error.code == .truncated, let expected = error.expectedBytes,
              let received = error.receivedBytes else {
            Issue.record("expected truncated, got \(String(describing: error))")
            return
        }
        #expect(expected == 100_000 && received < expected)
    }

    @Test(arguments: TransportKind.available)
    func droppedAndRefusedConnectionsAreConnectionFailures(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        try await origin.configure(path: "/drop", drop: true)
        let dropped = await failure(TransportRequest(url: origin.url("/drop"), timeout: 20), via: kind.make())
        guard dropped?.code == .connectionFailed else {
            Issue.record("expected connectionFailed for a dropped connection, got \(String(describing: dropped))")
            origin.stop()
            return
        }
        let url = origin.url("/x")
        origin.stop()
        let refused = await failure(TransportRequest(url: url, timeout: 20), via: kind.make())
        #expect(refused?.isOriginUnreachable == true, "\(String(describing: refused))")
    }

    @Test(arguments: TransportKind.available)
    func aSlowOriginTimesOut(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/slow", body: "late", delay: 3)
        let error = await failure(TransportRequest(url: origin.url("/slow"), timeout: 0.5), via: kind.make())
        #expect(error == .timedOut)
    }

    @Test(arguments: TransportKind.available)
    func cancellingInFlightIsCancelled(kind: TransportKind) async throws {
        #expect(try await errorOfASendCancelledInFlight(via: kind.make()) == .cancelled)
    }

    @Test(arguments: TransportKind.available)
    func redirectsAreFollowedOnlyWhenAsked(kind: TransportKind) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/r", status: 302, body: "moved", redirect: "/dest")
        try await origin.configure(path: "/dest", body: "dest")
        let (unfollowed, movedBody) = try await fetch(kind, TransportRequest(url: origin.url("/r")))
        #expect(unfollowed.status == 302 && unfollowed.headers.first("Location") == "/dest")
        #expect(unfollowed.url == origin.url("/r") && movedBody == Data("moved".utf8))
        #expect(try await origin.hits("/dest").total == 0)
        let heads = Mutex<[Int]>([])
        let file = temporaryFile("contract-redirect")
        defer { try? FileManager.default.removeItem(at: file) }
        let followed = try await kind.make().send(TransportRequest(url: origin.url("/r"), timeout: 20, followRedirects: true),
                                                  bodyFile: file,
                                                  events: TransportEvents(head: { head in heads.withLock { $0.append(head.status) } }))
        let destBody = try followed.inMemoryBody ?? Data(contentsOf: file)
        #expect(followed.status == 200 && followed.url.path == "/dest" && destBody == Data("dest".utf8))
        // Only the final response's head is reported, not the redirect the transport followed.
        #expect(heads.withLock { $0 } == [200])
    }
}
