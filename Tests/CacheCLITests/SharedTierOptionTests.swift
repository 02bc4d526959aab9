import CacheTestSupport
import Foundation
import Testing

/// `--redis URL` / `DLCACHE_REDIS` on the fetching commands and in `stats`: a shared tier that is down never fails a
/// fetching command, is reported by `stats` (local statistics printed, exit 1), and its password never appears in
/// any output.
@Suite(.serialized) struct SharedTierOptionTests {
    @Test func aDeadRedisNeverFailsGetAndStatsReportsItWithoutThePassword() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", headers: [("Cache-Control", "max-age=600")], body: "body a")
        let dead = "redis://app:hunter2@127.0.0.1:1/0"
        let get = await cli.run(["get", origin.url("/a").absoluteString, "--redis", dead, "-v"])
        #expect(get.code == 0)
        #expect(get.out == "body a")
        #expect(get.err.contains("shared tier"))
        #expect(!get.err.contains("hunter2"))
        // `stats` still prints the local statistics, then exits 1 with one error line: the tier asked for is down.
        let stats = await cli.run(["stats"], variables: ["DLCACHE_REDIS": dead])
        #expect(stats.code == 1)
        #expect(stats.out.contains("entries:") && stats.out.contains("hits:"))
        #expect(stats.out.contains("shared tier:"))
        #expect(stats.out.contains("redis://app:***@127.0.0.1:1/0 unavailable"))
        #expect(!stats.out.contains("hunter2"))
        #expect(stats.err.hasPrefix("Error: shared tier redis://app:***@127.0.0.1:1/0 unavailable ("), "\(stats.err)")
        #expect(stats.err.hasSuffix("); the statistics printed are the local store's, fetches work without the tier\n"))
        #expect(stats.err.filter { $0 == "\n" }.count == 1 && !stats.err.contains("hunter2"))
        let json = await cli.run(["stats", "--json", "--redis", dead])
        #expect(json.code == 1)
        #expect(try json.object()["entries"] as? Int == 1)
        let tier = try #require(try json.object()["sharedTier"] as? [String: Any])
        #expect(tier["reachable"] as? Bool == false)
        #expect(!json.out.contains("hunter2"))
    }

    @Test func aHostileRedisErrorTextCannotActOnTheTerminal() async throws {
        // Answers every command with an error carrying a terminal title escape and a bell.
        let script = """
            import socket, threading, sys, os
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(16)
            print("LISTENING", server.getsockname()[1], flush=True)
            def answer(conn):
                try:
                    while conn.recv(4096):
                        conn.sendall(b"-ERR \\x1b]0;PWN\\x07\\r\\n")
                except OSError:
                    pass
            def stdin_closed():
                sys.stdin.read(); os._exit(0)
            threading.Thread(target=stdin_closed, daemon=True).start()
            while True:
                conn, _ = server.accept()
                threading.Thread(target=answer, args=(conn,), daemon=True).start()
            """
        let fake = try ChildProcess(["/usr/bin/env", "python3", "-u", "-c", script])
        defer { _ = fake.stop() }
        var line = ""
        let deadline = Date().addingTimeInterval(10)
        while !line.contains("\n") && Date() < deadline {
            let chunk = fake.stdout?.availableData ?? Data()
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(line.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for directory in [cli.directory.path, cli.directory.appendingPathComponent("none-yet").path] {
            if directory == cli.directory.path {
                _ = await cli.run(["get", "http://127.0.0.1:1/", "--cache-dir", directory])  // creates the cache
            }
            let stats = await cli.run(["stats", "--cache-dir", directory, "--redis", "redis://127.0.0.1:\(port)/0"])
            #expect(stats.code == 1)
            #expect(stats.out.contains("unavailable"), "\(stats.out)")
            #expect(!stats.out.contains("\u{1B}") && !stats.out.contains("\u{07}"), "\(stats.out)")
            #expect(!stats.err.contains("\u{1B}") && !stats.err.contains("\u{07}"), "\(stats.err)")
        }
    }

    @Test func statsProbesTheSharedTierWhereNoCacheExistsYet() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let fresh = cli.directory.appendingPathComponent("new-machine")
        let dead = "redis://app:hunter2@127.0.0.1:1/0"
        let stats = await cli.run(["stats", "--cache-dir", fresh.path, "--redis", dead])
        #expect(stats.code == 1)
        #expect(stats.err.hasPrefix("Error: shared tier redis://app:***@127.0.0.1:1/0 unavailable ("))
        #expect(stats.out.contains("no cache here yet"))
        #expect(stats.out.contains("redis://app:***@127.0.0.1:1/0 unavailable"))
        #expect(!stats.out.contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: fresh.path))
        let json = await cli.run(["stats", "--json", "--cache-dir", fresh.path, "--redis", dead])
        let object = try json.object()
        #expect(object["cacheExists"] as? Bool == false)
        #expect((object["sharedTier"] as? [String: Any])?["reachable"] as? Bool == false)
        // Without a shared tier there is nothing to report: the missing cache is an error, as before.
        let plain = await cli.run(["stats", "--cache-dir", fresh.path])
        #expect(plain.code == 1 && plain.err.contains("no cache at"))
        if RedisServer.isAvailable {
            let redis = try RedisServer()
            defer { redis.stop() }
            let live = await cli.run(["stats", "--cache-dir", fresh.path, "--redis", redis.url])
            #expect(live.code == 0 && live.out.contains("\(redis.url) reachable"))
        }
    }

    @Test(arguments: ["http://127.0.0.1:6379", "redis://:pw-secret@127.0.0.1:0/0", "redis://127.0.0.1/x"])
    func anInvalidRedisURLIsAUsageError(url: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "http://127.0.0.1:9/", "--redis", url])
        #expect(run.code == 64)
        #expect(run.err.contains("'--redis'"))
        #expect(!run.err.contains("pw-secret"))
        let fromEnvironment = await cli.run(["prefetch"], stdin: "http://127.0.0.1:9/\n", variables: ["DLCACHE_REDIS": url])
        #expect(fromEnvironment.code == 64)
        #expect(fromEnvironment.err.contains("DLCACHE_REDIS"))
    }

    @Test(.enabled(if: RedisServer.isAvailable, "redis-server is not installed"))
    func twoCacheDirectoriesShareThroughDLCACHE_REDIS() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let redis = try RedisServer()
        defer { redis.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/s", headers: [("Cache-Control", "max-age=600")], body: "shared")
        for machine in ["one", "two"] {
            let run = await cli.run(["get", origin.url("/s").absoluteString, "--cache-dir",
                                     cli.directory.appendingPathComponent(machine).path],
                                    variables: ["DLCACHE_REDIS": redis.url])
            #expect(run.out == "shared")
        }
        #expect(try await origin.hits("/s").total == 1)
        let stats = await cli.run(["stats", "--cache-dir", cli.directory.appendingPathComponent("two").path,
                                   "--redis", redis.url])
        #expect(stats.out.contains("\(redis.url) reachable"))
    }
}
