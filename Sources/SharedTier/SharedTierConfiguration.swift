import Foundation

/// How a process reaches the shared tier (Redis) and how much it trusts it: timeouts, breaker, sizes, locks.
///
/// The URL forms are `redis://[user:password@]host:port/db` (port default 6379, db default 0; `user` is a Redis 6
/// ACL user, a password alone is the legacy `AUTH password`) and `unix:///path/to/redis.sock` (optionally
/// `?db=N`). The password is kept for `AUTH` only: ``description`` and every log line show `***` instead.
public struct SharedTierConfiguration: Sendable, CustomStringConvertible {
    /// Where the Redis server is.
    public var endpoint: RedisEndpoint
    /// Seconds one connect or one command may take before the tier counts as down. Default 0.25.
    public var timeout: TimeInterval = 0.25
    /// Seconds the tier stays switched off after a failure (circuit breaker) before one call probes it again.
    /// Default 10: a dead Redis costs one ``timeout`` per this interval, not one per request.
    public var retryInterval: TimeInterval = 10
    /// Bytes: bodies larger than this stay in the local store only (never chunked). Default 4 MiB.
    public var maxBodyBytes: Int = 4 << 20
    /// Variants (RFC 9111 §4.1 secondary keys) kept per primary key; a new variant beyond it replaces them all.
    /// Default 4.
    public var maxVariants: Int = 4
    /// Seconds a fleet lock lives when its holder never releases it (a holder that dies). Default 15.
    public var lockTimeToLive: TimeInterval = 15
    /// Seconds a process waits for another process's fetch of the same key before fetching itself. Default 10.
    public var maxWait: TimeInterval = 10
    /// Seconds an entry with a validator stays in Redis for revalidation after it went stale, and the upper
    /// bound of every entry's time to live. Default 1 day.
    public var maxEntryLifetime: TimeInterval = 86_400
    /// First component of every key (`<keyPrefix>:<mode>:<namespace>:{<hash>}:...`). Default `dlcache`.
    public var keyPrefix: String = "dlcache"

    /// A configuration for `endpoint` with the defaults documented on each property.
    public init(endpoint: RedisEndpoint) {
        self.endpoint = endpoint
    }

    /// A configuration for a Redis URL (see the type's documentation for the forms).
    /// - Throws: ``RedisEndpoint/ParseError`` naming what is wrong with the URL (never echoing its password).
    public static func redis(_ url: URL) throws(RedisEndpoint.ParseError) -> SharedTierConfiguration {
        SharedTierConfiguration(endpoint: try RedisEndpoint(url))
    }

    /// A configuration for a Redis URL string. - Throws: ``RedisEndpoint/ParseError``.
    public static func redis(_ text: String) throws(RedisEndpoint.ParseError) -> SharedTierConfiguration {
        guard let url = URL(string: text) else { throw RedisEndpoint.ParseError(detail: "not a URL") }
        return try redis(url)
    }

    /// The endpoint with its password masked, e.g. `redis://app:***@10.0.0.5:6379/0`.
    public var description: String { endpoint.description }
}

/// One Redis server: TCP host and port or a Unix socket path, the database number and the credentials.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Why a Redis URL was refused.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// What is wrong, in words (never containing the password).
        public var detail: String
        /// "invalid Redis URL: <detail>".
        public var description: String { "invalid Redis URL: \(detail)" }
    }

    /// Where to connect.
    public enum Address: Sendable, Hashable {
        /// A TCP host name or address and port.
        case tcp(host: String, port: Int)
        /// A Unix domain socket path.
        case unix(path: String)
    }

    /// Where to connect.
    public var address: Address
    /// Database number selected after connecting (`SELECT`); 0 = the default database.
    public var database: Int
    /// ACL user name (Redis 6+); `nil` = the default user.
    public var user: String?
    /// Password for `AUTH`; `nil` = no authentication. Never printed.
    var password: String?

    /// Parses `redis://[user:password@]host[:port][/db]` or `unix:///path.sock[?db=N]`.
    /// - Throws: ``ParseError`` for another scheme, a missing host or path, a port outside 1...65535 or a
    ///   database that is not a number from 0 to 65535.
    public init(_ url: URL) throws(ParseError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased() else {
            throw ParseError(detail: "expected redis://host:port/db or unix:///path.sock")
        }
        user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        password = components.password.flatMap { $0.isEmpty ? nil : $0 }
        switch scheme {
        case "redis":
            guard let host = components.host, !host.isEmpty else { throw ParseError(detail: "redis:// URL without a host") }
            let port = components.port ?? 6379
            guard (1...65_535).contains(port) else { throw ParseError(detail: "port \(port) is outside 1...65535") }
            address = .tcp(host: host, port: port)
            let path = components.path.split(separator: "/")
            guard path.count <= 1 else { throw ParseError(detail: "path must be /<db number>") }
            database = try Self.database(path.first.map(String.init))
        case "unix":
            let path = components.path
            guard path.hasPrefix("/") else { throw ParseError(detail: "unix: URL without an absolute socket path") }
            address = .unix(path: path)
            database = try Self.database(components.queryItems?.first { $0.name == "db" }?.value)
        default:
            throw ParseError(detail: "scheme '\(scheme)' (expected redis or unix)")
        }
    }

    private static func database(_ text: String?) throws(ParseError) -> Int {
        guard let text, !text.isEmpty else { return 0 }
        guard text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), let number = Int(text), (0...65_535).contains(number) else {
            throw ParseError(detail: "database '\(text)' is not a number from 0 to 65535")
        }
        return number
    }

    /// The URL with `***` for the password.
    public var description: String {
        let credentials: String
        switch (user, password) {
        case (let user?, _?): credentials = "\(user):***@"
        case (nil, _?): credentials = ":***@"
        case (let user?, nil): credentials = "\(user)@"
        case (nil, nil): credentials = ""
        }
        switch address {
        case .tcp(let host, let port):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "redis://\(credentials)\(shown):\(port)/\(database)"
        case .unix(let path):
            return "unix://\(credentials)\(path)" + (database == 0 ? "" : "?db=\(database)")
        }
    }

    /// Equality and hashing ignore nothing, but the password never leaves this value except to `AUTH`.
    public static func == (lhs: RedisEndpoint, rhs: RedisEndpoint) -> Bool {
        lhs.address == rhs.address && lhs.database == rhs.database && lhs.user == rhs.user && lhs.password == rhs.password
    }

    /// Hashes the address, database and user (not the password).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(address)
        hasher.combine(database)
        hasher.combine(user)
    }
}
