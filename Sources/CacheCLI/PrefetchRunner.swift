import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Synchronization

/// Runs `dlcache prefetch`: fetches every URL through `DownloadCache.response(for:options:)` with at most
/// `concurrency` calls at once, and feeds one ``ProgressReporter`` with count *and* byte progress.
///
/// `DownloadCache.prefetch(_:pin:concurrency:progress:)` reports only when a URL finishes, so one large URL shows
/// nothing until it is complete. This runner passes a per-request `RequestOptions.progress` closure and adds the
/// bytes received so far by the downloads in flight to the bytes of the finished ones. Outcomes are counted like
/// the client's prefetch: a non-2xx answer is a failure (`.http(status:)`), a response not from the network counts
/// as from cache. Every snapshot is built and handed to the reporter under one lock, so the reporter sees counts in
/// order (a duplicate URL coalesced with another download is reported once per list line, when it finishes).
enum PrefetchRunner {
    /// Progress being accumulated by concurrent downloads.
    private struct Tally {
        var report = PrefetchReport()
        /// Bytes received / expected so far by each in-flight download, by list position.
        var inFlight: [Int: (received: Int64, expected: Int64?)] = [:]
        /// List positions that finished (a late progress call for them is ignored).
        var finished: Set<Int> = []
        var total = 0
        /// Body bytes of the finished responses that came from the network (not from the cache).
        var networkBytes: Int64 = 0

        /// The aggregate the reporter draws.
        var snapshot: ProgressReporter.Snapshot {
            let received = inFlight.values.reduce(Int64(0)) { $0 + $1.received }
            var expected: Int64? = nil
            let unfinished = total - report.succeeded.count - report.failed.count
            if unfinished == inFlight.count, inFlight.values.allSatisfy({ $0.expected != nil }) {
                expected = inFlight.values.reduce(report.bytes) { $0 + ($1.expected ?? 0) }
            }
            return ProgressReporter.Snapshot(completed: report.succeeded.count, failed: report.failed.count,
                                             total: total, bytes: report.bytes + received, expectedBytes: expected,
                                             networkBytes: networkBytes + received)
        }
    }

    /// The tally shared by the download tasks and their progress closures.
    private final class TallyBox: Sendable {
        let state = Mutex(Tally())
    }

    /// Fetches `urls` (pinning the stored responses when `pin`), `concurrency` at a time (nil: the cache's
    /// `maxConcurrentDownloads`), reporting to `reporter`; returns the same report the client's prefetch would.
    static func run(_ cache: DownloadCache, urls: [URL], pin: Bool, concurrency: Int?,
                    limits: FetchLimits = FetchLimits(), reporter: ProgressReporter) async -> PrefetchReport {
        let width = max(1, concurrency ?? cache.configuration.maxConcurrentDownloads)
        let tally = TallyBox()
        tally.state.withLock { $0.total = urls.count }
        await withTaskGroup(of: Void.self) { group in
            for (index, url) in urls.enumerated() {
                if index >= width { _ = await group.next() }
                group.addTask {
                    await fetch(cache, url: url, index: index, pin: pin, limits: limits, tally: tally,
                                reporter: reporter)
                }
            }
        }
        return tally.state.withLock { $0.report }
    }

    /// Fetches one URL, updating `tally` as bytes arrive and when it finishes.
    private static func fetch(_ cache: DownloadCache, url: URL, index: Int, pin: Bool, limits: FetchLimits,
                              tally: TallyBox, reporter: ProgressReporter) async {
        var options = RequestOptions(pin: pin)
        options.refusesBodiesOverTheEntryLimit = true
        limits.apply(to: &options)
        options.progress = { progress in
            tally.state.withLock { t in
                guard !t.finished.contains(index) else { return }
                t.inFlight[index] = (progress.bytesReceived, progress.bytesExpected)
                reporter.update(t.snapshot)
            }
        }
        let outcome: Result<CachedResponse, DownloadError>
        do throws(DownloadError) {
            let response = try await cache.response(for: CacheRequest(url: url), options: options)
            // A body delivered without being stored is the caller's file: prefetch keeps none.
            DownloadCache.discardOwnedBodyFile(response)
            // Not in the cache afterwards (over --max-entry, no room beside the pinned entries): failed.
            if let refusal = DownloadCache.limitRefusal(response) { throw refusal }
            outcome = .success(response)
        } catch {
            outcome = .failure(error)
        }
        if pin, case .success(let response) = outcome, !(200...299).contains(response.status), response.cacheStatus.stored {
            // A failed URL's stored answer (a 404 stored with heuristic freshness) is not pinned: it stays evictable.
            _ = try? cache.setPinned(false, forEntriesOf: url)
        }
        tally.state.withLock { t in
            t.inFlight[index] = nil
            t.finished.insert(index)
            switch outcome {
            case .success(let response) where (200...299).contains(response.status):
                t.report.succeeded.append(url)
                t.report.bytes += response.bodySize
                if response.source == .network {
                    t.report.fromNetwork += 1
                    t.networkBytes += response.bodySize
                } else {
                    t.report.fromCache += 1
                }
            case .success(let response):
                t.report.failed.append(PrefetchReport.Failure(url: url, error: DownloadCache.httpFailure(response)))
            case .failure(let error):
                t.report.failed.append(PrefetchReport.Failure(url: url, error: error))
            }
            reporter.update(t.snapshot)
        }
    }
}
