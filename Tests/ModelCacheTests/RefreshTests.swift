import Foundation
import Testing
@testable import ModelCache

@Suite("ModelCache: show cached, refresh in the background")
struct RefreshTests {
    private func collect<T>(_ stream: AsyncThrowingStream<ModelUpdate<T>, any Error>) async
        -> (updates: [ModelUpdate<T>], error: (any Error)?) {
        var updates: [ModelUpdate<T>] = []
        do {
            for try await update in stream { updates.append(update) }
            return (updates, nil)
        } catch {
            return (updates, error)
        }
    }

    @Test("missing: the fetched value is yielded and stored")
    func missing() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let fetches = Counter()
        let stream = fixture.cache.values(forKey: "menu", as: [MenuItem].self) {
            fetches.increment()
            return MenuItem.sample(3)
        }
        let (updates, error) = await collect(stream)
        #expect(error == nil)
        #expect(updates.map(\.source) == [.fetch])
        #expect(updates.first?.value == MenuItem.sample(3))
        #expect(updates.first?.storageError == nil)
        #expect(fetches.count == 1)
        #expect(try fixture.reopen().value(forKey: "menu", as: [MenuItem].self)?.value == MenuItem.sample(3))
    }

    @Test("fresh: the cached value is yielded and no fetch runs; .always fetches anyway")
    func fresh() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(["cached"], forKey: "list")
        fixture.clock.advance(by: 10)
        let fetches = Counter()
        let fetch: @Sendable () async throws -> [String] = { fetches.increment(); return ["fresh"] }
        let (updates, error) = await collect(fixture.cache.values(forKey: "list", fetch: fetch))
        #expect(error == nil)
        #expect(updates.map(\.value) == [["cached"]])
        #expect(updates.first?.source == .cache)
        #expect(updates.first?.age == 10)
        #expect(updates.first?.isStale == false)
        #expect(fetches.count == 0)

        let forced = await collect(fixture.cache.values(forKey: "list", policy: .always, fetch: fetch))
        #expect(forced.updates.map(\.value) == [["cached"], ["fresh"]])
        #expect(fetches.count == 1)
    }

    @Test("stale: cached first (marked stale), then the fresh value, which replaces it")
    func stale() async throws {
        let fixture = try Fixture { $0.stalenessThreshold = 60 }
        defer { fixture.cleanUp() }
        try fixture.cache.set(["old"], forKey: "list")
        fixture.clock.advance(by: 61)
        let (updates, error) = await collect(fixture.cache.values(forKey: "list", as: [String].self) { ["new"] })
        #expect(error == nil)
        #expect(updates.map(\.source) == [.cache, .fetch])
        #expect(updates.map(\.value) == [["old"], ["new"]])
        #expect(updates.first?.isStale == true)
        #expect(updates.last?.isStale == false)
        let stored = fixture.cache.value(forKey: "list", as: [String].self)
        #expect(stored?.value == ["new"])
        #expect(stored?.savedAt == fixture.clock.current)
    }

    @Test("a failed refresh keeps the cached value and reports the error once")
    func failedRefresh() async throws {
        struct Offline: Error {}
        let fixture = try Fixture { $0.stalenessThreshold = 60 }
        defer { fixture.cleanUp() }
        try fixture.cache.set(["kept"], forKey: "list")
        fixture.clock.advance(by: 120)
        let (updates, error) = await collect(fixture.cache.values(forKey: "list", as: [String].self) {
            throw Offline()
        })
        #expect(updates.map(\.value) == [["kept"]])
        guard let error = error as? ModelCacheError, error.code == .refreshFailed, let key = error.key,
              let underlying = error.underlying else {
            Issue.record("expected refreshFailed, got \(String(describing: error))")
            return
        }
        #expect(key == "list")
        #expect(underlying is Offline)
        #expect(fixture.cache.value(forKey: "list", as: [String].self)?.value == ["kept"])
        #expect(try fixture.reopen().value(forKey: "list", as: [String].self)?.value == ["kept"])
        #expect(await eventually { fixture.events.refreshFailures == 1 })
        #expect(fixture.events.refreshFailures == 1)
    }

    @Test("a fetched value that cannot be stored is still delivered, with storageError set")
    func unstorableFetchedValue() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let update = try await fixture.cache.refresh(forKey: "x", as: Unencodable.self) { Unencodable() }
        #expect(update.source == .fetch)
        guard update.storageError?.code == .encodingFailed else {
            Issue.record("expected encodingFailed, got \(String(describing: update.storageError))")
            return
        }
        #expect(await eventually { fixture.events.all.contains { $0.kind == .storeFailed } })
        #expect(fixture.cache.value(forKey: "x", as: Unencodable.self) == nil)
    }

    @Test("concurrent refreshes of one key run one fetch; every caller gets the value", arguments: [2, 8, 32])
    func coalescing(callers: Int) async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        let gate = AsyncGate()
        let fetches = Counter()
        let fetch: @Sendable () async throws -> [MenuItem] = {
            fetches.increment()
            await gate.wait()
            return MenuItem.sample(10)
        }
        try await withThrowingTaskGroup(of: [ModelUpdate<[MenuItem]>].self) { group in
            for _ in 0..<callers {
                group.addTask {
                    var updates: [ModelUpdate<[MenuItem]>] = []
                    for try await update in cache.values(forKey: "menu", as: [MenuItem].self, fetch: fetch) {
                        updates.append(update)
                    }
                    return updates
                }
            }
            let joined = await eventually { cache.refreshes.callers(forKey: "menu") == callers }
            #expect(joined)
            gate.open()
            var results = 0
            for try await updates in group {
                #expect(updates.map(\.source) == [.fetch])
                #expect(updates.first?.value == MenuItem.sample(10))
                results += 1
            }
            #expect(results == callers)
        }
        #expect(fetches.count == 1)
        #expect(cache.statistics.fetches == 1)
        #expect(cache.statistics.writes == 1)
        #expect(cache.refreshes.inFlightCount == 0)
        // After the coalesced run finished, a new refresh fetches again.
        _ = try await cache.refresh(forKey: "menu", as: [MenuItem].self, fetch: fetch)
        #expect(fetches.count == 2)
    }

    @Test("a coalesced failure reaches every caller and is reported once")
    func coalescedFailure() async throws {
        struct ServerDown: Error {}
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let cache = fixture.cache
        let gate = AsyncGate()
        let fetches = Counter()
        let callers = 5
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group -> Int in
            for _ in 0..<callers {
                group.addTask {
                    do {
                        _ = try await cache.refresh(forKey: "k", as: Int.self) {
                            fetches.increment()
                            await gate.wait()
                            throw ServerDown()
                        }
                        return false
                    } catch {
                        if let error = error as? ModelCacheError, error.code == .refreshFailed { return error.underlying is ServerDown }
                        return false
                    }
                }
            }
            #expect(await eventually { cache.refreshes.callers(forKey: "k") == callers })
            gate.open()
            var count = 0
            for try await failed in group where failed { count += 1 }
            return count
        }
        #expect(failures == callers)
        #expect(fetches.count == 1)
        #expect(await eventually { fixture.events.refreshFailures == 1 })
        #expect(fixture.events.refreshFailures == 1)
    }

    @Test("different keys refresh independently")
    func differentKeys() async throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let fetches = Counter()
        async let first = fixture.cache.refresh(forKey: "a", as: String.self) { fetches.increment(); return "A" }
        async let second = fixture.cache.refresh(forKey: "b", as: String.self) { fetches.increment(); return "B" }
        let values = try await [first.value, second.value]
        #expect(values == ["A", "B"])
        #expect(fetches.count == 2)
    }
}
