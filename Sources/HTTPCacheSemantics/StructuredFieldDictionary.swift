import Foundation

/// A Structured Field Dictionary (RFC 8941 §3.2), parsed strictly by the algorithm of §4.2 / §4.2.2.
///
/// What RFC 9213 targeted cache control needs: keys in order with their values (an Item or an Inner List, each
/// with parameters). Any syntax error makes the whole field invalid (`nil` from ``init(parsing:)``), as RFC 8941
/// §4.2 requires ("fail parsing"). A repeated key keeps its first position and takes the last value (§4.2.2).
public struct StructuredFieldDictionary: Sendable, Hashable {
    /// A bare item (RFC 8941 §3.3).
    public enum BareItem: Sendable, Hashable {
        /// Integer, at most 15 digits (§3.3.1).
        case integer(Int64)
        /// Decimal, at most 12 integer and 3 fractional digits (§3.3.2).
        case decimal(Double)
        /// String of printable ASCII (§3.3.3).
        case string(String)
        /// Token (§3.3.4).
        case token(String)
        /// Byte sequence, decoded from base64 (§3.3.5).
        case byteSequence(Data)
        /// Boolean (§3.3.6); a key without `=` is `true`.
        case boolean(Bool)
    }

    /// A member value: an Item or an Inner List (§3.1.1), with its parameters (§3.1.2).
    public enum Value: Sendable, Hashable {
        /// A single item.
        case item(BareItem, parameters: [Parameter])
        /// A parenthesised list of items.
        case innerList([BareItem], parameters: [Parameter])

        /// The bare item when the value is an Item, else `nil`.
        public var bareItem: BareItem? {
            if case .item(let item, _) = self { return item }
            return nil
        }
    }

    /// One parameter: lower-case key and value.
    public struct Parameter: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value (`true` when the parameter had no `=`).
        public var value: BareItem
    }

    /// The members in order: lower-case key and value.
    public private(set) var members: [(key: String, value: Value)]

    /// Parses a field value (several field lines joined with `,`); `nil` when it is not a valid Dictionary.
    ///
    /// Leading and trailing spaces are discarded (§4.2); an empty value is an empty Dictionary.
    public init?(parsing value: String) {
        var copy = value
        guard let members = copy.withUTF8({ bytes -> [(key: String, value: Value)]? in
            var parser = Parser(bytes: bytes)
            return parser.dictionary()
        }) else { return nil }
        self.members = members
    }

    /// Parses every line of field `name` in `headers` as one combined value (RFC 8941 §4.2: joined with `,`);
    /// `nil` when the field is absent or invalid.
    public init?(headers: HTTPHeaders, name: String) {
        let lines = headers.values(for: name)
        guard !lines.isEmpty else { return nil }
        self.init(parsing: lines.joined(separator: ","))
    }

    /// The value of `key`, or `nil` when absent.
    public subscript(key: String) -> Value? {
        members.first { $0.key == key }?.value
    }

    /// Equal when both hold the same members with the same values in the same order (RFC 8941 §3.2 keeps order).
    public static func == (a: StructuredFieldDictionary, b: StructuredFieldDictionary) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes the members in order, consistent with ``==``.
    public func hash(into hasher: inout Hasher) {
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}

/// The byte-level parsing algorithms of RFC 8941 §4.2.
private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var current: UInt8? { atEnd ? nil : bytes[index] }

    mutating func skipSP() { while current == 0x20 { index += 1 } }
    mutating func skipOWS() { while current == 0x20 || current == 0x09 { index += 1 } }

    /// §4.2 + §4.2.2: the whole input as a Dictionary.
    mutating func dictionary() -> [(key: String, value: StructuredFieldDictionary.Value)]? {
        skipSP()
        var members: [(key: String, value: StructuredFieldDictionary.Value)] = []
        while !atEnd {
            guard let key = key() else { return nil }
            let value: StructuredFieldDictionary.Value
            if current == 0x3D {
                index += 1
                guard let member = itemOrInnerList() else { return nil }
                value = member
            } else {
                guard let parameters = parameters() else { return nil }
                value = .item(.boolean(true), parameters: parameters)
            }
            if let existing = members.firstIndex(where: { $0.key == key }) {
                members[existing].value = value
            } else {
                members.append((key, value))
            }
            skipOWS()
            if atEnd { break }
            guard current == 0x2C else { return nil }
            index += 1
            skipOWS()
            if atEnd { return nil }  // trailing comma
        }
        // §4.2: trailing spaces were consumed by skipOWS; anything else already failed above.
        return members
    }

    mutating func itemOrInnerList() -> StructuredFieldDictionary.Value? {
        if current == 0x28 {
            index += 1
            var items: [StructuredFieldDictionary.BareItem] = []
            while !atEnd {
                skipSP()
                if current == 0x29 {
                    index += 1
                    guard let parameters = parameters() else { return nil }
                    return .innerList(items, parameters: parameters)
                }
                guard let item = bareItem(), parameters() != nil else { return nil }
                items.append(item)
                guard current == 0x20 || current == 0x29 else { return nil }
            }
            return nil
        }
        guard let item = bareItem(), let parameters = parameters() else { return nil }
        return .item(item, parameters: parameters)
    }

    /// §4.2.3.2: `*( ";" *SP key [ "=" bare-item ] )`.
    mutating func parameters() -> [StructuredFieldDictionary.Parameter]? {
        var result: [StructuredFieldDictionary.Parameter] = []
        while current == 0x3B {
            index += 1
            skipSP()
            guard let key = key() else { return nil }
            var value = StructuredFieldDictionary.BareItem.boolean(true)
            if current == 0x3D {
                index += 1
                guard let item = bareItem() else { return nil }
                value = item
            }
            if let existing = result.firstIndex(where: { $0.key == key }) {
                result[existing].value = value
            } else {
                result.append(.init(key: key, value: value))
            }
        }
        return result
    }

    /// §4.2.3.3: `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`.
    mutating func key() -> String? {
        guard let first = current, isLowerAlpha(first) || first == 0x2A else { return nil }
        let start = index
        while let byte = current, isLowerAlpha(byte) || isDigit(byte) || byte == 0x5F || byte == 0x2D || byte == 0x2E || byte == 0x2A {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// §4.2.3.1.
    mutating func bareItem() -> StructuredFieldDictionary.BareItem? {
        guard let byte = current else { return nil }
        if byte == 0x2D || isDigit(byte) { return number() }
        if byte == 0x22 { return string() }
        if byte == 0x3A { return byteSequence() }
        if byte == 0x3F { return boolean() }
        if isAlpha(byte) || byte == 0x2A { return token() }
        return nil
    }

    /// §4.2.4: Integer or Decimal.
    mutating func number() -> StructuredFieldDictionary.BareItem? {
        var negative = false
        if current == 0x2D {
            negative = true
            index += 1
        }
        guard let first = current, isDigit(first) else { return nil }
        var integerDigits: [UInt8] = []
        var fractionDigits: [UInt8] = []
        var isDecimal = false
        while let byte = current {
            if isDigit(byte) {
                if isDecimal { fractionDigits.append(byte) } else { integerDigits.append(byte) }
                index += 1
            } else if byte == 0x2E, !isDecimal {
                guard integerDigits.count <= 12 else { return nil }
                isDecimal = true
                index += 1
            } else {
                break
            }
            if !isDecimal && integerDigits.count > 15 { return nil }
            if isDecimal && fractionDigits.count > 3 { return nil }
        }
        if !isDecimal {
            var value: Int64 = 0
            for digit in integerDigits { value = value * 10 + Int64(digit - 0x30) }
            return .integer(negative ? -value : value)
        }
        guard !fractionDigits.isEmpty else { return nil }
        let text = String(decoding: integerDigits, as: UTF8.self) + "." + String(decoding: fractionDigits, as: UTF8.self)
        guard let value = Double(text) else { return nil }
        return .decimal(negative ? -value : value)
    }

    /// §4.2.5: `DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE`, printable ASCII only.
    mutating func string() -> StructuredFieldDictionary.BareItem? {
        index += 1
        var out: [UInt8] = []
        while let byte = current {
            index += 1
            if byte == 0x5C {
                guard let next = current, next == 0x22 || next == 0x5C else { return nil }
                out.append(next)
                index += 1
            } else if byte == 0x22 {
                return .string(String(decoding: out, as: UTF8.self))
            } else if byte < 0x20 || byte > 0x7E {
                return nil
            } else {
                out.append(byte)
            }
        }
        return nil
    }

    /// §4.2.6: `( ALPHA / "*" ) *( tchar / ":" / "/" )`.
    mutating func token() -> StructuredFieldDictionary.BareItem? {
        let start = index
        index += 1
        while let byte = current, isTChar(byte) || byte == 0x3A || byte == 0x2F { index += 1 }
        return .token(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// §4.2.7: `":" *(base64) ":"`.
    mutating func byteSequence() -> StructuredFieldDictionary.BareItem? {
        index += 1
        let start = index
        while let byte = current, byte != 0x3A {
            guard isAlpha(byte) || isDigit(byte) || byte == 0x2B || byte == 0x2F || byte == 0x3D else { return nil }
            index += 1
        }
        guard current == 0x3A else { return nil }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        guard let data = Data(base64Encoded: text) else { return nil }
        return .byteSequence(data)
    }

    /// §4.2.8: `"?" ( "0" / "1" )`.
    mutating func boolean() -> StructuredFieldDictionary.BareItem? {
        index += 1
        guard let byte = current, byte == 0x30 || byte == 0x31 else { return nil }
        index += 1
        return .boolean(byte == 0x31)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    func isLowerAlpha(_ b: UInt8) -> Bool { b >= 0x61 && b <= 0x7A }
    func isAlpha(_ b: UInt8) -> Bool { isLowerAlpha(b) || (b >= 0x41 && b <= 0x5A) }
    func isTChar(_ b: UInt8) -> Bool {
        isAlpha(b) || isDigit(b) || "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}
