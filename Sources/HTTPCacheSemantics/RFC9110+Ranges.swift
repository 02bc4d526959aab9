import Foundation

/// How a cache answers a request's `Range` from a complete stored representation (RFC 9110 §14.2, §15.3.7,
/// §15.5.17; RFC 9111 §3.4).
public enum RangeAnswer: Sendable, Hashable {
    /// Answer as if the request had no `Range`: the whole stored response (no or an invalid `Range`, a method
    /// other than GET, a stored status other than 200, an `If-Range` that does not match, an empty body).
    case whole(reason: String)
    /// Answer 206 Partial Content with the bytes of `range` and this `Content-Range` (§15.3.7).
    case partial(range: ByteRange, contentRange: ContentRange)
    /// Answer 416 Range Not Satisfiable with `Content-Range: bytes */<length>` (§15.5.17).
    case unsatisfiable(contentRange: ContentRange)
    /// Several ranges were asked for: send the request to the origin unchanged and store nothing of its answer
    /// (this cache does not build `multipart/byteranges` bodies).
    case forwardToOrigin(reason: String)
}

/// What a cache holding the first bytes of a representation may do with the origin's answer to its
/// `Range: bytes=<held>-` request (RFC 9110 §14.4, §15.3.7; RFC 9111 §3.3–3.4).
public enum PartialCombination: Sendable, Hashable {
    /// Append the 206's body to the held bytes after dropping its first `skip` bytes (a 206 that starts at or
    /// before the held count, `skip = held - first`); `contentRange` describes the 206.
    case append(contentRange: ContentRange, skip: Int64)
    /// A 200 carries the whole (possibly changed) representation: discard the held bytes and store this one.
    case replace(reason: String)
    /// The answer cannot be combined with the held bytes (changed representation, weak or missing validator,
    /// a gap, a wrong total, no `Content-Range`, a multipart body, another status): keep nothing of it.
    case reject(reason: String)
}

extension RFC9110 {
    /// Whether `request` asks for a range this cache answers itself from a complete stored response of
    /// `status` and `headers` whose body is `length` bytes long (RFC 9110 §14.2, §13.1.5).
    ///
    /// Range handling is defined for GET only (§14.2); a stored status other than 200 is not a complete
    /// representation to slice. `If-Range` (§13.1.5) is evaluated against the stored validators: an entity tag
    /// must match the stored `ETag` by strong comparison; an HTTP-date must equal the stored `Last-Modified`
    /// and that date must be strong (``isStrongLastModified(_:)``); anything else means "send the whole".
    /// A single satisfiable range gives ``RangeAnswer/partial(range:contentRange:)``; an unsatisfiable one
    /// ``RangeAnswer/unsatisfiable(contentRange:)``; several ranges ``RangeAnswer/forwardToOrigin(reason:)``.
    public static func rangeAnswer(request: CacheRequest, status: Int, headers: HTTPHeaders, length: Int64) -> RangeAnswer {
        guard let range = rangeRequest(request.headers) else {
            let why = request.headers.contains("Range") ? "Range header ignored: not one valid bytes range-set (RFC 9110 §14.2)" : "no Range header"
            return .whole(reason: why)
        }
        guard request.method == "GET" else { return .whole(reason: "Range ignored on \(request.method): defined for GET only (RFC 9110 §14.2)") }
        guard status == 200 else { return .whole(reason: "Range ignored: the stored response is a \(status), not a complete 200") }
        if let ifRange = request.headers.first("If-Range"), !ifRangeMatches(ifRange, stored: headers) {
            return .whole(reason: "If-Range does not match the stored validator: whole representation (RFC 9110 §13.1.5)")
        }
        switch range {
        case .multiple(let specs):
            return .forwardToOrigin(reason: "\(specs.count) ranges asked for: multipart/byteranges comes from the origin, uncached")
        case .single(let spec):
            if length == 0, case .suffix(let n) = spec, n > 0 {
                return .whole(reason: "suffix range of an empty representation: nothing a 206 can carry (RFC 9110 §14.1.3)")
            }
            guard let resolved = spec.resolved(length: length) else {
                return .unsatisfiable(contentRange: ContentRange(range: nil, completeLength: length))
            }
            return .partial(range: resolved, contentRange: ContentRange(range: resolved, completeLength: length))
        }
    }

    /// Whether an `If-Range` value holds for a stored response with `stored` headers (RFC 9110 §13.1.5).
    ///
    /// An entity tag matches the stored `ETag` only by strong comparison (a weak tag on either side never
    /// matches); an HTTP-date matches only when it equals the stored `Last-Modified` exactly and that
    /// `Last-Modified` is strong (``isStrongLastModified(_:)``). An unparsable value never matches.
    public static func ifRangeMatches(_ value: String, stored: HTTPHeaders) -> Bool {
        let trimmed = HTTPHeaders.trimOWS(value)
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let tag = EntityTag(parsing: trimmed), let storedTag = EntityTag.of(stored) else { return false }
            return tag.strongMatches(storedTag)
        }
        guard let date = HTTPDate.parse(trimmed), let lastModifiedText = stored.first("Last-Modified"),
              let lastModified = HTTPDate.parse(lastModifiedText) else { return false }
        return date == lastModified && isStrongLastModified(stored)
    }

    /// Whether the `Last-Modified` of a stored response is a strong validator for a cache (RFC 9110 §8.8.2.2):
    /// the stored response has a valid `Date` and `Last-Modified` is at least 60 seconds before it.
    public static func isStrongLastModified(_ stored: HTTPHeaders) -> Bool {
        guard let lastModified = stored.first("Last-Modified").flatMap(HTTPDate.parse),
              let date = stored.first("Date").flatMap(HTTPDate.parse) else { return false }
        return date.timeIntervalSince(lastModified) >= 60
    }

    /// The `If-Range` value a cache sends to resume a stored partial with `stored` headers (RFC 9110 §13.1.5),
    /// or `nil` when it has no strong validator and must not resume (fetch the whole instead).
    ///
    /// A strong `ETag` wins; a weak one never resumes (§13.1.5: a client must not send a weak tag), and with
    /// no `ETag` a strong `Last-Modified` (``isStrongLastModified(_:)``) is sent as is.
    public static func ifRangeValidator(_ stored: HTTPHeaders) -> String? {
        if let tag = EntityTag.of(stored) { return tag.isWeak ? nil : tag.description }
        guard isStrongLastModified(stored), let lastModified = stored.first("Last-Modified") else { return nil }
        return HTTPHeaders.trimOWS(lastModified)
    }

    /// Whether the origin's `response` to `Range: bytes=<held>-` (with `If-Range`) may be appended to the
    /// `held` bytes of a partial whose response headers are `stored` (RFC 9110 §14.4, §15.3.7; RFC 9111 §3.4).
    ///
    /// A 200 replaces the partial. A 206 is appended only when it has one valid `Content-Range` (not
    /// `multipart/byteranges`), that range starts at or before `held` and reaches past it (the overlap is
    /// skipped), its complete length is given and equals the stored one (the stored `Content-Range` total, else
    /// `Content-Length`), its own `Content-Length` (when sent) is the range's byte count, a `Content-Encoding` it
    /// sends is the stored one, and both responses carry the same strong validator: strongly matching `ETag`s, or
    /// with no `ETag` on either side equal `Last-Modified` dates that are strong for the stored response.
    public static func partialCombination(held: Int64, stored: HTTPHeaders, response: CacheResponse) -> PartialCombination {
        if response.status == 200 { return .replace(reason: "200 to a range request: the whole representation") }
        guard response.status == 206 else { return .reject(reason: "status \(response.status) to a range request") }
        let lines = response.headers.values(for: "Content-Range")
        guard lines.count == 1, let contentRange = ContentRange(parsing: lines[0]), let range = contentRange.range else {
            let multipart = response.headers.first("Content-Type").map { HeaderSyntax.asciiLowercased($0).hasPrefix("multipart/byteranges") } ?? false
            return .reject(reason: multipart ? "206 with a multipart/byteranges body" : "206 without one valid Content-Range (RFC 9110 §14.4)")
        }
        guard range.first <= held else {
            return .reject(reason: "206 starts at byte \(range.first), after the \(held) bytes held: a gap")
        }
        guard range.last >= held else {
            return .reject(reason: "206 ends at byte \(range.last), before the \(held) bytes held: nothing new")
        }
        guard let total = contentRange.completeLength, let storedTotal = completeLength(stored), total == storedTotal else {
            return .reject(reason: "206 complete length \(contentRange.completeLength.map(String.init) ?? "*") does not match the stored \(completeLength(stored).map(String.init) ?? "unknown")")
        }
        let lengths = response.headers.values(for: "Content-Length")
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let length = exactDigits(Substring(HTTPHeaders.trimOWS(first))),
                  length == range.count else {
                return .reject(reason: "206 Content-Length \(first) is not the \(range.count) bytes of its Content-Range (RFC 9110 §14.4)")
            }
        }
        if let coding = codingMismatch(stored: stored, response: response.headers) {
            return .reject(reason: coding)
        }
        if let problem = strongValidatorMismatch(stored: stored, response: response.headers) {
            return .reject(reason: problem)
        }
        return .append(contentRange: contentRange, skip: held - range.first)
    }

    /// The complete length of the representation a stored response describes: its `Content-Range` total when it
    /// is a 206, else its `Content-Length`; `nil` when neither is known.
    public static func completeLength(_ stored: HTTPHeaders) -> Int64? {
        if let contentRange = ContentRange.of(stored) { return contentRange.completeLength }
        let lengths = stored.values(for: "Content-Length")
        guard let first = lengths.first, lengths.allSatisfy({ $0 == first }) else { return nil }
        return exactDigits(Substring(HTTPHeaders.trimOWS(first)))
    }

    /// `nil` unless the 206 names a `Content-Encoding` other than the stored one (none stored: identity); a 206
    /// that names none repeats no representation field (RFC 9110 §15.3.7), which is allowed.
    static func codingMismatch(stored: HTTPHeaders, response: HTTPHeaders) -> String? {
        func codings(_ headers: HTTPHeaders) -> [String] {
            headers.values(for: "Content-Encoding").flatMap { $0.split(separator: ",") }
                .map { HeaderSyntax.asciiLowercased(HTTPHeaders.trimOWS(String($0))) }
                .filter { !$0.isEmpty && $0 != "identity" }
        }
        guard response.contains("Content-Encoding") else { return nil }
        let kept = codings(stored), new = codings(response)
        return kept == new ? nil : "206 Content-Encoding \(new.isEmpty ? "identity" : new.joined(separator: ", ")) differs from the stored \(kept.isEmpty ? "identity" : kept.joined(separator: ", "))"
    }

    /// `nil` when `stored` and `response` share a strong validator (RFC 9111 §3.4), else why not, in words.
    static func strongValidatorMismatch(stored: HTTPHeaders, response: HTTPHeaders) -> String? {
        let storedTag = EntityTag.of(stored), newTag = EntityTag.of(response)
        if storedTag != nil || newTag != nil {
            guard let storedTag, let newTag else { return "only one of the responses has an ETag" }
            guard !storedTag.isWeak, !newTag.isWeak else { return "weak ETag: never combined (RFC 9111 §3.4)" }
            return storedTag.strongMatches(newTag) ? nil : "ETag changed from \(storedTag) to \(newTag)"
        }
        guard let a = stored.first("Last-Modified").flatMap(HTTPDate.parse),
              let b = response.first("Last-Modified").flatMap(HTTPDate.parse) else {
            return "no strong validator to prove both are the same representation"
        }
        guard a == b else { return "Last-Modified changed" }
        return isStrongLastModified(stored) ? nil : "Last-Modified is weak (within 60 s of Date, RFC 9110 §8.8.2.2)"
    }

    /// The header fields of a 206 cut from a complete stored response whose serving headers are `served`
    /// (RFC 9110 §15.3.7): `Content-Length` set to the range's byte count, `Content-Range` added (any stored
    /// one replaced); every other field kept.
    public static func partialContentHeaders(_ served: HTTPHeaders, contentRange: ContentRange) -> HTTPHeaders {
        var headers = served
        headers.remove("Content-Range")
        headers.set("Content-Length", String(contentRange.range?.count ?? 0))
        headers.add("Content-Range", contentRange.description)
        return headers
    }

    /// The header fields of a 416 generated from a stored response whose serving headers are `served`
    /// (RFC 9110 §15.5.17): `Date`, `Age`, `Cache-Control`, `ETag` and `Last-Modified` kept, `Content-Range:
    /// bytes */<length>` added, `Content-Length: 0`; representation fields such as `Content-Type` left out.
    public static func rangeNotSatisfiableHeaders(_ served: HTTPHeaders, contentRange: ContentRange) -> HTTPHeaders {
        let kept: Set<String> = ["date", "age", "cache-control", "etag", "last-modified"]
        var headers = HTTPHeaders(fields: served.fields.filter { kept.contains($0.name.lowercased()) })
        headers.add("Content-Range", contentRange.description)
        headers.add("Content-Length", "0")
        return headers
    }
}

extension RFC9111 {
    /// The complete stored response a cache builds when a 206 `partial` completes a stored partial response
    /// `stored` (RFC 9111 §3.4, §4.3.4): status 200, the header fields of the new 206 replacing the stored ones of
    /// the same name while every field the 206 does not carry is kept (``freshen(_:with:requestTime:responseTime:options:)``,
    /// which keeps `Content-Length`, `Content-Range`, `Content-Encoding` and hop-by-hop fields as stored), then
    /// `Content-Range` removed and `Content-Length` set to `completeLength` bytes. `requestTime` / `responseTime`
    /// (§4.2.3) become the 206 exchange's.
    public static func combinedPartial(_ stored: StoredResponse, with partial: CacheResponse, completeLength: Int64,
                                       requestTime: Date, responseTime: Date,
                                       options: EvaluationOptions = EvaluationOptions()) -> StoredResponse {
        var combined = freshen(stored, with: partial, requestTime: requestTime, responseTime: responseTime,
                               options: options)
        combined.response.status = 200
        combined.response.headers.remove("Content-Range")
        combined.response.headers.set("Content-Length", String(completeLength))
        return combined
    }
}
