import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// `"bodyFile"` answers: a body over the inline limit, or any body when the request asks with `"bodyFile": true`,
/// is answered with the path of a file holding its exact bytes instead of inline text.
@Suite(.serialized) struct DriverBodyFileAnswerTests {
    /// Byte `i` of the origin's generated `/size/<n>` body is `i % 256`.
    static func generated(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0) }) }

    static func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func bodyOverTheInlineLimitIsAnsweredWithTheStoredBlob() async throws {
        var options = DriverSessionOptions()
        options.inlineBodyLimit = 50_000
        try await withDriver(options: options, inMemoryBodyLimit: 1_024) { h in
            h.send(id: "big-miss", path: "/size/100000")
            _ = try await h.waitForAnswers(1)
            h.send(id: "big-hit", path: "/size/100000")
            h.send(id: "small", path: "/size/300")
            let answers = try await h.waitForAnswers(3)
            for id in ["big-miss", "big-hit"] {
                let answer = try #require(answers.first { $0.stringID == id })
                #expect(answer.status == 200)
                #expect(answer.body == nil && answer.object["bodyBase64"] == nil, "\(answer.raw)")
                let path = try #require(answer.object["bodyFile"] as? String, "\(answer.raw)")
                // The verified stored blob inside the cache directory, not a copy.
                #expect(path.hasPrefix(h.directory.path), "\(path)")
                #expect(FileManager.default.contents(atPath: path) == Self.generated(100_000))
            }
            let small = try #require(answers.first { $0.stringID == "small" })
            #expect(small.object["bodyFile"] == nil)
            #expect(small.object["bodyBase64"] as? String == Self.generated(300).base64EncodedString())
            #expect(try await h.origin.hits("/size/100000").total == 1)
        }
    }

    @Test func requestedBodyFileOfAnInMemoryBodyIsAPrivateFileRemovedWhenTheSessionEnds() async throws {
        try await withDriver { h in
            try await h.origin.configure(path: "/text", headers: [("Cache-Control", "max-age=60")], body: "héllo")
            h.send(h.requestLine(id: 1, path: "/text", bodyFile: true))
            let answer = try #require(try await h.waitForAnswers(1).first)
            #expect(answer.body == nil, "\(answer.raw)")
            let path = try #require(answer.object["bodyFile"] as? String, "\(answer.raw)")
            #expect(!path.hasPrefix(h.directory.path))
            #expect(!path.contains("//"), "one separator between the temporary directory and ours: \(path)")
            #expect(FileManager.default.contents(atPath: path) == Data("héllo".utf8))
            #expect(try Self.mode(of: path) & 0o777 == 0o600)
            #expect(try Self.mode(of: (path as NSString).deletingLastPathComponent) & 0o777 == 0o700)
            await h.closeInput()
            h.session.removeBodyFiles()
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
        }
    }

    /// A body the cache hands over in memory (under its in-memory limit) but stores as a blob file: the answer
    /// names the verified blob, miss and hit alike, and makes no copy; a body of other bytes under the same URL
    /// (a range of it) gets a private file.
    @Test func requestedBodyFileOfAnInMemoryBodyStoredAsAFileIsTheStoredBlob() async throws {
        try await withDriver { h in
            h.send(h.requestLine(id: "miss", path: "/size/30000", bodyFile: true))
            _ = try await h.waitForAnswers(1)
            h.send(h.requestLine(id: "hit", path: "/size/30000", bodyFile: true))
            h.send(h.requestLine(id: "range", path: "/size/30000", headers: [["Range", "bytes=0-99"]], bodyFile: true))
            let answers = try await h.waitForAnswers(3)
            var paths: [String] = []
            for id in ["miss", "hit"] {
                let answer = try #require(answers.first { $0.stringID == id })
                let path = try #require(answer.object["bodyFile"] as? String, "\(answer.raw)")
                #expect(path.hasPrefix(h.directory.path) && path.contains("/blobs/"), "\(id): \(path)")
                #expect(FileManager.default.contents(atPath: path) == Self.generated(30_000))
                paths.append(path)
            }
            #expect(paths[0] == paths[1])
            let range = try #require(answers.first { $0.stringID == "range" })
            #expect(range.status == 206)
            let rangePath = try #require(range.object["bodyFile"] as? String, "\(range.raw)")
            #expect(!rangePath.hasPrefix(h.directory.path), "\(rangePath)")
            #expect(FileManager.default.contents(atPath: rangePath) == Self.generated(100))
            #expect(try await h.origin.hits("/size/30000").total == 1)
        }
    }

    @Test func requestedBodyFileOfAnUnstoredLargeBodyIsKeptUntilTheSessionEnds() async throws {
        try await withDriver(inMemoryBodyLimit: 1_024) { h in
            h.send(h.requestLine(id: "nostore", path: "/size/20000?cc=no-store", bodyFile: true))
            let answer = try #require(try await h.waitForAnswers(1).first)
            let path = try #require(answer.object["bodyFile"] as? String, "\(answer.raw)")
            #expect(FileManager.default.contents(atPath: path) == Self.generated(20_000))
            await h.closeInput()
            h.session.removeBodyFiles()
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
