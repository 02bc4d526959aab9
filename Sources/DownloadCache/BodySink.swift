import CacheStore
import CacheSystem
import Foundation
import HTTPCacheSemantics
import SharedTier
import Synchronization

/// Where one response body is streamed: a store body writer's file, created by the store inside its open
/// `tmp/` directory (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600) on the first byte written, so a stored body is
/// committed where it was written, a `tmp/` swapped for a symbolic link after the cache opened redirects nothing,
/// and a body the transport returns in memory creates no file at all. When the store cannot write (or its
/// `tmp/` refuses the file when it is needed), a new file in the cache's private directory (mkdtemp, 0700).
final class BodySink: @unchecked Sendable {
    // @unchecked: used by one exchange at a time; never shared between tasks.
    /// The file the transport writes the body into (made on its first write).
    let file: ResponseBodyFile
    /// The store's writer owning `file` and the identity of the file as created; shared with `file`'s creator.
    private let slot: Slot

    /// What the file's creator decides: whose file it is, and which file (to tell whether its path still names it).
    final class Slot: Sendable {
        struct Content {
            /// The store's writer owning the file (nil for a file in the private directory).
            var writer: BodyWriter?
            var identity: (device: UInt64, inode: UInt64)?
        }
        let content: Mutex<Content>
        init(_ writer: BodyWriter?) { content = Mutex(Content(writer: writer)) }

        func record(_ descriptor: Int32) {
            var info = cs_file_info()
            guard cs_stat_fd(descriptor, &info) == 0 else { return }
            content.withLock { $0.identity = (info.device, info.inode) }
        }
    }

    private var writer: BodyWriter? {
        get { slot.content.withLock { $0.writer } }
        set { slot.content.withLock { $0.writer = newValue } }
    }

    /// - Throws: `DownloadError` `.storage` when no body file can be created anywhere.
    init(cache: DownloadCache) throws(DownloadError) {
        if cache.storeDownloadsDirectory != nil, let writer = try? cache.store.makeBodyWriter() {
            let slot = Slot(writer)
            let privateDownloads = cache.privateDownloads
            self.slot = slot
            file = ResponseBodyFile(url: writer.fileURL) { () throws(TransportError) -> ResponseBodyFile.Created in
                if let descriptor = try? writer.openDescriptor() {
                    slot.record(descriptor)
                    return .init(descriptor: descriptor, url: writer.fileURL, ownsDescriptor: false)
                }
                // The store's tmp/ vanished or became unwritable: the download must still succeed.
                writer.abort()
                slot.content.withLock { $0.writer = nil }
                let created: (path: String, fd: Int32)
                do {
                    created = try Self.privateFile(privateDownloads)
                } catch {
                    throw TransportError.other("cannot create a body file: \(error)")
                }
                slot.record(created.fd)
                return .init(descriptor: created.fd, url: URL(fileURLWithPath: created.path), ownsDescriptor: true)
            }
            // A writer that gave its file up for the private directory is finished and counts nothing.
            file.checksumWrites(into: writer)
        } else {
            // No store to write into (read-only, unusable): a file of the private directory in the system
            // temporary directory, created relative to the directory held open.
            slot = Slot(nil)
            let created: (path: String, fd: Int32)
            do {
                created = try Self.privateFile(cache.privateDownloads)
            } catch {
                throw DownloadError(.storage, "cannot create a file for the downloaded body: \(error.description)")
            }
            slot.record(created.fd)
            file = ResponseBodyFile(url: URL(fileURLWithPath: created.path), descriptor: created.fd, ownsDescriptor: true)
        }
        file.limitBytes(to: cache.configuration.maxTransferBytes)
    }

    /// A new file (mode 0600, open for writing) in the cache's private directory, created relative to it; never
    /// a name straight in the system temporary directory, where another user might have put something first.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory cannot be made or the file created.
    private static func privateFile(_ privateDownloads: PrivateDirectory) throws(PrivateDirectory.Failure) -> (path: String, fd: Int32) {
        try privateDownloads.createFile(named: privateDownloads.filePrefix + UUID().uuidString)
    }

    /// The sink of a resumed partial: `writer`'s file, open after its verified prefix. The transfer may append at
    /// most `maxTransferBytes` (as a fresh one may write; the answer's head can lower it, see
    /// ``DownloadCache/limitResumedBody(of:in:)``).
    init(resuming writer: BodyWriter, maxTransferBytes: Int64?) {
        let descriptor = writer.fileDescriptor
        slot = Slot(writer)
        slot.record(descriptor)
        file = ResponseBodyFile(url: writer.fileURL, descriptor: descriptor, ownsDescriptor: false)
        file.checksumWrites(into: writer)
        file.limitBytes(to: maxTransferBytes)
    }

    /// A new descriptor reading the body file (the caller closes it), checked to be the file that was created
    /// (same device and inode); -1 when the file does not exist yet or its name now names another file.
    func openReader() -> Int32 {
        let descriptor: Int32
        if let writer {
            descriptor = (try? writer.openReader()) ?? -1
        } else {
            descriptor = cs_open_file(file.url.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        }
        guard descriptor >= 0 else { return -1 }
        var info = cs_file_info()
        guard let identity = slot.content.withLock({ $0.identity }), cs_stat_fd(descriptor, &info) == 0,
              info.device == identity.device, info.inode == identity.inode else {
            _ = cs_close(descriptor)
            return -1
        }
        return descriptor
    }

    /// The store's writer holding the body (nil for a file in the private directory).
    var bodyWriter: BodyWriter? { writer }

    /// Ends the transfer keeping its verified bytes as the partial entry its head registered
    /// (`CacheStore.keepPartial`); returns the bytes kept, or nil when none were (the file is then deleted).
    @discardableResult
    func keepAsPartial(in store: CacheStore) -> Int64? {
        guard let writer else {
            discard()
            return nil
        }
        self.writer = nil
        return store.keepPartial(writer)
    }

    /// Writes `body` as the whole body file (a body the transport held in memory that the caller gets as a file).
    /// - Throws: `TransportError` from the write.
    func write(_ body: Data) throws {
        let descriptor = try file.open()
        _ = cs_truncate(descriptor, 0)
        _ = cs_seek(descriptor, 0)
        try file.write(body)
    }

    /// The whole body file's bytes, read without following a link in the store's `tmp/`.
    /// - Throws: `CacheStoreError` or the file system's error (the file is missing or unreadable).
    func read() throws -> Data {
        let size = file.size ?? 0
        if let writer { return try writer.contents(size: size) }
        return try Data(contentsOf: file.url)
    }

    /// Deletes the body file (transfer failed or the body was not needed).
    func discard() {
        if let writer {
            writer.abort()
        } else {
            _ = cs_unlink(file.url.path)
        }
        writer = nil
    }

    /// The body file for a caller that keeps it (a response that was not stored); `nil` when it is gone or its
    /// path no longer names the file that was written (a directory on the way was replaced).
    func keep() -> URL? {
        var info = cs_file_info()
        guard (try? file.open()) != nil, let identity = slot.content.withLock({ $0.identity }),
              cs_stat_path(file.url.path, 0, &info) == 0,
              info.device == identity.device, info.inode == identity.inode else {
            return nil
        }
        writer?.detach()
        writer = nil
        return file.url
    }

    /// The store writer holding the body, for `commit`: the writer the body was streamed into, or (for a file in
    /// the private directory) a new one the body is copied into through its descriptor.
    /// - Throws: `CacheStoreError` from `makeBodyWriter`, or the error of reading or writing the copy.
    func moveIntoStore(_ store: CacheStore) throws -> BodyWriter {
        if let writer { return writer }
        let writer = try store.makeBodyWriter()
        do {
            let copy = ResponseBodyFile(url: writer.fileURL, descriptor: try writer.openDescriptor(), ownsDescriptor: false)
            try copy.append(contentsOf: file.url)
        } catch {
            writer.abort()
            throw error
        }
        _ = cs_unlink(file.url.path)
        self.writer = writer
        return writer
    }

    /// After a failed commit: nothing to take back (the body stays in the writer's file while it exists).
    func reclaim() {}
}
