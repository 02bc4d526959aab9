/// An ordered list of HTTP header fields whose names compare case-insensitively (RFC 9110 §5.1).
///
/// Order and duplicates are kept exactly as received, so two `Cache-Control` lines stay two lines and
/// `Set-Cookie` is never joined. Lookups by name ignore ASCII case.
public struct HTTPHeaders: Sendable, Hashable, Codable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// One header field line: a name as received (case kept) and its value (leading/trailing whitespace trimmed).
    public struct Field: Sendable, Hashable, Codable {
        /// The field name exactly as received or given; compare with ``HTTPHeaders/Field/hasName(_:)``.
        public var name: String
        /// The field value with surrounding optional whitespace removed.
        public var value: String

        /// Creates a field line; the value's surrounding spaces and tabs are trimmed.
        public init(name: String, value: String) {
            self.name = name
            self.value = HTTPHeaders.trimOWS(value)
        }

        /// Whether this field's name equals `other`, ignoring ASCII case.
        public func hasName(_ other: String) -> Bool {
            HTTPHeaders.namesEqual(name, other)
        }
    }

    /// The field lines in order, duplicates included.
    public private(set) var fields: [Field]

    /// An empty header list.
    public init() { fields = [] }

    /// Creates headers from `(name, value)` pairs, keeping order and duplicates.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates headers from field lines.
    public init(fields: [Field]) { self.fields = fields }

    /// Creates headers from a literal list of `(name, value)` pairs.
    public init(arrayLiteral elements: (String, String)...) { self.init(elements) }

    /// Number of field lines (not distinct names).
    public var count: Int { fields.count }
    /// Whether there are no field lines.
    public var isEmpty: Bool { fields.isEmpty }

    /// Iterates the field lines in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// All values of the fields named `name` (case-insensitive), in order; empty when absent.
    public func values(for name: String) -> [String] {
        fields.compactMap { $0.hasName(name) ? $0.value : nil }
    }

    /// The combined value of all fields named `name` joined with `", "` (RFC 9110 §5.3), or `nil` when absent.
    ///
    /// Do not use this for `Set-Cookie`, which cannot be combined; use ``values(for:)``.
    public subscript(name: String) -> String? {
        let all = values(for: name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// The first value of the field named `name`, or `nil` when absent.
    public func first(_ name: String) -> String? {
        fields.first(where: { $0.hasName(name) })?.value
    }

    /// Whether at least one field is named `name` (case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains(where: { $0.hasName(name) })
    }

    /// Appends a field line, keeping any existing fields of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one line carrying `value`, at the position of the first one
    /// (or at the end when there was none).
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.hasName(name) }) {
            fields[index] = Field(name: fields[index].name, value: value)
            var i = fields.count - 1
            while i > index {
                if fields[i].hasName(name) { fields.remove(at: i) }
                i -= 1
            }
        } else {
            add(name, value)
        }
    }

    /// Removes every field named `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        fields.removeAll(where: { $0.hasName(name) })
    }

    /// The fields as `[[name, value]]` pairs, the shape the CLI and the driver print.
    public var pairs: [[String]] { fields.map { [$0.name, $0.value] } }

    /// `Name: value` lines joined by newlines.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    /// ASCII case-insensitive name comparison without allocating.
    public static func namesEqual(_ a: String, _ b: String) -> Bool {
        let ua = a.utf8, ub = b.utf8
        guard ua.count == ub.count else { return false }
        let fast = ua.withContiguousStorageIfAvailable { pa in
            ub.withContiguousStorageIfAvailable { pb in bytesEqualIgnoringCase(pa, pb) }
        }
        if let fast, let result = fast { return result }
        for (x, y) in zip(ua, ub) where x != y {
            let lx = (x >= 65 && x <= 90) ? x + 32 : x
            let ly = (y >= 65 && y <= 90) ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }

    /// ASCII case-insensitive comparison of two equally long byte buffers.
    private static func bytesEqualIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for i in 0..<a.count {
            let x = a[i], y = b[i]
            if x == y { continue }
            let lx = (x >= 65 && x <= 90) ? x + 32 : x
            let ly = (y >= 65 && y <= 90) ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }

    /// Removes leading and trailing spaces and horizontal tabs (RFC 9110 OWS).
    public static func trimOWS(_ s: String) -> String {
        let utf8 = s.utf8
        guard let first = utf8.first, let last = utf8.last,
              first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 else { return s }
        return String(trimOWS(Substring(s)))
    }

    /// `s` without leading and trailing spaces and horizontal tabs (byte-wise; both are ASCII).
    static func trimOWS(_ s: Substring) -> Substring {
        let utf8 = s.utf8
        var lower = utf8.startIndex, upper = utf8.endIndex
        while lower < upper, utf8[lower] == 0x20 || utf8[lower] == 0x09 { lower = utf8.index(after: lower) }
        while lower < upper {
            let before = utf8.index(before: upper)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            upper = before
        }
        return s[lower..<upper]
    }
}
