import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP-date parsing and formatting (RFC 9110 §5.6.7).
///
/// Parsing accepts the three formats a recipient must accept — IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) — leniently
/// about spacing, weekday and letter case, strictly about the calendar. Formatting produces IMF-fixdate.
public enum HTTPDate {
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    /// Lower-case three-letter month names packed as 24-bit keys (`jan` = 0x6A616E), in calendar order.
    private static let monthKeys: [UInt32] = monthNames.map { key($0.lowercased().utf8) }
    private static let weekdayKeys: Set<UInt32> = Set(weekdayNames.map { key($0.lowercased().utf8) })
    private static let fullWeekdays: Set<String> = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    private static let zones: Set<String> = ["ut", "z"]
    private static let gmtKey: UInt32 = 0x67_6D_74
    private static let utcKey: UInt32 = 0x75_74_63

    /// Parses an HTTP-date in any of the three formats; `nil` for anything else (e.g. `Expires: 0` or `-1`).
    ///
    /// A two-digit RFC 850 year is read as 1970–2069 (00–69 → 20xx). The weekday is not checked against the
    /// date; an impossible date (31 Feb) or time (25:00) is rejected.
    public static func parse(_ value: String) -> Date? {
        guard value.utf8.count <= 64 else { return nil }
        var copy = value
        return copy.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var fields = Fields()
        var tokenCount = 0
        var start = 0
        for index in 0...bytes.count {
            let isSeparator = index == bytes.count || bytes[index] == 0x20 || bytes[index] == 0x09
                || bytes[index] == 0x2C || bytes[index] == 0x2D
            guard isSeparator else { continue }
            if index > start {
                tokenCount += 1
                guard tokenCount <= 7, fields.take(bytes[start..<index]) else { return nil }
            }
            start = index + 1
        }
        guard tokenCount >= 4 else { return nil }
        return fields.date()
    }

    /// The pieces of a date found so far; `take` rejects a token that does not fit.
    private struct Fields {
        var day: Int?, month: Int?, year: Int?, yearDigits = 0
        var time: (Int, Int, Int)?
        var sawZone = false, sawWeekday = false

        mutating func take(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            if token.contains(0x3A) {
                guard time == nil, let parsed = HTTPDate.parseTime(token) else { return false }
                time = parsed
            } else if token.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                guard token.count <= 4 else { return false }
                let number = token.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if day == nil {
                    guard token.count <= 2 else { return false }
                    day = number
                } else if year == nil {
                    guard token.count == 2 || token.count == 4 else { return false }
                    year = number
                    yearDigits = token.count
                } else {
                    return false
                }
            } else {
                return takeWord(token)
            }
            return true
        }

        private mutating func takeWord(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            if token.count == 3 {
                let key = HTTPDate.key(token)
                if let index = HTTPDate.monthKeys.firstIndex(of: key) {
                    guard month == nil else { return false }
                    month = index + 1
                    return true
                }
                if HTTPDate.weekdayKeys.contains(key) {
                    guard !sawWeekday else { return false }
                    sawWeekday = true
                    return true
                }
                if key == HTTPDate.gmtKey || key == HTTPDate.utcKey {
                    guard !sawZone else { return false }
                    sawZone = true
                    return true
                }
                return false
            }
            let word = HeaderSyntax.asciiLowercased(String(decoding: token, as: UTF8.self))
            if HTTPDate.fullWeekdays.contains(word) {
                guard !sawWeekday else { return false }
                sawWeekday = true
                return true
            }
            guard HTTPDate.zones.contains(word), !sawZone else { return false }
            sawZone = true
            return true
        }

        func date() -> Date? {
            guard let d = day, let m = month, var y = year, let (hh, mm, ss) = time else { return nil }
            if yearDigits == 2 { y += y < 70 ? 2000 : 1900 }
            guard (1...31).contains(d), (0...23).contains(hh), (0...59).contains(mm), (0...60).contains(ss),
                  (1...9999).contains(y) else { return nil }
            return HTTPDate.makeDate(year: y, month: m, day: d, hour: hh, minute: mm, second: ss)
        }
    }

    /// A three-byte word lower-cased and packed into 24 bits (non-letters kept), for month/weekday lookup.
    private static func key<C: Collection<UInt8>>(_ token: C) -> UInt32 {
        token.prefix(3).reduce(UInt32(0)) { ($0 << 8) | UInt32(($1 >= 0x41 && $1 <= 0x5A) ? $1 | 0x20 : $1) }
    }

    /// Formats `date` as IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`; sub-seconds dropped.
    ///
    /// Dates outside years 0001–9999 (or not finite) are clamped to that range.
    public static func format(_ date: Date) -> String {
        let raw = date.timeIntervalSince1970
        let clamped = raw.isNaN ? 0 : min(max(raw, -62_135_596_800), 253_402_300_799)
        var seconds = time_t(clamped.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "Thu, 01 Jan 1970 00:00:00 GMT" }
        let weekday = weekdayNames[Int(parts.tm_wday) % 7]
        let month = monthNames[Int(parts.tm_mon) % 12]
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 1000 ? "\(year)" : String(repeating: "0", count: 4 - "\(max(0, year))".count) + "\(max(0, year))"
        return "\(weekday), \(pad(Int(parts.tm_mday))) \(month) \(yearText) "
            + "\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec))) GMT"
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    fileprivate static func parseTime(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> (Int, Int, Int)? {
        var values: [Int] = []
        var current = 0, digits = 0
        for byte in token {
            if byte == 0x3A {
                guard digits == 1 || digits == 2 else { return nil }
                values.append(current)
                current = 0
                digits = 0
            } else if byte >= 0x30 && byte <= 0x39 {
                current = current * 10 + Int(byte - 0x30)
                digits += 1
                guard digits <= 2 else { return nil }
            } else {
                return nil
            }
        }
        guard digits == 1 || digits == 2, values.count == 2 else { return nil }
        return (values[0], values[1], current)
    }

    fileprivate static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = 0
        let seconds = timegm(&parts)
        // timegm normalises out-of-range fields (31 Feb → 3 Mar); reject dates that moved. The second is added
        // afterwards so a leap second (:60) does not count as a moved date.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(second))
    }
}
