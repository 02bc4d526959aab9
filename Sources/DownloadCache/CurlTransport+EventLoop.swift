#if canImport(CCurl)
import CCurl
import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// The libcurl multi handle of one ``CurlTransport`` and the dedicated thread that drives it.
///
/// Callers hand transfers over through a mutex-protected inbox and wake the loop with
/// `curl_multi_wakeup` (thread-safe); the loop thread alone adds, removes and finishes easy handles and
/// runs every libcurl callback, so no Swift cooperative thread ever blocks on the network.
/// Kept-alive connections live in the multi handle's connection cache and are reused across transfers.
///
/// `@unchecked Sendable`: `multi` and `active` are touched only by the loop thread (after `init`);
/// everything shared sits behind `inbox`.
final class CurlEventLoop: @unchecked Sendable {
    private enum Command {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
    }

    private struct Inbox {
        var commands: [Command] = []
        var shuttingDown = false
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private let connectionCount = Atomic<Int>(0)

    /// Creates the multi handle and starts the loop thread; `nil` when libcurl cannot create a multi handle.
    /// - Parameters:
    ///   - maxConnectionsPerHost: parallel connections per host; further transfers wait in libcurl.
    ///   - multiplexing: whether transfers may share an HTTP/2 connection as streams (libcurl's default);
    ///     false gives every transfer a connection of its own.
    init?(maxConnectionsPerHost: Int, multiplexing: Bool = true) {
        _ = CurlEventLoop.globalInit
        guard let multi = curl_multi_init() else { return nil }
        self.multi = multi
        _ = dlc_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, maxConnectionsPerHost))
        _ = dlc_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(8, maxConnectionsPerHost * 4))
        if !multiplexing { _ = dlc_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_NOTHING)) }
        let thread = Thread { [self] in self.run() }
        thread.name = "dlcache.curl"
        thread.start()
    }

    /// `curl_global_init`, run once per process (thread-safe since libcurl 7.84).
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Connections opened so far (not reused from the connection cache), over every finished transfer.
    var connectionsOpened: Int { connectionCount.load(ordering: .relaxed) }

    /// Hands a configured transfer to the loop.
    func submit(_ transfer: CurlTransfer) {
        post(.add(transfer))
    }

    /// Cancels a transfer: it is removed from libcurl and finishes with `.cancelled` (no-op once finished).
    func cancel(_ transfer: CurlTransfer) {
        transfer.cancelled.store(true, ordering: .releasing)
        post(.cancel(transfer))
    }

    /// Stops the loop thread after finishing every transfer still queued or running with `.cancelled`.
    func shutdown() {
        inbox.withLock { $0.shuttingDown = true }
        _ = curl_multi_wakeup(multi)
    }

    private func post(_ command: Command) {
        inbox.withLock { $0.commands.append(command) }
        _ = curl_multi_wakeup(multi)
    }

    // MARK: - Loop thread

    private func run() {
        var running: Int32 = 0
        while true {
            let (commands, stopping) = inbox.withLock { inbox -> ([Command], Bool) in
                let taken = inbox.commands
                inbox.commands.removeAll(keepingCapacity: true)
                return (taken, inbox.shuttingDown)
            }
            for command in commands { apply(command) }
            if stopping { break }
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            var ready: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1_000, &ready)
        }
        for transfer in Array(active.values) { remove(transfer, code: nil) }
        curl_multi_cleanup(multi)
    }

    private func apply(_ command: Command) {
        switch command {
        case .add(let transfer):
            if transfer.cancelled.load(ordering: .acquiring) {
                transfer.finish(nil)
                return
            }
            let added = curl_multi_add_handle(multi, transfer.easy)
            if added != CURLM_OK {
                let text = String(cString: curl_multi_strerror(added))
                transfer.finishWithError(.other("curl_multi_add_handle failed: \(text)"))
                return
            }
            active[transfer.easy] = transfer
        case .cancel(let transfer):
            if active[transfer.easy] === transfer { remove(transfer, code: nil) }
        }
    }

    /// Removes a finished or cancelled transfer from libcurl and completes it (`code` nil: cancelled).
    private func remove(_ transfer: CurlTransfer, code: CURLcode?) {
        active[transfer.easy] = nil
        _ = curl_multi_remove_handle(multi, transfer.easy)
        connectionCount.add(transfer.connectionsOpened, ordering: .relaxed)
        transfer.finish(code)
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            if let transfer = active[easy] { remove(transfer, code: code) }
        }
    }
}
#endif
