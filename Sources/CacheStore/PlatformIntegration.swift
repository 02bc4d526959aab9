import Foundation

/// The data-protection class a store gives its directories on the Apple platforms that have data protection
/// (iOS, iPadOS, tvOS, watchOS, visionOS); files created inside a directory inherit its class. It has no effect
/// on macOS and Linux, which have no per-file protection classes.
public enum FileProtection: String, Sendable, Hashable, CaseIterable {
    /// No protection (Apple's `FileProtectionType.none`): readable at any time, even before the first unlock
    /// after a boot. Named apart from `Optional.none`, which means "keep the inherited class".
    case unprotected
    /// Readable and writable only while the device is unlocked: a locked device cannot refresh the cache.
    case complete
    /// Files open when the device locks stay usable and new files can be created while locked, but an
    /// existing closed file cannot be opened until the next unlock.
    case completeUnlessOpen
    /// Readable after the first unlock following a boot, also while locked later: a locked device can still
    /// refresh and read the cache in the background. The default.
    case completeUntilFirstUserAuthentication
}

/// Everything the Swift side of the library does differently on Apple platforms and elsewhere, in one place
/// (the POSIX differences live in the C layer, `CacheSystem`): the default cache location, the backup and
/// data-protection attributes of the store's directories, and the names of the system's memory notifications.
package enum PlatformIntegration {
    /// The platform's directory for caches, where a library puts its own subdirectory:
    /// - Apple platforms: the app's Caches directory (`FileManager.urls(for: .cachesDirectory, in:
    ///   .userDomainMask)`), plus the bundle identifier when there is one, because an unsandboxed macOS
    ///   process shares `~/Library/Caches` with every other program;
    /// - elsewhere: `$XDG_CACHE_HOME` when it is an absolute path (XDG Base Directory), else `~/.cache`.
    /// `environment` is the process environment (passed in so tests can set it).
    package static func cachesDirectory(environment: [String: String]) -> URL {
        #if canImport(Darwin)
        _ = environment  // Apple platforms keep caches in the Caches directory whatever XDG_CACHE_HOME says.
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        guard let bundle = Bundle.main.bundleIdentifier, !bundle.isEmpty else { return caches }
        return caches.appendingPathComponent(bundle, isDirectory: true)
        #else
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache", isDirectory: true)
        #endif
    }

    /// The system temporary directory as a path without a trailing `/`, for the library's private directories:
    /// - Apple platforms: `FileManager.temporaryDirectory` (the per-user directory `confstr` names);
    /// - elsewhere: `$TMPDIR` when it is an absolute path, else `/tmp` — an empty or relative `TMPDIR` is
    ///   ignored, as POSIX utilities do, rather than read as `/` or as a place that moves with the working
    ///   directory.
    /// `environment` is the process environment (passed in so tests can set it).
    package static func temporaryDirectory(environment: [String: String]) -> String {
        #if canImport(Darwin)
        _ = environment
        var path = FileManager.default.temporaryDirectory.standardizedFileURL.path
        #else
        var path = "/tmp"
        if let tmpdir = environment["TMPDIR"], tmpdir.hasPrefix("/") { path = tmpdir }
        #endif
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Gives the directory at `url` the platform's cache attributes: the data-protection class `protection`
    /// (`nil` = leave the inherited class; Apple's data-protection platforms only) and, when
    /// `excludedFromBackup`, the exclude-from-backup flag (`URLResourceValues.isExcludedFromBackup`: iCloud and
    /// device backups on iOS, Time Machine on macOS; Linux has no system-wide flag).
    /// - Returns: the problems in words, one per attribute that could not be set. They are never thrown: a cache
    ///   whose directory keeps its old attributes still works.
    package static func applyDirectoryAttributes(_ url: URL, protection: FileProtection?,
                                                 excludedFromBackup: Bool) -> [String] {
        var problems: [String] = []
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        if let protection {
            let type: FileProtectionType
            switch protection {
            case .unprotected: type = .none
            case .complete: type = .complete
            case .completeUnlessOpen: type = .completeUnlessOpen
            case .completeUntilFirstUserAuthentication: type = .completeUntilFirstUserAuthentication
            }
            do {
                try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: url.path)
            } catch {
                problems.append("cannot set data protection \(protection.rawValue) on \(url.path): \(error.localizedDescription)")
            }
        }
        #else
        _ = protection  // No per-file protection classes on macOS or Linux.
        #endif
        #if canImport(Darwin)
        if excludedFromBackup {
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var target = url
            do {
                try target.setResourceValues(values)
            } catch {
                problems.append("cannot exclude \(url.path) from backups: \(error.localizedDescription)")
            }
        }
        #else
        _ = excludedFromBackup  // Backup tools on Linux choose their own exclusions (conventionally ~/.cache).
        #endif
        return problems
    }

    /// The notifications after which a memory tier should drop everything: UIKit's memory warning, by its raw
    /// name so no main-actor-isolated UIKit symbol is touched; empty where UIKit does not exist.
    package static var memoryWarningNotifications: [Notification.Name] {
        #if canImport(UIKit)
        return [Notification.Name("UIApplicationDidReceiveMemoryWarningNotification")]
        #else
        return []
        #endif
    }

    /// The notifications after which a memory tier should shrink: UIKit's entering-background and
    /// will-terminate notifications (an app in the background is the first the system ends when it needs
    /// memory); empty where UIKit does not exist.
    package static var backgroundNotifications: [Notification.Name] {
        #if canImport(UIKit)
        return [
            Notification.Name("UIApplicationDidEnterBackgroundNotification"),
            Notification.Name("UIApplicationWillTerminateNotification"),
        ]
        #else
        return []
        #endif
    }
}
