import Foundation

extension ModelCache {
    /// Shows the cached value at once, then refreshes it with `fetch` when it is stale or missing: the usual
    /// "load from cache, then update from the server" pattern of an app screen, in one call.
    ///
    /// The stream yields, in order:
    /// 1. the cached value (`source == .cache`, with `age` and `isStale`), at once, if one is usable (read and
    ///    decoded in a task, never on the caller's thread or actor);
    /// 2. if `policy` asks for a refresh (by default: nothing usable cached, or the value is stale), the value
    ///    `fetch` returns (`source == .fetch`), after it has been stored (see `ModelUpdate.storageError`).
    ///
    /// Then it finishes. If `fetch` throws, the cached value stays stored and the stream finishes by throwing
    /// `ModelCacheError.refreshFailed` (after having yielded the cached value, if any). Concurrent refreshes
    /// of one key are coalesced: one `fetch` runs, every stream gets its result. Ending the stream early
    /// stops waiting, but a fetch already started still completes and stores its value.
    /// `stalenessThreshold` is in seconds; `typeVersion` overrides `VersionedModel.modelVersion`.
    public func values<T: Codable & Sendable>(
        forKey key: String,
        as type: T.Type = T.self,
        typeVersion: Int? = nil,
        stalenessThreshold: TimeInterval? = nil,
        policy: RefreshPolicy = .ifStaleOrMissing,
        fetch: @escaping @Sendable () async throws -> T
    ) -> AsyncThrowingStream<ModelUpdate<T>, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ModelUpdate<T>.self)
        // The read, decode and fetch run in a task, off the caller's thread or actor (e.g. the main actor).
        let task = Task {
            let cached = self.lookup(key, as: T.self, typeVersion: typeVersion,
                                     stalenessThreshold: stalenessThreshold).cached
            if let cached {
                continuation.yield(ModelUpdate(value: cached.value, source: .cache, savedAt: cached.savedAt,
                                               age: cached.age, isStale: cached.isStale))
            }
            guard policy == .always || cached.map(\.isStale) ?? true, !Task.isCancelled else {
                continuation.finish()
                return
            }
            do {
                let update = try await self.refresh(forKey: key, as: T.self, typeVersion: typeVersion, fetch: fetch)
                continuation.yield(update)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Runs `fetch` and stores its value under `key`, coalesced with any refresh of `key` in flight
    /// (one fetch, every caller gets the same value or error).
    ///
    /// A value that cannot be stored is still returned, with `storageError` set (and reported as
    /// `ModelCacheEvent.storeFailed`). `typeVersion` overrides `VersionedModel.modelVersion` for the write.
    /// - Throws: `ModelCacheError.refreshFailed` wrapping the error `fetch` threw; the value stored before
    ///   (if any) is kept. The failure is reported once as `ModelCacheEvent.refreshFailed`.
    public func refresh<T: Codable & Sendable>(
        forKey key: String,
        as type: T.Type = T.self,
        typeVersion: Int? = nil,
        fetch: @escaping @Sendable () async throws -> T
    ) async throws(ModelCacheError) -> ModelUpdate<T> {
        do {
            return try await refreshes.run(key: key) { () async throws -> ModelUpdate<T> in
                try await self.fetchAndStore(key: key, typeVersion: typeVersion, fetch: fetch)
            }
        } catch let error as ModelCacheError {
            throw error
        } catch {
            throw .refreshFailed(key: key, underlying: error)
        }
    }

    /// The shared body of a refresh: fetch, then store; wraps and reports a fetch failure.
    private func fetchAndStore<T: Codable & Sendable>(
        key: String,
        typeVersion: Int?,
        fetch: @Sendable () async throws -> T
    ) async throws -> ModelUpdate<T> {
        countFetch()
        let value: T
        do {
            value = try await fetch()
        } catch {
            let wrapped = ModelCacheError.refreshFailed(key: key, underlying: error)
            report(.refreshFailed(key: key, error: wrapped))
            throw wrapped
        }
        do {
            let savedAt = try write(value, forKey: key, typeVersion: typeVersion)
            return ModelUpdate(value: value, source: .fetch, savedAt: savedAt, age: 0, isStale: false)
        } catch {
            report(.storeFailed(key: key, error: error))
            return ModelUpdate(value: value, source: .fetch, savedAt: configuration.now(), age: 0, isStale: false,
                               storageError: error)
        }
    }
}
