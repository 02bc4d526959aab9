import Foundation

/// The bodies `dlcache-bench store-child-writer` writes, so the multi-process tests can check what a killed or
/// concurrent child stored (one generator for the child and the tests).
public enum ChildWriterData {
    /// The deterministic body of write `index` by writer `seed`: 0–50,000 bytes (inline and file-backed sizes),
    /// xorshift64 bytes.
    public static func body(seed: Int, index: Int) -> Data {
        let size = (index &* 7_919 &+ seed &* 104_729) % 50_000
        var data = Data(count: size)
        var x = UInt64(truncatingIfNeeded: seed &* 1_000_003 &+ index) | 1
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            for i in 0..<size {
                x ^= x << 13
                x ^= x >> 7
                x ^= x << 17
                raw[i] = UInt8(truncatingIfNeeded: x)
            }
        }
        return data
    }
}
