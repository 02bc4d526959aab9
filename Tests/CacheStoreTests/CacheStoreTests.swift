import Foundation
import Testing
@testable import CacheStore

@Suite struct CacheStoreRoundTripTests {
    @Test(arguments: [0, 1, 100, 8 << 10, (8 << 10) + 1, 300_000])
    func roundTripOfEveryBodySize(size: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/\(size)")
        let body = bytes(size)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            let info = try store.store(body, metadata: Data("meta".utf8), for: key)
            #expect(info.bodySize == Int64(size))
            #expect(store.entry(for: key)?.body == body)
            #expect((store.bodyFileURL(for: key) != nil) == (size > 8 << 10))
        }
        // Reopened: the disk tier alone must return the same bytes.
        let reopened = try CacheStore(configuration: testConfiguration(dir))
        let entry = try #require(reopened.entry(for: key))
        #expect(entry.body == body)
        #expect(entry.info.metadata == Data("meta".utf8))
        #expect(reopened.statistics.diskHits == 1)
        #expect(reopened.statistics.diskBytes == Int64(size))
        #expect(bytesOnDisk(reopened) == Int64(size))
    }
}
