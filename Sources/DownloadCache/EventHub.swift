import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// Fans values out to any number of `AsyncStream` subscribers; each subscriber has its own stream.
final class EventHub<Element: Sendable>: Sendable {
    private let subscribers = Mutex<[UInt64: AsyncStream<Element>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new stream receiving every value sent from now on (buffered, newest 1,000 kept).
    func subscribe() -> AsyncStream<Element> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Whether anybody is listening (lets callers skip building values).
    var hasSubscribers: Bool { subscribers.withLock { !$0.isEmpty } }

    /// Sends `value` to every subscriber.
    func send(_ value: Element) {
        let targets = subscribers.withLock { Array($0.values) }
        for target in targets { target.yield(value) }
    }

    /// Finishes every subscriber's stream.
    func finishAll() {
        let targets = subscribers.withLock { map -> [AsyncStream<Element>.Continuation] in
            defer { map = [:] }
            return Array(map.values)
        }
        for target in targets { target.finish() }
    }
}

/// Per-URL progress subscribers: a stream yields the progress of downloads of its URL and finishes when the
/// next download of that URL completes.
final class ProgressHub: Sendable {
    private let hubs = Mutex<[URL: EventHub<DownloadProgress>]>([:])

    /// A stream of progress for downloads of `url`.
    func subscribe(_ url: URL) -> AsyncStream<DownloadProgress> {
        hubs.withLock { map in
            if let hub = map[url] { return hub.subscribe() }
            let hub = EventHub<DownloadProgress>()
            map[url] = hub
            return hub.subscribe()
        }
    }

    /// Sends a progress value to `url`'s subscribers.
    func send(_ progress: DownloadProgress) {
        let hub = hubs.withLock { $0[progress.url] }
        hub?.send(progress)
    }

    /// Finishes `url`'s subscribers (its download completed).
    func finish(_ url: URL) {
        let hub = hubs.withLock { $0.removeValue(forKey: url) }
        hub?.finishAll()
    }
}
