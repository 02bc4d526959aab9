import Synchronization

/// Fans values out to any number of `AsyncStream` subscribers; each subscriber has its own stream. The one way
/// the caches built on the store (DownloadCache, ModelCache) report events.
package final class EventHub<Element: Sendable>: Sendable {
    private let subscribers = Mutex<[UInt64: AsyncStream<Element>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new stream receiving every value sent from now on (buffered, newest 1,000 kept).
    package func subscribe() -> AsyncStream<Element> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Whether anybody is listening (lets callers skip building values).
    package var hasSubscribers: Bool { subscribers.withLock { !$0.isEmpty } }

    /// Sends `value` to every subscriber.
    package func send(_ value: Element) {
        let targets = subscribers.withLock { Array($0.values) }
        for target in targets { target.yield(value) }
    }

    /// Finishes every subscriber's stream.
    package func finishAll() {
        let targets = subscribers.withLock { map -> [AsyncStream<Element>.Continuation] in
            defer { map = [:] }
            return Array(map.values)
        }
        for target in targets { target.finish() }
    }

    /// An empty hub.
    package init() {}
}
