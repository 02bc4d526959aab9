import Foundation

/// The metadata stored next to every model value in the `CacheStore` entry: what wrote it and when.
struct ModelRecordMetadata: Codable, Sendable, Equatable {
    /// Format of this record; bumped if its fields change.
    static let currentFormat = 1

    /// Format of this record.
    var format: Int
    /// `String(reflecting:)` of the stored value's type.
    var typeName: String
    /// `VersionedModel.modelVersion` (or the per-call version) at write time.
    var typeVersion: Int
    /// `Configuration.cacheVersion` at write time.
    var cacheVersion: String
    /// Seconds since 1970 at write time (the cache's clock).
    var savedAt: Double
    /// The encoding of the body.
    var encoding: ModelEncoding

    /// Encodes the record as compact JSON.
    func encoded() throws -> Data {
        try JSONEncoder().encode(self)
    }

    /// Decodes a record; throws if the bytes are not a record of a known format.
    static func decode(_ data: Data) throws -> ModelRecordMetadata {
        let record = try JSONDecoder().decode(ModelRecordMetadata.self, from: data)
        guard record.format == currentFormat else {
            throw DecodingError.dataCorrupted(.init(codingPath: [],
                debugDescription: "unknown metadata format \(record.format)"))
        }
        return record
    }
}

/// Encodes and decodes model values in a `ModelEncoding`.
enum ModelCodec {
    /// One-field container: property lists cannot hold a top-level scalar.
    private struct Box<Value: Codable>: Codable {
        var v: Value
    }

    /// The type name recorded for `type`.
    static func typeName<T>(_ type: T.Type) -> String {
        String(reflecting: type)
    }

    /// The model version of `type`: `VersionedModel.modelVersion`, or 0 for types that don't adopt it.
    static func typeVersion<T>(_ type: T.Type) -> Int {
        (type as? any VersionedModel.Type)?.modelVersion ?? 0
    }

    /// Encodes `value`; throws the encoder's error.
    static func encode<T: Encodable>(_ value: T, as encoding: ModelEncoding) throws -> Data where T: Decodable {
        switch encoding {
        case .json:
            return try JSONEncoder().encode(value)
        case .propertyList:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return try encoder.encode(Box(v: value))
        }
    }

    /// Decodes a `T` from `data`; throws the decoder's error.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, encoding: ModelEncoding) throws -> T
    where T: Encodable {
        switch encoding {
        case .json:
            return try JSONDecoder().decode(T.self, from: data)
        case .propertyList:
            return try PropertyListDecoder().decode(Box<T>.self, from: data).v
        }
    }
}
