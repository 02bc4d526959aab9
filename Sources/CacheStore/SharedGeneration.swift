import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A change counter shared by every process using one namespace: 8 bytes of `<namespace>/generation`, mapped
/// `MAP_SHARED` and accessed only with atomic operations (lock-free 64-bit atomics work across processes).
///
/// Each committed write increments it. A memory tier or row cache compares it with the value it last saw — one
/// atomic load — and empties itself when it changed, so a process never serves from memory a body another process
/// has since replaced or removed. When the file cannot be mapped the counter is inert (`isShared` is false,
/// `current` is always 0) and the store's caches are process-local.
final class SharedGeneration: @unchecked Sendable {
    private let fd: Int32
    private let counter: UnsafeMutablePointer<Atomic<UInt64>>?

    /// Maps the counter file at `path`, creating it unless `readOnly` (then it is mapped `PROT_READ` when it
    /// exists with its 8 bytes, else the counter is inert).
    init(path: String, readOnly: Bool = false) {
        let fd = readOnly ? open(path, O_RDONLY | O_CLOEXEC) : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        var mapped: UnsafeMutablePointer<Atomic<UInt64>>?
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0, info.st_size >= 8 || (!readOnly && ftruncate(fd, 8) == 0) {
                let protection = readOnly ? PROT_READ : PROT_READ | PROT_WRITE
                let address = mmap(nil, 8, protection, MAP_SHARED, fd, 0)
                if let address, address != MAP_FAILED {
                    // The file's 8 bytes (zero when new) are the atomic's storage; nothing is initialised here.
                    // A read-only mapping is only ever loaded from (`bump` is never called on a read-only store).
                    mapped = address.bindMemory(to: Atomic<UInt64>.self, capacity: 1)
                }
            }
        }
        self.fd = fd
        self.counter = mapped
    }

    deinit {
        if let counter { munmap(UnsafeMutableRawPointer(counter), 8) }
        if fd >= 0 { close(fd) }
    }

    /// True when the counter is shared through the mapped file (false: inert, process-local caching only).
    var isShared: Bool { counter != nil }

    /// The current value (0 when the counter is inert).
    @inline(__always)
    var current: UInt64 {
        counter?.pointee.load(ordering: .acquiring) ?? 0
    }

    /// Increments the counter atomically; `body` gets the values before and after (the store updates its memory
    /// tier's notion of "seen" with them: a tier that had not seen `old` empties itself).
    func bump(_ body: (UInt64, UInt64) -> Void) {
        guard let counter else { return }
        let (old, new) = counter.pointee.wrappingAdd(1, ordering: .acquiringAndReleasing)
        body(old, new)
    }
}
