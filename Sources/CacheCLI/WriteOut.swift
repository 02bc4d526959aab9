import Foundation
import DownloadCache
import Synchronization

/// `-w/--write-out FORMAT`: one line of facts about the transfer printed on stdout after the body, as curl's.
///
/// Variables (`%{name}`): `http_code` / `response_code` (three digits, `000` when no response came),
/// `size_download` (body bytes delivered), `time_total` (seconds from start to end, six decimals),
/// `url_effective` (the URL answered, after redirects), `content_type` (empty when none), `num_redirects`,
/// `exitcode`, `errormsg` (empty on success), and the cache's own `cache_status` (`HIT`, `MISS`, `REVALIDATED`,
/// `STALE`; empty when no response came). `\n`, `\r`, `\t`, `\\` and `%%` are expanded; an unknown variable is
/// printed as nothing, with a warning on stderr. Text from the origin is printed with control characters
/// escaped (``TerminalText``). Printed after a failure too, with what is known (`000`, the bytes written).
struct WriteOut: Sendable {
    /// The option.
    static let spec = OptionSpec("write-out", short: "w", .value("format"),
        help: "Print FORMAT on stdout after the body: %{http_code} %{size_download} %{time_total} %{url_effective} %{content_type} %{num_redirects} %{exitcode} %{errormsg} %{cache_status} (HIT/MISS/REVALIDATED/STALE), \\n.")

    /// What the variables print, filled in as the command runs.
    struct Values: Sendable, Equatable {
        /// The final response's status; nil when none came.
        var status: Int?
        /// Body bytes delivered to the output.
        var sizeDownload: Int64 = 0
        /// Seconds from start to end.
        var timeTotal: TimeInterval = 0
        /// The URL answered (the requested one until a response names another).
        var urlEffective: String
        /// The final response's `Content-Type`, or nil.
        var contentType: String?
        /// Redirects followed.
        var redirects = 0
        /// The process's exit code.
        var exitCode: Int32 = 0
        /// The failure's message, or "".
        var errorMessage = ""
        /// `HIT`, `MISS`, `REVALIDATED` or `STALE`; nil when no response came.
        var cacheStatus: String?

        /// Values for the request to `url` (as given), before anything is known.
        init(url: String) { urlEffective = url }

        /// Takes the facts of `response`.
        mutating func record(_ response: CachedResponse) {
            status = response.status
            urlEffective = response.url.absoluteString
            contentType = response.headers.first("Content-Type")
            redirects = response.redirects.count
            cacheStatus = ResponseDescription.label(response.source)
        }
    }

    /// `format` with its variables and escapes expanded; `unknown` lists the variable names it does not know.
    static func render(_ format: String, _ values: Values) -> (text: String, unknown: [String]) {
        var out = ""
        var unknown: [String] = []
        var rest = Substring(format)
        while let c = rest.first {
            rest = rest.dropFirst()
            if c == "\\", let next = rest.first {
                switch next {
                case "n": out.append("\n")
                case "r": out.append("\r")
                case "t": out.append("\t")
                case "\\": out.append("\\")
                default: out.append(c); out.append(next)
                }
                rest = rest.dropFirst()
            } else if c == "%", rest.first == "%" {
                out.append("%")
                rest = rest.dropFirst()
            } else if c == "%", rest.first == "{", let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(after: rest.startIndex)..<close])
                rest = rest[rest.index(after: close)...]
                if let value = value(name, values) { out += value } else { unknown.append(name) }
            } else {
                out.append(c)
            }
        }
        return (out, unknown)
    }

    /// The text of variable `name`, or nil when there is no such variable.
    static func value(_ name: String, _ v: Values) -> String? {
        switch name {
        case "http_code", "response_code":
            guard let status = v.status else { return "000" }
            return String(format: "%03d", status)
        case "size_download": return String(v.sizeDownload)
        case "time_total": return String(format: "%.6f", max(0, v.timeTotal))
        case "url_effective": return TerminalText.escaped(v.urlEffective)
        case "content_type": return TerminalText.escaped(v.contentType ?? "")
        case "num_redirects": return String(v.redirects)
        case "exitcode": return String(v.exitCode)
        case "errormsg": return TerminalText.escaped(v.errorMessage)
        case "cache_status": return v.cacheStatus ?? ""
        default: return nil
        }
    }
}

/// The ``WriteOut/Values`` of one `get`, filled in by whichever path answers it (shared across tasks).
final class WriteOutRecord: Sendable {
    private let values: Mutex<WriteOut.Values>

    /// A record for the request to `url` (as given).
    init(url: String) { values = Mutex(WriteOut.Values(url: url)) }

    /// Changes the values.
    func update(_ change: (inout WriteOut.Values) -> Void) { values.withLock { change(&$0) } }

    /// The values so far.
    var current: WriteOut.Values { values.withLock { $0 } }
}
