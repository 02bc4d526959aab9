import Foundation
import Testing
import CacheTestSupport

/// A shared library planted beside the `dlcache` binary is never loaded: the executable has no run path naming
/// `$ORIGIN` (Scripts/link-as-needed.sh drops the one SwiftPM adds), so libsqlite3.so.0, needed at start, and
/// libcurl.so.4, opened by dlopen on the first request, come from the system's directories even when a file of that
/// name sits in the binary's own directory (a download folder, a shared bin/).
///
/// The planted files are copies of libz: valid ELF shared objects of the wrong library, so loading one fails the run
/// (a missing symbol at start, or "cannot load libcurl.so.4" at the first request).
@Suite(.serialized) struct LibrariesBesideTheBinaryAreNotLoadedTests {
    /// The system's libz, resolved through its symbolic links; nil when it is not at a Debian path.
    private static var systemLibz: URL? {
        for path in ["/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                     "/lib/aarch64-linux-gnu/libz.so.1", "/usr/lib/aarch64-linux-gnu/libz.so.1", "/lib64/libz.so.1"]
        where FileManager.default.fileExists(atPath: path) {
            return URL(fileURLWithPath: path).resolvingSymlinksInPath()
        }
        return nil
    }

    #if os(Linux)
    @Test(.enabled(if: ExecutableTests.binary != nil && systemLibz != nil, "dlcache is not built next to the test bundle"))
    func plantedLibcurlAndLibsqliteAreIgnored() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/planted", headers: [("Cache-Control", "max-age=3600")], body: "system libraries")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-planted-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bin = dir.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let binary = bin.appendingPathComponent("dlcache")
        try FileManager.default.copyItem(at: try #require(ExecutableTests.binary), to: binary)
        let libz = try #require(Self.systemLibz)
        for name in ["libcurl.so.4", "libsqlite3.so.0"] {
            try FileManager.default.copyItem(at: libz, to: bin.appendingPathComponent(name))
        }
        let env = ["DLCACHE_DIR": dir.appendingPathComponent("cache").path, "HOME": dir.path, "LD_DEBUG": "libs"]
        let url = origin.url("/planted").absoluteString

        let miss = try await ChildProcess.run([binary.path, "get", url], environment: env, timeout: .seconds(60))
        #expect(miss.status == 0, "a get that went to the origin failed: \(miss.errorOutput.suffix(600))")
        #expect(miss.output == "system libraries")
        #expect(miss.errorOutput.contains("libcurl.so.4"), "the loader trace does not show libcurl being opened")

        let hit = try await ChildProcess.run([binary.path, "get", url], environment: env, timeout: .seconds(60))
        #expect(hit.status == 0, "a get answered from the cache failed: \(hit.errorOutput.suffix(600))")
        #expect(hit.output == "system libraries")

        // The loader never even tried the binary's directory (its trace names each file it tries).
        for outcome in [miss, hit] {
            #expect(!outcome.errorOutput.contains("file=\(bin.path)/"), "the loader looked beside the binary")
        }
        #expect(try await origin.hits("/planted").total == 1)
    }
    #endif
}
