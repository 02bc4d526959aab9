import Foundation
import Testing
@testable import HTTPCacheSemantics

/// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 4231 test vectors) of the crypto library behind the tests'
/// ``CacheKeySecret``s (CacheSystem: OpenSSL libcrypto on Linux, CommonCrypto on Apple platforms), and the tags.
@Suite struct KeyedHashTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256(message: String, expected: String) {
        #expect(CacheKeySecret.hex(Fixture.sha256(Array(message.utf8))) == expected)
    }

    @Test func sha256OfAMillionAs() {
        let digest = Fixture.sha256([UInt8](repeating: 0x61, count: 1_000_000))
        #expect(CacheKeySecret.hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
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
        #expect(CacheKeySecret.hex(Fixture.hmacSHA256(key: key, message: message)) == expected)
    }

    @Test func hmacOfEmptyKeyAndMessage() {
        #expect(CacheKeySecret.hex(Fixture.hmacSHA256(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func tagDependsOnTheSecretAndNeverShowsIt() throws {
        let a = Fixture.secret(Array("secret-a".utf8)), b = Fixture.secret(Array("secret-b".utf8))
        let tag = try #require(a.tag("Bearer t0k3n"))
        #expect(tag != b.tag("Bearer t0k3n"))
        #expect(tag == a.tag("Bearer t0k3n"))
        #expect(tag.hasPrefix("hmac-sha256:") && tag.utf8.count == 12 + 64)
        #expect(!tag.contains("t0k3n"))
        #expect(!"\(a)".contains("secret-a"))
        // The stored format: RFC 4231 test case 2 as a tag.
        #expect(Fixture.secret(Array("Jefe".utf8)).tag("what do ya want for nothing?")
                == "hmac-sha256:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func noHashFunctionGivesNoTagAndAFailedHashNone() {
        #expect(CacheKeySecret.none.tag("Bearer t0k3n") == nil)
        #expect(CacheKeySecret(bytes: [1], hmacSHA256: { _, _ in [] }).tag("Bearer t0k3n") == nil)
    }
}
