import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A change counter shared by every process using one namespace: 8 bytes of `<namespace>/generation`, mapped
/// `MAP_SHARED`.
///
/// Each committed write increments it (under an `flock` on the file, so no increment is lost). A memory tier
/// compares it with the value it last saw on every hit — one load — and empties itself when another process wrote,
/// so a process never serves from memory a body another process has since replaced or removed. When the file
/// cannot be mapped the counter is inert (`current` is always 0) and the memory tier is process-local.
final class SharedGeneration: @unchecked Sendable {
    private let fd: Int32
    private let pointer: UnsafeMutablePointer<UInt64>?

    init(path: String) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        var mapped: UnsafeMutablePointer<UInt64>?
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0, info.st_size >= 8 || ftruncate(fd, 8) == 0 {
                let address = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                if let address, address != MAP_FAILED {
                    mapped = address.bindMemory(to: UInt64.self, capacity: 1)
                }
            }
        }
        self.fd = fd
        self.pointer = mapped
    }

    deinit {
        if let pointer { munmap(UnsafeMutableRawPointer(pointer), 8) }
        if fd >= 0 { close(fd) }
    }

    /// True when the counter is shared through the mapped file (false: inert, process-local caching only).
    var isShared: Bool { pointer != nil }

    /// The current value (0 when the counter is inert).
    @inline(__always)
    var current: UInt64 {
        guard let pointer else { return 0 }
        return UnsafeMutableRawPointer(pointer).withMemoryRebound(to: UInt64.self, capacity: 1) { $0.pointee }
    }

    /// Increments the counter under an exclusive `flock`; `body` gets the values before and after, still under
    /// the lock (the store updates its memory tier's notion of "seen" there).
    func bump(_ body: (UInt64, UInt64) -> Void) {
        guard let pointer, fd >= 0 else { return }
        flock(fd, LOCK_EX)
        let old = pointer.pointee
        let new = old &+ 1
        pointer.pointee = new
        body(old, new)
        flock(fd, LOCK_UN)
    }
}
