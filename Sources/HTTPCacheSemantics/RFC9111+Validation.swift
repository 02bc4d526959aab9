import Foundation

extension RFC9111 {
    /// The conditional request that validates `stored` (RFC 9111 §4.3.1); `nil` when it has no validator.
    ///
    /// Adds `If-None-Match` with the stored `ETag` value sent back verbatim, and `If-Modified-Since` with the
    /// stored `Last-Modified` when it is a valid HTTP-date; any caller-supplied preconditions of the same names
    /// are replaced. Method, URL and other header fields are kept.
    public static func conditionalRequest(for request: CacheRequest, stored: StoredResponse) -> CacheRequest? {
        conditionalRequest(for: request, storedVariants: [stored])
    }

    /// The conditional request that validates several stored variants at once (§4.3.1): `If-None-Match` lists
    /// every stored entity tag; `If-Modified-Since` is added only for a single variant. `nil` without validators.
    public static func conditionalRequest(for request: CacheRequest, storedVariants: [StoredResponse]) -> CacheRequest? {
        var tags: [String] = []
        for variant in storedVariants {
            for value in variant.response.headers.values(for: "ETag") where !value.isEmpty && !tags.contains(value) {
                tags.append(value)
            }
        }
        var lastModified: String?
        if storedVariants.count == 1, let value = storedVariants[0].response.headers.first("Last-Modified"),
           HTTPDate.parse(value) != nil {
            lastModified = value
        }
        guard !tags.isEmpty || lastModified != nil else { return nil }
        var conditional = request
        conditional.headers.remove("If-None-Match")
        conditional.headers.remove("If-Modified-Since")
        if !tags.isEmpty { conditional.headers.add("If-None-Match", tags.joined(separator: ", ")) }
        if let lastModified { conditional.headers.add("If-Modified-Since", lastModified) }
        return conditional
    }

    /// Evaluates the caller's own preconditions against a stored response (RFC 9111 §4.3.2, RFC 9110 §13.2.2):
    /// `true` = answer 304 Not Modified, `false` = serve the full stored response, `nil` = not a conditional request.
    ///
    /// `If-None-Match` wins: `*` or a weak match with the stored `ETag` means not modified. Otherwise, for GET and
    /// HEAD, a valid `If-Modified-Since` means not modified when the stored `Last-Modified` (else its `Date`, else
    /// `response_time`) is not later than it. An unparseable `If-Modified-Since` is ignored (RFC 9110 §13.1.3).
    public static func isNotModified(request: CacheRequest, stored: StoredResponse) -> Bool? {
        let headers = stored.response.headers
        let ifNoneMatch = request.headers.values(for: "If-None-Match")
        if !ifNoneMatch.isEmpty {
            let list = EntityTag.parseList(ifNoneMatch.joined(separator: ", "))
            if list.any { return true }
            guard let tag = EntityTag.of(headers) else { return false }
            return list.tags.contains { $0.weakMatches(tag) }
        }
        guard isCacheableMethod(request.method),
              let since = HeaderSyntax.firstDate(request.headers, "If-Modified-Since") else { return nil }
        let modified = HeaderSyntax.firstDate(headers, "Last-Modified") ?? HeaderSyntax.firstDate(headers, "Date") ?? stored.responseTime
        return modified <= since
    }

    /// Which stored responses a 304 (Not Modified) selects for freshening (RFC 9111 §4.3.4); indexes into `candidates`.
    ///
    /// A strong validator in the 304 (strong `ETag`, or `Last-Modified` at least 60 s before its `Date`, RFC 9110
    /// §8.8.2.2) selects every candidate carrying the same one — none if nobody does. Otherwise a weak validator
    /// selects the most recently received matching candidate. A 304 without validators selects the only
    /// candidate when there is exactly one and it lacks validators too; it also selects `validated`, the index
    /// of the one candidate whose validators the cache's own conditional request carried
    /// (``conditionalRequest(for:stored:)``): the origin answered a question about that response alone, and
    /// RFC 9110 §15.4.5 obliges it to repeat the `ETag` it left out. `validated` is `nil` for a 304 to a
    /// request the caller made conditional.
    public static func selectForFreshening(_ candidates: [StoredResponse], notModified: CacheResponse,
                                           validated: Int? = nil) -> [Int] {
        let headers = notModified.headers
        let tag = EntityTag.of(headers)
        let lastModified = HeaderSyntax.firstDate(headers, "Last-Modified")
        let strongLastModified = lastModified.flatMap { lm -> Date? in
            guard let date = HeaderSyntax.firstDate(headers, "Date"), date.timeIntervalSince(lm) >= 60 else { return nil }
            return lm
        }
        if (tag.map { !$0.isWeak } ?? false) || strongLastModified != nil {
            return candidates.indices.filter { index in
                let stored = candidates[index].response.headers
                if let tag, !tag.isWeak, let storedTag = EntityTag.of(stored), tag.strongMatches(storedTag) { return true }
                if let lm = strongLastModified, HeaderSyntax.firstDate(stored, "Last-Modified") == lm { return true }
                return false
            }
        }
        if tag != nil || lastModified != nil {
            let matching = candidates.indices.filter { index in
                let stored = candidates[index].response.headers
                if let tag, let storedTag = EntityTag.of(stored), tag.weakMatches(storedTag) { return true }
                if let lastModified, HeaderSyntax.firstDate(stored, "Last-Modified") == lastModified { return true }
                return false
            }
            guard let newest = matching.max(by: { candidates[$0].responseTime < candidates[$1].responseTime }) else { return [] }
            return [newest]
        }
        if candidates.count == 1, !hasValidator(candidates[0].response.headers) { return [0] }
        if let validated, candidates.indices.contains(validated) { return [validated] }
        return []
    }

    private static func hasValidator(_ headers: HTTPHeaders) -> Bool {
        headers.contains("ETag") || headers.contains("Last-Modified")
    }

    /// Freshens `stored` with a 304 (RFC 9111 §4.3.4, header update rules of §3.2).
    ///
    /// Every field of the 304 replaces the stored lines of the same name, except hop-by-hop and Connection-named
    /// fields and ``fieldsKeptWhenFreshening`` (Content-Length, Content-Encoding, Content-Range, Transfer-Encoding).
    /// A stale `Age` is dropped when the 304 has none; a missing `Date` becomes `responseTime` (RFC 9110 §6.6.1).
    /// `requestTime` / `responseTime` become the new exchange's. The caller's expiry: with
    /// ``EvaluationOptions/lifetimeOverride`` (seconds) it becomes `responseTime + lifetimeOverride`; otherwise a
    /// stored ``StoredResponse/overrideExpiry`` keeps its length from receipt. A shared cache
    /// (``EvaluationOptions/mode``) takes no ``perClientResponseFields`` from the 304 (`Set-Cookie` goes to the
    /// client that revalidated, never into the stored response, §3.1, §7.3) and keeps none stored earlier.
    public static func freshen(
        _ stored: StoredResponse, with notModified: CacheResponse, requestTime: Date, responseTime: Date,
        options: EvaluationOptions = EvaluationOptions()
    ) -> StoredResponse {
        var updated = stored
        var headers = stored.response.headers
        var skip = hopByHopFields.union(connectionNamedFields(notModified.headers)).union(fieldsKeptWhenFreshening)
        if options.mode == .shared {
            skip.formUnion(perClientResponseFields)
            headers = withoutPerClientFields(headers)
        }
        var replacedNames: [String] = []
        for field in notModified.headers where !skip.contains(field.name.lowercased()) {
            let lower = field.name.lowercased()
            if !replacedNames.contains(lower) {
                replacedNames.append(lower)
                headers = replacingAll(headers, name: field.name, with: notModified.headers.fields.filter { $0.hasName(lower) })
            }
        }
        if !notModified.headers.contains("Age") { headers.remove("Age") }
        if !notModified.headers.contains("Date") { headers.set("Date", HTTPDate.format(responseTime)) }
        updated.response.headers = headers
        if let lifetime = options.lifetimeOverride {
            updated.overrideExpiry = responseTime.addingTimeInterval(lifetime)
        } else if let expiry = stored.overrideExpiry {
            updated.overrideExpiry = responseTime.addingTimeInterval(expiry.timeIntervalSince(stored.responseTime))
        }
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Replaces every line named `name` with `lines`, placed where the first old line was (or appended).
    private static func replacingAll(_ headers: HTTPHeaders, name: String, with lines: [HTTPHeaders.Field]) -> HTTPHeaders {
        var result: [HTTPHeaders.Field] = []
        var inserted = false
        for field in headers.fields {
            if field.hasName(name) {
                if !inserted { result.append(contentsOf: lines) }
                inserted = true
            } else {
                result.append(field)
            }
        }
        if !inserted { result.append(contentsOf: lines) }
        return HTTPHeaders(fields: result)
    }

    /// Freshens a stored GET response with a 200 response to HEAD (RFC 9111 §4.3.5); `nil` = the stored response
    /// no longer matches and must be treated as stale (invalidate or revalidate it).
    ///
    /// It matches when every validator the HEAD response carries (`ETag`, `Last-Modified`) equals the stored one
    /// and its `Content-Length`, if any, equals the stored one; then it updates like a 304 (§3.2).
    public static func freshenWithHEAD(
        _ stored: StoredResponse, head: CacheResponse, requestTime: Date, responseTime: Date,
        options: EvaluationOptions = EvaluationOptions()
    ) -> StoredResponse? {
        guard head.status == 200 else { return nil }
        let mine = stored.response.headers, theirs = head.headers
        for name in ["ETag", "Last-Modified", "Content-Length"] {
            if let value = theirs.first(name), mine.first(name) != value { return nil }
        }
        return freshen(stored, with: head, requestTime: requestTime, responseTime: responseTime, options: options)
    }

    /// What to do when validating (or refetching) `stored` failed with a 5xx (`status`) or a network error
    /// (`status == nil`) (RFC 9111 §4.3.3, §4.2.4; RFC 5861 §4).
    ///
    /// ``CacheDecision/useStored(reason:)`` when the stored response is still fresh, or stale but allowed:
    /// `stale-if-error` (response or request) covers the staleness, the request's `max-stale` covers it, or
    /// ``EvaluationOptions/fallbackToCacheIfLoadFails``, or for a network error
    /// ``EvaluationOptions/servesStaleWhenDisconnected`` (default on) — never past must-revalidate, response no-cache, or
    /// proxy-revalidate / s-maxage in a shared cache. Otherwise: ``CacheDecision/fetch(reason:)`` for a status
    /// (deliver the origin's error response, or for a non-5xx status simply use it) and
    /// ``CacheDecision/unsatisfiable(reason:)`` for a network error (the caller reports the error / a 504).
    public static func errorDecision(
        stored: StoredResponse, request: CacheRequest, now: Date, options: EvaluationOptions, status: Int?
    ) -> CacheDecision {
        if let status, !(500...599).contains(status) {
            return .fetch(reason: "status \(status) is not a server error; the origin's response is used")
        }
        let failure = status.map { "origin answered \($0)" } ?? "network error"
        let facts = Facts(stored: stored, request: request, now: now, options: options)
        func refuse(_ why: String) -> CacheDecision {
            let text = "\(failure); \(why); \(facts.ageText)"
            return status == nil ? .unsatisfiable(reason: text) : .fetch(reason: text + "; the error response is delivered")
        }
        if facts.response.noCache { return refuse("response no-cache forbids serving without validation (RFC 9111 §4.2.4)") }
        if facts.isFresh, !facts.request.noCache {
            return .useStored(reason: "\(failure); the stored response is still fresh; \(facts.ageText)")
        }
        if facts.forbidsStale { return refuse("\(facts.forbidsStaleName) forbids serving stale") }
        let staleness = max(0, facts.staleness)
        if let window = facts.response.staleIfError ?? facts.request.staleIfError, staleness <= TimeInterval(window) {
            return .useStored(reason: "\(failure); stale by \(RFC9111.seconds(staleness)), within stale-if-error=\(window) (RFC 5861 §4)")
        }
        if let maxStale = facts.request.maxStale, maxStale.allows(staleness) {
            return .useStored(reason: "\(failure); stale by \(RFC9111.seconds(staleness)), within the request's max-stale")
        }
        if options.fallbackToCacheIfLoadFails {
            return .useStored(reason: "\(failure); fallbackToCacheIfLoadFails serves the stale response (RFC 9111 §4.2.4)")
        }
        if status == nil, options.servesStaleWhenDisconnected, !facts.request.noCache {
            return .useStored(reason: "\(failure); stale by \(RFC9111.seconds(staleness)), served while disconnected (RFC 9111 §4.2.4)")
        }
        return refuse("stale by \(RFC9111.seconds(staleness)) and nothing allows serving it stale")
    }
}
