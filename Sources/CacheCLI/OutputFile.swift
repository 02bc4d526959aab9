import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func posixWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
private func posixClose(_ fd: Int32) { _ = close(fd) }

/// Writes a response body to stdout or to a file given with `-o` (opened with open(2), so `/dev/null` works).
struct BodySink {
    private enum Target { case console(Console), fd(Int32) }
    private let target: Target
    private let path: String?

    /// A sink writing to the console's stdout.
    init(console: Console) {
        target = .console(console)
        path = nil
    }

    /// A sink that creates or truncates the file at `url` (mode 0644).
    /// - Throws: ``CommandFailure`` naming the file when it cannot be opened.
    init(file url: URL) throws(CommandFailure) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CommandFailure("cannot write '\(url.path)': \(String(cString: strerror(errno)))", kind: .write)
        }
        target = .fd(fd)
        path = url.path
    }

    /// Writes `data` completely.
    /// - Throws: ``CommandFailure`` when the file cannot be written (disk full...).
    func write(_ data: Data) throws(CommandFailure) {
        switch target {
        case .console(let console):
            console.writeOut(data)
        case .fd(let fd):
            let failed: Int32? = data.withUnsafeBytes { raw -> Int32? in
                guard let base = raw.baseAddress else { return nil }
                var offset = 0
                while offset < raw.count {
                    let n = posixWrite(fd, base + offset, raw.count - offset)
                    if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return errno }
                }
                return nil
            }
            if let failed {
                throw CommandFailure("cannot write '\(path ?? "?")': \(String(cString: strerror(failed)))", kind: .write)
            }
        }
    }

    /// Copies the file at `source` in 256 KiB chunks, so a large body never sits in memory.
    /// - Throws: ``CommandFailure`` when the source cannot be read or the target written.
    func copy(from source: URL) throws(CommandFailure) {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: source) } catch {
            throw CommandFailure("storage error: cannot read cached body '\(source.path)': \(ErrorText.describe(error))")
        }
        defer { try? handle.close() }
        while true {
            let chunk: Data
            do { chunk = try handle.read(upToCount: 256 << 10) ?? Data() } catch {
                throw CommandFailure("storage error: cannot read cached body '\(source.path)': \(ErrorText.describe(error))")
            }
            if chunk.isEmpty { break }
            try write(chunk)
        }
    }

    /// Closes the file (nothing for stdout).
    func close() {
        if case .fd(let fd) = target { posixClose(fd) }
    }
}
