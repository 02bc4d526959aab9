import Foundation
import DownloadCache
import HTTPCacheSemantics

/// What `get` says about a body over the per-entry limit (`--max-entry`, `Configuration.maxEntryBytes`): such a
/// body is delivered but neither stored nor kept as a partial entry for a resume, so the next `get` downloads it
/// again from byte 0. Without these words a user sees exit 0 and an empty cache.
enum EntryLimitNotice {
    /// The warning (one line, for stderr) after a network response that was not stored because its body is over
    /// `limit` bytes; nil for any other response (stored, from the cache, not storable for another reason).
    /// The same warning for a body that was not stored because it does not fit in the room the pinned entries
    /// leave of `--max-disk` (storing it would have evicted every unpinned entry, then itself).
    static func warning(_ response: CachedResponse, limit: Int64?) -> String? {
        if isBlockedByPinnedEntries(response) {
            return "Warning: not stored: the \(Formatting.bytes(response.bodySize)) body of "
                + "\(TerminalText.escaped(response.url.absoluteString)) does not fit beside the pinned entries within "
                + "the disk limit (--max-disk; `dlcache unpin` frees room); it was delivered, nothing was evicted, "
                + "and the next get downloads it again"
        }
        guard let limit, isOverLimit(response, limit: limit) else { return nil }
        return "Warning: not stored: the \(Formatting.bytes(response.bodySize)) body of "
            + "\(TerminalText.escaped(response.url.absoluteString)) is over the entry limit \(limitText(limit)); "
            + "it was delivered, and the next get downloads it again"
    }

    /// Whether `response` came from the network and was not stored because its body is over `limit` bytes (the
    /// client's reason names the limit; a response that was not storable anyway is not blamed on the limit).
    static func isOverLimit(_ response: CachedResponse, limit: Int64) -> Bool {
        response.source == .network && !response.cacheStatus.stored && response.bodySize > limit
            && response.reason.contains(DownloadCache.entryLimitWords)
    }

    /// Whether `response` came from the network and was not stored because it does not fit beside the pinned
    /// entries (the client's reason says so).
    static func isBlockedByPinnedEntries(_ response: CachedResponse) -> Bool {
        response.source == .network && !response.cacheStatus.stored
            && response.reason.contains(DownloadCache.pinnedRoomWords)
    }

    /// For an interrupted transfer that kept nothing: the clause saying why when the response's announced
    /// length (`Content-Length` of `headers`, or the complete length of a 206's `Content-Range`) is over `limit` bytes
    /// (the partial limit, `--max-disk`), e.g.
    /// `; nothing was kept to resume: the 2.0 GB body is over the disk limit 1.0 GiB (--max-disk), so the next get
    /// starts again from byte 0`; "" otherwise.
    static func notKeptClause(headers: HTTPHeaders?, limit: Int64?) -> String {
        guard let limit, let headers else { return "" }
        // A 206 resuming a partial: its Content-Length is the rest; the body is its complete length.
        let resumed = ContentRange.of(headers)?.completeLength
        guard let length = resumed ?? headers.first("Content-Length").flatMap({ Int64($0) }), length > limit else {
            return ""
        }
        let dropped = resumed != nil ? " (the bytes kept before were dropped too)" : ""
        return "; nothing was kept to resume: the \(Formatting.bytes(length)) body is over the disk limit "
            + "\(Formatting.binaryBytes(limit)) (--max-disk)\(dropped), so the next get starts again from byte 0"
    }

    /// `128.0 MiB (--max-entry)`: the limit in the units the option takes.
    static func limitText(_ limit: Int64) -> String {
        "\(Formatting.binaryBytes(limit)) (--max-entry; default an eighth of --max-disk)"
    }
}
