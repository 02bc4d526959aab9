import Foundation
import DownloadCache
import CacheStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns errors into the one clear line a user reads: never a Swift type dump (`DownloadError.http(status: 500)`,
/// `CacheStoreError.permissionDenied ...`) nor an `NSError` description (`NSCocoaErrorDomain error 256`).
public enum ErrorText {
    /// One line describing `error` in words.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as UsageError: return clean(error.message)
        case let error as CommandFailure: return clean(error.message)
        case let error as DownloadError: return describe(error)
        case let error as CacheStoreError: return "\(words(error.code)): \(clean(error.detail))"
        default: return describe(error as NSError)
        }
    }

    /// `HTTP 500 (origin answered 500 Internal Server Error)`, `cannot connect (...)`, ... for a client error.
    public static func describe(_ error: DownloadError) -> String {
        let detail = clean(error.detail)
        let what = words(error.code)
        return detail.isEmpty ? what : "\(what) (\(detail))"
    }

    /// The words for a client error code (`cannot connect`, `HTTP 500`, ...).
    static func words(_ code: DownloadError.Code) -> String {
        switch code {
        case .connectionFailed: return "cannot connect"
        case .timedOut: return "timed out"
        case .cancelled: return "cancelled"
        case .notCached: return "not cached"
        case .truncated: return "body truncated"
        case .invalidURL: return "invalid URL"
        case .storage: return "storage error"
        case .http(let status): return "HTTP \(status)"
        case .tooManyRedirects: return "too many redirects"
        case .invalidRequest: return "invalid request"
        case .invalidResponse: return "invalid response from the origin"
        case .other: return "failed"
        }
    }

    /// The client error codes without a payload, by their Swift case name (`timedOut`), for ``clean(_:)``.
    private static let namedCodes: [String: String] = Dictionary(uniqueKeysWithValues: [
        DownloadError.Code.connectionFailed, .timedOut, .cancelled, .notCached, .truncated, .invalidURL, .storage,
        .tooManyRedirects, .invalidRequest, .invalidResponse, .other,
    ].map { ("\($0)", words($0)) })

    /// A Foundation error in words: the POSIX reason when there is one (`Is a directory`), else the
    /// common Cocoa file errors by name, else the localized description.
    static func describe(_ error: NSError) -> String {
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(truncatingIfNeeded: error.code))) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(truncatingIfNeeded: underlying.code)))
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
        return clean(error.localizedDescription)
    }

    /// The words for a store error code (`permission denied`, `disk full`, ...).
    static func words(_ code: CacheStoreError.Code) -> String {
        switch code {
        case .diskFull: return "disk full"
        case .permissionDenied: return "permission denied"
        case .corruptIndex: return "damaged index"
        case .io: return "I/O error"
        case .invalidNamespace: return "invalid namespace"
        case .notFound: return "not found"
        case .busy: return "cache busy (locked by another process)"
        case .invalidArgument: return "invalid argument"
        case .unsafeFile: return "unsafe file in the cache directory"
        }
    }

    /// Makes text from a lower layer fit one line and drops type prefixes it may carry
    /// (`CacheStoreError.diskFull: x` → `disk full: x`, `DownloadError.http(status: 500): x` → `HTTP 500: x`,
    /// `policy dontLoad forbids` → `policy dont-load forbids`,
    /// `Error Domain=D Code=N "text" UserInfo={...}` → `text`).
    public static func clean(_ text: String) -> String {
        var result = text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
        for code in CacheStoreError.Code.allCases {
            result = result.replacingOccurrences(of: "CacheStoreError.\(code.rawValue)", with: words(code))
        }
        result = replace(#"DownloadError\.http\(status: (\d+)\)"#, in: result) { "HTTP \($0[1])" }
        result = replace(#"DownloadError\.(\w+)"#, in: result) { namedCodes[$0[1]] ?? $0[1] }
        // The library names policies by their Swift case (`policy dontLoad`); the CLI spells them `dont-load`.
        for (name, policy) in PolicyName.table {
            result = result.replacingOccurrences(of: "policy \(policy) ", with: "policy \(name) ")
        }
        result = replace(#"Error Domain=\S+ Code=-?\d+ "([^"]*)"( UserInfo=\{.*\})?"#, in: result) { $0[1] }
        result = replace(#"Error Domain=(\S+) Code=(-?\d+)( UserInfo=\{.*\})?"#, in: result) { "error \($0[2])" }
        return result
    }

    /// Replaces every match of `pattern` with `transform(groups)` (group 0 is the whole match).
    private static func replace(_ pattern: String, in text: String, _ transform: ([String]) -> String) -> String {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return text }
        var result = text
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        for match in matches.reversed() {
            let groups = (0..<match.numberOfRanges).map { i -> String in
                Range(match.range(at: i), in: text).map { String(text[$0]) } ?? ""
            }
            guard let range = Range(match.range, in: result) else { continue }
            result.replaceSubrange(range, with: transform(groups))
        }
        return result
    }
}
