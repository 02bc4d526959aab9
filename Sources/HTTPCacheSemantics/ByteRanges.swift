import Foundation

/// The HTTP semantics decisions of RFC 9110 that a cache needs beyond RFC 9111 (range requests, §14), as pure
/// functions: no clock, disk or network.
public enum RFC9110 {}

/// One `byte-range-spec` of a `Range` header (RFC 9110 §14.1.1–14.1.2), before it meets a representation.
///
/// Positions are byte offsets from 0; digits too large for `Int64` read as `Int64.max` (no representation is
/// that long, so such a first position is unsatisfiable and such a last position or suffix means "to the end").
public enum ByteRangeSpec: Sendable, Hashable, CustomStringConvertible {
    /// `first-last` (`int-range` with a last-pos): bytes `first` through `last`, both inclusive.
    case closed(first: Int64, last: Int64)
    /// `first-` (`int-range` without last-pos): bytes from `first` to the end of the representation.
    case openEnded(first: Int64)
    /// `-length` (`suffix-range`): the last `length` bytes (the whole representation when it is shorter).
    case suffix(length: Int64)

    /// The field-value form: `0-99`, `100-` or `-500`.
    public var description: String {
        switch self {
        case .closed(let first, let last): return "\(first)-\(last)"
        case .openEnded(let first): return "\(first)-"
        case .suffix(let length): return "-\(length)"
        }
    }

    /// The spec resolved against a representation of `length` bytes (RFC 9110 §14.1.2–14.1.3).
    ///
    /// Satisfiable when it is an `int-range` whose first position is below `length`, or a suffix with a
    /// non-zero length; a last position past the end is cut to `length - 1`. `nil` means unsatisfiable (416).
    /// A suffix of a zero-length representation selects nothing that a 206 could describe: also `nil` here,
    /// and ``RFC9110/rangeAnswer(request:status:headers:length:)`` serves such a representation whole.
    public func resolved(length: Int64) -> ByteRange? {
        guard length > 0 else { return nil }
        switch self {
        case .closed(let first, let last):
            guard first < length else { return nil }
            return ByteRange(first: first, last: min(last, length - 1))
        case .openEnded(let first):
            guard first < length else { return nil }
            return ByteRange(first: first, last: length - 1)
        case .suffix(let suffixLength):
            guard suffixLength > 0 else { return nil }
            return ByteRange(first: length - min(suffixLength, length), last: length - 1)
        }
    }
}

/// A satisfied byte range: the inclusive positions `first...last` of a representation (RFC 9110 §14.1.1).
public struct ByteRange: Sendable, Hashable, CustomStringConvertible {
    /// Offset of the first byte (0-based).
    public var first: Int64
    /// Offset of the last byte, inclusive (`last >= first`).
    public var last: Int64

    /// Creates a range of the inclusive positions `first...last`; callers keep `0 <= first <= last`.
    public init(first: Int64, last: Int64) {
        self.first = first
        self.last = last
    }

    /// Number of bytes in the range (`last - first + 1`).
    public var count: Int64 { last - first + 1 }

    /// `first-last`, the `incl-range` form.
    public var description: String { "\(first)-\(last)" }
}

/// A parsed `Range` header field (RFC 9110 §14.2) with the `bytes` unit.
public enum RangeRequest: Sendable, Hashable {
    /// Exactly one range: what this cache answers itself from a complete stored response.
    case single(ByteRangeSpec)
    /// Two or more ranges (a `multipart/byteranges` answer): this cache sends such requests to the origin and
    /// stores nothing of the answer.
    case multiple([ByteRangeSpec])
}

/// A `Content-Range` field value (RFC 9110 §14.4): `bytes first-last/complete`, `bytes first-last/*` or the
/// unsatisfied form `bytes */complete`.
public struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The enclosed range; `nil` for the unsatisfied form `*/complete` of a 416.
    public var range: ByteRange?
    /// The complete length of the representation in bytes; `nil` when the sender wrote `*` (unknown).
    public var completeLength: Int64?

    /// Creates a value; callers keep `range.last < completeLength` when both are given.
    public init(range: ByteRange?, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses one field value; `nil` when it is not the `bytes` unit, not the grammar, or invalid (§14.4: a
    /// last position below the first, a complete length not above the last position, the unsatisfied form
    /// without a length, or numbers beyond `Int64`). The unit is case-insensitive; exactly one space follows it.
    public init?(parsing text: String) {
        let value = HTTPHeaders.trimOWS(text)
        guard let space = value.firstIndex(of: " "),
              HeaderSyntax.asciiLowercased(String(value[..<space])) == "bytes" else { return nil }
        let rest = value[value.index(after: space)...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let rangePart = rest[..<slash], lengthPart = rest[rest.index(after: slash)...]
        var complete: Int64?
        if lengthPart != "*" {
            guard let n = RFC9110.exactDigits(lengthPart) else { return nil }
            complete = n
        }
        if rangePart == "*" {
            guard let complete else { return nil }
            self.init(range: nil, completeLength: complete)
            return
        }
        let bounds = rangePart.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = RFC9110.exactDigits(bounds[0]), let last = RFC9110.exactDigits(bounds[1]),
              first <= last else { return nil }
        if let complete, complete <= last { return nil }
        self.init(range: ByteRange(first: first, last: last), completeLength: complete)
    }

    /// The first `Content-Range` line of `headers` that parses, or `nil`.
    public static func of(_ headers: HTTPHeaders) -> ContentRange? {
        headers.values(for: "Content-Range").lazy.compactMap { ContentRange(parsing: $0) }.first
    }

    /// The field-value form: `bytes 0-99/1000`, `bytes 0-99/*` or `bytes */1000`.
    public var description: String {
        let length = completeLength.map(String.init) ?? "*"
        return "bytes " + (range.map { "\($0)" } ?? "*") + "/" + length
    }
}

extension RFC9110 {
    /// Parses the request's `Range` header (RFC 9110 §14.1.1, §14.2); `nil` means "answer as if there were none".
    ///
    /// `nil` when there is no `Range` line, more than one, a unit other than `bytes` (case-insensitive; §14.2: a
    /// server ignores units it does not understand), or an invalid `ranges-specifier` — a member that is not
    /// `first-[last]` or `-suffix` in decimal digits, `last < first` (`bytes=5-3`), whitespace inside a member
    /// or around `=`, or no member at all (§14.2: a server may ignore an invalid Range). Empty list members and
    /// optional whitespace around commas are allowed (RFC 9110 §5.6.1).
    public static func rangeRequest(_ headers: HTTPHeaders) -> RangeRequest? {
        let lines = headers.values(for: "Range")
        guard lines.count == 1, let line = lines.first else { return nil }
        let value = HTTPHeaders.trimOWS(line)
        guard let equals = value.firstIndex(of: "="),
              HeaderSyntax.asciiLowercased(String(value[..<equals])) == "bytes" else { return nil }
        var specs: [ByteRangeSpec] = []
        for member in value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = HTTPHeaders.trimOWS(String(member))
            if trimmed.isEmpty { continue }
            guard let spec = rangeSpec(trimmed) else { return nil }
            specs.append(spec)
        }
        // The first member may not be preceded by whitespace after "=", nor may "=" follow whitespace.
        let afterEquals = value[value.index(after: equals)...].first
        guard afterEquals != " " && afterEquals != "\t" else { return nil }
        switch specs.count {
        case 0: return nil
        case 1: return .single(specs[0])
        default: return .multiple(specs)
        }
    }

    /// One `range-spec` (no surrounding whitespace): `first-last`, `first-` or `-suffix`; `nil` otherwise.
    static func rangeSpec(_ text: String) -> ByteRangeSpec? {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            return clampedDigits(parts[1]).map { .suffix(length: $0) }
        }
        guard let first = clampedDigits(parts[0]) else { return nil }
        if parts[1].isEmpty { return .openEnded(first: first) }
        guard let last = clampedDigits(parts[1]), first <= last else { return nil }
        return .closed(first: first, last: last)
    }

    /// One or more ASCII decimal digits as `Int64`, values beyond `Int64.max` clamped to it; `nil` otherwise.
    static func clampedDigits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(Int64(byte - 0x30))
            if overflowA || overflowB { return .max }
            value = sum
        }
        return value
    }

    /// One or more ASCII decimal digits as `Int64`; `nil` when empty, not digits, or beyond `Int64.max`.
    static func exactDigits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
