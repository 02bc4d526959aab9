import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// The `id` of a driver request line, echoed unchanged in its answer: a JSON string or a JSON number.
///
/// A number is echoed exactly as written: an integer in 64 bits written the plain way (`7`, `-3`) is an
/// ``integer(_:)``; any other number (`1.5`, `1e2`, `1.50`, `-0`, an integer beyond 64 bits) keeps its JSON text.
package enum DriverID: Sendable, Hashable, CustomStringConvertible {
    /// A string id, e.g. `"r1"`.
    case string(String)
    /// An integral number id written as its decimal digits, e.g. `7`.
    case integer(Int64)
    /// Any other number id, as its JSON text (RFC 8259 §6 number grammar, checked by the parser), e.g. `1.5`,
    /// `18446744073709551616`.
    case number(String)

    /// The id as written in JSON (strings quoted), for messages.
    package var description: String {
        switch self {
        case .string(let text): return "\"\(text)\""
        case .integer(let value): return String(value)
        case .number(let text): return text
        }
    }
}

/// Why one input line cannot be answered with a response; printed as `{"id": <id or null>, "error": "..."}`.
package struct DriverLineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request's id when it could be read, or `nil` (printed as JSON `null`).
    package var id: DriverID?
    /// What is wrong with the line or what failed, in words.
    package var message: String

    /// Creates an error for the line with `id` (nil when unreadable).
    package init(id: DriverID?, _ message: String) {
        self.id = id
        self.message = message
    }

    /// The message.
    package var description: String { message }
}

/// One parsed request line of `dlcache driver` (its request format; answers are ``DriverResponse``):
/// `{"id": <string|number>, "method": "GET", "url": "http://...", "headers": [["Name", "value"], ...], "body": <string|null>}`.
///
/// `method` defaults to `GET`, `headers` to none and `body` to null; `id` and `url` are required. Any RFC 9110
/// method token is accepted and kept case-sensitive; header pairs keep their order and duplicates.
package struct DriverRequest: Sendable, Equatable {
    /// The id to echo in the answer.
    package var id: DriverID
    /// The request method exactly as given (RFC 9110 §9.1: case-sensitive token).
    package var method: String
    /// The target URL as given (the client rejects anything but absolute http/https).
    package var url: URL
    /// The request header fields in the order given, duplicates kept.
    package var headers: HTTPHeaders
    /// The request content as UTF-8 bytes, or `nil` when `body` was null or absent.
    package var body: Data?
    /// Whether the answer should name a file holding the body (`"bodyFile": true`) instead of carrying it inline.
    package var wantsBodyFile = false

    /// Creates a request value.
    package init(id: DriverID, method: String = "GET", url: URL, headers: HTTPHeaders = HTTPHeaders(), body: Data? = nil) {
        self.id = id
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The request as the cache client takes it.
    package var cacheRequest: CacheRequest {
        CacheRequest(method: method, url: url, headers: headers)
    }

    /// Parses one input line.
    /// - Throws: ``DriverLineError`` (with the id when it could be read) for text that is not one JSON object,
    ///   a missing or non-string/number `id`, a missing or unparsable `url`, a `method` that is not a token,
    ///   `headers` that are not `[name, value]` string pairs (or carry CR/LF/NUL), a non-string `body`, or a
    ///   field the transport sets itself (Content-Length, Transfer-Encoding, Connection, Expect, a Host naming
    ///   another authority ...: `MessageFraming.requestProblem`), which would let a line frame its own messages.
    package static func parse(_ line: String) throws(DriverLineError) -> DriverRequest {
        var line = line
        line.makeContiguousUTF8()
        let parsed = line.utf8.withContiguousStorageIfAvailable { utf8 in
            Result { () throws(DriverLineError) in try parse(bytes: UnsafeRawBufferPointer(utf8)) }
        }
        guard let parsed else { throw DriverLineError(id: nil, "malformed request line: not a JSON object") }
        return try parsed.get()
    }

    /// Parses one input line from its bytes (UTF-8; invalid bytes inside strings become U+FFFD).
    /// - Throws: ``DriverLineError`` as ``parse(_:)`` does.
    package static func parse(bytes: UnsafeRawBufferPointer) throws(DriverLineError) -> DriverRequest {
        let object: [String: DriverJSONValue]
        do {
            object = try DriverJSONParser.object(bytes)
        } catch {
            throw DriverLineError(id: nil, "malformed request line: not a JSON object")
        }
        guard let idValue = object["id"] else { throw DriverLineError(id: nil, "malformed request: missing \"id\"") }
        guard let id = idValue.driverID else {
            throw DriverLineError(id: nil, "malformed request: \"id\" must be a string or a number")
        }
        let method = try parseMethod(object["method"], id: id)
        guard case .string(let urlText)? = object["url"] else {
            throw DriverLineError(id: id, "malformed request: \"url\" must be a string")
        }
        guard let url = URL(string: urlText) else {
            throw DriverLineError(id: id, "malformed request: invalid URL '\(urlText)'")
        }
        let headers = try parseHeaders(object["headers"], id: id)
        try checkFraming(method: method, url: url, headers: headers, id: id)
        let body: Data?
        switch object["body"] {
        case nil, .null?: body = nil
        case .string(let text)?: body = Data(text.utf8)
        default: throw DriverLineError(id: id, "malformed request: \"body\" must be a string or null")
        }
        var request = DriverRequest(id: id, method: method, url: url, headers: headers, body: body)
        switch object["bodyFile"] {
        case nil, .null?: break
        case .bool(let wanted)?: request.wantsBodyFile = wanted
        default: throw DriverLineError(id: id, "malformed request: \"bodyFile\" must be true or false")
        }
        return request
    }

    /// RFC 9110 §5.6.2 `tchar`: the characters of a method or field-name token.
    static let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// Whether `text` is a non-empty RFC 9110 token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { tokenCharacters.contains($0) }
    }

    private static func parseMethod(_ value: DriverJSONValue?, id: DriverID) throws(DriverLineError) -> String {
        switch value {
        case nil, .null?:
            return "GET"
        case .string(let text)? where isToken(text):
            return text
        case .string(let text)?:
            throw DriverLineError(id: id, "malformed request: method '\(text)' is not an HTTP token")
        default:
            throw DriverLineError(id: id, "malformed request: \"method\" must be a string")
        }
    }

    private static func parseHeaders(_ value: DriverJSONValue?, id: DriverID) throws(DriverLineError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        switch value {
        case nil, .null?:
            return headers
        case .array(let items)?:
            for item in items {
                guard case .array(let pair) = item, pair.count == 2,
                      case .string(let name) = pair[0], case .string(let fieldValue) = pair[1] else {
                    throw DriverLineError(id: id, "malformed request: each header must be a [\"Name\", \"value\"] pair of strings")
                }
                guard isToken(name) else {
                    throw DriverLineError(id: id, "malformed request: header name '\(name)' is not an HTTP token")
                }
                guard !fieldValue.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                    throw DriverLineError(id: id, "malformed request: value of header '\(name)' contains CR, LF or NUL")
                }
                headers.add(name, fieldValue)
            }
            return headers
        default:
            throw DriverLineError(id: id, "malformed request: \"headers\" must be an array of [\"Name\", \"value\"] pairs")
        }
    }

    /// Refuses what the transport must set itself (``MessageFraming``): framing fields such as Content-Length
    /// or Transfer-Encoding, a Host naming another authority, control characters.
    private static func checkFraming(method: String, url: URL, headers: HTTPHeaders, id: DriverID) throws(DriverLineError) {
        if let problem = MessageFraming.requestProblem(method: method, url: url, headers: headers) {
            throw DriverLineError(id: id, "refused request: \(problem)")
        }
    }
}

/// A decoded JSON value, just enough to validate a request line field by field and report which field is wrong.
enum DriverJSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A number other than a plainly written 64-bit integer, as its JSON text.
    case number(String)
    case string(String)
    case array([DriverJSONValue])
    case object([String: DriverJSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value.description)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([DriverJSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: DriverJSONValue].self))
        }
    }

    /// The value as a request id, or `nil` when it is neither a string nor a number.
    var driverID: DriverID? {
        switch self {
        case .string(let text): return .string(text)
        case .integer(let value): return .integer(value)
        case .number(let value): return .number(value)
        default: return nil
        }
    }
}
