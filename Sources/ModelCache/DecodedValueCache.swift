import Foundation
import Synchronization

/// One decoded value held by the memory tier, with what is needed to check it against a read.
struct DecodedItem: Sendable {
    /// The decoded value (cast back to the requested type on read).
    var value: any Sendable
    /// `String(reflecting:)` of the value's type.
    var typeName: String
    /// The model version it was written with.
    var typeVersion: Int
    /// When it was written.
    var savedAt: Date
    /// Estimated bytes (encoded size plus a fixed per-entry overhead).
    var cost: Int
    /// The store entry the value came from (metadata bytes and body checksum), to check a hit against the
    /// index when other writers share the directory; nil if unknown.
    var stamp: EntryStamp?
}

/// Identifies one stored version of a value: its metadata bytes (which hold the save time) and body checksum.
struct EntryStamp: Sendable, Equatable {
    var metadata: Data
    var checksum: UInt32
}

/// The memory tier of decoded values: an LRU bounded by entry count and estimated cost (bytes).
///
/// A dictionary plus a doubly linked recency list under one `Mutex`. Every change that may make a value read
/// from disk earlier out of date (put, remove, removeAll) bumps `generation`; a reader that decoded a value
/// from disk inserts it only if the generation did not move meanwhile, so a slow reader never puts an old
/// value back over a newer write.
final class DecodedValueCache: Sendable {
    /// Fixed bytes added to each value's encoded size in the cost estimate (node, key, boxes).
    static let overheadPerEntry = 64

    private final class Node {
        let key: String
        var item: DecodedItem
        weak var previous: Node?   // towards the most recently used end
        var next: Node?            // towards the least recently used end
        init(key: String, item: DecodedItem) {
            self.key = key
            self.item = item
        }
    }

    private struct State {
        var nodes: [String: Node] = [:]
        var head: Node?   // most recently used
        var tail: Node?   // least recently used
        var totalCost = 0
        var generation: UInt64 = 0
    }

    /// Most entries kept.
    let countLimit: Int
    /// Most estimated bytes kept.
    let costLimit: Int
    private let state = Mutex(State())

    /// Creates a tier; a limit of 0 (or less) switches it off.
    init(countLimit: Int, costLimit: Int) {
        self.countLimit = max(0, countLimit)
        self.costLimit = max(0, costLimit)
    }

    deinit {
        removeAll()   // unlinks the list iteratively: releasing a long chain recursively could overflow the stack
    }

    /// True when the limits let nothing in.
    var isEnabled: Bool { countLimit > 0 && costLimit > 0 }

    /// The current generation; pass it to `insert(_:forKey:ifGeneration:)` after a disk read.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Number of values held.
    var count: Int { state.withLock { $0.nodes.count } }

    /// Estimated bytes held.
    var totalCost: Int { state.withLock { $0.totalCost } }

    /// The item under `key`, marked most recently used; nil if absent.
    func item(forKey key: String) -> DecodedItem? {
        state.withLock { state -> DecodedItem? in
            guard let node = state.nodes[key] else { return nil }
            Self.unlink(node, in: &state)
            Self.pushFront(node, in: &state)
            return node.item
        }
    }

    /// Stores `item` after a write: bumps the generation, replaces any old value, then evicts LRU values
    /// beyond the limits. An item costlier than the whole tier is not kept (the old value is still removed).
    func put(_ item: DecodedItem, forKey key: String) {
        state.withLock { state in
            state.generation &+= 1
            Self.removeNode(forKey: key, in: &state)
            insertLocked(item, forKey: key, in: &state)
        }
    }

    /// Stores `item` read from disk, only if nothing changed since `generation` was read.
    /// Returns whether it was inserted.
    @discardableResult
    func insert(_ item: DecodedItem, forKey key: String, ifGeneration generation: UInt64) -> Bool {
        state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            Self.removeNode(forKey: key, in: &state)
            return insertLocked(item, forKey: key, in: &state)
        }
    }

    /// Removes the value under `key` (if any) and bumps the generation.
    func remove(_ key: String) {
        state.withLock { state in
            state.generation &+= 1
            Self.removeNode(forKey: key, in: &state)
        }
    }

    /// Removes everything and bumps the generation; returns how many values were dropped.
    @discardableResult
    func removeAll() -> Int {
        state.withLock { state -> Int in
            state.generation &+= 1
            let removed = state.nodes.count
            var node = state.head
            while let current = node {   // break the chain so long lists are freed without deep recursion
                node = current.next
                current.next = nil
            }
            state = State(generation: state.generation)
            return removed
        }
    }

    /// Evicts least recently used values until at most `count` values and `cost` bytes remain;
    /// returns how many were evicted.
    @discardableResult
    func trim(toCount count: Int, cost: Int) -> Int {
        state.withLock { state -> Int in
            Self.evict(in: &state, count: max(0, count), cost: max(0, cost))
        }
    }

    /// Keys from most to least recently used (for tests and diagnostics).
    func keysByRecency() -> [String] {
        state.withLock { state -> [String] in
            var keys: [String] = []
            var node = state.head
            while let current = node {
                keys.append(current.key)
                node = current.next
            }
            return keys
        }
    }

    // MARK: - Locked helpers

    @discardableResult
    private func insertLocked(_ item: DecodedItem, forKey key: String, in state: inout State) -> Bool {
        guard isEnabled, item.cost <= costLimit else { return false }
        let node = Node(key: key, item: item)
        state.nodes[key] = node
        state.totalCost += item.cost
        Self.pushFront(node, in: &state)
        _ = Self.evict(in: &state, count: countLimit, cost: costLimit)
        return state.nodes[key] != nil
    }

    private static func evict(in state: inout State, count: Int, cost: Int) -> Int {
        var evicted = 0
        while state.nodes.count > count || state.totalCost > cost, let victim = state.tail {
            removeNode(forKey: victim.key, in: &state)
            evicted += 1
        }
        return evicted
    }

    private static func removeNode(forKey key: String, in state: inout State) {
        guard let node = state.nodes.removeValue(forKey: key) else { return }
        unlink(node, in: &state)
        state.totalCost -= node.item.cost
    }

    private static func unlink(_ node: Node, in state: inout State) {
        let previous = node.previous
        let next = node.next
        if let previous { previous.next = next } else if state.head === node { state.head = next }
        if let next { next.previous = previous } else if state.tail === node { state.tail = previous }
        node.previous = nil
        node.next = nil
    }

    private static func pushFront(_ node: Node, in state: inout State) {
        node.next = state.head
        node.previous = nil
        state.head?.previous = node
        state.head = node
        if state.tail == nil { state.tail = node }
    }
}
