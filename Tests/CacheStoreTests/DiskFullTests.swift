import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

@Suite struct DiskFullTests {
    @Test(.enabled(if: TestMounts.canMountTmpfs, "needs permission to mount a tmpfs (root); the injected ENOSPC tests still run"))
    func aReallyFullDiskIsATypedErrorAndLosesNothingAcknowledged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir.url.path]))
        defer { _ = TestMounts.run(["umount", "-l", dir.url.path]) }
        var config = testConfiguration(dir)
        config.maxDiskBytes = nil
        var acknowledged: [Int] = []
        var failure: CacheStoreError?
        do {
            let store = try CacheStore(configuration: config)
            for i in 0..<100 {
                do {
                    try store.store(bytes(100_000, seed: UInt8(i)), metadata: Data("\(i)".utf8), for: StoreKey(primary: "\(i)"))
                    acknowledged.append(i)
                } catch {
                    failure = error
                    break
                }
            }
            #expect(failure?.code == .diskFull, "\(String(describing: failure))")
            #expect(acknowledged.count >= 5)
            #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
            // Space freed: writing works again.
            for i in acknowledged.prefix(5) { try store.remove(StoreKey(primary: "\(i)")) }
            try store.store(bytes(100_000, seed: 200), metadata: Data(), for: StoreKey(primary: "after"))
            acknowledged.removeFirst(5)
        }
        let store = try CacheStore(configuration: config)
        for i in acknowledged {
            #expect(store.entry(for: StoreKey(primary: "\(i)"))?.body == bytes(100_000, seed: UInt8(i)))
        }
        #expect(store.entry(for: StoreKey(primary: "after"))?.body == bytes(100_000, seed: 200))
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(store.verify(repair: false).ok)
    }
}
