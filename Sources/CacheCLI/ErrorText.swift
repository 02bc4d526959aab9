import Foundation
import CacheSystem
import DownloadCache
import HTTPCacheSemantics
import CacheStore

/// Turns errors into the one clear line a user reads. Each error type owns its words in `description` (the
/// package's errors: ``DownloadError``, `TransportError`, `CacheStoreError`, ...; Foundation's through
/// `ErrorWords`); this adds only the command line's own errors and keeps the result on one line.
package enum ErrorText {
    /// The system's message for error number `err` (`strerror`), e.g. "Broken pipe".
    package static func systemMessage(_ err: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        cs_error_message(err, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One line describing `error` in words: a ``UsageError``'s or ``CommandFailure``'s message, else the
    /// error's own words (`ErrorWords.describe`, which is its `description` for the package's errors).
    package static func describe(_ error: any Error) -> String {
        switch error {
        case let error as UsageError: return oneLine(error.message)
        case let error as CommandFailure: return oneLine(error.message)
        default: return oneLine(ErrorWords.describe(error))
        }
    }

    /// `text` on one line: line breaks a lower layer's message may carry become spaces.
    package static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}
