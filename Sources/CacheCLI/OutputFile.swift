import Foundation
import CacheStore
import DownloadCache
import CacheSystem
import Synchronization

/// Writes a response body to stdout or to a file given with `-o`.
///
/// The file is opened (created or truncated, mode 0644 before the umask) only when the first bytes of the body
/// are in hand — or at ``finish()`` for an empty body — so a body that cannot be read (a stored file that vanished,
/// a failed read) never leaves `-o FILE` truncated. It is opened with open(2), so `/dev/null` works.
final class BodySink: Sendable {
    private enum Target { case console(Console), file(URL) }
    private let target: Target
    /// Whether the file is opened as `-O` opens it: a regular file only, never through a symbolic link.
    private let refusesLinks: Bool
    /// The open descriptor once the first bytes arrived (-1 before).
    private let fd = Mutex<Int32>(-1)
    /// Whether the first body bytes are still to be checked for binary content (stdout on a terminal only).
    private let checksBinary: Mutex<Bool>

    /// The message of a binary body refused on a terminal (curl's words).
    static let binaryRefusal = "Binary output can mess up your terminal. Use \"--output -\" to tell dlcache to output it "
        + "to your terminal anyway, or consider \"--output <FILE>\" to save to a file."

    /// A sink writing to the console's stdout. With `refusingBinary`, when stdout is a terminal the first body
    /// bytes written are checked as curl checks them: one holding a NUL byte is refused (``binaryRefusal``,
    /// exit 23) instead of reaching the terminal.
    init(console: Console, refusingBinary: Bool = false) {
        target = .console(console)
        refusesLinks = false
        checksBinary = Mutex(refusingBinary && console.stdoutIsTerminal)
    }

    /// A sink that creates or truncates the file at `url` when the body's first bytes are ready.
    /// With `refusingLinks` (`-O`, whose name comes from the URL) the open refuses a symbolic link and anything
    /// but a regular file (a FIFO, a device), so a name chosen by the origin's URL never writes elsewhere.
    /// - Throws: ``CommandFailure`` when the file's directory does not exist (checked now, before the body).
    init(file url: URL, refusingLinks: Bool = false) throws(CommandFailure) {
        refusesLinks = refusingLinks
        checksBinary = Mutex(false)
        let parent = url.deletingLastPathComponent().path
        var info = cs_file_info()
        guard cs_stat_path(parent, 1, &info) == 0 else {
            throw CommandFailure("cannot write '\(url.path)': \(Self.message(cs_errno()))", kind: .write)
        }
        target = .file(url)
    }

    private static func message(_ err: Int32) -> String {
        ErrorText.systemMessage(err)
    }

    /// The file's descriptor, opening (and truncating) it now if this is the first write.
    private func descriptor(_ url: URL) throws(CommandFailure) -> Int32 {
        try fd.withLock { (fd: inout Int32) throws(CommandFailure) -> Int32 in
            if fd >= 0 { return fd }
            let opened = refusesLinks ? cs_open_file(url.path, CS_OPEN_WRITE, CS_OPEN_TRUNCATE, 0o644)
                                      : cs_open_output(url.path, 0o644)
            guard opened >= 0 else {
                let err = cs_errno()
                if refusesLinks, cs_classify_error(err) == CS_ERROR_SYMLINK {
                    throw CommandFailure("cannot write '\(url.path)': it is a symbolic link, which -O never writes through",
                                         kind: .write)
                }
                throw CommandFailure("cannot write '\(url.path)': \(Self.message(err))", kind: .write)
            }
            fd = opened
            return opened
        }
    }

    /// Writes `data` completely; `isBody` false for a header block (never checked as binary).
    /// - Throws: ``CommandFailure`` when the file cannot be written (disk full...), or a binary body is refused.
    func write(_ data: Data, isBody: Bool = true) throws(CommandFailure) {
        switch target {
        case .console(let console):
            if isBody, !data.isEmpty, checksBinary.withLock({ (check: inout Bool) -> Bool in
                defer { check = false }
                return check
            }), data.contains(0) {
                throw CommandFailure(Self.binaryRefusal, kind: .write)
            }
            let failure = console.writeBody(data)
            if failure != 0 {
                throw CommandFailure("cannot write to standard output: \(Self.message(failure))", kind: .write)
            }
        case .file(let url):
            let fd = try descriptor(url)
            let failed = data.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress, raw.count > 0 else { return false }
                return cs_write_all(fd, base, raw.count) != 0
            }
            if failed { throw CommandFailure("cannot write '\(url.path)': \(Self.message(cs_errno()))", kind: .write) }
        }
    }

    /// Writes `region` of a body completely: to a file, copied in the kernel from the file holding the body
    /// (``BodyRegion/write(to:)``); to stdout, read and written as ``write(_:isBody:)`` does.
    /// - Throws: ``CommandFailure`` when the body cannot be read or the target written.
    func write(_ region: BodyRegion) throws(CommandFailure) {
        guard case .file(let url) = target else {
            let data: Data
            do { data = try region.read() } catch {
                throw CommandFailure("storage error: cannot read the body at byte \(region.offset): \(error.detail)")
            }
            try write(data)
            return
        }
        let fd = try descriptor(url)
        do throws(BodyRegion.WriteFailure) {
            try region.write(to: fd)
        } catch {
            if error.isOutput {
                throw CommandFailure("cannot write '\(url.path)': \(Self.message(error.systemError))", kind: .write)
            }
            let reason = error.systemError == 0 ? "the file ended early" : Self.message(error.systemError)
            throw CommandFailure("storage error: cannot read the body at byte \(region.offset): \(reason)")
        }
    }

    /// Copies a stored body held open by the store, in 256 KiB chunks (never whole in memory); the bytes stay
    /// readable even when the entry is purged or replaced meanwhile; each chunk goes through `transform` first
    /// (identity by default).
    /// - Throws: ``CommandFailure`` when the body cannot be read, the target written, or `transform` fails.
    func copy(from body: OpenedBody,
              transform: (Data) throws(CommandFailure) -> Data = { $0 }) throws(CommandFailure) {
        var offset: Int64 = 0
        while offset < body.size {
            let chunk: Data
            do { chunk = try body.read(from: offset, upToCount: 256 << 10) } catch {
                throw CommandFailure("storage error: cannot read cached body '\(body.url.path)': \(ErrorText.describe(error))")
            }
            if chunk.isEmpty { break }
            try write(try transform(chunk))
            offset += Int64(chunk.count)
        }
        try finish()
    }

    /// Copies the file at `source` in 256 KiB chunks, so a large body never sits in memory; each chunk goes
    /// through `transform` first (identity by default).
    /// - Throws: ``CommandFailure`` when the source cannot be read, the target written, or `transform` fails.
    func copy(from source: URL,
              transform: (Data) throws(CommandFailure) -> Data = { $0 }) throws(CommandFailure) {
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
            try write(try transform(chunk))
        }
        try finish()
    }

    /// Whether `-o FILE` names a regular file or nothing yet (then it is created as one): an output whose bytes
    /// can be taken back (``discardWritten()``). False for stdout, a FIFO, a device, `/dev/null`.
    var isRewritableFile: Bool {
        guard case .file(let url) = target else { return false }
        var info = cs_file_info()
        guard cs_stat_path(url.path, 1, &info) == 0 else { return cs_classify_error(cs_errno()) == CS_ERROR_NOT_FOUND }
        return info.kind == CS_KIND_REGULAR.rawValue
    }

    /// Takes back everything written so far: truncates the file to 0 bytes and writes on from its start.
    /// - Returns: false when that is impossible (stdout, a FIFO, a device: the bytes went out).
    func discardWritten() -> Bool {
        guard case .file = target else { return false }
        return fd.withLock { fd -> Bool in
            if fd < 0 { return true }  // nothing written yet
            return cs_truncate(fd, 0) == 0 && cs_seek(fd, 0) == 0
        }
    }

    /// Makes sure the file exists (created or truncated) after a complete body — an empty body writes nothing.
    /// - Throws: ``CommandFailure`` when the file cannot be opened.
    func finish() throws(CommandFailure) {
        if case .file(let url) = target { _ = try descriptor(url) }
    }

    /// Closes the file (nothing for stdout).
    func close() {
        fd.withLock { fd in
            if fd >= 0 { _ = cs_close(fd) }
            fd = -1
        }
    }
}
