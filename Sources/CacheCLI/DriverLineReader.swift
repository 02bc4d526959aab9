import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines: `\n` ends a line, a `\r` before it is dropped, and a last line without
/// `\n` is still a line. Bytes that are not valid UTF-8 become U+FFFD.
struct DriverLineSplitter: Sendable {
    private var pending = Data()

    /// Appends `chunk` and returns every line it completes, in order.
    ///
    /// Only the new bytes are searched for `\n`, so a long line arriving in many chunks costs linear time.
    mutating func feed(_ chunk: Data) -> [String] {
        var lines: [String] = []
        var start = pending.startIndex
        var search = pending.endIndex
        pending.append(chunk)
        while let newline = pending[search...].firstIndex(of: 0x0A) {
            lines.append(Self.text(pending[start..<newline]))
            start = pending.index(after: newline)
            search = start
        }
        if start != pending.startIndex { pending = Data(pending[start...]) }
        return lines
    }

    /// The unterminated last line at end of input, or `nil` when nothing is pending.
    mutating func finish() -> String? {
        defer { pending = Data() }
        return pending.isEmpty ? nil : Self.text(pending[...])
    }

    private static func text(_ bytes: Data) -> String {
        var slice = bytes
        if slice.last == 0x0D { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}

/// Reads lines from a file descriptor (the driver's standard input) as they arrive.
///
/// A dedicated thread blocks in `read(2)`, so no Swift concurrency thread ever waits on the pipe; each complete
/// line is yielded at once, and the stream finishes at end of file (or on a read error other than `EINTR`).
enum DriverLineReader {
    /// The lines of `fd` until end of file; `chunkSize` is the read buffer in bytes (default 64 KiB).
    static func lines(fd: Int32, chunkSize: Int = 65_536) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let size = max(1, chunkSize)
        let thread = Thread {
            var splitter = DriverLineSplitter()
            var buffer = [UInt8](repeating: 0, count: size)
            while true {
                let n = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress, size) }
                if n > 0 {
                    for line in splitter.feed(Data(buffer[0..<n])) { continuation.yield(line) }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            if let last = splitter.finish() { continuation.yield(last) }
            continuation.finish()
        }
        thread.name = "dlcache-driver-stdin"
        thread.start()
        return stream
    }
}
