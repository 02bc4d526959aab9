import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// A `dlcache get` child process killed with SIGKILL mid-download leaves nothing served and a clean store.
@Suite struct CrashIntegrationTests {
    /// The `dlcache` binary built next to this test bundle (`.build/<config>/dlcache`), if it exists.
    static var dlcacheBinary: URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        for directory in candidates {
            let binary = directory.appendingPathComponent("dlcache")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return nil
    }

    @Test(arguments: [0.15, 0.4, 0.8])
    func killedDownloadLeavesNothingServedAndACleanStore(killAfter seconds: Double) async throws {
        guard let binary = Self.dlcacheBinary else {
            Issue.record("dlcache binary not found next to the test bundle; build all products first (swift build)")
            return
        }
        try await withHarness { h in
            // 16 MiB in 256 chunks with 200 ms pauses: ~50 s, so the kill always lands mid-transfer, even when a
            // loaded machine delays this test's tasks.
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")],
                                         size: 16 << 20, chunkDelay: 0.2)
            // Its own cache root: no other instance may hold it open, so the next open runs full recovery.
            let root = h.directory.appendingPathComponent("child-root", isDirectory: true)
            let child = try ChildProcess([binary.path, "get", h.origin.url("/big").absoluteString,
                                          "--cache-dir", root.path, "-o", "/dev/null"], stdout: .discard)
            // The kill lands `seconds` after the child began writing the body into its store's tmp/ (so always
            // mid-transfer, however slowly it started). A thread of its own watches for that and kills, so a busy
            // cooperative pool (a full test run) cannot delay the kill until the transfer is over.
            let childTmp = root.appendingPathComponent("default/tmp").path
            Thread {
                for _ in 0..<12_000 where child.termination == nil {   // at most 60 s
                    let files = (try? FileManager.default.contentsOfDirectory(atPath: childTmp)) ?? []
                    let writing = files.contains { name in
                        ((try? FileManager.default.attributesOfItem(atPath: childTmp + "/" + name))?[.size] as? NSNumber)?
                            .int64Value ?? 0 > 0
                    }
                    if writing { break }
                    usleep(5_000)
                }
                usleep(UInt32(seconds * 1_000_000))
                child.send(signal: SIGKILL)
            }.start()
            // Polled (bounded at 60 s), so no thread of the cooperative pool blocks in waitpid.
            for _ in 0..<6_000 where child.termination == nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(child.killAndReap() == .signalled(SIGKILL))
            #expect(try await h.hits("/big").total > 0, "the child never reached the origin")

            var configuration = DownloadCache.Configuration(directory: root)
            configuration.log = { _ in }
            let reopened = try DownloadCache(configuration: configuration)
            let report = reopened.store.verify(repair: false)
            #expect(report.ok, "store problems after the kill: \(report.problems)")
            let tmp = reopened.store.directoryURL.appendingPathComponent("tmp")
            let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
            #expect(leftovers.isEmpty, "tmp/ still holds \(leftovers)")
            let key = RFC9111.primaryKey(method: "GET", url: h.origin.url("/big"))
            #expect(reopened.store.variants(forPrimaryKey: key).isEmpty)
            do throws(DownloadError) {
                _ = try await reopened.response(for: CacheRequest(url: h.origin.url("/big")),
                                                options: RequestOptions(policy: .dontLoad))
                Issue.record("nothing may be served after a killed download")
            } catch {
                #expect(error.code == .notCached)
            }
            // The store still works: a full download is stored and served.
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: 16 << 20)
            let full = try await reopened.response(for: CacheRequest(url: h.origin.url("/big")))
            #expect(full.bodySize == 16 << 20 && full.source == .network)
            let hit = try await reopened.response(for: CacheRequest(url: h.origin.url("/big")))
            #expect(hit.source == .cache)
        }
    }
}
