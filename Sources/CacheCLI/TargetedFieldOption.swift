import Foundation

/// `--targeted-field NAME` (repeatable): the RFC 9213 target list, shared by `get` and `driver`.
enum TargetedFieldOption {
    /// The option's description for `driver`, which has `--mode`: the default depends on it.
    static let spec = OptionSpec(
        "targeted-field", .repeated("name"),
        help: "Obey this field over Cache-Control (RFC 9213), repeatable; 'none': none (default: CDN-Cache-Control with --mode shared, none in private mode).")

    /// The option's description for `get`, which always works as a private cache: no target field unless named.
    static let privateSpec = OptionSpec(
        "targeted-field", .repeated("name"),
        help: "Obey this field over Cache-Control (RFC 9213), repeatable; 'none': none (default: none, get is a private cache).")

    /// The target list given on the command line: `nil` when the option is absent (the mode's default), `[]` for
    /// `none`.
    /// - Throws: ``UsageError`` for a value that is not a field name (RFC 9110 §5.1 token).
    static func targets(_ parsed: ParsedArguments) throws(UsageError) -> [String]? {
        let values = parsed.all("targeted-field")
        guard !values.isEmpty else { return nil }
        if values == ["none"] { return [] }
        let token = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~")
        for value in values where value.isEmpty || !value.allSatisfy({ token.contains($0) }) || value == "none" {
            throw UsageError("invalid value '\(value)' for '--targeted-field': expected a header field name, or 'none' alone")
        }
        return values
    }
}
