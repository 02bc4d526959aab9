import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `--cacert FILE`, `--capath DIR` and `-k/--insecure`, with curl's environment variables: which certificates
/// the fetching commands trust for `https://` origins.
enum TLSOptions {
    /// The options, in help order.
    static var options: [OptionSpec] { trustRootOptions + [insecure] }

    /// `-k/--insecure`.
    static let insecure = OptionSpec("insecure", short: "k", help: "Do not verify the origin's TLS certificate (warns on stderr; nothing is stored).")

    /// `--cacert` and `--capath` without `-k` (for `prefetch`, whose whole point is storing: an unverified
    /// response must not be stored).
    static var trustRootOptions: [OptionSpec] {
        [
            OptionSpec("cacert", .value("file"),
                       help: "Trust the CA certificates in this PEM file instead of the system's (default: $CURL_CA_BUNDLE, else $SSL_CERT_FILE)."),
            OptionSpec("capath", .value("dir"),
                       help: "Trust the CA certificates in this directory (OpenSSL hashed names; default: $SSL_CERT_DIR)."),
        ]
    }

    /// The trust setting from the options, else from `CURL_CA_BUNDLE` / `SSL_CERT_FILE` / `SSL_CERT_DIR`
    /// (curl's variables), else the system's. Prints the `-k` warning on stderr.
    /// - Throws: ``UsageError`` for an empty file or directory name.
    static func trust(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> TLSTrust {
        let variables = context.environment.variables
        func path(_ option: String, _ names: [String]) throws(UsageError) -> String? {
            if let given = parsed.value(option) {
                guard !given.isEmpty else { throw UsageError("invalid value '' for '--\(option)': expected a path") }
                return context.environment.fileURL(for: given).path
            }
            for name in names {
                if let value = variables[name], !value.isEmpty { return context.environment.fileURL(for: value).path }
            }
            return nil
        }
        let trust = TLSTrust(caFile: try path("cacert", ["CURL_CA_BUNDLE", "SSL_CERT_FILE"]),
                             caDirectory: try path("capath", ["SSL_CERT_DIR"]),
                             verifiesPeer: !parsed.flag("insecure"))
        if !trust.verifiesPeer {
            context.console.err("Warning: --insecure: the origin's TLS certificate is not verified; anyone on the "
                                + "path can read and change what is fetched; nothing is stored")
        }
        return trust
    }
}
