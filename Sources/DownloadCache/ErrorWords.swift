import CacheStore
import CacheSystem
import Foundation
import HTTPCacheSemantics
import SharedTier

/// Errors in words for messages and logs. The package's own error types say their words in `description`;
/// this adds Foundation's errors, which otherwise print as `Error Domain=... Code=... UserInfo={...}`.
package enum ErrorWords {
    /// `error` in words: a Foundation error (`CocoaError`, `POSIXError`, `URLError`, `NSError`) by its POSIX
    /// reason (`Is a directory`), the common Cocoa file errors by name (`no such file`), else its localized
    /// description; any other error that describes itself (the package's errors all do) by its description.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case is CocoaError, is POSIXError, is URLError: return describe(error as NSError)
        case _ where type(of: error) is NSError.Type: return describe(error as NSError)
        case let error as any CustomStringConvertible: return error.description
        default: return describe(error as NSError)
        }
    }

    /// A Foundation error in words, on one line: the POSIX reason, a Cocoa file error by name, else the localized description.
    package static func describe(_ error: NSError) -> String {
        if error.domain == NSPOSIXErrorDomain { return systemMessage(error.code) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return systemMessage(underlying.code)
        }
        if error.domain == NSCocoaErrorDomain {
            switch error.code {
            case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "no such file"
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "permission denied"
            case NSFileWriteOutOfSpaceError: return "disk full"
            case NSFileReadCorruptFileError, NSFileReadInapplicableStringEncodingError: return "not readable as text"
            case NSFileReadUnknownError: return "cannot be read"
            default: break
            }
        }
        return error.localizedDescription.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
    }

    /// The system's message for the error number `code` (`Is a directory` for `EISDIR`).
    static func systemMessage(_ code: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        cs_error_message(Int32(truncatingIfNeeded: code), &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The standard reason phrase of `status` (RFC 9110 §15, ``HTTPStatusText``'s table), or "" for an unknown code.
    static func reasonPhrase(_ status: Int) -> String {
        HTTPStatusText.standardText(for: status) ?? ""
    }
}
