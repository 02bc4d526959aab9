import Foundation
import Testing
@testable import CacheStore

/// `EntryInfo` shares its fields in a copy-on-write box: copies must behave as independent values, and equality
/// and hashing still cover every field.
@Suite struct EntryInfoValueSemanticsTests {
    func sample() -> EntryInfo {
        EntryInfo(key: StoreKey(primary: "GET https://example.com/a", variant: "gzip"), metadata: Data("head".utf8),
                  bodySize: 10, checksum: 99, storageClass: .permanent, isPinned: false,
                  createdAt: Date(timeIntervalSince1970: 1_000.5), lastAccessedAt: Date(timeIntervalSince1970: 1_001.75))
    }

    @Test func everyFieldChangedOnACopyLeavesTheOriginal() {
        let original = sample()
        var copy = original
        copy.key = StoreKey(primary: "GET https://example.com/b")
        copy.metadata = Data("other".utf8)
        copy.bodySize = 11
        copy.checksum = 100
        copy.storageClass = .session
        copy.isPinned = true
        copy.createdAt = Date(timeIntervalSince1970: 5)
        copy.lastAccessedAt = Date(timeIntervalSince1970: 6)
        #expect(original == sample())
        #expect(original.key == StoreKey(primary: "GET https://example.com/a", variant: "gzip"))
        #expect(original.metadata == Data("head".utf8))
        #expect(original.bodySize == 10 && original.checksum == 99 && original.storageClass == .permanent)
        #expect(!original.isPinned)
        #expect(original.createdAt == Date(timeIntervalSince1970: 1_000.5))
        #expect(original.lastAccessedAt == Date(timeIntervalSince1970: 1_001.75))
        #expect(copy.key.primary == "GET https://example.com/b" && copy.metadata == Data("other".utf8))
        #expect(copy.bodySize == 11 && copy.checksum == 100 && copy.storageClass == .session && copy.isPinned)
        #expect(copy.createdAt == Date(timeIntervalSince1970: 5) && copy.lastAccessedAt == Date(timeIntervalSince1970: 6))
    }

    @Test func equalityAndHashingCoverEveryField() {
        let base = sample()
        var changes: [(inout EntryInfo) -> Void] = []
        changes.append { $0.key.variant = "br" }
        changes.append { $0.metadata.append(0) }
        changes.append { $0.bodySize += 1 }
        changes.append { $0.checksum &+= 1 }
        changes.append { $0.storageClass = .session }
        changes.append { $0.isPinned.toggle() }
        changes.append { $0.createdAt += 1 }
        changes.append { $0.lastAccessedAt += 1 }
        for change in changes {
            var other = base
            change(&other)
            #expect(other != base)
        }
        let separatelyMade = sample()
        #expect(separatelyMade == base)
        #expect(separatelyMade.hashValue == base.hashValue)
        #expect(Set([base, separatelyMade]).count == 1)
    }

    @Test func aStoredEntryShowsTheInfoItWasMadeWith() {
        let entry = StoredEntry(info: sample(), body: Data(count: 10))
        #expect(entry.info == sample())
    }
}
