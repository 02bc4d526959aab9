import CacheSystem
import Synchronization

/// The crc32 check of a stored body that is served while it runs (``CacheStore/openBodyCheckedWhileServed(for:matching:)``):
/// a thread of its own reads the file from the front; a caller of ``verdict()`` — the one that has just served the
/// last byte — reads what is left from the back meanwhile instead of only waiting, and the two crc32 values are
/// joined (`cs_crc32_combine`) where they meet. Its verdict is known once every byte was read once (for 500 MB in
/// the page cache about 0.1 s of one core); a caller that served the bytes meanwhile must not call them good
/// before ``verdict()`` said `.matches`.
public final class BodyCheck: Sendable {
    /// What the check found.
    public enum Verdict: Sendable, Equatable {
        /// The file's size and crc32 are the entry's: the bytes read from it are the stored response.
        case matches
        /// They are not (or the file could not be read to the end): the entry is removed and its file deleted
        /// (as a damaged entry found before serving is), so the next lookup is a miss; the detail says why.
        case damaged(String)
    }

    /// Bytes claimed at once by either reader (4 MiB; each is read in 1 MiB `pread`s).
    static let claimBytes: Int64 = 4 << 20
    /// Bytes per `pread` (1 MiB).
    static let readBytes = 1 << 20

    private struct State {
        var verdict: Verdict?
        var waiters: [CheckedContinuation<Verdict, Never>] = []
        /// Bytes `[0, front)` are claimed by the front reader, `[back, size)` by the back reader; `[front, back)`
        /// is not claimed yet.
        var front: Int64 = 0
        var back: Int64
        /// The crc32 of `[0, front)` once the front reader has ended (nil before).
        var frontCRC: UInt32?
        /// The crc32 of the bytes the back reader has read, `[backRead, size)`.
        var backCRC: UInt32 = 0
        var backRead: Int64
        /// A back reader is running (there is at most one: a second caller of ``verdict()`` only waits).
        var backReading = false
        /// What made either reader stop early (a read error, the file ending before `size`).
        var failure: String?
        /// The verdict is being settled (by whichever reader ended last).
        var settling = false
        /// Bytes the back reader has checked.
        var backBytes: Int64 = 0
    }
    private let state: Mutex<State>
    /// The file being checked, its identity when it was opened, the entry's size and crc32, and its path for errors.
    private let body: OpenedBody
    private let identity: BlobFiles.FileIdentity
    private let size: Int64
    private let checksum: UInt32
    private let path: String
    /// Removes the entry (called once, on a `.damaged` crc32 verdict or a file changed meanwhile).
    private let onDamage: @Sendable (String) -> Void
    /// Called once when the crc32 matched (the store remembers the file's identity as verified).
    private let onMatch: @Sendable () -> Void

    init(body: OpenedBody, identity: BlobFiles.FileIdentity, size: Int64, checksum: UInt32, path: String,
         onMatch: @escaping @Sendable () -> Void, onDamage: @escaping @Sendable (String) -> Void) {
        self.body = body
        self.identity = identity
        self.size = size
        self.checksum = checksum
        self.path = path
        self.onDamage = onDamage
        self.onMatch = onMatch
        state = Mutex(State(back: size, backRead: size))
    }

    /// `.damaged` when the check has ended with a mismatch, else nil (running, or matched so far).
    public var damage: String? {
        if case .damaged(let why)? = state.withLock({ $0.verdict }) { return why }
        return nil
    }

    /// How many bytes the back reader (the callers of ``verdict()``) has checked: 0 when the front reader had
    /// read everything before the first call.
    public var bytesCheckedFromTheBack: Int64 { state.withLock { $0.backBytes } }

    /// Helps the check to its end (reads the unclaimed bytes from the back on the calling thread, 4 MiB at a time,
    /// while the front reader goes on), then waits until it has ended and returns the verdict on the bytes read
    /// from the file until now: `.matches` only when the crc32 matched and the file still has the identity (inode,
    /// size, mtime, ctime) it had when it was opened, so a write into the file while it was being served is not
    /// taken for the stored bytes. Call it after the last byte was read.
    public func verdict() async -> Verdict {
        readFromTheBack()
        let checked = await withCheckedContinuation { (continuation: CheckedContinuation<Verdict, Never>) in
            let known = state.withLock { state -> Verdict? in
                if let verdict = state.verdict { return verdict }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
        guard checked == .matches else { return checked }
        var info = cs_file_info()
        let unchanged = body.withDescriptor { (fd: Int32) -> Bool in cs_stat_fd(fd, &info) == 0 }
            && BlobFiles.FileIdentity(info) == identity
        if unchanged { return .matches }
        let why = "the file changed while it was being served"
        state.withLock { $0.verdict = .damaged(why) }
        onDamage(why)
        return .damaged(why)
    }

    /// The front reader: claims and checks the file from byte 0 on (on the calling thread) until it meets the
    /// back reader or the end, then settles the verdict when the back reader is not in the middle of a claim.
    func run() {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.readBytes)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        while true {
            let claim = state.withLock { state -> (from: Int64, count: Int64)? in
                guard state.failure == nil, state.front < state.back else { return nil }
                let from = state.front
                state.front = min(state.back, from + Self.claimBytes)
                return (from, state.front - from)
            }
            guard let claim else { break }
            guard let next = read(claim.from, claim.count, seed: crc, into: buffer) else { break }
            crc = next
        }
        let ended = state.withLock { state -> Bool in
            state.frontCRC = crc
            return !state.backReading
        }
        if ended { finish() }
    }

    /// The back reader: claims and checks the unclaimed bytes from the end down to where the front reader is,
    /// unless another caller is doing so already; settles the verdict when the front reader has ended.
    func readFromTheBack() {
        let started = state.withLock { state -> Bool in
            guard !state.settling, !state.backReading else { return false }
            state.backReading = true
            return true
        }
        guard started else { return }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.readBytes)
        defer { buffer.deallocate() }
        while true {
            let claim = state.withLock { state -> (from: Int64, count: Int64)? in
                guard state.failure == nil, state.front < state.back else { return nil }
                let from = max(state.front, state.back - Self.claimBytes)
                let count = state.back - from
                state.back = from
                return (from, count)
            }
            guard let claim else { break }
            guard let crc = read(claim.from, claim.count, seed: 0, into: buffer) else { break }
            state.withLock { state in
                state.backCRC = cs_crc32_combine(crc, state.backCRC, size - state.backRead)
                state.backRead = claim.from
                state.backBytes += claim.count
            }
        }
        let ended = state.withLock { state -> Bool in
            state.backReading = false
            return state.frontCRC != nil
        }
        if ended { finish() }
    }

    /// The crc32 of `count` bytes from `offset` continuing `seed`, read through `buffer` (``readBytes`` long);
    /// nil (and the failure recorded, which stops both readers) when the file cannot be read or ends early.
    private func read(_ offset: Int64, _ count: Int64, seed: UInt32, into buffer: UnsafeMutablePointer<UInt8>) -> UInt32? {
        var crc = seed
        var done: Int64 = 0
        var failure: String?
        body.withDescriptor { (fd: Int32) in
            while done < count {
                let n = cs_read_at(fd, buffer, Int(min(Int64(Self.readBytes), count - done)), offset + done)
                if n < 0 {
                    failure = CacheStoreError.posix(cs_errno(), "read \(path)").description
                    return
                }
                if n == 0 {
                    failure = "size mismatch: stored \(size), read \(offset + done)"
                    return
                }
                crc = cs_crc32(crc, buffer, Int(n))
                done += n
            }
        }
        guard let failure else { return crc }
        state.withLock { state in
            if state.failure == nil { state.failure = failure }
        }
        return nil
    }

    /// Joins the two readers' crc32 values and settles the verdict (once: both readers may get here).
    private func finish() {
        let verdict = state.withLock { state -> Verdict? in
            guard !state.settling, let frontCRC = state.frontCRC, !state.backReading else { return nil }
            state.settling = true
            if let failure = state.failure { return .damaged(failure) }
            // The front reader stopped where the back reader had got to: [0, backRead) and [backRead, size).
            let crc = cs_crc32_combine(frontCRC, state.backCRC, size - state.backRead)
            return crc == checksum ? .matches : .damaged("checksum mismatch: stored \(checksum), computed \(crc)")
        }
        if let verdict { settle(verdict) }
    }

    /// Removes the entry on `.damaged` (before anyone can see the verdict), records the verdict and wakes the
    /// waiters.
    private func settle(_ verdict: Verdict) {
        switch verdict {
        case .damaged(let why): onDamage(why)
        case .matches: onMatch()
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Verdict, Never>] in
            state.verdict = verdict
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: verdict) }
    }
}
