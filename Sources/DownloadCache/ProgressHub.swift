import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

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
