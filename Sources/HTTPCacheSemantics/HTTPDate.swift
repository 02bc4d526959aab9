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
/// Parsing accepts exactly the three formats a recipient must accept — IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`) — and nothing else, so an invalid `Expires` reads as already stale and an invalid
/// `Date`, `Last-Modified` or `If-Modified-Since` as absent. Names of days, months and `GMT` are matched ignoring
/// ASCII case, as RFC 9111 §4.2 asks of a cache recipient. Formatting produces IMF-fixdate.
public enum HTTPDate {
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    /// Three-letter month names packed as 24-bit keys in lower case (`jan` = 0x6A616E), in calendar order.
    private static let monthKeys: [UInt32] = monthNames.map(packed)
    private static let weekdayKeys: [UInt32] = weekdayNames.map(packed)
    private static let fullWeekdays: [[UInt8]] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"].map { $0.utf8.map(folded) }
    private static let gmtKey: UInt32 = 0x67_6D_74

    private static func packed(_ word: String) -> UInt32 {
        word.utf8.prefix(3).reduce(UInt32(0)) { ($0 << 8) | UInt32(folded($1)) }
    }

    /// An ASCII letter in lower case; any other byte unchanged.
    private static func folded(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    /// Parses an HTTP-date in one of the three formats of RFC 9110 §5.6.7; `nil` for anything else.
    ///
    /// Exactly IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`), with their single spaces, two-digit day/hour/minute/second and the
    /// zone `GMT`. Day names, month names and `GMT` match in any ASCII case (`THU`, `AUG`, `gMT`): RFC 9110 §5.6.7
    /// makes HTTP-date case-sensitive, and RFC 9111 §4.2 asks a cache recipient to match it case-insensitively.
    /// Outer spaces/tabs are ignored.
    /// Rejected, among others: `UTC`, a two-digit year in IMF-fixdate, a missing comma, doubled spaces, dashes
    /// in IMF-fixdate, a one-digit hour, `0`, `-1`. A two-digit RFC 850 year is read as 1970–2069
    /// (00–69 → 20xx). The weekday is not checked against the date; an impossible date (31 Feb) or time (25:00)
    /// is rejected; second 60 (a leap second) reads as the next second.
    public static func parse(_ value: String) -> Date? {
        guard value.utf8.count <= 64 else { return nil }
        var copy = value
        return copy.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes all: UnsafeBufferPointer<UInt8>) -> Date? {
        var lower = 0, upper = all.count
        while lower < upper, all[lower] == 0x20 || all[lower] == 0x09 { lower += 1 }
        while upper > lower, all[upper - 1] == 0x20 || all[upper - 1] == 0x09 { upper -= 1 }
        let b = UnsafeBufferPointer(rebasing: all[lower..<upper])
        guard b.count >= 24 else { return nil }
        if b[3] == 0x2C { return parseIMFFixdate(b) }
        if b[3] == 0x20 { return parseAsctime(b) }
        return parseRFC850(b)
    }

    /// `day-name "," SP date1 SP time-of-day SP GMT`, date1 = `2DIGIT SP month SP 4DIGIT`: exactly 29 bytes.
    private static func parseIMFFixdate(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard b.count == 29, shortWeekday(b, 0), b[4] == 0x20, let day = digits(b, 5, 2), b[7] == 0x20,
              let month = month(b, 8), b[11] == 0x20, let year = digits(b, 12, 4), b[16] == 0x20,
              let time = timeOfDay(b, 17), isGMT(b, 25) else { return nil }
        return validDate(year: year, month: month, day: day, time: time)
    }

    /// `day-name-l "," SP date2 SP time-of-day SP GMT`, date2 = `2DIGIT "-" month "-" 2DIGIT`.
    private static func parseRFC850(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let comma = b.firstIndex(of: 0x2C), longWeekday(b, comma), b.count == comma + 24,
              b[comma + 1] == 0x20, let day = digits(b, comma + 2, 2), b[comma + 4] == 0x2D,
              let month = month(b, comma + 5), b[comma + 8] == 0x2D, let shortYear = digits(b, comma + 9, 2),
              b[comma + 11] == 0x20, let time = timeOfDay(b, comma + 12), isGMT(b, comma + 20)
        else { return nil }
        let year = shortYear + (shortYear < 70 ? 2000 : 1900)
        return validDate(year: year, month: month, day: day, time: time)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT`: exactly 24 bytes.
    private static func parseAsctime(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard b.count == 24, shortWeekday(b, 0), b[3] == 0x20, let month = month(b, 4), b[7] == 0x20 else { return nil }
        let day: Int
        if b[8] == 0x20, let one = digits(b, 9, 1) { day = one } else if let two = digits(b, 8, 2) { day = two } else { return nil }
        guard b[10] == 0x20, let time = timeOfDay(b, 11), b[19] == 0x20, let year = digits(b, 20, 4) else { return nil }
        return validDate(year: year, month: month, day: day, time: time)
    }

    /// `count` ASCII digits at `at` as a number, or `nil`.
    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int? {
        guard at + count <= b.count else { return nil }
        var value = 0
        for i in at..<(at + count) {
            let d = b[i] &- 0x30
            guard d <= 9 else { return nil }
            value = value * 10 + Int(d)
        }
        return value
    }

    /// `hour ":" minute ":" second`, each exactly two digits (8 bytes at `at`).
    private static func timeOfDay(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> (Int, Int, Int)? {
        guard at + 8 <= b.count, let h = digits(b, at, 2), b[at + 2] == 0x3A, let m = digits(b, at + 3, 2),
              b[at + 5] == 0x3A, let s = digits(b, at + 6, 2) else { return nil }
        return (h, m, s)
    }

    /// The three-byte word at `at` in lower case, packed into 24 bits, for month/weekday/zone lookup.
    private static func key(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
        guard at + 3 <= b.count else { return 0 }
        return UInt32(folded(b[at])) << 16 | UInt32(folded(b[at + 1])) << 8 | UInt32(folded(b[at + 2]))
    }

    private static func month(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> Int? {
        monthKeys.firstIndex(of: key(b, at)).map { $0 + 1 }
    }

    private static func shortWeekday(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> Bool {
        weekdayKeys.contains(key(b, at))
    }

    /// Whether the bytes before `comma` are a full weekday name (`Sunday` … `Saturday`).
    private static func longWeekday(_ b: UnsafeBufferPointer<UInt8>, _ comma: Int) -> Bool {
        guard comma >= 6, comma <= 9 else { return false }
        let word = UnsafeBufferPointer(rebasing: b[0..<comma])
        return fullWeekdays.contains { $0.elementsEqual(word.lazy.map(folded)) }
    }

    /// `SP "GMT"` at `at`, ending the value exactly.
    private static func isGMT(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> Bool {
        at + 4 == b.count && b[at] == 0x20 && key(b, at + 1) == gmtKey
    }

    private static func validDate(year: Int, month: Int, day: Int, time: (Int, Int, Int)) -> Date? {
        let (hh, mm, ss) = time
        guard (1...31).contains(day), (0...23).contains(hh), (0...59).contains(mm), (0...60).contains(ss),
              (1...9999).contains(year) else { return nil }
        return makeDate(year: year, month: month, day: day, hour: hh, minute: mm, second: ss)
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
