import CacheStore
import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// `-o FILE` is never truncated before a body is available: the file is opened (and truncated) only once the
/// first bytes are in hand, so a body that cannot be read leaves FILE as it was.
@Suite struct OutputFileTests {
    func temporaryFile(_ contents: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-out-\(UUID().uuidString)")
        try Data(contents.utf8).write(to: url)
        return url
    }

    @Test func anUnreadableBodyLeavesTheOutputFileAsItWas() throws {
        let output = try temporaryFile("previous contents")
        defer { try? FileManager.default.removeItem(at: output) }
        let sink = try BodySink(file: output)
        let vanished = FileManager.default.temporaryDirectory.appendingPathComponent("vanished-\(UUID().uuidString)")
        #expect(throws: CommandFailure.self) { try sink.copy(from: vanished) }
        sink.close()
        #expect(try Data(contentsOf: output) == Data("previous contents".utf8))
    }

    @Test func aBodyReplacesTheFileAndAnEmptyBodyEmptiesIt() throws {
        let output = try temporaryFile("previous contents that are longer")
        defer { try? FileManager.default.removeItem(at: output) }
        let sink = try BodySink(file: output)
        try sink.write(Data("new".utf8))
        try sink.finish()
        sink.close()
        #expect(try Data(contentsOf: output) == Data("new".utf8))
        let empty = try BodySink(file: output)
        try empty.finish()
        empty.close()
        #expect(try Data(contentsOf: output).isEmpty)
        let devNull = try BodySink(file: URL(fileURLWithPath: "/dev/null"))
        try devNull.write(Data("discarded".utf8))
        devNull.close()
    }

    @Test func aStoredBodyHeldOpenIsCopiedAfterAPurge() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CacheStore(directory: directory)
        let body = Data(repeating: 0x5A, count: 300_000) + Data(repeating: 0xA5, count: 300_000)
        try store.store(body, metadata: Data(), for: StoreKey(primary: "big"))
        let opened = try #require(store.openVerifiedBody(for: StoreKey(primary: "big")))
        try store.removeAll()
        store.close()
        let output = try temporaryFile("old")
        defer { try? FileManager.default.removeItem(at: output) }
        let sink = try BodySink(file: output)
        try sink.copy(from: opened)
        sink.close()
        #expect(try Data(contentsOf: output) == body)
    }

    /// `-o -` writes to stdout (no file named "-"); `-o ""` is a usage error naming the option.
    @Test func dashOutputIsStdoutAndAnEmptyNameIsAUsageError() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], body: "hello")
        let url = origin.url("/t").absoluteString
        let run = await cli.run(["get", "-o", "-", url])
        #expect(run.code == 0)
        #expect(run.out == "hello")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("-").path))
        let empty = await cli.run(["get", "-o", "", url])
        #expect(empty.code == 64)
        #expect(empty.err == "Error: invalid value '' for '--output': expected a file name, or '-' for stdout (see 'dlcache get --help')\n")
    }
}
