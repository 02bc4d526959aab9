import Foundation
import Testing
import CacheTestSupport

/// The built `dlcache` loads libcurl (and the TLS, Kerberos, LDAP, SSH libraries it needs) only when a request goes
/// to the network: `--version` and a `get` answered from the cache never open libcurl.so.4, a miss does. glibc's
/// dynamic loader names every library it opens, at start or by dlopen, on stderr under `LD_DEBUG=libs`.
@Suite(.serialized) struct LibcurlLoadsOnlyForTheNetworkTests {
    /// Runs the built dlcache with the loader's library trace on; returns (status, stdout, the trace lines).
    private static func runTraced(_ args: [String], env: [String: String]) async throws -> (Int32, String, String) {
        let binary = try #require(ExecutableTests.binary)
        let outcome = try await ChildProcess.run([binary.path] + args, environment: env.merging(["LD_DEBUG": "libs"]) { _, new in new },
                                                 timeout: .seconds(60))
        return (outcome.status, outcome.output, outcome.errorOutput)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func aCachedGetNeverLoadsLibcurlAndAMissDoes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        try await origin.configure(path: "/fresh", headers: [("Cache-Control", "max-age=3600")], body: "fresh body")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-curl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        let url = origin.url("/fresh").absoluteString

        let version = try await Self.runTraced(["--version"], env: env)
        #expect(version.0 == 0)
        #expect(version.2.contains("libc.so.6"), "the loader trace is missing: \(version.2.prefix(300))")
        #expect(!version.2.contains("libcurl"), "--version loaded libcurl")

        let miss = try await Self.runTraced(["get", url], env: env)
        #expect(miss.0 == 0)
        #expect(miss.1 == "fresh body")
        #expect(miss.2.contains("libcurl.so.4"), "a get that went to the origin did not load libcurl")

        let hit = try await Self.runTraced(["get", url], env: env)
        #expect(hit.0 == 0)
        #expect(hit.1 == "fresh body")
        #expect(!hit.2.contains("libcurl"), "a get answered from the cache loaded libcurl")
        #expect(try await origin.hits("/fresh").total == 1)
    }
}
