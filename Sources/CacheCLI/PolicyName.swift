import Foundation
import HTTPCacheSemantics

/// The `--policy` names: every ``CachePolicy``'s ``CachePolicy/name`` plus ASI's aliases.
package enum PolicyName {
    /// Every accepted name and the policy it selects, in the order help lists them: the five policy names, then
    /// ASI's aliases (`ask-server-if-modified-when-stale` is `use-protocol`, `ask-server-if-modified` is
    /// `reload-revalidating`, `only-load-if-not-cached` is `return-cache-else-load`, `dont-load` is
    /// `return-cache-dont-load`).
    package static let table: [(name: String, policy: CachePolicy)] = CachePolicy.allCases.map { ($0.name, $0) } + [
        ("ask-server-if-modified-when-stale", .askServerIfModifiedWhenStale),
        ("ask-server-if-modified", .askServerIfModified),
        ("only-load-if-not-cached", .onlyLoadIfNotCached),
        ("dont-load", .dontLoad),
    ]

    /// The policy named `name`.
    /// - Throws: ``UsageError`` naming the bad value and listing the valid names.
    package static func policy(named name: String) throws(UsageError) -> CachePolicy {
        guard let entry = table.first(where: { $0.name == name }) else {
            throw UsageError("invalid value '\(name)' for '--policy': expected one of \(table.map(\.name).joined(separator: ", "))")
        }
        return entry.policy
    }
}
