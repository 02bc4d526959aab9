import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a driver session names in `"bodyFile"` answers when the body is not a stored blob: one private
/// directory (mode 0700, created with `mkdtemp` on first use in the system temporary directory), files mode
/// 0600 created exclusively inside it. Everything in it is removed by ``removeAll()`` when the session ends.
final class DriverBodyFiles: Sendable {
    private struct State {
        var directory: String?
        var next = 0
        var adopted: [String] = []
    }
    private let state = Mutex(State())

    /// The session's directory, created on first use.
    /// - Throws: the `mkdtemp` failure, in words.
    private func directory() throws -> (path: String, name: Int) {
        try state.withLock { state throws -> (String, Int) in
            if state.directory == nil {
                var temporary = NSTemporaryDirectory()          // "/tmp/": one separator in the answered paths
                while temporary.count > 1, temporary.hasSuffix("/") { temporary.removeLast() }
                var template = Array((temporary + "/dlcache-driver-XXXXXX").utf8CString)
                let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
                    guard let base = buffer.baseAddress else { return false }
                    return mkdtemp(base) != nil
                }
                guard made else { throw DriverBodyFileError("cannot create a private temporary directory: \(String(cString: strerror(errno)))") }
                state.directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                         as: UTF8.self)
            }
            state.next += 1
            return (state.directory ?? "", state.next)
        }
    }

    /// Writes `data` to a new private file and returns its path.
    /// - Throws: ``DriverBodyFileError`` when the file cannot be created or written.
    func write(_ data: Data) throws(DriverBodyFileError) -> String {
        let (folder, number): (String, Int)
        do { (folder, number) = try directory() } catch let error as DriverBodyFileError { throw error } catch {
            throw DriverBodyFileError(ErrorText.describe(error))
        }
        let path = folder + "/body-\(number)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DriverBodyFileError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let complete = data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let n = posixWrite(fd, base + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return false }
            }
            return true
        }
        guard complete else {
            unlink(path)
            throw DriverBodyFileError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// Takes ownership of a temporary body file the cache handed over (a response that was not stored), so it is
    /// removed with the session's other files.
    func adopt(_ path: String) {
        state.withLock { $0.adopted.append(path) }
    }

    /// Removes every file this session created or adopted, and its directory.
    func removeAll() {
        let (folder, adopted) = state.withLock { state -> (String?, [String]) in
            defer { state.directory = nil; state.adopted = [] }
            return (state.directory, state.adopted)
        }
        for path in adopted { unlink(path) }
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }
}

/// A body file could not be produced.
struct DriverBodyFileError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `write(2)`, named so it does not collide with the methods called `write` here.
@inline(__always)
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #elseif canImport(Darwin)
    return Darwin.write(fd, buffer, count)
    #endif
}
