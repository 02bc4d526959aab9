import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `--max-time` and `--stall-timeout`: the time limits of every command that fetches (get, prefetch, driver).
package struct FetchLimits: Sendable, Equatable {
    /// Seconds allowed for each exchange with the origin (`--max-time`); `nil` = no total limit.
    package var timeout: TimeInterval?
    /// The stall rule (`--stall-timeout`); `nil` = the library's default (fewer than 1 KiB in 30 s fails).
    package var stallRule: StallRule?

    /// Creates limits; `nil` leaves the library's defaults.
    package init(timeout: TimeInterval? = nil, stallRule: StallRule? = nil) {
        self.timeout = timeout
        self.stallRule = stallRule
    }

    /// The two options, in help order.
    static var options: [OptionSpec] {
        [
            OptionSpec("max-time", .value("seconds"),
                       help: "Give up on the origin after this many seconds (> 0, at most 1 day)."),
            OptionSpec("stall-timeout", .value("seconds"),
                       help: "Fail as timed out when fewer than 1 KiB arrive in this many seconds (default: 30; 0: never)."),
        ]
    }

    /// Bytes that must arrive in every `--stall-timeout` window.
    static let stallBytes: Int64 = 1024

    /// Reads `--max-time` and `--stall-timeout` from `parsed`.
    /// - Throws: ``UsageError`` naming a bad value.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> FetchLimits {
        var limits = FetchLimits()
        limits.timeout = try parsed.seconds("max-time", maximum: SecondsLimit.maxTime, maximumLabel: "1 day",
                                            allowZero: false)
        if let stall = try parsed.seconds("stall-timeout", maximum: SecondsLimit.maxTime, maximumLabel: "1 day") {
            // 0 switches the rule off: a rule that needs no bytes never fires.
            limits.stallRule = StallRule(minimumBytes: stall > 0 ? stallBytes : 0, seconds: stall > 0 ? stall : 30)
        }
        return limits
    }

    /// Sets the limits that were given on `options`.
    func apply(to options: inout RequestOptions) {
        if let timeout { options.timeout = timeout }
        if let stallRule { options.stallRule = stallRule }
    }
}
