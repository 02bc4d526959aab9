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
    /// one event, `.succeeded` for a 2xx answer, `.failed` with that error otherwise. So does a 2xx whose body a
    /// storage limit kept out of the cache (over `maxEntryBytes`, or no room beside the pinned entries:
    /// `.bodyTooLarge`, ``limitRefusal(_:)``); a body delivered without being stored leaves no file behind.
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
        var prefetching = RequestOptions(pin: pin)
        prefetching.refusesBodiesOverTheEntryLimit = true
        let options = prefetching
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

    /// The words a response's reason carries when its body was delivered but not stored because it is over the
    /// per-entry limit (``Configuration/maxEntryBytes``).
    package static let entryLimitWords = "entry limit (maxEntryBytes)"

    /// For pre-caching: a 2xx network answer whose body was delivered but refused by a storage limit — over
    /// ``Configuration/maxEntryBytes``, or no room beside the pinned entries within ``Configuration/maxDiskBytes``
    /// — is not in the cache afterwards, so it counts as failed: `.bodyTooLarge` with the reason's "not stored: …"
    /// words. nil for any other response (stored, from the cache, or not storable by its own header fields).
    package static func limitRefusal(_ response: CachedResponse) -> DownloadError? {
        guard response.source == .network, !response.cacheStatus.stored, (200...299).contains(response.status),
              response.reason.contains(entryLimitWords) || response.reason.contains(pinnedRoomWords) else { return nil }
        let detail = response.reason.range(of: "not stored: ").map { String(response.reason[$0.lowerBound...]) }
            ?? "not stored: over a storage limit"
        return DownloadError(.bodyTooLarge, detail)
    }

    /// Deletes `response`'s body file when the caller owns it (a body delivered as a file without being stored);
    /// a stored response's blob file is the store's and is left alone. For callers that keep only the outcome.
    package static func discardOwnedBodyFile(_ response: CachedResponse) {
        guard case .file(let url) = response.body, response.storedBodyURL == nil else { return }
        try? FileManager.default.removeItem(at: url)
    }

    /// Fetches one prefetch URL and records its outcome in `report`; returns the aggregate progress after it.
    private func prefetchOne(_ url: URL, options: RequestOptions, total: Int,
                             report: PrefetchAccumulator) async -> PrefetchProgress {
        let outcome: Result<CachedResponse, DownloadError>
        do throws(DownloadError) {
            let response = try await response(for: CacheRequest(url: url), options: options, emitsEvent: false)
            Self.discardOwnedBodyFile(response)
            if let refusal = Self.limitRefusal(response) { throw refusal }
            outcome = .success(response)
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
