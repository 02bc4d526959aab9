import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// Why a DownloadCache call failed. A cache or storage problem alone never produces one: a broken cache
/// degrades to the network.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure classes a caller can act on. A struct with static members rather than an enum, so classes
    /// can be added without breaking a caller's `switch` (which needs a `default`); compare with `==` or match
    /// with `case`; ``httpStatus`` reads the status of ``http(status:)``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case connectionFailed, timedOut, cancelled, notCached, truncated, invalidURL, storage, storedBodyDamaged
            case http(Int)
            case tooManyRedirects, invalidRequest, invalidResponse, bodyTooLarge, other
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// The origin could not be reached (connection refused, DNS failure, connection lost) and no stored
        /// response was allowed to stand in. ``offline`` is a synonym.
        public static let connectionFailed = Code(.connectionFailed)
        /// The origin did not answer within the timeout (seconds, `RequestOptions.timeout`).
        public static let timedOut = Code(.timedOut)
        /// The caller's task was cancelled (other waiters on the same download are not affected).
        public static let cancelled = Code(.cancelled)
        /// The policy forbade the network (`return-cache-dont-load`, request `only-if-cached`) and no
        /// usable stored response exists (RFC 9111 §5.2.1.7: a 504 in HTTP terms).
        public static let notCached = Code(.notCached)
        /// The body ended before its Content-Length; nothing was stored.
        public static let truncated = Code(.truncated)
        /// The URL is not an absolute http(s) URL.
        public static let invalidURL = Code(.invalidURL)
        /// The cache could not be used at all for something only the cache can do (e.g. a large body could
        /// be neither stored nor kept in a temporary file).
        public static let storage = Code(.storage)
        /// A stored body streamed while its crc32 was being checked (``StoredBodyCheck/whileStreaming``) did not
        /// match its entry: the bytes delivered are not the stored response and must be discarded. The entry was
        /// removed, so asking again fetches the response from the origin.
        public static let storedBodyDamaged = Code(.storedBodyDamaged)
        /// The origin answered with this non-success status (used by prefetch, which counts those as failures).
        public static func http(status: Int) -> Code { Code(.http(status)) }
        /// Too many redirects (more than `Configuration.maxRedirects`).
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The request carries something the transport refuses to send (a message-framing field such as
        /// Content-Length or Transfer-Encoding, a Host naming another authority, CR/LF in a field, a method that
        /// is not a token); nothing was sent. See `MessageFraming.requestProblem(method:url:headers:)`.
        public static let invalidRequest = Code(.invalidRequest)
        /// The origin broke HTTP's rules (invalid or conflicting Content-Length, Transfer-Encoding with
        /// Content-Length, an unsolicited 304 or 206, a response header too large); nothing was stored.
        public static let invalidResponse = Code(.invalidResponse)
        /// The body outgrew the bytes one transfer may write to disk (`Configuration.maxTransferBytes`); the
        /// transfer was stopped there and nothing was stored.
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// Anything else (TLS failure, unwritable file ...); see `detail`.
        public static let other = Code(.other)

        /// Synonym of ``connectionFailed``: the origin is unreachable.
        public static var offline: Code { .connectionFailed }

        /// The status of an ``http(status:)`` code, else nil.
        public var httpStatus: Int? {
            if case .http(let status) = kind { return status }
            return nil
        }

        /// The failure class in words, for messages: `connection failed`, `timed out`, `cancelled`, `not cached`,
        /// `truncated body`, `invalid URL`, `storage error`, `damaged stored body`, `HTTP <status>`, `too many redirects`,
        /// `invalid request`, `invalid response from the origin`, `body too large`, `failed`.
        public var description: String {
            switch kind {
            case .connectionFailed: return "connection failed"
            case .timedOut: return "timed out"
            case .cancelled: return "cancelled"
            case .notCached: return "not cached"
            case .truncated: return "truncated body"
            case .invalidURL: return "invalid URL"
            case .storage: return "storage error"
            case .storedBodyDamaged: return "damaged stored body"
            case .http(let status): return "HTTP \(status)"
            case .tooManyRedirects: return "too many redirects"
            case .invalidRequest: return "invalid request"
            case .invalidResponse: return "invalid response from the origin"
            case .bodyTooLarge: return "body too large"
            case .other: return "failed"
            }
        }
    }

    /// The failure class.
    public var code: Code
    /// What happened, in words.
    public var detail: String
    /// The transport's classification when the failure came from the network, else `nil`.
    public var transportError: TransportError?
    /// The URL whose exchange failed when it is not the requested one (a redirect target), else `nil`.
    public var url: URL?

    /// Creates an error value.
    public init(_ code: Code, _ detail: String, transportError: TransportError? = nil, url: URL? = nil) {
        self.code = code
        self.detail = detail
        self.transportError = transportError
        self.url = url
    }

    /// Maps a transport failure to the caller-facing class.
    public init(_ error: TransportError) {
        let code: Code
        switch error.code {
        case .connectionFailed, .nameNotResolved: code = .connectionFailed
        case .timedOut, .stalled: code = .timedOut
        case .cancelled: code = .cancelled
        case .truncated, .truncatedChunked: code = .truncated
        case .invalidRequest: code = .invalidRequest
        case .invalidResponse: code = .invalidResponse
        case .bodyTooLarge: code = .bodyTooLarge
        default: code = .other  // TLS failures and any other class
        }
        self.init(code, error.description, transportError: error)
    }

    /// The failure in words, for messages: the class (``Code/description``), then the detail — e.g.
    /// "HTTP 404 Not Found" (an HTTP status with its reason phrase), "timed out: ...",
    /// "not cached: ... policy return-cache-dont-load forbids the network". The detail alone when it already
    /// starts with the class's words, or for ``Code/other``. Never a Swift case name.
    public var description: String {
        if code == .other, !detail.isEmpty { return detail }
        var words = code.description
        if let status = code.httpStatus {
            let phrase = ErrorWords.reasonPhrase(status)
            if !phrase.isEmpty { words += " \(phrase)" }
        }
        if detail.isEmpty || detail.lowercased().hasPrefix(words.lowercased()) { return detail.isEmpty ? words : detail }
        return "\(words): \(detail)"
    }
}
