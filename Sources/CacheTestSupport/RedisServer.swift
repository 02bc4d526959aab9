import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `redis-server` (Debian's, installed by `Scripts/bootstrap.sh`) started by a test on a free 127.0.0.1 port
/// with its own configuration and no persistence; ``stop()`` (or the test process dying) ends it.
///
/// It runs under a small shell that kills it when the shell's standard input closes, so a crashed test run leaves
/// no server behind. ``kill()`` and ``restart()`` simulate a server that dies and comes back on the same port;
/// ``pause()`` / ``resume()`` (SIGSTOP / SIGCONT) a server that stops answering.
public final class RedisServer: @unchecked Sendable {
    // @unchecked: the mutable launch state is guarded by `lock`.
    /// Why the server could not be started or driven.
    public struct RedisServerError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// `redis://127.0.0.1:<port>/0` without credentials.
    public var url: String { "redis://127.0.0.1:\(port)/0" }
    /// Extra configuration lines (e.g. `maxmemory 2mb`, `requirepass secret`, `user ...`).
    public let extraConfiguration: [String]
    /// The password `redis-cli` uses for control commands (`requirepass`), if any.
    public let controlPassword: String?
    /// The ACL user `redis-cli` uses for control commands, if any.
    public let controlUser: String?
    private let directory: URL
    private let lock = NSLock()
    private var wrapper: ChildProcess?
    private var serverPID: pid_t = 0

    /// Whether `redis-server` and `redis-cli` are installed.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-cli")
    }

    /// Starts a server with `configuration` lines added to the defaults (bind 127.0.0.1, no RDB, no AOF).
    /// - Throws: ``RedisServerError`` when it does not answer PING within 10 seconds.
    public init(configuration: [String] = [], controlUser: String? = nil, controlPassword: String? = nil) throws {
        self.extraConfiguration = configuration
        self.controlUser = controlUser
        self.controlPassword = controlPassword
        self.directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-redis-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = try LoopbackPort.free()
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts (again) on the same port with the same configuration (after ``kill()``).
    /// - Throws: ``RedisServerError`` when it does not answer PING within 10 seconds.
    public func restart() throws {
        try start()
    }

    private func start() throws {
        let config = directory.appendingPathComponent("redis.conf")
        let lines = ["bind 127.0.0.1", "port \(port)", "save \"\"", "appendonly no", "dir \(directory.path)",
                     "daemonize no", "protected-mode no", "loglevel warning",
                     "logfile \(directory.appendingPathComponent("redis.log").path)"] + extraConfiguration
        try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        // The shell prints the server's pid, then waits for its own stdin to close and kills the server, so a
        // server never outlives this process. The server gets /dev/null for its output, and the shell drops the
        // pipe after the pid, so no descriptor of this process stays tied to a running server.
        let wrapper = try ChildProcess(
            ["/bin/sh", "-c", "/usr/bin/redis-server \"$0\" </dev/null >/dev/null 2>&1 & echo $!; exec >/dev/null; "
             + "cat >/dev/null; kill -9 $! 2>/dev/null", config.path])
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        while !text.contains("\n") && Date() < deadline {
            let chunk = wrapper.stdout?.availableData ?? Data()
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            wrapper.stop()
            throw RedisServerError(description: "redis-server did not start")
        }
        lock.withLock {
            self.wrapper = wrapper
            serverPID = pid
        }
        // Listening is enough (no persistence: nothing to load). A TCP connect, not a redis-cli per try: every
        // child process costs descriptors and time in the test process.
        while Date() < deadline {
            if LoopbackPort.accepts(port) { return }
            usleep(20_000)
        }
        throw RedisServerError(description: "redis-server on port \(port) did not listen within 10 s")
    }

    /// Kills the server with SIGKILL (a crash: nothing is saved) and waits until its port is closed.
    public func kill() {
        let (pid, wrapper) = lock.withLock { () -> (pid_t, ChildProcess?) in
            defer { serverPID = 0; self.wrapper = nil }
            return (serverPID, self.wrapper)
        }
        if pid > 0 {
            #if canImport(Glibc)
            _ = Glibc.kill(pid, SIGKILL)
            #else
            _ = Darwin.kill(pid, SIGKILL)
            #endif
        }
        wrapper?.stop(grace: .seconds(5))
    }

    /// Stops answering (SIGSTOP): connections are accepted by the kernel but no reply ever comes.
    public func pause() { signal(SIGSTOP) }
    /// Answers again after ``pause()`` (SIGCONT).
    public func resume() { signal(SIGCONT) }

    private func signal(_ number: Int32) {
        let pid = lock.withLock { serverPID }
        #if canImport(Glibc)
        if pid > 0 { _ = Glibc.kill(pid, number) }
        #else
        if pid > 0 { _ = Darwin.kill(pid, number) }
        #endif
    }

    /// Stops the server (idempotent).
    public func stop() {
        resume()
        kill()
    }

    /// Runs `redis-cli` against this server with `arguments` (and `stdin` as the last argument's value when
    /// given, binary-safe via `-x`); returns its standard output.
    /// - Throws: ``RedisServerError`` when redis-cli cannot run or does not finish within 10 seconds.
    @discardableResult
    public func cli(_ commandArguments: [String], stdin: Data? = nil) throws -> String {
        var arguments = ["/usr/bin/redis-cli", "-h", "127.0.0.1", "-p", String(port), "--no-auth-warning"]
        if let controlUser { arguments += ["--user", controlUser] }
        if let controlPassword { arguments += ["-a", controlPassword] }
        if stdin != nil { arguments.append("-x") }
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.runBlocking(arguments + commandArguments, stdin: stdin, timeout: .seconds(10))
        } catch {
            throw RedisServerError(description: "redis-cli: \(error)")
        }
        if outcome.timedOut {
            throw RedisServerError(description: "redis-cli \(commandArguments.joined(separator: " ")) did not finish")
        }
        return outcome.output
    }

    /// The keys matching `pattern` (`KEYS`, fine for a test server), sorted.
    /// - Throws: ``RedisServerError`` as ``cli(_:stdin:)``.
    public func keys(_ pattern: String = "*") throws -> [String] {
        try cli(["--raw", "KEYS", pattern]).split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
    }
}
