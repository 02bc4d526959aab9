import Foundation
import DownloadCache
import HTTPCacheSemantics

/// One output line of `dlcache driver` (issue 6's contract): a response or an error, encoded as one JSON object.
///
/// Response: `{"body": "<text>", "headers": [["Name", "value"], ...], "id": <id>, "status": 200, "statusText": "OK"}`.
/// Error: `{"error": "<what failed>", "id": <id or null>}`. Keys are sorted; the line never contains a raw newline.
public enum DriverResponse: Sendable, Equatable {
    /// An HTTP response: status code, reason phrase, header fields in order (duplicates kept) and body text.
    case response(id: DriverID, status: Int, statusText: String, headers: [[String]], body: String)
    /// No response could be produced (malformed line, connection refused with nothing usable cached ...).
    case error(id: DriverID?, message: String)

    /// The answer for `response` to the request with `id`.
    ///
    /// Header fields: hop-by-hop fields (RFC 9110 §7.6.1) and those named in `Connection` are dropped; everything
    /// else is kept in order, duplicates included. Body: decoded as UTF-8; bytes that are not valid UTF-8 are
    /// each replaced by U+FFFD (lossy decoding, documented in the command's help).
    /// - Throws: ``DriverLineError`` when a file-backed body cannot be read (e.g. evicted meanwhile).
    public static func from(_ response: CachedResponse, id: DriverID) throws(DriverLineError) -> DriverResponse {
        let data: Data
        do { data = try response.data() } catch {
            throw DriverLineError(id: id, "cannot read the response body of \(response.url.absoluteString): \(error)")
        }
        return .response(id: id, status: response.status, statusText: response.statusText,
                         headers: forwardedHeaders(response.headers).pairs,
                         body: String(decoding: data, as: UTF8.self))
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

        enum Key: String, CodingKey { case id, status, statusText, headers, body, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch answer {
            case .response(let id, let status, let statusText, let headers, let body):
                try container.encode(id, forKey: .id)
                try container.encode(status, forKey: .status)
                try container.encode(statusText, forKey: .statusText)
                try container.encode(headers, forKey: .headers)
                try container.encode(body, forKey: .body)
            case .error(let id, let message):
                if let id { try container.encode(id, forKey: .id) } else { try container.encodeNil(forKey: .id) }
                try container.encode(message, forKey: .error)
            }
        }
    }
}
