import Foundation

/// Where the cache lives: `--cache-dir`, else `$DLCACHE_DIR`, else `$XDG_CACHE_HOME/dlcache`, else `~/.cache/dlcache`.
package struct CacheLocation: Sendable, Equatable {
    /// The cache root directory (the store is `<directory>/<namespace>/`).
    package var directory: URL
    /// The namespace inside the root (default `default`).
    package var namespace: String

    /// Creates a location from a root and a namespace.
    package init(directory: URL, namespace: String = "default") {
        self.directory = directory
        self.namespace = namespace
    }

    /// Resolves the cache root from an explicit option and the environment, in the documented order.
    ///
    /// Empty variables count as unset, and so does a relative `XDG_CACHE_HOME` (the XDG Base Directory spec:
    /// "If an implementation encounters a relative path in any of these variables it should consider the path
    /// invalid and ignore it"). A relative `--cache-dir` or `DLCACHE_DIR` is resolved against the working directory.
    /// - Throws: ``UsageError`` when nothing names a directory (no option, no variables, no `HOME`).
    package static func resolveDirectory(option: String?, environment: CommandEnvironment) throws(UsageError) -> URL {
        if let option, !option.isEmpty { return environment.fileURL(for: option) }
        let vars = environment.variables
        if let dir = vars["DLCACHE_DIR"], !dir.isEmpty { return environment.fileURL(for: dir) }
        if let xdg = vars["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return environment.fileURL(for: xdg).appendingPathComponent("dlcache")
        }
        if let home = vars["HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home).appendingPathComponent(".cache").appendingPathComponent("dlcache")
        }
        throw UsageError("no cache directory: pass --cache-dir or set DLCACHE_DIR (HOME is not set)")
    }

    /// Resolves `--cache-dir` and `--namespace` from parsed arguments.
    /// - Throws: ``UsageError`` when no directory can be found or the namespace name is not
    ///   1–64 characters of `[A-Za-z0-9._-]` (and not `.` or `..`).
    package static func resolve(_ parsed: ParsedArguments, environment: CommandEnvironment) throws(UsageError) -> CacheLocation {
        let directory = try resolveDirectory(option: parsed.value("cache-dir"), environment: environment)
        let namespace = parsed.value("namespace") ?? "default"
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard (1...64).contains(namespace.count), namespace != ".", namespace != "..",
              namespace.allSatisfy({ allowed.contains($0) }) else {
            throw UsageError("invalid value '\(namespace)' for '--namespace': use 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        return CacheLocation(directory: directory, namespace: namespace)
    }
}
