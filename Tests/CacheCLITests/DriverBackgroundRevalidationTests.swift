import Foundation
import Testing
import CacheTestSupport
import CacheCLI
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache driver` finishes the background revalidations it started before it exits.
@Suite(.serialized) struct DriverBackgroundRevalidationTests {
    /// Through the real binary: the driver serves a stale (stale-while-revalidate) answer, stdin closes,
    /// and the slow background refresh is finished and stored before the process exits.
    @Test(.enabled(if: DriverProcess.binaryURL != nil, "dlcache binary not built next to the tests"))
    func driverFinishesBackgroundRevalidationBeforeExiting() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-driver-swr-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["--cache-dir", directory.path, "--namespace", "swr"]
        // Stale as soon as it is stored (max-age=0), and servable stale while a refresh runs.
        let header = ("Cache-Control", "max-age=0, stale-while-revalidate=60")
        try await origin.configure(path: "/swr", headers: [header], body: "v1")
        let first = try DriverProcess(arguments: arguments)
        first.send(DriverBinaryTests.line(id: 1, url: origin.url("/swr")))
        first.closeInput()
        #expect(first.waitForExit() == 0)
        #expect(try await first.waitForAnswers(1).first?.body == "v1")

        // The refresh takes longer than the 2 s the tool waits for caches to be released at exit.
        try await origin.configure(path: "/swr", headers: [("Cache-Control", "max-age=600")], body: "v2", delay: 3)
        let second = try DriverProcess(arguments: arguments)
        second.send(DriverBinaryTests.line(id: 2, url: origin.url("/swr")))
        let stale = try await second.waitForAnswers(1)
        #expect(stale.first?.body == "v1")
        second.closeInput()
        #expect(second.waitForExit(timeout: 30) == 0)
        #expect(try await origin.hits("/swr").total == 2)

        try await origin.configure(path: "/swr", headers: [("Cache-Control", "max-age=600")], body: "v3")
        let third = try DriverProcess(arguments: arguments)
        third.send(DriverBinaryTests.line(id: 3, url: origin.url("/swr")))
        third.closeInput()
        #expect(third.waitForExit() == 0)
        #expect(try await third.waitForAnswers(1).first?.body == "v2")
        #expect(try await origin.hits("/swr").total == 2)
    }
}
