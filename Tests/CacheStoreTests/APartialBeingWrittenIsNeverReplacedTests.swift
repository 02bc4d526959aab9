import Foundation
import Testing
@testable import CacheStore

/// A transfer registering its body as the partial of a URL never takes the partial another live transfer is
/// writing: that file stays its writer's (replacing the row deleted it under the running transfer, which then
/// failed after receiving everything). An idle partial (its transfer ended) is still replaced.
@Suite struct APartialBeingWrittenIsNeverReplacedTests {
    @Test func aSecondTransferLeavesTheLivePartialAndItsFileAlone() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET http://127.0.0.1/x")
        let first = try store.makeBodyWriter()
        #expect(try store.beginPartial(first, metadata: Data("a".utf8), for: key))
        try first.write(bytes(5_000, seed: 1))
        let second = try store.makeBodyWriter()
        #expect(try store.beginPartial(second, metadata: Data("b".utf8), for: key) == false)
        try second.write(bytes(5_000, seed: 2))
        #expect(FileManager.default.fileExists(atPath: first.fileURL.path), "the live transfer's file is kept")
        #expect(store.partial(for: key)?.metadata == Data("a".utf8))
        // The first transfer goes on and is committed whole.
        try first.write(bytes(5_000, seed: 3))
        try store.commit(first, metadata: Data("m".utf8), for: key)
        #expect(store.entry(for: key)?.body == bytes(5_000, seed: 1) + bytes(5_000, seed: 3))
        second.abort()
    }

    @Test func anIdlePartialIsReplaced() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET http://127.0.0.1/y")
        let first = try store.makeBodyWriter()
        try store.beginPartial(first, metadata: Data("a".utf8), for: key)
        try first.write(bytes(5_000, seed: 1))
        #expect(store.keepPartial(first) == 5_000)
        let second = try store.makeBodyWriter()
        #expect(try store.beginPartial(second, metadata: Data("b".utf8), for: key))
        #expect(store.partial(for: key)?.metadata == Data("b".utf8))
        second.abort()
    }
}
