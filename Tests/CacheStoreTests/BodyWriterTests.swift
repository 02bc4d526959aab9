import Foundation
import Testing
@testable import CacheStore

@Suite struct BodyWriterTests {
    @Test func chunksStreamIntoABlobFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let writer = try store.makeBodyWriter()
        #expect(writer.fileURL.path.hasPrefix(store.directoryURL.appendingPathComponent("tmp").path))
        var expected = Data()
        for i in 0..<20 {
            let chunk = bytes(16_384, seed: UInt8(i))
            try writer.write(chunk)
            expected.append(chunk)
        }
        #expect(writer.bytesWritten == Int64(expected.count))
        let key = StoreKey(primary: "big")
        let info = try store.commit(writer, metadata: Data("m".utf8), for: key)
        #expect(info.bodySize == Int64(expected.count))
        #expect(!FileManager.default.fileExists(atPath: writer.fileURL.path))
        let file = try #require(store.bodyFileURL(for: key))
        #expect(try Data(contentsOf: file) == expected)
        #expect(store.entry(for: key)?.body == expected)
        #expect(throws: CacheStoreError.self) { try writer.write(Data([1])) }
    }

    @Test func aFileMovedIntoPlaceIsCommittedWithItsOwnChecksum() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let writer = try store.makeBodyWriter()
        try writer.write(Data("partial".utf8))
        let download = dir.url.appendingPathComponent("download.tmp")
        let body = bytes(100_000, seed: 9)
        try body.write(to: download)
        #expect(rename(download.path, writer.fileURL.path) == 0)
        let key = StoreKey(primary: "moved")
        let info = try store.commit(writer, metadata: Data(), for: key)
        #expect(info.bodySize == 100_000)
        #expect(info.checksum == BlobFiles.checksum(body))
        let reopened = try CacheStore(configuration: testConfiguration(dir))
        #expect(reopened.entry(for: key)?.body == body)
    }

    @Test func aSmallStreamedBodyIsStoredInline() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let writer = try store.makeBodyWriter()
        try writer.write(Data("hello".utf8))
        let key = StoreKey(primary: "small")
        try store.commit(writer, metadata: Data(), for: key)
        #expect(store.bodyFileURL(for: key) == nil)
        #expect(store.entry(for: key)?.body == Data("hello".utf8))
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
    }

    @Test func abortDeletesTheTemporaryFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let writer = try store.makeBodyWriter()
        try writer.write(bytes(1000))
        writer.abort()
        #expect(!FileManager.default.fileExists(atPath: writer.fileURL.path))
        #expect(throws: CacheStoreError.self) { try store.commit(writer, metadata: Data(), for: StoreKey(primary: "x")) }
        #expect(store.allEntries().isEmpty)
    }

    @Test func theFileIsCreatedOnTheFirstByteWritten() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let writer = try store.makeBodyWriter()
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        try writer.write(Data())
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        try writer.write(Data("x".utf8))
        #expect(BlobFiles.list(store.files.tmpPath).count == 1)
        #expect(FileManager.default.fileExists(atPath: writer.fileURL.path))
        writer.abort()
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
    }

    @Test(arguments: [8 << 10, -1])
    func aWriterNeverWrittenToCommitsAnEmptyBody(inlineThreshold: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = testConfiguration(dir)
        configuration.inlineThreshold = inlineThreshold
        let store = try CacheStore(configuration: configuration)
        let writer = try store.makeBodyWriter()
        #expect(try writer.contents(size: 0).isEmpty)
        let key = StoreKey(primary: "empty")
        let info = try store.commit(writer, metadata: Data("m".utf8), for: key)
        #expect(info.bodySize == 0)
        #expect(store.entry(for: key)?.body == Data())
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        let reopened = try CacheStore(configuration: configuration)
        #expect(reopened.entry(for: key)?.body == Data())
    }

    @Test func anUnwrittenWriterLeavesNothingWhenAbortedOrDropped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let aborted = try store.makeBodyWriter()
        aborted.abort()
        #expect(throws: CacheStoreError.self) { try aborted.write(Data([1])) }
        #expect(aborted.fileDescriptor == -1)
        do { _ = try store.makeBodyWriter() }
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
    }

    @Test func aWriterOfAnotherStoreIsRejected() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try CacheStore(configuration: testConfiguration(dir, namespace: "a"))
        let b = try CacheStore(configuration: testConfiguration(dir, namespace: "b"))
        let writer = try a.makeBodyWriter()
        try writer.write(Data("x".utf8))
        let error = #expect(throws: CacheStoreError.self) { try b.commit(writer, metadata: Data(), for: StoreKey(primary: "x")) }
        #expect(error?.code == .invalidArgument)
    }
}
