import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `--compressed`: asks for gzip/deflate, stores the representation as received, decodes it on output.
@Suite struct CompressedOutputTests {
    @Test func gzipIsDecodedOnOutputAndStoredAsReceived() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/z", headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Encoding")],
                                   body: String(repeating: "hello ", count: 100), gzip: true)
        let url = origin.url("/z").absoluteString
        let decoded = await cli.run(["get", "--compressed", url])
        #expect(decoded.code == 0, "\(decoded.err)")
        #expect(decoded.out == String(repeating: "hello ", count: 100))
        // The same variant without --compressed: a hit, the gzip bytes as stored.
        let raw = cli.directory.appendingPathComponent("raw.gz")
        let hit = await cli.run(["get", "-v", "-H", "Accept-Encoding: gzip, deflate", "-o", raw.path, url])
        #expect(hit.err.hasPrefix("HIT "), "\(hit.err)")
        let bytes = try Data(contentsOf: raw)
        #expect(bytes.prefix(2) == Data([0x1F, 0x8B]))
        #expect(try await origin.hits("/z").total == 1)
        // A second --compressed run is a hit and decodes the stored bytes.
        #expect(await cli.run(["get", "--compressed", url]).out == String(repeating: "hello ", count: 100))
        #expect(try await origin.hits("/z").total == 1)
    }

    @Test func largeFileBackedBodyIsDecodedInChunks() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let size = 3 << 20
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size, gzip: true)
        let file = cli.directory.appendingPathComponent("big")
        let run = await cli.run(["get", "--compressed", "-o", file.path, origin.url("/big").absoluteString])
        #expect(run.code == 0, "\(run.err)")
        let data = try Data(contentsOf: file)
        #expect(data.count == size)
        #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 256) })
    }

    @Test func withoutCompressedNothingIsAskedOrDecoded() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let asked = await cli.run(["get", "--compressed", origin.url("/echo-headers").absoluteString])
        #expect(asked.out.contains("Accept-Encoding: gzip, deflate\n"), "\(asked.out)")
        let plain = await cli.run(["get", origin.url("/echo-headers").absoluteString])
        #expect(!plain.out.contains("Accept-Encoding"), "\(plain.out)")
        try await origin.configure(path: "/g", headers: [("Cache-Control", "no-store")], body: "abc", gzip: true)
        let file = cli.directory.appendingPathComponent("g")
        #expect(await cli.run(["get", "-o", file.path, origin.url("/g").absoluteString]).code == 0)
        #expect(try Data(contentsOf: file).prefix(2) == Data([0x1F, 0x8B]))
    }

    /// A gzip response stored for `--compressed` without `Vary` (nginx with gzip_vary off) is not served to a plain
    /// get: that one fetches (one more origin hit) and gets identity; its identity response replaces the gzip one
    /// (same secondary key), and serves later plain and `--compressed` gets without the origin.
    @Test func codedResponseStoredWithoutVaryIsNotServedToAPlainGet() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let text = String(repeating: "hello ", count: 100)
        try await origin.configure(path: "/nv", headers: [("Cache-Control", "max-age=600")], body: text, gzip: true)
        let url = origin.url("/nv").absoluteString
        let a = cli.directory.appendingPathComponent("a"), b = cli.directory.appendingPathComponent("b")
        let compressed = await cli.run(["get", "--compressed", "-o", a.path, url])
        #expect(compressed.code == 0, "\(compressed.err)")
        #expect(try String(contentsOf: a, encoding: .utf8) == text)
        // The origin answers a request without Accept-Encoding in identity.
        try await origin.configure(path: "/nv", headers: [("Cache-Control", "max-age=600")], body: text)
        let plain = await cli.run(["get", "-v", "-o", b.path, url])
        #expect(plain.code == 0, "\(plain.err)")
        #expect(!plain.err.hasPrefix("HIT "), "\(plain.err)")
        #expect(try String(contentsOf: b, encoding: .utf8) == text)
        #expect(try await origin.hits("/nv").total == 2)
        let again = await cli.run(["get", "-v", url])
        #expect(again.err.hasPrefix("HIT "), "\(again.err)")
        #expect(again.out == text)
        let decoded = await cli.run(["get", "-v", "--compressed", url])
        #expect(decoded.err.hasPrefix("HIT "), "\(decoded.err)")
        #expect(decoded.out == text)
        #expect(try await origin.hits("/nv").total == 2)
    }
}
