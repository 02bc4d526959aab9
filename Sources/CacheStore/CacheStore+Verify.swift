import Foundation
import CacheSystem
import Synchronization

extension CacheStore {
    /// What is wrong with `partial`'s file in `tmp/` (read-only: the file is neither cut nor extended), nil when
    /// its verified prefix is intact, or `missing` when the file is gone (a problem only if the row still is).
    private func check(_ partial: PartialRow) -> (problem: String?, missing: Bool) {
        if let problem = implausibility(of: partial) { return ("the partial of \(partial.key.primary) \(problem)", false) }
        let path = files.tmpPath + "/" + partial.file
        switch files.openPartial(partial.file, forWriting: false) {
        case .failure(let error):
            return error.code == .notFound ? (nil, true) : (error.detail, false)
        case .success(let (fd, info)):
            defer { _ = cs_close(fd) }
            if let shortfall = Self.shortfall(of: partial, size: info.size, path: path) { return (shortfall, false) }
            guard (try? Self.verifiedPrefixMatches(fd, partial, path: path)) == true else {
                return ("partial \(path): the first \(partial.verified) bytes fail their checksum", false)
            }
            return (nil, false)
        }
    }

    /// The partial downloads checked by ``verify(repair:)`` and those found damaged: every partial no live
    /// transfer (of this or another process) owns; a missing file is a problem only when its row is still there
    /// after the others were read (its download ended meanwhile otherwise).
    private func checkPartials(_ report: inout VerificationReport) -> [PartialRow] {
        func listed() -> [PartialRow] {
            (try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> [PartialRow] in try index.allPartials() }) ?? []
        }
        let partials = listed()
        let live = Set(BlobFiles.list(files.handles.sessions))
        var bad: [PartialRow] = []
        var missing: [PartialRow] = []
        for partial in partials where partial.owner.map({ !live.contains($0) }) ?? true {
            report.checkedPartials += 1
            let (problem, gone) = check(partial)
            if gone { missing.append(partial) }
            if let problem {
                report.problems.append(.init(key: partial.key, kind: "partial-body", detail: problem))
                bad.append(partial)
            }
        }
        guard !missing.isEmpty else { return bad }
        let still = Set(listed().map(\.file))
        for partial in missing where still.contains(partial.file) {
            report.problems.append(.init(key: partial.key, kind: "partial-body", detail: "partial tmp/\(partial.file) is missing"))
            bad.append(partial)
        }
        return bad
    }

    /// The blob file holding `key`'s body, checked against the index first, for callers that serve the file by path
    /// (a body that does not match its entry is never served).
    ///
    /// The size is checked on every call (one `fstat`); the crc32 is streamed from the file in 1 MiB chunks (never
    /// whole in memory) only when this process has not verified this version of the file yet — the same
    /// per-file-identity cache as ``entry(for:)``. Counts a disk-tier hit or miss like ``entry(for:)`` and refreshes
    /// the last-access time on a hit.
    /// - Parameter expected: when given, the entry the caller looked up earlier; if the stored entry's size or
    ///   checksum differ from it (replaced concurrently since) the call is a miss and nothing is removed.
    /// - Returns: nil on a miss: the entry is absent, its body is inline, it no longer matches `expected`, or its
    ///   blob is missing, truncated or damaged — then the entry is removed, as ``entry(for:)`` does.
    public func verifiedBodyFileURL(for key: StoreKey, matching expected: EntryInfo? = nil) -> URL? {
        verifiedBody(for: key, matching: expected)?.url
    }

    /// The blob file holding `key`'s body, checked against the index like ``verifiedBodyFileURL(for:matching:)``
    /// and held open: reading through the returned ``OpenedBody`` always yields the verified bytes, even when
    /// the entry is replaced, evicted or purged (by this or another process) meanwhile — the file is only
    /// unlinked, and an open file stays readable until it is closed.
    /// - Returns: nil on a miss (see ``verifiedBodyFileURL(for:matching:)``).
    /// - Parameter recordsUse: false for reading back what was just stored (not a use of the entry): then no
    ///   hit or miss is counted and the last-access time is left as the commit set it.
    public func openVerifiedBody(for key: StoreKey, matching expected: EntryInfo? = nil,
                                 recordsUse: Bool = true) -> OpenedBody? {
        verifiedBody(for: key, matching: expected, recordsUse: recordsUse)
    }

    /// The verified blob file of a variant of `primary` whose body is exactly `body` (same size and crc32, the file
    /// checked against its row), for a caller holding the bytes in memory that wants to hand out a path instead;
    /// nil when no such variant is stored file-backed (inline, absent, replaced by other bytes meanwhile). Counts
    /// no use of the entry.
    package func storedBodyFile(holding body: Data, forPrimaryKey primary: String) -> URL? {
        let size = Int64(body.count)
        let candidates = variants(forPrimaryKey: primary).filter { $0.bodySize == size }
        guard !candidates.isEmpty else { return nil }
        let checksum = BlobFiles.checksum(body)
        for info in candidates where info.checksum == checksum {
            if let opened = openVerifiedBody(for: info.key, matching: info, recordsUse: false) { return opened.url }
        }
        return nil
    }

    private func verifiedBody(for key: StoreKey, matching expected: EntryInfo?, recordsUse: Bool = true) -> OpenedBody? {
        let now = configuration.currentTime()
        defer { flushAccountingIfDue(now: now) }  // after the hit or miss below is counted
        guard case let (row, blob)? = blobRow(for: key, matching: expected, recordsUse: recordsUse, now: now,
                                              caller: "verifiedBodyFileURL") else { return nil }
        let opened: OpenedBody
        do {
            let (fd, identity) = try files.openBlob(blob, expectedSize: row.info.bodySize)
            opened = OpenedBody(fd: fd, url: URL(fileURLWithPath: files.blobPath(blob), isDirectory: false), size: row.info.bodySize)
            let checked = try BlobFiles.check(fd: fd, path: files.blobPath(blob), identity: identity,
                                              expectedSize: row.info.bodySize, checksum: row.info.checksum) {
                identity in verifiedBlobs.withLock { $0[blob] == identity }
            }
            if let checked { rememberVerified(blob, identity: checked) }
        } catch {
            log("verifiedBodyFileURL(\(key)): dropping unreadable entry: \(error)")
            drop(key, blobID: blob)
            if recordsUse { diskMisses.add(1, ordering: .relaxed) }
            return nil
        }
        if recordsUse { diskHits.add(1, ordering: .relaxed) }
        return opened
    }

    /// The row of `key` when its body is a blob file and, with `expected`, still of that size and crc32; nil
    /// otherwise (an index that cannot be read too, logged as `caller`'s). With `recordsUse` the use is recorded
    /// (the row's access time, at `now`) and a nil counts a disk-tier miss.
    private func blobRow(for key: StoreKey, matching expected: EntryInfo?, recordsUse: Bool, now: Date,
                         caller: String) -> (row: IndexRow, blob: String)? {
        let generationNow = generation.isShared ? generation.current : nil
        let row: IndexRow?
        do {
            row = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> IndexRow? in
                let row = try index.row(for: key, withBody: false, generation: generationNow)
                if recordsUse, row?.blobID != nil, !isReadOnly { index.pendingTouches[key] = now.timeIntervalSince1970 }
                return row
            }
        } catch {
            if !closedFlag.load(ordering: .relaxed) { log("\(caller)(\(key)): index read failed: \(error)") }
            row = nil
        }
        guard let row, let blob = row.blobID,
              expected.map({ $0.checksum == row.info.checksum && $0.bodySize == row.info.bodySize }) ?? true else {
            if recordsUse { diskMisses.add(1, ordering: .relaxed) }
            return nil
        }
        return (row, blob)
    }

    /// Reads every body and checks it against the index: checksum and size of each body, blob files missing,
    /// blob files no row names (orphans, directories included), pending rows, and the totals against `SUM(size)`.
    ///
    /// With `repair`, deletes bad rows and their files, rewrites the totals, and deletes orphans — in one index
    /// write transaction, so no process can commit a row meanwhile. An orphan body younger than 60 seconds may be
    /// a write another store is about to commit, so it is deleted only when no other store has the namespace open
    /// (no session marker but this store's; this process's own uncommitted bodies are known and never taken for
    /// orphans); otherwise it is reported with `isKept` and a detail saying why, and does not count as a failed
    /// repair (`VerificationReport.unresolved`). A directory or other non-file in `blobs/` is deleted whatever
    /// its age (a store never puts one there). A read-only store repairs nothing and says so (kind `"read-only"`).
    /// Partial downloads kept to resume are checked too, except those a live transfer owns (kind `"partial-body"`):
    /// a file missing, not a regular file of this user, shorter than its verified bytes or whose verified prefix
    /// fails its crc32; a repair drops such a partial and its file (the next download of the URL starts over).
    /// Never throws: an index that cannot be read is reported as one problem of kind `"index"`.
    public func verify(repair: Bool) -> VerificationReport {
        var report = VerificationReport()
        let rows: [IndexRow]
        do {
            rows = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> [IndexRow] in
                try index.allRows()
            }
        } catch {
            report.problems.append(.init(key: nil, kind: "index", detail: error.description))
            return report
        }
        var bad: [(StoreKey, String?)] = []
        for row in rows {
            let key = row.info.key
            report.checked += 1
            if let problem = check(row) {
                report.problems.append(problem)
                bad.append((key, row.blobID))
            }
        }
        let badPartials = checkPartials(&report)
        let orphans = findOrphans(rows)
        let accounting = try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Bool in
            try index.totalsMatchRows()
        }
        var writable = true
        do {
            try requireWritable()
        } catch {
            writable = false
        }
        guard repair, writable else {
            report.problems += orphans.map { .init(key: nil, kind: "orphan-body", detail: Self.orphanDetail($0)) }
            if accounting == false {
                report.problems.append(.init(key: nil, kind: "accounting", detail: "totals differ from SUM(size)"))
            }
            if repair, !report.problems.isEmpty {
                report.problems.append(.init(key: nil, kind: "read-only", detail: "nothing repaired: the store is "
                    + (isReadOnly ? "read-only (\(readOnlyReason ?? ""))" : "closed")))
            }
            return report
        }

        for (key, blob) in bad {
            drop(key, blobID: blob)
            report.repaired += 1
        }
        for partial in badPartials {
            do {
                try dropPartial(file: partial.file)
                files.removeTemporary(partial.file)
                report.repaired += 1
            } catch {
                log("verify: cannot drop the partial \(partial.file): \(error)")
            }
        }
        let outcome = removeOrphans(orphans)
        report.problems += outcome.problems
        report.repaired += outcome.removed
        if accounting == false {
            report.problems.append(.init(key: nil, kind: "accounting", detail: "totals differ from SUM(size)"))
            do {
                _ = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Int in
                    try index.recomputeTotals()
                    return 0
                }
                report.repaired += 1
            } catch {
                log("verify: could not rewrite totals: \(error)")
            }
        }
        return report
    }

    /// A blob-directory entry no row names.
    struct Orphan: Sendable {
        var name: String
        var isFile: Bool
        /// Seconds since 1970 of the last modification.
        var modified: Double
    }

    static func orphanDetail(_ orphan: Orphan) -> String {
        orphan.isFile ? "blobs/\(orphan.name) is named by no entry"
            : "blobs/\(orphan.name) is a directory (or other non-file), not a body file"
    }

    /// Deletes `orphans` inside one index write transaction (see `verify(repair:)`); returns the problems to
    /// report (orphans committed meanwhile are not problems any more) and how many were removed.
    private func removeOrphans(_ orphans: [Orphan]) -> (problems: [VerificationReport.Problem], removed: Int) {
        guard !orphans.isEmpty else { return ([], 0) }
        let ownMarker = sessionMarker
        let cutoff = Date().timeIntervalSince1970 - 60
        let result = try? writeTransaction { (index: StoreIndex) throws(CacheStoreError)
            -> (problems: [VerificationReport.Problem], removed: Int) in
            let named = try index.allBlobIDs()
            let inFlight = inFlightBlobs.withLock { $0 }
            let others = BlobFiles.list(files.handles.sessions).filter { $0 != ownMarker }.sorted()
            var problems: [VerificationReport.Problem] = []
            var removed = 0
            for orphan in orphans where !named.contains(orphan.name) && !inFlight.contains(orphan.name) {
                var detail = Self.orphanDetail(orphan)
                if orphan.isFile, orphan.modified > cutoff, let other = others.first {
                    let age = max(0, Int(Date().timeIntervalSince1970 - orphan.modified))
                    detail += "; kept: written \(age) s ago while another store has the namespace open "
                        + "(sessions/\(other)\(others.count > 1 ? " and \(others.count - 1) more" : "")), so it may be "
                        + "a write being committed; a repair after 60 s, or once no other store is open, removes it"
                    problems.append(.init(key: nil, kind: "orphan-body", detail: detail, isKept: true))
                } else if let failure = BlobFiles.removeAnything(files.handles.blobs, orphan.name) {
                    detail += "; could not remove it: \(failure)"
                    problems.append(.init(key: nil, kind: "orphan-body", detail: detail))
                } else {
                    problems.append(.init(key: nil, kind: "orphan-body", detail: detail))
                    removed += 1
                }
            }
            return (problems, removed)
        }
        guard let result else {
            return (orphans.map { .init(key: nil, kind: "orphan-body",
                                        detail: Self.orphanDetail($0) + "; not removed: the index could not be locked") }, 0)
        }
        return result
    }

    /// The problem with one row's body, or nil when it reads back with the recorded size and checksum.
    private func check(_ row: IndexRow) -> VerificationReport.Problem? {
        let key = row.info.key
        guard let blob = row.blobID else {
            let inline = try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Data? in
                try index.row(for: key, withBody: true)?.inlineBody
            }
            guard let body = inline ?? nil else {
                return .init(key: key, kind: "missing-body", detail: "row has neither an inline body nor a blob")
            }
            if Int64(body.count) != row.info.bodySize {
                return .init(key: key, kind: "size", detail: "inline body has \(body.count) bytes, index says \(row.info.bodySize)")
            }
            let crc = BlobFiles.checksum(body)
            return crc == row.info.checksum ? nil
                : .init(key: key, kind: "checksum", detail: "inline body crc32 \(crc), index says \(row.info.checksum)")
        }
        let path = files.blobPath(blob)
        guard let info = BlobFiles.info(files.handles.blobs, blob) else {
            return .init(key: key, kind: "missing-body", detail: "blobs/\(blob) does not exist")
        }
        guard info.isRegular else {
            return .init(key: key, kind: "missing-body", detail: "blobs/\(blob) is not a regular file")
        }
        let size = info.size
        guard size == row.info.bodySize else {
            return .init(key: key, kind: "size", detail: "blobs/\(blob) has \(size) bytes, index says \(row.info.bodySize)")
        }
        guard let computed = try? BlobFiles.sizeAndChecksum(files.handles.blobs, blob, path: path) else {
            return .init(key: key, kind: "missing-body", detail: "blobs/\(blob) cannot be read")
        }
        return computed.crc == row.info.checksum ? nil
            : .init(key: key, kind: "checksum", detail: "blobs/\(blob) crc32 \(computed.crc), index says \(row.info.checksum)")
    }

    /// Entries of `blobs/` no row names (re-reading the index after listing, so a concurrent commit is not
    /// counted), sorted by name.
    private func findOrphans(_ rows: [IndexRow]) -> [Orphan] {
        let listed = BlobFiles.list(files.handles.blobs)
        let named = (try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Set<String> in
            try index.allBlobIDs()
        }) ?? Set(rows.compactMap(\.blobID))
        let inFlight = inFlightBlobs.withLock { $0 }
        return listed.filter { !named.contains($0) && !inFlight.contains($0) }.sorted().map { name in
            guard let info = BlobFiles.info(files.handles.blobs, name) else { return Orphan(name: name, isFile: true, modified: 0) }
            return Orphan(name: name, isFile: info.isRegular, modified: Double(info.modified_ns) / 1e9)
        }
    }
}

extension CacheStore {
    /// The blob file holding `key`'s body, opened and size-checked like ``openVerifiedBody(for:matching:recordsUse:)``
    /// but served before its crc32 is known: when this process has not verified this version of the file yet,
    /// the crc32 is computed on a thread of its own (`pread` in 1 MiB chunks, from the front) while the caller
    /// copies the bytes, and the returned ``BodyCheck`` gives the verdict (its ``BodyCheck/verdict()`` reads what
    /// is left from the back meanwhile); nil check: verified already (the verdict is `.matches`).
    ///
    /// On a mismatch the entry is removed (only if it still names this blob: a replacement stored meanwhile is
    /// kept) and its file deleted, exactly as a damaged entry found before serving is; the open descriptor still
    /// reads the bytes, which are not the stored response. The caller must deliver nothing as the good body before
    /// the verdict, and discard what it delivered on `.damaged` (e.g. truncate its output and fetch again).
    /// Counts a disk-tier hit or miss and records the use like ``openVerifiedBody(for:matching:recordsUse:)``.
    /// - Returns: nil on a miss (absent, inline, no longer `expected`, missing or of another size).
    public func openBodyCheckedWhileServed(for key: StoreKey, matching expected: EntryInfo? = nil)
        -> (body: OpenedBody, check: BodyCheck?)? {
        let now = configuration.currentTime()
        defer { flushAccountingIfDue(now: now) }
        guard case let (row, blob)? = blobRow(for: key, matching: expected, recordsUse: true, now: now,
                                              caller: "openBodyCheckedWhileServed") else { return nil }
        let opened: OpenedBody
        let identity: BlobFiles.FileIdentity
        do {
            let (fd, found) = try files.openBlob(blob, expectedSize: row.info.bodySize)
            opened = OpenedBody(fd: fd, url: URL(fileURLWithPath: files.blobPath(blob), isDirectory: false), size: row.info.bodySize)
            identity = found
        } catch {
            log("openBodyCheckedWhileServed(\(key)): dropping unreadable entry: \(error)")
            drop(key, blobID: blob)
            diskMisses.add(1, ordering: .relaxed)
            return nil
        }
        diskHits.add(1, ordering: .relaxed)
        if verifiedBlobs.withLock({ $0[blob] == identity }) { return (opened, nil) }
        let check = BodyCheck(body: opened, identity: identity, size: row.info.bodySize, checksum: row.info.checksum,
                              path: files.blobPath(blob),
                              onMatch: { [self] in rememberVerified(blob, identity: identity) }) { [self] why in
            log("openBodyCheckedWhileServed(\(key)): dropping damaged entry: \(why)")
            drop(key, blobID: blob)
        }
        Thread.detachNewThread { check.run() }
        return (opened, check)
    }
}
