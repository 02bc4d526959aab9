/// The secret that keys the hashes of credentials and cookies kept in stored keys (HMAC-SHA-256, RFC 2104),
/// together with the HMAC-SHA-256 function that computes them.
///
/// A stored secondary key never holds an `Authorization`, `Proxy-Authorization` or `Cookie` value, and a
/// credential partition never holds a password: both keep `HMAC-SHA-256(secret, value)` instead. Both the secret
/// and the hash function come from outside (DownloadCache keeps one random 32-byte secret per namespace in the
/// owner-only index and hashes with the platform's crypto library through CacheSystem), so this module stays
/// free of randomness and of cryptographic code. Its bytes are never printed: ``description`` names only the
/// length.
public struct CacheKeySecret: Sendable, Hashable, CustomStringConvertible {
    /// HMAC-SHA-256 (RFC 2104 with SHA-256, FIPS 180-4): the 32-byte digest of `message` under `key`; any other
    /// length means the hash failed.
    public typealias KeyedHash = @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]

    let bytes: [UInt8]
    let hmacSHA256: KeyedHash?

    /// A secret of the given bytes (any length; 32 random bytes is what DownloadCache uses), hashed with
    /// `hmacSHA256`, which must compute HMAC-SHA-256 (secrets of equal bytes are equal).
    public init(bytes: [UInt8], hmacSHA256: @escaping KeyedHash) {
        self.bytes = bytes
        self.hmacSHA256 = hmacSHA256
    }

    private init(unkeyed: Void) {
        bytes = []
        hmacSHA256 = nil
    }

    /// No secret and no hash function: nothing that depends on credentials is ever matched. A credential field
    /// value or a credential partition is kept as ``unavailableTag`` (no plaintext), which matches no request, so
    /// responses that vary on credentials or are partitioned by them are never served.
    public static let none = CacheKeySecret(unkeyed: ())

    /// What stands for a credential value when there is no hash (``none``, or the hash failed); matches nothing.
    public static let unavailableTag = "hmac-sha256:unavailable"

    /// `"CacheKeySecret(<n> bytes)"`, never the bytes.
    public var description: String { "CacheKeySecret(\(bytes.count) bytes)" }

    /// Equal bytes and both with or both without a hash function.
    public static func == (left: CacheKeySecret, right: CacheKeySecret) -> Bool {
        left.bytes == right.bytes && (left.hmacSHA256 == nil) == (right.hmacSHA256 == nil)
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
        hasher.combine(hmacSHA256 == nil)
    }

    /// `"hmac-sha256:"` followed by the 64 lower-case hex digits of HMAC-SHA-256(secret, UTF-8 of `text`);
    /// `nil` when there is no hash function (``none``) or it failed.
    public func tag(_ text: String) -> String? {
        guard let hmacSHA256 else { return nil }
        let digest = hmacSHA256(bytes, Array(text.utf8))
        guard digest.count == 32 else { return nil }
        return Self.tagPrefix + Self.hex(digest)
    }

    /// ``tag(_:)``, or ``unavailableTag`` when there is none.
    func storedTag(_ text: String) -> String { tag(text) ?? Self.unavailableTag }

    /// The prefix of every value ``tag(_:)`` returns.
    public static let tagPrefix = "hmac-sha256:"

    /// Lower-case hex digits of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
