import CacheStore
import Foundation
import HTTPCacheSemantics

/// Where one response body is streamed: a private temporary file, moved into a CacheStore body writer only
/// when a large body is stored (small bodies go inline into the index without any store file).
final class BodySink: @unchecked Sendable {
    // @unchecked: used by one exchange at a time; never shared between tasks.
    let fileURL: URL
    private var writer: BodyWriter?

    init(cache: DownloadCache) {
        // The store's tmp/ while usable, else the cache's private directory (the store's directory vanished or
        // became unwritable: the download must still succeed). Only if neither exists: the system temporary
        // directory, under a random name the transport creates.
        let directory = cache.directoryForNewBody() ?? FileManager.default.temporaryDirectory
        fileURL = directory.appendingPathComponent("download-" + UUID().uuidString)
    }

    /// Writes `body` as the whole body file (a body the transport held in memory that the caller gets as a file).
    /// - Throws: the file system's error.
    func write(_ body: Data) throws {
        try body.write(to: fileURL)
    }

    /// The whole body file's bytes.
    /// - Throws: the file system's error (the file is missing or unreadable).
    func read() throws -> Data {
        try Data(contentsOf: fileURL)
    }

    /// Deletes the body file (transfer failed or the body was not needed).
    func discard() {
        writer?.abort()
        writer = nil
        unlink(fileURL.path)
    }

    /// The body file for a caller that keeps it (a response that was not stored); `nil` when it is gone.
    func keep() -> URL? {
        FileManager.default.fileExists(atPath: fileURL.path) ? fileURL : nil
    }

    /// Moves the body into a new store writer (rename, or copy across file systems) for `commit`.
    /// - Throws: `CacheStoreError` from `makeBodyWriter`, or the file system's error from the move.
    func moveIntoStore(_ store: CacheStore) throws -> BodyWriter {
        let writer = try store.makeBodyWriter()
        if rename(fileURL.path, writer.fileURL.path) != 0 {
            do {
                unlink(writer.fileURL.path)
                try FileManager.default.copyItem(at: fileURL, to: writer.fileURL)
                unlink(fileURL.path)
            } catch {
                writer.abort()
                throw error
            }
        }
        self.writer = writer
        return writer
    }

    /// After a failed commit: takes the body back from the writer's file so the caller still gets it.
    func reclaim() {
        if let writer, FileManager.default.fileExists(atPath: writer.fileURL.path),
           !FileManager.default.fileExists(atPath: fileURL.path) {
            _ = rename(writer.fileURL.path, fileURL.path)
        }
        writer?.abort()
        writer = nil
    }
}
