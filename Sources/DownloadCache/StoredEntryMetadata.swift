import Foundation
import HTTPCacheSemantics

/// The metadata DownloadCache keeps with every stored response (one JSON value per CacheStore entry).
///
/// The CLI's inspection code decodes it with ``decode(_:)``. The body is the store entry's body.
public struct StoredEntryMetadata: Sendable, Hashable, Codable {
    /// The format version written by this build (1).
    public static let currentVersion = 1

    /// Format version of this value.
    public var version: Int
    /// The request URL the response answers (absolute string).
    public var url: String
    /// The request method the response answers (normally "GET").
    public var method: String
    /// The reason phrase of the stored status.
    public var statusText: String
    /// The stored response: status, headers, request/response times, Vary'd request headers, expiry override.
    public var stored: StoredResponse

    /// Creates a metadata value at the current version.
    public init(url: String, method: String, statusText: String, stored: StoredResponse) {
        self.version = StoredEntryMetadata.currentVersion
        self.url = url
        self.method = method
        self.statusText = statusText
        self.stored = stored
    }

    /// The JSON encoding stored in CacheStore.
    /// - Throws: `EncodingError` (only for values JSON cannot express, e.g. a NaN lifetime).
    public func encoded() throws -> Data {
        try StoredEntryMetadata.encoder.encode(self)
    }

    /// Decodes stored metadata; `nil` when the bytes are not a metadata value of a known version.
    public static func decode(_ data: Data) -> StoredEntryMetadata? {
        guard let value = try? decoder.decode(StoredEntryMetadata.self, from: data),
              value.version <= currentVersion else { return nil }
        return value
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
