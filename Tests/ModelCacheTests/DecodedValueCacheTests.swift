import Foundation
import Testing
@testable import ModelCache

@Suite("DecodedValueCache: the decoded-value memory tier of ModelCache")
struct DecodedValueCacheTests {
    private func item(_ value: Int, cost: Int = 10) -> DecodedItem {
        DecodedItem(value: value, typeName: "Swift.Int", typeVersion: 0, savedAt: Date(timeIntervalSince1970: 0),
                    cost: cost)
    }

    @Test("least recently used values are evicted first when the count limit is reached")
    func lruByCount() {
        let tier = DecodedValueCache(countLimit: 3, costLimit: 1_000)
        for key in ["a", "b", "c"] { tier.put(item(1), forKey: key) }
        #expect(tier.item(forKey: "a") != nil)   // a is now most recent; b is least
        tier.put(item(4), forKey: "d")
        #expect(tier.keysByRecency() == ["d", "a", "c"])
        #expect(tier.item(forKey: "b") == nil)
        #expect(tier.count == 3)
    }

    @Test("the cost limit evicts as many LRU values as needed; a value costlier than the tier is not kept")
    func lruByCost() {
        let tier = DecodedValueCache(countLimit: 100, costLimit: 100)
        tier.put(item(1, cost: 40), forKey: "a")
        tier.put(item(2, cost: 40), forKey: "b")
        tier.put(item(3, cost: 50), forKey: "c")
        #expect(tier.keysByRecency() == ["c", "b"])
        #expect(tier.totalCost == 90)
        tier.put(item(4, cost: 101), forKey: "b")   // replaces b, too big: b is gone, nothing else evicted
        #expect(tier.keysByRecency() == ["c"])
        #expect(tier.totalCost == 50)
    }

    @Test("an insert after a disk read is refused once a write moved the generation")
    func generationGuard() {
        let tier = DecodedValueCache(countLimit: 10, costLimit: 1_000)
        let before = tier.generation
        tier.put(item(2), forKey: "k")   // a concurrent write of a newer value
        #expect(!tier.insert(item(1), forKey: "k", ifGeneration: before))
        #expect(tier.item(forKey: "k")?.value as? Int == 2)
        #expect(tier.insert(item(3), forKey: "other", ifGeneration: tier.generation))
    }

    @Test("limits of 0 switch the tier off", arguments: [(0, 1_000), (10, 0)])
    func disabled(countLimit: Int, costLimit: Int) throws {
        let tier = DecodedValueCache(countLimit: countLimit, costLimit: costLimit)
        tier.put(item(1), forKey: "k")
        #expect(tier.count == 0)
        let fixture = try Fixture { $0.maxMemoryEntries = countLimit; $0.maxMemoryBytes = costLimit }
        defer { fixture.cleanUp() }
        try fixture.cache.set(5, forKey: "k")
        #expect(fixture.cache.value(forKey: "k", as: Int.self)?.value == 5)
        #expect(fixture.cache.value(forKey: "k", as: Int.self)?.value == 5)
        #expect(fixture.cache.statistics.memoryHits == 0)
        #expect(fixture.cache.statistics.diskHits == 2)
    }

    @Test("the cache's memory tier respects its count limit and serves repeats without decoding")
    func cacheMemoryLimits() throws {
        let fixture = try Fixture { $0.maxMemoryEntries = 2 }
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        for index in 0..<3 { try cache.set(index, forKey: "k\(index)") }
        #expect(cache.statistics.memoryEntries == 2)
        #expect(cache.value(forKey: "k0", as: Int.self)?.value == 0)   // evicted: read from disk
        #expect(cache.value(forKey: "k0", as: Int.self)?.value == 0)   // now from memory
        #expect(cache.statistics.diskHits == 1)
        #expect(cache.statistics.memoryHits == 1)
        #expect(cache.statistics.memoryCost > 0)
    }

    @Test("handleMemoryPressure empties the memory tier; values are then read from disk, nothing is lost")
    func memoryPressure() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        for index in 0..<10 { try cache.set(MenuItem.sample(index), forKey: "k\(index)") }
        #expect(cache.statistics.memoryEntries == 10)
        cache.handleMemoryPressure()
        #expect(cache.statistics.memoryEntries == 0)
        #expect(cache.statistics.memoryCost == 0)
        for index in 0..<10 { #expect(cache.value(forKey: "k\(index)", as: [MenuItem].self)?.value == MenuItem.sample(index)) }
        #expect(cache.statistics.diskHits == 10)
        #expect(await eventually { fixture.events.all.contains { $0.kind == .memoryTrimmed && $0.removedEntries == 10 } })
    }

    @Test("a configured notification triggers the trim (how UIKit's memory warning is wired)")
    func notificationWiring() throws {
        let center = NotificationCenter()
        let name = Notification.Name("ModelCacheTests.memoryWarning")
        let fixture = try Fixture {
            $0.notificationCenter = center
            $0.memoryPressureNotifications = [name]
        }
        defer { fixture.cleanUp() }
        try fixture.cache.set(1, forKey: "k")
        center.post(name: Notification.Name("unrelated"), object: nil)
        #expect(fixture.cache.statistics.memoryEntries == 1)
        center.post(name: name, object: nil)
        #expect(fixture.cache.statistics.memoryEntries == 0)
        #expect(fixture.cache.value(forKey: "k", as: Int.self)?.value == 1)
    }

    @Test("the platform default names UIKit's notifications only where UIKit exists")
    func platformDefaults() {
        #if canImport(UIKit)
        #expect(ModelCache.Configuration.platformMemoryPressureNotifications.count == 3)
        #else
        #expect(ModelCache.Configuration.platformMemoryPressureNotifications.isEmpty)
        #endif
    }

    @Test("a released cache stops observing: posting afterwards is harmless")
    func observerReleased() throws {
        let center = NotificationCenter()
        let name = Notification.Name("ModelCacheTests.release")
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        weak var weakCache: ModelCache?
        do {
            var configuration = ModelCache.Configuration(directory: directory)
            configuration.notificationCenter = center
            configuration.memoryPressureNotifications = [name]
            let cache = try ModelCache(configuration: configuration)
            weakCache = cache
            try cache.set(1, forKey: "k")
        }
        #expect(weakCache == nil)
        center.post(name: name, object: nil)
    }

    @Test("concurrent writers and readers leave memory and disk agreeing on every key")
    func concurrentReadersAndWriters() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        let keys = (0..<4).map { "key\($0)" }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    for step in 0..<60 {
                        let key = keys[(worker + step) % keys.count]
                        if (worker + step).isMultiple(of: 3) {
                            try? cache.set(worker * 1_000 + step, forKey: key)
                        } else {
                            _ = cache.value(forKey: key, as: Int.self)
                        }
                    }
                }
            }
        }
        let disk = try fixture.reopen()
        for key in keys {
            let fromMemoryOrDisk = cache.value(forKey: key, as: Int.self)?.value
            #expect(fromMemoryOrDisk != nil)
            #expect(fromMemoryOrDisk == disk.value(forKey: key, as: Int.self)?.value, "\(key)")
        }
    }
}
