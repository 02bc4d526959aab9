import CacheSystem
import Foundation
@testable import HTTPCacheSemantics

/// Fixed clock and builders shared by the semantics tests. No test reads the real clock.
enum Fixture {
    /// 2023-11-14 22:13:20 UTC, the fixed "request sent" instant.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let url = URL(string: "https://example.com/a")!

    /// `t0 + seconds`.
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    /// IMF-fixdate of `t0 + seconds`.
    static func date(_ seconds: TimeInterval) -> String { HTTPDate.format(at(seconds)) }

    /// A stored response received at `t0` (request sent at `t0`), with `Date: t0` unless headers say otherwise.
    static func stored(
        _ headers: HTTPHeaders, status: Int = 200, addDate: Bool = true,
        varying: HTTPHeaders = [], method: String = "GET",
        overrideExpiry: Date? = nil, sliding: TimeInterval? = nil
    ) -> StoredResponse {
        var h = headers
        if addDate && !h.contains("Date") { h.add("Date", date(0)) }
        return StoredResponse(
            response: CacheResponse(status: status, headers: h), requestTime: t0, responseTime: t0,
            varyingRequestHeaders: varying, requestMethod: method,
            overrideExpiry: overrideExpiry, slidingLifetime: sliding)
    }

    /// A GET (or other method) request for ``url``.
    static func request(_ headers: HTTPHeaders = [], method: String = "GET", url: URL = Fixture.url) -> CacheRequest {
        CacheRequest(method: method, url: url, headers: headers)
    }

    /// Headers from a `"Name: value"` list (test shorthand).
    static func headers(_ lines: [String]) -> HTTPHeaders {
        HTTPHeaders(lines.map { line -> (String, String) in
            guard let colon = line.firstIndex(of: ":") else { return (line, "") }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]))
        })
    }
}

/// The kind of a decision, to compare in argument tables without the reason text.
enum Kind: String, Sendable, CustomStringConvertible {
    case useStored, useStoredAndRevalidate, revalidate, fetch, unsatisfiable

    init(_ decision: CacheDecision) {
        switch decision {
        case .useStored: self = .useStored
        case .useStoredAndRevalidate: self = .useStoredAndRevalidate
        case .revalidate: self = .revalidate
        case .fetch: self = .fetch
        case .unsatisfiable: self = .unsatisfiable
        }
    }

    var description: String { rawValue }
}

extension CacheDecision {
    /// The conditional request carried by `revalidate` / `useStoredAndRevalidate`, else nil.
    var conditional: CacheRequest? {
        switch self {
        case .revalidate(let c, _), .useStoredAndRevalidate(let c, _): return c
        default: return nil
        }
    }
}

/// The keyed hashes of the semantics tests: the platform's crypto library through CacheSystem, as DownloadCache uses.
extension Fixture {
    /// A ``CacheKeySecret`` of `bytes` hashed by `cs_hmac_sha256`.
    static func secret(_ bytes: [UInt8]) -> CacheKeySecret {
        CacheKeySecret(bytes: bytes, hmacSHA256: { key, message in hmacSHA256(key: key, message: message) })
    }

    /// HMAC-SHA-256(key, message) from `cs_hmac_sha256`; empty when it fails.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let status = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                digest.withUnsafeMutableBufferPointer { cs_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, $0.baseAddress) }
            }
        }
        return status == 0 ? digest : []
    }

    /// SHA-256(message) from `cs_sha256`; empty when it fails.
    static func sha256(_ message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let status = message.withUnsafeBufferPointer { m in
            digest.withUnsafeMutableBufferPointer { cs_sha256(m.baseAddress, m.count, $0.baseAddress) }
        }
        return status == 0 ? digest : []
    }
}
