import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A namespace directory another user owns — planted in a shared cache directory, full of responses that user
/// chose — is never served: the store refuses it (`.unsafeFile`) and the client works uncached, every request
/// going to the origin. Giving the directory to another user (uid 65534) needs root.
@Suite(.serialized) struct APlantedNamespaceIsNotServedTests {
    @Test(.enabled(if: getuid() == 0, "giving a directory to another user needs root"))
    func aNamespaceOwnedByAnotherUserIsNotServed() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=3600")], body: "planted")
            _ = try await h.get("/doc")
            #expect(try await h.hits("/doc").total == 1)
            await h.cache.close()
            // Another user "owns" what was stored: the response it holds is that user's choice now.
            let namespace = h.directory.appendingPathComponent(h.cache.configuration.namespace)
            #expect(lchown(namespace.path, 65534, 65534) == 0)
            try await h.origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=3600")], body: "origin")

            let cache = try h.reopen()
            #expect(!cache.isCacheAvailable)
            for _ in 0..<2 {
                let response = try await cache.response(for: CacheRequest(url: h.origin.url("/doc")))
                #expect(response.source == .network && response.text == "origin")
            }
            #expect(try await h.hits("/doc").total == 3, "the planted namespace was served or written")
            await cache.close()
        }
    }
}
