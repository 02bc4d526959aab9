import Foundation
import Testing
import CacheSystem
@testable import CacheStore

/// A transport writes through the writer's descriptor and tells the writer the bytes and their offset
/// (`BodyWriter.countWritten(_:at:)`): the writer checksums them from memory, counts only what continues the
/// counted prefix, and reads back only what it was not told of.
@Suite struct AWriterChecksumsTheBytesItIsToldOfTests {
    /// Writes `data` at the descriptor's offset and tells the writer, as `ResponseBodyFile` does.
    private func writeAndTell(_ writer: BodyWriter, _ data: Data) {
        let fd = writer.fileDescriptor
        let offset = cs_tell(fd)
        data.withUnsafeBytes { raw in
            #expect(cs_write_all(fd, raw.baseAddress!, raw.count) == 0)
            writer.countWritten(raw, at: offset)
        }
    }

    private func crc(_ data: Data) -> UInt32 { BlobFiles.checksum(data) }

    @Test func toldBytesAreCountedWithoutAReadBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let body = bytes(300_000, seed: 9)
        let writer = try store.makeBodyWriter()
        writeAndTell(writer, body.prefix(120_000))
        #expect(writer.bytesWritten == 120_000)
        writeAndTell(writer, body[120_000...])
        let (verified, checksum) = try writer.checkpoint(sync: false)
        #expect(verified == 300_000)
        #expect(checksum == crc(body))
    }

    @Test func bytesChangedInTmpBehindTheWritersBackAreNeverServed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = testConfiguration(dir)
        configuration.maxMemoryBytes = 0
        let store = try CacheStore(configuration: configuration)
        let key = StoreKey(primary: "GET https://example.com/changed")
        let body = bytes(300_000, seed: 3)
        let writer = try store.makeBodyWriter()
        writeAndTell(writer, body)
        // Another program rewrites the middle of the file after the bytes were counted.
        let other = cs_open_file(writer.fileURL.path, CS_OPEN_WRITE, CS_OPEN_EXISTING, 0)
        #expect(other >= 0)
        let junk = Data(repeating: 0x41, count: 1000)
        junk.withUnsafeBytes { raw in
            _ = cs_seek(other, 150_000)
            #expect(cs_write_all(other, raw.baseAddress!, raw.count) == 0)
        }
        _ = cs_close(other)
        try store.commit(writer, metadata: Data("m".utf8), for: key)
        // The committing store did not see the file hold those bytes, so its first read checks them too.
        #expect(store.entry(for: key) == nil)
        store.close()
        // The stored checksum is the one of the bytes written (a read-back would have taken the changed bytes'):
        // the changed file fails it and is not served.
        let reopened = try CacheStore(configuration: configuration)
        #expect(reopened.entry(for: key) == nil)
        #expect(reopened.verify(repair: false).problems.isEmpty)  // the damaged entry was removed
    }

    @Test func aRewrittenOverlapCountsOnlyWhatContinuesThePrefix() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let body = bytes(200_000, seed: 5)
        let writer = try store.makeBodyWriter()
        writeAndTell(writer, body.prefix(100_000))
        // A 206 starting before the held count: the same bytes again from 60,000, then new ones.
        _ = cs_seek(writer.fileDescriptor, 60_000)
        writeAndTell(writer, body[60_000..<150_000])
        #expect(writer.bytesWritten == 150_000)
        writeAndTell(writer, body[150_000...])
        let (verified, checksum) = try writer.checkpoint(sync: true)
        #expect(verified == 200_000)
        #expect(checksum == crc(body))
    }

    @Test func bytesAfterAGapAreLeftForTheReadBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let body = bytes(90_000, seed: 6)
        let writer = try store.makeBodyWriter()
        writeAndTell(writer, body.prefix(30_000))
        // 30,000 bytes written without telling the writer, then 30,000 told: they follow a gap, so not counted.
        let fd = writer.fileDescriptor
        body[30_000..<60_000].withUnsafeBytes { raw in #expect(cs_write_all(fd, raw.baseAddress!, raw.count) == 0) }
        writeAndTell(writer, body[60_000...])
        #expect(writer.bytesWritten == 30_000)
        let (verified, checksum) = try writer.checkpoint(sync: false)
        #expect(verified == 90_000)
        #expect(checksum == crc(body))
    }

    @Test func aTellingAfterTheCommitChangesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET https://example.com/late")
        let body = bytes(70_000, seed: 8)
        let writer = try store.makeBodyWriter()
        writeAndTell(writer, body)
        try store.commit(writer, metadata: Data("m".utf8), for: key)
        Data(repeating: 1, count: 10).withUnsafeBytes { writer.countWritten($0, at: 70_000) }
        #expect(writer.bytesWritten == 70_000)
        #expect(store.entry(for: key)?.body == body)
    }
}
