import Foundation
import Testing
@testable import CacheStore

/// `StoredEntry` keeps its fields in a shared box: copies must still behave as independent values.
@Suite struct StoredEntryValueSemanticsTests {
    func sample() -> StoredEntry {
        let info = EntryInfo(key: StoreKey(primary: "GET https://example.com/a", variant: "v"),
                             metadata: Data("meta".utf8), bodySize: 3, checksum: 7, storageClass: .session,
                             isPinned: true, createdAt: Date(timeIntervalSince1970: 1_000.25),
                             lastAccessedAt: Date(timeIntervalSince1970: 2_000.125))
        return StoredEntry(info: info, body: Data("abc".utf8))
    }

    @Test func givesBackEveryFieldItWasMadeWith() {
        let entry = sample()
        #expect(entry.info.key == StoreKey(primary: "GET https://example.com/a", variant: "v"))
        #expect(entry.key == entry.info.key)
        #expect(entry.metadata == Data("meta".utf8))
        #expect(entry.info.metadata == Data("meta".utf8))
        #expect(entry.info.bodySize == 3)
        #expect(entry.info.checksum == 7)
        #expect(entry.info.storageClass == .session)
        #expect(entry.info.isPinned)
        #expect(entry.info.createdAt == Date(timeIntervalSince1970: 1_000.25))
        #expect(entry.info.lastAccessedAt == Date(timeIntervalSince1970: 2_000.125))
        #expect(entry.body == Data("abc".utf8))
    }

    @Test func changingACopyLeavesTheOriginal() {
        let original = sample()
        var copy = original
        copy.body = Data("xyz!".utf8)
        copy.info.metadata = Data("other".utf8)
        copy.info.lastAccessedAt = Date(timeIntervalSince1970: 5)
        #expect(copy.body == Data("xyz!".utf8))
        #expect(copy.metadata == Data("other".utf8))
        #expect(copy.info.lastAccessedAt == Date(timeIntervalSince1970: 5))
        #expect(original.body == Data("abc".utf8))
        #expect(original.metadata == Data("meta".utf8))
        #expect(original.info.lastAccessedAt == Date(timeIntervalSince1970: 2_000.125))
    }

    @Test func anAccessTimeStampedOnACopyIsOnlyThatCopys() {
        let original = sample()
        let later = original.accessed(at: Date(timeIntervalSince1970: 9_999))
        #expect(later.info.lastAccessedAt == Date(timeIntervalSince1970: 9_999))
        #expect(later.body == original.body)
        #expect(later.info.createdAt == original.info.createdAt)
        #expect(original.info.lastAccessedAt == Date(timeIntervalSince1970: 2_000.125))
    }

    @Test func aMemoryHitReportsItsAccessTimeWithoutChangingTheStoredNode() {
        let tier = MemoryTier(maxBytes: 1_000, maxEntries: 10, maxEntryBytes: 1_000)
        tier.insert(sample())
        let key = StoreKey(primary: "GET https://example.com/a", variant: "v")
        let hit = tier.get(key, now: Date(timeIntervalSince1970: 3_000), generation: 0)
        #expect(hit?.info.lastAccessedAt == Date(timeIntervalSince1970: 3_000))
        #expect(hit?.body == Data("abc".utf8))
        #expect(tier.peek(key, generation: 0)?.info.lastAccessedAt == Date(timeIntervalSince1970: 2_000.125))
    }
}
