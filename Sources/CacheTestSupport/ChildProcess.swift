import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with posix_spawn, its standard input and output on pipes, standard error on /dev/null.
///
/// The test origins use it instead of Foundation's `Process`, whose `run()` on Linux can crash (a buffer
/// over-read while it scans /proc/self/fd) when the test process has many descriptors open
/// (swift-corelibs-foundation #5472, not in this toolchain).
final class ChildProcess: Sendable {
    let pid: pid_t
    let stdoutFD: Int32
    private let stdinFD = Mutex<Int32>(-1)

    /// Spawns `arguments` (the first is the executable path); `nil` (errno set) when it cannot be started.
    init?(_ arguments: [String]) {
        // A write to a child that died must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard pipe(&input) == 0 else { return nil }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            return nil
        }
        for fd in [input[1], output[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t = nil  // an opaque pointer on Darwin
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // The child must keep only 0, 1 and 2: a test's sockets left open in a long-lived origin would keep
        // connections half-alive after the test closed them. Glibc's posix_spawn_file_actions_addclosefrom_np is
        // not visible to Swift, so on Linux the fixture scripts close every inherited descriptor above 2 first.
        #if canImport(Glibc)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        #else
        var attributes: posix_spawnattr_t = nil
        posix_spawnattr_init(&attributes)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif
        defer { posix_spawnattr_destroy(&attributes) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The environment from Foundation (the same on both platforms; Darwin does not export `environ`).
        let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environment)
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1]); close(output[0])
            errno = spawned
            return nil
        }
        self.pid = pid
        self.stdoutFD = output[0]
        stdinFD.withLock { $0 = input[1] }
    }

    /// Writes all of `data` to the child's standard input; false when it is closed or gone.
    func writeToStdin(_ data: Data) -> Bool {
        stdinFD.withLock { fd in
            guard fd >= 0 else { return false }
            return data.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress else { return true }
                var offset = 0
                while offset < raw.count {
                    let written = write(fd, base + offset, raw.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { return false }
                    offset += written
                }
                return true
            }
        }
    }

    /// Closes the child's standard input (it exits then), waits up to 2 s, then SIGKILLs it; idempotent.
    func stop() {
        let fd = stdinFD.withLock { fd -> Int32 in
            let old = fd
            fd = -1
            return old
        }
        guard fd >= 0 else { return }
        close(fd)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(2)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(10_000)
        }
    }
}
