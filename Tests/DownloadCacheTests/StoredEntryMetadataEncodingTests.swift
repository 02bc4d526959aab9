import Foundation
import HTTPCacheSemantics
import Testing
@testable import DownloadCache

/// The metadata JSON written byte by byte is the JSON `JSONEncoder` writes (same keys and values) and decodes
/// back to the same value, whatever the strings hold.
@Suite struct StoredEntryMetadataEncodingTests {
    static func reference(_ metadata: StoredEntryMetadata) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(metadata)
    }

    static func metadata(text: String, optionals: Bool, time: Double) -> StoredEntryMetadata {
        let stored = StoredResponse(
            response: CacheResponse(status: 200, headers: [("Content-Type", "text/html"), ("X-\(text.isEmpty ? "E" : "T")", text),
                                                            ("ETag", "\"abc\\\"d\""), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]),
            requestTime: Date(timeIntervalSince1970: time), responseTime: Date(timeIntervalSince1970: time + 0.25),
            varyingRequestHeaders: optionals ? [("Accept-Language", text)] : [], requestMethod: "GET",
            overrideExpiry: optionals ? Date(timeIntervalSince1970: time * 2) : nil,
            slidingLifetime: optionals ? 3_600.5 : nil, credentialPartition: optionals ? "anonymous" : nil)
        return StoredEntryMetadata(url: "https://example.com/a?q=\(text)", method: "GET", statusText: text, stored: stored)
    }

    static let texts: [String] = {
        var all = ["", "plain", "quote \" backslash \\ slash /", "café — 中文 😀", "\u{2028}\u{2029}", "tab\tnl\ncr\r",
                   String(repeating: "long run of safe bytes ", count: 200)]
        // Every ASCII byte, control characters included, alone and between plain text.
        for byte in 0..<128 {
            let scalar = String(UnicodeScalar(UInt8(byte)))
            all.append(scalar)
            all.append("a\(scalar)b")
        }
        return all
    }()

    @Test func everyStringDecodesToTheSameValueAndMatchesJSONEncoder() throws {
        for (i, text) in Self.texts.enumerated() {
            for optionals in [false, true] {
                let times = [1_796_175_955.6578774, 0, -1.5, 1e20, 123.000001]
                let value = Self.metadata(text: text, optionals: optionals, time: times[i % times.count])
                let ours = try value.encoded()
                #expect(StoredEntryMetadata.decode(ours) == value, "\(text.debugDescription) optionals=\(optionals)")
                let theirs = try Self.reference(value)
                let oursObject = try JSONSerialization.jsonObject(with: ours) as? NSDictionary
                let theirsObject = try JSONSerialization.jsonObject(with: theirs) as? NSDictionary
                #expect(oursObject != nil)
                #expect(oursObject == theirsObject, "\(String(decoding: ours, as: UTF8.self))")
            }
        }
    }

    @Test func aValueJSONCannotExpressIsAnEncodingError() {
        var value = Self.metadata(text: "x", optionals: true, time: 10)
        value.stored.slidingLifetime = .nan
        #expect(throws: EncodingError.self) { try value.encoded() }
        value.stored.slidingLifetime = nil
        value.stored.overrideExpiry = Date(timeIntervalSince1970: .infinity)
        #expect(throws: EncodingError.self) { try value.encoded() }
    }
}
