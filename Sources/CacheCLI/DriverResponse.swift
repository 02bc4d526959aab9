import Foundation
import DownloadCache
import HTTPCacheSemantics

/// One output line of `dlcache driver` (issue 6's contract): a response or an error, encoded as one JSON object.
///
/// Response: `{"body": "<text>", "headers": [["Name", "value"], ...], "id": <id>, "status": 200, "statusText": "OK"}`,
/// plus `"bodyBase64": "<base64 of the exact bytes>"` when the body is not valid UTF-8 (then `body` is lossy text).
/// Error: `{"error": "<what failed>", "id": <id or null>}`. Keys are sorted; the line never contains a raw newline.
public enum DriverResponse: Sendable, Equatable {
    /// An HTTP response: status code, reason phrase, header fields in order (duplicates kept), body text, and
    /// the exact body bytes in base64 (RFC 4648, padded) when they are not valid UTF-8 (`nil`: `body` is exact).
    case response(id: DriverID, status: Int, statusText: String, headers: [[String]], body: String,
                  bodyBase64: String? = nil)
    /// No response could be produced (malformed line, connection refused with nothing usable cached ...).
    case error(id: DriverID?, message: String)

    /// The answer for `response` to the request with `id`.
    ///
    /// Header fields: hop-by-hop fields (RFC 9110 §7.6.1) and those named in `Connection` are dropped; everything
    /// else is kept in order, duplicates included. Body: decoded as UTF-8; when the bytes are not valid UTF-8,
    /// `body` is the lossy text (each invalid byte replaced by U+FFFD) and `bodyBase64` carries the exact bytes
    /// (documented in the command's help).
    /// - Throws: ``DriverLineError`` when a file-backed body cannot be read (e.g. evicted meanwhile).
    public static func from(_ response: CachedResponse, id: DriverID) throws(DriverLineError) -> DriverResponse {
        let data: Data
        do { data = try response.data() } catch {
            throw DriverLineError(id: id, "cannot read the response body of \(response.url.absoluteString): \(error)")
        }
        let exact = String(validatingUTF8Bytes: data)
        return .response(id: id, status: response.status, statusText: response.statusText,
                         headers: forwardedHeaders(response.headers).pairs,
                         body: exact ?? String(decoding: data, as: UTF8.self),
                         bodyBase64: exact == nil ? data.base64EncodedString() : nil)
    }

    /// `headers` without hop-by-hop fields (RFC 9110 §7.6.1: `Connection`, `Keep-Alive`, `Transfer-Encoding` ...)
    /// and without the fields the `Connection` header names; order and duplicates of the rest are kept.
    public static func forwardedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        var drop = RFC9111.hopByHopFields
        for value in headers.values(for: "Connection") {
            for member in value.split(separator: ",") {
                let name = HTTPHeaders.trimOWS(String(member)).lowercased()
                if !name.isEmpty { drop.insert(name) }
            }
        }
        return HTTPHeaders(fields: headers.fields.filter { !drop.contains($0.name.lowercased()) })
    }

    /// The JSON text of this answer, without the trailing newline.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(Wire(self))
            return String(decoding: data, as: UTF8.self)
        } catch {
            // Only a non-finite number id could fail, and JSON input cannot produce one; keep the line valid anyway.
            return #"{"error":"internal error: cannot encode the answer","id":null}"#
        }
    }

    /// The encodable shape of an answer; `id` is written as `null` when unknown (never left out).
    private struct Wire: Encodable {
        let answer: DriverResponse
        init(_ answer: DriverResponse) { self.answer = answer }

        enum Key: String, CodingKey { case id, status, statusText, headers, body, bodyBase64, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch answer {
            case .response(let id, let status, let statusText, let headers, let body, let bodyBase64):
                try container.encode(id, forKey: .id)
                try container.encode(status, forKey: .status)
                try container.encode(statusText, forKey: .statusText)
                try container.encode(headers, forKey: .headers)
                try container.encode(body, forKey: .body)
                try container.encodeIfPresent(bodyBase64, forKey: .bodyBase64)
            case .error(let id, let message):
                if let id { try container.encode(id, forKey: .id) } else { try container.encodeNil(forKey: .id) }
                try container.encode(message, forKey: .error)
            }
        }
    }
}

extension String {
    /// The text of `data` when it is entirely valid UTF-8, else `nil` (no replacement characters).
    init?(validatingUTF8Bytes data: Data) {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(scalars)
    }
}
