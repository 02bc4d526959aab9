import Foundation

extension RFC9111 {
    /// What the decision functions need to know about a stored response at one instant.
    struct Facts {
        let response: CacheControl
        let request: CacheControl
        let lifetime: Lifetime
        let age: TimeInterval
        let mode: CacheMode

        init(stored: StoredResponse, request: CacheRequest, now: Date, options: EvaluationOptions, requestCC: CacheControl? = nil) {
            let parsed = ParsedResponse(stored.response.headers, targets: options.targetedFields)
            response = options.ignoreServerCacheControl ? CacheControl() : parsed.cacheControl
            self.request = requestCC ?? CacheControl.request(request.headers)
            lifetime = RFC9111.lifetime(stored, options: options, parsed: parsed)
            age = RFC9111.currentAge(stored, now: now, parsed: parsed)
            mode = options.mode
        }

        var isFresh: Bool { lifetime.seconds > age }
        var staleness: TimeInterval { age - lifetime.seconds }
        /// must-revalidate, or in a shared cache proxy-revalidate / s-maxage (§5.2.2.2, §5.2.2.8, §5.2.2.10).
        var forbidsStale: Bool {
            response.mustRevalidate || (mode == .shared && (response.proxyRevalidate || response.sMaxAge != nil))
        }
        var forbidsStaleName: String {
            if response.mustRevalidate { return "must-revalidate (RFC 9111 §5.2.2.2)" }
            if response.proxyRevalidate { return "proxy-revalidate in a shared cache (RFC 9111 §5.2.2.8)" }
            return "s-maxage in a shared cache (RFC 9111 §5.2.2.10)"
        }
        var ageText: String {
            "age \(RFC9111.seconds(age)), freshness lifetime \(RFC9111.seconds(lifetime.seconds)) (\(lifetime.source))"
        }
    }

    /// The cache's decision for `request` given the matching stored response (RFC 9111 §4, §4.2.4, §5.2.1).
    ///
    /// Policies first: ``CachePolicy/reload`` fetches; ``CachePolicy/returnCacheElseLoad`` and
    /// ``CachePolicy/returnCacheDontLoad`` serve any matching stored response (else fetch, or unsatisfiable for
    /// the don't-load one); ``CachePolicy/reloadRevalidating`` always validates. Under ``CachePolicy/useProtocol``:
    /// request/response `no-cache` → validate; fresh → serve, unless request `max-age` / `min-fresh` exclude it
    /// (ignored for `immutable` responses while fresh, RFC 8246); stale → serve only within request `max-stale`
    /// (never past must-revalidate, or proxy-revalidate / s-maxage in shared mode), serve and revalidate in the
    /// background within `stale-while-revalidate` (RFC 5861; with only-if-cached: serve without the background
    /// request), otherwise validate (or fetch without a validator).
    /// Request `only-if-cached` turns every network need into ``CacheDecision/unsatisfiable(reason:)`` (504).
    /// `stored` is checked with ``matches(stored:request:)``; `now` is the caller's clock reading.
    public static func evaluate(
        request: CacheRequest, stored: StoredResponse?, now: Date, options: EvaluationOptions
    ) -> CacheDecision {
        let requestCC = CacheControl.request(request.headers)
        let offline = options.policy.forbidsNetwork || requestCC.onlyIfCached
        if options.policy == .reload {
            return .fetch(reason: "policy \(CachePolicy.reload): the cache is not read")
        }
        guard isCacheableMethod(request.method) else {
            return miss("method \(request.method) is not answered from the cache (RFC 9111 §4)", offline: offline, options: options)
        }
        guard let stored else { return miss("no stored response", offline: offline, options: options) }
        if let mismatch = mismatchReason(stored: stored, request: request, secret: options.keySecret) {
            return miss(mismatch, offline: offline, options: options)
        }
        if options.policy == .returnCacheElseLoad || options.policy == .returnCacheDontLoad {
            let facts = Facts(stored: stored, request: request, now: now, options: options)
            let state = facts.isFresh ? "fresh" : "stale"
            return .useStored(reason: "policy \(options.policy) serves any stored response (\(state): \(facts.ageText))")
        }
        if options.policy == .reloadRevalidating {
            return mustValidate("policy \(CachePolicy.reloadRevalidating) validates every stored response",
                                request: request, stored: stored, onlyIfCached: requestCC.onlyIfCached)
        }
        return protocolDecision(request: request, stored: stored, now: now, options: options, requestCC: requestCC)
    }

    private static func miss(_ why: String, offline: Bool, options: EvaluationOptions) -> CacheDecision {
        if options.policy.forbidsNetwork {
            return .unsatisfiable(reason: why + "; policy \(options.policy) forbids the network")
        }
        if offline { return .unsatisfiable(reason: why + "; request only-if-cached forbids the network (RFC 9111 §5.2.1.7)") }
        return .fetch(reason: why)
    }

    private static func protocolDecision(
        request: CacheRequest, stored: StoredResponse, now: Date, options: EvaluationOptions, requestCC: CacheControl
    ) -> CacheDecision {
        let facts = Facts(stored: stored, request: request, now: now, options: options, requestCC: requestCC)
        let onlyIfCached = facts.request.onlyIfCached
        func validate(_ why: String) -> CacheDecision {
            mustValidate(why + "; " + facts.ageText, request: request, stored: stored, onlyIfCached: onlyIfCached)
        }
        if facts.request.noCache { return validate("request no-cache requires validation (RFC 9111 §5.2.1.4)") }
        if facts.response.noCache { return validate("response no-cache requires validation (RFC 9111 §5.2.2.4)") }
        if facts.isFresh {
            let immutable = facts.response.immutable
            if let maxAge = facts.request.maxAge, facts.age > TimeInterval(maxAge), !immutable {
                return validate("request max-age=\(maxAge) is below the current age (RFC 9111 §5.2.1.1)")
            }
            if let minFresh = facts.request.minFresh, facts.lifetime.seconds - facts.age < TimeInterval(minFresh), !immutable {
                return validate("request min-fresh=\(minFresh) is not met (RFC 9111 §5.2.1.3)")
            }
            return .useStored(reason: "fresh: \(facts.ageText)")
        }
        return staleDecision(facts, request: request, stored: stored, validate: validate)
    }

    private static func staleDecision(
        _ facts: Facts, request: CacheRequest, stored: StoredResponse, validate: (String) -> CacheDecision
    ) -> CacheDecision {
        let staleBy = "stale by \(RFC9111.seconds(facts.staleness))"
        if let maxAge = facts.request.maxAge, facts.age > TimeInterval(maxAge) {
            return validate("\(staleBy) and request max-age=\(maxAge) is below the current age (RFC 9111 §5.2.1.1)")
        }
        if facts.forbidsStale { return validate("\(staleBy) and \(facts.forbidsStaleName) forbids serving stale") }
        if let maxStale = facts.request.maxStale, maxStale.allows(facts.staleness) {
            return .useStored(reason: "\(staleBy), within the request's max-stale (RFC 9111 §5.2.1.2); \(facts.ageText)")
        }
        if let window = facts.response.staleWhileRevalidate, facts.staleness <= TimeInterval(window), facts.request.minFresh == nil {
            let why = "\(staleBy), within stale-while-revalidate=\(window) (RFC 5861 §3); \(facts.ageText)"
            if facts.request.onlyIfCached {
                return .useStored(reason: why + "; only-if-cached, so no background revalidation")
            }
            let background = conditionalRequest(for: request, stored: stored) ?? request
            return .useStoredAndRevalidate(conditional: background, reason: why)
        }
        return validate("\(staleBy) (RFC 9111 §4.2.4)")
    }

    /// Validation is required: conditional request if there is a validator, else fetch; only-if-cached → 504.
    static func mustValidate(_ why: String, request: CacheRequest, stored: StoredResponse, onlyIfCached: Bool) -> CacheDecision {
        if onlyIfCached {
            return .unsatisfiable(reason: why + "; request only-if-cached forbids contacting the origin (RFC 9111 §5.2.1.7)")
        }
        if let conditional = conditionalRequest(for: request, stored: stored) {
            return .revalidate(conditional: conditional, reason: why)
        }
        return .fetch(reason: why + "; the stored response has no validator (ETag, Last-Modified), so it is fetched again")
    }
}
