import Foundation
import Testing
@testable import HTTPCacheSemantics

/// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 4231 test vectors) behind ``CacheKeySecret``.
@Suite struct KeyedHashTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256(message: String, expected: String) {
        #expect(SHA256.hex(SHA256.hash(Array(message.utf8))) == expected)
    }

    @Test func sha256OfAMillionAs() {
        let digest = SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000))
        #expect(SHA256.hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(arguments: [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ])
    func hmacRFC4231(key: [UInt8], message: [UInt8], expected: String) {
        #expect(SHA256.hex(SHA256.hmac(key: key, message: message)) == expected)
    }

    @Test func tagDependsOnTheSecretAndNeverShowsIt() {
        let a = CacheKeySecret(bytes: Array("secret-a".utf8)), b = CacheKeySecret(bytes: Array("secret-b".utf8))
        #expect(a.tag("Bearer t0k3n") != b.tag("Bearer t0k3n"))
        #expect(a.tag("Bearer t0k3n") == a.tag("Bearer t0k3n"))
        #expect(a.tag("x").hasPrefix("hmac-sha256:") && a.tag("x").utf8.count == 12 + 64)
        #expect(!a.tag("Bearer t0k3n").contains("t0k3n"))
        #expect(!"\(a)".contains("secret-a"))
    }
}
