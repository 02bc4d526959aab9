import CacheStore
import Foundation
import Testing
@testable import ModelCache

@Suite("ModelCache: per-user namespaces")
struct NamespaceTests {
    @Test("two users on one directory never see each other's values")
    func isolation() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let alice = try ModelCache(directory: directory, user: "alice@example.com")
        let bob = try ModelCache(directory: directory, user: "bob@example.com")
        let shared = try ModelCache(directory: directory)
        try alice.set("alice's inbox", forKey: "inbox")
        try bob.set("bob's inbox", forKey: "inbox")
        #expect(alice.value(forKey: "inbox", as: String.self)?.value == "alice's inbox")
        #expect(bob.value(forKey: "inbox", as: String.self)?.value == "bob's inbox")
        #expect(shared.value(forKey: "inbox", as: String.self) == nil)
        #expect(Set([alice.namespace, bob.namespace, shared.namespace]).count == 3)
        #expect(try ModelCache(directory: directory, user: "alice@example.com")
            .value(forKey: "inbox", as: String.self)?.value == "alice's inbox")
    }

    @Test("user ids that sanitise alike still get different namespaces",
          arguments: [("a@b", "a_b"), ("ünï", "___"), ("x y", "x_y"), ("Alice", "alice")])
    func distinctNamespaces(first: String, second: String) throws {
        let one = UserNamespace.name(base: "models", user: first)
        let two = UserNamespace.name(base: "models", user: second)
        #expect(one != two)
        for name in [one, two] {
            #expect(name.count <= 64)
            #expect(name.unicodeScalars.allSatisfy { CharacterSet(charactersIn:
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-").contains($0) })
        }
        // Stable across runs: the same user always maps to the same name.
        #expect(one == UserNamespace.name(base: "models", user: first))
    }

    @Test("a very long user id and a long base namespace still make a valid store namespace")
    func longNames() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ModelCache.Configuration(directory: directory,
                                                     user: String(repeating: "long.user-", count: 30))
        configuration.namespace = String(repeating: "b", count: 24)
        let cache = try ModelCache(configuration: configuration)
        #expect(cache.namespace.count <= 64)
        try cache.set(1, forKey: "k")
        #expect(cache.value(forKey: "k", as: Int.self)?.value == 1)
    }

    @Test("eraseUser removes another user's namespace completely and leaves others alone")
    func eraseOtherUser() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let alice = try ModelCache(directory: directory, user: "alice")
            try alice.set("secret", forKey: "inbox")
        }
        let bob = try ModelCache(directory: directory, user: "bob")
        try bob.set("bob's", forKey: "inbox")
        let aliceNamespace = UserNamespace.name(base: "models", user: "alice")
        #expect(CacheStore.namespaces(in: directory).contains(aliceNamespace))

        try bob.eraseUser("alice")
        #expect(!CacheStore.namespaces(in: directory).contains(aliceNamespace))
        #expect(try ModelCache(directory: directory, user: "alice").value(forKey: "inbox", as: String.self) == nil)
        #expect(bob.value(forKey: "inbox", as: String.self)?.value == "bob's")
        try bob.eraseUser("nobody")   // no data: not an error
    }

    @Test("the static eraseUser works without an open cache")
    func staticErase() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let carol = try ModelCache(directory: directory, user: "carol")
            try carol.set([1, 2, 3], forKey: "numbers")
        }
        try ModelCache.eraseUser("carol", in: directory)
        #expect(try ModelCache(directory: directory, user: "carol").value(forKey: "numbers", as: [Int].self) == nil)
        #expect(throws: ModelCacheError.self) { try ModelCache.eraseUser("carol", namespace: "../x", in: directory) }
    }

    @Test("erasing the signed-in user empties this cache, memory included, and it stays usable")
    func eraseCurrentUser() throws {
        let fixture = try Fixture { $0.user = "dave" }
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(4), forKey: "menu")
        try fixture.cache.eraseUser("dave")
        #expect(fixture.cache.statistics.memoryEntries == 0)
        #expect(fixture.cache.value(forKey: "menu", as: [MenuItem].self) == nil)
        #expect(try fixture.reopen { $0.user = "dave" }.value(forKey: "menu", as: [MenuItem].self) == nil)
        try fixture.cache.set(7, forKey: "after")
        #expect(try fixture.reopen { $0.user = "dave" }.value(forKey: "after", as: Int.self)?.value == 7)
    }
}
