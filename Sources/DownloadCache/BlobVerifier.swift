#if canImport(CZlib)
import CZlib
#endif
import Foundation
import Synchronization

/// Checks a stored body file against the index's size and crc32 before it is served (DESIGN: never serve a
/// body that does not match its entry).
///
/// CacheStore's `bodyFileURL(for:)` hands out the blob path without verifying it (only `entry(for:)`, which
/// loads the body into memory, does). The size is checked on every call (one `stat`); the crc32 is computed by
/// streaming the file in 1 MiB chunks (never whole in memory) and remembered per file identity (device, inode,
/// size, modification and change times in ns), so an unchanged blob is hashed once per process. A blob
/// rewritten or truncated in place changes its size or times and is hashed again.
final class BlobVerifier: Sendable {
    /// One version of a file: what `stat` says about it.
    struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
        }
    }

    private struct Verified: Hashable, Sendable {
        var identity: FileIdentity
        var checksum: UInt32
    }

    private let verified = Mutex<[String: Verified]>([:])
    private let capacity = 100_000

    /// Why a body file was rejected, in words; `nil` when it matches `size` bytes and crc32 `checksum`.
    func problem(with url: URL, size: Int64, checksum: UInt32) -> String? {
        let path = url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "cannot open \(path): errno \(errno)" }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return "cannot stat \(path): errno \(errno)" }
        guard Int64(info.st_size) == size else { return "size of \(path) is \(info.st_size), index says \(size)" }
        let identity = FileIdentity(info)
        let known = Verified(identity: identity, checksum: checksum)
        if verified.withLock({ $0[path] == known }) { return nil }
        guard let (count, crc) = Self.sizeAndChecksum(fd: fd) else { return "cannot read \(path): errno \(errno)" }
        guard count == size else { return "read \(count) bytes of \(path), index says \(size)" }
        guard crc == checksum else { return "crc32 of \(path) is \(crc), index says \(checksum)" }
        verified.withLock { map in
            if map.count >= capacity { map.removeAll(keepingCapacity: true) }
            map[path] = known
        }
        return nil
    }

    /// Forgets what was verified about `url` (after the entry was removed).
    func forget(_ url: URL) {
        _ = verified.withLock { $0.removeValue(forKey: url.path) }
    }

    /// Bytes read and zlib-compatible crc32 of the open file `fd`, streamed in 1 MiB chunks; `nil` on a read error.
    static func sizeAndChecksum(fd: Int32) -> (Int64, UInt32)? {
        let chunk = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        var crc = CRC32()
        var total: Int64 = 0
        while true {
            let n = read(fd, buffer, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            crc.update(UnsafeBufferPointer(start: buffer, count: n))
            total += Int64(n)
        }
        return (total, crc.value)
    }
}

/// Running crc32 (ISO-HDLC, zlib's `crc32`): zlib itself where the CZlib module is importable, else a table.
struct CRC32 {
    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        #if canImport(CZlib)
        value = UInt32(crc32_z(uLong(value), base, z_size_t(bytes.count)))
        #else
        var crc = ~value
        for byte in bytes {
            crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        value = ~crc
        #endif
    }

    #if !canImport(CZlib)
    private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var c = UInt32(index)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
    #endif
}
