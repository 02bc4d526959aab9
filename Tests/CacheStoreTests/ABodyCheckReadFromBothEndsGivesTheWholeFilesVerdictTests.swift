import CacheSystem
import Foundation
import Synchronization
import Testing
@testable import CacheStore

/// `BodyCheck`: the crc32 of a body served while it is checked is read by a front reader (its own thread) and by
/// the caller of `verdict()` from the back; however the file is split between them, the verdict is the whole
/// file's: `.matches` for the stored bytes, `.damaged` (the entry removed once) for a byte changed anywhere or a
/// file shorter than the entry says.
@Suite struct ABodyCheckReadFromBothEndsGivesTheWholeFilesVerdictTests {
    static let claim = Int(BodyCheck.claimBytes)

    /// Who reads the file: only the back reader (the front reader starts after it has read everything), only the
    /// front reader (it ends before `verdict()` is called), or both at once.
    enum Split: CaseIterable, Sendable { case backOnly, frontOnly, both }

    /// A file of `bytes` and a check of it against `checksum` (default: the bytes' own crc32), with the calls to
    /// `onMatch` / `onDamage` counted.
    final class Calls: Sendable {
        let matched = Atomic<Int>(0)
        let damaged = Mutex<[String]>([])
    }

    final class Fixture: Sendable {
        let check: BodyCheck
        let calls = Calls()
        let directory: TemporaryDirectory
        var matched: Int { calls.matched.load(ordering: .relaxed) }
        var damaged: [String] { calls.damaged.withLock { $0 } }

        init(_ bytes: Data, checksum: UInt32? = nil, recordedSize: Int64? = nil) throws {
            directory = TemporaryDirectory()
            let url = directory.url.appendingPathComponent("body")
            try bytes.write(to: url)
            let fd = cs_open_file(url.path, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            guard fd >= 0 else { throw CacheStoreError(.io, "cannot open \(url.path)") }
            var info = cs_file_info()
            _ = cs_stat_fd(fd, &info)
            let size = recordedSize ?? Int64(bytes.count)
            let calls = calls
            check = BodyCheck(body: OpenedBody(fd: fd, url: url, size: size), identity: BlobFiles.FileIdentity(info),
                              size: size, checksum: checksum ?? BlobFiles.checksum(bytes), path: url.path,
                              onMatch: { calls.matched.add(1, ordering: .relaxed) },
                              onDamage: { why in calls.damaged.withLock { $0.append(why) } })
        }

        deinit { directory.remove() }

        func verdict(_ split: Split) async -> BodyCheck.Verdict {
            switch split {
            case .backOnly:
                check.readFromTheBack()
                check.run()
                return await check.verdict()
            case .frontOnly:
                check.run()
                return await check.verdict()
            case .both:
                let check = check
                Thread.detachNewThread { check.run() }
                return await check.verdict()
            }
        }
    }

    /// The first `count` bytes of a pattern that differs in every 4 MiB claim.
    static func bytes(_ count: Int) -> Data { pattern.prefix(count) }
    static let pattern: Data = {
        var data = Data(count: 3 * claim + 12_345)
        data.withUnsafeMutableBytes { raw in
            for i in 0..<raw.count { raw[i] = UInt8(truncatingIfNeeded: i &* 131 &+ i >> 9) }
        }
        return data
    }()

    static let sizes = [0, 1, 1000, claim - 1, claim, claim + 1, 3 * claim + 12_345]

    @Test(arguments: sizes, Split.allCases)
    func theStoredBytesMatchHoweverTheFileIsSplit(size: Int, split: Split) async throws {
        let fixture = try Fixture(Self.bytes(size))
        #expect(await fixture.verdict(split) == .matches)
        #expect(fixture.matched == 1)
        #expect(fixture.damaged.isEmpty)
        switch split {
        case .backOnly: #expect(fixture.check.bytesCheckedFromTheBack == Int64(size))
        case .frontOnly: #expect(fixture.check.bytesCheckedFromTheBack == 0)
        case .both: #expect(fixture.check.bytesCheckedFromTheBack <= Int64(size))
        }
        // Asked again: the same verdict, nothing called twice.
        #expect(await fixture.check.verdict() == .matches)
        #expect(fixture.matched == 1)
    }

    @Test(arguments: [0, claim - 1, claim, 2 * claim + 7, 3 * claim + 12_344], Split.allCases)
    func aByteChangedAnywhereIsFound(at offset: Int, split: Split) async throws {
        let good = Self.bytes(3 * Self.claim + 12_345)
        var bad = good
        bad[offset] ^= 0x01
        let fixture = try Fixture(bad, checksum: BlobFiles.checksum(good))
        guard case .damaged(let why) = await fixture.verdict(split) else {
            Issue.record("a changed byte at \(offset) was not found")
            return
        }
        #expect(why.contains("checksum mismatch"))
        #expect(fixture.damaged == [why])
        #expect(fixture.matched == 0)
        #expect(fixture.check.damage == why)
    }

    @Test(arguments: Split.allCases)
    func aFileShorterThanTheEntryIsDamaged(split: Split) async throws {
        let bytes = Self.bytes(2 * Self.claim + 5)
        let fixture = try Fixture(bytes.prefix(2 * Self.claim), checksum: BlobFiles.checksum(bytes),
                                  recordedSize: Int64(bytes.count))
        guard case .damaged(let why) = await fixture.verdict(split) else {
            Issue.record("a short file was taken for the stored body")
            return
        }
        #expect(why.contains("size mismatch"))
        #expect(fixture.damaged.count == 1)
        #expect(fixture.matched == 0)
    }
}
