import CacheStore
import Foundation
import Testing
@testable import ModelCache

@Suite("ModelCache: versions and corrupted values are dropped, never returned")
struct VersioningTests {
    @Test("a new cache version drops values written by the old one", arguments: [true, false])
    func cacheVersionChange(memoryTier: Bool) async throws {
        let fixture = try Fixture { $0.cacheVersion = "1.0"; if !memoryTier { $0.maxMemoryEntries = 0 } }
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(3), forKey: "menu")
        let updated = try fixture.reopen { $0.cacheVersion = "2.0" }
        let result = updated.lookup("menu", as: [MenuItem].self)
        guard case .discarded(let reason) = result else {
            Issue.record("expected .discarded, got \(result)")
            return
        }
        #expect(reason == .cacheVersionChanged(stored: "1.0", current: "2.0"))
        #expect(await eventually { fixture.events.discardReasons == [reason] })
        // Dropped for good: a plain miss now, also for the old version.
        if case .miss = updated.lookup("menu", as: [MenuItem].self) {} else { Issue.record("expected .miss") }
        #expect(try fixture.reopen { $0.cacheVersion = "1.0" }.value(forKey: "menu", as: [MenuItem].self) == nil)
        #expect(updated.statistics.discards == 1)
    }

    @Test("a per-call type version that changed drops the value (memory and disk)")
    func typeVersionChange() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(["a", "b"], forKey: "tags", typeVersion: 1)
        #expect(fixture.cache.value(forKey: "tags", as: [String].self, typeVersion: 1)?.value == ["a", "b"])
        let result = fixture.cache.lookup("tags", as: [String].self, typeVersion: 2)
        guard case .discarded(let reason) = result else {
            Issue.record("expected .discarded, got \(result)")
            return
        }
        #expect(reason == .typeVersionChanged(stored: 1, current: 2))
        #expect(fixture.cache.value(forKey: "tags", as: [String].self, typeVersion: 1) == nil)
    }

    @Test("VersionedModel.modelVersion is recorded and checked")
    func versionedModel() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(1), forKey: "menu")
        // Reading with an explicit version equal to the type's succeeds; another version drops it.
        #expect(fixture.cache.value(forKey: "menu", as: [MenuItem].self, typeVersion: 3) != nil)
        #expect(fixture.cache.lookup("menu", as: [MenuItem].self, typeVersion: 4).cached == nil)
        #expect(await eventually { fixture.events.discardReasons == [.typeVersionChanged(stored: 3, current: 4)] })
    }

    @Test("containers of a versioned model carry its version")
    func containerVersions() {
        #expect(ModelCodec.typeVersion(MenuItem.self) == 3)
        #expect(ModelCodec.typeVersion([MenuItem].self) == 3)
        #expect(ModelCodec.typeVersion(MenuItem?.self) == 3)
        #expect(ModelCodec.typeVersion([String: [MenuItem]].self) == 3)
        #expect(ModelCodec.typeVersion([Int].self) == 0)
    }

    @Test("reading a key as another type drops it with typeChanged", arguments: [true, false])
    func typeChange(memoryTier: Bool) throws {
        let fixture = try Fixture { if !memoryTier { $0.maxMemoryEntries = 0 } }
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(2), forKey: "menu")
        let result = fixture.cache.lookup("menu", as: [MenuItemV4].self)
        guard case .discarded(let reason) = result, reason.code == .typeChanged,
              let stored = reason.stored, let requested = reason.current else {
            Issue.record("expected typeChanged, got \(result)")
            return
        }
        #expect(stored.hasSuffix("MenuItem>"))
        #expect(requested.hasSuffix("MenuItemV4>"))
        #expect(fixture.cache.value(forKey: "menu", as: [MenuItem].self) == nil)
    }

    @Test("garbage bytes written under the key through CacheStore are a miss, not a crash")
    func corruptedBody() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(5), forKey: "menu")
        let store = try CacheStore(directory: fixture.directory, namespace: fixture.cache.namespace)
        let key = ModelCache.storeKey("menu")
        let metadata = try #require(store.info(for: key)).metadata
        try store.store(Data([0xde, 0xad, 0xbe, 0xef, 0x00, 0x7b]), metadata: metadata, for: key)

        let reader = try fixture.reopen()
        let result = reader.lookup("menu", as: [MenuItem].self)
        guard case .discarded(let reason) = result, reason.code == .undecodable else {
            Issue.record("expected undecodable, got \(result)")
            return
        }
        #expect(store.info(for: key) == nil)
        #expect(reader.value(forKey: "menu", as: [MenuItem].self) == nil)
    }

    @Test("unreadable metadata (not written by ModelCache) is a miss and is removed",
          arguments: [Data(), Data("garbage".utf8), Data(#"{"format":99}"#.utf8)])
    func corruptedMetadata(metadata: Data) throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try CacheStore(directory: fixture.directory, namespace: fixture.cache.namespace)
        try store.store(Data("[1,2,3]".utf8), metadata: metadata, for: ModelCache.storeKey("numbers"))
        let result = fixture.cache.lookup("numbers", as: [Int].self)
        guard case .discarded(let reason) = result, reason.code == .corruptMetadata else {
            Issue.record("expected corruptMetadata, got \(result)")
            return
        }
        #expect(store.info(for: ModelCache.storeKey("numbers")) == nil)
    }

    @Test("a changed model shape that was not versioned still fails safely (undecodable)")
    func unversionedShapeChange() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        // Write a MenuItem-shaped JSON under MenuItemV4's type name and version, as an old build would have.
        let store = try CacheStore(directory: fixture.directory, namespace: fixture.cache.namespace)
        let record = ModelRecordMetadata(format: ModelRecordMetadata.currentFormat,
                                         typeName: ModelCodec.typeName(MenuItemV4.self), typeVersion: 3,
                                         cacheVersion: "", savedAt: 0, encoding: .json)
        let body = try ModelCodec.encode(MenuItem.sample(1)[0], as: .json)
        try store.store(body, metadata: try record.encoded(), for: ModelCache.storeKey("item"))
        let result = fixture.cache.lookup("item", as: MenuItemV4.self)
        guard case .discarded(let reason) = result, reason.code == .undecodable else {
            Issue.record("expected undecodable, got \(result)")
            return
        }
    }
}
