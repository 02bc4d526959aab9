import Foundation
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
    @Test func driverStopsReadingWhileItsOutputIsBlocked() async throws {
        let binary = try #require(DriverProcess.binaryURL)
        // A driver that exits early must fail the test, not kill it with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-bp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["driver", "--cache-dir", directory.path, "--max-in-flight", "4"]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // Each request is answered locally (only-if-cached with nothing stored: a 504, no origin) and its long id
        // makes each answer about 1 KB, so a few dozen unread answers fill the output pipe.
        let total = 3_000
        let pad = String(repeating: "p", count: 1_000)
        var input: [UInt8] = []
        for n in 0..<total {
            input += Array(#"{"id":"\#(n)-\#(pad)","url":"http://127.0.0.1:9/x","headers":[["Cache-Control","only-if-cached"]]}"#.utf8)
            input.append(0x0A)
        }
        let fd = stdin.fileHandleForWriting.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var offset = 0
        var blocked = false
        // Write without blocking until the pipe stays full for 2 s (bounded: at most the whole input).
        while offset < input.count {
            let n = input.withUnsafeBytes { raw in write(fd, raw.baseAddress! + offset, raw.count - offset) }
            if n > 0 { offset += n; continue }
            guard n < 0, errno == EAGAIN || errno == EINTR else { break }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&poller, 1, 2_000) == 0 {
                blocked = true
                break
            }
        }
        let acceptedLines = input[0..<offset].filter { $0 == 0x0A }.count
        #expect(blocked, "the driver read all \(total) lines although nobody read its answers")
        // Unread answers (pipe) + lines in flight + one read chunk + the input pipe: a few hundred lines at most.
        #expect(acceptedLines < 1_000, "\(acceptedLines) lines accepted while the output was blocked")

        // Now read every answer; the rest of the input goes through and the driver exits 0.
        let reader = Task.detached { stdout.fileHandleForReading.readDataToEndOfFile() }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let rest = input[offset...]
        stdin.fileHandleForWriting.write(Data(rest))
        try stdin.fileHandleForWriting.close()
        let output = await reader.value
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = output.split(separator: 0x0A)
        #expect(lines.count == total)
        var ids = Set<String>()
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["status"] as? Int == 504)
            if let id = object["id"] as? String { ids.insert(id) }
        }
        #expect(ids.count == total)
    }
}
