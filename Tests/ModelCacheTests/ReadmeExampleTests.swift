import CacheTestSupport
import Foundation
import Testing
import ModelCache

// The code between the BEGIN/END README lines is the "## Model cache" snippet of README.md, verbatim;
// it compiles here so the README cannot drift from the API.

// BEGIN README
struct Article: Codable, Sendable, Equatable, VersionedModel {
    static let modelVersion = 1          // bump when stored articles must no longer be decoded
    var id: Int
    var title: String
}

/// Shows the articles of the last session at once, then the fresh ones from the server.
@MainActor
final class ArticleListController {
    private(set) var shown: [Article] = []
    private(set) var isShowingStaleData = false
    private(set) var lastError: (any Error)?
    let cache: ModelCache
    let loadFromServer: @Sendable () async throws -> [Article]

    init(cache: ModelCache, loadFromServer: @escaping @Sendable () async throws -> [Article]) {
        self.cache = cache
        self.loadFromServer = loadFromServer
    }

    func viewWillAppear() async {
        do {
            // Cached value first (if any), then the fetched one if the cached one was stale or missing.
            for try await update in cache.values(forKey: "articles", as: [Article].self, fetch: loadFromServer) {
                shown = update.value
                isShowingStaleData = update.isStale
            }
        } catch {
            lastError = error            // refresh failed: the cached articles stay on screen
        }
    }
}

func makeArticleCache(directory: URL, userID: String, appVersion: String) throws -> ModelCache {
    var configuration = ModelCache.Configuration(directory: directory, user: userID)
    configuration.cacheVersion = appVersion      // an app update drops archives it can't read
    configuration.stalenessThreshold = 15 * 60   // seconds
    return try ModelCache(configuration: configuration)
}
// END README

@Suite("README example")
struct ReadmeExampleTests {
    @Test("the README controller shows fetched, then cached-and-stale with a failed refresh")
    @MainActor
    func readmeExample() async throws {
        struct Offline: Error {}
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let articles = [Article(id: 1, title: "Hello"), Article(id: 2, title: "World")]

        let first = ArticleListController(cache: try makeArticleCache(directory: directory, userID: "u1",
                                                                      appVersion: "1.0")) { articles }
        await first.viewWillAppear()
        #expect(first.shown == articles)
        #expect(first.lastError == nil)

        // Next launch, offline, with a negative threshold so the cached list counts as stale at once.
        var configuration = ModelCache.Configuration(directory: directory, user: "u1")
        configuration.cacheVersion = "1.0"
        configuration.stalenessThreshold = -1
        let second = ArticleListController(cache: try ModelCache(configuration: configuration)) { throw Offline() }
        await second.viewWillAppear()
        #expect(second.shown == articles)
        #expect(second.isShowingStaleData)
        #expect(second.lastError is ModelCacheError)

        // After an app update the old archive is dropped, never mis-decoded.
        let updated = try makeArticleCache(directory: directory, userID: "u1", appVersion: "2.0")
        #expect(updated.value(forKey: "articles", as: [Article].self) == nil)
    }

    @Test("README.md's \"Model cache\" snippet is this file's README block, verbatim")
    func readmeMatches() throws {
        let (readme, found) = try ReadmeSnippet.load(from: #filePath)
        let snippet = try #require(found)
        #expect(snippet.contains("cache.values(forKey:"))
        #expect(readme.contains("## Model cache"))
        #expect(readme.contains("```swift\nimport Foundation\nimport ModelCache\n\n" + snippet + "```"))
    }
}
