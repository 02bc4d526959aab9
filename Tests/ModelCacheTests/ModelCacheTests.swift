import Foundation
import Testing
@testable import ModelCache

@Suite("ModelCache: round trips, staleness, removal")
struct ModelCacheTests {
    @Test("a model array round-trips through memory and through disk", arguments: [ModelEncoding.json, .propertyList])
    func roundTrip(encoding: ModelEncoding) throws {
        let fixture = try Fixture { $0.encoding = encoding }
        defer { fixture.cleanUp() }
        let items = MenuItem.sample(50)
        try fixture.cache.set(items, forKey: "menu")

        #expect(fixture.cache.value(forKey: "menu", as: [MenuItem].self)?.value == items)
        #expect(fixture.cache.statistics.memoryHits == 1)

        let reopened = try fixture.reopen()
        #expect(reopened.value(forKey: "menu", as: [MenuItem].self)?.value == items)
        #expect(reopened.statistics.diskHits == 1)
        #expect(reopened.value(forKey: "menu", as: [MenuItem].self)?.value == items)
        #expect(reopened.statistics.memoryHits == 1)
    }

    @Test("scalars, strings, dates and optionals round-trip", arguments: [ModelEncoding.json, .propertyList])
    func scalars(encoding: ModelEncoding) throws {
        let fixture = try Fixture { $0.encoding = encoding; $0.maxMemoryEntries = 0 }
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        try cache.set(42, forKey: "int")
        try cache.set("héllo", forKey: "string")
        try cache.set(Profile(name: "Ada", joined: Date(timeIntervalSince1970: 1_000)), forKey: "profile")
        try cache.set([String: Int]?.none, forKey: "nothing")
        #expect(cache.value(forKey: "int", as: Int.self)?.value == 42)
        #expect(cache.value(forKey: "string", as: String.self)?.value == "héllo")
        #expect(cache.value(forKey: "profile", as: Profile.self)?.value
                == Profile(name: "Ada", joined: Date(timeIntervalSince1970: 1_000)))
        let nothing = cache.value(forKey: "nothing", as: [String: Int]?.self)
        #expect(nothing != nil)
        #expect(nothing?.value == nil)
        #expect(cache.statistics.memoryHits == 0)
        #expect(cache.statistics.diskHits == 4)
    }

    @Test("a value written as JSON is still read after the encoding setting changes")
    func encodingIsRecordedPerValue() throws {
        let fixture = try Fixture { $0.encoding = .json }
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(3), forKey: "menu")
        let plist = try fixture.reopen { $0.encoding = .propertyList }
        #expect(plist.value(forKey: "menu", as: [MenuItem].self)?.value == MenuItem.sample(3))
    }

    @Test("missing key is a miss, overwrite replaces, remove forgets (memory and disk)")
    func overwriteAndRemove() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        #expect(cache.lookup("k", as: Int.self).cached == nil)
        if case .miss = cache.lookup("k", as: Int.self) {} else { Issue.record("expected .miss") }
        try cache.set(1, forKey: "k")
        try cache.set(2, forKey: "k")
        #expect(cache.value(forKey: "k", as: Int.self)?.value == 2)
        #expect(try fixture.reopen().value(forKey: "k", as: Int.self)?.value == 2)
        try cache.removeValue(forKey: "k")
        try cache.removeValue(forKey: "k")   // absent: not an error
        #expect(cache.value(forKey: "k", as: Int.self) == nil)
        #expect(try fixture.reopen().value(forKey: "k", as: Int.self) == nil)
    }

    @Test("removeAll empties memory and disk")
    func removeAll() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        for index in 0..<5 { try fixture.cache.set(index, forKey: "k\(index)") }
        try fixture.cache.removeAll()
        #expect(fixture.cache.statistics.memoryEntries == 0)
        for index in 0..<5 { #expect(fixture.cache.value(forKey: "k\(index)", as: Int.self) == nil) }
        #expect(try fixture.reopen().value(forKey: "k0", as: Int.self) == nil)
    }

    @Test("age and staleness follow the clock; the threshold is per cache and per call",
          arguments: [(10.0, false), (300.0, false), (300.5, true), (3_600.0, true)])
    func staleness(elapsed: TimeInterval, expectStale: Bool) throws {
        let fixture = try Fixture { $0.stalenessThreshold = 300 }
        defer { fixture.cleanUp() }
        let savedAt = fixture.clock.current
        try fixture.cache.set(MenuItem.sample(2), forKey: "menu")
        fixture.clock.advance(by: elapsed)
        let cached = try #require(fixture.cache.value(forKey: "menu", as: [MenuItem].self))
        #expect(cached.savedAt == savedAt)
        #expect(cached.age == elapsed)
        #expect(cached.isStale == expectStale)
        // The same value read from disk carries the same save time.
        let fromDisk = try #require(try fixture.reopen().value(forKey: "menu", as: [MenuItem].self))
        #expect(fromDisk.savedAt == savedAt)
        #expect(fromDisk.isStale == expectStale)
        // Per-call threshold overrides the cache's.
        let strict = fixture.cache.value(forKey: "menu", as: [MenuItem].self, stalenessThreshold: elapsed - 1)
        #expect(strict?.isStale == true)
    }

    @Test("a clock moved backwards gives age 0, not a negative age")
    func clockBackwards() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(1, forKey: "k")
        fixture.clock.advance(by: -100)
        let cached = fixture.cache.value(forKey: "k", as: Int.self)
        #expect(cached?.age == 0)
        #expect(cached?.isStale == false)
    }

    @Test("a value that cannot be encoded throws encodingFailed and leaves the old value")
    func encodingFailure() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(Unencodable?.none, forKey: "x")
        #expect {
            try fixture.cache.set(Unencodable(), forKey: "x")
        } throws: { error in
            guard let error = error as? ModelCacheError, error.code == .encodingFailed, let type = error.typeName,
                  let underlying = error.underlying else { return false }
            return type.hasSuffix("Unencodable") && underlying is Unencodable.Refused
        }
        #expect(fixture.cache.value(forKey: "x", as: Unencodable?.self) != nil)
    }

    @Test("an invalid base namespace or an empty user is refused", arguments: ["", ".", "..", "a/b", "spaced name",
                                                                              String(repeating: "n", count: 25)])
    func invalidNamespace(name: String) {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ModelCache.Configuration(directory: directory)
        configuration.namespace = name
        #expect(throws: ModelCacheError.self) { try ModelCache(configuration: configuration) }
        #expect(throws: ModelCacheError.self) { try ModelCache(directory: directory, user: "") }
    }

    @Test("a store failure surfaces as ModelCacheError.storage and drops the stale memory copy; reads stay safe")
    func storageFailure() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set("old", forKey: "k")
        // Pull the namespace directory out from under the open store; a body too big to be kept inline in
        // the index then has nowhere to go.
        let big = String(repeating: "x", count: 1 << 20)
        let namespaceDirectory = fixture.directory.appendingPathComponent(fixture.cache.namespace)
        try FileManager.default.removeItem(at: namespaceDirectory)
        #expect {
            try fixture.cache.set(big, forKey: "k")
        } throws: { error in
            guard (error as? ModelCacheError)?.code == .storage else { return false }
            return true
        }
        #expect(fixture.cache.statistics.memoryEntries == 0)
        #expect(fixture.cache.value(forKey: "k", as: String.self)?.value != big)
    }
}
