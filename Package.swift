// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DownloadCache",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "DownloadCache", targets: ["DownloadCache"]),
        .library(name: "HTTPCacheSemantics", targets: ["HTTPCacheSemantics"]),
        .library(name: "CacheStore", targets: ["CacheStore"]),
        .library(name: "ModelCache", targets: ["ModelCache"]),
        .executable(name: "dlcache", targets: ["dlcache"]),
        .executable(name: "dlcache-bench", targets: ["dlcache-bench"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages (libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libcurl for the Linux transport (raw header lines, reason phrases, no URLSession header rewriting): the
        // headers from libcurl4-openssl-dev, the library (libcurl.so.4) loaded on the first request (dlopen), so a
        // process that answers from the cache never loads libcurl and the ~30 libraries it needs.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // hiredis for the shared tier (Redis); never a home-made RESP client.
        // No pkgConfig: Debian's hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a warning on
        // every build; shim.h includes <hiredis/hiredis.h> from /usr/include, which needs no flag (libhiredis-dev,
        // installed by Scripts/bootstrap.sh).
        .systemLibrary(name: "CHiredis"),

        // The portable system layer: every POSIX call of the library (open/openat with O_NOFOLLOW, fsync and
        // F_FULLFSYNC, flock, mmap, stat fields, clocks, error numbers, rename, unlink, mkdtemp) goes through its
        // C functions, whose `#ifdef __APPLE__` branches hide the platform differences. Its keyed hashes use the
        // platform's crypto library: CommonCrypto (part of the Apple SDKs, nothing to link) or OpenSSL's libcrypto
        // on Linux (Debian libssl-dev), never our own. It also makes SQLite's unix VFS reach the index's files
        // through the store's directory descriptor (SQLiteHeldDirectories.c), hence libsqlite3.
        .target(
            name: "CacheSystem",
            linkerSettings: [.linkedLibrary("crypto", .when(platforms: [.linux])), .linkedLibrary("z"),
                             .linkedLibrary("sqlite3")]
        ),
        // Pure RFC 9111 decisions: no disk, no network, no clock reads. Imports nothing of ours.
        .target(name: "HTTPCacheSemantics"),
        // Bytes + metadata on disk and in memory. Knows nothing about HTTP.
        .target(name: "CacheStore", dependencies: ["CacheSystem", "CSQLite", "CZlib"]),
        // The shared tier beside the local store: entries and fleet-wide locks on Redis (knows nothing about HTTP).
        .target(name: "SharedTier", dependencies: ["CHiredis", "CZlib"]),
        // The caching client: drives the two above over an HTTPTransport.
        .target(
            name: "DownloadCache",
            dependencies: ["HTTPCacheSemantics", "CacheStore", "CacheSystem", "SharedTier",
                           .target(name: "CCurl", condition: .when(platforms: [.linux]))]
        ),
        // Codable model-object cache (the seeds' AppCache).
        .target(name: "ModelCache", dependencies: ["CacheStore"]),
        // The command-line tool's logic, a library so tests can drive it.
        .target(name: "CacheCLI", dependencies: ["DownloadCache", "HTTPCacheSemantics", "CacheStore", "SharedTier", "CacheSystem", "CZlib"]),
        // The Swift runtime and Foundation linked into the binary on Linux: a process starts without resolving
        // ~20,000 symbols across a dozen Swift shared libraries (Apple platforms ship the runtime in the OS).
        // Linked as a position-dependent executable (`-no-pie`, this executable only): the static runtime as a
        // PIE needs ~117,000 relative relocations applied at every start (and their page faults). Linked with
        // --as-needed (Scripts/link-as-needed.sh): libcurl, which `import FoundationNetworking` adds, gets no
        // DT_NEEDED entry, since CCurl defines every libcurl function the executable calls.
        .executableTarget(name: "dlcache", dependencies: ["CacheCLI"],
                          swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))],
                          linkerSettings: [.unsafeFlags(["-static-stdlib", "-Xclang-linker", "-no-pie",
                                                         "-Xclang-linker",
                                                         "--ld-path=\(Context.packageDirectory)/Scripts/link-as-needed.sh"],
                                                        .when(platforms: [.linux]))]),
        // Fakes for tests: fixed clock, scripted transport, loopback origin launcher, child processes (posix_spawn).
        .target(name: "CacheTestSupport", dependencies: ["DownloadCache", "HTTPCacheSemantics", "CacheStore", "CacheSystem"]),

        .executableTarget(
            name: "dlcache-bench",
            dependencies: ["DownloadCache", "HTTPCacheSemantics", "CacheStore", "SharedTier", "ModelCache", "CacheTestSupport"],
            path: "Benchmarks/dlcache-bench"
        ),

        // CacheSystem only for the library-backed HMAC-SHA-256 the tests' CacheKeySecrets use.
        .testTarget(name: "HTTPCacheSemanticsTests", dependencies: ["HTTPCacheSemantics", "CacheSystem"], exclude: ["Fixtures"]),
        .testTarget(name: "SharedTierTests", dependencies: ["SharedTier"]),
        .testTarget(name: "CacheStoreTests", dependencies: ["CacheStore", "CacheSystem", "CacheTestSupport"]),
        .testTarget(name: "DownloadCacheTests", dependencies: ["DownloadCache", "HTTPCacheSemantics", "CacheStore", "SharedTier", "CacheTestSupport"]),
        .testTarget(name: "ModelCacheTests", dependencies: ["ModelCache", "CacheTestSupport"]),
        .testTarget(name: "CacheCLITests", dependencies: ["CacheCLI", "DownloadCache", "HTTPCacheSemantics", "CacheStore", "CacheTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
