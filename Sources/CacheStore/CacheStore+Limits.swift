import Foundation

extension CacheStore {
    /// Enforces every limit now: deletes unpinned entries not accessed for `maxAge` seconds, then evicts
    /// least-recently-used unpinned entries until `maxDiskBytes` and `maxEntryCount` hold. Pinned entries are never
    /// deleted (the limits may stay exceeded when only pinned entries are left).
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`, `.permissionDenied` (read-only store),
    ///   `.invalidArgument` (closed store).
    ///
    /// A trim with nothing to remove writes nothing: it is decided in a read first, so a store that only reads
    /// (a `dlcache get --max-disk` answered from the cache) creates no session marker and closes without any
    /// `fsync` (``close()``), and other processes' memory tiers are not invalidated.
    public func trim() throws(CacheStoreError) {
        let now = configuration.currentTime()
        guard try trimHasWork(now: now) else { return }
        try enforceLimits(now: now, includeAge: true)
    }

    /// Whether ``trim()`` would remove something: an unpinned entry or idle partial unused for `maxAge`, or
    /// totals over a limit. May say true when nothing is removed in the end (access times not flushed yet are
    /// newer than the index says); never false when something would be.
    /// - Throws: as ``trim()`` (`.permissionDenied` for a read-only store, `.invalidArgument` for a closed one).
    private func trimHasWork(now: Date) throws(CacheStoreError) -> Bool {
        if let readOnlyReason {
            throw CacheStoreError(.permissionDenied, "store \(directoryURL.path) is read-only: \(readOnlyReason)")
        }
        let maxAge = configuration.maxAge
        let maxBytes = configuration.maxDiskBytes
        return try withIndex { (index: StoreIndex) throws(CacheStoreError) -> Bool in
            if let maxAge {
                let cutoff = now.timeIntervalSince1970 - maxAge
                if try index.hasUnused(before: cutoff) { return true }
                if try index.hasUnusedPartials(before: cutoff) { return true }
            }
            let totals = try index.totals()
            if isOverLimit(totals) { return true }
            if let maxBytes {
                let (sum, overflow) = totals.bytes.addingReportingOverflow(try index.partialBytes())
                if overflow || sum > maxBytes { return true }
            }
            return false
        }
    }

    /// Deletes every session-class entry of the namespace (ASIHTTPRequest's `clearCachedResponsesForStoragePolicy:`
    /// for the session policy).
    ///
    /// Several processes: the session class belongs to the cache, not to a process — rows record no owner. So
    /// this deletes the session entries every process stored, including those of processes that have the
    /// namespace open right now (their memory tiers drop them at their next read, through the shared generation
    /// counter; a body file they are reading stays readable until they close it). At open, session entries are
    /// deleted only by an exclusive opener — when no other process (and no other `CacheStore` of this process) has
    /// the namespace open — so without `clearSession()` a session entry lives until the last store using the
    /// namespace is closed and a new one opens it.
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`, `.permissionDenied` (read-only store),
    ///   `.invalidArgument` (closed store).
    public func clearSession() throws(CacheStoreError) {
        let keys = try deleteRows { (index: StoreIndex) throws(CacheStoreError) in try index.deleteSessionRows() }
        let removed = Set(keys)
        memory.remove { removed.contains($0) }
    }

    /// Deletes expired entries (when `includeAge`) and LRU entries while over a limit, in one transaction.
    /// `keeping`: the entry just written, never evicted by this sweep (the store checked before committing it
    /// that it fits beside the pinned entries; when another process pinned more meanwhile, the limits stay
    /// exceeded until the next sweep rather than the new entry vanishing right after its commit).
    /// - Throws: `CacheStoreError` from the index.
    func enforceLimits(now: Date, includeAge: Bool, keeping: StoreKey? = nil) throws(CacheStoreError) {
        let keys: Set<StoreKey> = keeping.map { [$0] } ?? []
        let eviction = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Eviction in
            try evict(index, now: now, includeAge: includeAge, keeping: keys)
        }
        finishEviction(eviction)
    }

    /// What a sweep took out of the index: the rows (whose blob files go once it committed) and the files of
    /// the partial entries it dropped.
    struct Eviction: Sendable {
        var removed: [RemovedRow] = []
        var partialFiles: [String] = []
    }

    /// The index part of a sweep, inside the caller's transaction: rows unused for `maxAge` (when `includeAge`),
    /// then partials, then least-recently-used unpinned rows other than `keeping` while over a limit.
    /// - Throws: `CacheStoreError` from the index.
    func evict(_ index: StoreIndex, now: Date, includeAge: Bool,
               keeping: Set<StoreKey>) throws(CacheStoreError) -> Eviction {
        var eviction = Eviction()
        if includeAge, let maxAge = configuration.maxAge {
            eviction.removed += try index.deleteUnused(before: now.timeIntervalSince1970 - maxAge)
            eviction.partialFiles += try index.deleteUnusedPartials(before: now.timeIntervalSince1970 - maxAge)
        }
        // Partials go first: an interrupted body never costs a complete entry its place.
        eviction.partialFiles += try evictPartials(index, keeping: nil)
        eviction.removed += try evictLeastRecentlyUsed(index, keeping: keeping)
        return eviction
    }

    /// The file part of a sweep, once its transaction committed: deletes the removed rows' blob files and the
    /// dropped partials' files, and (when `removingFromMemory`; a batch's sweep did that under the index lock)
    /// the removed keys from the memory tier.
    func finishEviction(_ eviction: Eviction, removingFromMemory: Bool = true) {
        for item in eviction.removed {
            if let blob = item.blobID { files.removeBlob(blob) }
        }
        for file in eviction.partialFiles { files.removeTemporary(file) }
        if !eviction.removed.isEmpty {
            if removingFromMemory { forgetEvicted(eviction) }
            log("trimmed \(eviction.removed.count) entr\(eviction.removed.count == 1 ? "y" : "ies")")
        }
    }

    /// Removes the keys of `eviction`'s rows from the memory tier.
    func forgetEvicted(_ eviction: Eviction) {
        guard !eviction.removed.isEmpty else { return }
        let keys = Set(eviction.removed.map(\.key))
        memory.remove { keys.contains($0) }
    }

    /// Deletes unpinned rows other than `keeping`, oldest access first, until the totals are within the limits.
    private func evictLeastRecentlyUsed(_ index: StoreIndex, keeping: Set<StoreKey>) throws(CacheStoreError) -> [RemovedRow] {
        var removed: [RemovedRow] = []
        var totals = try index.totals()
        while isOverLimit(totals) {
            // Enough rows that the kept ones (a batch's, as recent as any) cannot fill the page by themselves.
            let batch = try index.lruBatch(limit: 64 + keeping.count).filter { !keeping.contains($0.info.key) }
            if batch.isEmpty { break }
            for row in batch {
                guard isOverLimit(totals) else { break }
                removed += try index.delete(row.info.key)
                totals = try index.totals()
            }
        }
        return removed
    }
}

extension CacheStore {
    /// Empties the memory tier; the disk tier is untouched, so nothing stored is lost and later reads come from
    /// disk (checksum verified). For a system memory warning.
    /// - Returns: the number of entries dropped from memory.
    @discardableResult
    public func dropMemoryTier() -> Int {
        let before = memory.counters().entries
        memory.remove()
        return before
    }

    /// Shrinks the memory tier to at most `fraction` (0…1) of its byte limit, evicting the least recently used
    /// entries first; the disk tier is untouched. For an app entering the background.
    /// - Returns: the number of entries evicted from memory.
    @discardableResult
    public func trimMemoryTier(toFraction fraction: Double) -> Int {
        let bounded = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        return memory.trim(toBytes: Int(Double(configuration.maxMemoryBytes) * bounded))
    }
}
