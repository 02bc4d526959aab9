import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// The test origin's Range / If-Range support and its buggy-origin switches, as origin.py documents them
/// (the range and resume tests rely on them).
@Suite struct OriginRangeFixtureTests {
    func send(_ path: String, _ headers: [(String, String)], origin: OriginServer) async throws -> (TransportResponse, Data) {
        var request = TransportRequest(url: origin.url(path), timeout: 10)
        for (name, value) in headers { request.headers.add(name, value) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-origin-range-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await TransportKind.platformDefault.make().send(request, bodyFile: file, progress: nil)
        return (response, try response.inMemoryBody ?? Data(contentsOf: file))
    }

    /// Bytes `first...last` of a generated body whose n-th representation (`shift`) has byte i = (i + n) % 256.
    func generated(_ first: Int, _ last: Int, shift: Int = 0) -> Data {
        Data((first...last).map { UInt8(($0 + shift) % 256) })
    }

    @Test func singleRangesAreAnsweredWithContentRange() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/r", size: 1000, etag: "\"v1\"")
        let cases: [(String, Int, Int)] = [("bytes=10-19", 10, 19), ("bytes=990-", 990, 999), ("bytes=-5", 995, 999),
                                            ("bytes=0-5000", 0, 999), ("bytes=0-0", 0, 0)]
        for (value, first, last) in cases {
            let (response, body) = try await send("/r", [("Range", value)], origin: origin)
            #expect(response.status == 206, "\(value)")
            #expect(response.headers.first("Content-Range") == "bytes \(first)-\(last)/1000", "\(value)")
            #expect(body == generated(first, last), "\(value)")
        }
        let (unsatisfiable, _) = try await send("/r", [("Range", "bytes=1000-")], origin: origin)
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers.first("Content-Range") == "bytes */1000")
        for ignored in ["bytes=5-3", "bytes=0-1,5-6", "items=0-1"] {
            let (response, body) = try await send("/r", [("Range", ignored)], origin: origin)
            #expect(response.status == 200 && body.count == 1000, "\(ignored)")
        }
        let hits = try await origin.hits("/r")
        #expect(hits.ranged == 9 && hits.partial == 5)
    }

    @Test func ifRangeMismatchSendsTheWholeBody() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let lastModified = "Tue, 01 Dec 2020 10:00:00 GMT"
        try await origin.configure(path: "/r", size: 100, etag: "\"v1\"", lastModified: lastModified)
        let (matched, _) = try await send("/r", [("Range", "bytes=50-"), ("If-Range", "\"v1\"")], origin: origin)
        #expect(matched.status == 206)
        let (byDate, _) = try await send("/r", [("Range", "bytes=50-"), ("If-Range", lastModified)], origin: origin)
        #expect(byDate.status == 206)
        for mismatch in ["\"v2\"", "W/\"v1\"", "Tue, 01 Dec 2020 10:00:01 GMT"] {
            let (response, body) = try await send("/r", [("Range", "bytes=50-"), ("If-Range", mismatch)], origin: origin)
            #expect(response.status == 200 && body.count == 100, "\(mismatch)")
        }
    }

    @Test func buggyRangeModes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/ignore", size: 100, rangeMode: .ignore)
        try await origin.configure(path: "/early", size: 100, rangeMode: .early, rangeEarly: 10)
        try await origin.configure(path: "/total", size: 100, rangeMode: .wrongTotal)
        try await origin.configure(path: "/none", size: 100, rangeMode: .noContentRange)
        let (ignore, ignoreBody) = try await send("/ignore", [("Range", "bytes=50-")], origin: origin)
        #expect(ignore.status == 200 && ignoreBody.count == 100)
        let (early, earlyBody) = try await send("/early", [("Range", "bytes=50-")], origin: origin)
        #expect(early.status == 206 && early.headers.first("Content-Range") == "bytes 40-99/100" && earlyBody == generated(40, 99))
        let (total, _) = try await send("/total", [("Range", "bytes=50-")], origin: origin)
        #expect(total.status == 206 && total.headers.first("Content-Range") == "bytes 50-99/1100")
        let (none, noneBody) = try await send("/none", [("Range", "bytes=50-")], origin: origin)
        #expect(none.status == 206 && none.headers.first("Content-Range") == nil && noneBody.count == 50)
    }

    @Test func changedRepresentationHasANewETagAndOtherBytes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/c", size: 300, etags: ["\"v1\"", "\"v2\""])
        let (first, firstBody) = try await send("/c", [], origin: origin)
        let (second, secondBody) = try await send("/c", [("Range", "bytes=100-"), ("If-Range", "\"v1\"")], origin: origin)
        #expect(first.headers.first("ETag") == "\"v1\"" && firstBody == generated(0, 299))
        #expect(second.status == 200 && second.headers.first("ETag") == "\"v2\"" && secondBody == generated(0, 299, shift: 1))
    }
}
