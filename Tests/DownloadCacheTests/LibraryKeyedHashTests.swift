import Testing
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// The keyed hash DownloadCache stores credentials with: HMAC-SHA-256 of the platform's crypto library
/// (RFC 4231 test vectors), in the stored format `hmac-sha256:<hex>`.
@Suite struct LibraryKeyedHashTests {
    @Test(arguments: [
        ([UInt8](repeating: 0x0b, count: 20), "Hi There",
         "hmac-sha256:b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), "what do ya want for nothing?",
         "hmac-sha256:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
         "hmac-sha256:60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ([], "", "hmac-sha256:b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
    ])
    func tagIsRFC4231HMACSHA256(key: [UInt8], message: String, expected: String) {
        #expect(CacheKeySecret.library(bytes: key).tag(message) == expected)
    }
}
