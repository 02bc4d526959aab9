import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A body too large for memory is streamed by the transport into a file that the store then adopts as its
/// stored body: that file is owner-only (0600) from the moment it is created, whatever the umask, like every
/// other file the cache creates (README, Security).
@Suite(.serialized) struct BodyFileModeTests {
    /// 3 MB: over every transport's in-memory limit (1 MiB by default), so the body goes through a file.
    static let body = Data(repeating: 0x42, count: 3_000_000)
    /// 12 MB: the size at which a stored body was seen adopted from the transport's file with mode 0644.
    static let storedBody = Data(repeating: 0x43, count: 12_000_000)

    /// The permission bits of `path` (no symlink followed), or `nil`.
    func mode(_ path: String) -> UInt32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o777
    }

    func raw(_ body: Data = Self.body) -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nCache-Control: max-age=600\r\n\r\n".utf8) + body
    }

    @Test(arguments: TransportKind.available)
    func theTransportCreatesTheBodyFileOwnerOnly(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/large", HostileOrigin.Response(raw: raw()))
        let file = temporaryFile("body-mode")
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await kind.make().send(TransportRequest(url: origin.url("/large"), timeout: 30),
                                                  bodyFile: file, progress: nil)
        #expect(response.inMemoryBody == nil && response.bodySize == Int64(Self.body.count))
        #expect(mode(file.path) == 0o600)
    }

    /// A POST answer goes through URLSession's download task, whose own temporary file has the umask's mode: the
    /// body file the caller gets is still owner-only (the task's file is copied into it, then deleted).
    @Test(arguments: TransportKind.available)
    func anUnsafeMethodsBodyFileIsOwnerOnly(kind: TransportKind) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/form", HostileOrigin.Response(raw: raw(Self.storedBody)))
        let directory = temporaryFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        configuration.transport = kind.make()
        let cache = try DownloadCache(configuration: configuration)
        let previous = umask(0o022)
        defer { umask(previous) }
        var request = CacheRequest(url: origin.url("/form"))
        request.method = "POST"
        let answered = try await cache.response(for: request, options: RequestOptions(body: Data("x=1".utf8)))
        guard case .file(let file) = answered.body else {
            Issue.record("a 12 MB answer is handed over as a file")
            return
        }
        #expect(mode(file.path) == 0o600)
        #expect(try Data(contentsOf: file) == Self.storedBody)
    }

    @Test func aStoredLargeBodyIsOwnerOnly() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/large", HostileOrigin.Response(raw: raw(Self.storedBody)))
        let directory = temporaryFile("body-mode")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let served = try await cache.response(for: CacheRequest(url: origin.url("/large")))
        #expect(served.bodySize == Int64(Self.storedBody.count))
        let blobs = directory.appendingPathComponent("default/blobs").path
        let names = try FileManager.default.contentsOfDirectory(atPath: blobs)
        #expect(names.count == 1)
        for name in names { #expect(mode(blobs + "/" + name) == 0o600, "\(name)") }
    }
}
