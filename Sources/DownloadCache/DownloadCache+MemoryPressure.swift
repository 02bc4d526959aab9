import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

extension DownloadCache {
    /// Empties the memory tier; the disk tier keeps everything, so nothing stored is lost (later hits read the
    /// body from disk and verify it). Called on ``Configuration/memoryWarningNotifications`` (UIKit's memory
    /// warning by default); call it yourself on other signs of memory pressure.
    public func handleMemoryWarning() {
        MemoryPressureObservers.memoryWarning(store)
    }

    /// Shrinks the memory tier to a quarter of ``Configuration/maxMemoryBytes``, keeping the most recently used
    /// bodies; the disk tier is untouched. Called on ``Configuration/backgroundNotifications`` (UIKit's
    /// entering-background and will-terminate by default): a backgrounded app that holds less memory is ended
    /// later by the system.
    public func handleEnteringBackground() {
        MemoryPressureObservers.enteringBackground(store)
    }
}

/// The two observers that wire a cache's memory tier to the system's notifications.
struct MemoryPressureObservers: Sendable {
    let warning: MemoryPressureObserver
    let background: MemoryPressureObserver

    /// Observes `configuration`'s notifications and acts on `store` (not on the cache, so the observers never
    /// keep a closed cache alive).
    init(_ configuration: DownloadCache.Configuration, store: CacheStore) {
        warning = MemoryPressureObserver(center: configuration.notificationCenter,
                                         names: configuration.memoryWarningNotifications)
        warning.setHandler { Self.memoryWarning(store) }
        background = MemoryPressureObserver(center: configuration.notificationCenter,
                                            names: configuration.backgroundNotifications)
        background.setHandler { Self.enteringBackground(store) }
    }

    /// What a memory warning does: the memory tier is emptied.
    static func memoryWarning(_ store: CacheStore) {
        store.dropMemoryTier()
    }

    /// What entering the background does: the memory tier keeps its most recently used quarter.
    static func enteringBackground(_ store: CacheStore) {
        store.trimMemoryTier(toFraction: 0.25)
    }
}
