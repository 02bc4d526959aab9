import CacheSystem
import Foundation
import Testing

/// `cs_copy_range` copies a byte range of a file to a regular file, a pipe, or a file opened for appending (each
/// by the kernel's own copy where it has one, else by reading and writing), from the output's position on.
@Suite struct CopyRangeTests {
    /// A file holding `data`, opened for reading; the caller closes it.
    static func source(_ dir: TemporaryDirectory, _ data: Data) throws -> Int32 {
        let url = dir.url.appendingPathComponent("source")
        try data.write(to: url)
        let fd = cs_open_file(url.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        #expect(fd >= 0)
        return fd
    }

    @Test func aRangeLandsInARegularFileAtItsPosition() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let data = bytes(3 << 20, seed: 2)
        let input = try Self.source(dir, data)
        defer { _ = cs_close(input) }
        let url = dir.url.appendingPathComponent("out")
        let output = cs_open_output(url.path, 0o600)
        #expect(output >= 0)
        #expect(cs_write_all(output, "head", 4) == 0)
        #expect(cs_copy_range(input, 1_000, output, 2 << 20) == 2 << 20)
        #expect(cs_copy_range(input, (2 << 20) + 1_000, output, 10) == 10)
        _ = cs_close(output)
        let copied = try Data(contentsOf: url)
        #expect(copied == Data("head".utf8) + data[1_000..<((2 << 20) + 1_010)])
    }

    @Test func theCopyStopsAtTheSourcesEnd() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let data = bytes(5_000, seed: 4)
        let input = try Self.source(dir, data)
        defer { _ = cs_close(input) }
        let url = dir.url.appendingPathComponent("out")
        let output = cs_open_output(url.path, 0o600)
        #expect(cs_copy_range(input, 4_000, output, 10_000) == 1_000)
        #expect(cs_copy_range(input, 5_000, output, 10) == 0)
        _ = cs_close(output)
        #expect(try Data(contentsOf: url) == data.suffix(1_000))
    }

    @Test func aRangeGoesThroughAPipe() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let data = bytes(40_000, seed: 6)   // less than a pipe's buffer: no reader thread needed
        let input = try Self.source(dir, data)
        defer { _ = cs_close(input) }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { _ = cs_close(ends[0]) }
        #expect(cs_copy_range(input, 100, ends[1], 30_000) == 30_000)
        _ = cs_close(ends[1])
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = buffer.withUnsafeMutableBytes { cs_read(ends[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received.append(contentsOf: buffer[0..<Int(n)])
        }
        #expect(received == data[100..<30_100])
    }

    @Test func aFileOpenedForAppendingGetsTheRangeAtItsEnd() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let data = bytes(70_000, seed: 8)
        let input = try Self.source(dir, data)
        defer { _ = cs_close(input) }
        let url = dir.url.appendingPathComponent("log")
        try Data("start".utf8).write(to: url)
        let output = open(url.path, O_WRONLY | O_APPEND)
        #expect(output >= 0)
        #expect(cs_copy_range(input, 0, output, 70_000) == 70_000)
        _ = cs_close(output)
        #expect(try Data(contentsOf: url) == Data("start".utf8) + data)
    }
}
