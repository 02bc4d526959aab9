import Foundation
import HTTPCacheSemantics

/// The `--policy` names: kebab-case spellings of every ``CachePolicy`` plus ASI's aliases.
public enum PolicyName {
    /// Every accepted name and the policy it selects, in the order help lists them.
    ///
    /// ASI aliases: `ask-server-if-modified-when-stale` is RFC 9111 behaviour (`use-protocol`),
    /// `ask-server-if-modified` always revalidates (`reload-revalidating`).
    public static let table: [(name: String, policy: CachePolicy)] = [
        ("use-protocol", .useProtocolCachePolicy),
        ("reload", .reloadIgnoringLocalCacheData),
        ("return-cache-else-load", .returnCacheDataElseLoad),
        ("return-cache-dont-load", .returnCacheDataDontLoad),
        ("reload-revalidating", .reloadRevalidatingCacheData),
        ("ask-server-if-modified-when-stale", .useProtocolCachePolicy),
        ("ask-server-if-modified", .reloadRevalidatingCacheData),
        ("only-load-if-not-cached", .onlyLoadIfNotCached),
        ("dont-load", .dontLoad),
    ]

    /// The policy named `name`.
    /// - Throws: ``UsageError`` naming the bad value and listing the valid names.
    public static func policy(named name: String) throws(UsageError) -> CachePolicy {
        guard let entry = table.first(where: { $0.name == name }) else {
            throw UsageError("invalid value '\(name)' for '--policy': expected one of \(table.map(\.name).joined(separator: ", "))")
        }
        return entry.policy
    }
}
