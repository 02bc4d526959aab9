import Foundation
import HTTPCacheSemantics

/// The JSON form of ``StoredEntryMetadata`` written byte by byte: the same keys and values `JSONEncoder` writes
/// with `dateEncodingStrategy = .secondsSince1970` (dates and intervals as seconds, `nil` optionals left out,
/// header lists as `{"fields":[{"name":…,"value":…}]}`), so ``StoredEntryMetadata/decode(_:)`` reads either.
/// Every stored response is encoded once per write; `JSONEncoder` builds a tree of boxed values first, which cost
/// more than the rest of committing a small entry.
struct MetadataJSONWriter {
    private(set) var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(1_024)
    }

    /// `metadata` as one JSON object.
    /// - Throws: `EncodingError.invalidValue` for a date or interval that is not finite (JSON has no NaN or
    ///   infinity), as `JSONEncoder` does.
    static func encode(_ metadata: StoredEntryMetadata) throws -> Data {
        var writer = MetadataJSONWriter()
        try writer.write(metadata)
        return Data(writer.bytes)
    }

    private mutating func write(_ metadata: StoredEntryMetadata) throws {
        raw("{\"version\":")
        raw(String(metadata.version))
        raw(",\"url\":")
        string(metadata.url)
        raw(",\"method\":")
        string(metadata.method)
        raw(",\"statusText\":")
        string(metadata.statusText)
        raw(",\"stored\":")
        try write(metadata.stored)
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func write(_ stored: StoredResponse) throws {
        raw("{\"response\":{\"status\":")
        raw(String(stored.response.status))
        raw(",\"headers\":")
        headers(stored.response.headers)
        raw("},\"requestTime\":")
        try number(stored.requestTime.timeIntervalSince1970, "requestTime")
        raw(",\"responseTime\":")
        try number(stored.responseTime.timeIntervalSince1970, "responseTime")
        raw(",\"varyingRequestHeaders\":")
        headers(stored.varyingRequestHeaders)
        raw(",\"requestMethod\":")
        string(stored.requestMethod)
        if let expiry = stored.overrideExpiry {
            raw(",\"overrideExpiry\":")
            try number(expiry.timeIntervalSince1970, "overrideExpiry")
        }
        if let sliding = stored.slidingLifetime {
            raw(",\"slidingLifetime\":")
            try number(sliding, "slidingLifetime")
        }
        if let partition = stored.credentialPartition {
            raw(",\"credentialPartition\":")
            string(partition)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func headers(_ headers: HTTPHeaders) {
        raw("{\"fields\":[")
        for (i, field) in headers.fields.enumerated() {
            raw(i == 0 ? "{\"name\":" : ",{\"name\":")
            string(field.name)
            raw(",\"value\":")
            string(field.value)
            bytes.append(UInt8(ascii: "}"))
        }
        raw("]}")
    }

    /// A finite double in Swift's shortest round-trip form (`1796175955.6578774`, `1e+20`), which JSON reads
    /// back to the same value.
    private mutating func number(_ value: Double, _ key: String) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "\(key) is \(value), which JSON cannot express"))
        }
        raw(value.description)
    }

    private mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// `text` as a JSON string (RFC 8259 §7): `"` and `\` escaped, control characters as `\n`, `\t`, … or
    /// `\u00XX`; everything else as its UTF-8 bytes, runs of plain bytes copied at once.
    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    raw("\\u00")
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0x0F)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
