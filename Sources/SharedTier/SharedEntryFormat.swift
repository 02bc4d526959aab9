import CZlib
import Foundation

/// One entry as the shared tier keeps it: opaque to this module (the client's metadata and body bytes).
public struct SharedEntry: Sendable, Hashable {
    /// The variant (secondary key) the entry was written for; `""` when the primary key has one variant.
    public var variant: String
    /// The client's metadata bytes (the stored response head), returned unchanged.
    public var metadata: Data
    /// The body bytes.
    public var body: Data

    /// Creates an entry value.
    public init(variant: String, metadata: Data, body: Data) {
        self.variant = variant
        self.metadata = metadata
        self.body = body
    }
}

/// Key names of one namespace on Redis, laid out for Redis Cluster: an entry's keys and its lock share a hash
/// tag, so they live in one slot and one script may touch them all.
///
/// `<prefix>:<scope>:{<h>}:e` is a hash (field = variant hash, value = framed entry) holding every variant of a
/// primary key; `<prefix>:<scope>:{<h>}:l` is the fleet lock. `<h>` is a 128-bit FNV-1a hash of the primary
/// key: a collision only makes two keys share a hash, and the identity framed into each value (checked on read)
/// keeps one key's value from ever answering another.
struct SharedKeyLayout: Sendable {
    /// `<prefix>:<scope>:` — every key of this scope starts with it.
    let prefix: String
    /// The identity scope (mode and namespace), framed into every value.
    let scope: String

    init(keyPrefix: String, scope: String) {
        self.scope = scope
        self.prefix = "\(keyPrefix):\(scope):"
    }

    func entriesKey(_ primary: String) -> Data { Data("\(prefix){\(Self.hash128(primary))}:e".utf8) }
    func lockKey(_ primary: String) -> Data { Data("\(prefix){\(Self.hash128(primary))}:l".utf8) }
    func field(_ variant: String) -> Data { Data(Self.hash64(variant, seed: Self.fnvOffset).hex.utf8) }

    private static let fnvOffset: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let fnvPrime: UInt64 = 0x0000_0100_0000_01b3

    static func hash64(_ text: String, seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* fnvPrime
        }
        return hash
    }

    /// Two FNV-1a 64-bit hashes with different offsets, as 32 hex digits.
    static func hash128(_ text: String) -> String {
        hash64(text, seed: fnvOffset).hex + hash64(text, seed: fnvOffset ^ 0x9e37_79b9_7f4a_7c15).hex
    }
}

extension UInt64 {
    /// 16 lower-case hex digits.
    var hex: String {
        let digits = String(self, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The bytes of one value on Redis: everything a reader needs to refuse a value that is not exactly what the
/// writer stored for this key.
///
/// `"DLCS" | version 1 | u32 identity length | identity (``identity(scope:primary:variant:)``) | u32 metadata length | metadata | u64 body length | body |
/// u32 crc32 of everything before it` (big-endian). The identity names scope, primary key and variant: a value
/// copied under another key, another namespace or another mode does not match and is refused. Every length is
/// checked against the bytes that are actually there and against the configured limits before anything is
/// sliced, and the value must end exactly after the checksum.
enum SharedEntryFormat {
    static let magic = Data("DLCS".utf8)
    static let version: UInt8 = 1
    static let maxIdentityBytes = 64 << 10
    static let maxMetadataBytes = 1 << 20

    /// `u32 length | scope | u32 length | primary key | variant`: length-prefixed, so no choice of characters in
    /// a key can make one identity read as another.
    static func identity(scope: String, primary: String, variant: String) -> Data {
        var out = identityPrefix(scope: scope, primary: primary)
        out.append(Data(variant.utf8))
        return out
    }

    static func identityPrefix(scope: String, primary: String) -> Data {
        var out = Data()
        for part in [scope, primary] {
            let bytes = Data(part.utf8)
            append(UInt32(bytes.count), to: &out)
            out.append(bytes)
        }
        return out
    }

    static func encode(identity: Data, metadata: Data, body: Data) -> Data {
        var out = Data()
        out.reserveCapacity(magic.count + 21 + identity.count + metadata.count + body.count)
        out.append(magic)
        out.append(version)
        append(UInt32(identity.count), to: &out)
        out.append(identity)
        append(UInt32(metadata.count), to: &out)
        out.append(metadata)
        append(UInt64(body.count), to: &out)
        out.append(body)
        append(checksum(out), to: &out)
        return out
    }

    /// Why a value was refused (for the log and the statistics).
    enum Refusal: Error, Equatable {
        case malformed(String)
        case checksum
        case otherKey
        case tooLarge
    }

    /// The entry framed in `value` when it is intact and was written for `scope` + `primary`.
    /// - Throws: ``Refusal`` for anything else (then the caller deletes the value and counts a miss).
    static func decode(_ value: Data, scope: String, primary: String, maxBodyBytes: Int) throws(Refusal) -> SharedEntry {
        let bytes = [UInt8](value)
        var reader = Reader(bytes: bytes)
        guard bytes.count >= magic.count + 1 + 4 + 4 + 8 + 4 else { throw .malformed("\(bytes.count) bytes") }
        guard Array(try reader.take(magic.count)) == [UInt8](magic) else { throw .malformed("magic") }
        guard Array(try reader.take(1)) == [version] else { throw .malformed("version") }
        let identityLength = Int(try reader.u32())
        guard identityLength <= maxIdentityBytes else { throw .malformed("identity length") }
        let identity = try reader.take(identityLength)
        let metadataLength = Int(try reader.u32())
        guard metadataLength <= maxMetadataBytes else { throw .malformed("metadata length") }
        let metadata = try reader.take(metadataLength)
        let bodyLength = try reader.u64()
        guard bodyLength <= UInt64(maxBodyBytes) else { throw .tooLarge }
        let body = try reader.take(Int(bodyLength))
        let checksumOffset = reader.offset
        let stored = try reader.u32()
        guard reader.offset == bytes.count else { throw .malformed("trailing bytes") }
        let computed = bytes.withUnsafeBufferPointer { buffer -> UInt32 in
            UInt32(truncatingIfNeeded: crc32(0, buffer.baseAddress, uInt(checksumOffset)))
        }
        guard computed == stored else { throw .checksum }
        let expectedPrefix = [UInt8](identityPrefix(scope: scope, primary: primary))
        guard identity.count >= expectedPrefix.count, Array(identity.prefix(expectedPrefix.count)) == expectedPrefix else {
            throw .otherKey
        }
        guard let variant = String(bytes: identity.dropFirst(expectedPrefix.count), encoding: .utf8) else {
            throw .malformed("variant")
        }
        return SharedEntry(variant: variant, metadata: Data(metadata), body: Data(body))
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) throws(Refusal) -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw .malformed("length beyond the value") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        mutating func u32() throws(Refusal) -> UInt32 {
            try take(4).reduce(0) { ($0 << 8) | UInt32($1) }
        }

        mutating func u64() throws(Refusal) -> UInt64 {
            try take(8).reduce(0) { ($0 << 8) | UInt64($1) }
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { data.append(contentsOf: $0) }
    }

    private static func checksum(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { raw -> UInt32 in
            let base = raw.bindMemory(to: Bytef.self).baseAddress
            return UInt32(truncatingIfNeeded: crc32(0, base, uInt(raw.count)))
        }
    }
}
