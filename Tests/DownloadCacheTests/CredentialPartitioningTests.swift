import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// URL user info counts as Authorization (RFC 9111 §3.5) for storing and reuse, and partitions what is stored
/// by credentials in both modes; no credential or cookie is ever written to the cache directory in plaintext.
@Suite struct CredentialPartitioningTests {
    /// `http://<userInfo>@127.0.0.1:<port><path>` on the harness origin.
    static func url(_ h: Harness, _ userInfo: String?, _ path: String) throws -> URL {
        let authority = (userInfo.map { $0 + "@" } ?? "") + "127.0.0.1:\(h.origin.port)"
        return try #require(URL(string: "http://\(authority)\(path)"))
    }

    static func get(_ h: Harness, _ userInfo: String?, _ path: String,
                    headers: HTTPHeaders = []) async throws -> CachedResponse {
        try await h.cache.response(for: CacheRequest(url: try url(h, userInfo, path), headers: headers))
    }

    /// Every byte of every regular file under `directory` (index, WAL, blobs).
    static func allBytes(under directory: URL) -> Data {
        var all = Data()
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = walker?.nextObject() as? URL {
            if (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
               let data = try? Data(contentsOf: file) {
                all.append(data)
            }
        }
        return all
    }

    static func contains(_ haystack: Data, _ needle: String) -> Bool {
        haystack.range(of: Data(needle.utf8)) != nil
    }

    @Test func sharedModeNeverServesAUserInfoResponseToAnyoneElse() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/auth", headers: [("Cache-Control", "max-age=60")], body: "secret",
                                         echoHeader: "Authorization")
            let alice = try await Self.get(h, "alice:pw1", "/auth")
            #expect(alice.text.contains("Basic"))
            let anonymous = try await Self.get(h, nil, "/auth")
            let bob = try await Self.get(h, "bob:other", "/auth")
            #expect(anonymous.source == .network && bob.source == .network)
            #expect(anonymous.text == "secret|Authorization=")
            #expect(!bob.text.contains(alice.text))
            #expect(try await h.hits("/auth").total == 3)
        }
    }

    @Test func sharedModeSharesWhatTheOriginMarkedPublic() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/pub", headers: [("Cache-Control", "public, max-age=60")], body: "for all")
            _ = try await Self.get(h, "alice:pw1", "/pub")
            let anonymous = try await Self.get(h, nil, "/pub")
            #expect(anonymous.source == .cache && anonymous.text == "for all")   // RFC 9111 §3.5
            #expect(try await h.hits("/pub").total == 1)
        }
    }

    @Test(arguments: [CacheMode.private, .shared])
    func userInfoPartitionsTheCache(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=60")], body: "b",
                                         echoHeader: "Authorization")
            let alice = try await Self.get(h, "alice:pw1", "/p")
            for other in [nil, "bob:other", "alice:pw2", "alice:", "alice", "al%69ce:pw1"] {
                let response = try await Self.get(h, other, "/p")
                #expect(response.source == .network, "\(other ?? "anonymous") must not get alice's response")
                // al%69ce:pw1 is alice's credentials percent-encoded (libcurl decodes them): its own partition, a miss.
                if other != "al%69ce:pw1" { #expect(response.text != alice.text) }
            }
            #expect(try await h.hits("/p").total == 7)
            let again = try await Self.get(h, "alice:pw1", "/p")
            #expect(again.source == (mode == .private ? .cache : .network) && again.text == alice.text)
        }
    }

    @Test func authorizationHeaderPartitionsThePrivateCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], body: "t",
                                         echoHeader: "Authorization")
            let alice = try await Self.get(h, nil, "/t", headers: [("Authorization", "Bearer alice")])
            let bob = try await Self.get(h, nil, "/t", headers: [("authorization", "Bearer bob")])
            let nobody = try await Self.get(h, nil, "/t")
            #expect(bob.source == .network && bob.text.contains("bob") && nobody.source == .network)
            #expect(try await Self.get(h, nil, "/t", headers: [("Authorization", "Bearer alice")]).text == alice.text)
            #expect(try await h.hits("/t").total == 3)
            #expect(h.storedVariants("/t").count == 3)
        }
    }

    @Test(arguments: [CacheMode.private, .shared])
    func noPasswordOrTokenIsWrittenToTheCacheDirectory(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/v", headers: [("Cache-Control", "public, max-age=60"),
                                                               ("Vary", "Authorization, Cookie, Accept")], body: "v")
            let headers: HTTPHeaders = [("Authorization", "Bearer tok-SECRET-1"), ("Cookie", "session=ck-SECRET-2"),
                                        ("Accept", "text/plain")]
            _ = try await Self.get(h, "alice:pw-SECRET-3", "/v", headers: headers)
            let hit = try await Self.get(h, "alice:pw-SECRET-3", "/v", headers: headers)
            #expect(hit.source == .cache)
            var other = headers
            other.set("Cookie", "session=other")
            #expect(try await Self.get(h, "alice:pw-SECRET-3", "/v", headers: other).source == .network)
            #expect(try await h.hits("/v").total == 2)
            let bytes = Self.allBytes(under: h.directory)
            #expect(!bytes.isEmpty)
            for secret in ["SECRET", "YWxpY2U6cHctU0VDUkVULTM"] {   // plaintext, and base64 of alice:pw-SECRET-3
                #expect(!Self.contains(bytes, secret), "\(secret) found in the cache directory")
            }
            #expect(Self.contains(bytes, "text/plain"))  // the other Vary value is still kept readable
        }
    }

    @Test func theKeySecretSurvivesAReopen() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=60"), ("Vary", "Cookie")], body: "r")
            _ = try await Self.get(h, "alice:pw1", "/r", headers: [("Cookie", "a=1")])
            let second = try h.reopen()
            let hit = try await second.response(for: CacheRequest(url: try Self.url(h, "alice:pw1", "/r"),
                                                                  headers: [("Cookie", "a=1")]))
            #expect(hit.source == .cache)
            #expect(try await h.hits("/r").total == 1)
        }
    }

    /// Credentials in the URL never reach the stored metadata.
    @Test func storedMetadataURLHasNoUserInfo() async throws {
        try await withHarness { h in
            var components = try #require(URLComponents(url: h.origin.url("/size/10"), resolvingAgainstBaseURL: false))
            components.user = "user"
            components.password = "secret"
            let url = try #require(components.url)
            _ = try await h.cache.response(for: CacheRequest(url: url))
            let stored = h.storedVariants("/size/10")
            #expect(stored.count == 1)
            let metadata = try #require(stored.first.flatMap { StoredEntryMetadata.decode($0.metadata) })
            #expect(!metadata.url.contains("secret") && !metadata.url.contains("user@"))
            #expect(metadata.url == h.origin.url("/size/10").absoluteString)
        }
    }
}
