import Foundation

extension RFC9111 {
    /// A freshness lifetime in seconds and a sentence saying where it came from.
    struct Lifetime {
        var seconds: TimeInterval
        var source: String
    }

    /// The response fields freshness and age depend on, parsed once per decision.
    struct ParsedResponse {
        let cacheControl: CacheControl
        /// Whether `cacheControl` came from a targeted field (RFC 9213): `Expires` is then ignored.
        let targeted: Bool
        let date: Date?
        let age: Int?

        init(_ headers: HTTPHeaders, targets: [String] = []) {
            (cacheControl, targeted) = RFC9111.responseDirectives(headers, targets: targets)
            date = HeaderSyntax.firstDate(headers, "Date")
            age = HeaderSyntax.age(headers)
        }
    }

    /// The freshness lifetime in seconds (RFC 9111 §4.2.1), never negative.
    ///
    /// Order: the caller's ``StoredResponse/overrideExpiry`` (or a pending sliding expiry), then
    /// ``EvaluationOptions/lifetimeOverride`` — both counted from `response_time`, so the server's `Age` does not
    /// shorten them; then (unless ``EvaluationOptions/ignoreServerCacheControl``) `s-maxage` in shared mode,
    /// `max-age` (from the first valid targeted field of ``EvaluationOptions/targetedFields`` instead of
    /// `Cache-Control` and `Expires` when there is one, RFC 9213 §2.1), `Expires − Date` (an invalid or repeated, differing `Expires` means 0: already stale; no
    /// `Date` → `response_time`); finally the heuristic of §4.2.2 for heuristically cacheable statuses or `public`.
    public static func freshnessLifetime(_ stored: StoredResponse, options: EvaluationOptions) -> TimeInterval {
        lifetime(stored, options: options, parsed: ParsedResponse(stored.response.headers, targets: options.targetedFields)).seconds
    }

    static func lifetime(_ stored: StoredResponse, options: EvaluationOptions, parsed: ParsedResponse) -> Lifetime {
        let initialAge = correctedInitialAge(stored, parsed: parsed)
        if let expiry = effectiveOverrideExpiry(stored) {
            let seconds = max(0, initialAge + expiry.timeIntervalSince(stored.responseTime))
            return Lifetime(seconds: seconds, source: "caller's expiry \(HTTPDate.format(expiry))")
        }
        if let override = options.lifetimeOverride {
            return Lifetime(seconds: max(0, initialAge + override),
                            source: "caller's lifetime \(RFC9111.seconds(override)) from receipt")
        }
        let headers = stored.response.headers
        if !options.ignoreServerCacheControl,
           let explicit = explicitLifetime(headers, parsed: parsed, stored: stored, mode: options.mode) {
            return explicit
        }
        return heuristicLifetime(stored, options: options, parsed: parsed)
    }

    static func effectiveOverrideExpiry(_ stored: StoredResponse) -> Date? {
        if let expiry = stored.overrideExpiry { return expiry }
        if let sliding = stored.slidingLifetime { return stored.responseTime.addingTimeInterval(sliding) }
        return nil
    }

    private static func explicitLifetime(
        _ headers: HTTPHeaders, parsed: ParsedResponse, stored: StoredResponse, mode: CacheMode
    ) -> Lifetime? {
        let cc = parsed.cacheControl
        if mode == .shared, let s = cc.sMaxAge {
            return Lifetime(seconds: TimeInterval(s), source: "s-maxage=\(s)")
        }
        if let m = cc.maxAge { return Lifetime(seconds: TimeInterval(m), source: "max-age=\(m)") }
        if parsed.targeted { return nil }  // RFC 9213 §2.1: Expires is ignored with a targeted field
        let expiresValues = headers.values(for: "Expires")
        guard let first = expiresValues.first else { return nil }
        if Set(expiresValues).count > 1 {
            return Lifetime(seconds: 0, source: "several differing Expires values, treated as stale (RFC 9111 §4.2.1)")
        }
        guard let expires = HTTPDate.parse(first) else {
            return Lifetime(seconds: 0, source: "invalid Expires \"\(first)\", treated as already stale (RFC 9111 §5.3)")
        }
        let base = parsed.date ?? stored.responseTime
        return Lifetime(seconds: max(0, expires.timeIntervalSince(base)), source: "Expires − Date")
    }

    private static func heuristicLifetime(_ stored: StoredResponse, options: EvaluationOptions, parsed: ParsedResponse) -> Lifetime {
        let headers = stored.response.headers
        let isPublic = !options.ignoreServerCacheControl && parsed.cacheControl.isPublic
        guard heuristicallyCacheableStatuses.contains(stored.response.status) || isPublic else {
            return Lifetime(seconds: 0, source: "no explicit freshness and status \(stored.response.status) is not heuristically cacheable")
        }
        guard let lastModified = HeaderSyntax.firstDate(headers, "Last-Modified") else {
            return Lifetime(seconds: 0, source: "no explicit freshness and no Last-Modified for a heuristic")
        }
        let base = parsed.date ?? stored.responseTime
        let since = max(0, base.timeIntervalSince(lastModified))
        let fraction = options.heuristicFraction.isFinite ? max(0, options.heuristicFraction) : 0
        let seconds = min(since * fraction, max(0, options.heuristicCap))
        return Lifetime(seconds: seconds, source: "heuristic \(fraction) × (Date − Last-Modified), capped at \(RFC9111.seconds(options.heuristicCap)) (RFC 9111 §4.2.2)")
    }

    /// The corrected initial age in seconds (RFC 9111 §4.2.3): max(apparent_age, Age + response_delay).
    ///
    /// `apparent_age = max(0, response_time − Date)` (no valid `Date` → 0); `response_delay = response_time − request_time`
    /// (negative delays count as 0).
    public static func correctedInitialAge(_ stored: StoredResponse) -> TimeInterval {
        let headers = stored.response.headers
        return correctedInitialAge(stored, date: HeaderSyntax.firstDate(headers, "Date"), age: HeaderSyntax.age(headers))
    }

    static func correctedInitialAge(_ stored: StoredResponse, parsed: ParsedResponse) -> TimeInterval {
        correctedInitialAge(stored, date: parsed.date, age: parsed.age)
    }

    private static func correctedInitialAge(_ stored: StoredResponse, date: Date?, age: Int?) -> TimeInterval {
        let dateValue = date ?? stored.responseTime
        let apparentAge = max(0, stored.responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, stored.responseTime.timeIntervalSince(stored.requestTime))
        return max(apparentAge, TimeInterval(age ?? 0) + responseDelay)
    }

    /// The current age in seconds (RFC 9111 §4.2.3): corrected_initial_age + resident_time, where
    /// `resident_time = now − response_time` (a clock that went backwards counts as 0).
    public static func currentAge(_ stored: StoredResponse, now: Date) -> TimeInterval {
        correctedInitialAge(stored) + max(0, now.timeIntervalSince(stored.responseTime))
    }

    static func currentAge(_ stored: StoredResponse, now: Date, parsed: ParsedResponse) -> TimeInterval {
        correctedInitialAge(stored, parsed: parsed) + max(0, now.timeIntervalSince(stored.responseTime))
    }

    /// Whether `stored` is fresh at `now` (RFC 9111 §4.2): freshness lifetime > current age.
    public static func isFresh(_ stored: StoredResponse, now: Date, options: EvaluationOptions) -> Bool {
        let parsed = ParsedResponse(stored.response.headers, targets: options.targetedFields)
        return lifetime(stored, options: options, parsed: parsed).seconds > currentAge(stored, now: now, parsed: parsed)
    }

    /// The current age (seconds, §4.2.3) and freshness a response reports to its caller at `now`: fresh per
    /// §4.2 (``isFresh(_:now:options:)``), except that an unqualified response `no-cache` (§5.2.2.4) makes it
    /// not fresh — it may not be used without validation — unless the caller's expiry
    /// (``StoredResponse/overrideExpiry``) or ``EvaluationOptions/ignoreServerCacheControl`` replaces the
    /// server's cache control.
    public static func reportedFreshness(_ stored: StoredResponse, now: Date,
                                         options: EvaluationOptions) -> (age: TimeInterval, isFresh: Bool) {
        let age = currentAge(stored, now: now)
        var fresh = isFresh(stored, now: now, options: options)
        if fresh, stored.overrideExpiry == nil, !options.ignoreServerCacheControl,
           CacheControl.response(stored.response.headers).noCache {
            fresh = false
        }
        return (age, fresh)
    }
}
