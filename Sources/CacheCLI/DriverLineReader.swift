import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines: `\n` ends a line, a `\r` before it is dropped, and a last line without
/// `\n` is still a line. Lines are handed out as bytes; ``feed(_:)`` and ``finish()`` decode them as text
/// (bytes that are not valid UTF-8 become U+FFFD).
struct DriverLineSplitter: Sendable {
    /// The longest line kept, in bytes (64 MiB); a longer one is not held: its bytes are dropped as they arrive
    /// and it is handed out as ``oversizedLine``.
    static let maxLineBytes = 64 << 20
    /// What a line over ``maxLineBytes`` is handed out as (a NUL starts no JSON text): the session answers it with
    /// an error line.
    static let oversizedLine: [UInt8] = [0x00] + Array("oversized".utf8)

    private var pending: [UInt8] = []
    /// Set while the bytes of a line over the limit are being dropped, up to its `\n`.
    private var discarding = false
    private let limit: Int

    /// A splitter that keeps lines of up to `limit` bytes.
    init(limit: Int = maxLineBytes) {
        self.limit = max(1, limit)
    }

    /// Appends `chunk` and calls `line` with every line it completes, in order.
    ///
    /// Only the new bytes are searched for `\n` (memchr), so a long line arriving in many chunks costs linear
    /// time; a line held whole in `chunk` is handed out without being copied into the pending buffer.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, line: ([UInt8]) -> Void) {
        guard let base = chunk.baseAddress else { return }
        var start = 0
        while start < chunk.count, let found = memchr(base + start, 0x0A, chunk.count - start) {
            let newline = base.distance(to: UnsafeRawPointer(found))
            let piece = UnsafeRawBufferPointer(start: base + start, count: newline - start)
            if discarding || pending.count + piece.count > limit {
                discarding = false
                pending = []
                line(Self.oversizedLine)
            } else if pending.isEmpty {
                line(Self.trimmed(Array(piece)))
            } else {
                pending.append(contentsOf: piece)
                line(Self.trimmed(pending))
                pending.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        guard start < chunk.count, !discarding else { return }
        if pending.count + (chunk.count - start) > limit {
            discarding = true
            pending = []
        } else {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: chunk.count - start))
        }
    }

    /// The unterminated last line at end of input as bytes, or `nil` when nothing is pending.
    mutating func finishBytes() -> [UInt8]? {
        defer {
            pending = []
            discarding = false
        }
        if discarding { return Self.oversizedLine }
        return pending.isEmpty ? nil : Self.trimmed(pending)
    }

    /// Appends `chunk` and returns every line it completes, in order, as text.
    mutating func feed(_ chunk: Data) -> [String] {
        var lines: [String] = []
        chunk.withUnsafeBytes { raw in feed(raw) { lines.append(String(decoding: $0, as: UTF8.self)) } }
        return lines
    }

    /// The unterminated last line at end of input as text, or `nil` when nothing is pending.
    mutating func finish() -> String? {
        finishBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    private static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        bytes.last == 0x0D ? Array(bytes.dropLast()) : bytes
    }
}

/// A counting limit on request lines in flight: the reader takes a slot before handing out a line, the session
/// gives it back once the line's answer is written. While every slot is taken the reader does not read, so a
/// caller that stops reading answers stops the driver from reading requests (back-pressure).
final class DriverInFlightLimit: Sendable {
    /// The number of slots.
    let slots: Int
    private let semaphore: DispatchSemaphore

    /// Creates a limit of `slots` lines (at least 1).
    init(slots: Int) {
        self.slots = max(1, slots)
        // Made at 0 and raised to `slots`: libdispatch traps when a semaphore is freed below the value it was
        // made with, and a session that stops early (its output failed) never gets back the slots of the lines
        // the reader had already handed out.
        semaphore = DispatchSemaphore(value: 0)
        for _ in 0..<self.slots { semaphore.signal() }
    }

    /// Takes a slot, blocking the calling thread while none is free (only the reader thread calls this).
    func acquire() { semaphore.wait() }

    /// Gives a slot back.
    func release() { semaphore.signal() }
}

/// Reads lines from a file descriptor (the driver's standard input) as they arrive.
///
/// A dedicated thread blocks in `read(2)`, so no Swift concurrency thread ever waits on the pipe; each complete
/// line is yielded at once (after taking a slot of `limit`, when given), and the stream finishes at end of file
/// (or on a read error other than `EINTR`).
enum DriverLineReader {
    /// The lines of `fd` as bytes until end of file; `chunkSize` is the read buffer in bytes (default 64 KiB).
    static func lines(fd: Int32, chunkSize: Int = 65_536, limit: DriverInFlightLimit? = nil) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let size = max(1, chunkSize)
        let thread = Thread {
            var splitter = DriverLineSplitter()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            defer { buffer.deallocate() }
            let hand: ([UInt8]) -> Void = { line in
                limit?.acquire()
                continuation.yield(line)
            }
            while true {
                let n = read(fd, buffer.baseAddress, size)
                if n > 0 {
                    splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), line: hand)
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            if let last = splitter.finishBytes() { hand(last) }
            continuation.finish()
        }
        thread.name = "dlcache-driver-stdin"
        thread.start()
        return stream
    }
}
