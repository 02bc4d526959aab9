import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing
@testable import CacheCLI

/// The issue's reproductions through the driver: URL user info and coalescing in `--mode shared`.
@Suite struct DriverSharingTests {
    static func line(id: Int, url: String) -> String {
        let object: [String: Any] = ["id": id, "method": "GET", "url": url, "headers": [[String]](), "body": NSNull()]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func userInfoResponseIsNotServedToOthersInSharedMode() async throws {
        try await withDriver(mode: .shared) { driver in
            try await driver.origin.configure(path: "/auth", headers: [("Cache-Control", "max-age=60")], body: "a",
                                              echoHeader: "Authorization")
            let port = driver.origin.port
            for (id, user) in ["alice:pw1@", "", "bob:other@"].enumerated() {
                driver.send(Self.line(id: id, url: "http://\(user)127.0.0.1:\(port)/auth"))
                _ = try await driver.waitForAnswers(id + 1)
            }
            let answers = try await driver.waitForAnswers(3)
            #expect(answers[1].body == "a|Authorization=")
            #expect(answers[2].body != answers[0].body)
            #expect(try await driver.origin.hits("/auth").total == 3)
        }
    }

    @Test func concurrentNoStorePrivateLinesEachGetTheirOwnResponse() async throws {
        try await withDriver(mode: .shared) { driver in
            try await driver.origin.configure(path: "/me", headers: [("Cache-Control", "no-store, private"),
                                                                    ("Set-Cookie", "session=first")],
                                              body: "me", delay: 0.5)
            for id in 0..<3 { driver.send(id: id, path: "/me") }
            let answers = try await driver.waitForAnswers(3)
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(try await driver.origin.hits("/me").total == 3)
        }
    }
}
