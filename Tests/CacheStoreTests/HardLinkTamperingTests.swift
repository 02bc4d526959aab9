import Foundation
import Testing
@testable import CacheStore

/// Hard links defeat O_NOFOLLOW: a file of the store hard-linked to a file elsewhere must never be written,
/// truncated or have its mode changed through the store's name.
@Suite struct HardLinkTamperingTests {
    @Test func aGenerationHardLinkedToAnotherFileIsNeverWritten() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victimDir = TemporaryDirectory("victim")
        defer { victimDir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            store.close()
        }
        let victim = victimDir.url.appendingPathComponent("victim")
        try Data("abcdefgh-precious".utf8).write(to: victim)
        #expect(chmod(victim.path, 0o644) == 0)
        let generation = dir.url.appendingPathComponent("default/generation")
        try FileManager.default.removeItem(at: generation)
        #expect(link(victim.path, generation.path) == 0)
        let store = try CacheStore(configuration: testConfiguration(dir))
        for i in 0..<3 { try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        store.close()
        #expect(try Data(contentsOf: victim) == Data("abcdefgh-precious".utf8))
        var info = stat()
        #expect(stat(victim.path, &info) == 0 && info.st_mode & 0o777 == 0o644, "mode of the other name changed")
    }

    @Test func anIndexHardLinkedToAnotherFileIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victimDir = TemporaryDirectory("victim")
        defer { victimDir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "k"))
            store.close()
        }
        let index = dir.url.appendingPathComponent("default/index.sqlite")
        let other = victimDir.url.appendingPathComponent("other.sqlite")
        #expect(link(index.path, other.path) == 0)
        #expect(chmod(other.path, 0o644) == 0)
        do {
            _ = try CacheStore(configuration: testConfiguration(dir))
            Issue.record("a hard-linked index was opened")
        } catch {
            #expect(error.code == .unsafeFile, "\(error)")
        }
        var info = stat()
        #expect(stat(other.path, &info) == 0 && info.st_mode & 0o777 == 0o644)
    }
}
