import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// End-to-end `dlcache prefetch` runs against the loopback origin.
@Suite(.serialized) struct PrefetchCommandTests {
    static func urls(_ origin: OriginServer, _ count: Int) -> [String] {
        (1...count).map { origin.url("/size/\($0 * 100)").absoluteString }
    }

    @Test func prefetchFromAFileThenEverythingIsAHit() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let urls = Self.urls(origin, 5)
        let list = "# a comment\n\n" + urls.joined(separator: "\n") + "\n"
        try list.write(to: cli.directory.appendingPathComponent("urls.txt"), atomically: true, encoding: .utf8)

        let run = await cli.run(["prefetch", "--pin", "--json", "--concurrency", "3", "urls.txt"])
        #expect(run.code == 0)
        let summary = try run.object()
        #expect(summary["total"] as? Int == 5)
        #expect(summary["succeeded"] as? Int == 5)
        #expect(summary["failed"] as? Int == 0)
        #expect(summary["bytes"] as? Int == 1500)
        #expect(summary["fromNetwork"] as? Int == 5)

        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.count == 5)
        #expect(entries.allSatisfy { $0["pinned"] as? Bool == true })

        let again = try await cli.run(["prefetch", "--json", "-"], stdin: list).object()
        #expect(again["fromCache"] as? Int == 5)
        for url in urls {
            let path = try #require(URL(string: url)?.path)
            #expect(try await origin.hits(path).total == 1)
        }
    }

    @Test func textSummaryAndPlainProgressLinesWhenNotATerminal() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let urls = Self.urls(origin, 10)
        let run = await cli.run(["prefetch"], stdin: urls.joined(separator: "\n"))
        #expect(run.code == 0)
        #expect(run.out.hasPrefix("prefetched 10/10 URLs, 5.5 KB in "))
        #expect(run.out.hasSuffix("(10 from network, 0 from cache), 0 failed\n"))
        let lines = run.err.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("prefetch: ") })
        // One line for each tenth done, in order; a slow machine may add time-based lines (every
        // `plainInterval` seconds while bytes arrive, also before the first URL is done), which repeat a
        // count or show 0 but never skip or reorder one.
        let counts = lines.compactMap { line -> Int? in
            let rest = line.dropFirst("prefetch: ".count)
            return rest.split(separator: "/").first.flatMap { Int($0) }
        }
        #expect(counts.count == lines.count)
        #expect(counts == counts.sorted())
        #expect(Set(counts).subtracting([0]) == Set(1...10))
        #expect(lines.last?.hasPrefix("prefetch: 10/10  5.5 KB  ") == true)
        #expect(!run.err.contains("\r"))
    }

    @Test func liveBarOnATerminal() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["prefetch"], stdin: Self.urls(origin, 3).joined(separator: "\n"), terminal: true)
        #expect(run.code == 0)
        #expect(run.err.hasPrefix("\r["))
        #expect(run.err.contains("3/3"))
        #expect(run.err.hasSuffix("\u{1B}[K\n"))
    }

    @Test func failuresAreListedAndExitOne() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let good = origin.url("/size/10").absoluteString
        let deadPort = origin.port
        origin.stop()
        let dead = "http://127.0.0.1:\(deadPort)/gone"
        let run = await cli.run(["prefetch", "--json"], stdin: dead + "\n")
        #expect(run.code == 1)
        let summary = try run.object()
        #expect(summary["failed"] as? Int == 1)
        let failures = try #require(summary["failures"] as? [[String: Any]])
        #expect(failures.first?["url"] as? String == dead)
        _ = good
    }

    @Test func badURLLinesAreReportedSkippedAndTheRestFetched() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let good = origin.url("/size/10").absoluteString
        let run = await cli.run(["prefetch"], stdin: "# a comment\nnot a url\n\(good)\nftp://x/\n")
        #expect(run.code == 1)
        #expect(run.err.contains("skipped line 2: invalid URL 'not a url': expected an absolute http:// or https:// URL\n"), "\(run.err)")
        #expect(run.err.contains("skipped line 4: invalid URL 'ftp://x/'"), "\(run.err)")
        #expect(run.out.hasPrefix("prefetched 1/1 URLs"))
        #expect(run.out.contains(", 2 invalid lines skipped"))
        #expect(try await origin.hits("/size/10").total == 1)
        let json = await cli.run(["prefetch", "--json"], stdin: "nope\n\(good)\n")
        #expect(json.code == 1)
        let invalid = try #require(try json.object()["invalidLines"] as? [[String: Any]])
        #expect(invalid.count == 1 && invalid.first?["line"] as? Int == 1)
    }

    /// `URL # note` is the URL (a trailing comment), `URL#frag` keeps its fragment, and white space inside a URL
    /// makes the line invalid instead of being fetched as `%20`.
    @Test func aTrailingCommentIsStrippedAndWhiteSpaceInsideAURLIsAnInvalidLine() async throws {
        let list = PrefetchCommand.parseURLList(
            "http://h/a # the index\nhttp://h/b\t#tab\nhttp://h/c#frag\nhttp://h/d e\nhttp://h/f g # note\n  # indented\n")
        #expect(list.urls.map(\.absoluteString) == ["http://h/a", "http://h/b", "http://h/c#frag"])
        #expect(list.invalid.map(\.line) == [4, 5])
        #expect(list.invalid.first?.reason == "invalid URL 'http://h/d e': white space inside a URL (write it as %20; "
                + "a comment after the URL starts with white space and '#')")
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let good = origin.url("/size/10").absoluteString
        let run = await cli.run(["prefetch"], stdin: "\(good)   # ten bytes\n\(good)x y\n")
        #expect(run.code == 1)
        #expect(run.err.contains("skipped line 2: invalid URL '\(good)x y': white space inside a URL"), "\(run.err)")
        #expect(!run.err.contains("on line"), "\(run.err)")
        #expect(run.out.hasPrefix("prefetched 1/1 URLs"), "\(run.out)")
        #expect(try await origin.hits("/size/10").total == 1)
        let ls = await cli.run(["ls"])
        #expect(!ls.out.contains("%20"), "\(ls.out)")
    }

    /// `--pin` pins what succeeded: a 404 the cache stored (heuristically fresh) is reported failed and left unpinned.
    @Test func pinLeavesAFailedURLsStoredAnswerUnpinned() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let good = origin.url("/size/10").absoluteString
        let missing = origin.url("/nothing-here").absoluteString
        let run = await cli.run(["prefetch", "--pin"], stdin: "\(good)\n\(missing)\n")
        #expect(run.code == 1)
        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        let pinned = Dictionary(uniqueKeysWithValues: entries.compactMap { entry -> (String, Bool)? in
            guard let url = entry["url"] as? String, let pin = entry["pinned"] as? Bool else { return nil }
            return (url, pin)
        })
        #expect(pinned[good] == true, "\(entries)")
        #expect(pinned[missing] != true, "\(entries)")
    }

    @Test func missingListFileIsAFailure() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["prefetch", "no-such-file.txt"])
        #expect(run.code == 1)
        #expect(run.err.hasPrefix("Error: cannot read URL list 'no-such-file.txt'"))
    }
}
