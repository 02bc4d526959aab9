import Foundation

extension CacheStore {
    /// Reads every body and checks it against the index: checksum and size of each body, blob files missing,
    /// blob files no row names (orphans), pending rows, and the totals against `SUM(size)`.
    ///
    /// With `repair`, deletes bad rows and their files, orphan blobs older than 60 seconds (younger ones may belong
    /// to a write another process is committing) and rewrites the totals. Never throws: an index that cannot be
    /// read is reported as one problem of kind `"index"`.
    public func verify(repair: Bool) -> VerificationReport {
        var report = VerificationReport()
        let rows: [IndexRow]
        do {
            rows = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> [IndexRow] in
                try index.rows(where: "1", order: "id")
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
        let orphans = findOrphans(rows)
        for name in orphans {
            report.problems.append(.init(key: nil, kind: "orphan-body", detail: "blobs/\(name) is named by no entry"))
        }
        let accounting = try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Bool in
            let recorded = try index.totals()
            let computed = try index.computedTotals()
            return recorded.entries == computed.entries && recorded.bytes == computed.bytes
        }
        if accounting == false {
            report.problems.append(.init(key: nil, kind: "accounting", detail: "totals differ from SUM(size)"))
        }
        guard repair else { return report }

        for (key, blob) in bad {
            drop(key, blobID: blob)
            report.repaired += 1
        }
        let cutoff = Date().addingTimeInterval(-60)
        for name in orphans {
            let path = files.blobPath(name)
            if let modified = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date,
               modified > cutoff { continue }
            BlobFiles.remove(path)
            report.repaired += 1
        }
        if accounting == false {
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
        guard let size = BlobFiles.fileSize(path) else {
            return .init(key: key, kind: "missing-body", detail: "blobs/\(blob) does not exist")
        }
        guard size == row.info.bodySize else {
            return .init(key: key, kind: "size", detail: "blobs/\(blob) has \(size) bytes, index says \(row.info.bodySize)")
        }
        guard let computed = try? BlobFiles.sizeAndChecksum(ofFile: path) else {
            return .init(key: key, kind: "missing-body", detail: "blobs/\(blob) cannot be read")
        }
        return computed.crc == row.info.checksum ? nil
            : .init(key: key, kind: "checksum", detail: "blobs/\(blob) crc32 \(computed.crc), index says \(row.info.checksum)")
    }

    /// Blob file names no row names (re-reading the index after listing, so a concurrent commit is not counted).
    private func findOrphans(_ rows: [IndexRow]) -> [String] {
        let listed = BlobFiles.list(files.blobsPath)
        let named = (try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Set<String> in
            try index.allBlobIDs()
        }) ?? Set(rows.compactMap(\.blobID))
        return listed.filter { !named.contains($0) }.sorted()
    }
}
