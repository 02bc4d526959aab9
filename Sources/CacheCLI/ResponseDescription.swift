import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// How `get` describes a response: the `-v` summary line, the `--json` object, and failure messages.
enum ResponseDescription {
    /// `HIT`, `MISS`, `REVALIDATED` or `STALE` for a response source.
    static func label(_ source: ResponseSource) -> String {
        switch source {
        case .cache: return "HIT"
        case .network: return "MISS"
        case .revalidated: return "REVALIDATED"
        case .stale: return "STALE"
        }
    }

    /// One line for `-v`, e.g. `HIT fresh age=3s 1234 bytes status=200; fresh: age 3 s, freshness lifetime 60 s
    /// (max-age=60)`.
    static func summaryLine(_ response: CachedResponse) -> String {
        let state = response.isFresh ? "fresh" : "stale"
        return "\(label(response.source)) \(state) age=\(Formatting.age(response.age)) \(response.bodySize) bytes "
            + "status=\(response.status); \(TerminalText.escaped(response.reason))"
    }

    /// One `-v` line per redirect followed, e.g. `MISS 302 http://h/a -> Location: http://h/b`.
    static func redirectLine(_ hop: RedirectHop) -> String {
        "\(label(hop.source)) \(hop.status) \(TerminalText.escaped(hop.url.absoluteString)) -> Location: "
            + TerminalText.escaped(hop.location.absoluteString)
    }

    /// The `--json` object: url (the final one), status, source, bytes, path, age, fresh, stored (whether the
    /// response is in the cache after this call: a hit, or a network response this call stored; when false,
    /// `reason` says why, e.g. a body over `--max-entry`), reason, cacheStatus (RFC 9211 member), headers
    /// (+ statusText, fromCache), and redirects: one object per hop followed, first first (`url`, `status`,
    /// `location`, `source`; `[]` when none was followed).
    static func json(_ response: CachedResponse) -> [String: Any] {
        [
            "redirects": response.redirects.map { hop -> [String: Any] in
                ["url": hop.url.absoluteString, "status": hop.status, "location": hop.location.absoluteString,
                 "source": hop.source.rawValue]
            },
            "url": response.url.absoluteString,
            "status": response.status,
            "statusText": response.statusText,
            "source": response.source.rawValue,
            "fromCache": response.isFromCache,
            "bytes": response.bodySize,
            "path": JSONOutput.orNull(response.storedBodyURL?.path),
            "age": JSONOutput.seconds(response.age),
            "fresh": response.isFresh,
            "stored": response.isFromCache || response.cacheStatus.stored,
            "reason": response.reason,
            "cacheStatus": response.cacheStatus.fieldValue,
            "headers": response.headers.map { [$0.name, $0.value] },
        ]
    }

    /// The one-line message for a failed fetch: the sentence for its ``FailureKind`` (the one classification
    /// that also picks the exit code), naming the URL and, for TLS, the options that change trust; the error's
    /// detail in parentheses. A failed redirect target is named by its own URL (`DownloadError.url`), with the
    /// requested one. Any other error: `cannot get <url>: ` and its words (``ErrorText/describe(_:)``).
    ///
    /// `kept`: bytes of an interrupted transfer kept as a partial entry for `url` (nil or 0: none). When some are
    /// kept, a timeout, lost connection, truncation or interruption says so and that the next `get` resumes,
    /// instead of "nothing usable is cached".
    ///
    /// `consultedCache` false (`--no-read`): the cache was not asked, so the message says that instead of
    /// "nothing usable is cached".
    ///
    /// `pinning` (`--pin`): bytes kept say the pin is not kept with them (a partial is not an entry, and the
    /// index has no pin for it), so only a later `get --pin` pins the complete response.
    static func failureMessage(_ error: any Error, url: URL, kept: Int64? = nil, consultedCache: Bool = true,
                               pinning: Bool = false) -> String {
        guard let error = error as? DownloadError else {
            return "cannot get \(url.absoluteString): \(ErrorText.describe(error))"
        }
        let target = error.url.map { "\($0.absoluteString) (redirect target of \(url.absoluteString))" }
            ?? url.absoluteString
        let detail = ErrorText.oneLine(error.detail)
        let kind = FailureKind(error)
        let nothing = consultedCache ? " and nothing usable is cached" : "; --no-read skipped the cache"
        let pinNote = pinning ? " (not pinned: a partial keeps no pin, so resume it with get --pin to pin the complete response)" : ""
        let resumes = kept.map { $0 > 0 ? "; the \(Formatting.bytes($0)) received so far are kept and the next get resumes from there\(pinNote)" : "" } ?? ""
        switch kind {
        case .dns:
            return "network error: cannot resolve the origin's host name for \(target)\(nothing) (\(detail))"
        case .tls, .tlsCertificate:
            return "tls error: " + (kind == .tlsCertificate ? "the origin's certificate for \(target) is not trusted"
                                                             : "the TLS handshake for \(target) failed")
                + " (\(detail); --cacert FILE trusts a private CA, -k skips the check)"
        case .http:
            return "HTTP error \(error.code.httpStatus.map(String.init) ?? "") for \(target): \(detail)"
        case .connect:
            if !resumes.isEmpty { return "network error: the connection to the origin for \(target) failed (\(detail))\(resumes)" }
            return "network error: cannot connect to the origin for \(target)\(nothing) (\(detail))"
        case .timeout:
            if !resumes.isEmpty { return "network error: timed out fetching \(target) (\(detail))\(resumes)" }
            return "network error: timed out fetching \(target)\(nothing) (\(detail))"
        case .truncated:
            return "network error: the body of \(target) arrived truncated; no complete response stored (\(detail))\(resumes)"
        case .notCached:
            return "not cached: \(target) has no usable stored response and the policy forbids loading (\(detail))"
        case .storage:
            return "storage error for \(target): \(detail)"
        case .tooManyRedirects:
            return "too many redirects from \(target) (\(detail))"
        case .cancelled:
            // The library's detail names which task was cancelled: say what happened in the user's terms.
            return "interrupted: the download of \(target) was stopped before it completed\(resumes)"
        case .invalidRequest:
            return "invalid request for \(target): \(detail)"
        case .invalidResponse:
            return "protocol error: the origin's response for \(target) breaks HTTP; nothing stored (\(detail))"
        case .failed where error.code == .invalidURL:
            return "invalid URL '\(target)': \(detail)"
        case .failed, .tooLarge, .write, .usage:
            return "cannot get \(target): \(detail)"
        }
    }
}
