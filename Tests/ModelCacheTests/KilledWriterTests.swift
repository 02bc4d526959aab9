import CacheTestSupport
import Foundation
import Testing
@testable import ModelCache
#if canImport(Glibc)
import Glibc
#endif

/// A real "process killed between writes": the test re-runs its own test binary with a filter that selects
/// only `childWriterProcess`, which writes values in a loop and prints "ACK <index>" after each `set`
/// returns; the parent SIGKILLs it mid-loop, reopens the directory and checks every acknowledged value.
/// Linux only (where `swift test` runs the `.xctest` executable itself); skipped elsewhere.
enum KilledWriter {
    static let directoryVariable = "MODELCACHE_KILLED_WRITER_DIR"
    static let roundVariable = "MODELCACHE_KILLED_WRITER_ROUND"

    static var isChild: Bool { ProcessInfo.processInfo.environment[directoryVariable] != nil }

    /// The test executable, when it can be re-run (Linux: /proc/self/exe is the `.xctest` binary).
    static var testExecutable: URL? {
        #if os(Linux)
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
              path.hasSuffix(".xctest") else { return nil }
        return URL(fileURLWithPath: path)
        #else
        return nil
        #endif
    }

    static func key(round: Int, index: Int) -> String { "r\(round)-k\(index)" }

    static func value(round: Int, index: Int) -> [MenuItem] {
        (0..<(index % 9 + 1)).map {
            MenuItem(id: $0, name: "round \(round) write \(index) item \($0)", price: Double(index), tags: ["t"])
        }
    }
}

@Suite("ModelCache: a writer process killed with SIGKILL")
struct KilledWriterTests {
    /// Runs only inside the child process started by `killedWriter()`.
    @Test("child writer process (runs only as the child of the SIGKILL test)", .enabled(if: KilledWriter.isChild))
    func childWriterProcess() throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = URL(fileURLWithPath: environment[KilledWriter.directoryVariable] ?? "/nonexistent")
        let round = Int(environment[KilledWriter.roundVariable] ?? "") ?? 0
        let cache = try ModelCache(directory: directory)
        for index in 0..<100_000 {   // bounded; the parent kills it long before
            try cache.set(KilledWriter.value(round: round, index: index), forKey: KilledWriter.key(round: round, index: index))
            FileHandle.standardOutput.write(Data("ACK \(index)\n".utf8))
        }
    }

    @Test("every write acknowledged before a SIGKILL reads back exactly; the one in flight is absent or exact",
          .enabled(if: !KilledWriter.isChild && KilledWriter.testExecutable != nil))
    func killedWriter() throws {
        let executable = try #require(KilledWriter.testExecutable)
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for round in 0..<6 {
            let highest = try runAndKill(executable, directory: directory, round: round, after: 3 + round * 9)
            try #require(highest >= 3 + round * 9, "the child stopped after \(highest + 1) writes in round \(round)")
            let cache = try ModelCache(directory: directory)
            for index in 0...highest {
                #expect(cache.value(forKey: KilledWriter.key(round: round, index: index), as: [MenuItem].self)?.value
                        == KilledWriter.value(round: round, index: index), "round \(round), write \(index)")
            }
            // Writes after the last ACK read (in the pipe or in flight at the kill): absent or exact.
            for index in (highest + 1)...(highest + 4) {
                switch cache.lookup(KilledWriter.key(round: round, index: index), as: [MenuItem].self) {
                case .miss: break
                case .hit(let model): #expect(model.value == KilledWriter.value(round: round, index: index))
                case .discarded(let reason): Issue.record("round \(round), write \(index) dropped: \(reason)")
                }
            }
            // Earlier rounds survive later kills.
            if round > 0 {
                #expect(cache.value(forKey: KilledWriter.key(round: round - 1, index: 0), as: [MenuItem].self)?.value
                        == KilledWriter.value(round: round - 1, index: 0))
            }
        }
    }

    /// Starts the child, reads ACK lines until `after` arrived, SIGKILLs it; returns the highest ACK read
    /// (-1 if none). A watchdog kills the child after 60 seconds whatever happens.
    private func runAndKill(_ executable: URL, directory: URL, round: Int, after: Int) throws -> Int {
        let child = try ChildProcess(
            [executable.path, "--testing-library", "swift-testing", "--filter", "childWriterProcess"],
            environment: ChildProcess.environment(adding: [KilledWriter.directoryVariable: directory.path,
                                                           KilledWriter.roundVariable: String(round)]))
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { child.send(signal: SIGKILL) }
        let output = child.stdout ?? FileHandle.nullDevice
        var highest = -1
        var pending = ""
        reading: while true {
            let chunk = output.availableData
            if chunk.isEmpty { break }   // EOF: the child ended (or the watchdog killed it)
            pending += String(decoding: chunk, as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = pending[..<newline]
                pending = String(pending[pending.index(after: newline)...])
                if line.hasPrefix("ACK "), let index = Int(line.dropFirst(4)) { highest = max(highest, index) }
                if highest >= after { break reading }
            }
        }
        child.killAndReap()
        return highest
    }
}
