import CacheSystem
import CZlib
import Foundation
import Testing
@testable import CacheStore

/// Body checksums are zlib's crc32 values whichever implementation computes them (libdeflate where the system has
/// it): a store written by one process is verified by any other, and by `verify(repair:)`.
@Suite struct ChecksumMatchesZlibTests {
    static func zlib(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { raw -> UInt32 in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return seed }
            return UInt32(truncatingIfNeeded: crc32_z(uLong(seed), base, z_size_t(raw.count)))
        }
    }

    @Test(arguments: [0, 1, 7, 15, 16, 17, 63, 64, 65, 255, 4096, 65_537, 1 << 20, (1 << 20) + 3])
    func everyLengthGivesZlibsValue(count: Int) {
        let data = bytes(count, seed: UInt8(truncatingIfNeeded: count))
        #expect(BlobFiles.checksum(data) == Self.zlib(data))
    }

    @Test func continuingASeedGivesTheChecksumOfTheWhole() {
        let data = bytes(300_001, seed: 9)
        for cut in [0, 1, 13, 4096, 150_000, 300_000, 300_001] {
            let first = BlobFiles.checksum(data.prefix(cut))
            #expect(BlobFiles.checksum(data.suffix(from: cut), seed: first) == Self.zlib(data), "cut at \(cut)")
        }
    }

    @Test func unalignedBuffersGiveZlibsValue() {
        let data = bytes(10_000, seed: 3)
        for start in 1..<9 {
            let slice = Data(data[start...])
            #expect(BlobFiles.checksum(slice) == Self.zlib(slice), "start \(start)")
        }
    }

    @Test func aStoredBodyIsVerifiedWithTheSameValueZlibGives() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let body = bytes(2 << 20, seed: 5)
        try store.store(body, metadata: Data(), for: StoreKey(primary: "k"))
        #expect(store.info(for: StoreKey(primary: "k"))?.checksum == Self.zlib(body))
        #expect(store.verify(repair: false).problems.isEmpty)
    }

    #if os(Linux)
    /// This machine kind ships libdeflate (Scripts/bootstrap.sh installs it); without it the values stay right but
    /// the fast path would go untested.
    @Test func libdeflateIsUsedWhereTheSystemHasIt() {
        let present = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libdeflate.so.0")
            || FileManager.default.fileExists(atPath: "/usr/lib/aarch64-linux-gnu/libdeflate.so.0")
        #expect(cs_crc32_is_accelerated() == (present ? 1 : 0))
    }
    #endif
}
