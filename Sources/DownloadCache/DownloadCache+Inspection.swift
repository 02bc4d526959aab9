import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// One stored response described for people and tools (`dlcache ls` and `dlcache info`).
///
/// Ages and lifetimes are RFC 9111 §4.2 values computed at the moment of inspection, in seconds.
public struct CacheEntryDescription: Sendable {
    /// The request URL the response was stored for.
    public var url: String
    /// The request method (`GET`, `HEAD`).
    public var method: String
    /// The store key (primary: method + normalised URI, variant: the Vary secondary key; RFC 9111 §2, §4.1).
    public var key: StoreKey
    /// The namespace the entry lives in.
    public var namespace: String
    /// The stored status code.
    public var status: Int
    /// The stored reason phrase.
    public var statusText: String
    /// Body size in bytes.
    public var bytes: Int64
    /// Current age (RFC 9111 §4.2.3), seconds.
    public var age: TimeInterval
    /// Freshness lifetime (RFC 9111 §4.2.1, heuristic §4.2.2, or the caller's override), seconds.
    public var freshnessLifetime: TimeInterval
    /// Whether the lifetime exceeds the age (RFC 9111 §4.2).
    public var isFresh: Bool
    /// Whether the entry is pinned (never evicted by limits or age).
    public var isPinned: Bool
    /// Session or permanent storage (ASI's storage policies).
    public var storageClass: StorageClass
    /// What a plain `GET` with the default policy would do now and why (the semantics' decision reason).
    public var reason: String
    /// The stored response with the times §4.2.3 needs.
    public var stored: StoredResponse
    /// The body's blob file, or nil when the body is kept inline in the index.
    public var bodyFileURL: URL?
    /// When the entry was written.
    public var createdAt: Date
    /// When the entry was last read or written (LRU order).
    public var lastAccessedAt: Date
}

/// What `purge` removes.
public enum PurgeSelection: String, Sendable, CaseIterable {
    /// Entries that are stale per RFC 9111 §4.2 and not pinned.
    case expired
    /// Session-class entries (ASI's session storage).
    case session
    /// Every entry, pinned ones included.
    case all
}

extension DownloadCache {
    /// Every stored entry of this namespace that carries DownloadCache metadata, most recently used first.
    ///
    /// Reading the index does not touch the entries' LRU order. Entries whose metadata cannot be decoded are skipped.
    public func entryDescriptions() -> [CacheEntryDescription] {
        let now = configuration.now()
        return store.allEntries()
            .compactMap { describe($0, now: now) }
            .sorted { $0.lastAccessedAt > $1.lastAccessedAt }
    }

    /// The stored variants for `url` (`GET` and `HEAD` keys), or an empty array when nothing is stored.
    public func entryDescriptions(for url: URL) -> [CacheEntryDescription] {
        let now = configuration.now()
        return ["GET", "HEAD"].flatMap { method in
            store.variantsWithPendingAccessTimes(forPrimaryKey: RFC9111.primaryKey(method: method, url: url))
                .compactMap { describe($0, now: now) }
        }
    }

    /// Describes one index row, or nil when its metadata is not DownloadCache metadata. Does not touch the entry's
    /// last-access time (LRU order).
    public func describe(_ info: EntryInfo, now: Date) -> CacheEntryDescription? {
        guard let meta = StoredEntryMetadata.decode(info.metadata) else { return nil }
        let options = EvaluationOptions(mode: configuration.mode)
        let stored = meta.stored
        let request = CacheRequest(method: meta.method, url: URL(string: meta.url) ?? URL(fileURLWithPath: "/"),
                                   headers: stored.varyingRequestHeaders)
        let decision = RFC9111.evaluate(request: request, stored: stored, now: now, options: options)
        return CacheEntryDescription(
            url: meta.url, method: meta.method, key: info.key, namespace: configuration.namespace,
            status: stored.response.status, statusText: meta.statusText, bytes: info.bodySize,
            age: RFC9111.currentAge(stored, now: now),
            freshnessLifetime: RFC9111.freshnessLifetime(stored, options: options),
            isFresh: RFC9111.isFresh(stored, now: now, options: options),
            isPinned: info.isPinned, storageClass: info.storageClass, reason: decision.reason, stored: stored,
            bodyFileURL: store.bodyFileURL(for: info.key, refreshingAccessTime: false), createdAt: info.createdAt, lastAccessedAt: info.lastAccessedAt)
    }

    /// The blob file of the stored response that matches `request` (RFC 9111 §4.1, Vary honoured), or nil when
    /// nothing matching is stored or its body is kept inline in the index. Counts as a use of the entry: its
    /// last-access time (LRU order) is refreshed; no hit or miss is counted.
    public func storedBodyFileURL(for request: CacheRequest) -> URL? {
        for primary in RFC9111.lookupKeys(for: request) {
            for info in store.variants(forPrimaryKey: primary) {
                guard let meta = StoredEntryMetadata.decode(info.metadata),
                      RFC9111.matches(stored: meta.stored, request: request, secret: keySecret) else { continue }
                return store.bodyFileURL(for: info.key)
            }
        }
        return nil
    }

    /// The URL an index key belongs to: from its metadata when readable, else nil.
    public func url(for key: StoreKey) -> String? {
        store.allEntries().first { $0.key == key }.flatMap { StoredEntryMetadata.decode($0.metadata)?.url }
    }

    /// Removes every stored variant of `url` (GET and HEAD); returns how many entries were removed.
    /// - Throws: `CacheStoreError` when the index cannot be written.
    @discardableResult
    public func removeEntries(for url: URL) throws(CacheStoreError) -> Int {
        var removed = 0
        for method in ["GET", "HEAD"] {
            let primary = RFC9111.primaryKey(method: method, url: url)
            let count = store.variants(forPrimaryKey: primary).count
            if count > 0 {
                try store.removeAll(forPrimaryKey: primary)
                removed += count
            }
        }
        return removed
    }

    /// Pins or unpins every stored variant of `url`; returns how many entries changed.
    /// - Throws: `CacheStoreError` when the index cannot be written.
    @discardableResult
    public func setPinned(_ pinned: Bool, forEntriesOf url: URL) throws(CacheStoreError) -> Int {
        var changed = 0
        for method in ["GET", "HEAD"] {
            for info in store.variants(forPrimaryKey: RFC9111.primaryKey(method: method, url: url)) {
                try store.setPinned(pinned, for: info.key)
                changed += 1
            }
        }
        return changed
    }

    /// Removes the selected entries; returns how many were removed.
    ///
    /// `.expired` removes entries that are stale per RFC 9111 §4.2 (now, with this cache's mode) and not pinned,
    /// plus unpinned rows whose metadata is unreadable; `.session` the session class; `.all` everything.
    /// - Throws: `CacheStoreError` when the index cannot be written.
    @discardableResult
    public func purge(_ selection: PurgeSelection) throws(CacheStoreError) -> Int {
        let all = store.allEntries()
        switch selection {
        case .all:
            try store.removeAll()
            return all.count
        case .session:
            let count = all.filter { $0.storageClass == .session }.count
            try store.clearSession()
            return count
        case .expired:
            let now = configuration.now()
            var removed = 0
            for info in all where !info.isPinned {
                if let entry = describe(info, now: now), entry.isFresh { continue }
                try store.remove(info.key)
                removed += 1
            }
            return removed
        }
    }
}
