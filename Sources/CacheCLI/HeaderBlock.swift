import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// The response head as an HTTP/1.1 header block, for `-I/--head`, `-i/--include` and `-D/--dump-header`:
/// `HTTP/1.1 200 OK`, one `Name: value` line per field in the order received, then an empty line, each
/// ended by CRLF like curl's output.
enum HeaderBlock {
    /// The block's text for `response`. With `forTerminal`, control and bidirectional characters the origin
    /// put in the reason phrase or a field are escaped (``TerminalText``) so they cannot act on the terminal.
    static func text(_ response: CachedResponse, forTerminal: Bool) -> String {
        func safe(_ text: String) -> String { forTerminal ? TerminalText.escaped(text) : text }
        let reason = response.statusText.isEmpty ? "" : " " + safe(response.statusText)
        var lines = ["HTTP/1.1 \(response.status)\(reason)"]
        for field in response.headers {
            lines.append("\(safe(field.name)): \(safe(field.value))")
        }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }
}
