import Foundation
import Testing
@testable import CacheCLI

@Suite struct CacheLocationTests {
    static func environment(_ variables: [String: String]) -> CommandEnvironment {
        CommandEnvironment(console: CapturedConsole().console, variables: variables,
                           currentDirectory: URL(fileURLWithPath: "/work/dir"))
    }

    @Test("resolution order: option, DLCACHE_DIR, XDG_CACHE_HOME, HOME", arguments: [
        ("/opt/c", ["DLCACHE_DIR": "/d", "XDG_CACHE_HOME": "/x", "HOME": "/h"], "/opt/c"),
        ("rel", [:], "/work/dir/rel"),
        (nil, ["DLCACHE_DIR": "/d", "XDG_CACHE_HOME": "/x", "HOME": "/h"], "/d"),
        (nil, ["DLCACHE_DIR": "", "XDG_CACHE_HOME": "/x", "HOME": "/h"], "/x/dlcache"),
        (nil, ["XDG_CACHE_HOME": "", "HOME": "/h"], "/h/.cache/dlcache"),
        (nil, ["HOME": "/h", "DLCACHE_DIR": "~/c"], "/h/c"),
        // XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and ignored.
        (nil, ["XDG_CACHE_HOME": "relative/cache", "HOME": "/h"], "/h/.cache/dlcache"),
        (nil, ["XDG_CACHE_HOME": "~/cache", "HOME": "/h"], "/h/.cache/dlcache"),
    ] as [(String?, [String: String], String)])
    func order(_ option: String?, _ variables: [String: String], _ expected: String) throws {
        let url = try CacheLocation.resolveDirectory(option: option, environment: Self.environment(variables))
        #expect(url.path == expected)
    }

    @Test func nothingSetIsAUsageError() {
        #expect(throws: UsageError.self) {
            try CacheLocation.resolveDirectory(option: nil, environment: Self.environment([:]))
        }
    }

    @Test("namespace names", arguments: [("ok-1.x_y", true), ("..", false), ("a/b", false), ("", false),
                                         (String(repeating: "a", count: 65), false)])
    func namespaces(_ name: String, _ valid: Bool) {
        let parsed = ParsedArguments(flags: [], values: ["namespace": [name], "cache-dir": ["/c"]], positionals: [])
        let result = Result { () throws(UsageError) in try CacheLocation.resolve(parsed, environment: Self.environment([:])) }
        #expect((try? result.get())?.namespace == (valid ? name : nil))
    }
}
