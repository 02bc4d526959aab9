import Foundation
import Testing
@testable import CacheStore

/// `<namespace>/generation` is mapped into every process using the namespace; anyone with write access to the
/// directory can truncate, grow or rewrite it. Any size or content must be survivable: truncation under a live
/// mapping (which raises SIGBUS on the next access) is caught by the system layer's guard and the memory tier is
/// bypassed from then on, so no stale body is served.
@Suite(.serialized) struct GenerationFileTamperingTests {
    @Test func truncatingTheGenerationWhileMappedNeitherCrashesNorServesStaleBodies() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = LogSink()
        let reader = try CacheStore(configuration: testConfiguration(dir, log: log))
        defer { reader.close() }
        let writer = try CacheStore(configuration: testConfiguration(dir))
        defer { writer.close() }
        let key = StoreKey(primary: "k")
        try writer.store(bytes(100, seed: 1), metadata: Data(), for: key)
        #expect(reader.entry(for: key)?.body == bytes(100, seed: 1))
        #expect(reader.entry(for: key)?.body == bytes(100, seed: 1))  // a memory-tier hit

        let path = dir.url.appendingPathComponent("default/generation").path
        #expect(truncate(path, 0) == 0)
        // The next hit reads the counter through the mapping: without the guard this is SIGBUS (exit 135).
        #expect(reader.entry(for: key)?.body == bytes(100, seed: 1))
        #expect(reader.generation.isLost)
        #expect(log.lines.contains { $0.contains("truncated while mapped") })

        // The counter no longer carries other processes' writes: the reader must not serve from memory.
        try writer.store(bytes(100, seed: 2), metadata: Data(), for: key)
        #expect(reader.entry(for: key)?.body == bytes(100, seed: 2))
        try reader.store(bytes(100, seed: 3), metadata: Data(), for: key)
        #expect(reader.entry(for: key)?.body == bytes(100, seed: 3))
        // A new opener grows the file back and works normally.
        let later = try CacheStore(configuration: testConfiguration(dir))
        defer { later.close() }
        #expect(later.generation.isShared && !later.generation.isLost)
        #expect(later.entry(for: key)?.body == bytes(100, seed: 3))
    }

    @Test(arguments: [0, 3, 7, 8, 4096, 1 << 30])
    func aGenerationFileOfAnySizeOrContentOpens(size: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "k"))
            store.close()
        }
        let url = dir.url.appendingPathComponent("default/generation")
        try Data(repeating: 0xFF, count: min(size, 4096)).write(to: url)
        #expect(truncate(url.path, off_t(size)) == 0)
        for readOnly in [false, true] {
            var config = testConfiguration(dir)
            config.readOnly = readOnly
            let store = try CacheStore(configuration: config)
            #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(100))
            #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(100))
            if !readOnly { try store.store(bytes(100, seed: 2), metadata: Data(), for: StoreKey(primary: "k2")) }
            store.close()
        }
    }

    @Test func aGenerationThatIsADirectoryLeavesTheStoreWorking() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url.appendingPathComponent("default/generation"),
                                                withIntermediateDirectories: true)
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "k"))
        #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(100))
        #expect(!store.generation.isShared)
    }
}
