import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// A shared tier that is down, slow, restarted, full, refusing or hostile never fails a download: the client
/// answers from the local store and the origin, says so once, and the statistics show it.
@Suite(.serialized, .enabled(if: RedisServer.isAvailable, "redis-server is not installed (Scripts/bootstrap.sh installs it)"))
struct SharedTierFaultTests {
    /// The only hash of entries in Redis and its only field.
    private func onlyEntry(_ fleet: Fleet) throws -> (key: String, field: String) {
        let keys = try fleet.redis.keys("*:e")
        try #require(keys.count == 1)
        let fields = try fleet.redis.cli(["--raw", "HKEYS", keys[0]]).split(separator: "\n").map(String.init)
        try #require(fields.count == 1)
        return (keys[0], fields[0])
    }

    @Test(arguments: ["garbage", "truncated", "flipped"])
    func damagedValueIsAMissAndIsDeleted(damage: String) async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/d", headers: [("Cache-Control", "max-age=600")], body: "the right bytes")
            let tier = try fleet.tier()
            _ = try await fleet.get(try fleet.machine("one", tier: tier), "/d")
            let (key, field) = try onlyEntry(fleet)
            let value = try fleet.redis.cli(["--raw", "HGET", key, field])
            var bytes = Data(value.utf8.dropLast())   // --raw adds a newline
            switch damage {
            case "garbage": bytes = Data("DLCS\u{1}\u{ff}\u{ff}\u{ff}\u{ff}not an entry".utf8)
            case "truncated": bytes = bytes.prefix(bytes.count - 9)
            default: bytes[bytes.count - 6] ^= 0x20   // a body byte: the checksum no longer matches
            }
            try fleet.redis.cli(["HSET", key, field], stdin: bytes)
            let second = try fleet.machine("two", tier: tier)
            let response = try await fleet.get(second, "/d")
            #expect(response.text == "the right bytes")
            #expect(try await fleet.originRequests("/d") == 2)
            #expect(second.sharedTierStatistics?.refusedValues == 1)
            // The damaged value was deleted and the second machine's fetch wrote a good one.
            let third = try await fleet.get(try fleet.machine("three", tier: tier), "/d")
            #expect(third.text == "the right bytes")
            #expect(try await fleet.originRequests("/d") == 2)
        }
    }

    @Test func aValueCopiedFromAnotherKeyOrNamespaceIsRefused() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=600")], body: "body of a")
            try await fleet.origin.configure(path: "/b", headers: [("Cache-Control", "max-age=600")], body: "body of b")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier)
            _ = try await fleet.get(first, "/a")
            let (keyA, field) = try onlyEntry(fleet)
            let value = Data(try fleet.redis.cli(["--raw", "HGET", keyA, field]).utf8.dropLast())
            // Plant /a's value under /b's key (a hostile peer) and under another namespace's key for /a.
            let probe = try fleet.machine("probe", tier: tier)
            _ = try await fleet.get(probe, "/b")
            let bKey = try fleet.redis.keys("*:e").first { $0 != keyA }
            let planted = try #require(bKey)
            try fleet.redis.cli(["HSET", planted, field], stdin: value)
            try fleet.redis.cli(["HSET", keyA.replacingOccurrences(of: ":default:", with: ":other:"), field], stdin: value)
            let victim = try fleet.machine("victim", tier: tier)
            #expect(try await fleet.get(victim, "/b").text == "body of b")
            #expect(try await fleet.originRequests("/b") == 2)
            let other = try fleet.machine("other", tier: tier, namespace: "other")
            #expect(try await fleet.get(other, "/a").text == "body of a")
            #expect(try await fleet.originRequests("/a") == 2)
            #expect((victim.sharedTierStatistics?.refusedValues ?? 0) + (other.sharedTierStatistics?.refusedValues ?? 0) == 2)
        }
    }

    @Test func aRedisThatIsDownCostsOneTimeoutAndIsLoggedOnce() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/x", headers: [("Cache-Control", "max-age=600")], body: "x")
            fleet.redis.kill()
            let cache = try fleet.machine("one", tier: try fleet.tier(fleet.redis.url))
            for index in 0..<5 {
                let response = try await fleet.get(cache, "/x?\(index)")
                #expect(response.text == "x" || response.status == 404)
            }
            let stats = try #require(cache.sharedTierStatistics)
            #expect(stats.failures == 1)
            #expect(stats.skipped >= 4)
            #expect(!stats.isAvailable)
            #expect(fleet.log.matching("unavailable").count == 1)
        }
    }

    @Test func killedMidRunAndRestartedRedisIsUsedAgain() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/k", headers: [("Cache-Control", "max-age=600")], body: "k")
            try await fleet.origin.configure(path: "/after", headers: [("Cache-Control", "max-age=600")], body: "after")
            let tier = try fleet.tier { $0.retryInterval = 0.2 }
            let first = try fleet.machine("one", tier: tier)
            _ = try await fleet.get(first, "/k")
            fleet.redis.kill()
            let second = try fleet.machine("two", tier: tier)
            #expect(try await fleet.get(second, "/k").text == "k")   // Redis gone: the origin answers
            #expect(try await fleet.originRequests("/k") == 2)
            #expect(second.sharedTierStatistics?.isAvailable == false)
            try fleet.redis.restart()   // empty: no persistence
            try await Task.sleep(nanoseconds: 300_000_000)   // the breaker's retry interval
            _ = try await fleet.get(second, "/after")
            #expect(second.sharedTierStatistics?.isAvailable == true)
            _ = try await fleet.get(try fleet.machine("three", tier: tier), "/after")
            #expect(try await fleet.originRequests("/after") == 1)
            #expect(fleet.log.matching("reachable again").count == 1)
        }
    }

    @Test func aRedisThatStopsAnsweringTimesOutAndTheDownloadSucceeds() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], body: "s")
            let tier = try fleet.tier { $0.timeout = 0.2 }
            let cache = try fleet.machine("one", tier: tier)
            fleet.redis.pause()
            defer { fleet.redis.resume() }
            #expect(try await fleet.get(cache, "/slow").text == "s")
            #expect(try await fleet.get(try fleet.machine("two", tier: tier), "/slow").text == "s")
            let stats = try #require(cache.sharedTierStatistics)
            #expect(stats.lastProblem?.hasPrefix("timedOut") == true)
            #expect(try await fleet.originRequests("/slow") == 2)
        }
    }

    @Test func wrongPasswordIsReportedWithoutThePassword() async throws {
        try await withFleet(redisConfiguration: ["requirepass right-password"], controlPassword: "right-password") { fleet in
            try await fleet.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600")], body: "p")
            let wrong = try fleet.tier("redis://:wrong-password@127.0.0.1:\(fleet.redis.port)/0")
            #expect(!wrong.description.contains("wrong-password"))
            let cache = try fleet.machine("one", tier: wrong)
            #expect(try await fleet.get(cache, "/p").text == "p")
            let stats = try #require(cache.sharedTierStatistics)
            #expect(stats.lastProblem?.hasPrefix("authentication") == true)
            #expect(fleet.log.matching("unavailable").count == 1)
            #expect(fleet.log.matching("wrong-password").isEmpty)
            #expect(fleet.log.matching("right-password").isEmpty)
            // The right password works, and a URL with it stores.
            let right = try fleet.machine("two", tier: try fleet.tier("redis://:right-password@127.0.0.1:\(fleet.redis.port)/0"))
            _ = try await fleet.get(right, "/p")
            #expect(try fleet.redis.keys().count == 1)
        }
    }

    @Test func anACLUserWithoutScriptingFallsBackToTheOrigin() async throws {
        let users = ["user default on >admin ~* &* +@all", "user limited on >limited-pw ~* &* +@all -@scripting"]
        try await withFleet(redisConfiguration: users, controlUser: "default", controlPassword: "admin") { fleet in
            try await fleet.origin.configure(path: "/acl", headers: [("Cache-Control", "max-age=600")], body: "acl")
            let cache = try fleet.machine("one", tier: try fleet.tier("redis://limited:limited-pw@127.0.0.1:\(fleet.redis.port)/0"))
            #expect(try await fleet.get(cache, "/acl").text == "acl")
            #expect(cache.sharedTierStatistics?.lastProblem?.hasPrefix("permission") == true)
            #expect(fleet.log.matching("limited-pw").isEmpty)
        }
    }

    @Test func evictionByMaxmemoryIsOnlyAMiss() async throws {
        try await withFleet(redisConfiguration: ["maxmemory 3mb", "maxmemory-policy allkeys-lru"]) { fleet in
            let tier = try fleet.tier()
            let writer = try fleet.machine("one", tier: tier)
            for index in 0..<40 { _ = try await fleet.get(writer, "/size/200000?\(index)") }
            #expect(try fleet.redis.keys("*:e").count < 40)   // Redis evicted some
            let reader = try fleet.machine("two", tier: tier)
            // Newest first: those are the ones LRU kept (reading oldest first, each refill would evict the next).
            for index in (0..<40).reversed() {
                #expect(try await fleet.get(reader, "/size/200000?\(index)").bodySize == 200_000)
            }
            #expect(reader.sharedTierStatistics?.failures == 0)
            #expect((reader.sharedTierStatistics?.hits ?? 0) > 0)
        }
    }

    @Test func aFullRedisRefusesWritesButDownloadsSucceed() async throws {
        try await withFleet(redisConfiguration: ["maxmemory 1mb", "maxmemory-policy noeviction"]) { fleet in
            let tier = try fleet.tier()
            let writer = try fleet.machine("one", tier: tier)
            for index in 0..<12 {
                #expect(try await fleet.get(writer, "/size/200000?\(index)").bodySize == 200_000)
            }
            let stats = try #require(writer.sharedTierStatistics)
            #expect(stats.failures > 0)
            #expect(stats.lastProblem?.hasPrefix("full") == true)
            #expect(stats.isAvailable)   // reads still work: a full Redis does not switch the tier off
            #expect(fleet.log.matching("refused a call").count == 1)
        }
    }
}

/// A Redis (or something pretending to be one) that misbehaves on purpose never holds a download for long.
@Suite(.serialized, .enabled(if: RedisServer.isAvailable, "redis-server is not installed (Scripts/bootstrap.sh installs it)"))
struct SharedTierHostileServerTests {
    // The limit is wall time and includes waiting for a thread while the whole suite runs on two cores; ten
    // minutes is far above that wait and far below the planted lock's wait (maxWait, one day).
    @Test(.timeLimit(.minutes(10)))
    func aLockWithoutExpiryIsNotWaitedFor() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/l", headers: [("Cache-Control", "max-age=600")], body: "l")
            let tier = try fleet.tier { $0.maxWait = 86_400 }   // waiting for the planted lock would outlast the limit
            _ = try await fleet.get(try fleet.machine("one", tier: tier), "/l")
            let entries = try #require(try fleet.redis.keys("*:e").first)
            try fleet.redis.cli(["DEL", entries])
            try fleet.redis.cli(["SET", String(entries.dropLast(2)) + ":l", "planted"])
            let second = try fleet.machine("two", tier: tier)
            #expect(try await fleet.get(second, "/l").text == "l")
            #expect(try await fleet.originRequests("/l") == 2)
            #expect(fleet.log.matching("without a plausible expiry").count == 1)
        }
    }

    @Test(.timeLimit(.minutes(10)))   // wall time, under the whole suite's load: the drip never ends by itself
    func aServerThatDripsBytesIsCutOffByTheWatchdog() async throws {
        // Accepts, then sends one byte of a never-ending status line every 50 ms: each read succeeds within the
        // socket timeout, so only the per-command watchdog ends the call.
        let script = """
            import socket, threading, time
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(16)
            print("LISTENING", server.getsockname()[1], flush=True)
            def drip(conn):
                try:
                    while True:
                        conn.sendall(b"+"); time.sleep(0.05)
                except OSError:
                    pass
            def stdin_closed():
                import sys; sys.stdin.read(); import os; os._exit(0)
            threading.Thread(target=stdin_closed, daemon=True).start()
            while True:
                conn, _ = server.accept()
                threading.Thread(target=drip, args=(conn,), daemon=True).start()
            """
        let dripper = try ChildProcess(["/usr/bin/env", "python3", "-u", "-c", script])
        defer { dripper.stop() }
        var line = ""
        let deadline = Date().addingTimeInterval(10)
        while !line.contains("\n") && Date() < deadline {   // python -u writes the line in pieces
            let chunk = dripper.stdout?.availableData ?? Data()
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(line.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/drip", headers: [("Cache-Control", "max-age=600")], body: "d")
            let tier = try fleet.tier("redis://127.0.0.1:\(port)/0") { $0.timeout = 0.2 }
            let cache = try fleet.machine("one", tier: tier)
            #expect(try await fleet.get(cache, "/drip").text == "d")
            #expect(cache.sharedTierStatistics?.isAvailable == false)
        }
    }
}
