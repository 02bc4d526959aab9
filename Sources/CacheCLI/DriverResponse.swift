import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// The body of a driver answer: bytes answered inline, or a file the caller reads.
package enum DriverBody: Sendable, Equatable, ExpressibleByStringLiteral {
    /// The body bytes, answered as `"body": "<text>"` (plus `"bodyBase64"` when they are not valid UTF-8).
    case bytes(Data)
    /// A file holding the exact body bytes, answered as `"bodyFile": "<path>"` (no `body`).
    case file(path: String)

    /// A UTF-8 text body.
    package init(stringLiteral text: String) {
        self = .bytes(Data(text.utf8))
    }
}

/// One output line of `dlcache driver` (its answer format, the counterpart of ``DriverRequest``): a response or an error, encoded as one JSON object.
///
/// Response: `{"body": "<text>", "headers": [["Name", "value"], ...], "id": <id>, "status": 200, "statusText": "OK"}`,
/// plus `"bodyBase64": "<base64 of the exact bytes>"` when the body is not valid UTF-8 (then `body` is lossy text),
/// or with `"bodyFile": "<path>"` instead of `body` (see ``DriverBody/file(path:)``), plus
/// `"interim": [{"headers": [...], "status": 103}, ...]` when 1xx interim responses preceded it.
/// Error: `{"error": "<what failed>", "id": <id or null>}`. Keys are sorted; the line never contains a raw newline
/// or any other raw control character (see ``JSONLineEncoder``).
package enum DriverResponse: Sendable, Equatable {
    /// An HTTP response: status code, reason phrase, header fields in order (duplicates kept), and the body.
    /// `interim`: the 1xx interim responses received before it (answered as `"interim"` only when not empty).
    case response(id: DriverID, status: Int, statusText: String, headers: [[String]], body: DriverBody,
                  interim: [InterimResponse] = [])
    /// No response could be produced (malformed line, connection refused with nothing usable cached ...).
    case error(id: DriverID?, message: String)

    /// The answer for `response` to the request with `id`, its body inline (read from its file when needed).
    ///
    /// Header fields: hop-by-hop fields (RFC 9110 §7.6.1) and those named in `Connection` are dropped; everything
    /// else is kept in order, duplicates included; this cache's `Cache-Status` member (RFC 9211) comes last.
    /// - Throws: ``DriverLineError`` when a file-backed body cannot be read (e.g. evicted meanwhile).
    package static func from(_ response: CachedResponse, id: DriverID) throws(DriverLineError) -> DriverResponse {
        let data: Data
        do { data = try response.data() } catch {
            throw DriverLineError(id: id, "cannot read the response body of \(response.url.absoluteString): \(ErrorText.describe(error))")
        }
        return from(response, id: id, body: .bytes(data))
    }

    /// The answer for `response` to the request with `id`, with `body` as given.
    static func from(_ response: CachedResponse, id: DriverID, body: DriverBody) -> DriverResponse {
        .response(id: id, status: response.status, statusText: response.statusText,
                  headers: forwardedHeaders(response.headers).pairs + [["Cache-Status", response.cacheStatus.fieldValue]],
                  body: body, interim: response.interimResponses)
    }

    /// `headers` without hop-by-hop fields (RFC 9110 §7.6.1: `Connection`, `Keep-Alive`, `Transfer-Encoding` ...)
    /// and without the fields the `Connection` header names; order and duplicates of the rest are kept.
    package static func forwardedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
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
    package var jsonLine: String { String(decoding: jsonBytes(), as: UTF8.self) }

    /// The UTF-8 bytes of this answer's JSON text, followed by `terminator` bytes (e.g. `[0x0A]`).
    ///
    /// Members are written in sorted key order, so adding a field is one `key`/value pair at its place.
    package func jsonBytes(terminator: [UInt8] = []) -> [UInt8] {
        var json = JSONLineEncoder(capacity: 256)
        json.beginObject()
        switch self {
        case .response(let id, let status, let statusText, let headers, let body, let interim):
            switch body {
            case .bytes(let data):
                data.withUnsafeBytes { raw in
                    json.reserve(raw.count + raw.count / 8 + 256)
                    json.key("body")
                    if !json.string(utf8: raw) {
                        json.key("bodyBase64")
                        json.base64(raw)
                    }
                }
            case .file(let path):
                json.key("bodyFile")
                json.string(path)
            }
            json.key("headers")
            json.headerPairs(headers)
            json.key("id")
            json.id(id)
            if !interim.isEmpty {
                json.key("interim")
                json.beginArray()
                for response in interim {
                    json.beginObject()
                    json.key("headers")
                    json.headerPairs(response.headers.pairs)
                    json.key("status")
                    json.integer(response.status)
                    json.endObject()
                }
                json.endArray()
            }
            json.key("status")
            json.integer(status)
            json.key("statusText")
            json.string(statusText)
        case .error(let id, let message):
            json.key("error")
            json.string(message)
            json.key("id")
            if let id { json.id(id) } else { json.null() }
        }
        json.endObject()
        return json.finish(appending: terminator)
    }
}

extension JSONLineEncoder {
    /// Writes header fields as `[["Name", "value"], ...]`.
    mutating func headerPairs(_ pairs: [[String]]) {
        beginArray()
        for pair in pairs {
            beginArray()
            for item in pair { string(item) }
            endArray()
        }
        endArray()
    }

    /// Writes a request id as the JSON string or number it was read from.
    mutating func id(_ id: DriverID) {
        switch id {
        case .string(let text): string(text)
        case .integer(let value): integer(value)
        case .number(let text): numberText(text)
        }
    }
}
