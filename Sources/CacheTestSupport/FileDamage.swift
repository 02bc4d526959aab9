import Foundation

/// Damage done to a stored file in place, as a failing disk or another process would.
public enum FileDamage {
    /// A byte that could not be read to be damaged (`offset` at or past the end of the file).
    public struct NoByteError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Flips every bit of the byte at `offset` of `url`; the size stays, the modification time is new.
    /// - Throws: ``NoByteError`` when the file has no byte at `offset`, or the file handle's error.
    public static func flipByte(of url: URL, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        guard let byte = try handle.read(upToCount: 1)?.first else {
            throw NoByteError(description: "\(url.path) has no byte at offset \(offset)")
        }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([byte ^ 0xFF]))
    }
}
