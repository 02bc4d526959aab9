import Foundation
import CacheSystem
import Synchronization

/// A change counter shared by every process using one namespace: 8 bytes of `<namespace>/generation`, mapped
/// shared and accessed only with atomic operations (lock-free 64-bit atomics work across processes).
///
/// Each committed write increments it. A memory tier or row cache compares it with the value it last saw — one
/// atomic load — and empties itself when it changed, so a process never serves from memory a body another process
/// has since replaced or removed. When the file cannot be mapped (missing in a read-only store, a symbolic link,
/// a FIFO, no guard slot) the counter is inert (`isShared` is false, `current` is always 0) and the store's caches
/// are process-local.
///
/// The file may be tampered with while mapped: any content is just a number, and a file truncated under the
/// mapping (which would raise SIGBUS on the next access) is caught by the system layer's guard, which puts a
/// private zero page in its place. From then on the counter is `lost`: `current` returns a new value on every
/// call, so the memory tier never serves a body another process may have replaced (it keeps missing, and reads
/// go to the index), and the store logs it once.
final class SharedGeneration: @unchecked Sendable {
    private let fd: Int32
    private let address: UnsafeMutableRawPointer?
    /// The system layer's guard slot; -1 once detached (the slot is then free for another mapping).
    private let guardSlot: Atomic<Int32>
    private let counter: UnsafeMutablePointer<Atomic<UInt64>>?
    /// Counts up when the mapping was lost, so every `current` differs from the last.
    private let lostTicks = Atomic<UInt64>(1 << 63)
    private let reportedLoss = Atomic<Bool>(false)
    private let onLoss: @Sendable () -> Void

    /// Maps the counter file `name` in the directory `directory`, creating it (0600) unless `readOnly` (then it
    /// is mapped read-only when it exists with at least 8 bytes, else the counter is inert). A writable opener
    /// grows a shorter file to 8 bytes. `onLoss` runs once when the file is truncated under the mapping.
    init(directory: Int32, name: String, readOnly: Bool = false, onLoss: @escaping @Sendable () -> Void = {}) {
        self.onLoss = onLoss
        let fd = readOnly ? cs_open_file_at(directory, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            : cs_open_file_at(directory, name, CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0o600)
        var mapped: UnsafeMutableRawPointer?
        var slot: Int32 = -1
        if fd >= 0 {
            var info = cs_file_info()
            // A hard link's other names are not the store's: never write into a file linked elsewhere.
            if cs_stat_fd(fd, &info) == 0, readOnly || info.links == 1,
               info.size >= 8 || (!readOnly && cs_truncate(fd, 8) == 0),
               let address = cs_map_shared(fd, 8, readOnly ? 0 : 1) {
                slot = cs_guard_mapping(address)
                if slot >= 0 {
                    mapped = address
                } else {
                    _ = cs_unmap(address, 8)
                }
            }
        }
        self.fd = fd
        self.address = mapped
        self.guardSlot = Atomic(slot)
        // The file's 8 bytes (zero when new) are the atomic's storage; nothing is initialised here. A read-only
        // mapping is only ever loaded from (`bump` is never called on a read-only store).
        self.counter = mapped?.bindMemory(to: Atomic<UInt64>.self, capacity: 1)
    }

    deinit {
        if let address {
            detach()
            _ = cs_unmap(address, 8)
        }
        if fd >= 0 { _ = cs_close(fd) }
    }

    /// True when the counter is shared through the mapped file (false: inert, process-local caching only).
    var isShared: Bool { counter != nil }

    /// True once the file was truncated under the mapping (see the type's comment).
    var isLost: Bool {
        let slot = guardSlot.load(ordering: .relaxed)
        return slot >= 0 && cs_mapping_lost(slot) != 0
    }

    /// The current value (0 when the counter is inert; a new value on every call once it is lost).
    @inline(__always)
    var current: UInt64 {
        guard let counter else { return 0 }
        let value = counter.pointee.load(ordering: .acquiring)
        if _slowPath(isLost) { return lostValue() }
        return value
    }

    private func lostValue() -> UInt64 {
        if !reportedLoss.exchange(true, ordering: .relaxed) { onLoss() }
        return lostTicks.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Stops sharing (the store closed): the mapping becomes private memory at the same address, so a thread still
    /// loading from it is safe, and the guard slot and the file are released. Calling it twice does nothing.
    func detach() {
        let slot = guardSlot.exchange(-1, ordering: .acquiringAndReleasing)
        guard slot >= 0, let address else { return }
        _ = cs_detach_mapping(address, 8)
        cs_unguard_mapping(slot)
    }

    /// Increments the counter atomically; `body` gets the values before and after (the store updates its memory
    /// tier's notion of "seen" with them: a tier that had not seen `old` empties itself).
    func bump(_ body: (UInt64, UInt64) -> Void) {
        guard let counter else { return }
        let (old, new) = counter.pointee.wrappingAdd(1, ordering: .acquiringAndReleasing)
        if isLost {
            let value = lostValue()
            body(value &- 1, value)  // "not seen": the tier empties itself
            return
        }
        body(old, new)
    }
}
