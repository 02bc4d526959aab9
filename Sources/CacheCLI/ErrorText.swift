import Foundation
import DownloadCache
import HTTPCacheSemantics
import CacheStore

/// Turns errors into the one clear line a user reads: the words each error type gives in its `description`
/// (never a Swift type dump such as `DownloadError.http(status: 500)`), and Foundation's errors in words
/// (never `NSCocoaErrorDomain error 256`).
package enum ErrorText {
    /// One line describing `error` in words.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case let error as UsageError: return oneLine(error.message)
        case let error as CommandFailure: return oneLine(error.message)
        case let error as DownloadError: return describe(error)
        default: return oneLine(ErrorWords.describe(error))
        }
    }

    /// `HTTP 500 (origin answered 500 Internal Server Error)`, `connection failed (...)`, ... for a client error:
    /// the code's words (``DownloadError/Code/description``), then the detail in parentheses.
    package static func describe(_ error: DownloadError) -> String {
        let detail = oneLine(error.detail)
        let what = error.code.description
        return detail.isEmpty ? what : "\(what) (\(detail))"
    }

    /// `text` on one line: line breaks a lower layer's message may carry become spaces.
    package static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}
