import Foundation
import Testing
@testable import SharedTier

/// Values read from Redis are hostile: only an intact value framed for exactly this scope and key decodes.
@Suite struct SharedEntryFormatTests {
    let scope = "private:default"
    let primary = "GET http://example.com/a"

    func value(scope: String? = nil, primary: String? = nil, variant: String = "", body: Data = Data("body".utf8)) -> Data {
        SharedEntryFormat.encode(identity: SharedEntryFormat.identity(scope: scope ?? self.scope, primary: primary ?? self.primary,
                                                                      variant: variant),
                                 metadata: Data("{\"m\":1}".utf8), body: body)
    }

    @Test func anIntactValueRoundTrips() throws {
        let entry = try SharedEntryFormat.decode(value(variant: "gzip"), scope: scope, primary: primary, maxBodyBytes: 100)
        #expect(entry == SharedEntry(variant: "gzip", metadata: Data("{\"m\":1}".utf8), body: Data("body".utf8)))
    }

    @Test func everyTruncationAndEveryFlippedByteIsRefused() {
        let good = value()
        for length in 0..<good.count {
            #expect(throws: SharedEntryFormat.Refusal.self) {
                try SharedEntryFormat.decode(good.prefix(length), scope: scope, primary: primary, maxBodyBytes: 100)
            }
        }
        for index in 0..<good.count {
            var bad = good
            bad[index] ^= 0x01
            #expect(throws: SharedEntryFormat.Refusal.self) {
                try SharedEntryFormat.decode(bad, scope: scope, primary: primary, maxBodyBytes: 100)
            }
        }
        #expect(throws: SharedEntryFormat.Refusal.self) {
            try SharedEntryFormat.decode(good + Data([0]), scope: scope, primary: primary, maxBodyBytes: 100)
        }
    }

    @Test(arguments: [("shared:default", "GET http://example.com/a"), ("private:other", "GET http://example.com/a"),
                      ("private:default", "GET http://example.com/b"), ("private:default", "GET http://example.com/a\nx")])
    func aValueFramedForAnotherScopeOrKeyIsRefused(otherScope: String, otherPrimary: String) {
        #expect(throws: SharedEntryFormat.Refusal.otherKey) {
            try SharedEntryFormat.decode(value(scope: otherScope, primary: otherPrimary), scope: scope, primary: primary,
                                         maxBodyBytes: 100)
        }
    }

    @Test func hugeLengthsAreRefusedBeforeAnythingIsRead() {
        var bytes = Data("DLCS".utf8) + Data([1])
        bytes += Data([0xff, 0xff, 0xff, 0xff]) + Data(repeating: 0, count: 32)
        #expect(throws: SharedEntryFormat.Refusal.self) {
            try SharedEntryFormat.decode(bytes, scope: scope, primary: primary, maxBodyBytes: 100)
        }
        #expect(throws: SharedEntryFormat.Refusal.tooLarge) {
            try SharedEntryFormat.decode(value(body: Data(count: 101)), scope: scope, primary: primary, maxBodyBytes: 100)
        }
    }

    @Test func keysOfOneEntryShareAHashTag() {
        let layout = SharedKeyLayout(keyPrefix: "dlcache", scope: scope)
        let entries = String(decoding: layout.entriesKey(primary), as: UTF8.self)
        let lock = String(decoding: layout.lockKey(primary), as: UTF8.self)
        func tag(_ key: String) -> Substring? {
            guard let open = key.firstIndex(of: "{"), let close = key[open...].firstIndex(of: "}") else { return nil }
            return key[key.index(after: open)..<close]
        }
        #expect(tag(entries) != nil && tag(entries) == tag(lock))
        #expect(entries.hasPrefix("dlcache:private:default:{"))
    }
}

/// Redis URLs: both forms, every default, and a password that never shows.
@Suite struct RedisEndpointTests {
    @Test func tcpURLWithUserPasswordAndDatabase() throws {
        let endpoint = try RedisEndpoint(try #require(URL(string: "redis://app:s3cr%40t@10.0.0.5:6390/3")))
        #expect(endpoint.address == .tcp(host: "10.0.0.5", port: 6390))
        #expect(endpoint.database == 3)
        #expect(endpoint.user == "app")
        #expect(endpoint.password == "s3cr@t")
        #expect(endpoint.description == "redis://app:***@10.0.0.5:6390/3")
    }

    @Test func defaultsAndUnixSockets() throws {
        let plain = try RedisEndpoint(try #require(URL(string: "redis://cache")))
        #expect(plain.address == .tcp(host: "cache", port: 6379))
        #expect(plain.database == 0)
        let socket = try RedisEndpoint(try #require(URL(string: "unix:///run/redis/redis.sock?db=2")))
        #expect(socket.address == .unix(path: "/run/redis/redis.sock"))
        #expect(socket.database == 2)
    }

    @Test(arguments: ["http://host:6379", "redis://:pw@/0", "redis://host:0/0", "redis://host/x", "redis://host/1/2",
                      "unix:relative.sock", "redis://host/99999999"])
    func badURLsAreRefusedWithoutThePassword(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(throws: RedisEndpoint.ParseError.self) { try RedisEndpoint(url) }
        do { _ = try RedisEndpoint(url) } catch { #expect(!error.description.contains("pw")) }
    }
}
