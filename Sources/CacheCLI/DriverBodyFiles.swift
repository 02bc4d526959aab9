import DownloadCache
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a driver session names in `"bodyFile"` answers when the body is not a stored blob: one private
/// directory `dlcache-driver-XXXXXX` in the system temporary directory (``PrivateDirectory``: mode 0700, made on
/// first use, locked while the session lives), files `body-<n>` mode 0600 created exclusively inside it. Everything
/// in it is removed by ``removeAll()`` when the session ends; a session that was killed leaves its directory to the
/// next session that makes one, which removes it (``PrivateDirectory/removeStale(prefix:filePrefix:in:now:)``).
final class DriverBodyFiles: Sendable {
    private struct State {
        var next = 0
        var adopted: [String] = []
    }
    private let state = Mutex(State())
    private let folder = PrivateDirectory(prefix: "dlcache-driver-", filePrefix: "body-")

    /// Writes `data` to a new private file (created relative to the session's directory, never through a path
    /// another user could redirect) and returns its path.
    /// - Throws: ``DriverBodyFileError`` when the file cannot be created or written.
    func write(_ data: Data) throws(DriverBodyFileError) -> String {
        let number = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        let path: String
        let fd: Int32
        do {
            (path, fd) = try folder.createFile(named: folder.filePrefix + "\(number)")
        } catch {
            throw DriverBodyFileError(error.description)
        }
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
        let adopted = state.withLock { state -> [String] in
            defer { state.adopted = [] }
            return state.adopted
        }
        for path in adopted { unlink(path) }
        folder.remove()
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
