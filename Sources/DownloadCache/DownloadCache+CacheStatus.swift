import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

extension DownloadCache {
    /// Why a GET that was not a fast hit goes to the origin, for Cache-Status `fwd` (RFC 9211 §2.2): `bypass` when
    /// the request does not read the cache, `uri-miss` when nothing is stored under its URI, `vary-miss` when
    /// stored variants exist but none matches, `request` when a fresh match was refused by the request's own
    /// directives or policy, `stale` otherwise (stale, or it must be validated).
    func forwardReason(_ request: CacheRequest, options: RequestOptions) -> CacheStatus.Forward {
        guard options.readsCache else { return .bypass }
        let primary = RFC9111.primaryKey(method: "GET", url: request.url)
        if store.variants(forPrimaryKey: primary).isEmpty { return .uriMiss }
        guard let candidate = candidates(for: request).first else { return .varyMiss }
        let fresh = RFC9111.isFresh(candidate.metadata.stored, now: configuration.now(),
                                    options: evaluationOptions(options))
        return fresh ? .request : .stale
    }
}
