import CacheTestSupport
import DownloadCache
import HTTPCacheSemantics
import Foundation
import Testing

// The code between the BEGIN/END README lines is README.md's `ResponseStream` snippet ("## Library"), verbatim
// (after its three imports); it compiles and runs here against the loopback origin.

// BEGIN README
/// The answer was not the file: its status (a 404's chunks are its error page, not the resource).
struct NotTheFile: Error { var status: Int? }

/// Saves `url` to `destination` while it arrives (and is stored in the cache); returns the bytes written.
func save(_ url: URL, to destination: URL, cache: DownloadCache) async throws -> Int64 {
    let stream = cache.stream(CacheRequest(url: url))
    var chunks = stream.makeAsyncIterator()
    var chunk = try await chunks.next()             // the status is known from the first chunk (or the end) on
    guard let status = stream.status, (200..<300).contains(status) else { throw NotTheFile(status: stream.status) }
    guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let file = try FileHandle(forWritingTo: destination)
    defer { try? file.close() }
    var written: Int64 = 0
    while let data = chunk {
        try file.write(contentsOf: data)
        written += Int64(data.count)
        chunk = try await chunks.next()             // throws the DownloadError of a failed transfer
    }
    return written
}
// END README

@Suite("README stream example")
struct ReadmeStreamExampleTests {
    /// origin.py's generated body: byte i is i % 256.
    static func generated(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 256) })
    }

    @Test("the README stream example saves a 2xx body and refuses a 404's")
    func saveChecksTheStatus() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-readme-stream-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory, namespace: "files")
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let file = directory.appendingPathComponent("file.bin")
        let written = try await save(origin.url("/size/3000000"), to: file, cache: cache)
        #expect(written == 3_000_000)
        #expect(try Data(contentsOf: file) == Self.generated(3_000_000))
        let missing = directory.appendingPathComponent("missing.html")
        await #expect(throws: NotTheFile.self) { _ = try await save(origin.url("/nothing-here"), to: missing, cache: cache) }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        // Stored while saved: the second save is a hit (one origin request).
        _ = try await save(origin.url("/size/3000000"), to: file, cache: cache)
        #expect(try await origin.hits("/size/3000000").total == 1)
        await cache.close()
    }

    @Test("README.md's ResponseStream snippet is this file's README block, verbatim")
    func readmeMatches() throws {
        let (readme, found) = try ReadmeSnippet.load(from: #filePath)
        let snippet = try #require(found)
        #expect(snippet.contains("stream.status"))
        #expect(readme.contains("```swift\nimport DownloadCache\nimport Foundation\nimport HTTPCacheSemantics\n\n" + snippet + "```"))
    }
}
