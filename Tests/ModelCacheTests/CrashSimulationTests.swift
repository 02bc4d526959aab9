import CacheStore
import Foundation
import Testing
@testable import ModelCache

/// A real SIGKILL needs a child process; the hidden child mode of dlcache-bench belongs to the store. Here the
/// "killed process" is simulated: a cache that is never closed while a second one opens the same directory
/// (what the next launch sees after a kill), and leftovers of an interrupted write in the store's tmp/.
@Suite("ModelCache: a process dying between writes")
struct CrashSimulationTests {
    @Test("every acknowledged write is visible to a second cache opened while the first is still open")
    func secondInstanceSeesAcknowledgedWrites() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        var acknowledged: [String: [MenuItem]] = [:]
        for index in 0..<25 {
            let value = MenuItem.sample(index % 5 + 1)
            try fixture.cache.set(value, forKey: "k\(index)")
            acknowledged["k\(index)"] = value
        }
        // "Killed" here: the first cache is never closed or flushed.
        let nextLaunch = try fixture.reopen()
        for (key, value) in acknowledged {
            #expect(nextLaunch.value(forKey: key, as: [MenuItem].self)?.value == value)
        }
        // Both keep working side by side; a value written by one is read by the other from disk.
        try nextLaunch.set(["from second"], forKey: "new")
        #expect(fixture.cache.value(forKey: "new", as: [String].self)?.value == ["from second"])
    }

    @Test("leftovers of an interrupted write (a tmp file, a half-written blob) don't break the next launch")
    func leftoversOfInterruptedWrite() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.cache.set(MenuItem.sample(20), forKey: "menu")
        try fixture.cache.set("before", forKey: "note")
        let namespaceDirectory = fixture.directory.appendingPathComponent(fixture.cache.namespace, isDirectory: true)
        let tmp = namespaceDirectory.appendingPathComponent("tmp", isDirectory: true)
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        try Data(#"[{"id":1,"na"#.utf8).write(to: tmp.appendingPathComponent(UUID().uuidString))
        let blobs = namespaceDirectory.appendingPathComponent("blobs", isDirectory: true)
        try FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
        try Data(repeating: 0x5a, count: 4_096).write(to: blobs.appendingPathComponent("orphan-\(UUID().uuidString)"))

        let nextLaunch = try fixture.reopen()
        #expect(nextLaunch.value(forKey: "menu", as: [MenuItem].self)?.value == MenuItem.sample(20))
        #expect(nextLaunch.value(forKey: "note", as: String.self)?.value == "before")
        try nextLaunch.set("after", forKey: "note")
        #expect(try fixture.reopen().value(forKey: "note", as: String.self)?.value == "after")
    }

    @Test("interleaved writers on two open caches: the last acknowledged write wins on disk")
    func interleavedWriters() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let second = try fixture.reopen()
        for round in 0..<10 {
            try (round.isMultiple(of: 2) ? fixture.cache : second).set(round, forKey: "counter")
        }
        #expect(try fixture.reopen().value(forKey: "counter", as: Int.self)?.value == 9)
    }

    @Test("with validatesMemoryHits, a memory hit never hides another instance's newer write or removal")
    func validatedMemoryHits() throws {
        let fixture = try Fixture { $0.validatesMemoryHits = true }
        defer { fixture.cleanUp() }
        let other = try fixture.reopen()
        try fixture.cache.set("v1", forKey: "k")
        #expect(fixture.cache.value(forKey: "k", as: String.self)?.value == "v1")
        #expect(fixture.cache.statistics.memoryHits == 1)

        try other.set("v2", forKey: "k")
        #expect(fixture.cache.value(forKey: "k", as: String.self)?.value == "v2")
        #expect(fixture.cache.statistics.diskHits == 1)
        #expect(fixture.cache.value(forKey: "k", as: String.self)?.value == "v2")
        #expect(fixture.cache.statistics.memoryHits == 2)   // re-cached after the disk read

        try other.removeValue(forKey: "k")
        #expect(fixture.cache.value(forKey: "k", as: String.self) == nil)
    }
}
