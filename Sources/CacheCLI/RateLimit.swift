import Foundation

/// `--limit-rate SPEED`: at most SPEED body bytes per second, as curl's option.
///
/// The transfer from the origin is paced by libcurl (`CURLOPT_MAX_RECV_SPEED_LARGE`, through
/// `RequestOptions.maxReceiveBytesPerSecond`), and the body written to stdout or `-o FILE` by `get` itself, so a
/// body read from the cache comes out at the same pace. SPEED is a byte count with curl's suffixes (`K`, `M`,
/// `G`, powers of 1024: `100K`, `1.5M`); `0` means no limit, as for curl.
enum RateLimit {
    /// The option.
    static let spec = OptionSpec("limit-rate", .value("speed"),
        help: "At most SPEED body bytes per second, received and written (K/M/G = 1024-based as curl: 200K, 1.5M; 0: no limit); a cached body is written at that pace too.")

    /// Bytes per second from `--limit-rate`, or nil when not given or `0`.
    /// - Throws: ``UsageError`` naming the bad value.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> Int64? {
        guard let text = parsed.value("limit-rate"), text != "0" else { return nil }
        return try StorageLimitOptions.size(text, option: "limit-rate")
    }

    /// Seconds to wait after `written` bytes went out `elapsed` seconds after the first, so that the average
    /// since then stays at or below `rate` bytes per second (0 when already behind).
    static func pause(written: Int64, elapsed: TimeInterval, rate: Int64) -> TimeInterval {
        guard rate > 0 else { return 0 }
        return max(0, Double(written) / Double(rate) - elapsed)
    }

    /// The largest piece written at once under `rate`: about a tenth of a second's worth (at least 1 KiB, at
    /// most a stream chunk), so a slow rate comes out smoothly instead of in 256 KiB bursts.
    static func piece(rate: Int64) -> Int {
        Int(min(Int64(256 << 10), max(1024, rate / 10)))
    }
}
