import CHiredis
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One reply from Redis, copied out of hiredis's reply object.
enum RedisReply: Sendable, Equatable {
    /// A bulk string.
    case string(Data)
    /// A simple status (`+OK`).
    case status(String)
    /// An integer.
    case integer(Int64)
    /// The nil bulk string or nil array.
    case null
    /// An array of replies.
    case array([RedisReply])
    /// An error reply (`-ERR ...`), which leaves the connection usable.
    case error(String)
}

/// Why a Redis call failed; the message never contains the password.
struct RedisFailure: Error, Sendable, CustomStringConvertible {
    /// What kind of failure: decides whether the circuit breaker opens.
    enum Kind: String, Sendable {
        /// Cannot connect, connection lost or protocol error.
        case unreachable
        /// Connect or command took longer than the timeout.
        case timedOut
        /// `AUTH` refused (wrong password, unknown user) or a command needs authentication.
        case authentication
        /// The ACL user lacks a command or key permission (`NOPERM`).
        case permission
        /// The server refused a write because it is full (`OOM`, maxmemory with `noeviction`).
        case full
        /// Any other error reply (wrong type, script error, cluster redirection ...).
        case reply
    }
    var kind: Kind
    var message: String
    /// Whether this failure switches the tier off for the breaker's retry interval (reads cannot work either).
    var opensBreaker: Bool { kind != .full && kind != .reply }
    var description: String { "\(kind.rawValue): \(message)" }

    /// Classifies an error reply by its first word (Redis's error codes).
    static func classify(_ text: String) -> RedisFailure {
        let code = text.prefix { $0 != " " }.uppercased()
        switch code {
        case "NOAUTH", "WRONGPASS", "INVALIDPASSWORD": return RedisFailure(kind: .authentication, message: text)
        case "NOPERM": return RedisFailure(kind: .permission, message: text)
        case "OOM": return RedisFailure(kind: .full, message: text)
        case "LOADING", "MASTERDOWN", "BUSY": return RedisFailure(kind: .unreachable, message: text)
        default:
            if text.contains("invalid password") || text.contains("invalid username-password") {
                return RedisFailure(kind: .authentication, message: text)
            }
            return RedisFailure(kind: .reply, message: text)
        }
    }
}

/// One synchronous hiredis connection (`redisContext`): authenticated and on its database once created.
///
/// Not thread-safe: the pool hands it to one caller at a time (hence `@unchecked Sendable`: it moves between
/// threads but is never used by two at once). Every call blocks at most the configured timeout.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// Seconds one whole command may take (the socket timeout bounds each read, not a server that drips bytes).
    private let callLimit: TimeInterval
    /// The command in progress (its number), for the watchdog; `nil` between commands.
    private let activeCall = Mutex<UInt64?>(nil)
    private var callCount: UInt64 = 0

    private init(context: UnsafeMutablePointer<redisContext>, callLimit: TimeInterval) {
        self.context = context
        self.callLimit = callLimit
    }

    deinit {
        redisFree(context)
    }

    /// Connects, sets the command timeout, authenticates and selects the database.
    /// - Throws: ``RedisFailure`` (`.unreachable`, `.timedOut`, `.authentication`, `.permission`, `.reply`).
    static func connect(_ endpoint: RedisEndpoint, timeout: TimeInterval) throws(RedisFailure) -> RedisConnection {
        let limit = Self.timeval(timeout)
        let raw: UnsafeMutablePointer<redisContext>?
        switch endpoint.address {
        case .tcp(let host, let port): raw = redisConnectWithTimeout(host, Int32(port), limit)
        case .unix(let path): raw = redisConnectUnixWithTimeout(path, limit)
        }
        guard let raw else { throw RedisFailure(kind: .unreachable, message: "cannot allocate a connection") }
        let connection = RedisConnection(context: raw, callLimit: max(0.01, timeout) * 4)
        if raw.pointee.err != 0 { throw connection.contextFailure() }
        _ = redisSetTimeout(raw, limit)
        SIGPIPEGuard.prepare(socket: raw.pointee.fd)
        if let password = endpoint.password {
            let arguments = endpoint.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            if case .error(let text) = try connection.command(arguments.map { Data($0.utf8) }) {
                // The reply names neither the user's password nor ours; keep only Redis's words.
                throw RedisFailure(kind: .authentication, message: RedisFailure.classify(text).message)
            }
        }
        if endpoint.database != 0 {
            if case .error(let text) = try connection.command([Data("SELECT".utf8), Data(String(endpoint.database).utf8)]) {
                throw RedisFailure.classify(text)
            }
        }
        return connection
    }

    /// Sends one command (binary-safe arguments) and returns its reply; an error reply is a value, not a throw.
    /// - Throws: ``RedisFailure`` `.unreachable` / `.timedOut` when the connection failed (then it is unusable).
    func command(_ arguments: [Data]) throws(RedisFailure) -> RedisReply {
        let count = arguments.count
        let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: count)
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: count)
        var buffers: [UnsafeMutableRawPointer] = []
        buffers.reserveCapacity(count)
        defer {
            for buffer in buffers { buffer.deallocate() }
            pointers.deallocate()
            lengths.deallocate()
        }
        for (index, argument) in arguments.enumerated() {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, argument.count), alignment: 1)
            argument.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
            }
            buffers.append(buffer)
            pointers[index] = UnsafePointer(buffer.assumingMemoryBound(to: CChar.self))
            lengths[index] = argument.count
        }
        callCount &+= 1
        let call = callCount
        activeCall.withLock { $0 = call }
        // Watchdog: a server that answers a byte at a time never trips the socket timeout; shutting the socket
        // down makes hiredis fail the command, so a call never takes much longer than 4 × the timeout.
        DispatchQueue.global().asyncAfter(deadline: .now() + callLimit) { [weak self] in
            self?.interrupt(call)
        }
        let reply = SIGPIPEGuard.run {
            redisCommandArgv(context, Int32(count), pointers, lengths)
        }
        activeCall.withLock { $0 = nil }
        guard let reply else { throw contextFailure() }
        let typed = reply.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(reply) }
        return Self.convert(typed)
    }

    /// Shuts the socket down when command `call` is still running (the owner then discards the connection).
    private func interrupt(_ call: UInt64) {
        activeCall.withLock { active in
            guard active == call else { return }
            _ = shutdown(context.pointee.fd, Int32(SHUT_RDWR))
        }
    }

    /// Copies a hiredis reply tree into a ``RedisReply``.
    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            guard let bytes = value.str else { return .string(Data()) }
            return .string(Data(bytes: bytes, count: Int(value.len)))
        case REDIS_REPLY_STATUS:
            return .status(value.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR:
            return .error(value.str.map { String(cString: $0) } ?? "ERR")
        case REDIS_REPLY_INTEGER:
            return .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            guard let elements = value.element else { return .array([]) }
            var items: [RedisReply] = []
            items.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                guard let element = elements[index] else { items.append(.null); continue }
                items.append(convert(element))
            }
            return .array(items)
        default:
            return .null
        }
    }

    /// The context's error as a failure (timeouts told apart by errno).
    private func contextFailure() -> RedisFailure {
        let code = context.pointee.err
        var message = withUnsafeBytes(of: context.pointee.errstr) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        if message.isEmpty { message = "connection error \(code)" }
        let lowered = message.lowercased()
        if code == REDIS_ERR_IO && (lowered.contains("temporarily unavailable") || lowered.contains("timed out")
                                    || lowered.contains("in progress")) {
            return RedisFailure(kind: .timedOut, message: message)
        }
        return RedisFailure(kind: .unreachable, message: message)
    }

    private static func timeval(_ seconds: TimeInterval) -> timeval {
        let clamped = min(max(seconds, 0.001), 3_600)
        let whole = clamped.rounded(.down)
        return makeTimeval(seconds: Int(whole), microseconds: Int((clamped - whole) * 1_000_000))
    }
}

/// Keeps a write to a Redis server that closed its socket from killing the process with SIGPIPE (hiredis writes
/// with write(2), which raises it): the one place with per-platform code in this module.
enum SIGPIPEGuard {
    /// Darwin: `SO_NOSIGPIPE` on the socket. Linux has no such option (see ``run(_:)``).
    static func prepare(socket fd: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #else
        _ = fd   // Linux: see run(_:)
        #endif
    }

    /// Linux: runs `body` with SIGPIPE blocked in this thread and consumes a SIGPIPE it raised, so the write fails
    /// with EPIPE instead (the technique libcurl and OpenSSL use). Darwin: runs `body` (the socket option suffices).
    static func run<T>(_ body: () -> T) -> T {
        #if canImport(Glibc)
        var block = sigset_t(), previous = sigset_t(), pendingBefore = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGPIPE)
        sigpending(&pendingBefore)
        let alreadyPending = sigismember(&pendingBefore, SIGPIPE) == 1
        pthread_sigmask(SIG_BLOCK, &block, &previous)
        let result = body()
        if !alreadyPending {
            var pendingAfter = sigset_t()
            sigpending(&pendingAfter)
            if sigismember(&pendingAfter, SIGPIPE) == 1 {
                var zero = timespec(tv_sec: 0, tv_nsec: 0)
                _ = sigtimedwait(&block, nil, &zero)
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
        #else
        return body()
        #endif
    }
}

/// `struct timeval` from seconds and microseconds (its field types differ between Glibc and Darwin).
func makeTimeval(seconds: Int, microseconds: Int) -> timeval {
    #if canImport(Glibc)
    return timeval(tv_sec: seconds, tv_usec: microseconds)
    #else
    return timeval(tv_sec: seconds, tv_usec: Int32(microseconds))
    #endif
}
