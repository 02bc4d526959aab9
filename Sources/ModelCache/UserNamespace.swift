import Foundation

/// Maps a base namespace and a user identifier to a `CacheStore` namespace name.
///
/// Store namespaces allow only `[A-Za-z0-9._-]`, 1–64 characters, while user ids may be e-mail addresses or
/// anything else. The name is `<base>.u-<readable prefix>-<FNV-1a 64 of the user id, 16 hex digits>`: the
/// prefix keeps directories recognisable, the hash keeps two users whose ids sanitise alike apart.
enum UserNamespace {
    /// Longest accepted base namespace.
    static let maxBaseLength = 24
    /// Longest readable prefix of the user id kept in the name.
    static let maxUserPrefixLength = 20

    /// Throws `ModelCacheError.invalidNamespace` unless `base` is 1–24 characters of `[A-Za-z0-9._-]`
    /// and not "." or "..".
    static func validate(base: String) throws(ModelCacheError) {
        guard !base.isEmpty, base.count <= maxBaseLength, base != ".", base != "..",
              base.unicodeScalars.allSatisfy(isAllowed) else {
            throw .invalidNamespace(base)
        }
    }

    /// The store namespace for `user` under `base`; `base` itself when `user` is nil.
    static func name(base: String, user: String?) -> String {
        guard let user else { return base }
        var prefix = String(String.UnicodeScalarView(user.unicodeScalars.map { isAllowed($0) ? $0 : "_" }))
        if prefix.count > maxUserPrefixLength { prefix = String(prefix.prefix(maxUserPrefixLength)) }
        let hash = String(fnv1a64(user), radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - hash.count)) + hash
        return "\(base).u-\(prefix)-\(padded)"
    }

    /// FNV-1a, 64 bits, over the UTF-8 bytes: stable across runs and platforms (unlike `Hasher`).
    static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": return true
        default: return false
        }
    }
}
