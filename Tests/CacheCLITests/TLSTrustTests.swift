import Foundation
import Testing
import CacheCLI
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `--cacert`, `-k` and curl's CA variables against an HTTPS origin whose CA is made at test time (openssl).
@Suite struct TLSTrustTests {
    /// An origin serving HTTPS too, with its CA in a fresh directory.
    struct TLSOrigin {
        let origin: OriginServer
        let directory: URL
        var caFile: String { directory.appendingPathComponent("ca.pem").path }
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            origin = try OriginServer(timeout: 30, tlsDirectory: directory)
        }
        func url(_ path: String) throws -> String { try #require(origin.tlsURL(path)).absoluteString }
        func stop() {
            origin.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func trustedWithCacertRefusedWithoutIt() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await tls.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=600")], body: "secret")
        let url = try tls.url("/t")
        let refused = await cli.run(["get", url])
        #expect(refused.code == 60, "\(refused.code) \(refused.err)")
        #expect(refused.err.hasPrefix("Error: tls error: the origin's certificate for \(url) is not trusted"), "\(refused.err)")
        #expect(!refused.err.contains("stale copy"))
        #expect(try await tls.origin.hits("/t").total == 0)

        let trusted = await cli.run(["get", "--cacert", tls.caFile, url])
        #expect(trusted.code == 0, "\(trusted.err)")
        #expect(trusted.out == "secret")
        let hit = await cli.run(["get", "-v", "--cacert", tls.caFile, url])
        #expect(hit.out == "secret")
        #expect(hit.err.hasPrefix("HIT "))
        #expect(try await tls.origin.hits("/t").total == 1)
    }

    @Test func refusedCertificateMentionsTheStoredStaleCopy() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await tls.origin.configure(path: "/s", headers: [("Cache-Control", "max-age=0")], body: "old")
        let url = try tls.url("/s")
        #expect(await cli.run(["get", "--cacert", tls.caFile, url]).code == 0)
        let refused = await cli.run(["get", url])
        #expect(refused.code == 60)
        #expect(refused.err.hasSuffix(" (a stale copy is stored: --fallback-to-cache serves it)\n"), "\(refused.err)")
        let served = await cli.run(["get", "--fallback-to-cache", url])
        #expect(served.code == 0, "\(served.err)")
        #expect(served.out == "old")
    }

    @Test func insecureAcceptsWithAWarningAndStoresNothing() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await tls.origin.configure(path: "/k", headers: [("Cache-Control", "max-age=600")], body: "any")
        let url = try tls.url("/k")
        for _ in 0..<2 {
            let run = await cli.run(["get", "-k", url])
            #expect(run.code == 0, "\(run.err)")
            #expect(run.out == "any")
            #expect(run.err.hasPrefix("Warning: --insecure: "))
        }
        // Unverified responses are not stored: a later verified run must not be answered with them.
        #expect(try await tls.origin.hits("/k").total == 2)
        #expect(await cli.run(["get", url]).code == 60)
    }

    @Test func curlCABundleAndSSLCertFileVariablesAreHonoured() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await tls.origin.configure(path: "/e", headers: [("Cache-Control", "no-store")], body: "env")
        let url = try tls.url("/e")
        for name in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            let run = await cli.run(["get", url], variables: [name: tls.caFile])
            #expect(run.code == 0, "\(name): \(run.err)")
            #expect(run.out == "env")
        }
        // --cacert wins over the variable.
        let wrong = await cli.run(["get", "--cacert", "/nonexistent/ca.pem", url], variables: ["CURL_CA_BUNDLE": tls.caFile])
        #expect(wrong.code == 60, "\(wrong.code) \(wrong.err)")
    }

    @Test func capathDirectoryIsTrusted() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await tls.origin.configure(path: "/d", headers: [("Cache-Control", "no-store")], body: "dir")
        // origin.py puts the CA in OpenSSL's hashed layout too: hashed/<subject hash>.0.
        let hashDirectory = tls.directory.appendingPathComponent("hashed")
        let run = await cli.run(["get", "--capath", hashDirectory.path, try tls.url("/d")])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out == "dir")
    }

    @Test func prefetchTrustsTheCAFileAndHasNoInsecureOption() async throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = try tls.url("/size/10")
        let refused = await cli.run(["prefetch"], stdin: url + "\n")
        #expect(refused.code == 1)
        #expect(refused.err.contains("certificate"), "\(refused.err)")
        let trusted = await cli.run(["prefetch", "--cacert", tls.caFile], stdin: url + "\n")
        #expect(trusted.code == 0, "\(trusted.err)")
        #expect(await cli.run(["prefetch", "-k"], stdin: url + "\n").code == 64)
    }

    @Test func pemBlocksDecodeToDERCertificates() throws {
        let tls = try TLSOrigin()
        defer { tls.stop() }
        let pem = try String(contentsOfFile: tls.caFile, encoding: .utf8)
        let certificates = TLSTrust.derCertificates(pem: "junk\n" + pem + "\n" + pem)
        #expect(certificates.count == 2)
        #expect(certificates.first?.first == 0x30)  // DER SEQUENCE
        #expect(TLSTrust.derCertificates(pem: "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----").isEmpty)
        #expect(TLSTrust(caFile: tls.caFile).anchorCertificates().count == 1)
    }
}
