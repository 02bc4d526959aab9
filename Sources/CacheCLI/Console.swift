import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tool's terminal: where standard output and standard error go, whether they are terminals, and stdin.
///
/// Every byte the tool prints goes through a `Console`, so tests run the tool in process and compare output
/// (see ``CapturedConsole``).
package struct Console: Sendable {
    /// Writes bytes to standard output.
    package var writeOut: @Sendable (Data) -> Void
    /// Writes bytes to standard error.
    package var writeErr: @Sendable (Data) -> Void
    /// Whether standard output is a terminal (then a body is still printed; JSON is unchanged).
    package var stdoutIsTerminal: Bool
    /// Whether standard error is a terminal (a live progress bar is drawn only then).
    package var stderrIsTerminal: Bool
    /// Reads all of standard input (used by `prefetch -`).
    package var readStdin: @Sendable () -> Data
    /// Writes a response body to standard output: 0, or the `errno` of a failed write (`ENOSPC`, `EPIPE` when
    /// the reader went away), so `get` can stop and exit 23 as curl does.
    package var writeBody: @Sendable (Data) -> Int32
    /// The `errno` of the first write to standard output that failed (through ``writeOut`` or ``writeBody``), or
    /// 0 while none has: a command whose output was lost (`EPIPE`, `ENOSPC`) exits 23, as curl does.
    package var stdoutFailure: @Sendable () -> Int32

    /// Creates a console from its sinks and terminal flags.
    package init(writeOut: @escaping @Sendable (Data) -> Void, writeErr: @escaping @Sendable (Data) -> Void,
                stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false,
                readStdin: @escaping @Sendable () -> Data = { Data() },
                writeBody: (@Sendable (Data) -> Int32)? = nil,
                stdoutFailure: @escaping @Sendable () -> Int32 = { 0 }) {
        self.writeBody = writeBody ?? { data in writeOut(data); return 0 }
        self.stdoutFailure = stdoutFailure
        self.writeOut = writeOut
        self.writeErr = writeErr
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.readStdin = readStdin
    }

    /// The process's real standard output, standard error and standard input (file descriptors 1, 2, 0).
    /// Once a write to standard output has failed, later ones are not attempted (they would fail the same way).
    package static var standard: Console {
        Console(
            writeOut: { _ = Console.writeStandardOutput($0) },
            writeErr: { Console.writeAll($0, to: 2) },
            stdoutIsTerminal: isatty(1) == 1,
            stderrIsTerminal: isatty(2) == 1,
            readStdin: { FileHandle.standardInput.readDataToEndOfFile() },
            writeBody: { Console.writeStandardOutput($0) },
            stdoutFailure: { standardOutputFailure.load(ordering: .acquiring) }
        )
    }

    /// The `errno` of the process's first failed write to file descriptor 1, or 0.
    private static let standardOutputFailure = Atomic<Int32>(0)

    /// Writes `data` to file descriptor 1 unless an earlier write failed; returns 0 or the failure's `errno`.
    private static func writeStandardOutput(_ data: Data) -> Int32 {
        let earlier = standardOutputFailure.load(ordering: .acquiring)
        guard earlier == 0 else { return earlier }
        let failure = writeAllReporting(data, to: 1)
        if failure != 0 {
            _ = standardOutputFailure.compareExchange(expected: 0, desired: failure, ordering: .acquiringAndReleasing)
        }
        return failure
    }

    /// Prints `text` to standard output, adding a newline unless `terminator` says otherwise.
    package func out(_ text: String, terminator: String = "\n") {
        writeOut(Data((text + terminator).utf8))
    }

    /// Prints `text` to standard error, adding a newline unless `terminator` says otherwise.
    package func err(_ text: String, terminator: String = "\n") {
        writeErr(Data((text + terminator).utf8))
    }

    /// Writes every byte of `data` to file descriptor `fd`, retrying short writes; stops quietly on a failure.
    static func writeAll(_ data: Data, to fd: Int32) {
        _ = writeAllReporting(data, to: fd)
    }

    /// Writes every byte of `data` to `fd`, retrying short and interrupted writes. - Returns: 0, or the `errno`
    /// of the write that failed (the rest is not written).
    static func writeAllReporting(_ data: Data, to fd: Int32) -> Int32 {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < raw.count {
                let n = write(fd, base + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return n < 0 ? errno : EIO
                }
            }
            return 0
        }
    }
}

/// Everything the tool reads from its surroundings: the console, environment variables and the clock.
///
/// Tests build one with a ``CapturedConsole`` and their own variables (e.g. `DLCACHE_DIR`), so no test
/// depends on the machine's home directory or terminal.
package struct CommandEnvironment: Sendable {
    /// Standard output, standard error and standard input.
    package var console: Console
    /// Environment variables (`DLCACHE_DIR`, `XDG_CACHE_HOME`, `HOME`, ...).
    package var variables: [String: String]
    /// The directory relative paths (`-o FILE`, `prefetch FILE`) are resolved against.
    package var currentDirectory: URL
    /// The clock for progress rates and elapsed times, and the opened cache's clock (freshness, ages, access
    /// times): real time except in tests.
    package var now: @Sendable () -> Date

    /// Creates an environment.
    package init(console: Console, variables: [String: String],
                currentDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.console = console
        self.variables = variables
        self.currentDirectory = currentDirectory
        self.now = now
    }

    /// The running process's console, environment variables and working directory.
    package static var process: CommandEnvironment {
        CommandEnvironment(console: .standard, variables: ProcessInfo.processInfo.environment)
    }

    /// Resolves a user-supplied path (absolute, `~/...`, or relative to ``currentDirectory``) to a file URL.
    package func fileURL(for path: String) -> URL {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path) }
        if path == "~" || path.hasPrefix("~/"), let home = variables["HOME"] {
            return URL(fileURLWithPath: home + path.dropFirst())
        }
        return currentDirectory.appendingPathComponent(path)
    }
}

/// A console that records what the tool prints, for tests.
package final class CapturedConsole: Sendable {
    private let outBuffer = Mutex(Data())
    private let errBuffer = Mutex(Data())
    private let stdinData: Data
    private let terminal: Bool
    private let stdoutError: Int32
    private let stdoutFailed = Atomic<Int32>(0)

    /// Creates a capture; `stdin` is what `prefetch -` reads; `terminal` makes both outputs claim to be terminals;
    /// a nonzero `stdoutError` (an `errno`, e.g. `EPIPE`) makes every write to standard output fail with it
    /// (nothing is captured), as a closed pipe or a full disk would.
    package init(stdin: String = "", terminal: Bool = false, stdoutError: Int32 = 0) {
        self.stdinData = Data(stdin.utf8)
        self.terminal = terminal
        self.stdoutError = stdoutError
    }

    /// The console to pass in a ``CommandEnvironment``.
    package var console: Console {
        let write: @Sendable (Data) -> Int32 = { data in
            if self.stdoutError != 0 {
                _ = self.stdoutFailed.compareExchange(expected: 0, desired: self.stdoutError, ordering: .relaxed)
                return self.stdoutError
            }
            self.outBuffer.withLock { $0.append(data) }
            return 0
        }
        return Console(
            writeOut: { _ = write($0) },
            writeErr: { data in self.errBuffer.withLock { $0.append(data) } },
            stdoutIsTerminal: terminal, stderrIsTerminal: terminal,
            readStdin: { self.stdinData },
            writeBody: write,
            stdoutFailure: { self.stdoutFailed.load(ordering: .relaxed) }
        )
    }

    /// Everything written to standard output so far, as bytes.
    package var stdoutData: Data { outBuffer.withLock { $0 } }
    /// Everything written to standard output so far, decoded as UTF-8 (invalid bytes replaced).
    package var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    /// Everything written to standard error so far, decoded as UTF-8 (invalid bytes replaced).
    package var stderr: String { String(decoding: errBuffer.withLock { $0 }, as: UTF8.self) }
}
