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
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let fullWeekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    private static let zones: Set<String> = ["gmt", "utc", "ut", "z"]

    /// Parses an HTTP-date in any of the three formats; `nil` for anything else (e.g. `Expires: 0` or `-1`).
    ///
    /// A two-digit RFC 850 year is read as 1970–2069 (00–69 → 20xx). The weekday is not checked against the
    /// date; an impossible date (31 Feb) or time (25:00) is rejected.
    public static func parse(_ value: String) -> Date? {
        guard value.utf8.count <= 64 else { return nil }
        let tokens = tokenize(value)
        guard tokens.count >= 4, tokens.count <= 7 else { return nil }
        var day: Int?, month: Int?, year: Int?, yearDigits = 0
        var time: (Int, Int, Int)?
        var sawZone = false, sawWeekday = false
        for token in tokens {
            if token.contains(":") {
                guard time == nil, let parsed = parseTime(token) else { return nil }
                time = parsed
            } else if token.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                guard let number = Int(token) else { return nil }
                if day == nil {
                    guard token.utf8.count <= 2 else { return nil }
                    day = number
                } else if year == nil {
                    guard token.utf8.count == 2 || token.utf8.count == 4 else { return nil }
                    year = number
                    yearDigits = token.utf8.count
                } else {
                    return nil
                }
            } else {
                let lower = token.lowercased()
                if let index = months.firstIndex(of: lower) {
                    guard month == nil else { return nil }
                    month = index + 1
                } else if weekdays.contains(lower) || fullWeekdays.contains(lower) {
                    guard !sawWeekday else { return nil }
                    sawWeekday = true
                } else if zones.contains(lower) {
                    guard !sawZone else { return nil }
                    sawZone = true
                } else {
                    return nil
                }
            }
        }
        guard let d = day, let m = month, var y = year, let (hh, mm, ss) = time else { return nil }
        if yearDigits == 2 { y += y < 70 ? 2000 : 1900 }
        guard (1...31).contains(d), (0...23).contains(hh), (0...59).contains(mm), (0...60).contains(ss),
              (1...9999).contains(y) else { return nil }
        return makeDate(year: y, month: m, day: d, hour: hh, minute: mm, second: ss)
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

    private static func tokenize(_ value: String) -> [String] {
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar == " " || scalar == "\t" || scalar == "," || scalar == "-" {
                if !current.isEmpty { tokens.append(String(current)) }
                current = String.UnicodeScalarView()
            } else {
                current.append(scalar)
            }
        }
        if !current.isEmpty { tokens.append(String(current)) }
        return tokens
    }

    private static func parseTime(_ token: String) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var values: [Int] = []
        for part in parts {
            guard part.utf8.count == 2 || part.utf8.count == 1,
                  part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(part) else { return nil }
            values.append(n)
        }
        return (values[0], values[1], values[2])
    }

    private static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
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
