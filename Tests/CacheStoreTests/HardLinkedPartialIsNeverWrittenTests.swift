import Foundation
import Testing
@testable import CacheStore

/// A partial body in `tmp/` is cut to its verified prefix and appended to; a hard link planted at its name (which
/// `O_NOFOLLOW` does not see) must never make the store cut or extend the other file: the partial is dropped, its
/// name in `tmp/` removed, and the other file is left byte for byte as it was.
@Suite struct HardLinkedPartialIsNeverWrittenTests {
    static let key = StoreKey(primary: "GET https://example.com/big")
    static let verified = 100_000

    /// Keeps a partial of `verified` bytes of `body` in `store` and returns its file's name in `tmp/`.
    static func keepPartial(_ store: CacheStore, _ body: Data) throws -> String {
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data("head".utf8), for: key)
        try writer.write(body.prefix(verified))
        #expect(store.keepPartial(writer) == Int64(verified))
        return writer.name
    }

    /// Replaces `tmp/<name>` by a hard link to a new file outside the cache holding the partial's own bytes (so its
    /// checksum passes) followed by more bytes (so a cut to the verified prefix would shorten it); returns the
    /// other file and its bytes.
    static func plantHardLink(_ store: CacheStore, _ name: String, in outside: TemporaryDirectory) throws -> (URL, Data) {
        let partial = store.directoryURL.appendingPathComponent("tmp/\(name)")
        let precious = try Data(contentsOf: partial) + Data("# important user file, not the cache's\n".utf8) + bytes(50_000, seed: 9)
        let target = outside.url.appendingPathComponent("bashrc")
        try precious.write(to: target)
        try FileManager.default.removeItem(at: partial)
        #expect(link(target.path, partial.path) == 0)
        return (target, precious)
    }

    static func temporaryNames(_ store: CacheStore) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: store.directoryURL.appendingPathComponent("tmp").path)) ?? []
    }

    static func linkCount(_ url: URL) -> Int {
        var info = stat()
        return stat(url.path, &info) == 0 ? Int(info.st_nlink) : -1
    }

    @Test func recoveryNeverCutsAHardLinkedPartial() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let outside = TemporaryDirectory("outside")
        defer { outside.remove() }
        let body = bytes(300_000, seed: 3)
        let planted: (URL, Data)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            let name = try Self.keepPartial(store, body)
            planted = try Self.plantHardLink(store, name, in: outside)
            store.close()
        }
        let (target, precious) = planted
        let log = LogSink()
        // The exclusive open recovers partials: this one is refused before any cut.
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(try Data(contentsOf: target) == precious)
        #expect(store.partial(for: Self.key) == nil)
        #expect(Self.temporaryNames(store).isEmpty)
        #expect(Self.linkCount(target) == 1)  // only the cache's name was removed
        #expect(log.lines.contains { $0.contains("hard link") }, "\(log.lines)")
        // The body is stored from byte 0 without the outside file ever being touched.
        let writer = try store.makeBodyWriter()
        try writer.write(body)
        try store.commit(writer, metadata: Data("complete".utf8), for: Self.key)
        #expect(store.entry(for: Self.key)?.body == body)
        #expect(try Data(contentsOf: target) == precious)
    }

    @Test func resumeNeverWritesAHardLinkedPartial() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let outside = TemporaryDirectory("outside")
        defer { outside.remove() }
        let body = bytes(300_000, seed: 5)
        let log = LogSink()
        // The link is planted while the store is open: no recovery runs before the resume.
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        let name = try Self.keepPartial(store, body)
        let (target, precious) = try Self.plantHardLink(store, name, in: outside)
        #expect(try store.resumePartial(for: Self.key) == nil)
        #expect(try Data(contentsOf: target) == precious)
        #expect(store.partial(for: Self.key) == nil)
        #expect(Self.temporaryNames(store).isEmpty)
        #expect(Self.linkCount(target) == 1)
        #expect(log.lines.contains { $0.contains("hard link") }, "\(log.lines)")
        let writer = try store.makeBodyWriter()
        try writer.write(body)
        try store.commit(writer, metadata: Data("complete".utf8), for: Self.key)
        #expect(store.entry(for: Self.key)?.body == body)
        #expect(try Data(contentsOf: target) == precious)
        store.close()
        // Nor does a later open touch it.
        _ = try CacheStore(configuration: testConfiguration(dir))
        #expect(try Data(contentsOf: target) == precious)
    }
}
