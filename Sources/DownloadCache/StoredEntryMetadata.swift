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
    /// §4.2.4) nor a fragment: ``init(url:method:statusText:stored:)`` strips `user:password@` and `#…`
    /// (``storedURL(_:)``).
    public var url: String
    /// The request method the response answers (normally "GET").
    public var method: String
    /// The reason phrase of the stored status.
    public var statusText: String
    /// The stored response: status, headers, request/response times, Vary'd request headers, expiry override.
    public var stored: StoredResponse

    /// Creates a metadata value at the current version; user info and the fragment of `url` are removed
    /// (``storedURL(_:)``).
    public init(url: String, method: String, statusText: String, stored: StoredResponse) {
        self.version = StoredEntryMetadata.currentVersion
        self.url = StoredEntryMetadata.storedURL(url)
        self.method = method
        self.statusText = statusText
        self.stored = stored
    }

    /// The URL as stored and listed: without its fragment (`#…`, RFC 3986 §3.5: never sent to the origin, not part
    /// of the cache key, and where a token may travel, e.g. `#access_token=…`) and without user info
    /// (``withoutUserInfo(_:)``). The fragment starts at the first `#`, which can appear nowhere else in a URI.
    public static func storedURL(_ url: String) -> String {
        let beforeFragment = url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url
        return withoutUserInfo(beforeFragment)
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
        guard var value = try? decoder.decode(StoredEntryMetadata.self, from: data),
              value.version <= currentVersion else { return nil }
        // Whatever wrote the entry (another build, an edited index), its URL is shown without fragment or user info.
        value.url = storedURL(value.url)
        return value
    }

    /// Decodes stored metadata the cache may use: ``decode(_:)``, refusing metadata that is not
    /// ``isFreeOfLineBreaks``. `nil` means a damaged entry (complete or partial, local or from the shared tier):
    /// never served, resumed or combined with, and removed where the caller can.
    static func decodeUsable(_ data: Data) -> StoredEntryMetadata? {
        guard let value = decode(data), value.isFreeOfLineBreaks else { return nil }
        return value
    }

    /// Whether no text of the metadata written into a message head (header field names and values of the
    /// response and of the Vary'd request fields, reason phrase, methods, URL) holds CR, LF or NUL. No origin can
    /// send those (the transport refuses such a response, RFC 9110 §5.5): metadata holding one was written by
    /// something else (an edited index, another writer of the shared tier), and served it would add lines to a
    /// header block written out (`get -i`, `-D`). The cache treats such an entry as damaged.
    var isFreeOfLineBreaks: Bool {
        func clean(_ text: String) -> Bool { !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } }
        let fields = stored.response.headers.fields + stored.varyingRequestHeaders.fields
        return clean(statusText) && clean(method) && clean(url) && clean(stored.requestMethod)
            && fields.allSatisfy { clean($0.name) && clean($0.value) }
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
