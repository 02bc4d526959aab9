import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

/// The metadata DownloadCache keeps with every stored response (one JSON value per CacheStore entry).
///
/// The CLI's inspection code decodes it with ``decode(_:)``. The body is the store entry's body.
public struct StoredEntryMetadata: Sendable, Hashable, Codable {
    /// The format version written by this build (1).
    public static let currentVersion = 1

    /// Format version of this value.
    public var version: Int
    /// The request URL the response answers (absolute string), never with user info (credentials, RFC 9110
    /// §4.2.4): ``init(url:method:statusText:stored:)`` strips `user:password@`.
    public var url: String
    /// The request method the response answers (normally "GET").
    public var method: String
    /// The reason phrase of the stored status.
    public var statusText: String
    /// The stored response: status, headers, request/response times, Vary'd request headers, expiry override.
    public var stored: StoredResponse

    /// Creates a metadata value at the current version; user info in `url` is removed (RFC 9110 §4.2.4).
    public init(url: String, method: String, statusText: String, stored: StoredResponse) {
        self.version = StoredEntryMetadata.currentVersion
        self.url = StoredEntryMetadata.withoutUserInfo(url)
        self.method = method
        self.statusText = statusText
        self.stored = stored
    }

    /// `url` without its `user[:password]@` part; unchanged when it has none or does not parse.
    public static func withoutUserInfo(_ url: String) -> String {
        guard var components = URLComponents(string: url),
              components.percentEncodedUser != nil || components.percentEncodedPassword != nil else { return url }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.string ?? url
    }

    /// The JSON encoding stored in CacheStore (written by ``MetadataJSONWriter``: the form `JSONEncoder` gives
    /// with dates as seconds since 1970).
    /// - Throws: `EncodingError` (only for values JSON cannot express, e.g. a NaN lifetime).
    public func encoded() throws -> Data {
        try MetadataJSONWriter.encode(self)
    }

    /// Decodes stored metadata; `nil` when the bytes are not a metadata value of a known version.
    public static func decode(_ data: Data) -> StoredEntryMetadata? {
        guard let value = try? decoder.decode(StoredEntryMetadata.self, from: data),
              value.version <= currentVersion else { return nil }
        return value
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
