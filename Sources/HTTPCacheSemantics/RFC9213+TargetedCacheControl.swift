import Foundation

/// Targeted cache control (RFC 9213): a cache configured with a target list (e.g. `["CDN-Cache-Control"]`) uses
/// the first field of that list that is present with a valid, non-empty Structured Field Dictionary value instead
/// of `Cache-Control` and `Expires` for its own storage and freshness decisions (§2.1). The field is never
/// removed from the response: it is forwarded unchanged.
extension CacheControl {
    /// The directives of the first targeted field in `targets` (field names, case-insensitive, in priority order)
    /// that is present, a valid RFC 8941 Dictionary and non-empty (RFC 9213 §2.1); `nil` when there is none, and
    /// then `Cache-Control` and `Expires` apply as usual.
    ///
    /// An invalid value is ignored as a whole, and so is a value in which a known directive has the wrong type
    /// (RFC 9213 §2.2: `max-age`, `s-maxage`, `stale-while-revalidate`, `stale-if-error` take a non-negative
    /// Integer; the others a Boolean, `private` / `no-cache` also a String or Inner List of field names).
    public static func targeted(_ headers: HTTPHeaders, targets: [String]) -> CacheControl? {
        guard !targets.isEmpty else { return nil }
        for name in targets {
            guard let dictionary = StructuredFieldDictionary(headers: headers, name: name), !dictionary.members.isEmpty,
                  let directives = CacheControl(targeted: dictionary) else { continue }
            return directives
        }
        return nil
    }

    /// Directives read from a targeted field's Dictionary (RFC 9213 §2.2); `nil` when a known directive has the
    /// wrong type. Request-only directives and unknown keys are kept as extensions.
    public init?(targeted dictionary: StructuredFieldDictionary) {
        self.init()
        for (key, value) in dictionary.members {
            guard apply(key: key, value: value) else { return nil }
        }
    }

    private mutating func apply(key: String, value: StructuredFieldDictionary.Value) -> Bool {
        switch key {
        case "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error":
            guard case .integer(let number)? = value.bareItem, number >= 0 else { return false }
            let seconds = Int(min(number, Int64(HeaderSyntax.deltaSecondsCeiling)))
            switch key {
            case "max-age": maxAge = seconds
            case "s-maxage": sMaxAge = seconds
            case "stale-while-revalidate": staleWhileRevalidate = seconds
            default: staleIfError = seconds
            }
        case "no-store", "public", "must-revalidate", "proxy-revalidate", "must-understand", "no-transform", "immutable":
            guard case .boolean(let flag)? = value.bareItem else { return false }
            switch key {
            case "no-store": noStore = flag
            case "public": isPublic = flag
            case "must-revalidate": mustRevalidate = flag
            case "proxy-revalidate": proxyRevalidate = flag
            case "must-understand": mustUnderstand = flag
            case "no-transform": noTransform = flag
            default: immutable = flag
            }
        case "private":
            guard let (present, fields) = Self.qualified(value) else { return false }
            isPrivate = present
            privateFields = fields
        case "no-cache":
            guard let (present, fields) = Self.qualified(value) else { return false }
            noCache = present && fields.isEmpty
            noCacheFields = fields
        default:
            extensions.append(Extension(name: key, value: Self.text(value)))
        }
        return true
    }

    /// `private` / `no-cache`: a Boolean, or field names (lower-cased) as a String (comma list) or an Inner List
    /// of tokens/strings; `nil` for another type.
    private static func qualified(_ value: StructuredFieldDictionary.Value) -> (present: Bool, fields: [String])? {
        var names: [String] = []
        switch value {
        case .item(.boolean(let on), _):
            return (on, [])
        case .item(.string(let list), _):
            names = HeaderSyntax.listMembers(list)
        case .innerList(let items, _):
            for item in items {
                switch item {
                case .token(let name), .string(let name): names.append(name)
                default: return nil
                }
            }
        default:
            return nil
        }
        var fields: [String] = []
        for name in names.map(HeaderSyntax.asciiLowercased) where !fields.contains(name) { fields.append(name) }
        return (true, fields)
    }

    private static func text(_ value: StructuredFieldDictionary.Value) -> String? {
        switch value.bareItem {
        case .boolean(true)?: return nil
        case .integer(let n)?: return String(n)
        case .decimal(let d)?: return String(d)
        case .string(let s)?, .token(let s)?: return s
        default: return ""
        }
    }
}

extension RFC9111 {
    /// The response directives a cache with target list `targets` obeys (RFC 9213 §2.1): the first valid targeted
    /// field's (`targeted` true: `Cache-Control` and `Expires` are then ignored), else `Cache-Control` (with the
    /// `Pragma: no-cache` fallback of ``CacheControl/response(_:)``).
    static func responseDirectives(_ headers: HTTPHeaders, targets: [String]) -> (cacheControl: CacheControl, targeted: Bool) {
        if let targeted = CacheControl.targeted(headers, targets: targets) { return (targeted, true) }
        return (CacheControl.response(headers), false)
    }
}
