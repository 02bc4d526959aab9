import Foundation
import Synchronization

/// What the shared tier did so far in this process, and whether it is usable now.
public struct SharedTierStatistics: Sendable, Hashable {
    /// Lookups that produced an entry the client used.
    public var hits = 0
    /// Lookups that produced nothing usable (no entry, or none that matches the request).
    public var misses = 0
    /// Entries written (stores and freshenings).
    public var stores = 0
    /// Primary keys invalidated (unsafe methods, RFC 9111 §4.4).
    public var invalidations = 0
    /// Values refused and deleted: corrupted, truncated, oversized or written for another key.
    public var refusedValues = 0
    /// Calls that failed (down, timed out, refused, full).
    public var failures = 0
    /// Calls not attempted because the circuit breaker had switched the tier off.
    public var skipped = 0
    /// Whether the tier is in use (false while the breaker is open after a failure).
    public var isAvailable = true
    /// The last failure in words (never containing the password); `nil` when none happened.
    public var lastProblem: String?

    /// Creates a statistics value.
    public init() {}
}

/// The outcome of one fleet-lock attempt.
public enum SharedLockAttempt: Sendable {
    /// This process holds the lock: fetch, store, then ``SharedTier/release(_:)``.
    case acquired(SharedLock)
    /// Another process holds it: wait for its entry (bounded by ``SharedTierConfiguration/maxWait``).
    case heldElsewhere
    /// The tier is down or refused: behave as if there were no shared tier.
    case unavailable
}

/// A fleet lock held by this process: the key and the random token only its holder knows.
public struct SharedLock: Sendable {
    let primary: String
    let token: Data
}

/// What one lookup found: the intact entries for the primary key and whether another process holds its lock.
public struct SharedLookup: Sendable {
    /// The intact entries written for this namespace and primary key (every variant).
    public var entries: [SharedEntry]
    /// Whether a fleet lock for the key is held (another process is fetching it) with a plausible expiry.
    public var isLocked: Bool
    /// Whether a lock key exists that no holder of this client set (no expiry, or longer than the TTL): ignored.
    public var foreignLock: Bool = false
}

/// The shared tier on Redis (through hiredis): entries of many processes and machines, and fleet-wide locks.
///
/// Knows nothing about HTTP: it stores opaque metadata and body bytes per primary key and variant, framed with
/// their identity and a checksum (``SharedEntryFormat``). Every failure is absorbed: a call that cannot reach
/// Redis returns `nil` / `.unavailable` after at most one ``SharedTierConfiguration/timeout``, the circuit breaker
/// then switches the tier off for ``SharedTierConfiguration/retryInterval`` (so a dead Redis costs one timeout,
/// not one per request), the outage is logged once and shows in ``statistics``.
public final class SharedTier: Sendable, CustomStringConvertible {
    /// The settings this tier was created with.
    public let configuration: SharedTierConfiguration
    let layout: SharedKeyLayout
    private let log: @Sendable (String) -> Void
    private let idle = Mutex<[RedisConnection]>([])
    private let state = Mutex(BreakerState())
    /// Serial queues (libdispatch gives each its own thread when busy), round-robin: hiredis blocks for up to the
    /// timeout, which must not hold the caller's threads nor the width-limited pool behind concurrent queues.
    private let queues = (0..<4).map { DispatchQueue(label: "DownloadCache.SharedTier.\($0)", qos: .userInitiated) }
    private let nextQueue = Atomic<UInt>(0)
    private var queue: DispatchQueue {
        queues[Int(nextQueue.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(queues.count))]
    }

    private struct BreakerState {
        var openUntil: Date?
        var probing = false
        var loggedKinds: Set<String> = []
        var statistics = SharedTierStatistics()
    }

    /// Creates the tier for one identity scope (the client passes its RFC 9111 mode and namespace, so nothing of
    /// one scope is readable through another). Connects lazily, on the first call.
    public init(configuration: SharedTierConfiguration, scope: String, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.layout = SharedKeyLayout(keyPrefix: configuration.keyPrefix, scope: scope)
        self.log = log
    }

    /// The endpoint with its password masked.
    public var description: String { configuration.description }

    /// A snapshot of this process's counters and the breaker's state.
    public var statistics: SharedTierStatistics {
        state.withLock { state in
            var copy = state.statistics
            copy.isAvailable = state.openUntil == nil
            return copy
        }
    }

    /// Counts a lookup whose entry the client served (or stored and then served).
    public func recordHit() { state.withLock { $0.statistics.hits += 1 } }
    /// Counts a lookup that gave the client nothing usable.
    public func recordMiss() { state.withLock { $0.statistics.misses += 1 } }

    // MARK: - Operations

    /// The intact entries for `primary` and whether its fleet lock is held; `nil` when the tier is unavailable.
    ///
    /// Values that are corrupted, truncated, larger than the limits or framed for another key are deleted and
    /// left out (counted in ``SharedTierStatistics/refusedValues``).
    public func lookup(primary: String) async -> SharedLookup? {
        let layout = layout
        let limits = configuration
        let maxValue = limits.maxBodyBytes + SharedEntryFormat.maxMetadataBytes + SharedEntryFormat.maxIdentityBytes + 64
        let found = await perform { connection throws(RedisFailure) -> (SharedLookup, Int) in
            let entriesKey = layout.entriesKey(primary)
            let reply = try Self.checked(connection.command([
                Data("EVAL".utf8), Data(SharedTierScripts.lookup.utf8), Data("2".utf8), entriesKey,
                layout.lockKey(primary), Data(String(maxValue).utf8), Data(String(max(1, limits.maxVariants)).utf8),
            ]))
            guard case .array(let items) = reply, case .integer(let lockTTL)? = items.first else {
                throw RedisFailure(kind: .reply, message: "unexpected lookup reply")
            }
            var entries: [SharedEntry] = []
            var refused = 0
            var index = 1
            while index + 1 < items.count {
                defer { index += 2 }
                guard case .string(let field) = items[index], case .string(let value) = items[index + 1] else { continue }
                do {
                    let entry = try SharedEntryFormat.decode(value, scope: layout.scope, primary: primary,
                                                             maxBodyBytes: limits.maxBodyBytes)
                    guard layout.field(entry.variant) == field else { throw SharedEntryFormat.Refusal.otherKey }
                    entries.append(entry)
                } catch {
                    refused += 1
                    _ = try? connection.command([Data("HDEL".utf8), entriesKey, field])
                }
            }
            // A lock only this client's holders could have set expires within lockTimeToLive; one without expiry or
            // with a longer one was not set by a holder (a hostile or broken writer): waiting for it would make
            // every miss wait maxWait, so it does not count as held.
            let honest = lockTTL > 0 && Double(lockTTL) <= limits.lockTimeToLive * 1_000 + 1_000
            return (SharedLookup(entries: entries, isLocked: honest, foreignLock: lockTTL == -1 || (lockTTL > 0 && !honest)), refused)
        }
        guard let (lookup, refused) = found else { return nil }
        if lookup.foreignLock {
            logOnce("foreign-lock", "ignoring a shared-tier lock without a plausible expiry (not set by a DownloadCache holder)")
        }
        if refused > 0 {
            state.withLock { $0.statistics.refusedValues += refused }
            logOnce("refused", "refused \(refused) damaged or foreign value(s) in the shared tier (deleted; treated as a miss)")
        }
        return lookup
    }

    /// Writes one entry (replacing the variant's previous value); its key lives at least `lifetime` seconds
    /// (capped by ``SharedTierConfiguration/maxEntryLifetime``). - Returns: whether it was written.
    @discardableResult
    public func store(primary: String, entry: SharedEntry, lifetime: TimeInterval) async -> Bool {
        guard entry.body.count <= configuration.maxBodyBytes else { return false }
        let layout = layout
        let milliseconds = Int64(min(max(lifetime, 1), max(1, configuration.maxEntryLifetime)) * 1_000)
        let value = SharedEntryFormat.encode(
            identity: SharedEntryFormat.identity(scope: layout.scope, primary: primary, variant: entry.variant),
            metadata: entry.metadata, body: entry.body)
        let variants = max(1, configuration.maxVariants)
        let written = await perform { connection throws(RedisFailure) -> Bool in
            _ = try Self.checked(connection.command([
                Data("EVAL".utf8), Data(SharedTierScripts.store.utf8), Data("1".utf8), layout.entriesKey(primary),
                layout.field(entry.variant), value, Data(String(milliseconds).utf8), Data(String(variants).utf8),
            ]))
            return true
        }
        if written == true { state.withLock { $0.statistics.stores += 1 } }
        return written == true
    }

    /// Deletes every variant stored for `primary` (RFC 9111 §4.4 invalidation after an unsafe method).
    public func invalidate(primary: String) async {
        let key = layout.entriesKey(primary)
        let done = await perform { connection throws(RedisFailure) -> Bool in
            _ = try Self.checked(connection.command([Data("DEL".utf8), key]))
            return true
        }
        if done == true { state.withLock { $0.statistics.invalidations += 1 } }
    }

    /// Tries to take the fleet lock for `primary` (`SET NX PX` with a random token, expiring after
    /// ``SharedTierConfiguration/lockTimeToLive`` seconds so a holder that dies never blocks the fleet).
    public func acquireLock(primary: String) async -> SharedLockAttempt {
        let key = layout.lockKey(primary)
        let token = Data(UUID().uuidString.utf8)
        let milliseconds = Int64(max(0.001, configuration.lockTimeToLive) * 1_000)
        let reply = await perform { connection throws(RedisFailure) -> RedisReply in
            try Self.checked(connection.command([Data("SET".utf8), key, token, Data("NX".utf8), Data("PX".utf8),
                                                 Data(String(milliseconds).utf8)]))
        }
        switch reply {
        case .status?: return .acquired(SharedLock(primary: primary, token: token))
        case .null?: return .heldElsewhere
        default: return .unavailable
        }
    }

    /// Releases a fleet lock if this process still holds it (compare-and-delete script: a lock that expired and
    /// was taken by another process is left alone).
    public func release(_ lock: SharedLock) async {
        let key = layout.lockKey(lock.primary)
        _ = await perform { connection throws(RedisFailure) -> Bool in
            _ = try Self.checked(connection.command([Data("EVAL".utf8), Data(SharedTierScripts.release.utf8),
                                                     Data("1".utf8), key, lock.token]))
            return true
        }
    }

    /// Asks the server for `PING` now (ignoring the breaker); `nil` when it answered, else the problem in words.
    public func probe() async -> String? {
        let endpoint = configuration.endpoint
        let timeout = configuration.timeout
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            queue.async {
                do {
                    let connection = try RedisConnection.connect(endpoint, timeout: timeout)
                    _ = try Self.checked(connection.command([Data("PING".utf8)]))
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: "\(error)")
                }
            }
        }
    }

    // MARK: - Connections and the breaker

    /// Runs `body` on a pooled (or new) connection off the caller's thread; `nil` when the tier is switched off
    /// or the call failed (the failure is recorded). A pooled connection that turns out dead (the server
    /// restarted) is replaced once by a new one before the call counts as failed.
    private func perform<T: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisFailure) -> T) async -> T? {
        guard admit() else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            queue.async {
                continuation.resume(returning: self.performBlocking(body))
            }
        }
    }

    private func performBlocking<T>(_ body: (RedisConnection) throws(RedisFailure) -> T) -> T? {
        var attempt = 0
        while true {
            attempt += 1
            let pooled = idle.withLock { $0.popLast() }
            let connection: RedisConnection
            if let pooled {
                connection = pooled
            } else {
                do { connection = try RedisConnection.connect(configuration.endpoint, timeout: configuration.timeout) } catch {
                    recordFailure(error)
                    return nil
                }
            }
            do {
                let value = try body(connection)
                giveBack(connection)
                recordSuccess()
                return value
            } catch {
                if error.kind == .unreachable, pooled != nil, attempt == 1 { continue }
                if !error.opensBreaker || error.kind == .authentication || error.kind == .permission {
                    giveBack(connection)
                }
                recordFailure(error)
                return nil
            }
        }
    }

    private func giveBack(_ connection: RedisConnection) {
        idle.withLock { pool in
            if pool.count < 8 { pool.append(connection) }
        }
    }

    /// Whether a call may run: always while the breaker is closed; once per retry interval (one probe) while open.
    private func admit() -> Bool {
        let now = Date()
        return state.withLock { state in
            guard let until = state.openUntil else { return true }
            if now < until || state.probing {
                state.statistics.skipped += 1
                return false
            }
            state.probing = true
            return true
        }
    }

    private func recordSuccess() {
        let recovered = state.withLock { state -> Bool in
            state.probing = false
            guard state.openUntil != nil else { return false }
            state.openUntil = nil
            state.loggedKinds.remove("down")
            return true
        }
        if recovered { log("shared tier \(description) is reachable again; using it") }
    }

    private func recordFailure(_ failure: RedisFailure) {
        let interval = max(0, configuration.retryInterval)
        let message: String? = state.withLock { state in
            state.statistics.failures += 1
            state.statistics.lastProblem = failure.description
            state.probing = false
            if failure.opensBreaker {
                state.openUntil = Date().addingTimeInterval(interval)
                guard state.loggedKinds.insert("down").inserted else { return nil }
                return "shared tier \(description) unavailable (\(failure)); answering from the local store and the "
                    + "origin, retrying every \(Int(interval.rounded())) s"
            }
            guard state.loggedKinds.insert(failure.kind.rawValue).inserted else { return nil }
            return "shared tier \(description) refused a call (\(failure)); continuing without it for that call"
        }
        if let message { log(message) }
    }

    private func logOnce(_ kind: String, _ message: String) {
        let first = state.withLock { $0.loggedKinds.insert(kind).inserted }
        if first { log(message) }
    }

    /// `reply`, or the failure its error reply names.
    static func checked(_ reply: RedisReply) throws(RedisFailure) -> RedisReply {
        if case .error(let text) = reply { throw RedisFailure.classify(text) }
        return reply
    }
}

/// The Lua scripts the tier runs (`EVAL`): each touches only keys of one hash tag, so Redis Cluster accepts them.
enum SharedTierScripts {
    /// KEYS: entries hash, lock. ARGV: largest value accepted (bytes), most variants returned.
    /// Returns `{lock's PTTL (ms; -2 none, -1 no expiry), field, value, field, value, ...}`; a key of the wrong type and values above the
    /// size limit are deleted instead of returned, so a hostile or broken writer cannot make readers download a
    /// huge value.
    static let lookup = """
        local out = {redis.call('PTTL', KEYS[2])}
        local kind = redis.call('TYPE', KEYS[1])['ok']
        if kind == 'none' then return out end
        if kind ~= 'hash' then redis.call('DEL', KEYS[1]) return out end
        local limit = tonumber(ARGV[1])
        local most = tonumber(ARGV[2])
        local count = 0
        for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
          if redis.call('HSTRLEN', KEYS[1], field) > limit then
            redis.call('HDEL', KEYS[1], field)
          elseif count < most then
            out[#out + 1] = field
            out[#out + 1] = redis.call('HGET', KEYS[1], field)
            count = count + 1
          end
        end
        return out
        """

    /// KEYS: entries hash. ARGV: field, value, time to live (ms), most variants. A key of another type is
    /// replaced; a new variant beyond the limit replaces all variants; the key's expiry only ever grows.
    static let store = """
        local kind = redis.call('TYPE', KEYS[1])['ok']
        if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
        if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
          redis.call('DEL', KEYS[1])
        end
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
        if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
        return 1
        """

    /// KEYS: lock. ARGV: token. Deletes the lock only when it still holds this token.
    static let release = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """
}
