import Foundation
import DownloadCache
import HTTPCacheSemantics
import Synchronization

/// Serves one `dlcache driver` session: reads request lines, answers each one concurrently through the cache's
/// public API, and writes one JSON answer line per request line (issue 6).
///
/// - Every request goes through `DownloadCache.response(for:options:)` with the default options (policy
///   use-protocol, RFC 9111) except `followRedirects = false` (a 3xx is returned as is) and the request body.
/// - A slow request never blocks the next line; answers come out in completion order and are matched by id.
/// - Lines are written whole, one at a time, by a single locked writer; they are never interleaved.
/// - Blank lines are ignored; any other line that is not a valid request gets an error line.
/// - A request the cache may not send to the origin and cannot answer from storage (`only-if-cached`,
///   `DownloadError.notCached`) is answered as HTTP does it: a synthesized 504 with no headers and an empty body
///   (RFC 9111 §5.2.1.7). Every other failure is an error line.
public final class DriverSession: Sendable {
    /// The cache every request goes through.
    public let cache: DownloadCache
    private let output: DriverOutput

    /// Creates a session over `cache` that writes each answer line (JSON + `\n`) with one call of `write`.
    ///
    /// `write` is never called concurrently with itself; it should write every byte before returning
    /// (``Console``'s writers do, unbuffered).
    public init(cache: DownloadCache, write: @escaping @Sendable (Data) -> Void) {
        self.cache = cache
        self.output = DriverOutput(write: write)
    }

    /// Number of answer lines written so far.
    public var linesWritten: Int { output.count }

    /// Reads `lines` until the sequence ends, answering each as soon as its request completes; returns when
    /// every request has been answered (stdin closing never drops an in-flight request).
    public func serve(_ lines: AsyncStream<String>) async {
        await withDiscardingTaskGroup { group in
            for await line in lines {
                guard !Self.isBlank(line) else { continue }
                group.addTask { [self] in
                    let answer = await self.answer(line)
                    self.output.writeLine(answer.jsonLine)
                }
            }
        }
    }

    /// The answer to one request line: the response, or an error line for a malformed line or a failed request.
    public func answer(_ line: String) async -> DriverResponse {
        let request: DriverRequest
        do {
            request = try DriverRequest.parse(line)
        } catch {
            return .error(id: error.id, message: error.message)
        }
        var options = RequestOptions()
        options.followRedirects = false
        options.body = request.body
        do {
            let response = try await cache.response(for: request.cacheRequest, options: options)
            return try DriverResponse.from(response, id: request.id)
        } catch let error as DriverLineError {
            return .error(id: error.id, message: error.message)
        } catch let error as DownloadError where error.code == .notCached {
            // RFC 9111 §5.2.1.7: a cache that cannot satisfy only-if-cached responds 504 (Gateway Timeout).
            return .response(id: request.id, status: 504, statusText: "Gateway Timeout", headers: [], body: "")
        } catch {
            return .error(id: request.id, message: ResponseDescription.failureMessage(error, url: request.url))
        }
    }

    /// Whether `line` holds only spaces, tabs or a carriage return.
    static func isBlank(_ line: String) -> Bool {
        line.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" }
    }
}

/// The driver's single output writer: one line at a time under a lock, each written whole with its `\n`.
final class DriverOutput: Sendable {
    private let write: @Sendable (Data) -> Void
    private let written = Mutex<Int>(0)

    init(write: @escaping @Sendable (Data) -> Void) {
        self.write = write
    }

    /// Lines written so far.
    var count: Int { written.withLock { $0 } }

    /// Writes `line` and a newline as one call of the sink, while holding the lock.
    func writeLine(_ line: String) {
        var data = Data(line.utf8)
        data.append(0x0A)
        written.withLock { count in
            write(data)
            count += 1
        }
    }
}
