import Foundation

/// The byte-level Cache-Control parser behind ``CacheControl/init(parsing:)`` (RFC 9111 §5.2, §1.2.2).
///
/// Works on the UTF-8 bytes of a field value so the common case (known directives with token arguments)
/// allocates nothing; strings are built only for quoted arguments, field lists, extensions and problems.
extension CacheControl {
    /// The directives this parser knows; anything else is an extension (§5.2.3).
    enum Directive: CaseIterable {
        case maxAge, sMaxAge, minFresh, maxStale, staleWhileRevalidate, staleIfError, noCache, privateDirective
        case noStore, publicDirective, mustRevalidate, proxyRevalidate, mustUnderstand, noTransform, immutable, onlyIfCached

        var name: String {
            switch self {
            case .maxAge: return "max-age"
            case .sMaxAge: return "s-maxage"
            case .minFresh: return "min-fresh"
            case .maxStale: return "max-stale"
            case .staleWhileRevalidate: return "stale-while-revalidate"
            case .staleIfError: return "stale-if-error"
            case .noCache: return "no-cache"
            case .privateDirective: return "private"
            case .noStore: return "no-store"
            case .publicDirective: return "public"
            case .mustRevalidate: return "must-revalidate"
            case .proxyRevalidate: return "proxy-revalidate"
            case .mustUnderstand: return "must-understand"
            case .noTransform: return "no-transform"
            case .immutable: return "immutable"
            case .onlyIfCached: return "only-if-cached"
            }
        }

        static let table: [(bytes: [UInt8], directive: Directive)] = allCases.map { (Array($0.name.utf8), $0) }

        /// The directive whose name equals `bytes` ignoring ASCII case, or `nil`.
        static func named(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Directive? {
            outer: for entry in table where entry.bytes.count == bytes.count {
                var i = bytes.startIndex
                for expected in entry.bytes {
                    let byte = bytes[i]
                    if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != expected { continue outer }
                    i += 1
                }
                return entry.directive
            }
            return nil
        }
    }

    /// A directive argument: its text (quotes removed) and its delta-seconds value when it is one (else `nil`).
    struct Argument {
        let text: String
        let number: Int?
    }

    mutating func parse(_ value: String) {
        var copy = value
        copy.withUTF8 { bytes in
            HeaderSyntax.forEachMemberRange(bytes) { range in apply(bytes, range) }
        }
    }

    private mutating func apply(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        let eq = bytes[range].firstIndex(of: 0x3D)
        let nameRange = HeaderSyntax.trimmedRange(bytes, eq.map { range.lowerBound..<$0 } ?? range)
        var argument: Argument?
        if let eq {
            let argRange = HeaderSyntax.trimmedRange(bytes, (eq + 1)..<range.upperBound)
            argument = makeArgument(bytes, argRange, directiveName: { String(decoding: bytes[nameRange], as: UTF8.self) })
        }
        guard let directive = Directive.named(bytes[nameRange]) else {
            let name = HeaderSyntax.asciiLowercased(String(decoding: bytes[nameRange], as: UTF8.self))
            extensions.append(Extension(name: name, value: argument?.text))
            return
        }
        apply(directive, argument)
    }

    private mutating func makeArgument(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, directiveName: () -> String
    ) -> Argument {
        if bytes[range].first == 0x22 {
            let raw = String(decoding: bytes[range], as: UTF8.self)
            if HeaderSyntax.isUnterminatedQuote(raw) {
                problems.append("\(HeaderSyntax.asciiLowercased(directiveName())): unterminated quoted string")
            }
            let text = HeaderSyntax.unquote(raw) ?? raw
            return Argument(text: text, number: HeaderSyntax.deltaSeconds(text))
        }
        let slice = bytes[range]
        var number: Int? = slice.isEmpty ? nil : 0
        for byte in slice {
            guard byte >= 0x30 && byte <= 0x39, let current = number else { number = nil; break }
            number = current > HeaderSyntax.deltaSecondsCeiling ? current : current * 10 + Int(byte - 0x30)
        }
        if let n = number { number = min(n, HeaderSyntax.deltaSecondsCeiling) }
        return Argument(text: String(decoding: slice, as: UTF8.self), number: number)
    }

    private mutating func apply(_ directive: Directive, _ argument: Argument?) {
        switch directive {
        case .maxAge: maxAge = seconds(maxAge, directive, argument, invalidMeansZero: true, keepLargest: false)
        case .sMaxAge: sMaxAge = seconds(sMaxAge, directive, argument, invalidMeansZero: true, keepLargest: false)
        case .minFresh: minFresh = seconds(minFresh, directive, argument, invalidMeansZero: false, keepLargest: true)
        case .staleWhileRevalidate:
            staleWhileRevalidate = seconds(staleWhileRevalidate, directive, argument, invalidMeansZero: false, keepLargest: false)
        case .staleIfError:
            staleIfError = seconds(staleIfError, directive, argument, invalidMeansZero: false, keepLargest: false)
        case .maxStale: applyMaxStale(argument)
        case .noCache:
            guard let argument else {
                noCache = true
                return
            }
            let fields = HeaderSyntax.listMembers(argument.text).map { HeaderSyntax.asciiLowercased($0) }
            if fields.isEmpty {
                noCache = true
                problems.append("no-cache with an empty field list treated as unqualified no-cache")
            } else {
                noCacheFields.append(contentsOf: fields.filter { !noCacheFields.contains($0) })
            }
        case .privateDirective:
            isPrivate = true
            if let argument {
                let fields = HeaderSyntax.listMembers(argument.text).map { HeaderSyntax.asciiLowercased($0) }
                privateFields.append(contentsOf: fields.filter { !privateFields.contains($0) })
            }
        default: applyFlag(directive, argument)
        }
    }

    private mutating func applyFlag(_ directive: Directive, _ argument: Argument?) {
        switch directive {
        case .noStore: noStore = true
        case .publicDirective: isPublic = true
        case .mustRevalidate: mustRevalidate = true
        case .proxyRevalidate: proxyRevalidate = true
        case .mustUnderstand: mustUnderstand = true
        case .noTransform: noTransform = true
        case .immutable: immutable = true
        case .onlyIfCached: onlyIfCached = true
        default: return
        }
        if argument != nil { problems.append("\(directive.name) takes no argument; argument ignored") }
    }

    /// The new value of a delta-seconds directive given its old value and this occurrence's argument.
    private mutating func seconds(
        _ old: Int?, _ directive: Directive, _ argument: Argument?, invalidMeansZero: Bool, keepLargest: Bool
    ) -> Int? {
        let name = directive.name
        guard let argument, let value = argument.number else {
            let shown = argument.map { "\"\($0.text)\"" } ?? "no value"
            if invalidMeansZero {
                problems.append("\(name) has invalid delta-seconds (\(shown)); treated as 0, i.e. stale (RFC 9111 §4.2.1)")
                return merged(old, 0, name, keepLargest: keepLargest, differingMeansStale: true)
            }
            problems.append("\(name) has invalid delta-seconds (\(shown)); ignored")
            return old
        }
        return merged(old, value, name, keepLargest: keepLargest, differingMeansStale: invalidMeansZero)
    }

    /// A repeated directive's value. For `max-age` / `s-maxage` (`differingMeansStale`) differing values make the
    /// response stale (0), RFC 9111 §4.2.1's "or the response should be considered stale", as for differing
    /// `Expires` lines; for the others the most restrictive value wins.
    private mutating func merged(_ old: Int?, _ value: Int, _ name: String, keepLargest: Bool,
                                 differingMeansStale: Bool = false) -> Int {
        guard let old, old != value else { return value }
        if differingMeansStale {
            problems.append("\(name) given twice with different values (\(old) and \(value)); treated as 0, i.e. stale (RFC 9111 §4.2.1)")
            return 0
        }
        let chosen = keepLargest ? max(old, value) : min(old, value)
        problems.append("\(name) given twice (\(old) and \(value)); using the most restrictive, \(chosen)")
        return chosen
    }

    private mutating func applyMaxStale(_ argument: Argument?) {
        guard let argument else {
            if maxStale == nil { maxStale = .any }
            return
        }
        guard let value = argument.number else {
            problems.append("max-stale has invalid delta-seconds (\"\(argument.text)\"); ignored")
            return
        }
        switch maxStale {
        case .seconds(let old) where old != value:
            problems.append("max-stale given twice (\(old) and \(value)); using the most restrictive, \(min(old, value))")
            maxStale = .seconds(min(old, value))
        case .seconds: break
        case .any, nil: maxStale = .seconds(value)
        }
    }
}
