import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// What kind of failure ended a command, and the exit code it gives: curl's number for the failures curl has
/// (so scripts written for curl keep working), 1 for the others, 64 for bad usage.
///
/// | exit | kind                 | failure                                                     |
/// |------|----------------------|-------------------------------------------------------------|
/// | 1    | `failed` and others  | not cached, storage error, invalid response, anything else  |
/// | 6    | `dns`                | the host name could not be resolved                         |
/// | 7    | `connect`            | the connection was refused or lost before a response        |
/// | 18   | `truncated`          | the body ended before its announced length                  |
/// | 22   | `http`               | HTTP status >= 400 with `-f/--fail`                         |
/// | 23   | `write`              | the output (`-o FILE`, `-D FILE`) could not be written      |
/// | 28   | `timeout`            | no answer within the timeout, or the transfer stalled       |
/// | 35   | `tls`                | the TLS handshake failed                                    |
/// | 47   | `too-many-redirects` | more redirects than `--max-redirs`                          |
/// | 60   | `tls-certificate`    | the origin's certificate is not trusted                     |
/// | 63   | `too-large`          | the body outgrew `maxTransferBytes` or `--max-filesize`     |
/// | 64   | `usage`              | bad command line                                            |
package enum FailureKind: String, Sendable, Equatable, CaseIterable {
    /// Any other failure (exit 1).
    case failed
    /// No usable stored response and the policy forbids the network (exit 1).
    case notCached = "not-cached"
    /// The cache could not be used (exit 1).
    case storage
    /// The origin's response breaks HTTP (exit 1).
    case invalidResponse = "invalid-response"
    /// The transport refused to send the request (exit 1).
    case invalidRequest = "invalid-request"
    /// The fetch was cancelled (exit 1).
    case cancelled
    /// The host name could not be resolved (curl's 6).
    case dns
    /// The connection was refused or lost before a response (curl's 7).
    case connect
    /// The body ended before its announced length (curl's 18).
    case truncated
    /// HTTP status >= 400 with `--fail` (curl's 22).
    case http
    /// The output could not be written (curl's 23).
    case write
    /// Timed out or stalled (curl's 28).
    case timeout
    /// The TLS handshake failed (curl's 35).
    case tls
    /// More redirects than allowed (curl's 47).
    case tooManyRedirects = "too-many-redirects"
    /// The origin's certificate is not trusted (curl's 60).
    case tlsCertificate = "tls-certificate"
    /// The body outgrew the bytes one transfer may write, `maxTransferBytes` (exit 63, curl's max-filesize).
    case tooLarge = "too-large"
    /// Bad command line (sysexits' EX_USAGE, 64).
    case usage

    /// The process exit code for this kind (curl's where curl has one).
    package var exitCode: Int32 {
        switch self {
        case .failed, .notCached, .storage, .invalidResponse, .invalidRequest, .cancelled: return 1
        case .dns: return 6
        case .connect: return 7
        case .truncated: return 18
        case .http: return 22
        case .write: return 23
        case .timeout: return 28
        case .tls: return 35
        case .tooManyRedirects: return 47
        case .tlsCertificate: return 60
        case .tooLarge: return 63
        case .usage: return 64
        }
    }

    /// The kind of a failed fetch: from the transport's classification when there is one, else from the code.
    package init(_ error: DownloadError) {
        switch error.transportError?.code {
        case .nameNotResolved?: self = .dns
        case .tlsFailed?: self = error.transportError?.isCertificateProblem == true ? .tlsCertificate : .tls
        default:
            if error.code.httpStatus != nil { self = .http; return }
            switch error.code {
            case .connectionFailed: self = .connect
            case .timedOut: self = .timeout
            case .truncated: self = .truncated
            case .tooManyRedirects: self = .tooManyRedirects
            case .notCached: self = .notCached
            case .storage, .storedBodyDamaged: self = .storage
            case .invalidResponse: self = .invalidResponse
            case .invalidRequest: self = .invalidRequest
            case .cancelled: self = .cancelled
            case .bodyTooLarge: self = .tooLarge
            default: self = .failed
            }
        }
    }

    /// The exit-code table for help text and README, one `exit  meaning` line each.
    static let helpTable: String = """
        Exit codes (curl's where curl has one): 0 success; 1 other failure (not cached, storage, invalid \
        response); 6 host name not resolved; 7 cannot connect; 18 body truncated; 22 HTTP status >= 400 with \
        --fail; 23 cannot write the output; 28 timed out or stalled; 35 TLS handshake failed; 47 too many \
        redirects; 60 certificate not trusted; 63 body over the transfer limit; 64 bad usage. With --json a failure prints one object on stdout: \
        {"error": {"kind", "message", "url", "exitCode"}}.
        """
}
