import Foundation
import Synchronization

/// The memory tier: a cost-bounded LRU (bytes and entry count) of whole entries, in front of the disk tier.
///
/// A `Mutex`-protected dictionary from primary key to node (the variants of one primary key chained through
/// `sibling`: most primary keys have one, and a `String`-keyed lookup costs what a plain dictionary's does) plus an
/// intrusive doubly linked list in insertion/recency order (newest at `head`). Recency is tracked the CLOCK (second-chance) way: a hit only sets the node's `referenced` bit, and
/// eviction moves a referenced tail node back to the head instead of evicting it — LRU order without relinking
/// on the hit path. A hit also marks the node dirty so the store writes its access time to the index later
/// (batched, never on the hit path). `epoch` changes on every invalidation, so a reader that fetched from disk before a
/// concurrent write cannot put a stale body back into memory.
final class MemoryTier: Sendable {
    /// Mutable fields are only touched under the tier's mutex, so they opt out of dynamic exclusivity checks
    /// (measurable on the hit path).
    /// The node is the entry's shared storage: a hit returns a copy that points at the node itself (one retain,
    /// no other object to reach). Its own fields are only touched under the tier's mutex.
    final class Node: StoredEntry.Storage, @unchecked Sendable {
        let key: StoreKey
        let cost: Int
        /// The next variant of the same primary key (the dictionary holds the first).
        @exclusivity(unchecked) var sibling: Node?
        @exclusivity(unchecked) var dirty = false
        /// Set by a hit; eviction gives a referenced node a second chance instead of relinking on every hit.
        @exclusivity(unchecked) var referenced = false
        /// Last access; `entry.info.lastAccessedAt` is only set in the copies returned.
        @exclusivity(unchecked) var lastAccess: Date
        @exclusivity(unchecked) unowned(unsafe) var previous: Node?
        @exclusivity(unchecked) unowned(unsafe) var next: Node?

        init(entry: StoredEntry) {
            key = entry.key
            cost = entry.body.count + entry.metadata.count
            lastAccess = entry.info.lastAccessedAt
            super.init(info: entry.info, body: entry.body)
        }

        /// The entry as inserted (its `lastAccessedAt` that of the insert; never changed: ``update(_:_:)`` puts a new
        /// node in its place).
        var entry: StoredEntry { StoredEntry(sharing: self) }
    }

    struct State {
        /// The first node of each primary key; the others follow through `sibling`.
        var nodes: [String: Node] = [:]
        /// How many nodes (all variants).
        var count = 0
        var head: Node?
        var tail: Node?
        var bytes = 0
        var dirty: [(StoreKey, Double)] = []
        var hits = 0
        var misses = 0
        var epoch: UInt64 = 0
        var seenGeneration: UInt64 = 0
        /// Set by ``MemoryTier/close()``: the tier holds nothing and takes nothing any more.
        var closed = false

        /// The node of `key`, if present.
        @inline(__always)
        func node(for key: StoreKey) -> Node? {
            var candidate = nodes[key.primary]
            while let node = candidate {
                if node.key.variant == key.variant { return node }
                candidate = node.sibling
            }
            return nil
        }

        /// Adds `node`, whose key must be absent.
        mutating func add(_ node: Node) {
            node.sibling = nodes.updateValue(node, forKey: node.key.primary)
            count += 1
        }

        /// Takes the node of `key` out of the dictionary (not out of the recency list).
        mutating func take(_ key: StoreKey) -> Node? {
            guard let first = nodes[key.primary] else { return nil }
            if first.key.variant == key.variant {
                if let next = first.sibling { nodes[key.primary] = next } else { nodes.removeValue(forKey: key.primary) }
                first.sibling = nil
                count -= 1
                return first
            }
            var previous = first
            while let node = previous.sibling {
                if node.key.variant == key.variant {
                    previous.sibling = node.sibling
                    node.sibling = nil
                    count -= 1
                    return node
                }
                previous = node
            }
            return nil
        }

        /// Empties the dictionary, cutting the variant chains first (so no release recurses down a long chain).
        mutating func removeAllNodes() {
            for first in nodes.values {
                var next = first.sibling
                first.sibling = nil
                while let node = next {
                    next = node.sibling
                    node.sibling = nil
                }
            }
            nodes.removeAll()
            count = 0
        }

        mutating func removeAll() {
            removeAllNodes()
            head = nil
            tail = nil
            bytes = 0
            epoch &+= 1
        }

        mutating func unlink(_ node: Node) {
            if let previous = node.previous { previous.next = node.next } else { head = node.next }
            if let next = node.next { next.previous = node.previous } else { tail = node.previous }
            node.previous = nil
            node.next = nil
        }

        mutating func pushFront(_ node: Node) {
            node.next = head
            node.previous = nil
            head?.previous = node
            head = node
            if tail == nil { tail = node }
        }

        mutating func remove(_ key: StoreKey) {
            guard let node = take(key) else { return }
            unlink(node)
            bytes -= node.cost
        }
    }

    private let state = Mutex(State())
    let maxBytes: Int
    let maxEntries: Int
    let maxEntryBytes: Int
    /// False for a read-only store: hits record no access times (nothing would ever write them).
    let recordsAccess: Bool

    init(maxBytes: Int, maxEntries: Int, maxEntryBytes: Int, recordsAccess: Bool = true) {
        self.maxBytes = max(0, maxBytes)
        self.maxEntries = max(0, maxEntries)
        self.maxEntryBytes = max(0, maxEntryBytes)
        self.recordsAccess = recordsAccess
    }

    deinit {
        state.withLock { state in
            state.removeAllNodes()
            state.head = nil
            state.tail = nil
        }
    }

    var isEnabled: Bool { maxBytes > 0 && maxEntries > 0 }

    /// The entry for `key` (its access time set to `now`), counting a hit or a miss. When `generation` differs
    /// from the last one seen, another process wrote: the tier empties itself first.
    func get(_ key: StoreKey, now: Date, generation: UInt64) -> StoredEntry? {
        state.withLock { state -> StoredEntry? in
            if generation != state.seenGeneration {
                state.removeAll()
                state.seenGeneration = generation
            }
            guard let node = state.node(for: key) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            node.referenced = true
            var time = node.lastAccess
            if now > time {  // a coarse clock must not move an access time backwards
                time = now
                node.lastAccess = now
            }
            if recordsAccess, !node.dirty {
                node.dirty = true
                state.dirty.append((key, time.timeIntervalSince1970))
            }
            return node.entry.accessed(at: time)
        }
    }

    /// The entry for `key` without counting, touching or reordering; nil when absent or another process wrote
    /// since the tier last looked.
    func peek(_ key: StoreKey, generation: UInt64) -> StoredEntry? {
        state.withLock { $0.seenGeneration == generation ? $0.node(for: key)?.entry : nil }
    }

    /// The index information for `key` without counting or touching.
    func peekInfo(_ key: StoreKey, generation: UInt64) -> EntryInfo? {
        state.withLock { $0.seenGeneration == generation ? $0.node(for: key)?.info : nil }
    }

    /// Records a generation bump made by this process (`old` → `new`); empties the tier when `old` is not the
    /// generation last seen (another process wrote in between).
    func noteOwnWrite(old: UInt64, new: UInt64) {
        state.withLock { state in
            if state.seenGeneration != old { state.removeAll() }
            state.seenGeneration = new
        }
    }

    /// The current invalidation epoch (read before a disk lookup, pass to `insert(_:ifEpoch:)`).
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Inserts or replaces an entry (write-through). With `ifEpoch`, skips the insert when an invalidation
    /// happened since that epoch was read, or when the key is already present.
    func insert(_ entry: StoredEntry, ifEpoch: UInt64? = nil) {
        guard isEnabled else { return }
        state.withLock { state in
            guard !state.closed else { return }
            let node = Node(entry: entry)
            if let expected = ifEpoch {
                if state.epoch != expected || state.node(for: node.key) != nil { return }
            } else {
                state.epoch &+= 1
            }
            state.remove(node.key)
            guard node.cost <= maxEntryBytes, node.cost <= maxBytes else { return }
            state.add(node)
            state.pushFront(node)
            state.bytes += node.cost
            while state.bytes > maxBytes || state.count > maxEntries, let last = state.tail {
                if last.referenced {  // second chance: used since it was last moved to the front
                    last.referenced = false
                    state.unlink(last)
                    state.pushFront(last)
                } else {
                    state.remove(last.key)
                }
            }
        }
    }

    /// Changes the stored information of a cached entry (metadata or pin), leaving the body.
    /// The new information goes into a new node that takes the old one's place (position, flags, access time).
    func update(_ key: StoreKey, _ change: (inout EntryInfo) -> Void) {
        state.withLock { state in
            state.epoch &+= 1
            guard let old = state.take(key) else { return }
            var entry = old.entry
            change(&entry.info)
            let node = Node(entry: entry)
            node.dirty = old.dirty
            node.referenced = old.referenced
            node.lastAccess = old.lastAccess
            node.previous = old.previous
            node.next = old.next
            if let previous = old.previous { previous.next = node } else { state.head = node }
            if let next = old.next { next.previous = node } else { state.tail = node }
            old.previous = nil
            old.next = nil
            state.bytes += node.cost - old.cost
            state.add(node)
        }
    }

    /// Removes the entries whose key satisfies `predicate` (nil: every entry).
    /// Empties the tier for good (the store closed): later inserts are refused under the same lock, so a write
    /// finishing after the close leaves nothing a read could serve.
    func close() {
        state.withLock { state in
            state.closed = true
            state.epoch &+= 1
            state.removeAll()
        }
    }

    func remove(where predicate: ((StoreKey) -> Bool)? = nil) {
        state.withLock { state in
            state.epoch &+= 1
            guard let predicate else {
                state.removeAll()
                return
            }
            var matching: [StoreKey] = []
            var cursor = state.head
            while let node = cursor {
                if predicate(node.key) { matching.append(node.key) }
                cursor = node.next
            }
            for key in matching { state.remove(key) }
        }
    }

    /// Evicts least recently used entries until the tier holds at most `bytes`; returns how many were evicted.
    /// Recency here ignores the second-chance bits: the tail goes first.
    @discardableResult
    func trim(toBytes bytes: Int) -> Int {
        state.withLock { state in
            var evicted = 0
            while state.bytes > max(0, bytes), let last = state.tail {
                state.remove(last.key)
                evicted += 1
            }
            return evicted
        }
    }

    /// Removes one key.
    func remove(_ key: StoreKey) {
        state.withLock { state in
            state.epoch &+= 1
            state.remove(key)
        }
    }

    /// The access times recorded by hits since the last call (for the index).
    func takeDirty() -> [(StoreKey, Double)] {
        state.withLock { state in
            let dirty = state.dirty
            state.dirty.removeAll(keepingCapacity: true)
            var result: [(StoreKey, Double)] = []
            result.reserveCapacity(dirty.count)
            for (key, time) in dirty {
                if let node = state.node(for: key) {
                    node.dirty = false
                    result.append((key, node.lastAccess.timeIntervalSince1970))
                } else {
                    result.append((key, time))
                }
            }
            return result
        }
    }

    /// `(bytes, entries, hits, misses)`.
    func counters() -> (bytes: Int, entries: Int, hits: Int, misses: Int) {
        state.withLock { ($0.bytes, $0.count, $0.hits, $0.misses) }
    }
}
