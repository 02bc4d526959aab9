import Foundation

/// An entity tag (RFC 9110 §8.8.3): an opaque quoted string, optionally marked weak with `W/`.
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// Whether the tag is weak (`W/"…"`): it only promises semantic equivalence.
    public var isWeak: Bool
    /// The opaque tag without the surrounding quotes or the `W/` prefix.
    public var opaque: String

    /// Creates an entity tag from its opaque part (no quotes) and weakness.
    public init(opaque: String, weak: Bool = false) {
        self.opaque = opaque
        self.isWeak = weak
    }

    /// Parses one entity-tag (`"xyz"` or `W/"xyz"`, surrounding OWS allowed); `nil` when it is not one
    /// (unquoted, unterminated, a `"` inside, or trailing text).
    public init?(parsing text: String) {
        let trimmed = HTTPHeaders.trimOWS(text)
        var scalars = Substring(trimmed).unicodeScalars[...]
        var weak = false
        if scalars.starts(with: "W/".unicodeScalars) {
            weak = true
            scalars = scalars.dropFirst(2)
        }
        guard scalars.count >= 2, scalars.first == "\"", scalars.last == "\"" else { return nil }
        let inner = scalars.dropFirst().dropLast()
        // etagc = %x21 / %x23-7E / obs-text: no DQUOTE, no space or control characters.
        guard inner.allSatisfy({ $0 != "\"" && $0.value > 0x20 && $0.value != 0x7F }) else { return nil }
        self.init(opaque: String(String.UnicodeScalarView(inner)), weak: weak)
    }

    /// The field-value form: `"opaque"` or `W/"opaque"`.
    public var description: String { (isWeak ? "W/" : "") + "\"" + opaque + "\"" }

    /// Strong comparison (RFC 9110 §8.8.3.2): both strong and opaque parts identical.
    public func strongMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }

    /// Weak comparison (RFC 9110 §8.8.3.2): opaque parts identical, weakness ignored.
    public func weakMatches(_ other: EntityTag) -> Bool {
        opaque == other.opaque
    }

    /// Parses an entity-tag list such as an `If-None-Match` value (RFC 9110 §13.1.2).
    ///
    /// Returns the tags that parse (skipping malformed members) and whether the list was `*` (any).
    /// Commas inside quotes belong to the tag.
    public static func parseList(_ value: String) -> (tags: [EntityTag], any: Bool) {
        var tags: [EntityTag] = []
        for member in HeaderSyntax.listMembers(value) {
            if member == "*" { return ([], true) }
            if let tag = EntityTag(parsing: member) { tags.append(tag) }
        }
        return (tags, false)
    }

    /// The response's `ETag` (RFC 9110 §8.8.3): the first line that parses, else the first that parses
    /// leniently (see ``init(lenient:)``), or `nil`.
    public static func of(_ headers: HTTPHeaders) -> EntityTag? {
        let values = headers.values(for: "ETag")
        for value in values {
            if let tag = EntityTag(parsing: value) { return tag }
        }
        for value in values {
            if let tag = EntityTag(lenient: value) { return tag }
        }
        return nil
    }

    /// Parses an entity tag, also accepting the unquoted tags real servers send (`ETag: fc8dc7b8…`,
    /// `W/000073974-17EC`): the text after an optional `W/` becomes the opaque part. `nil` when empty or when it
    /// contains a double quote, whitespace or a comma (those are not one tag).
    public init?(lenient text: String) {
        if let strict = EntityTag(parsing: text) {
            self = strict
            return
        }
        let trimmed = HTTPHeaders.trimOWS(text)
        let weak = trimmed.hasPrefix("W/")
        let opaque = weak ? String(trimmed.dropFirst(2)) : trimmed
        guard !opaque.isEmpty,
              opaque.unicodeScalars.allSatisfy({ $0 != "\"" && $0 != "," && $0.value > 0x20 && $0.value != 0x7F }) else { return nil }
        self.init(opaque: opaque, weak: weak)
    }
}
