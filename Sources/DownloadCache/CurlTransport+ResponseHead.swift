#if canImport(CCurl)
import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

/// The response head of one libcurl transfer, rebuilt from the raw lines libcurl hands its header callback.
///
/// Keeps only the last response's block: a new status line (a 1xx interim response, or the next hop of a
/// followed redirect) starts over. Field names keep their case, duplicates and order are kept, obs-fold
/// continuation lines (RFC 9112 §5.2) are joined to the previous field with one space. Lines after the
/// blank line that ends the block (chunked trailers) are not part of the head and are ignored.
struct CurlResponseHead: Sendable {
    /// The status code of the last status line, `nil` before one arrived.
    private(set) var status: Int?
    /// The reason phrase as received; empty when the origin sent none (HTTP/2 never does).
    private(set) var reasonPhrase = ""
    /// The protocol of the last status line, e.g. `"HTTP/1.1"`, `"HTTP/2"`; `nil` before one arrived.
    private(set) var version: String?
    /// The field lines of the last block, in order.
    private(set) var fields: [HTTPHeaders.Field] = []
    /// Whether the blank line ending the last block arrived.
    private(set) var isComplete = false
    /// The complete 1xx interim responses (RFC 9110 §15.2) received before the current block, in order; a final
    /// response of an earlier hop clears them. Never merged into ``headers``.
    private(set) var interim: [InterimResponse] = []
    /// A framing field (Content-Length, Transfer-Encoding) written so that libcurl and this parser may read it
    /// differently: whitespace before its colon (RFC 9112 §5.1) or an obs-fold continuation (§5.2). libcurl
    /// ignores such a line for framing while the field list shows it, so the body could keep its chunk framing
    /// or run past the length; or a CR, LF or NUL inside the status line (RFC 9112 §4: one line to this parser,
    /// two to others). The transport refuses the head. `nil` when none.
    private(set) var framingAnomaly: String?

    /// The reason phrase to report: the received one; when none was sent (empty in HTTP/1.1, absent in HTTP/2),
    /// the standard text of a status RFC 9110 §15 defines, and an empty phrase for any other status (e.g. 299),
    /// so no phrase is invented.
    var statusText: String {
        guard let status else { return "" }
        guard reasonPhrase.isEmpty else { return reasonPhrase }
        return HTTPStatusText.standardText(for: status) ?? ""
    }

    /// The fields as ``HTTPHeaders`` (order, duplicates and name case as received).
    var headers: HTTPHeaders { HTTPHeaders(fields: fields) }

    /// The last announced Content-Length in bytes, or `nil` when absent, negative or not a number.
    var contentLength: Int64? {
        guard let text = fields.last(where: { $0.hasName("Content-Length") })?.value,
              let length = Int64(text), length >= 0 else { return nil }
        return length
    }

    /// Feeds one raw header line as libcurl delivers it (CRLF included), decoding UTF-8 or else Latin-1.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        let units = bytes.bindMemory(to: UInt8.self)
        let isUTF8 = units.allSatisfy { $0 < 0x80 } || String(validating: units, as: UTF8.self) != nil
        consume(units: units, isUTF8: isUTF8)
    }

    /// Feeds one header line (trailing CR/LF optional).
    mutating func consume(line raw: String) {
        var raw = raw
        raw.withUTF8 { consume(units: $0, isUTF8: true) }
    }

    /// Feeds one header line's bytes, split at its ASCII delimiters (CR, LF, `:`, SP, HTAB) byte by byte; the
    /// pieces are decoded as UTF-8 when `isUTF8` (the whole line is valid UTF-8), else as Latin-1.
    private mutating func consume(units: UnsafeBufferPointer<UInt8>, isUTF8: Bool) {
        var end = units.count
        while end > 0, units[end - 1] == 0x0A || units[end - 1] == 0x0D { end -= 1 }
        func text(_ range: Range<Int>) -> String {
            let piece = UnsafeBufferPointer(rebasing: units[range])
            return isUTF8 ? String(decoding: piece, as: UTF8.self)
                : String(String.UnicodeScalarView(piece.map { Unicode.Scalar($0) }))
        }
        if end >= 5, units[0] == 0x48, units[1] == 0x54, units[2] == 0x54, units[3] == 0x50, units[4] == 0x2F {
            // "HTTP/"
            startBlock(statusLine: Substring(text(0..<end)))
            return
        }
        guard status != nil, !isComplete else { return }
        if end == 0 {
            isComplete = true
            return
        }
        if units[0] == 0x20 || units[0] == 0x09 {
            // obs-fold: a continuation of the previous field's value.
            guard let lastIndex = fields.indices.last else { return }
            if Self.isFramingField(fields[lastIndex].name) {
                framingAnomaly = "obs-fold continuation of \(fields[lastIndex].name)"
            }
            let addition = HTTPHeaders.trimOWS(text(0..<end))
            let previous = fields[lastIndex].value
            fields[lastIndex].value = previous.isEmpty ? addition : previous + " " + addition
            return
        }
        guard let colon = UnsafeBufferPointer(rebasing: units[0..<end]).firstIndex(of: 0x3A) else { return }
        let rawName = text(0..<colon)
        let name = HTTPHeaders.trimOWS(rawName)
        guard !name.isEmpty else { return }
        if name != rawName, Self.isFramingField(name) {
            framingAnomaly = "whitespace between \(name) and its colon"
        }
        fields.append(HTTPHeaders.Field(name: name, value: text((colon + 1)..<end)))
    }

    /// Whether `name` is a field that delimits the body (RFC 9112 §6).
    private static func isFramingField(_ name: String) -> Bool {
        HTTPHeaders.namesEqual(name, "Content-Length") || HTTPHeaders.namesEqual(name, "Transfer-Encoding")
    }

    /// Starts a new block at `statusLine` ("HTTP/1.1 299 Whatever", "HTTP/2 200").
    private mutating func startBlock(statusLine: Substring) {
        if let previous = status, isComplete {
            if (100..<200).contains(previous) {
                if interim.count < InterimResponse.maximumKept {
                    interim.append(InterimResponse(status: previous, headers: HTTPHeaders(fields: fields)))
                }
            } else {
                interim = []
            }
        }
        fields = []
        isComplete = false
        framingAnomaly = nil
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        version = parts.first.map(String.init)
        guard parts.count >= 2, let code = Int(parts[1]), (100...999).contains(code) else {
            status = nil
            reasonPhrase = ""
            return
        }
        status = code
        reasonPhrase = parts.count == 3 ? HTTPHeaders.trimOWS(String(parts[2])) : ""
        if statusLine.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            framingAnomaly = "CR, LF or NUL inside the status line"
        }
    }
}
#endif
