import Foundation
import Testing
@testable import CacheStore

/// The index's totals row comes from a file that may be damaged or edited: a byte total near `Int64.max`
/// beside a kept partial must not trap when the limits are enforced; the store goes on storing and serving.
@Suite struct DamagedTotalsNeverTrapTests {
    @Test func aTotalNearInt64MaxBesideAPartialDoesNotTrapAStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxDiskBytes = 1 << 30
        let store = try CacheStore(configuration: config)
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data("head".utf8), for: StoreKey(primary: "partial"))
        try writer.write(bytes(10_000, seed: 3))
        #expect(store.keepPartial(writer) == 10_000)
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE totals SET bytes = \(Int64.max - 1000)")
        }
        // Without the overflow check this store traps on `entryBytes + partialBytes`.
        try store.store(bytes(20_000, seed: 5), metadata: Data(), for: StoreKey(primary: "new"))
        #expect(store.partial(for: StoreKey(primary: "partial")) == nil, "the partial is evicted: the total says over")
        #expect(store.verify(repair: false).ok == false, "verify reports the drifted totals")
    }
}
