import CacheSystem
import HTTPCacheSemantics
import CacheStore
import SharedTier

extension CacheKeySecret {
    /// A secret of `bytes` whose keyed hashes come from the platform's crypto library (CacheSystem's
    /// `cs_hmac_sha256`: CommonCrypto on Apple platforms, OpenSSL libcrypto on Linux).
    static func library(bytes: [UInt8]) -> CacheKeySecret {
        CacheKeySecret(bytes: bytes, hmacSHA256: libraryHMACSHA256)
    }

    /// HMAC-SHA-256(key, message) (RFC 2104) from the crypto library: 32 bytes, or empty when the library fails.
    @Sendable static func libraryHMACSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let status = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                digest.withUnsafeMutableBufferPointer { d in
                    cs_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, d.baseAddress)
                }
            }
        }
        return status == 0 ? digest : []
    }
}
