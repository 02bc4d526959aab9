import CacheStore
import Foundation
import HTTPCacheSemantics

/// Turns errors and decision texts into words for messages and logs (QA round 2: no Swift case dumps such as
/// `CacheStoreError.busy` or `policy dontLoad` in what a user reads).
enum ErrorWords {
    /// `error` in words: a `CacheStoreError` as "<what happened in words>: <detail>", a `DownloadError` or any
    /// other error by its description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? CacheStoreError { return describe(error) }
        return "\(error)"
    }

    /// A store failure in words, e.g. "the cache index is locked by another process: ...".
    static func describe(_ error: CacheStoreError) -> String {
        let words: String
        switch error.code {
        case .diskFull: words = "the disk is full"
        case .permissionDenied: words = "permission denied"
        case .corruptIndex: words = "the cache index is damaged"
        case .io: words = "input/output error"
        case .invalidNamespace: words = "invalid namespace"
        case .notFound: words = "not found"
        case .busy: words = "the cache index is locked by another process"
        case .invalidArgument: words = "the store refused the operation"
        case .unsafeFile: words = "a file in the cache directory is unsafe to use"
        }
        return error.detail.isEmpty ? words : "\(words): \(error.detail)"
    }

    /// The command-line spelling of each policy (`dlcache get --policy`), used in messages.
    static let policyNames: [(CachePolicy, String)] = [
        (.useProtocolCachePolicy, "use-protocol"),
        (.reloadIgnoringLocalCacheData, "reload"),
        (.returnCacheDataElseLoad, "return-cache-else-load"),
        (.returnCacheDataDontLoad, "return-cache-dont-load"),
        (.reloadRevalidatingCacheData, "reload-revalidating"),
        (.onlyLoadIfNotCached, "only-load-if-not-cached"),
        (.dontLoad, "dont-load"),
    ]

    /// `text` with every "policy <Swift case name>" replaced by "policy <kebab-case name>" (e.g. "policy dont-load").
    static func kebabPolicies(_ text: String) -> String {
        var result = text
        // Longest case names first, so "returnCacheDataDontLoad" is not half-replaced by "dontLoad".
        for (policy, name) in policyNames.sorted(by: { "\($0.0)".count > "\($1.0)".count }) {
            result = result.replacingOccurrences(of: "policy \(policy)", with: "policy \(name)")
        }
        return result
    }

    /// The standard reason phrase of `status` (RFC 9110 §15, ``HTTPStatusText``'s table), or "" for an unknown code.
    static func reasonPhrase(_ status: Int) -> String {
        HTTPStatusText.standardText(for: status) ?? ""
    }
}
