import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

extension DownloadCache {
    /// How a DownloadCache is set up: where it stores, which RFC 9111 mode, limits, transport and clock.
    public struct Configuration: Sendable {
        /// Cache root directory; the store lives in `<directory>/<namespace>/`.
        public var directory: URL
        /// Store namespace: `[A-Za-z0-9._-]`, 1–64 characters (validated by CacheStore).
        public var namespace: String
        /// RFC 9111 private (default: a browser-like per-user cache) or shared cache semantics.
        public var mode: CacheMode = .private
        /// Bytes on disk before least-recently-used eviction; `nil` = unlimited. Default 1 GiB.
        public var maxDiskBytes: Int64? = 1 << 30
        /// Bytes of bodies kept in the memory tier; 0 disables it. Default 32 MiB.
        public var maxMemoryBytes: Int = 32 << 20
        /// Maximum number of stored responses; `nil` = unlimited.
        public var maxEntryCount: Int?
        /// Bytes: a response whose body is larger is delivered but not stored, and nothing is evicted for it.
        /// `nil` (the default) = one eighth of ``maxDiskBytes`` (128 MiB at the default 1 GiB; unlimited when
        /// that is `nil`); never more than ``maxDiskBytes``. The limit in force is
        /// `storeConfiguration.entryByteLimit`. One eighth keeps room for eight bodies of the largest size;
        /// URLCache's documented rule is stricter (a response "no larger than about 5% of the disk cache size",
        /// URLSessionDataDelegate `urlSession(_:dataTask:willCacheResponse:completionHandler:)`), but a download
        /// cache holds fewer, larger files.
        public var maxEntryBytes: Int64?
        /// Bytes a response body of unknown length (chunked, or ended by closing the connection) may write to the
        /// cache's disk (the store's `tmp/`, or the private download directory) before its transfer is stopped and
        /// fails with `DownloadError.Code.bodyTooLarge` (``TransportError/bodyTooLarge(limit:)``); nothing is
        /// stored. It bounds an endless or runaway body, whether the caller waits for the whole response or
        /// streams it (a stream reads the body back from that file), and whether it is to be stored or not
        /// (`writeToCache: false`, over ``maxEntryBytes``): the body passes through that file either way. A body
        /// framed by its `Content-Length` (without a content coding) cannot outgrow that announcement, which is
        /// its bound instead when the file system holding that file has room for it with a tenth of its available
        /// space (at least 256 MiB) left over: then it is delivered whatever its size (stored when it may be); an
        /// announcement larger than that (an origin may announce any length) leaves this limit in force.
        /// Independent of ``maxDiskBytes``: a body larger than the cache is still delivered, just not stored.
        /// `nil` = unlimited. Default 4 GiB.
        public var maxTransferBytes: Int64? = 4 << 30
        /// The largest response body one transfer may bring, in bytes, whatever its framing (curl's
        /// `--max-filesize`): a response announcing a longer one (`Content-Length`, or a 206's complete length)
        /// fails at its first body byte, any other once it grows past it, with `DownloadError.Code.bodyTooLarge`;
        /// nothing is stored. Unlike ``maxTransferBytes`` an announced length never raises it. `nil` (the
        /// default) = no such cap.
        public var maxResponseBodyBytes: Int64?
        /// Seconds since last access after which an entry is dropped; `nil` = never. Default 7 days.
        public var maxAge: TimeInterval? = 7 * 86_400
        /// Parallel exchanges per origin (scheme, host, port) across all calls; the default transport also
        /// opens at most this many connections per host. Requests to other origins never wait for these slots.
        /// Default 6: what browsers open per host over HTTP/1.1 (one request per connection at a time), friendly
        /// to the origin and to a phone's radio; a caller that issues many independent, possibly slow requests
        /// to one origin (a proxy, `dlcache driver`) should raise it — the 7th request to one origin otherwise
        /// waits for one of the first 6 to finish.
        public var maxConcurrentDownloads: Int = 6
        /// Bytes: bodies up to this size are returned in memory (`ResponseBody.data`); larger ones only as a
        /// file URL. Default 8 MiB.
        public var inMemoryBodyLimit: Int = 8 << 20
        /// The transport; `nil` = `CurlTransport` on Linux (libcurl), `URLSessionTransport` elsewhere, with
        /// `maxConcurrentDownloads` connections per host.
        public var transport: (any HTTPTransport)?
        /// The certificates the default transport trusts for `https://` origins (a private CA bundle, or no
        /// verification); default ``TLSTrust/system``. Ignored when ``transport`` is set: give the trust to
        /// that transport instead.
        public var tlsTrust: TLSTrust = .system
        /// The clock used for request/response times, ages and expiries (tests inject a fixed one).
        public var now: @Sendable () -> Date = { Date() }
        /// Serve a stale stored response, marked ``ResponseSource/stale``, when the origin cannot be reached
        /// (connection refused, closed or reset before a whole response, timed out): RFC 9111 §4.2.4 "when the
        /// cache is disconnected". Never for an HTTP error status (that needs `stale-if-error` or
        /// `fallbackToCacheIfLoadFails`), never where must-revalidate, no-cache, or in shared mode proxy-revalidate
        /// / s-maxage forbid it. Default `true`; `false` reports the network error instead.
        public var servesStaleWhenDisconnected: Bool = true
        /// Targeted cache-control fields (RFC 9213) this cache obeys, in priority order: the first one present with
        /// a valid, non-empty Structured Field Dictionary replaces `Cache-Control` and `Expires` for storage and
        /// freshness; it is forwarded unchanged. `nil` (the default) = `["CDN-Cache-Control"]` in shared mode, none
        /// in private mode; `[]` = none.
        public var targetedFields: [String]?
        /// The target list in effect: ``targetedFields``, or the mode's default when it is `nil`.
        public var effectiveTargetedFields: [String] {
            targetedFields ?? (mode == .shared ? ["CDN-Cache-Control"] : [])
        }
        /// When a slow exchange fails as timed out (`TransportError.stalled`): fewer than `minimumBytes` in a
        /// window of `seconds`. Default ``StallRule/default`` (1 KiB in 30 s: a body trickling 1 byte per second
        /// fails within 45 s); `nil` = no stall rule (only `RequestOptions.timeout` and the transport's idle
        /// timeout bound an exchange). `RequestOptions.stallRule` overrides it per request.
        public var stallRule: StallRule? = .default
        /// Redirect hops followed before failing with `.tooManyRedirects`. Default 10.
        public var maxRedirects: Int = 10
        /// Seconds a store write (storing a response, freshening, pinning ...) waits while another process holds
        /// the index locked before giving up; a download whose response is in hand then returns it unstored (the
        /// failure is logged). Reads never wait for a writer (SQLite WAL). Default 2 — far below the store's own
        /// default of 10, so another process holding the index locked costs a call at most this much.
        public var storeBusyTimeout: TimeInterval = 2
        /// The shared tier beside the local store (e.g. `try .redis("redis://cache.internal:6379/0")`): asked on a
        /// local miss, written through on stores and freshenings, invalidated by unsafe methods, and the place of
        /// the fleet-wide lock that makes one origin request per resource for many machines. `nil` = none.
        /// A failing shared tier never fails a call (see ``SharedTierConfiguration``).
        public var sharedTier: SharedTierConfiguration?
        /// Seconds a GET that needs the origin waits while another process on this machine fetches the same cache
        /// key (a lock per key hash in the namespace's `locks/`; other keys never wait), before fetching itself;
        /// 0 = no cross-process single-flight.
        /// A holder that exits or dies releases the lock at once. Default 30.
        public var crossProcessLockTimeout: TimeInterval = 30
        /// Where storage problems are reported (they never fail a download). Default: standard error.
        public var log: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data("dlcache: \(message)\n".utf8))
        }

        /// Creates a configuration with the defaults documented on each property.
        public init(directory: URL, namespace: String = "default") {
            self.directory = directory
            self.namespace = namespace
        }

        /// What a stored response survives once stored: a killed process (default, no fsync per body), or also
        /// a power cut (`.powerLoss`: each body file fsynced). Never a wrong byte either way (bodies are checked
        /// against their crc32 before a process serves them first); see `CacheStore.Durability`.
        public var durability: CacheStore.Durability = .processCrash

        /// The data-protection class of the store's directories on Apple's data-protection platforms (iOS,
        /// iPadOS, tvOS, watchOS, visionOS; bodies and the index created there inherit it); `nil` = what the
        /// app's container gives. Default ``FileProtection/completeUntilFirstUserAuthentication``, so a locked
        /// device can still refresh in the background. No effect on macOS or Linux.
        public var fileProtection: FileProtection? = .completeUntilFirstUserAuthentication
        /// Whether the store's directory is marked excluded from backups on Apple platforms (iCloud and device
        /// backups, Time Machine): cached responses can be fetched again. Default true; no effect on Linux.
        public var excludedFromBackup: Bool = true
        /// Notifications after which the memory tier is emptied (``DownloadCache/handleMemoryWarning()``).
        /// Default: UIKit's memory warning where UIKit exists, else none.
        public var memoryWarningNotifications: [Notification.Name] = PlatformIntegration.memoryWarningNotifications
        /// Notifications after which the memory tier shrinks to a quarter of ``maxMemoryBytes``
        /// (``DownloadCache/handleEnteringBackground()``). Default: UIKit's entering-background and will-terminate
        /// notifications where UIKit exists, else none.
        public var backgroundNotifications: [Notification.Name] = PlatformIntegration.backgroundNotifications
        /// Where ``memoryWarningNotifications`` and ``backgroundNotifications`` are observed. Default
        /// `NotificationCenter.default`.
        public var notificationCenter: NotificationCenter = .default
        /// The cache is opened to remove entries (`purge(_:)`, `removeEntries(for:)`): a store on a file system with
        /// almost no space left opens writable anyway, since deleting frees space (see
        /// `CacheStore.Configuration.opensToFreeSpace`). Default false.
        public var opensToFreeSpace: Bool = false

        /// The default cache root: `$DLCACHE_DIR` when set, else `dlcache` in the platform's caches directory —
        /// on Apple platforms the app's Caches directory (within a subdirectory named after the bundle identifier
        /// when there is one), elsewhere `$XDG_CACHE_HOME` (when absolute) or `~/.cache`.
        public static func defaultDirectory() -> URL {
            let environment = ProcessInfo.processInfo.environment
            if let explicit = environment["DLCACHE_DIR"], !explicit.isEmpty {
                return URL(fileURLWithPath: explicit, isDirectory: true)
            }
            return PlatformIntegration.cachesDirectory(environment: environment)
                .appendingPathComponent("dlcache", isDirectory: true)
        }

        /// The CacheStore configuration these settings imply.
        public var storeConfiguration: CacheStore.Configuration {
            var store = CacheStore.Configuration(directory: directory, namespace: namespace)
            store.maxDiskBytes = maxDiskBytes
            store.maxMemoryBytes = maxMemoryBytes
            store.maxEntryCount = maxEntryCount
            store.maxEntryBytes = maxEntryBytes ?? maxDiskBytes.map { max(0, $0) / 8 }
            store.maxAge = maxAge
            store.now = now
            store.busyTimeout = max(0, storeBusyTimeout)
            store.durability = durability
            store.fileProtection = fileProtection
            store.excludedFromBackup = excludedFromBackup
            store.opensToFreeSpace = opensToFreeSpace
            // Storage problems go where the caller sends the client's own log lines (the CLI shows them only with -v).
            let log = log
            store.logger = { message in log("store: \(message)") }
            return store
        }

        /// The RFC 9111 evaluation options for one request's options.
        func evaluationOptions(_ options: RequestOptions) -> EvaluationOptions {
            EvaluationOptions(mode: mode, policy: options.policy,
                              ignoreServerCacheControl: options.ignoreServerCacheControl,
                              lifetimeOverride: options.expiration.lifetime,
                              fallbackToCacheIfLoadFails: options.fallbackToCacheIfLoadFails,
                              servesStaleWhenDisconnected: servesStaleWhenDisconnected,
                              targetedFields: effectiveTargetedFields)
        }
    }
}
