import Foundation
import CacheSystem

/// Body checksums (crc32 with zlib's polynomial, computed by ``CacheSystem``'s `cs_crc32`: libdeflate's where the
/// system has it, zlib's otherwise) and file identity: what tells one version of a blob file from another, so a
/// file whose checksum was verified once need not be read again until it changes.
extension BlobFiles {
    /// What identifies one version of a file: device, inode, size, and modification and change times (ns).
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: cs_file_info) {
            device = info.device
            inode = info.inode
            size = info.size
            modified = info.modified_ns
            changed = info.changed_ns
        }
    }

    /// Checks blob `id` on disk: its size against `expectedSize` on every call, its crc32 (streamed) against
    /// `checksum` unless `isVerified` says this version of the file was checked already.
    /// - Returns: the identity of the file the crc32 was computed from, or nil when `isVerified` skipped it.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` on a size or checksum mismatch or a read error.
    func checkBlob(_ id: String, expectedSize: Int64, checksum: UInt32,
                   isVerified: (FileIdentity) -> Bool) throws(CacheStoreError) -> FileIdentity? {
        try withOpenBlob(id, expectedSize: expectedSize) { (fd, path, identity) throws(CacheStoreError) -> FileIdentity? in
            try Self.check(fd: fd, path: path, identity: identity, expectedSize: expectedSize, checksum: checksum,
                           isVerified: isVerified)
        }
    }

    /// The checks of `checkBlob` on an open descriptor (left positioned anywhere).
    static func check(fd: Int32, path: String, identity: FileIdentity, expectedSize: Int64, checksum: UInt32,
                      isVerified: (FileIdentity) -> Bool) throws(CacheStoreError) -> FileIdentity? {
        if isVerified(identity) { return nil }
        let (size, crc) = try sizeAndChecksum(fd: fd, path: path)
        guard size == expectedSize else {
            throw CacheStoreError(.io, "size mismatch: stored \(expectedSize), read \(size)")
        }
        guard crc == checksum else {
            throw CacheStoreError(.io, "checksum mismatch: stored \(checksum), computed \(crc)")
        }
        return identity
    }

    /// The crc32 of `data` (zlib's value), continuing `seed`.
    static func checksum(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { raw -> UInt32 in
            guard let base = raw.baseAddress, raw.count > 0 else { return seed }
            return cs_crc32(seed, base, raw.count)
        }
    }

    /// The crc32 of `count` bytes of `fd` from `offset`, continuing `seed`; returns the bytes read (fewer only
    /// when the file is shorter) and the checksum. Read in 1 MiB chunks.
    /// - Throws: `CacheStoreError` from `read`.
    static func checksum(fd: Int32, from offset: Int64, count: Int64, seed: UInt32,
                         path: String) throws(CacheStoreError) -> (count: Int64, crc: UInt32) {
        let chunk = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        var crc = seed
        var done: Int64 = 0
        while done < count {
            let n = cs_read_at(fd, buffer, Int(min(Int64(chunk), count - done)), offset + done)
            if n < 0 { throw CacheStoreError.posix(cs_errno(), "read \(path)") }
            if n == 0 { break }
            crc = cs_crc32(crc, buffer, Int(n))
            done += n
        }
        return (done, crc)
    }

    /// Size in bytes and crc32 of the regular file `name` in the directory `fd`, read in 1 MiB chunks.
    /// - Throws: `CacheStoreError` from `open`/`read` (`.unsafeFile` for a symbolic link or non-regular file).
    static func sizeAndChecksum(_ fd: Int32, _ name: String, path: String) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        let file = try openForReading(fd, name, path: path)
        defer { _ = cs_close(file) }
        return try sizeAndChecksum(fd: file, path: path)
    }

    /// Size in bytes and crc32 of what is left to read of the open file `fd` (named `path` in errors),
    /// read in 1 MiB chunks (never whole in memory).
    /// - Throws: `CacheStoreError` from `read`.
    static func sizeAndChecksum(fd: Int32, path: String) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        let chunk = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        var total: Int64 = 0
        while true {
            let n = cs_read(fd, buffer, chunk)
            if n < 0 { throw CacheStoreError.posix(cs_errno(), "read \(path)") }
            if n == 0 { break }
            crc = cs_crc32(crc, buffer, Int(n))
            total += n
        }
        return (total, crc)
    }
}
