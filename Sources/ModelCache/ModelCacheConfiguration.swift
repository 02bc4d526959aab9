import CacheStore
import Foundation

/// How model values are turned into bytes on disk.
public enum ModelEncoding: String, Sendable, Codable, Equatable {
    /// `JSONEncoder` / `JSONDecoder` with default strategies (the default; readable, portable).
    case json
    /// Binary property list through `PropertyListEncoder` (present in swift-corelibs-foundation too).
    /// Values are wrapped in a one-field container so top-level scalars also encode.
    case propertyList
}

extension ModelCache {
    /// Settings of a `ModelCache`; every field has a default, so only `directory` must be given.
    ///
    /// The store lives in `<directory>/<namespace>/` for `user == nil`, otherwise in a per-user namespace
    /// derived from `namespace` and `user`, so users of one app never see each other's values.
    public struct Configuration: Sendable {
        /// Cache root directory; created if missing.
        public var directory: URL
        /// Base namespace: 1–24 characters of `[A-Za-z0-9._-]`. Default `"models"`.
        public var namespace: String
        /// The signed-in user, any non-empty string (an id or e-mail). Nil = not per-user.
        /// Different users get different namespaces (directories); see `ModelCache.eraseUser(_:)`.
        public var user: String?
        /// The app's or schema's version (e.g. `"2.3.1"`). Values written under another version are dropped
        /// on read. Default `""`.
        public var cacheVersion: String
        /// Seconds after which a stored value counts as stale. Default 300 (5 minutes).
        public var stalenessThreshold: TimeInterval
        /// Encoding for new writes; reads use the encoding recorded with each value. Default `.json`.
        public var encoding: ModelEncoding
        /// Most decoded values kept in memory. Default 256; 0 switches the memory tier off.
        public var maxMemoryEntries: Int
        /// Most estimated bytes of decoded values kept in memory (encoded size plus 64 bytes per value).
        /// Default 16 MiB; 0 switches the memory tier off.
        public var maxMemoryBytes: Int
        /// Bytes the underlying store may use on disk; nil = unlimited. Default 256 MiB.
        public var maxDiskBytes: Int64?
        /// Seconds since last access after which the store may evict a value; nil = never. Default nil.
        public var maxAge: TimeInterval?
        /// Check every memory-tier hit against the store's index (one indexed lookup, a few µs) so values
        /// written by another `ModelCache` or process on the same directory are seen at once. Default false:
        /// a hit is served from memory unchecked, which is right when this instance is the only writer.
        public var validatesMemoryHits: Bool
        /// Bytes of the underlying `CacheStore`'s own memory tier. Default 0 (off): the decoded-value tier
        /// already keeps hot values, a second copy of their bytes would double the memory.
        public var storeMaxMemoryBytes: Int
        /// Notifications that call `handleMemoryPressure()`. On platforms with UIKit the default is the
        /// memory-warning, did-enter-background and will-terminate notifications; elsewhere empty.
        public var memoryPressureNotifications: [Notification.Name]
        /// Where `memoryPressureNotifications` are observed. Default `NotificationCenter.default`.
        public var notificationCenter: NotificationCenter
        /// The clock used for `savedAt`, ages and staleness (tests inject a fixed one). Default `Date()`.
        public var now: @Sendable () -> Date

        /// Creates a configuration with defaults; `user` nil means one shared namespace.
        public init(directory: URL, user: String? = nil) {
            self.directory = directory
            self.namespace = "models"
            self.user = user
            self.cacheVersion = ""
            self.stalenessThreshold = 300
            self.encoding = .json
            self.maxMemoryEntries = 256
            self.maxMemoryBytes = 16 << 20
            self.maxDiskBytes = 256 << 20
            self.maxAge = nil
            self.validatesMemoryHits = false
            self.storeMaxMemoryBytes = 0
            self.memoryPressureNotifications = Configuration.platformMemoryPressureNotifications
            self.notificationCenter = .default
            self.now = { Date() }
        }

        /// The UIKit notifications wired to `handleMemoryPressure()`: the memory warning, entering the background
        /// and termination (`PlatformIntegration`, the names `DownloadCache` observes too); empty where UIKit
        /// doesn't exist.
        public static var platformMemoryPressureNotifications: [Notification.Name] {
            PlatformIntegration.memoryWarningNotifications + PlatformIntegration.backgroundNotifications
        }
    }
}
