import Foundation

/// `Accept-Language` as a secondary-key field (RFC 9111 §4.1: "normalizing both header field values in a way that
/// is known to have identical semantics"; RFC 9110 §12.5.4 language ranges, §12.4.2 quality values).
extension RFC9111 {
    /// One language range with its weight in thousandths (`q=0.5` → 500; no `q` → 1000).
    struct LanguagePreference: Hashable, Comparable {
        var range: String
        var weight: Int

        static func < (a: LanguagePreference, b: LanguagePreference) -> Bool {
            a.range != b.range ? a.range < b.range : a.weight < b.weight
        }
    }

    /// The preferences of `Accept-Language` lines: ranges lower-cased (case-insensitive, RFC 4647 §2.1), whitespace
    /// and order dropped; `nil` when a member is not `range [ OWS ";" OWS "q=" qvalue ]` or a range repeats.
    static func languagePreferences(_ values: [String]) -> [LanguagePreference]? {
        var result: [LanguagePreference] = []
        var valid = true
        for value in values {
            HeaderSyntax.forEachMember(value) { member in
                guard valid else { return }
                let parts = member.split(separator: ";", omittingEmptySubsequences: false)
                let range = HeaderSyntax.asciiLowercased(HTTPHeaders.trimOWS(String(parts[0])))
                guard !range.isEmpty, range.allSatisfy({ $0 == "*" || $0 == "-" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }),
                      parts.count <= 2, !result.contains(where: { $0.range == range }) else {
                    valid = false
                    return
                }
                var weight = 1000
                if parts.count == 2 {
                    let parameter = HTTPHeaders.trimOWS(String(parts[1]))
                    guard parameter.hasPrefix("q=") || parameter.hasPrefix("Q="), let q = qvalue(parameter.dropFirst(2)) else {
                        valid = false
                        return
                    }
                    weight = q
                }
                result.append(LanguagePreference(range: range, weight: weight))
            }
        }
        return valid ? result : nil
    }

    /// RFC 9110 §12.4.2 `qvalue` in thousandths, or `nil`.
    static func qvalue<S: StringProtocol>(_ text: S) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == 0x30 || first == 0x31 else { return nil }
        guard bytes.count > 1 else { return first == 0x31 ? 1000 : 0 }
        guard bytes[1] == 0x2E, bytes.count <= 5 else { return nil }
        var fraction = 0, scale = 100
        for byte in bytes[2...] {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            fraction += Int(byte - 0x30) * scale
            scale /= 10
        }
        if first == 0x31 { return fraction == 0 ? 1000 : nil }
        return fraction
    }

    /// The normalised `Accept-Language` value for a secondary key: members sorted by range, `;q=` only below 1
    /// (`de,en;q=0.5`), so order, case and whitespace do not matter; `nil` when the value cannot be parsed (then it
    /// is compared as is).
    static func normalizedAcceptLanguage(_ values: [String]) -> String? {
        languagePreferences(values).map { preferences in
            preferences.sorted().map { preference in
                guard preference.weight < 1000 else { return preference.range }
                var q = String(preference.weight + 1000).dropFirst()  // "500" → "500", "5" → "005"
                while q.last == "0" { q = q.dropLast() }
                return preference.range + ";q=0" + (q.isEmpty ? "" : "." + q)
            }.joined(separator: ",")
        }
    }

    /// Whether a stored response whose `Content-Language` is one language would also be the origin's choice for a
    /// request with `Accept-Language` `values`: one of the request's most preferred ranges (highest `q` > 0)
    /// matches that language (RFC 4647 §3.3.1 basic filtering: equal, a prefix ending at `-`, or `*`).
    static func selectsStoredLanguage(storedResponse: HTTPHeaders, requestValues: [String]) -> Bool {
        let languages = HeaderSyntax.listMembers(of: storedResponse, named: "Content-Language")
        guard languages.count == 1, let preferences = languagePreferences(requestValues),
              let best = preferences.map(\.weight).max(), best > 0 else { return false }
        let language = HeaderSyntax.asciiLowercased(languages[0])
        return preferences.contains { preference in
            preference.weight == best
                && (preference.range == "*" || preference.range == language || language.hasPrefix(preference.range + "-"))
        }
    }
}
