import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization

/// An ``HTTPTransport`` fake that answers from a queue of scripted replies and records every request.
///
/// Replies are matched in order of enqueueing; when the queue is empty a request fails with
/// `TransportError.connectionFailed("no scripted reply")`, so an unexpected network call is visible.
public final class ScriptedTransport: HTTPTransport, Sendable {
    /// One scripted answer: a response with a body, or a failure.
    public enum Reply: Sendable {
        /// Answer with `status`, `headers` and `body` (written to the body file).
        case response(status: Int, headers: HTTPHeaders, body: Data)
        /// Fail with `error` (e.g. `.connectionFailed`, `.truncated`).
        case failure(TransportError)
    }

    private struct State {
        var replies: [Reply] = []
        var requests: [TransportRequest] = []
    }

    private let state = Mutex(State())

    /// Creates a transport with `replies` queued.
    public init(_ replies: [Reply] = []) {
        state.withLock { $0.replies = replies }
    }

    /// Queues one more reply.
    public func enqueue(_ reply: Reply) {
        state.withLock { $0.replies.append(reply) }
    }

    /// Queues a response; `body` is UTF-8 text.
    public func enqueue(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: String = "") {
        enqueue(.response(status: status, headers: headers, body: Data(body.utf8)))
    }

    /// Every request sent so far, in order.
    public var requests: [TransportRequest] {
        state.withLock { $0.requests }
    }

    /// Number of replies still queued.
    public var pendingReplies: Int {
        state.withLock { $0.replies.count }
    }

    /// Answers `request` with the next queued reply: reports its head, then writes its body to `bodyFile`.
    /// - Throws: the scripted `TransportError`, `.cancelled` when the task is cancelled,
    ///   `.connectionFailed` when nothing is queued, `.other` when the body file cannot be written.
    public func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
                     events: TransportEvents) async throws(TransportError) -> TransportResponse {
        let reply: Reply? = state.withLock { state in
            state.requests.append(request)
            return state.replies.isEmpty ? nil : state.replies.removeFirst()
        }
        if Task.isCancelled { throw TransportError.cancelled }
        guard let reply else { throw TransportError.connectionFailed("no scripted reply") }
        switch reply {
        case .failure(let error):
            throw error
        case .response(let status, var headers, let body):
            let sent = request.method.uppercased() == "HEAD" ? Data() : body
            if !headers.contains("Content-Length") && request.method.uppercased() != "HEAD" {
                headers.add("Content-Length", String(body.count))
            }
            let response = TransportResponse(url: request.url, status: status, headers: headers, bodySize: Int64(sent.count))
            events.head?(response.head)
            try bodyFile.write(sent)
            events.progress?(Int64(sent.count), Int64(sent.count))
            return response
        }
    }
}
