import Foundation
import HTTPCacheSemantics
import Synchronization
import CacheStore
import SharedTier

extension DownloadCache {
    /// Pre-caching (e.g. articles downloaded before going offline): fetches `urls` ahead of time.
    ///
    /// Already-fresh entries cost no download. At most `concurrency` calls run at once (default:
    /// `maxConcurrentDownloads`); identical URLs are coalesced. A non-2xx answer counts as a failure: in the
    /// report (`failed`, with `DownloadError.Code.http(status:)`) and in ``events`` alike — each URL emits exactly
    /// one event, `.succeeded` for a 2xx answer, `.failed` with that error otherwise.
    /// - Parameters:
    ///   - pin: keep the stored responses until unpinned (`setPinned(false, for:)`); limits and age skip them.
    ///   - concurrency: parallel calls; `nil` = `Configuration.maxConcurrentDownloads`.
    ///   - progress: called after each URL finishes with the aggregate so far.
    /// - Returns: what succeeded, what failed and why, bytes, and how many came from cache vs network.
    public func prefetch(_ urls: [URL], pin: Bool = false, concurrency: Int? = nil,
                         progress: (@Sendable (PrefetchProgress) -> Void)? = nil) async -> PrefetchReport {
        let width = max(1, concurrency ?? configuration.maxConcurrentDownloads)
        let report = PrefetchAccumulator()
        let total = urls.count
        let options = RequestOptions(pin: pin)
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while next < urls.count {
                if next >= width { _ = await group.next() }
                let url = urls[next]
                next += 1
                group.addTask {
                    let snapshot = await self.prefetchOne(url, options: options, total: total, report: report)
                    progress?(snapshot)
                }
            }
        }
        return report.state.withLock { $0 }
    }

    /// The prefetch failure for a non-2xx answer: "HTTP <status> <reason phrase>" (the CLI's prefetch counts
    /// outcomes with the same words).
    package static func httpFailure(_ response: CachedResponse) -> DownloadError {
        let phrase = response.statusText.isEmpty ? ErrorWords.reasonPhrase(response.status) : response.statusText
        return DownloadError(.http(status: response.status),
                             phrase.isEmpty ? "HTTP \(response.status)" : "HTTP \(response.status) \(phrase)")
    }

    /// Fetches one prefetch URL and records its outcome in `report`; returns the aggregate progress after it.
    private func prefetchOne(_ url: URL, options: RequestOptions, total: Int,
                             report: PrefetchAccumulator) async -> PrefetchProgress {
        let outcome: Result<CachedResponse, DownloadError>
        do throws(DownloadError) {
            outcome = .success(try await response(for: CacheRequest(url: url), options: options, emitsEvent: false))
        } catch {
            outcome = .failure(error)
        }
        if eventHub.hasSubscribers {
            switch outcome {
            case .success(let response) where (200...299).contains(response.status):
                eventHub.send(.succeeded(url: url, source: response.source, isCachedData: response.isFromCache))
            case .success(let response):
                eventHub.send(.failed(url: url, error: Self.httpFailure(response)))
            case .failure(let error):
                eventHub.send(.failed(url: url, error: error))
            }
        }
        return report.state.withLock { report -> PrefetchProgress in
            switch outcome {
            case .success(let response) where (200...299).contains(response.status):
                report.succeeded.append(url)
                report.bytes += response.bodySize
                if response.source == .network { report.fromNetwork += 1 } else { report.fromCache += 1 }
            case .success(let response):
                let error = Self.httpFailure(response)
                report.failed.append(PrefetchReport.Failure(url: url, error: error))
            case .failure(let error):
                report.failed.append(PrefetchReport.Failure(url: url, error: error))
            }
            return PrefetchProgress(completed: report.succeeded.count, failed: report.failed.count,
                                    total: total, bytes: report.bytes)
        }
    }
}

/// The prefetch report being filled in by concurrent tasks.
final class PrefetchAccumulator: Sendable {
    let state = Mutex(PrefetchReport())
}
