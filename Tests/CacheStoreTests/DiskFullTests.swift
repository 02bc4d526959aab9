import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// Runs `/bin/mount` or `/bin/umount`; true on exit status 0.
func runMount(_ arguments: [String]) -> Bool {
    let program = arguments[0] == "umount" ? "/bin/umount" : "/bin/mount"
    return (try? ChildProcess.runBlocking([program] + arguments.dropFirst(), timeout: .seconds(30)))?.status == 0
}

/// True when this process may mount a small tmpfs (root in a container or VM); probed once.
let canMountTmpfs: Bool = {
    guard getuid() == 0 else { return false }
    let probe = TemporaryDirectory("tmpfs-probe")
    defer { probe.remove() }
    guard runMount(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.url.path]) else { return false }
    return runMount(["umount", probe.url.path])
}()

@Suite struct DiskFullTests {
    @Test(.enabled(if: canMountTmpfs, "needs permission to mount a tmpfs (root); the injected ENOSPC tests still run"))
    func aReallyFullDiskIsATypedErrorAndLosesNothingAcknowledged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(runMount(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir.url.path]))
        defer { _ = runMount(["umount", "-l", dir.url.path]) }
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
