import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// Which certificates the transport trusts for `https://` origins: the system's roots (the default), a CA
/// bundle file or directory of its own, or none at all (no verification).
///
/// `CurlTransport` maps it onto libcurl (CURLOPT_CAINFO, CURLOPT_CAPATH, CURLOPT_SSL_VERIFYPEER and
/// CURLOPT_SSL_VERIFYHOST); `URLSessionTransport` on Apple platforms answers the server-trust challenge with
/// it (the file's certificates as the only anchors; no evaluation at all when ``verifiesPeer`` is false).
public struct TLSTrust: Sendable, Hashable {
    /// Path of a PEM file with the CA certificates to trust instead of the system's, or nil for the system's.
    public var caFile: String?
    /// Path of a directory of CA certificates (OpenSSL `c_rehash` layout) to trust, or nil. libcurl only.
    public var caDirectory: String?
    /// Whether the origin's certificate chain and host name are verified (default true). False trusts any
    /// certificate: an attacker on the path can read and change everything, and the responses are still
    /// stored.
    public var verifiesPeer: Bool

    /// Creates a trust setting; the defaults are the system's roots with verification.
    public init(caFile: String? = nil, caDirectory: String? = nil, verifiesPeer: Bool = true) {
        self.caFile = caFile
        self.caDirectory = caDirectory
        self.verifiesPeer = verifiesPeer
    }

    /// The system's trust roots, verified.
    public static let system = TLSTrust()

    /// Whether this is the system's default (nothing to set on the transport).
    public var isSystemDefault: Bool { self == .system }
}

extension TLSTrust {
    /// The DER bytes of every `CERTIFICATE` block in PEM text, in order; blocks that are not valid base64 are
    /// skipped. Used to load ``caFile`` where the platform wants certificates, not a file (Apple's Security).
    public static func derCertificates(pem: String) -> [Data] {
        var result: [Data] = []
        var inside = false
        var base64 = ""
        for rawLine in pem.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line == "-----BEGIN CERTIFICATE-----" {
                inside = true
                base64 = ""
            } else if line == "-----END CERTIFICATE-----" {
                if inside, let der = Data(base64Encoded: base64), !der.isEmpty { result.append(der) }
                inside = false
            } else if inside {
                base64 += line
            }
        }
        return result
    }

    /// The DER certificates of ``caFile`` and of the `.pem`/`.crt` files directly in ``caDirectory``; empty when
    /// neither is set or nothing could be read.
    public func anchorCertificates() -> [Data] {
        var texts: [String] = []
        if let caFile, let text = try? String(contentsOfFile: caFile, encoding: .utf8) { texts.append(text) }
        if let caDirectory, let names = try? FileManager.default.contentsOfDirectory(atPath: caDirectory) {
            for name in names.sorted() where name.hasSuffix(".pem") || name.hasSuffix(".crt") {
                let path = (caDirectory as NSString).appendingPathComponent(name)
                if let text = try? String(contentsOfFile: path, encoding: .utf8) { texts.append(text) }
            }
        }
        return texts.flatMap { Self.derCertificates(pem: $0) }
    }
}
