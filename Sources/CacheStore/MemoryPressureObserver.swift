import Foundation
import Synchronization

/// Calls a handler whenever one of a set of notifications is posted; removes its observers when released.
///
/// `DownloadCache` and `ModelCache` use it to drop or shrink their memory tiers on the system's memory
/// notifications (`PlatformIntegration.memoryWarningNotifications` / `.backgroundNotifications`); tests use it
/// with their own notification names and center.
package final class MemoryPressureObserver: Sendable {
    private let center: NotificationCenter
    private let handler = HandlerBox()
    private let tokens = Mutex<[ObserverToken]>([])

    /// Holds the handler so the observer blocks can share it (a `Mutex` itself cannot be captured).
    private final class HandlerBox: Sendable {
        let closure = Mutex<(@Sendable () -> Void)?>(nil)
    }

    /// Wraps the opaque token `addObserver(forName:object:queue:using:)` returns.
    private struct ObserverToken: @unchecked Sendable {
        // Only handed back to `removeObserver`; never used otherwise.
        let object: any NSObjectProtocol
    }

    /// Observes `names` on `center`; nothing happens until `setHandler(_:)` is called.
    package init(center: NotificationCenter, names: [Notification.Name]) {
        self.center = center
        var created: [ObserverToken] = []
        for name in names {
            let token = center.addObserver(forName: name, object: nil, queue: nil) { [handler] _ in
                let current = handler.closure.withLock { $0 }
                current?()
            }
            created.append(ObserverToken(object: token))
        }
        let all = created
        tokens.withLock { $0 = all }
    }

    /// Sets the closure run on every observed notification (on the posting thread).
    package func setHandler(_ newHandler: @escaping @Sendable () -> Void) {
        handler.closure.withLock { $0 = newHandler }
    }

    deinit {
        let all = tokens.withLock { $0 }
        for token in all { center.removeObserver(token.object) }
    }
}
