import CacheStore
import CacheSystem
import Foundation
import HTTPCacheSemantics
import SharedTier

/// Where one response body is streamed: a store body writer's file, created by the store inside its open
/// `tmp/` directory (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), so a stored body is committed where it was
/// written and a `tmp/` swapped for a symbolic link after the cache opened redirects nothing. When the store
/// cannot write, a new file in the cache's private directory (mkdtemp, 0700) instead.
final class BodySink: @unchecked Sendable {
    // @unchecked: used by one exchange at a time; never shared between tasks.
    /// The open file the transport writes the body into.
    let file: ResponseBodyFile
    /// The store's writer owning `file` (nil for a file in the private directory).
    private var writer: BodyWriter?
    /// The identity of the file as created, to tell whether its path still names it.
    private let identity: (device: UInt64, inode: UInt64)?

    /// - Throws: `DownloadError` `.storage` when no body file can be created anywhere.
    init(cache: DownloadCache) throws(DownloadError) {
        if cache.storeDownloadsDirectory != nil, let writer = try? cache.store.makeBodyWriter(),
           writer.fileDescriptor >= 0 {
            self.writer = writer
            file = ResponseBodyFile(url: writer.fileURL, descriptor: writer.fileDescriptor, ownsDescriptor: false)
        } else {
            // The store's directory vanished or became unwritable: the download must still succeed. Only if
            // even the private directory cannot be made: the system temporary directory, under a random name.
            let directory = cache.privateDownloads.url() ?? FileManager.default.temporaryDirectory
            let url = directory.appendingPathComponent("download-" + UUID().uuidString)
            file = ResponseBodyFile(creatingAt: url)
            do {
                try file.open()
            } catch {
                throw DownloadError(.storage, "cannot create a file for the downloaded body: \(error)")
            }
        }
        var info = cs_file_info()
        let descriptor = (try? file.open()) ?? -1
        identity = descriptor >= 0 && cs_stat_fd(descriptor, &info) == 0 ? (info.device, info.inode) : nil
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
        guard let identity, cs_stat_path(file.url.path, 0, &info) == 0,
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
            let copy = ResponseBodyFile(url: writer.fileURL, descriptor: writer.fileDescriptor, ownsDescriptor: false)
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
