import CacheStore
import Foundation
import Synchronization

/// A persistent cache of `Codable` model values under string keys (an app's model cache), on `CacheStore`.
///
/// Values are encoded (JSON by default), stored with a small metadata record (type name, model version,
/// cache version, save time) in one `CacheStore` entry per key, and kept decoded in an LRU memory tier so
/// repeated reads don't decode. Writes go through to disk before they return, so nothing acknowledged is lost
/// if the process dies. A value written by another cache or model version, or one that no longer decodes, is
/// removed and reported as a miss (`ModelLookup.discarded`, `ModelCacheEvent.discarded`). Per-user namespaces
/// keep one user's data from the next (`Configuration.user`, `eraseUser(_:)`).
///
/// Thread-safe; all calls except refreshes are synchronous. The memory tier belongs to this instance: writes
/// made through another instance (or process) on the same directory are seen at once only with
/// `Configuration.validatesMemoryHits`; otherwise after this instance's memory copy is dropped
/// (`handleMemoryPressure()`, eviction, or a write through this instance).
public final class ModelCache: Sendable {
    /// The configuration this cache was opened with.
    public let configuration: Configuration
    /// The `CacheStore` namespace in use (per-user namespaces are derived from `namespace` and `user`).
    public let namespace: String

    private let storeBox: Mutex<CacheStore>
    private let writeLock = Mutex<Void>(())
    private let counters = Mutex(ModelCacheStatistics())
    let memory: DecodedValueCache
    let refreshes = RefreshCoordinator()
    private let pressureObserver: MemoryPressureObserver
    private let eventHub = EventHub<ModelCacheEvent>()

    /// Opens (creating if needed) the cache described by `configuration`.
    /// - Throws: `ModelCacheError.invalidNamespace` for a bad `namespace` or an empty `user`;
    ///   `ModelCacheError.storage` when the store cannot be opened.
    public init(configuration: Configuration) throws(ModelCacheError) {
        try UserNamespace.validate(base: configuration.namespace)
        if let user = configuration.user, user.isEmpty { throw .invalidNamespace("user \"\"") }
        let namespace = UserNamespace.name(base: configuration.namespace, user: configuration.user)
        self.configuration = configuration
        self.namespace = namespace
        self.storeBox = Mutex(try Self.openStore(configuration, namespace: namespace))
        self.memory = DecodedValueCache(countLimit: configuration.maxMemoryEntries,
                                        costLimit: configuration.maxMemoryBytes)
        self.pressureObserver = MemoryPressureObserver(center: configuration.notificationCenter,
                                                       names: configuration.memoryPressureNotifications)
        pressureObserver.setHandler { [weak self] in self?.handleMemoryPressure() }
    }

    /// Everything the cache does on its own that the app may want to log (drops, failed stores of fetched values,
    /// failed refreshes, trims), from now on: each call returns a new stream (newest 1,000 buffered), finished
    /// when the cache is released. Reported the way `DownloadCache.events` reports its calls.
    public var events: AsyncStream<ModelCacheEvent> { eventHub.subscribe() }

    deinit {
        eventHub.finishAll()
    }

    /// Opens a cache in `directory` with default settings, optionally for one user.
    /// - Throws: like `init(configuration:)`.
    public convenience init(directory: URL, user: String? = nil) throws(ModelCacheError) {
        try self.init(configuration: Configuration(directory: directory, user: user))
    }

    // MARK: - Reads

    /// Looks `key` up as a `T`, telling a hit, a miss and a dropped value apart.
    ///
    /// `typeVersion` overrides `VersionedModel.modelVersion` (or 0); `stalenessThreshold` (seconds) overrides
    /// the configuration's for this call. Never throws: a stored value written by another cache version,
    /// type or type version, or one that does not decode, is removed and returned as `.discarded`.
    public func lookup<T: Codable & Sendable>(_ key: String, as type: T.Type = T.self, typeVersion: Int? = nil,
                                              stalenessThreshold: TimeInterval? = nil) -> ModelLookup<T> {
        let typeName = ModelCodec.typeName(T.self)
        let version = typeVersion ?? ModelCodec.typeVersion(T.self)
        let threshold = stalenessThreshold ?? configuration.stalenessThreshold
        let storeKey = Self.storeKey(key)
        if let item = memory.item(forKey: key), item.typeName == typeName, item.typeVersion == version,
           let value = item.value as? T {
            if !configuration.validatesMemoryHits || isCurrent(item, storeKey: storeKey) {
                counters.withLock { $0.memoryHits += 1 }
                return .hit(model(value, savedAt: item.savedAt, threshold: threshold))
            }
            memory.remove(key)   // another writer replaced or removed it: read the store
        }
        let generation = memory.generation
        guard let entry = currentStore.entry(for: storeKey) else {
            counters.withLock { $0.misses += 1 }
            return .miss
        }
        let record: ModelRecordMetadata
        do {
            record = try ModelRecordMetadata.decode(entry.info.metadata)
        } catch {
            return discard(key, entry: entry, reason: .corruptMetadata(String(describing: error)))
        }
        if let reason = mismatch(record, typeName: typeName, typeVersion: version) {
            return discard(key, entry: entry, reason: reason)
        }
        let value: T
        do {
            value = try ModelCodec.decode(T.self, from: entry.body, encoding: record.encoding)
        } catch {
            return discard(key, entry: entry, reason: .undecodable(String(describing: error)))
        }
        let savedAt = Date(timeIntervalSinceReferenceDate: record.savedAt)
        let item = DecodedItem(value: value, typeName: typeName, typeVersion: version, savedAt: savedAt,
                               cost: entry.body.count + DecodedValueCache.overheadPerEntry,
                               stamp: EntryStamp(metadata: entry.info.metadata, checksum: entry.info.checksum))
        memory.insert(item, forKey: key, ifGeneration: generation)
        counters.withLock { $0.diskHits += 1 }
        return .hit(model(value, savedAt: savedAt, threshold: threshold))
    }

    /// The value stored under `key` as a `T` with its age, or nil for a miss or a dropped value.
    ///
    /// Same rules as `lookup(_:as:typeVersion:stalenessThreshold:)`; `stalenessThreshold` is in seconds.
    public func value<T: Codable & Sendable>(forKey key: String, as type: T.Type = T.self, typeVersion: Int? = nil,
                                             stalenessThreshold: TimeInterval? = nil) -> CachedModel<T>? {
        lookup(key, as: T.self, typeVersion: typeVersion, stalenessThreshold: stalenessThreshold).cached
    }

    // MARK: - Writes

    /// Encodes `value` and stores it under `key` (write-through: on disk when this returns), replacing
    /// any older value; the value is also kept decoded in the memory tier.
    ///
    /// `typeVersion` overrides `VersionedModel.modelVersion` (or 0) for this write.
    /// - Throws: `ModelCacheError.encodingFailed` when the value cannot be encoded (nothing is written);
    ///   `ModelCacheError.storage` when the store fails (the memory copy of `key` is dropped too).
    public func set<T: Codable & Sendable>(_ value: T, forKey key: String,
                                           typeVersion: Int? = nil) throws(ModelCacheError) {
        _ = try write(value, forKey: key, typeVersion: typeVersion)
    }

    /// Removes the value under `key` from memory and disk; removing an absent key is not an error.
    /// - Throws: `ModelCacheError.storage` when the store fails.
    public func removeValue(forKey key: String) throws(ModelCacheError) {
        try writeLock.withLock { _ throws(ModelCacheError) in
            memory.remove(key)
            do throws(CacheStoreError) {
                try currentStore.remove(Self.storeKey(key))
            } catch where error.code == .notFound {
                return
            } catch {
                throw .storage(error)
            }
        }
    }

    /// Removes every value of this cache's namespace from memory and disk.
    /// - Throws: `ModelCacheError.storage` when the store fails.
    public func removeAll() throws(ModelCacheError) {
        try writeLock.withLock { _ throws(ModelCacheError) in
            memory.removeAll()
            do throws(CacheStoreError) { try currentStore.removeAll() } catch { throw .storage(error) }
        }
    }

    /// Encodes and stores `value`; returns its `savedAt`. See `set(_:forKey:typeVersion:)`.
    func write<T: Codable & Sendable>(_ value: T, forKey key: String,
                                      typeVersion: Int?) throws(ModelCacheError) -> Date {
        let typeName = ModelCodec.typeName(T.self)
        let version = typeVersion ?? ModelCodec.typeVersion(T.self)
        let encoding = configuration.encoding
        let body: Data
        do { body = try ModelCodec.encode(value, as: encoding) } catch {
            throw .encodingFailed(type: typeName, underlying: error)
        }
        let savedAt = configuration.now()
        let record = ModelRecordMetadata(format: ModelRecordMetadata.currentFormat, typeName: typeName,
                                         typeVersion: version, cacheVersion: configuration.cacheVersion,
                                         savedAt: savedAt.timeIntervalSinceReferenceDate, encoding: encoding)
        let metadata: Data
        do { metadata = try record.encoded() } catch {
            throw .encodingFailed(type: String(reflecting: ModelRecordMetadata.self), underlying: error)
        }
        var item = DecodedItem(value: value, typeName: typeName, typeVersion: version, savedAt: savedAt,
                               cost: body.count + DecodedValueCache.overheadPerEntry)
        try writeLock.withLock { _ throws(ModelCacheError) in
            do throws(CacheStoreError) {
                let info = try currentStore.store(body, metadata: metadata, for: Self.storeKey(key))
                item.stamp = EntryStamp(metadata: info.metadata, checksum: info.checksum)
            } catch {
                memory.remove(key)
                throw .storage(error)
            }
            memory.put(item, forKey: key)
        }
        counters.withLock { $0.writes += 1 }
        return savedAt
    }

    // MARK: - Memory, users, statistics

    /// Drops every decoded value from the memory tier (disk is untouched; nothing is lost) and reports
    /// `ModelCacheEvent.memoryTrimmed`. Wired to UIKit's memory-warning, background and terminate
    /// notifications on Apple platforms (see `Configuration.memoryPressureNotifications`).
    public func handleMemoryPressure() {
        let removed = memory.removeAll()
        report(.memoryTrimmed(removedEntries: removed))
    }

    /// Erases everything stored for `user` under this cache's base namespace: its whole namespace
    /// directory. Erasing the user this cache is open for also empties this cache, which stays usable.
    /// - Throws: `ModelCacheError.storage` when the store or the file system fails.
    public func eraseUser(_ user: String) throws(ModelCacheError) {
        let target = UserNamespace.name(base: configuration.namespace, user: user)
        guard target == namespace else {
            try Self.removeNamespace(target, in: configuration.directory)
            return
        }
        try writeLock.withLock { _ throws(ModelCacheError) in
            memory.removeAll()
            do throws(CacheStoreError) { try currentStore.removeAll() } catch { throw .storage(error) }
            // Remove the files too (SQLite keeps deleted rows in free pages), then start a fresh store.
            try Self.removeNamespace(namespace, in: configuration.directory)
            let fresh = try Self.openStore(configuration, namespace: namespace)
            storeBox.withLock { $0 = fresh }
        }
    }

    /// Erases everything stored for `user` under base namespace `namespace` in `directory`, without opening
    /// it. Don't call it for a user a `ModelCache` is open for in this process: use that cache's
    /// `eraseUser(_:)`.
    /// - Throws: `ModelCacheError.invalidNamespace` for a bad base namespace; `ModelCacheError.storage`
    ///   when the file system fails. Erasing a user with no data is not an error.
    public static func eraseUser(_ user: String, namespace: String = "models",
                                 in directory: URL) throws(ModelCacheError) {
        try UserNamespace.validate(base: namespace)
        try removeNamespace(UserNamespace.name(base: namespace, user: user), in: directory)
    }

    /// Counters since this instance was opened, plus the memory tier's size now.
    public var statistics: ModelCacheStatistics {
        var result = counters.withLock { $0 }
        result.memoryEntries = memory.count
        result.memoryCost = memory.totalCost
        return result
    }

    // MARK: - Internals

    /// The store currently in use (replaced only by `eraseUser(_:)` of the open user).
    var currentStore: CacheStore { storeBox.withLock { $0 } }

    /// The store key of a model key: the key itself as primary key, no variant.
    static func storeKey(_ key: String) -> StoreKey { StoreKey(primary: key) }

    /// Counts a fetch started by a refresh.
    func countFetch() { counters.withLock { $0.fetches += 1 } }

    /// Delivers `event` to the subscribers of ``events``, if any.
    func report(_ event: ModelCacheEvent) { eventHub.send(event) }

    private func model<T>(_ value: T, savedAt: Date, threshold: TimeInterval) -> CachedModel<T> {
        let age = max(0, configuration.now().timeIntervalSince(savedAt))
        return CachedModel(value: value, savedAt: savedAt, age: age, isStale: age > threshold)
    }

    /// True when the store still holds the entry `item` was decoded from (or written as).
    private func isCurrent(_ item: DecodedItem, storeKey: StoreKey) -> Bool {
        guard let stamp = item.stamp, let info = currentStore.info(for: storeKey) else { return false }
        return info.checksum == stamp.checksum && info.metadata == stamp.metadata
    }

    private func mismatch(_ record: ModelRecordMetadata, typeName: String,
                          typeVersion: Int) -> ModelDiscardReason? {
        if record.cacheVersion != configuration.cacheVersion {
            return .cacheVersionChanged(stored: record.cacheVersion, current: configuration.cacheVersion)
        }
        if record.typeName != typeName { return .typeChanged(stored: record.typeName, requested: typeName) }
        if record.typeVersion != typeVersion {
            return .typeVersionChanged(stored: record.typeVersion, current: typeVersion)
        }
        return nil
    }

    /// Removes `entry` if it is still the one stored (a concurrent write is never undone), then reports.
    private func discard<T>(_ key: String, entry: StoredEntry, reason: ModelDiscardReason) -> ModelLookup<T> {
        writeLock.withLock { _ in
            let store = currentStore
            let storeKey = Self.storeKey(key)
            guard let info = store.info(for: storeKey), info.metadata == entry.info.metadata,
                  info.checksum == entry.info.checksum, info.createdAt == entry.info.createdAt else { return }
            memory.remove(key)
            try? store.remove(storeKey)   // if this fails the value is dropped again on the next read
        }
        counters.withLock { $0.discards += 1 }
        report(.discarded(key: key, reason: reason))
        return .discarded(reason)
    }

    private static func openStore(_ configuration: Configuration,
                                  namespace: String) throws(ModelCacheError) -> CacheStore {
        var storeConfiguration = CacheStore.Configuration(directory: configuration.directory, namespace: namespace)
        storeConfiguration.maxDiskBytes = configuration.maxDiskBytes
        storeConfiguration.maxMemoryBytes = max(0, configuration.storeMaxMemoryBytes)
        storeConfiguration.maxAge = configuration.maxAge
        storeConfiguration.now = configuration.now
        do { return try CacheStore(configuration: storeConfiguration) } catch { throw .storage(error) }
    }

    private static func removeNamespace(_ namespace: String, in directory: URL) throws(ModelCacheError) {
        do {
            try CacheStore.removeNamespace(namespace, in: directory)
        } catch where error.code == .notFound {
            return
        } catch {
            throw .storage(error)
        }
    }
}
