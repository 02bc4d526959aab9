import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small tmpfs mounts for tests of full and read-only disks: `mount` and `umount` run as child processes, which
/// needs root (in a container or VM); a read-only mount is read-only for root too, unlike file modes.
public enum TestMounts {
    /// Runs `/bin/mount` with `arguments` after the first (`/bin/umount` when the first is `"umount"`), at most
    /// 30 s; true on exit status 0.
    public static func run(_ arguments: [String]) -> Bool {
        let program = arguments.first == "umount" ? "/bin/umount" : "/bin/mount"
        return (try? ChildProcess.runBlocking([program] + arguments.dropFirst(), timeout: .seconds(30)))?.status == 0
    }

    /// True when this process may mount a tmpfs; probed once with a 64 KiB mount.
    public static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-probe-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else {
            return false
        }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.path]) else { return false }
        return run(["umount", probe.path])
    }()
}
