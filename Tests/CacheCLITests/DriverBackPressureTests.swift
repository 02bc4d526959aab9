import CacheTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Back-pressure through the real binary: while nobody reads the driver's answers, it stops reading requests
/// (at most `--max-in-flight` lines are in flight, an answer counts until written), so its input pipe fills and
/// the writer blocks; once the answers are read, every request is answered.
@Suite(.serialized, .enabled(if: DriverProcess.binaryURL != nil, "dlcache binary not built next to the tests"))
struct DriverBackPressureTests {
    /// What one session showed; measured on a thread of its own (it blocks in poll(2), write(2) and waitpid,
    /// which must not hold a thread of the cooperative pool other tests need), checked by the test.
    struct Outcome: Sendable {
        var total = 0
        var blocked = false
        var acceptedLines = 0
        var exitStatus: Int32 = -1
        var answers = 0
        var statuses: Set<Int> = []
        var distinctIDs = 0
    }

    @Test func driverStopsReadingWhileItsOutputIsBlocked() async throws {
        let binary = try #require(DriverProcess.binaryURL)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Outcome, any Error>, Never>) in
            Thread { continuation.resume(returning: Result { try Self.session(binary) }) }.start()
        }
        let outcome = try result.get()
        #expect(outcome.blocked, "the driver read all \(outcome.total) lines although nobody read its answers")
        // Unread answers (pipe) + lines in flight + one read chunk + the input pipe: a few hundred lines at most.
        #expect(outcome.acceptedLines < 1_000, "\(outcome.acceptedLines) lines accepted while the output was blocked")
        #expect(outcome.exitStatus == 0)
        #expect(outcome.answers == outcome.total)
        #expect(outcome.statuses == [504])
        #expect(outcome.distinctIDs == outcome.total)
    }

    static func session(_ binary: URL) throws -> Outcome {
        var outcome = Outcome()
        // A driver that exits early must fail the test, not kill it with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-bp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try ChildProcess([binary.path, "driver", "--cache-dir", directory.path, "--max-in-flight", "4"])
        defer { child.killAndReap() }

        // Each request is answered locally (only-if-cached with nothing stored: a 504, no origin) and its long id
        // makes each answer about 1 KB, so a few dozen unread answers fill the output pipe.
        let total = 3_000
        let pad = String(repeating: "p", count: 1_000)
        var input: [UInt8] = []
        for n in 0..<total {
            input += Array(#"{"id":"\#(n)-\#(pad)","url":"http://127.0.0.1:9/x","headers":[["Cache-Control","only-if-cached"]]}"#.utf8)
            input.append(0x0A)
        }
        // Write without blocking until the pipe stays full for 2 s (bounded: at most the whole input).
        let offset = child.writeToStdin(Data(input), stoppingAfterStall: .seconds(2))
        outcome.total = total
        outcome.blocked = offset < input.count
        outcome.acceptedLines = input[0..<offset].filter { $0 == 0x0A }.count

        // Now read every answer; the rest of the input goes through and the driver exits 0.
        let collected = Mutex(Data())
        let readerDone = DispatchSemaphore(value: 0)
        let stdout = child.stdout ?? FileHandle.nullDevice
        Thread {
            let data = stdout.readDataToEndOfFile()
            collected.withLock { $0 = data }
            readerDone.signal()
        }.start()
        child.writeToStdin(Data(input[offset...]))
        child.closeStdin()
        readerDone.wait()
        let output = collected.withLock { $0 }
        outcome.exitStatus = child.waitUntilExit().status
        let lines = output.split(separator: 0x0A)
        outcome.answers = lines.count
        var ids = Set<String>()
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            outcome.statuses.insert(object?["status"] as? Int ?? -1)
            if let id = object?["id"] as? String { ids.insert(id) }
        }
        outcome.distinctIDs = ids.count
        return outcome
    }
}
