import CacheSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with posix_spawn (``CacheSystem/cs_spawn``): standard input on a pipe, standard output
/// and error each on a pipe or /dev/null, no other descriptor of the test process inherited.
///
/// The tests use it instead of Foundation's `Process`, whose `run()` on Linux can crash the whole test process (a
/// buffer over-read while it scans /proc/self/fd) when many descriptors are open (swift-corelibs-foundation
/// #5472, not fixed in this toolchain). The child is reaped by ``wait(timeout:)`` / ``waitUntilExit()`` /
/// ``stop(grace:)``; one still running when the object goes away is killed (SIGKILL) and reaped.
public final class ChildProcess: Sendable {
    /// Where the child's standard output or standard error goes.
    public enum Output: Sendable {
        /// A pipe this process reads (``stdout`` / ``stderr``).
        case pipe
        /// /dev/null.
        case discard
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// `exit(code)` or a return from `main`.
        case exited(Int32)
        /// Killed by the signal with this number.
        case signalled(Int32)

        /// The shell's number for it: the exit code, or 128 + the signal number.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }

        /// `exit N` or `signal N`, for test messages.
        public var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// What ``run(_:environment:stdin:timeout:)`` collected.
    public struct Outcome: Sendable {
        /// How the child ended; `.signalled(SIGKILL)` when it was killed at the time bound.
        public var termination: Termination
        /// True when the child was still running at the time bound and was killed.
        public var timedOut: Bool
        /// Everything it wrote to standard output.
        public var stdout: Data
        /// Everything it wrote to standard error.
        public var stderr: Data
        /// The largest resident set size it reached, in bytes (``ChildProcess/peakResidentBytes``).
        public var peakResidentBytes: Int64?

        /// ``Termination/status``.
        public var status: Int32 { termination.status }
        /// Standard output decoded as UTF-8.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error decoded as UTF-8.
        public var errorOutput: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The child could not be started.
    public struct LaunchError: Error, Sendable, CustomStringConvertible {
        /// The program and the system's words for why (`strerror`).
        public var description: String
    }

    /// The child's process id.
    public let pid: pid_t
    /// The read end of the child's standard output when it is ``Output/pipe``; closed when this object goes away.
    public let stdout: FileHandle?
    /// The read end of the child's standard error when it is ``Output/pipe``.
    public let stderr: FileHandle?
    private let stdinFD: Mutex<Int32>
    private let ended = Mutex<Termination?>(nil)
    private let peakResident = Mutex<Int64?>(nil)

    /// Starts `arguments` (the first is the executable's path).
    /// - Parameter environment: the child's whole environment; `nil` passes this process's environment on.
    /// - Throws: ``LaunchError`` when a pipe cannot be made or posix_spawn fails (no such file, not executable).
    public init(_ arguments: [String], environment: [String: String]? = nil,
                stdout: Output = .pipe, stderr: Output = .discard) throws(LaunchError) {
        // A write to a child that died must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        guard let program = arguments.first else { throw LaunchError(description: "no program to start") }
        var opened: [Int32] = []
        func makePipe() throws(LaunchError) -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard cs_pipe(&fds) == 0 else {
                let reason = String(cString: strerror(cs_errno()))
                opened.forEach { _ = close($0) }
                throw LaunchError(description: "\(program): pipe: \(reason)")
            }
            opened += fds
            return (fds[0], fds[1])
        }
        let input = try makePipe()
        let output = stdout == .pipe ? try makePipe() : nil
        let error = stderr == .pipe ? try makePipe() : nil
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var child: Int32 = 0
        let spawned = cs_spawn(program, argv, envp, input.read, output?.write ?? -1, error?.write ?? -1, &child)
        let reason = spawned == 0 ? "" : String(cString: strerror(cs_errno()))
        // This process keeps only its ends: the write end of stdin, the read ends of stdout and stderr.
        for fd in [input.read, output?.write, error?.write].compactMap({ $0 }) { close(fd) }
        guard spawned == 0 else {
            for fd in [input.write, output?.read, error?.read].compactMap({ $0 }) { close(fd) }
            throw LaunchError(description: "\(program): \(reason)")
        }
        pid = child
        stdinFD = Mutex(input.write)
        self.stdout = output.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
        self.stderr = error.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) }
    }

    deinit {
        closeStdin()
        if ended.withLock({ $0 }) == nil {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    /// Writes all of `data` to the child's standard input, waiting while the pipe is full; false when standard
    /// input is closed or the child is gone.
    @discardableResult
    public func writeToStdin(_ data: Data) -> Bool {
        stdinFD.withLock { fd in
            guard fd >= 0 else { return false }
            return data.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress else { return true }
                var offset = 0
                while offset < raw.count {
                    let written = write(fd, base + offset, raw.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written < 0 && errno == EAGAIN {
                        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&poller, 1, 100)
                        continue
                    }
                    if written <= 0 { return false }
                    offset += written
                }
                return true
            }
        }
    }

    /// Writes `data` to the child's standard input until all is written or the pipe stays full for `stall`
    /// (the child stopped reading).
    /// - Returns: how many bytes of `data` were written (0 when standard input is closed).
    public func writeToStdin(_ data: Data, stoppingAfterStall stall: Duration) -> Int {
        stdinFD.withLock { fd in
            guard fd >= 0 else { return 0 }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            defer { _ = fcntl(fd, F_SETFL, flags) }
            let stallMilliseconds = Int32(clamping: stall.components.seconds * 1_000
                                          + stall.components.attoseconds / 1_000_000_000_000_000)
            return data.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                var offset = 0
                while offset < raw.count {
                    let written = write(fd, base + offset, raw.count - offset)
                    if written > 0 {
                        offset += written
                        continue
                    }
                    guard written < 0, errno == EAGAIN || errno == EINTR else { break }
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&poller, 1, stallMilliseconds) == 0 { break }
                }
                return offset
            }
        }
    }

    /// Closes the child's standard input (it sees end of file); idempotent.
    public func closeStdin() {
        let fd = stdinFD.withLock { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { close(fd) }
    }

    /// Sends signal `number` (e.g. `SIGKILL`, `SIGTERM`) to the child unless it was already reaped.
    public func send(signal number: Int32) {
        ended.withLock { termination in
            if termination == nil { _ = kill(pid, number) }
        }
    }

    /// How the child ended, or `nil` while it runs (does not wait).
    public var termination: Termination? {
        ended.withLock { termination in
            if termination == nil { termination = reap(blocking: false) }
            return termination
        }
    }

    /// Waits at most `timeout` for the child to end (polling every 5 ms).
    /// - Returns: how it ended, or `nil` when it still runs after `timeout`.
    public func wait(timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let termination { return termination }
            if ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits (without a bound) until the child ends.
    @discardableResult
    public func waitUntilExit() -> Termination {
        ended.withLock { termination in
            if let termination { return termination }
            let decoded = reap(blocking: true) ?? .signalled(SIGKILL)
            termination = decoded
            return decoded
        }
    }

    /// Closes standard input (a child that reads it exits then), waits up to `grace`, then kills it (SIGKILL);
    /// idempotent.
    /// - Returns: how the child ended.
    @discardableResult
    public func stop(grace: Duration = .seconds(2)) -> Termination {
        closeStdin()
        if let termination = wait(timeout: grace) { return termination }
        send(signal: SIGKILL)
        return waitUntilExit()
    }

    /// Kills the child (SIGKILL) if it still runs and reaps it.
    @discardableResult
    public func killAndReap() -> Termination {
        send(signal: SIGKILL)
        return waitUntilExit()
    }

    /// Runs `arguments` to the end: writes `stdin` (then closes it), collects standard output and error, and kills
    /// the child (SIGKILL) when it has not ended within `timeout`. Blocks the calling thread: in async code use
    /// ``run(_:environment:stdin:timeout:)``.
    /// - Throws: ``LaunchError`` when the child cannot be started.
    public static func runBlocking(_ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil,
                                   timeout: Duration = .seconds(60)) throws(LaunchError) -> Outcome {
        let child = try ChildProcess(arguments, environment: environment, stdout: .pipe, stderr: .pipe)
        let deadline = ContinuousClock.now + timeout
        if let stdin { child.writeToStdin(stdin) }
        child.closeStdin()
        var collected: [Data] = [Data(), Data()]
        var open = [child.stdout, child.stderr].map { $0?.fileDescriptor ?? -1 }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var timedOut = false
        while open.contains(where: { $0 >= 0 }) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                timedOut = true
                break
            }
            var pollers = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(clamping: left.components.seconds * 1_000 + 1)
            guard poll(&pollers, nfds_t(pollers.count), min(milliseconds, 1_000)) > 0 else { continue }
            for index in open.indices where open[index] >= 0 && pollers[index].revents != 0 {
                let count = read(open[index], &buffer, buffer.count)
                if count > 0 {
                    collected[index].append(contentsOf: buffer[0..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open[index] = -1
                }
            }
        }
        var termination = timedOut ? nil : child.wait(timeout: max(deadline - ContinuousClock.now, .seconds(1)))
        if termination == nil {
            timedOut = true
            termination = child.killAndReap()
        }
        return Outcome(termination: termination ?? .signalled(SIGKILL), timedOut: timedOut,
                       stdout: collected[0], stderr: collected[1], peakResidentBytes: child.peakResidentBytes)
    }

    /// ``runBlocking(_:environment:stdin:timeout:)`` on a thread of its own, so no thread of Swift's cooperative
    /// pool waits for the child (other tests' tasks keep running).
    /// - Throws: ``LaunchError`` when the child cannot be started.
    public static func run(_ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil,
                           timeout: Duration = .seconds(60)) async throws(LaunchError) -> Outcome {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Outcome, LaunchError>, Never>) in
            Thread {
                do throws(LaunchError) {
                    continuation.resume(returning: .success(try runBlocking(arguments, environment: environment,
                                                                            stdin: stdin, timeout: timeout)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }.start()
        }
        return try result.get()
    }

    /// The largest resident set size the child reached, in bytes (`ru_maxrss` of wait4), once it was reaped.
    ///
    /// On Linux it is at least the spawning process's resident size at the time of the spawn: posix_spawn runs the
    /// child in the parent's memory until `exec`, and `exec` carries that memory's high-water mark over. To measure
    /// what a program itself uses, run it under `/usr/bin/time -f %M -o FILE`, whose own child is forked.
    public var peakResidentBytes: Int64? { peakResident.withLock { $0 } }

    /// wait4 for the child (not waiting when `blocking` is false); records its peak resident size.
    /// - Returns: how it ended, or `nil` when it still runs (or was reaped already).
    private func reap(blocking: Bool) -> Termination? {
        var status: Int32 = 0
        var usage = rusage()
        var result: pid_t
        repeat {
            result = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
        } while result < 0 && errno == EINTR
        guard result == pid else { return nil }
        #if os(Linux)
        let unit: Int64 = 1_024   // kilobytes on Linux
        #else
        let unit: Int64 = 1       // bytes on Apple platforms
        #endif
        peakResident.withLock { $0 = Int64(usage.ru_maxrss) * unit }
        return Self.decode(status)
    }

    private static func decode(_ status: Int32) -> Termination {
        // WIFEXITED / WEXITSTATUS / WTERMSIG are C macros Swift does not import: the same bit layout on Linux and
        // Apple platforms (low 7 bits the signal, 0 for a normal exit; bits 8-15 the exit code).
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}

extension ChildProcess {
    /// This process's environment with `changes` applied (for ``init(_:environment:stdout:stderr:)``).
    public static func environment(adding changes: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(changes) { _, new in new }
    }
}
